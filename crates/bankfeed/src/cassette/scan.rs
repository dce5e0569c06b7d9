//! The fail-closed scan (docs/cassettes.md#fail-closed): before a cassette is written, its text is
//! searched for every real value the redactor replaced and every secret the session sent or
//! received, as it came and in its JSON- and URL-escaped forms, in any letter case. One found,
//! and nothing is written: the error names the field, never the value. [`check_file`] runs the
//! same search over a file already written (a hand-edited cassette), given the values to look for.

use std::path::Path;

use crate::error::Error;
use crate::secret::Secret;

/// Values shorter than this (in characters) are not looked for: a two-letter province or answer
/// would be found in any text. The same bound as the masking of errors
/// (crates/bankfeed/src/masking.rs).
const SHORTEST_SCANNED: usize = 3;

/// The name of the first target found in `text`, if any.
pub(crate) fn first_found<'a>(text: &str, targets: &'a [(String, Secret)]) -> Option<&'a str> {
    let folded = text.to_lowercase();
    targets
        .iter()
        .find(|(_, value)| forms(value.expose()).iter().any(|form| folded.contains(form.as_str())))
        .map(|(field, _)| field.as_str())
}

/// `value` as it may stand in a file, in lower case: as it is, JSON-escaped, URL-escaped (with
/// `%20` or `+` for a space). None when it is too short to look for.
fn forms(value: &str) -> Vec<String> {
    if value.chars().count() < SHORTEST_SCANNED {
        return Vec::new();
    }
    let mut forms = vec![value.to_lowercase()];
    if let Ok(json) = serde_json::to_string(value) {
        let inner = json.get(1..json.len().saturating_sub(1)).unwrap_or_default().to_lowercase();
        forms.push(inner);
    }
    let url = percent_encoded(value);
    forms.push(url.to_lowercase());
    forms.push(url.replace("%20", "+").to_lowercase());
    forms.sort();
    forms.dedup();
    forms
}

/// `value` with every byte but the unreserved ones of RFC 3986 percent-encoded.
fn percent_encoded(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// Scans the file at `path` for `targets` (each a field's name and its value): the check a
/// command or a test plugin runs over committed cassettes. `Ok` when none is in it.
pub fn check_file(path: &Path, targets: &[(String, Secret)]) -> Result<(), Error> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|error| Error::Cassette { path: shown.clone(), message: format!("could not be read: {error}") })?;
    match first_found(&text, targets) {
        Some(field) => Err(Error::CassetteSecret { path: shown, field: field.to_owned() }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn targets(values: &[(&str, &str)]) -> Vec<(String, Secret)> {
        values.iter().map(|(field, value)| ((*field).to_owned(), Secret::new(*value))).collect()
    }

    #[test]
    fn a_value_is_found_as_it_came_escaped_or_in_another_case() {
        let targets = targets(&[("Password", "p@ss \"word\"/1"), ("flinks-auth-key", "TokEn-Xyz")]);
        assert_eq!(first_found("a: p@ss \"word\"/1", &targets), Some("Password"));
        assert_eq!(first_found(r#"a: "p@ss \"word\"/1""#, &targets), Some("Password"));
        assert_eq!(first_found("uri: http://h/?x=p%40ss+%22word%22%2F1", &targets), Some("Password"));
        assert_eq!(first_found("uri: http://h/?x=p%40ss%20%22word%22%2F1", &targets), Some("Password"));
        assert_eq!(first_found("key: token-xyz", &targets), Some("flinks-auth-key"));
        assert_eq!(first_found("nothing: here", &targets), None);
    }

    #[test]
    fn a_value_too_short_to_look_for_is_not_looked_for() {
        assert_eq!(first_found("QC and 12", &targets(&[("Province", "QC"), ("x", "12")])), None);
    }
}

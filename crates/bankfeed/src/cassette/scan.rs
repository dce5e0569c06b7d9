//! The fail-closed scan (docs/cassettes.md#fail-closed): before a cassette is written, its text is
//! searched for every real value the redactor replaced and every secret the session sent or
//! received, as it came and in its JSON- and URL-escaped forms, in any letter case. One found,
//! and nothing is written: the error names the field, never the value. [`check_file`] runs the
//! same search over a file already written (a hand-edited cassette), given the values to look for.

use std::path::Path;

use super::format::Origin;
use super::sidecar::SidecarFile;
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

/// The name of the first target found in the sidecar file `file` of a cassette of `origin`: in
/// its base64 text, as the search saw it when it stood in the YAML; and, in a live recording, in
/// its content read as text, where a secret a server wrapped in base64 shows. Not in a recording
/// of the public test instance, whose files are public test data kept as they came, and whose
/// statements may hold a word of the test password (docs/cassettes.md#fail-closed).
pub(crate) fn found_in_sidecar<'a>(
    file: &SidecarFile,
    origin: Origin,
    targets: &'a [(String, Secret)],
) -> Option<&'a str> {
    first_found(&file.base64, targets).or_else(|| match origin {
        Origin::Live => first_found(&String::from_utf8_lossy(&file.bytes), targets),
        Origin::TestInstance => None,
    })
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
    fn a_sidecar_file_is_searched_in_its_base64_text_and_in_a_live_recording_its_content() {
        let content = b"report: the key sk-9d2e41aa0c echoed".to_vec();
        let base64 = "c2stOWQyZTQxYWEwYw==AAAA".to_owned();
        let file = SidecarFile { name: "x.bin".into(), bytes: content, base64 };
        let key = targets(&[("x-api-key", "sk-9d2e41aa0c")]);
        assert_eq!(found_in_sidecar(&file, Origin::Live, &key), Some("x-api-key"));
        assert_eq!(found_in_sidecar(&file, Origin::TestInstance, &key), None, "public test data");
        let in_text = targets(&[("Token", "OWQyZTQxYWEwYw")]);
        assert_eq!(found_in_sidecar(&file, Origin::TestInstance, &in_text), Some("Token"), "as it stood in the YAML");
    }

    #[test]
    fn a_value_too_short_to_look_for_is_not_looked_for() {
        assert_eq!(first_found("QC and 12", &targets(&[("Province", "QC"), ("x", "12")])), None);
    }
}

//! The check of a committed cassette (docs/cassettes.md#checking-committed-cassettes): what can
//! be proved without the values of the session that recorded it. The file parses as a cassette,
//! and every place the redactor (crates/bankfeed/src/cassette/redactor.rs) fills with a
//! placeholder holds it: the request headers but `Content-Type` (keys, `Authorization`,
//! cookies), the password, username and token fields of any body, every answer of
//! `SecurityResponses`; and an answer has no header the redactor does not write. A hand-edited
//! cassette with a secret put back is caught; each finding names the file, the interaction and
//! the field, never the value.

use std::path::Path;

use serde_json::Value;

use super::format::{Cassette, Interaction, StoredBody};
use super::matcher::MatchKey;
use super::redactor::{secret_field, ANSWERS_FIELD, KEPT_REQUEST_HEADERS, KEPT_RESPONSE_HEADERS, REDACTED};
use super::sidecar;

/// The findings of the check of the file at `path`, one line each; none when it is clean. A file
/// that cannot be read or is no cassette is one finding. Its sidecar files are checked too: each
/// one it refers to is there, with the SHA-256 its name says (docs/cassettes.md#sidecar-files).
pub fn check_cassette(path: &Path) -> Vec<String> {
    let shown = path.display();
    match std::fs::read_to_string(path) {
        Ok(text) => checked(&text, Some(&sidecar::dir_of(path)))
            .into_iter()
            .map(|finding| format!("{shown}: {finding}"))
            .collect(),
        Err(error) => vec![format!("{shown}: could not be read: {error}")],
    }
}

/// The findings of the check of a cassette's `text`, without the file's name (nor its sidecar
/// files, which only a path finds).
pub fn check_text(text: &str) -> Vec<String> {
    checked(text, None)
}

/// The findings of `text`, and of its sidecar files in `sidecars` when given.
fn checked(text: &str, sidecars: Option<&Path>) -> Vec<String> {
    let cassette = match Cassette::parse(text) {
        Ok(cassette) => cassette,
        Err(message) => return vec![format!("is not a cassette: {message}")],
    };
    let mut findings = Vec::new();
    for (at, interaction) in cassette.interactions.iter().enumerate() {
        let request = || MatchKey::of(&interaction.request).shown();
        let mut found = |field: String| {
            findings.push(format!(
                "interaction {at} ({}): {field} holds a value where the placeholder {REDACTED} must be",
                request()
            ));
        };
        check_interaction(interaction, &mut found);
        let Some(dir) = sidecars else { continue };
        for body in [&interaction.request.body, &interaction.response.body].into_iter().flatten() {
            if let Err(message) = sidecar::restore_body(&mut body.clone(), dir) {
                findings.push(format!("interaction {at} ({}): {message}", request()));
            }
        }
    }
    findings
}

/// Calls `found` with the name of every field of `interaction` that should hold a placeholder
/// and does not.
fn check_interaction(interaction: &Interaction, found: &mut impl FnMut(String)) {
    for (name, value) in &interaction.request.headers {
        let kept = KEPT_REQUEST_HEADERS.iter().any(|kept| name.eq_ignore_ascii_case(kept));
        if !kept && value != REDACTED {
            found(format!("the request header {name}"));
        }
    }
    for (name, value) in &interaction.response.headers {
        let kept = KEPT_RESPONSE_HEADERS.iter().any(|kept| name.eq_ignore_ascii_case(kept));
        if !kept && value != REDACTED {
            found(format!("the answer header {name}"));
        }
    }
    if let Some(StoredBody::Json { json }) = &interaction.request.body {
        check_value(json, "", true, found);
    }
    if let Some(StoredBody::Json { json }) = &interaction.response.body {
        check_value(json, "", false, found);
    }
}

/// Walks `value` (at the path `at` of the body, empty at its root): a secret field must hold
/// [`REDACTED`], and in a request every answer of `SecurityResponses` too, as the redactor writes
/// them.
fn check_value(value: &Value, at: &str, request: bool, found: &mut impl FnMut(String)) {
    let body = if request { "request" } else { "answer" };
    match value {
        Value::Object(map) => {
            for (key, item) in map {
                let here = if at.is_empty() { key.clone() } else { format!("{at}.{key}") };
                if request && key.eq_ignore_ascii_case(ANSWERS_FIELD) {
                    check_answers(item, &format!("the request body's field {here}"), found);
                } else if secret_field(key, item) {
                    if item.as_str() != Some(REDACTED) {
                        found(format!("the {body} body's field {here}"));
                    }
                } else {
                    check_value(item, &here, request, found);
                }
            }
        }
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                check_value(item, &format!("{at}[{index}]"), request, found);
            }
        }
        _ => {}
    }
}

/// Every answer of a `SecurityResponses` object, named by its prompt.
fn check_answers(responses: &Value, at: &str, found: &mut impl FnMut(String)) {
    let Value::Object(map) = responses else { return };
    for (prompt, answers) in map {
        let redacted = |answer: &Value| answer.as_str() == Some(REDACTED);
        let clean = match answers {
            Value::Array(items) => items.iter().all(redacted),
            other => redacted(other),
        };
        if !clean {
            found(format!("{at}[{prompt:?}]"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLEAN: &str = r"version: 1
recorded_with: bankfeed/0
origin: live
interactions:
- request:
    method: POST
    uri: http://127.0.0.1:1/v3/c/BankingServices/Authorize
    headers:
      content-type: application/json
      flinks-auth-key: REDACTED
    body:
      json:
        Username: REDACTED
        Password: REDACTED
        SecurityResponses:
          What city?:
          - REDACTED
  response:
    status: 200
    headers:
      content-type: application/json
    body:
      json:
        Token: REDACTED
        Login:
          Username: REDACTED
  recorded_at: 2026-01-01T00:00:00Z
";

    #[test]
    fn a_clean_cassette_passes() {
        assert_eq!(check_text(CLEAN), Vec::<String>::new());
    }

    #[test]
    fn each_secret_put_back_is_named_by_interaction_and_field_and_never_shown() {
        for (from, to, field) in [
            ("Password: REDACTED", "Password: hunter2", "the request body's field Password"),
            (
                "Username: REDACTED\n        Password",
                "Username: jane\n        Password",
                "the request body's field Username",
            ),
            ("- REDACTED", "- Paris hunter2", "the request body's field SecurityResponses[\"What city?\"]"),
            ("flinks-auth-key: REDACTED", "flinks-auth-key: hunter2", "the request header flinks-auth-key"),
            ("Token: REDACTED", "Token: hunter2", "the answer body's field Token"),
            (
                "  Username: REDACTED\n  recorded",
                "  Username: hunter2\n  recorded",
                "the answer body's field Login.Username",
            ),
        ] {
            let edited = CLEAN.replacen(from, to, 1);
            assert_ne!(edited, CLEAN, "{from}");
            let findings = check_text(&edited);
            assert_eq!(findings.len(), 1, "{findings:?}");
            let finding = &findings[0];
            assert!(
                finding.starts_with("interaction 0 (POST /v3/{customer_id}/BankingServices/Authorize): "),
                "{finding}"
            );
            assert!(finding.contains(field), "{field}: {finding}");
            assert!(
                !finding.contains("hunter2") && !finding.contains("jane") && !finding.contains("Paris"),
                "{finding}"
            );
        }
    }

    #[test]
    fn an_added_answer_header_or_a_broken_file_is_a_finding() {
        let cookie = CLEAN.replacen(
            "  response:\n    status: 200\n    headers:\n",
            "  response:\n    status: 200\n    headers:\n      set-cookie: sid=abc\n",
            1,
        );
        assert_eq!(check_text(&cookie).len(), 1, "{:?}", check_text(&cookie));
        assert!(check_text(&cookie)[0].contains("the answer header set-cookie"));
        assert!(check_text("version: 1\nnot: [a cassette")[0].starts_with("is not a cassette: "));
    }
}

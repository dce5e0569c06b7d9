//! The secrets a request body carries, read from the body itself by the names of their fields:
//! what a sender that does not know them (a recording sandbox, forwarding another client's
//! requests: docs/cassettes.md#recording-any-client) hands the recording as the body's secrets,
//! as a client hands those it was given. The fail-closed scan then looks for them whatever the
//! redactor did, so a redactor that missed one cannot get it written.

use serde_json::Value;

use super::redactor::{secret_field, ANSWERS_FIELD, REDACTED};
use crate::secret::Secret;

/// Every value of a secret field (a password, a username, a token) and every answer of
/// `SecurityResponses` in the JSON `body`; none when it is not JSON.
pub fn body_secrets(body: &[u8]) -> Vec<Secret> {
    let mut found = Vec::new();
    if let Ok(value) = serde_json::from_slice::<Value>(body) {
        walk(&value, &mut found);
    }
    found
}

fn walk(value: &Value, found: &mut Vec<Secret>) {
    match value {
        Value::Object(map) => {
            for (key, item) in map {
                if key.eq_ignore_ascii_case(ANSWERS_FIELD) {
                    answers(item, found);
                } else if secret_field(key, item) {
                    keep(item, found);
                } else {
                    walk(item, found);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| walk(item, found)),
        _ => {}
    }
}

fn answers(responses: &Value, found: &mut Vec<Secret>) {
    let Value::Object(map) = responses else { return };
    for answers in map.values() {
        match answers {
            Value::Array(items) => items.iter().for_each(|item| keep(item, found)),
            other => keep(other, found),
        }
    }
}

/// `value`, as text, unless it is the placeholder already.
fn keep(value: &Value, found: &mut Vec<Secret>) {
    let text = match value {
        Value::String(text) => text.clone(),
        Value::Null => return,
        other => other.to_string(),
    };
    if text != REDACTED {
        found.push(Secret::new(text));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_password_username_token_and_answers_are_found_by_their_fields() {
        let body = br#"{"Institution":"X","username":"jane","Password":"hunter2","Token":"REDACTED",
                        "SecurityResponses":{"What city?":["Paris"],"Pin":"1234"},"Nested":[{"Token":"t-1"}]}"#;
        let found: Vec<String> = body_secrets(body).iter().map(|secret| secret.expose().to_owned()).collect();
        assert_eq!(found, ["jane", "hunter2", "Paris", "1234", "t-1"]);
        assert!(body_secrets(b"not json").is_empty());
    }
}

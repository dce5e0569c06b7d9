//! Reading JSON answers: typed decoding that keeps the start of a body it could not read, and
//! lookups of fields whose keys the service spells in varying case.

use serde_json::Value;

use crate::error::{snippet, Error};

/// How much of a body an error keeps.
const SNIPPET_CHARS: usize = 200;

/// The start of `bytes` as text, for an error message.
pub(crate) fn body_snippet(bytes: &[u8]) -> String {
    snippet(&String::from_utf8_lossy(bytes), SNIPPET_CHARS)
}

/// A decode error of `operation` that keeps the start of the body.
pub(crate) fn decode_error(operation: &str, status: u16, bytes: &[u8], message: impl Into<String>) -> Error {
    Error::Decode { operation: operation.to_owned(), status, message: message.into(), snippet: body_snippet(bytes) }
}

/// Decodes a successful body into `T`, or a decode error that keeps a snippet of it.
pub(crate) fn decode<'a, T: serde::Deserialize<'a>>(operation: &str, status: u16, bytes: &'a [u8]) -> Result<T, Error> {
    // Checking UTF-8 once up front is faster than serde_json checking every string it reads;
    // bytes that are not UTF-8 go the slow way, for an error that says where.
    let parsed = match std::str::from_utf8(bytes) {
        Ok(text) => serde_json::from_str(text),
        Err(_) => serde_json::from_slice(bytes),
    };
    parsed.map_err(|e| decode_error(operation, status, bytes, e.to_string()))
}

/// The value under `name` in `value`, the key matched case-insensitively (the service binds keys
/// case-insensitively, and its answers vary in casing too).
pub(crate) fn field<'a>(value: &'a Value, name: &str) -> Option<&'a Value> {
    value.as_object()?.iter().find(|(key, _)| key.eq_ignore_ascii_case(name)).map(|(_, v)| v)
}

/// The first of `names` present in `value` as a string, keys matched case-insensitively.
pub(crate) fn text_field(value: &Value, names: &[&str]) -> Option<String> {
    names.iter().find_map(|name| field(value, name).and_then(Value::as_str).map(str::to_owned))
}

/// The `RequestId` of a body, when it is a JSON object that names one.
pub(crate) fn request_id_of(bytes: &[u8]) -> Option<String> {
    let value: Value = serde_json::from_slice(bytes).ok()?;
    text_field(&value, &["RequestId"])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn field_lookup_ignores_case() {
        assert_eq!(text_field(&json!({"flinkscode": "X"}), &["FlinksCode"]).as_deref(), Some("X"));
        assert_eq!(text_field(&json!({"ServiceCode": "Y"}), &["FlinksCode", "ServiceCode"]).as_deref(), Some("Y"));
        assert_eq!(text_field(&json!(["RequestId"]), &["RequestId"]), None);
    }

    #[test]
    fn the_request_id_is_read_from_object_bodies_only() {
        assert_eq!(request_id_of(br#"{"requestid": "r"}"#).as_deref(), Some("r"));
        assert_eq!(request_id_of(b"<html>"), None);
    }

    #[test]
    fn a_body_that_does_not_decode_keeps_its_start() {
        match decode::<Value>("Investments", 200, br#"{"Accounts": [{"Id": "a1", "#) {
            Err(Error::Decode { operation, status, snippet, .. }) => {
                assert_eq!((operation.as_str(), status), ("Investments", 200));
                assert!(snippet.contains(r#""Id": "a1""#), "{snippet}");
            }
            other => panic!("{other:?}"),
        }
    }
}

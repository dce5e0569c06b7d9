//! Fields of JSON bodies found by name, whatever the case of their keys. A leaf of the core, so
//! that errors can name the RequestId of a body without depending on the readers of `json`.

use serde_json::Value;

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

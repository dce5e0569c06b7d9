//! Request bodies, read the way the service binds them: keys case-insensitively, `"true"` as
//! true, null as absent.

use serde_json::{Map, Value};

use super::reply::ErrorReply;

/// `SecurityResponses` as sent: (key, answers), in the order of the request.
pub(crate) type Responses<'a> = Vec<(&'a str, Vec<String>)>;

/// A request body that is a JSON object.
pub(crate) struct Body(Map<String, Value>);

impl Body {
    pub fn parse(bytes: &[u8]) -> Result<Body, ErrorReply> {
        match serde_json::from_slice::<Value>(bytes) {
            Ok(Value::Object(map)) => Ok(Body(map)),
            Ok(_) => Err(ErrorReply::invalid_request("The request body must be a JSON object")),
            Err(error) => Err(ErrorReply::invalid_request(format!("The request body is not valid JSON: {error}"))),
        }
    }

    /// The value of `key`; an exact match wins over a match that differs in case only.
    pub fn get(&self, key: &str) -> Option<&Value> {
        let value = match self.0.get(key) {
            Some(value) => Some(value),
            None => self.0.iter().find(|(name, _)| name.eq_ignore_ascii_case(key)).map(|(_, value)| value),
        };
        value.filter(|value| !value.is_null())
    }

    pub fn has(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// A string field; absent and empty are both None.
    pub fn string(&self, key: &str) -> Result<Option<&str>, ErrorReply> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(text)) if text.trim().is_empty() => Ok(None),
            Some(Value::String(text)) => Ok(Some(text)),
            Some(_) => Err(ErrorReply::invalid_request(format!("{key} must be a string"))),
        }
    }

    /// A required string field.
    pub fn required(&self, key: &str) -> Result<&str, ErrorReply> {
        self.string(key)?.ok_or_else(|| ErrorReply::invalid_request(format!("{key} is required")))
    }

    /// A boolean field: `true`/`false`, or those words as strings in any case.
    pub fn flag(&self, key: &str) -> Result<Option<bool>, ErrorReply> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Bool(flag)) => Ok(Some(*flag)),
            Some(Value::String(text)) if text.trim().eq_ignore_ascii_case("true") => Ok(Some(true)),
            Some(Value::String(text)) if text.trim().eq_ignore_ascii_case("false") => Ok(Some(false)),
            Some(_) => Err(ErrorReply::invalid_request(format!("{key} must be true or false"))),
        }
    }

    /// An array of strings; absent, null and empty are all None (no restriction).
    pub fn strings(&self, key: &str) -> Result<Option<Vec<String>>, ErrorReply> {
        match self.get(key) {
            None => Ok(None),
            Some(value) => string_list(key, value),
        }
    }

    /// One of `allowed` (compared case-insensitively, returned as spelled in `allowed`).
    pub fn choice(&self, key: &str, allowed: &[&'static str]) -> Result<Option<&'static str>, ErrorReply> {
        let Some(text) = self.string(key)? else {
            return Ok(None);
        };
        allowed.iter().find(|choice| choice.eq_ignore_ascii_case(text.trim())).map(|choice| Some(*choice)).ok_or_else(
            || ErrorReply::invalid_request(format!("{key} must be one of {}, not {text:?}", allowed.join(", "))),
        )
    }

    /// `SecurityResponses`: prompt → array of strings, in the order sent.
    pub fn security_responses(&self) -> Result<Option<Responses<'_>>, ErrorReply> {
        const KEY: &str = "SecurityResponses";
        let map = match self.get(KEY) {
            None => return Ok(None),
            Some(Value::Object(map)) => map,
            Some(_) => return Err(ErrorReply::invalid_request(format!("{KEY} must be an object"))),
        };
        let mut responses = Vec::with_capacity(map.len());
        for (key, value) in map {
            let not_strings = || ErrorReply::invalid_request(format!("{KEY}[{key:?}] must be an array of strings"));
            let items = value.as_array().ok_or_else(not_strings)?;
            let answer = items
                .iter()
                .map(|item| item.as_str().map(str::to_owned))
                .collect::<Option<Vec<String>>>()
                .ok_or_else(not_strings)?;
            responses.push((key.as_str(), answer));
        }
        Ok(Some(responses))
    }
}

/// `value` as an array of strings; an empty array is None (no restriction).
pub(crate) fn string_list(key: &str, value: &Value) -> Result<Option<Vec<String>>, ErrorReply> {
    let not_strings = || ErrorReply::invalid_request(format!("{key} must be an array of strings"));
    let items = value.as_array().ok_or_else(not_strings)?;
    let strings = items
        .iter()
        .map(|item| item.as_str().map(str::to_owned))
        .collect::<Option<Vec<String>>>()
        .ok_or_else(not_strings)?;
    Ok((!strings.is_empty()).then_some(strings))
}

/// The value of `key` in a nested object, matched the way [`Body::get`] matches.
pub(crate) fn field<'a>(map: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    map.get(key)
        .or_else(|| map.iter().find(|(name, _)| name.eq_ignore_ascii_case(key)).map(|(_, value)| value))
        .filter(|value| !value.is_null())
}

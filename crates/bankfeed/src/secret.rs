use std::fmt;

/// A value that must never be shown: a password, a key, a token or a challenge answer.
///
/// `Debug` and `Display` print a fixed mask, so a secret cannot leak through a log line, a repr or
/// an error message by accident; [`Secret::expose`] is the one way to read it, at the point where
/// it goes on the wire.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

impl From<&str> for Secret {
    fn from(value: &str) -> Self {
        Secret::new(value)
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Self {
        Secret(value)
    }
}

/// Serde of an `Option<Secret>` field, **the value exposed**: for `#[serde(with = "...")]` on the
/// one type that travels with its keys on purpose, a pickled Python `Client`'s options
/// (docs/architecture.md#pickling). `Secret` itself has no `Serialize`, so that no derived
/// serializer (a log record, a JSON body) can carry a key without naming this module.
pub(crate) mod exposed {
    use serde::{Deserialize, Deserializer, Serializer};

    use super::Secret;

    #[expect(clippy::ref_option, reason = "the signature serde's `with` calls")]
    pub(crate) fn serialize<S: Serializer>(value: &Option<Secret>, serializer: S) -> Result<S::Ok, S::Error> {
        match value {
            Some(secret) => serializer.serialize_some(secret.expose()),
            None => serializer.serialize_none(),
        }
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Secret>, D::Error> {
        Ok(Option::<String>::deserialize(deserializer)?.map(Secret))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formatting_never_shows_the_value() {
        let secret = Secret::new("hunter2");
        assert!(!format!("{secret:?} {secret}").contains("hunter2"));
        assert_eq!(secret.expose(), "hunter2");
    }

    #[derive(serde::Serialize, serde::Deserialize)]
    struct Keys {
        #[serde(with = "exposed")]
        key: Option<Secret>,
    }

    #[test]
    fn the_exposed_serde_keeps_the_value() {
        let json = serde_json::to_string(&Keys { key: Some(Secret::new("hunter2")) }).unwrap();
        assert_eq!(json, r#"{"key":"hunter2"}"#);
        let back: Keys = serde_json::from_str(&json).unwrap();
        assert_eq!(back.key, Some(Secret::new("hunter2")));
        let none: Keys = serde_json::from_str(r#"{"key":null}"#).unwrap();
        assert_eq!(none.key, None);
    }
}

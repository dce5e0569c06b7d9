//! Wire types that sessions and data payloads share: the saved connection (`Login`), the
//! institution, and the GUID shape of the service's identifiers.

use serde::Deserialize;

use crate::config::shown;
use crate::error::Error;

/// `Institution`: a name in banking answers, an object in investment answers
/// (docs/protocol.md#authorize).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum Institution {
    Name(String),
    Object {
        #[serde(rename = "Id", default)]
        id: Option<i64>,
        #[serde(rename = "Name", default)]
        name: Option<String>,
    },
}

/// A saved connection (docs/protocol.md#authorize).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Login {
    /// The LoginId.
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default, alias = "username")]
    pub username: Option<String>,
    #[serde(default)]
    pub is_scheduled_refresh: Option<bool>,
    #[serde(default)]
    pub last_refresh: Option<String>,
    #[serde(default, rename = "Type")]
    pub kind: Option<String>,
}

/// Identifiers of the service are GUIDs: a typo (or a RequestId passed as a LoginId by mistake
/// of shape) is caught before the call. The message shows what came: an id is no secret, and it
/// is quoted, escaped and cut short ([`shown`]) so that no input can fill or forge a log line.
pub(crate) fn guid(field: &'static str, value: &str) -> Result<(), Error> {
    let bytes = value.as_bytes();
    let ok = bytes.len() == 36
        && bytes.iter().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => *b == b'-',
            _ => b.is_ascii_hexdigit(),
        });
    if ok {
        Ok(())
    } else {
        let got = shown(value);
        Err(Error::config(field, format!("must be a GUID such as 5e0e5f83-6e9b-4a2c-a6a3-0d8f4b1c9e21, got {got}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guids_are_checked_by_shape() {
        assert!(guid("login_id", "5e0e5f83-6e9b-4a2c-a6a3-0d8f4b1c9e21").is_ok());
        assert!(matches!(guid("login_id", "5e0e5f83"), Err(Error::Config { field: "login_id", .. })));
        assert!(guid("login_id", "5e0e5f83x6e9b-4a2c-a6a3-0d8f4b1c9e21").is_err());
    }

    #[test]
    fn a_refused_id_is_shown_quoted_escaped_and_bounded() {
        let rule = |value: &str| match guid("login_id", value) {
            Err(Error::Config { rule, .. }) => rule,
            other => panic!("expected a config error, got {other:?}"),
        };
        assert!(rule("not-a-guid").ends_with(r#"got "not-a-guid""#), "{}", rule("not-a-guid"));
        assert!(rule("a\r\nb").ends_with(r#"got "a\r\nb""#), "{}", rule("a\r\nb"));
        assert!(rule("").ends_with(r#"got """#));
        let long = format!("{}{}", "é".repeat(crate::config::SHOWN_CHARS), "tail");
        let shown = rule(&long);
        assert!(shown.ends_with(&format!("got \"{}\"…", "é".repeat(crate::config::SHOWN_CHARS))), "{shown}");
        assert!(!shown.contains("tail"));
    }

    #[test]
    fn an_institution_is_a_name_or_an_object() {
        let name: Institution = serde_json::from_str(r#""FlinksCapital""#).unwrap();
        assert_eq!(name, Institution::Name("FlinksCapital".into()));
        let object: Institution = serde_json::from_str(r#"{"Id": 14, "Name": "FlinksCapital"}"#).unwrap();
        assert_eq!(object, Institution::Object { id: Some(14), name: Some("FlinksCapital".into()) });
    }
}

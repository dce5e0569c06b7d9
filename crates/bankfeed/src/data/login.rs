//! Wire types that sessions and data payloads share: the saved connection (`Login`), the
//! institution, and the GUID shape of the service's identifiers.

use serde::Deserialize;

pub use super::institution::Institution;
use crate::config::shown;
use crate::error::Error;

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

/// A payload that names the saved connection its data belongs to (its `Login`).
pub(crate) trait NamesLogin {
    /// `Login.Id`, when the payload has one.
    fn login_id(&self) -> Option<&str>;
}

/// A data answer must be the data of the login it was asked for: a RequestId serves the login
/// whose Authorize opened it, and the banking operations send the RequestId alone
/// (docs/protocol.md#account-detail-summary-and-statements), so a RequestId of another login
/// given with `login_id` (a `request_ids=` entry, `client.session(request_id, login_id=...)`)
/// would label that login's data with the wrong LoginId. `expected` is the LoginId the call was
/// made for, `named` the `Login.Id` of the answer; either unknown passes, and GUIDs are compared
/// in any case.
///
/// A `ProtocolError`: the answer is valid data but not what the call expects, so nothing of it is
/// handed out (docs/errors.md#protocol-surprises); `request_id` and the start of the body keep
/// what the service said.
pub(crate) fn check_same_login(
    operation: &str,
    expected: Option<&str>,
    named: Option<&str>,
    request_id: &str,
    bytes: &[u8],
) -> Result<(), Error> {
    let (Some(expected), Some(named)) = (expected, named) else { return Ok(()) };
    if same_login_id(expected, named) {
        return Ok(());
    }
    Err(Error::OtherLogin {
        operation: operation.to_owned(),
        message: format!(
            "the answer is the data of LoginId {}, not of LoginId {} that the call was for",
            shown(named),
            shown(expected)
        ),
        request_id: crate::data::json::request_id_of(bytes).unwrap_or_else(|| request_id.to_owned()),
        snippet: crate::data::json::body_snippet(bytes),
    })
}

/// Whether two LoginIds name the same login: GUIDs compared in any case, as the service does. An
/// id and its cassette pseudonym name the same login too: an answer replayed from a cassette
/// carries the pseudonym of the real LoginId a test passes (docs/cassettes.md#redaction).
pub(crate) fn same_login_id(one: &str, other: &str) -> bool {
    let (one, other) = (one.trim(), other.trim());
    one.eq_ignore_ascii_case(other)
        || crate::cassette::pseudonym(one).eq_ignore_ascii_case(other)
        || crate::cassette::pseudonym(other).eq_ignore_ascii_case(one)
}

/// Whether `value` has the shape of a GUID: 8-4-4-4-12 hexadecimal digits.
pub(crate) fn is_guid(value: &str) -> bool {
    let bytes = value.as_bytes();
    bytes.len() == 36
        && bytes.iter().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => *b == b'-',
            _ => b.is_ascii_hexdigit(),
        })
}

/// Identifiers of the service are GUIDs: a typo (or a RequestId passed as a LoginId by mistake
/// of shape) is caught before the call. The message shows what came: an id is no secret, and it
/// is quoted, escaped and cut short ([`shown`]) so that no input can fill or forge a log line.
pub(crate) fn guid(field: &'static str, value: &str) -> Result<(), Error> {
    if is_guid(value) {
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

    /// LoginIds as the real service mints them: a .NET sequential tail, whose variant nibble (the
    /// first of the fourth group) is outside RFC 4122's `8`-`b` (docs/protocol.md#hosts-paths-and-versions).
    const MINTED: [&str; 4] = [
        "a41c9e20-5b7d-4e13-7f28-08dd3c51e7a9",
        "0d5e7b31-c2a4-4f60-0a19-08dc9e4f21b7",
        "e8b04c6d-19f3-4a7e-c3d5-08de11a07c42",
        "5b2f9a14-7e60-4c8d-f1e2-08db6d3c9f05",
    ];

    #[test]
    fn any_8_4_4_4_12_hex_guid_passes_in_any_case() {
        for id in MINTED {
            for spelled in [id.to_owned(), id.to_ascii_uppercase(), format!("{}{}", &id[..18], id[18..].to_uppercase())]
            {
                assert!(guid("login_id", &spelled).is_ok(), "{spelled}");
            }
        }
        // Neither a version nor a variant is asked for: all zeros and all f's have the shape.
        assert!(guid("login_id", "00000000-0000-0000-0000-000000000000").is_ok());
        assert!(guid("login_id", "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF").is_ok());
        // What is not the shape still fails: braces, no dashes, a dash out of place, a non-hex digit.
        for id in [
            "{a41c9e20-5b7d-4e13-7f28-08dd3c51e7a9}",
            "a41c9e205b7d4e137f2808dd3c51e7a9",
            "a41c9e20-5b7d4-e13-7f28-08dd3c51e7a9",
            "g41c9e20-5b7d-4e13-7f28-08dd3c51e7a9",
        ] {
            assert!(guid("login_id", id).is_err(), "{id}");
        }
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
        let long = format!("{}{}", "é".repeat(crate::shown::SHOWN_CHARS), "tail");
        let shown = rule(&long);
        assert!(shown.ends_with(&format!("got \"{}\"…", "é".repeat(crate::shown::SHOWN_CHARS))), "{shown}");
        assert!(!shown.contains("tail"));
    }

    const MINE: &str = "5e0e5f83-6e9b-4a2c-a6a3-0d8f4b1c9e21";
    const OTHER: &str = "0b9a3c1d-2e4f-4a5b-8c6d-7e8f9a0b1c2d";

    #[test]
    fn an_answer_naming_another_login_is_refused_naming_both_logins_and_the_request_id() {
        let body = format!(r#"{{"Accounts": [], "Login": {{"Id": "{OTHER}"}}, "RequestId": "r-1"}}"#);
        match check_same_login("GetAccountsDetail", Some(MINE), Some(OTHER), "r-0", body.as_bytes()) {
            Err(error @ Error::OtherLogin { .. }) => {
                let Error::OtherLogin { operation, request_id, snippet, .. } = &error else { unreachable!() };
                assert_eq!(operation, "GetAccountsDetail");
                // The RequestId the answer names, which is the one that belongs to the other login.
                assert_eq!(request_id, "r-1");
                assert_eq!(snippet, &body);
                let message = error.to_string();
                for part in [MINE, OTHER, "(RequestId r-1)", "resume each login with its own RequestId"] {
                    assert!(message.contains(part), "{part}: {message}");
                }
                assert!(!message.contains("provider"), "{message}");
            }
            other => panic!("{other:?}"),
        }
        // Without a RequestId in the body, the one the call polled.
        let Err(Error::OtherLogin { request_id, .. }) =
            check_same_login("Investments", Some(MINE), Some(OTHER), "r-0", b"{}")
        else {
            panic!("another login passed")
        };
        assert_eq!(request_id, "r-0");
    }

    #[test]
    fn a_minted_login_id_is_the_same_login_in_any_case() {
        for id in MINTED {
            let upper = id.to_ascii_uppercase();
            assert!(same_login_id(id, &upper));
            assert!(check_same_login("GetAccountsDetail", Some(&upper), Some(id), "r", b"{}").is_ok());
        }
        assert!(!same_login_id(MINTED[0], MINTED[1]));
    }

    #[test]
    fn a_replayed_answer_naming_the_pseudonym_of_the_login_asked_is_of_that_login() {
        let pseudonym = crate::cassette::pseudonym(MINTED[0]);
        assert!(same_login_id(MINTED[0], &pseudonym) && same_login_id(&pseudonym, MINTED[0]));
        assert!(check_same_login("GetAccountsDetail", Some(MINTED[0]), Some(&pseudonym), "r", b"{}").is_ok());
        assert!(!same_login_id(MINTED[1], &pseudonym), "the pseudonym of another login is another login");
    }

    #[test]
    fn the_same_login_in_any_case_or_an_unknown_one_passes() {
        let upper = MINE.to_ascii_uppercase();
        assert!(check_same_login("GetAccountsDetail", Some(MINE), Some(&upper), "r", b"{}").is_ok());
        assert!(check_same_login("GetAccountsDetail", Some(MINE), Some(MINE), "r", b"{}").is_ok());
        assert!(check_same_login("GetAccountsDetail", Some(MINE), None, "r", b"{}").is_ok());
        assert!(check_same_login("GetAccountsDetail", None, Some(OTHER), "r", b"{}").is_ok());
    }

    #[test]
    fn an_institution_is_a_name_or_an_object() {
        let name: Institution = serde_json::from_str(r#""FlinksCapital""#).unwrap();
        assert_eq!(name, Institution::Name("FlinksCapital".into()));
        let object: Institution = serde_json::from_str(r#"{"Id": 14, "Name": "FlinksCapital"}"#).unwrap();
        assert_eq!(object, Institution::Object { id: Some("14".into()), name: Some("FlinksCapital".into()) });
    }
}

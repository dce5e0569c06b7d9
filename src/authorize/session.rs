//! An open session: the 200 answer of Authorize.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;

use super::challenge::Challenge;
use crate::error::Error;
use crate::http::{self, Reply};

/// `Institution`: a name in banking answers, an object in investment answers (interface-v3.md 2.3).
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

/// A saved connection (interface-v3.md 2.2).
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

#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct Link {
    pub rel: String,
    pub href: String,
    #[serde(default)]
    pub example: Option<Value>,
}

/// An open session. Its RequestId serves the data operations.
#[derive(Clone, Debug)]
pub struct Session {
    pub request_id: String,
    /// From `Login.Id`, or the LoginId the request named.
    pub login_id: Option<String>,
    pub login: Option<Login>,
    pub institution: Option<Institution>,
    pub links: Vec<Link>,
    /// The body as sent.
    pub raw: Arc<[u8]>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct SessionBody {
    request_id: String,
    #[serde(default, deserialize_with = "crate::data::de::lenient")]
    login: Option<Login>,
    #[serde(default, deserialize_with = "crate::data::de::lenient")]
    institution: Option<Institution>,
    #[serde(default)]
    links: Option<Vec<Link>>,
}

impl Session {
    fn parse(bytes: Vec<u8>, login_id: Option<&str>) -> Result<Self, Error> {
        let body: SessionBody = http::decode("Authorize", 200, &bytes)?;
        let login_id = body.login.as_ref().and_then(|l| l.id.clone()).or_else(|| login_id.map(str::to_owned));
        Ok(Session {
            request_id: body.request_id,
            login_id,
            login: body.login,
            institution: body.institution,
            links: body.links.unwrap_or_default(),
            raw: bytes.into(),
        })
    }
}

/// What an Authorize call leads to: an open session, or challenges to answer.
#[derive(Clone, Debug)]
pub enum Step {
    Session(Session),
    Challenge(Challenge),
}

/// Turns an Authorize answer into a step. `login_id` is the LoginId the request named, if any.
pub(crate) fn parse_step(reply: Reply, login_id: Option<&str>) -> Result<Step, Error> {
    match reply {
        Reply::Data(bytes) => Session::parse(bytes, login_id).map(Step::Session),
        Reply::Challenge(bytes) => {
            Challenge::parse(bytes.clone(), login_id).map(Step::Challenge).map_err(|message| Error::Decode {
                operation: "Authorize".to_owned(),
                status: 203,
                message,
                snippet: crate::error::snippet(&String::from_utf8_lossy(&bytes), 200),
            })
        }
        Reply::Pending(pending) => Err(Error::Decode {
            operation: "Authorize".to_owned(),
            status: 202,
            message: format!("Authorize answered 202 {}", pending.code.unwrap_or_default()),
            snippet: String::new(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_200_becomes_a_session_with_its_login() {
        let body = json!({"HttpStatusCode": 200, "RequestId": "r", "Institution": "FlinksCapital",
            "Links": [{"rel": "AccountsDetail", "href": "/GetAccountsDetail", "example": null}],
            "Login": {"Id": "l", "Username": "Greatday", "IsScheduledRefresh": false,
                      "LastRefresh": "2026-11-20T08:15:42.123456", "Type": "Personal", "Extra": 1}});
        match parse_step(Reply::Data(serde_json::to_vec(&body).unwrap()), None).unwrap() {
            Step::Session(session) => {
                assert_eq!(session.request_id, "r");
                assert_eq!(session.login_id.as_deref(), Some("l"));
                assert_eq!(session.login.unwrap().kind.as_deref(), Some("Personal"));
                assert_eq!(session.links[0].rel, "AccountsDetail");
                assert_eq!(session.institution, Some(Institution::Name("FlinksCapital".into())));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_institution_can_be_an_object_and_the_login_id_comes_from_the_request() {
        let body = json!({"RequestId": "r", "Institution": {"Id": 14, "Name": "FlinksCapital"}});
        match parse_step(Reply::Data(serde_json::to_vec(&body).unwrap()), Some("l")).unwrap() {
            Step::Session(session) => {
                assert_eq!(session.login_id.as_deref(), Some("l"));
                assert_eq!(
                    session.institution,
                    Some(Institution::Object { id: Some(14), name: Some("FlinksCapital".into()) })
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_200_without_request_id_is_a_decode_error() {
        assert!(matches!(parse_step(Reply::Data(b"{}".to_vec()), None), Err(Error::Decode { .. })));
    }
}

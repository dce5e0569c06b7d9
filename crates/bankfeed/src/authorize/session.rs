//! An open session: the 200 answer of Authorize.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;

use super::challenge::Challenge;
use crate::config::{is_safe_segment, shown, SAFE_SEGMENT};
use crate::data::answer::Reply;
use crate::data::institution::NamedInstitution;
use crate::data::json;
use crate::data::login::{guid, same_login_id, Institution, Login};
use crate::error::Error;
use crate::masking::SentSecrets;

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
    /// `InstitutionName` and `InstitutionId`, or what `Institution` gives.
    pub named_institution: NamedInstitution,
    pub links: Vec<Link>,
    /// The body as sent.
    pub raw: Arc<[u8]>,
    /// The secrets the calls of this login sent up to the session (the username and password,
    /// the tokens, the answers): every call made through it masks them too
    /// (docs/errors.md#secrets-a-server-repeats). Never kept in a pickle nor shown: its Debug is
    /// a count.
    pub(crate) sent: SentSecrets,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct SessionBody {
    #[serde(default)]
    request_id: Option<String>,
    #[serde(default, deserialize_with = "crate::data::de::lenient")]
    login: Option<Login>,
    #[serde(default, deserialize_with = "crate::data::de::lenient")]
    institution: Option<Institution>,
    #[serde(default)]
    links: Option<Vec<Link>>,
}

impl Session {
    /// The session whose Authorize 200 answered `body`, e.g. one kept by a pickled Python
    /// `Session`; `login_id` as for `parse_step`. The body is checked as a live answer is.
    pub fn from_body(body: &[u8], login_id: Option<&str>) -> Result<Self, Error> {
        Self::parse(200, body.to_vec(), login_id)
    }

    /// The session of a RequestId already opened, e.g. the one a `PendingTimeout` names, built
    /// without a call: its data operations poll that RequestId again and no Authorize is sent
    /// (docs/protocol.md#polling). `login_id` is needed by Investments and attributes only.
    ///
    /// The RequestId must be one safe path segment, as every RequestId the client polls is (so
    /// any a `PendingTimeout` names passes), the LoginId a GUID; each error names its argument.
    /// `raw` is the least body naming both ids, so that the session is kept and read back as
    /// one that came from Authorize.
    pub fn resume(request_id: &str, login_id: Option<&str>) -> Result<Self, Error> {
        if !is_safe_segment(request_id) {
            let got = shown(request_id);
            return Err(Error::config("request_id", format!("must be {SAFE_SEGMENT}, such as a GUID, got {got}")));
        }
        if let Some(login_id) = login_id {
            guid("login_id", login_id)?;
        }
        let body = match login_id {
            Some(login_id) => serde_json::json!({"RequestId": request_id, "Login": {"Id": login_id}}),
            None => serde_json::json!({"RequestId": request_id}),
        };
        Ok(Session {
            request_id: request_id.to_owned(),
            login_id: login_id.map(str::to_owned),
            login: None,
            institution: None,
            named_institution: NamedInstitution::default(),
            links: Vec::new(),
            raw: body.to_string().into_bytes().into(),
            sent: SentSecrets::default(),
        })
    }

    fn parse(status: u16, bytes: Vec<u8>, login_id: Option<&str>) -> Result<Self, Error> {
        // An envelope that says error is that error, not a session (docs/errors.md#protocol-surprises).
        json::check_payload("Authorize", status, &bytes, json::Shape::AnyOf(&["RequestId"]))?;
        let value: Value = json::decode("Authorize", status, &bytes)?;
        let body = SessionBody::deserialize(&value)
            .map_err(|e| json::decode_error("Authorize", status, &bytes, e.to_string()))?;
        // Valid JSON without the RequestId is not a session: a shape Authorize does not expect.
        let Some(request_id) = body.request_id else {
            return Err(Error::protocol("Authorize", status, "the session answer has no RequestId", &bytes));
        };
        let named = body.login.as_ref().and_then(|l| l.id.clone());
        let named_institution = NamedInstitution::of(&value, body.institution.as_ref());
        let session = Session {
            request_id,
            login_id: named,
            login: body.login,
            institution: body.institution,
            named_institution,
            links: body.links.unwrap_or_default(),
            raw: bytes.into(),
            sent: SentSecrets::default(),
        };
        session.of_login(login_id)
    }

    /// This session, as the session of `asked`: the LoginId the call named (a cached or
    /// saved-connection Authorize, or the challenge rounds of one), if any. A session whose
    /// `Login.Id` names another login is refused: its data would be handed out under the LoginId
    /// asked for (a server or a caching proxy that mixed up two logins), so nothing may be fetched
    /// with it (docs/errors.md#protocol-surprises). A session that names no login is taken as the
    /// one asked for.
    pub(crate) fn of_login(mut self, asked: Option<&str>) -> Result<Self, Error> {
        let Some(asked) = asked else { return Ok(self) };
        match self.login_id.as_deref() {
            None => self.login_id = Some(asked.to_owned()),
            Some(named) if same_login_id(named, asked) => {}
            Some(named) => {
                let message = format!(
                    "the session answered is of LoginId {}, not of LoginId {} that the call asked for: a server or \
                     a caching proxy mixed up two logins, so nothing was fetched with it; try again, and report it \
                     to the service if it persists",
                    shown(named),
                    shown(asked)
                );
                return Err(Error::Protocol {
                    operation: "Authorize".to_owned(),
                    status: 200,
                    message,
                    request_id: Some(self.request_id).filter(|id| is_safe_segment(id)),
                    snippet: json::body_snippet(&self.raw),
                });
            }
        }
        Ok(self)
    }
}

/// What an Authorize call leads to: an open session, or challenges to answer.
#[derive(Clone, Debug)]
pub enum Step {
    Session(Session),
    Challenge(Challenge),
}

impl Step {
    /// This step, keeping `sent`, what the calls of its login sent so far: the next call of the
    /// login (the answer, a data call through the session) masks them too.
    pub(crate) fn sent_before(mut self, sent: SentSecrets) -> Self {
        match &mut self {
            Step::Session(session) => session.sent = sent,
            Step::Challenge(challenge) => challenge.sent = sent,
        }
        self
    }
}

/// Turns an Authorize answer into a step. `login_id` is the LoginId the request named, if any.
pub(crate) fn parse_step(reply: Reply, login_id: Option<&str>) -> Result<Step, Error> {
    match reply {
        Reply::Data { status, bytes } => Session::parse(status, bytes, login_id).map(Step::Session),
        Reply::Challenge(bytes) => Challenge::parse(bytes, login_id).map(Step::Challenge),
        Reply::Pending(pending) => {
            let code = pending.code.clone().unwrap_or_else(|| "without a code".to_owned());
            let message = format!("expected a session (200) or challenges (203), got a 202 {code}");
            Err(Reply::Pending(pending).unexpected("Authorize", message))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::answer::Pending;
    use serde_json::json;

    #[test]
    fn a_200_becomes_a_session_with_its_login() {
        let body = json!({"HttpStatusCode": 200, "RequestId": "r", "Institution": "FlinksCapital",
            "Links": [{"rel": "AccountsDetail", "href": "/GetAccountsDetail", "example": null}],
            "Login": {"Id": "l", "Username": "Greatday", "IsScheduledRefresh": false,
                      "LastRefresh": "2026-11-20T08:15:42.123456", "Type": "Personal", "Extra": 1}});
        match parse_step(Reply::Data { status: 200, bytes: serde_json::to_vec(&body).unwrap() }, None).unwrap() {
            Step::Session(session) => {
                assert_eq!(session.request_id, "r");
                assert_eq!(session.login_id.as_deref(), Some("l"));
                assert_eq!(session.login.unwrap().kind.as_deref(), Some("Personal"));
                assert_eq!(session.links[0].rel, "AccountsDetail");
                assert_eq!(session.institution, Some(Institution::Name("FlinksCapital".into())));
            }
            other @ Step::Challenge(_) => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_institution_can_be_an_object_and_the_login_id_comes_from_the_request() {
        let body = json!({"RequestId": "r", "Institution": {"Id": 14, "Name": "FlinksCapital"}});
        match parse_step(Reply::Data { status: 200, bytes: serde_json::to_vec(&body).unwrap() }, Some("l")).unwrap() {
            Step::Session(session) => {
                assert_eq!(session.login_id.as_deref(), Some("l"));
                assert_eq!(
                    session.institution,
                    Some(Institution::Object { id: Some("14".into()), name: Some("FlinksCapital".into()) })
                );
            }
            other @ Step::Challenge(_) => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_recorded_200_names_its_institution_and_keeps_the_login_id_asked_in_any_case() {
        // The shape the real service answers a challenge's answer with: no `Login`, the
        // institution's name and number beside `Institution` (docs/protocol.md#authorize).
        const MINTED: &str = "a41c9e20-5b7d-4e13-7f28-08dd3c51e7a9";
        let body = json!({"HttpStatusCode": 200, "Links": [], "InstitutionName": "Made Up Bank",
            "InstitutionId": 31, "Institution": "MadeUpBank", "RequestId": "c0ffee00-1111-4222-8333-444455556666"});
        let bytes = serde_json::to_vec(&body).unwrap();
        let upper = MINTED.to_ascii_uppercase();
        let Step::Session(session) = parse_step(Reply::Data { status: 200, bytes }, Some(&upper)).unwrap() else {
            panic!("not a session")
        };
        assert_eq!(session.login_id.as_deref(), Some(upper.as_str()));
        assert_eq!(
            session.named_institution,
            NamedInstitution { name: Some("Made Up Bank".into()), id: Some("31".into()) }
        );
        // The same login named by the answer in the other case is the login asked for.
        let with_login = json!({"RequestId": "r", "Login": {"Id": MINTED}});
        let bytes = serde_json::to_vec(&with_login).unwrap();
        let Step::Session(session) = parse_step(Reply::Data { status: 200, bytes }, Some(&upper)).unwrap() else {
            panic!("not a session")
        };
        assert_eq!(session.login_id.as_deref(), Some(MINTED));
        assert_eq!(session.named_institution, NamedInstitution::default());
    }

    #[test]
    fn a_200_without_request_id_is_a_protocol_surprise() {
        match parse_step(Reply::Data { status: 200, bytes: br#"{"Login": {"Id": "l"}}"#.to_vec() }, None) {
            Err(Error::Protocol { operation, status, request_id, snippet, .. }) => {
                assert_eq!((operation.as_str(), status, request_id), ("Authorize", 200, None));
                assert!(snippet.contains(r#""Id": "l""#), "{snippet}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_200_that_is_not_json_stays_a_decode_error() {
        match parse_step(Reply::Data { status: 200, bytes: b"<html>oops".to_vec() }, None) {
            Err(Error::Decode { status, snippet, .. }) => assert_eq!((status, snippet.as_str()), (200, "<html>oops")),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_202_is_a_protocol_surprise_keeping_its_request_id() {
        let body = br#"{"FlinksCode": "OPERATION_PENDING", "RequestId": "r-202", "HttpStatusCode": 202}"#.to_vec();
        let pending = Pending {
            code: Some("OPERATION_PENDING".into()),
            request_id: Some("r-202".into()),
            async_href: None,
            body,
        };
        match parse_step(Reply::Pending(pending), None) {
            Err(Error::Protocol { operation, status, message, request_id, snippet }) => {
                assert_eq!((operation.as_str(), status), ("Authorize", 202));
                assert_eq!(request_id.as_deref(), Some("r-202"));
                assert!(message.contains("OPERATION_PENDING"), "{message}");
                assert!(snippet.contains("OPERATION_PENDING"), "{snippet}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_203_without_challenges_is_a_protocol_surprise_and_broken_json_a_decode_error() {
        let body = br#"{"RequestId": "r-203", "SecurityChallenges": []}"#.to_vec();
        match parse_step(Reply::Challenge(body), None) {
            Err(Error::Protocol { status, request_id, .. }) => {
                assert_eq!((status, request_id.as_deref()), (203, Some("r-203")));
            }
            other => panic!("{other:?}"),
        }
        let broken = br#"{"RequestId": "r-203", "SecurityChall"#.to_vec();
        assert!(matches!(parse_step(Reply::Challenge(broken), None), Err(Error::Decode { status: 203, .. })));
    }
}

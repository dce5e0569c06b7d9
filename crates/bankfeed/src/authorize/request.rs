//! The four request shapes of Authorize (docs/protocol.md#authorize), each its own variant, so
//! that credentials always go with `MostRecentCached` false and a cached read with true: no
//! default can turn one into the other.

use serde_json::{json, Map, Value};

use super::rules::Answers;
use crate::data::login::guid;
use crate::error::Error;
use crate::secret::Secret;

/// A live login with the end user's institution credentials.
#[derive(Clone, Debug)]
pub struct Credentials {
    pub institution: String,
    pub username: String,
    pub password: Secret,
    /// Save the connection, so that its LoginId can be read again later.
    pub save: bool,
    /// `en` or `fr`.
    pub language: Option<String>,
    /// Echoed back by the service.
    pub tag: Option<String>,
    pub schedule_refresh: Option<bool>,
}

impl Credentials {
    pub fn new(institution: &str, username: &str, password: Secret) -> Self {
        Credentials {
            institution: institution.to_owned(),
            username: username.to_owned(),
            password,
            save: false,
            language: None,
            tag: None,
            schedule_refresh: None,
        }
    }
}

/// A body of the Authorize operation.
#[derive(Clone, Debug)]
pub enum AuthorizeRequest {
    /// Live mode with credentials (`MostRecentCached` false).
    Credentials(Credentials),
    /// A cached read of a saved connection (`MostRecentCached` true).
    Cached { login_id: String },
    /// Live mode by a saved connection (`MostRecentCached` false): the trusted-device flow.
    SavedLive { login_id: String, save: bool },
    /// Answers to the challenges of a 203, under its RequestId.
    Answer { request_id: String, responses: Answers },
}

impl AuthorizeRequest {
    /// Checks the caller's values, naming the field and the rule that fails.
    pub fn validate(&self) -> Result<(), Error> {
        match self {
            AuthorizeRequest::Credentials(c) => {
                non_empty("institution", &c.institution)?;
                non_empty("username", &c.username)?;
                // Spaces alone are refused by the service too ("Password is required"); the
                // message never shows the password.
                if c.password.expose().trim().is_empty() {
                    return Err(Error::config("password", "must not be empty or only spaces"));
                }
                if let Some(language) = &c.language {
                    if language != "en" && language != "fr" {
                        return Err(Error::config("language", "must be \"en\" or \"fr\""));
                    }
                }
                Ok(())
            }
            AuthorizeRequest::Cached { login_id } | AuthorizeRequest::SavedLive { login_id, .. } => {
                guid("login_id", login_id)
            }
            AuthorizeRequest::Answer { request_id, .. } => guid("request_id", request_id),
        }
    }

    /// The JSON body as the service expects it. The password and the answers are exposed here,
    /// and only here, on their way to the wire.
    pub(crate) fn body(&self) -> Value {
        match self {
            AuthorizeRequest::Credentials(c) => {
                let mut body = Map::new();
                body.insert("Institution".into(), json!(c.institution));
                body.insert("Username".into(), json!(c.username));
                body.insert("Password".into(), json!(c.password.expose()));
                body.insert("MostRecentCached".into(), json!(false));
                body.insert("Save".into(), json!(c.save));
                if let Some(language) = &c.language {
                    body.insert("Language".into(), json!(language));
                }
                if let Some(tag) = &c.tag {
                    body.insert("Tag".into(), json!(tag));
                }
                if let Some(schedule) = c.schedule_refresh {
                    body.insert("ScheduleRefresh".into(), json!(schedule));
                }
                Value::Object(body)
            }
            AuthorizeRequest::Cached { login_id } => json!({"LoginId": login_id, "MostRecentCached": true}),
            AuthorizeRequest::SavedLive { login_id, save } => {
                json!({"LoginId": login_id, "MostRecentCached": false, "Save": save})
            }
            AuthorizeRequest::Answer { request_id, responses } => {
                json!({"RequestId": request_id, "SecurityResponses": responses.to_wire()})
            }
        }
    }

    /// The values of the body that are secrets: the username and the password, or the answers.
    /// A server that repeats them in an error gets them masked (docs/errors.md#secrets-a-server-repeats).
    pub(crate) fn secrets(&self) -> Vec<Secret> {
        match self {
            AuthorizeRequest::Credentials(c) => vec![Secret::new(c.username.clone()), c.password.clone()],
            AuthorizeRequest::Answer { responses, .. } => responses.values().map(Secret::new).collect(),
            AuthorizeRequest::Cached { .. } | AuthorizeRequest::SavedLive { .. } => Vec::new(),
        }
    }

    /// A repeat could count against the bank's lockout, or spend an answer.
    pub(crate) fn idempotent(&self) -> bool {
        matches!(self, AuthorizeRequest::Cached { .. })
    }

    /// The LoginId this request names, if any.
    pub(crate) fn login_id(&self) -> Option<&str> {
        match self {
            AuthorizeRequest::Cached { login_id } | AuthorizeRequest::SavedLive { login_id, .. } => Some(login_id),
            _ => None,
        }
    }
}

fn non_empty(field: &'static str, value: &str) -> Result<(), Error> {
    if value.trim().is_empty() {
        return Err(Error::config(field, "must not be empty"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOGIN: &str = "5e0e5f83-6e9b-4a2c-a6a3-0d8f4b1c9e21";

    #[test]
    fn credentials_always_go_live() {
        let mut c = Credentials::new("FlinksCapital", "Greatday", Secret::new("Everyday"));
        c.save = true;
        c.tag = Some("t".into());
        let body = AuthorizeRequest::Credentials(c).body();
        assert_eq!(
            body,
            json!({"Institution": "FlinksCapital", "Username": "Greatday", "Password": "Everyday",
                   "MostRecentCached": false, "Save": true, "Tag": "t"})
        );
    }

    #[test]
    fn cached_and_saved_live_differ_only_by_most_recent_cached() {
        let cached = AuthorizeRequest::Cached { login_id: LOGIN.into() }.body();
        assert_eq!(cached, json!({"LoginId": LOGIN, "MostRecentCached": true}));
        let live = AuthorizeRequest::SavedLive { login_id: LOGIN.into(), save: true }.body();
        assert_eq!(live, json!({"LoginId": LOGIN, "MostRecentCached": false, "Save": true}));
    }

    #[test]
    fn answers_are_sent_with_prompts_verbatim() {
        let responses = Answers::from_pairs([("What city were you born in?", vec!["Montreal"])]);
        let body = AuthorizeRequest::Answer { request_id: LOGIN.into(), responses }.body();
        assert_eq!(
            body,
            json!({"RequestId": LOGIN, "SecurityResponses": {"What city were you born in?": ["Montreal"]}})
        );
    }

    #[test]
    fn only_cached_reads_are_idempotent() {
        assert!(AuthorizeRequest::Cached { login_id: LOGIN.into() }.idempotent());
        assert!(!AuthorizeRequest::SavedLive { login_id: LOGIN.into(), save: false }.idempotent());
        let c = Credentials::new("i", "u", Secret::new("p"));
        assert!(!AuthorizeRequest::Credentials(c).idempotent());
    }

    #[test]
    fn bad_values_name_their_field() {
        let field = |request: AuthorizeRequest| match request.validate() {
            Err(Error::Config { field, .. }) => field,
            other => panic!("{other:?}"),
        };
        assert_eq!(field(AuthorizeRequest::Credentials(Credentials::new(" ", "u", "p".into()))), "institution");
        assert_eq!(field(AuthorizeRequest::Credentials(Credentials::new("i", "", "p".into()))), "username");
        assert_eq!(field(AuthorizeRequest::Credentials(Credentials::new("i", "u", "".into()))), "password");
        assert_eq!(field(AuthorizeRequest::Cached { login_id: "not-a-guid".into() }), "login_id");
        let mut c = Credentials::new("i", "u", "p".into());
        c.language = Some("de".into());
        assert_eq!(field(AuthorizeRequest::Credentials(c)), "language");
    }

    #[test]
    fn debug_never_shows_the_password() {
        let c = Credentials::new("FlinksCapital", "Greatday", Secret::new("Everyday"));
        assert!(!format!("{:?}", AuthorizeRequest::Credentials(c)).contains("Everyday"));
    }
}

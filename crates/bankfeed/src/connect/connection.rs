//! What the widget reports when a bank is connected (docs/connect.md#what-the-widget-reports):
//! the query it appends to the redirect URL, or the fields of its `REDIRECT` event.

use std::fmt;

use reqwest::Url;
use serde_json::Value;

use crate::data::fields::field;
use crate::data::login::is_guid;
use crate::error::Error;
use crate::secret::Secret;
use crate::shown::shown;

/// How the widget reported the connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The query of the redirect URL.
    Redirect,
    /// The fields of a `REDIRECT` event (`postMessage`).
    Event,
}

impl Source {
    pub fn name(self) -> &'static str {
        match self {
            Source::Redirect => "redirect",
            Source::Event => "event",
        }
    }
}

/// A connected bank: the LoginId to read its data with (cached Authorize), and what came with it.
/// The LoginId opens the login's data: it never prints ([`Secret`]).
#[derive(Clone, PartialEq, Eq)]
pub struct Connection {
    pub login_id: Secret,
    pub institution: Option<String>,
    pub account_ids: Vec<String>,
    pub tag: Option<String>,
    pub source: Source,
}

impl fmt::Debug for Connection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Connection")
            .field("login_id", &self.login_id)
            .field("institution", &self.institution)
            .field("account_ids", &self.account_ids)
            .field("tag", &self.tag)
            .field("source", &self.source)
            .finish()
    }
}

/// The field errors name: the widget's own name for it.
const LOGIN_ID: &str = "loginId";

/// The LoginId checked to be a GUID. The message never shows it (it opens a login's data); it
/// says what was wrong with it.
fn login_id(value: Option<&str>) -> Result<Secret, Error> {
    match value.map(str::trim) {
        None | Some("") => Err(Error::config(
            LOGIN_ID,
            "is missing: the widget reports a connected bank with a loginId (a GUID); this is not its redirect \
             or REDIRECT event",
        )),
        Some(id) if is_guid(id) => Ok(Secret::new(id)),
        Some(id) => Err(Error::config(
            LOGIN_ID,
            format!(
                "must be a GUID such as 5e0e5f83-6e9b-4a2c-a6a3-0d8f4b1c9e21, got {} characters that are not one \
                 (not shown: a LoginId opens a login's data)",
                id.chars().count()
            ),
        )),
    }
}

/// Account ids as the widget may write them: one per `accountId`, or several joined by commas.
fn push_account_ids(into: &mut Vec<String>, value: &str) {
    into.extend(value.split(',').map(str::trim).filter(|id| !id.is_empty()).map(str::to_owned));
}

fn non_empty(value: Option<String>) -> Option<String> {
    value.filter(|value| !value.trim().is_empty())
}

impl Connection {
    /// From the redirect: a whole URL, or its query alone (with or without the leading `?`).
    pub fn from_redirect(url_or_query: &str) -> Result<Connection, Error> {
        let query = if let Ok(url) = Url::parse(url_or_query) {
            url.query().unwrap_or_default().to_owned()
        } else {
            let text = url_or_query.trim();
            text.split_once('?').map_or(text, |(_, query)| query).to_owned()
        };
        let query = query.split('#').next().unwrap_or_default();
        let (mut id, mut institution, mut tag, mut account_ids) = (None, None, None, Vec::new());
        // The query read as the widget wrote it: `+` and %-escapes decoded.
        let pairs = Url::parse(&format!("http://query.invalid/?{query}"))
            .map_err(|_| Error::config(LOGIN_ID, "is missing: the redirect's query cannot be read"))?;
        for (name, value) in pairs.query_pairs() {
            match name.as_ref() {
                "loginId" | "loginid" | "LoginId" => id = Some(value.into_owned()),
                "institution" => institution = Some(value.into_owned()),
                "tag" => tag = Some(value.into_owned()),
                "accountId" | "accountid" | "AccountId" => push_account_ids(&mut account_ids, &value),
                _ => {}
            }
        }
        Ok(Connection {
            login_id: login_id(id.as_deref())?,
            institution: non_empty(institution),
            account_ids,
            tag: non_empty(tag),
            source: Source::Redirect,
        })
    }

    /// From the fields of a `REDIRECT` event (`{"step": "REDIRECT", "url": ..., "loginId": ...}`):
    /// its own fields first, those of its `url`'s query for what it lacks.
    pub fn from_event(event: &Value) -> Result<Connection, Error> {
        if !event.is_object() {
            return Err(Error::config(
                "event",
                "must be the widget's event: a mapping such as {\"step\": \"REDIRECT\", ...}",
            ));
        }
        let text = |name: &str| field(event, name).and_then(Value::as_str).map(str::to_owned);
        if let Some(step) = text("step") {
            if !step.eq_ignore_ascii_case("REDIRECT") {
                return Err(Error::config(
                    "event",
                    format!("is the widget's {} event: only REDIRECT reports a connected bank", shown(&step)),
                ));
            }
        }
        let from_url = text("url").and_then(|url| Connection::from_redirect(&url).ok());
        let id = text(LOGIN_ID).or_else(|| from_url.as_ref().map(|c| c.login_id.expose().to_owned()));
        let mut account_ids = Vec::new();
        match field(event, "accountId") {
            Some(Value::Array(ids)) => {
                for id in ids {
                    match id {
                        Value::String(id) => push_account_ids(&mut account_ids, id),
                        Value::Number(id) => account_ids.push(id.to_string()),
                        _ => {}
                    }
                }
            }
            Some(Value::String(ids)) => push_account_ids(&mut account_ids, ids),
            _ => {}
        }
        if account_ids.is_empty() {
            account_ids = from_url.as_ref().map(|c| c.account_ids.clone()).unwrap_or_default();
        }
        Ok(Connection {
            login_id: login_id(id.as_deref())?,
            institution: non_empty(text("institution"))
                .or_else(|| from_url.as_ref().and_then(|c| c.institution.clone())),
            account_ids,
            tag: non_empty(text("tag")).or_else(|| from_url.as_ref().and_then(|c| c.tag.clone())),
            source: Source::Event,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const ID: &str = "8b35f6c8-e7b6-41d3-98f8-08d68b7f8d31";

    #[test]
    fn the_redirect_query_is_read() {
        let url = format!(
            "https://example.com/done?loginId={ID}&institution=FlinksCapital&accountId=a1&accountId=a2,a3&tag=t%201"
        );
        let connection = Connection::from_redirect(&url).unwrap();
        assert_eq!(connection.login_id.expose(), ID);
        assert_eq!(connection.institution.as_deref(), Some("FlinksCapital"));
        assert_eq!(connection.account_ids, ["a1", "a2", "a3"]);
        assert_eq!(connection.tag.as_deref(), Some("t 1"));
        assert!(!format!("{connection:?}").contains(ID));
        assert_eq!(Connection::from_redirect(&format!("?loginId={ID}")).unwrap().source, Source::Redirect);
    }

    #[test]
    fn a_login_id_as_the_service_mints_it_is_read_in_any_case() {
        // A .NET sequential tail, its variant nibble outside RFC 4122 (docs/connect.md#what-the-widget-reports).
        for id in ["a41c9e20-5b7d-4e13-7f28-08dd3c51e7a9", "A41C9E20-5B7D-4E13-7F28-08DD3C51E7A9"] {
            let redirect = Connection::from_redirect(&format!("https://x/done?demo=true&loginId={id}")).unwrap();
            assert_eq!(redirect.login_id.expose(), id);
            let event = Connection::from_event(&json!({"step": "REDIRECT", "loginId": id})).unwrap();
            assert_eq!(event.login_id.expose(), id);
        }
    }

    #[test]
    fn a_login_id_that_is_no_guid_is_refused_without_showing_it() {
        let error = Connection::from_redirect("loginId=../../secret").unwrap_err().to_string();
        assert!(error.starts_with("loginId must be a GUID") && !error.contains("secret"), "{error}");
        assert!(Connection::from_redirect("institution=x").unwrap_err().to_string().contains("missing"));
    }

    #[test]
    fn the_event_is_read_and_its_url_fills_the_gaps() {
        let event = json!({"step": "REDIRECT", "institution": "FlinksCapital",
                           "url": format!("https://x/?loginId={ID}&accountId=a&tag=t")});
        let connection = Connection::from_event(&event).unwrap();
        assert_eq!(
            (connection.login_id.expose(), connection.account_ids.as_slice()),
            (ID, ["a".to_owned()].as_slice())
        );
        assert_eq!((connection.tag.as_deref(), connection.source), (Some("t"), Source::Event));
        let listed = json!({"step": "REDIRECT", "loginId": ID, "accountId": ["a", "b"]});
        assert_eq!(Connection::from_event(&listed).unwrap().account_ids, ["a", "b"]);
        assert!(Connection::from_event(&json!({"step": "APP_MOUNTED"})).is_err());
    }
}

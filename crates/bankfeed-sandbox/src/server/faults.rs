//! The fault model (docs/sandbox.md#faults): what a [`Fault`] does ([`FaultKind`]), which
//! requests it hits (by operation and by user), its JSON form read and written with errors that
//! name the key, and the ordered list of a running sandbox ([`Faults`]). `inject.rs` is the layer
//! that applies them to requests.
//!
//! The faults are an ordered list: a request gets the first fault that matches it and is not
//! spent, so a list is also a sequence (`503`, then `429`, then the real answer). Faults are off
//! unless configured, and a request no fault could match costs one short lock.

use std::sync::Mutex;

use axum::http::HeaderValue;
use serde_json::{json, Map, Value};

use bankfeed::protocol;
use bankfeed::sync::lock;

/// One fault: what it does, which requests it hits, and how many.
#[derive(Debug, Clone, PartialEq)]
pub struct Fault {
    /// The name of a wire operation (`bankfeed::protocol`), as the service names it: `Attributes`
    /// for both shapes of the attributes call, and a banking operation's `...Async/{requestId}`
    /// GET counts as the operation. None hits every operation.
    pub operation: Option<String>,
    /// The user the request is about (compared without regard to case); None hits every user.
    /// A request about no known user (a token call, an unknown RequestId) matches only None.
    pub username: Option<String>,
    /// How many matching requests it hits before it is spent; None: every one.
    pub times: Option<u32>,
    pub kind: FaultKind,
}

/// What a fault does to a request it hits.
#[derive(Debug, Clone, PartialEq)]
pub enum FaultKind {
    /// An error envelope (`HttpStatusCode`, `FlinksCode`, `Message`, `RequestId`) with this
    /// status, and a `Retry-After` header as given. The handler does not run.
    Status { status: u16, code: Option<String>, message: Option<String>, retry_after: Option<String> },
    /// Waits this long, then lets the handler answer.
    Latency { seconds: f64 },
    /// The handler runs (the server saw the request), then the connection is closed without an
    /// answer.
    DropBeforeResponse,
    /// The handler's answer is sent with its full `Content-Length`, but the connection is closed
    /// after half of its body.
    DropMidBody,
    /// The handler's answer with a comma before its final bracket: not JSON.
    MalformedJson,
    /// The first half of the handler's answer, framed as a whole answer.
    TruncatedBody,
    /// The handler's answer with this `Content-Type`.
    WrongContentType { content_type: String },
    /// An HTML error page, as a proxy in front of the service sends. The handler does not run.
    HtmlErrorPage { status: u16 },
    /// A 200 whose JSON body runs to this many bytes, streamed without a `Content-Length`. The
    /// handler does not run.
    OversizedBody { bytes: u64 },
    /// A redirect to `location`. The handler does not run.
    Redirect { status: u16, location: String },
    /// 400 `SESSION_LOADING`, the "session still loading" error. The handler does not run.
    SessionLoading,
}

impl Fault {
    /// A fault hitting the next matching request once.
    pub fn new(kind: FaultKind) -> Fault {
        Fault { operation: None, username: None, times: Some(1), kind }
    }

    /// Reads a fault from its JSON form (docs/sandbox.md#faults); the error names the key.
    pub fn from_json(value: &Value) -> Result<Fault, String> {
        let Value::Object(map) = value else {
            return Err("must be a dict with a \"kind\"".to_owned());
        };
        let spec = Spec(map);
        let kind_name = spec.text("kind")?.ok_or_else(|| "needs a \"kind\"".to_owned())?;
        let (kind, keys): (FaultKind, &[&str]) = match kind_name {
            "status" => (
                FaultKind::Status {
                    status: spec.status("status", 200..=599)?.ok_or_else(|| "needs a \"status\"".to_owned())?,
                    code: spec.text("code")?.map(str::to_owned),
                    message: spec.text("message")?.map(str::to_owned),
                    retry_after: spec.retry_after()?,
                },
                &["status", "code", "message", "retry_after"],
            ),
            "latency" => {
                let seconds = spec.number("seconds")?.ok_or_else(|| "needs \"seconds\"".to_owned())?;
                if !(0.0..=3600.0).contains(&seconds) {
                    return Err(format!("\"seconds\" must be from 0 to 3600, got {seconds}"));
                }
                (FaultKind::Latency { seconds }, &["seconds"])
            }
            "drop_before_response" => (FaultKind::DropBeforeResponse, &[]),
            "drop_mid_body" => (FaultKind::DropMidBody, &[]),
            "malformed_json" => (FaultKind::MalformedJson, &[]),
            "truncated_body" => (FaultKind::TruncatedBody, &[]),
            "wrong_content_type" => {
                let content_type = spec.header_text("content_type")?.unwrap_or("text/plain; charset=utf-8");
                (FaultKind::WrongContentType { content_type: content_type.to_owned() }, &["content_type"])
            }
            "html_error_page" => {
                (FaultKind::HtmlErrorPage { status: spec.status("status", 200..=599)?.unwrap_or(502) }, &["status"])
            }
            "oversized_body" => {
                let bytes = spec.whole("bytes")?.ok_or_else(|| "needs \"bytes\"".to_owned())?;
                if bytes == 0 {
                    return Err("\"bytes\" must be at least 1".to_owned());
                }
                (FaultKind::OversizedBody { bytes }, &["bytes"])
            }
            "redirect" => {
                let location = spec.header_text("location")?.ok_or_else(|| "needs a \"location\"".to_owned())?;
                let status = spec.status("status", 300..=399)?.unwrap_or(307);
                (FaultKind::Redirect { status, location: location.to_owned() }, &["status", "location"])
            }
            "session_loading" => (FaultKind::SessionLoading, &[]),
            other => {
                return Err(format!(
                    "\"kind\" must be one of {}, not {other:?}",
                    KINDS.iter().map(|kind| format!("{kind:?}")).collect::<Vec<_>>().join(", ")
                ))
            }
        };
        for key in map.keys() {
            if !["kind", "operation", "username", "times"].contains(&key.as_str()) && !keys.contains(&key.as_str()) {
                let takes = if keys.is_empty() { "no key of its own".to_owned() } else { keys.join(", ") };
                return Err(format!(
                    "has an unknown key {key:?} (a {kind_name:?} fault takes {takes}, and operation, username, times)"
                ));
            }
        }
        let operation = match spec.text("operation")? {
            None => None,
            Some(name) => {
                let names = protocol::names();
                let known = names.iter().find(|known| known.eq_ignore_ascii_case(name.trim()));
                let known =
                    known.ok_or_else(|| format!("\"operation\" must be one of {}, not {name:?}", names.join(", ")))?;
                Some((*known).to_owned())
            }
        };
        let times = match map.get("times") {
            None => Some(1),
            Some(Value::Null) => None,
            Some(_) => {
                let times = spec.whole("times")?.unwrap_or(1);
                match u32::try_from(times) {
                    Ok(times) if times >= 1 => Some(times),
                    _ => return Err(format!("\"times\" must be an int from 1 to {} or None, got {times}", u32::MAX)),
                }
            }
        };
        Ok(Fault { operation, username: spec.text("username")?.map(str::to_owned), times, kind })
    }

    /// The JSON form [`Fault::from_json`] reads, with `times` as what is left.
    pub fn to_json(&self) -> Value {
        let mut map = Map::new();
        let kind = match &self.kind {
            FaultKind::Status { status, code, message, retry_after } => {
                map.insert("status".into(), json!(status));
                map.insert("code".into(), json!(code));
                map.insert("message".into(), json!(message));
                map.insert("retry_after".into(), json!(retry_after));
                "status"
            }
            FaultKind::Latency { seconds } => {
                map.insert("seconds".into(), json!(seconds));
                "latency"
            }
            FaultKind::DropBeforeResponse => "drop_before_response",
            FaultKind::DropMidBody => "drop_mid_body",
            FaultKind::MalformedJson => "malformed_json",
            FaultKind::TruncatedBody => "truncated_body",
            FaultKind::WrongContentType { content_type } => {
                map.insert("content_type".into(), json!(content_type));
                "wrong_content_type"
            }
            FaultKind::HtmlErrorPage { status } => {
                map.insert("status".into(), json!(status));
                "html_error_page"
            }
            FaultKind::OversizedBody { bytes } => {
                map.insert("bytes".into(), json!(bytes));
                "oversized_body"
            }
            FaultKind::Redirect { status, location } => {
                map.insert("status".into(), json!(status));
                map.insert("location".into(), json!(location));
                "redirect"
            }
            FaultKind::SessionLoading => "session_loading",
        };
        map.insert("kind".into(), json!(kind));
        map.insert("operation".into(), json!(self.operation));
        map.insert("username".into(), json!(self.username));
        map.insert("times".into(), json!(self.times));
        Value::Object(map)
    }

    fn matches(&self, operation: &str, username: Option<&str>) -> bool {
        self.times != Some(0)
            && self.operation.as_deref().is_none_or(|wanted| wanted == operation)
            && self
                .username
                .as_deref()
                .is_none_or(|wanted| username.is_some_and(|user| crate::world::users::same_user(wanted, user)))
    }
}

const KINDS: [&str; 11] = [
    "status",
    "latency",
    "drop_before_response",
    "drop_mid_body",
    "malformed_json",
    "truncated_body",
    "wrong_content_type",
    "html_error_page",
    "oversized_body",
    "redirect",
    "session_loading",
];

/// The keys of a fault's JSON form, read with errors that name the key.
struct Spec<'a>(&'a Map<String, Value>);

impl Spec<'_> {
    fn get(&self, key: &str) -> Option<&Value> {
        self.0.get(key).filter(|value| !value.is_null())
    }

    fn text(&self, key: &str) -> Result<Option<&str>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(text)) => Ok(Some(text)),
            Some(other) => Err(format!("{key:?} must be a str, got {}", type_of(other))),
        }
    }

    /// A string a header can carry (visible ASCII and spaces).
    fn header_text(&self, key: &str) -> Result<Option<&str>, String> {
        let text = self.text(key)?;
        if let Some(text) = text {
            if text.is_empty() || HeaderValue::from_str(text).is_err() || !text.is_ascii() {
                return Err(format!("{key:?} must be non-empty visible ASCII, as a header carries it"));
            }
        }
        Ok(text)
    }

    fn number(&self, key: &str) -> Result<Option<f64>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Number(number)) => Ok(number.as_f64()),
            Some(other) => Err(format!("{key:?} must be a number, got {}", type_of(other))),
        }
    }

    fn whole(&self, key: &str) -> Result<Option<u64>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Number(number)) => {
                number.as_u64().map(Some).ok_or_else(|| format!("{key:?} must be a whole number >= 0, got {number}"))
            }
            Some(other) => Err(format!("{key:?} must be an int, got {}", type_of(other))),
        }
    }

    fn status(&self, key: &str, range: std::ops::RangeInclusive<u16>) -> Result<Option<u16>, String> {
        let Some(status) = self.whole(key)? else { return Ok(None) };
        match u16::try_from(status) {
            Ok(status) if range.contains(&status) => Ok(Some(status)),
            _ => Err(format!("{key:?} must be an int from {} to {}, got {status}", range.start(), range.end())),
        }
    }

    /// `retry_after`: a number of seconds or any header text (an HTTP date, an absurd value).
    fn retry_after(&self) -> Result<Option<String>, String> {
        match self.get("retry_after") {
            Some(Value::Number(number)) => Ok(Some(number.to_string())),
            _ => self.header_text("retry_after").map(|text| text.map(str::to_owned)),
        }
    }
}

fn type_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "None",
        Value::Bool(_) => "a bool",
        Value::Number(_) => "a number",
        Value::String(_) => "a str",
        Value::Array(_) => "a list",
        Value::Object(_) => "a dict",
    }
}

/// The faults of a running sandbox, in order; spent ones are removed.
#[derive(Debug, Default)]
pub(crate) struct Faults(Mutex<Vec<Fault>>);

impl Faults {
    pub(crate) fn new(faults: Vec<Fault>) -> Faults {
        Faults(Mutex::new(faults))
    }

    pub(crate) fn add(&self, faults: impl IntoIterator<Item = Fault>) {
        lock(&self.0).extend(faults);
    }

    pub(crate) fn clear(&self) {
        lock(&self.0).clear();
    }

    pub(crate) fn list(&self) -> Vec<Fault> {
        lock(&self.0).clone()
    }

    /// Whether a fault could hit `operation`, and whether telling would need the request's user.
    pub(crate) fn could_hit(&self, operation: &str) -> Option<bool> {
        let faults = lock(&self.0);
        let mut candidates = faults.iter().filter(|fault| {
            fault.times != Some(0) && fault.operation.as_deref().is_none_or(|wanted| wanted == operation)
        });
        let first = candidates.next()?;
        Some(first.username.is_some() || candidates.any(|fault| fault.username.is_some()))
    }

    /// The first fault matching the request, used once.
    pub(crate) fn take(&self, operation: &str, username: Option<&str>) -> Option<FaultKind> {
        let mut faults = lock(&self.0);
        let index = faults.iter().position(|fault| fault.matches(operation, username))?;
        let fault = faults.get_mut(index)?;
        let kind = fault.kind.clone();
        if let Some(times) = fault.times.as_mut() {
            *times = times.saturating_sub(1);
            if *times == 0 {
                faults.remove(index);
            }
        }
        Some(kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fault_reads_back_as_written() {
        let spec = json!({"kind": "status", "status": 503, "retry_after": 2, "operation": "investments", "times": 3});
        let fault = Fault::from_json(&spec).unwrap();
        assert_eq!(fault.operation.as_deref(), Some("Investments"));
        assert_eq!(fault.times, Some(3));
        assert_eq!(
            fault.kind,
            FaultKind::Status { status: 503, code: None, message: None, retry_after: Some("2".into()) }
        );
        assert_eq!(Fault::from_json(&fault.to_json()).unwrap(), fault);
    }

    #[test]
    fn errors_name_the_key() {
        for (spec, key) in [
            (json!({}), "kind"),
            (json!({"kind": "boom"}), "kind"),
            (json!({"kind": "status"}), "status"),
            (json!({"kind": "status", "status": 99}), "status"),
            (json!({"kind": "status", "status": "503"}), "status"),
            (json!({"kind": "latency", "seconds": -1}), "seconds"),
            (json!({"kind": "redirect", "location": "a\nb"}), "location"),
            (json!({"kind": "redirect", "location": "/x", "status": 200}), "status"),
            (json!({"kind": "malformed_json", "status": 200}), "status"),
            (json!({"kind": "malformed_json", "times": 0}), "times"),
            (json!({"kind": "malformed_json", "operation": "Nope"}), "operation"),
            (json!({"kind": "oversized_body", "bytes": 0}), "bytes"),
        ] {
            let error = Fault::from_json(&spec).unwrap_err();
            assert!(error.contains(key), "{spec}: {error}");
        }
    }

    #[test]
    fn faults_are_used_in_order_and_spent() {
        let faults = Faults::new(vec![
            Fault { times: Some(2), ..Fault::new(FaultKind::SessionLoading) },
            Fault { username: Some("Greatday".into()), ..Fault::new(FaultKind::DropMidBody) },
        ]);
        assert_eq!(faults.could_hit("Investments"), Some(true));
        assert_eq!(faults.take("Investments", Some("greatday")), Some(FaultKind::SessionLoading));
        assert_eq!(faults.take("Investments", None), Some(FaultKind::SessionLoading));
        assert_eq!(faults.take("Investments", None), None);
        assert_eq!(faults.take("Investments", Some("GREATDAY")), Some(FaultKind::DropMidBody));
        assert!(faults.list().is_empty());
        assert_eq!(faults.could_hit("Investments"), None);
    }
}

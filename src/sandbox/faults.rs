//! Fault injection (docs/sandbox.md#faults): one middleware in front of every operation that,
//! when a configured [`Fault`] matches a request (by operation and by user), answers with an
//! error status, waits, drops the connection, or mangles the answer, so that a client's retries,
//! timeouts and error paths can be tested against a real server.
//!
//! The faults are an ordered list: a request gets the first fault that matches it and is not
//! spent, so a list is also a sequence (`503`, then `429`, then the real answer). Faults are off
//! unless configured, and a request no fault could match costs one short lock.

use std::future::Future as _;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{Request, State};
use axum::http::header::{CONTENT_LENGTH, CONTENT_TYPE, LOCATION, RETRY_AFTER};
use axum::http::{HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use hyper::body::{Frame, SizeHint};
use serde_json::{json, Map, Value};
use tokio::time::Sleep;

use super::reply::{too_large, BODY_LIMIT};
use super::state::Shared;
use crate::sync::lock;

/// The operations a fault can name: the service's names, with `Attributes` for both shapes of
/// the attributes call. A banking operation's `...Async/{requestId}` GET counts as the operation.
pub const OPERATIONS: [&str; 8] = [
    "GenerateAuthorizeToken",
    "Authorize",
    "GetAccountsDetail",
    "GetAccountsSummary",
    "GetStatements",
    "Investments",
    "Attributes",
    "DeleteCard",
];

/// The pause between the half of an answer that is sent and the dropped connection, so that the
/// half reaches the client first.
const MID_BODY_PAUSE: Duration = Duration::from_millis(20);

/// One fault: what it does, which requests it hits, and how many.
#[derive(Debug, Clone, PartialEq)]
pub struct Fault {
    /// One of [`OPERATIONS`]; None hits every operation.
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
            Some(name) => Some(
                OPERATIONS
                    .iter()
                    .find(|known| known.eq_ignore_ascii_case(name.trim()))
                    .ok_or_else(|| format!("\"operation\" must be one of {}, not {name:?}", OPERATIONS.join(", ")))?
                    .to_string(),
            ),
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
                .is_none_or(|wanted| username.is_some_and(|user| super::users::same_user(wanted, user)))
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
    pub fn new(faults: Vec<Fault>) -> Faults {
        Faults(Mutex::new(faults))
    }

    pub fn add(&self, faults: impl IntoIterator<Item = Fault>) {
        lock(&self.0).extend(faults);
    }

    pub fn clear(&self) {
        lock(&self.0).clear();
    }

    pub fn list(&self) -> Vec<Fault> {
        lock(&self.0).clone()
    }

    /// Whether a fault could hit `operation`, and whether telling would need the request's user.
    fn could_hit(&self, operation: &str) -> Option<bool> {
        let faults = lock(&self.0);
        let mut candidates = faults.iter().filter(|fault| {
            fault.times != Some(0) && fault.operation.as_deref().is_none_or(|wanted| wanted == operation)
        });
        let first = candidates.next()?;
        Some(first.username.is_some() || candidates.any(|fault| fault.username.is_some()))
    }

    /// The first fault matching the request, used once.
    fn take(&self, operation: &str, username: Option<&str>) -> Option<FaultKind> {
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

/// Marks the answer of a [`FaultKind::DropBeforeResponse`]: the connection closes instead
/// (src/sandbox/connection.rs), and the request log shows status 0.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Dropped;

/// The status the request log shows for `response`: 0 when no answer was sent.
pub(crate) fn logged_status(response: &Response) -> u16 {
    if response.extensions().get::<Dropped>().is_some() {
        0
    } else {
        response.status().as_u16()
    }
}

/// Which operation a request is, and the ids its path names.
struct Target {
    operation: &'static str,
    request_id: Option<String>,
    login_id: Option<String>,
}

impl Target {
    fn of(method: &Method, path: &str, customer_id: &str) -> Option<Target> {
        let rest = path.strip_prefix("/v3/")?.strip_prefix(customer_id)?.strip_prefix('/')?;
        let segments: Vec<&str> = rest.split('/').collect();
        let target = |operation, request_id: Option<&&str>, login_id: Option<&&str>| Target {
            operation,
            request_id: request_id.map(|id| (*id).to_owned()),
            login_id: login_id.map(|id| (*id).to_owned()),
        };
        let post = method == Method::POST;
        let get = method == Method::GET;
        Some(match segments.as_slice() {
            ["BankingServices", "GenerateAuthorizeToken"] if post => target("GenerateAuthorizeToken", None, None),
            ["BankingServices", "Authorize"] if post => target("Authorize", None, None),
            ["BankingServices", "DeleteCard", login_id] if method == Method::DELETE => {
                target("DeleteCard", None, Some(login_id))
            }
            ["BankingServices", "GetAccountsDetail"] if post => target("GetAccountsDetail", None, None),
            ["BankingServices", "GetAccountsSummary"] if post => target("GetAccountsSummary", None, None),
            ["BankingServices", "GetStatements"] if post => target("GetStatements", None, None),
            ["BankingServices", "GetAccountsDetailAsync", id] if get => target("GetAccountsDetail", Some(id), None),
            ["BankingServices", "GetAccountsSummaryAsync", id] if get => target("GetAccountsSummary", Some(id), None),
            ["BankingServices", "GetStatementsAsync", id] if get => target("GetStatements", Some(id), None),
            ["Investments"] if post => target("Investments", None, None),
            ["insight", "login", login_id, "attributes", request_id] if post => {
                target("Attributes", Some(request_id), Some(login_id))
            }
            ["insight", "login", login_id, "attributes", request_id, _] if get => {
                target("Attributes", Some(request_id), Some(login_id))
            }
            _ => return None,
        })
    }
}

/// The middleware: passes a request no fault hits to the handlers unchanged.
pub(crate) async fn inject(State(shared): State<Arc<Shared>>, request: Request, next: Next) -> Response {
    let Some(mut target) = Target::of(request.method(), request.uri().path(), &shared.config.customer_id) else {
        return next.run(request).await;
    };
    let Some(needs_user) = shared.faults.could_hit(target.operation) else {
        return next.run(request).await;
    };
    // The body is read (and put back) for the ids it names: the request's user and RequestId.
    let (parts, body) = request.into_parts();
    // A body past the limit is refused here as the handlers would refuse it.
    let Ok(bytes) = axum::body::to_bytes(body, BODY_LIMIT).await else {
        return too_large().into_response();
    };
    let fields = serde_json::from_slice::<Value>(&bytes).ok();
    let text = |key: &str| {
        let object = fields.as_ref()?.as_object()?;
        let value = object.iter().find(|(name, _)| name.eq_ignore_ascii_case(key)).map(|(_, value)| value)?;
        value.as_str().map(str::to_owned)
    };
    target.request_id = target.request_id.or_else(|| text("RequestId"));
    target.login_id = target.login_id.or_else(|| text("LoginId"));
    let username = if needs_user {
        text("Username").or_else(|| shared.lock().username_of(target.request_id.as_deref(), target.login_id.as_deref()))
    } else {
        None
    };
    let request = Request::from_parts(parts, Body::from(bytes));
    let Some(kind) = shared.faults.take(target.operation, username.as_deref()) else {
        return next.run(request).await;
    };
    // Every answer the layer makes up names a RequestId, as the service's errors do.
    let request_id = target.request_id.unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    match kind {
        FaultKind::Status { status, code, message, retry_after } => {
            let message = message.unwrap_or_else(|| format!("Injected fault: status {status}"));
            let mut response = envelope(status, code.as_deref(), &message, &request_id);
            if let Some(value) = retry_after.and_then(|value| HeaderValue::from_str(&value).ok()) {
                response.headers_mut().insert(RETRY_AFTER, value);
            }
            response
        }
        FaultKind::SessionLoading => envelope(
            400,
            Some(super::reply::SESSION_LOADING),
            "The session is still loading; retry once loading ends",
            &request_id,
        ),
        FaultKind::HtmlErrorPage { status } => html_page(status),
        FaultKind::Redirect { status, location } => {
            let mut response = envelope(status, None, "Moved", &request_id);
            if let Ok(value) = HeaderValue::from_str(&location) {
                response.headers_mut().insert(LOCATION, value);
            }
            response
        }
        FaultKind::OversizedBody { bytes } => oversized(bytes, &request_id),
        FaultKind::Latency { seconds } => {
            tokio::time::sleep(Duration::try_from_secs_f64(seconds).unwrap_or_default()).await;
            next.run(request).await
        }
        FaultKind::DropBeforeResponse => {
            // The handler runs, so the server has acted on the request when the client hears nothing.
            drop(next.run(request).await);
            let mut response = StatusCode::INTERNAL_SERVER_ERROR.into_response();
            response.extensions_mut().insert(Dropped);
            response
        }
        FaultKind::DropMidBody => {
            let (parts, bytes) = answer(next.run(request).await).await;
            let cut = Cut { half: Some(bytes.slice(..bytes.len() / 2)), full: bytes.len() as u64, pause: None };
            Response::from_parts(parts, Body::new(cut))
        }
        FaultKind::TruncatedBody => {
            let (parts, bytes) = answer(next.run(request).await).await;
            Response::from_parts(parts, Body::from(bytes.slice(..bytes.len() / 2)))
        }
        FaultKind::MalformedJson => {
            let (parts, bytes) = answer(next.run(request).await).await;
            Response::from_parts(parts, Body::from(malformed(&bytes)))
        }
        FaultKind::WrongContentType { content_type } => {
            let mut response = next.run(request).await;
            if let Ok(value) = HeaderValue::from_str(&content_type) {
                response.headers_mut().insert(CONTENT_TYPE, value);
            }
            response
        }
    }
}

/// The handler's answer, its body read whole (and its `Content-Length` dropped, since the body
/// is about to change).
async fn answer(response: Response) -> (axum::http::response::Parts, Bytes) {
    let (mut parts, body) = response.into_parts();
    parts.headers.remove(CONTENT_LENGTH);
    let bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap_or_default();
    (parts, bytes)
}

/// An error envelope as the service sends one.
fn envelope(status: u16, code: Option<&str>, message: &str, request_id: &str) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut body = Map::new();
    body.insert("HttpStatusCode".into(), json!(status.as_u16()));
    body.insert("Message".into(), json!(message));
    if let Some(code) = code {
        body.insert("FlinksCode".into(), json!(code));
    }
    body.insert("RequestId".into(), json!(request_id));
    super::reply::json(status, &Value::Object(body))
}

fn html_page(status: u16) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY);
    let title = format!("{} {}", status.as_u16(), status.canonical_reason().unwrap_or("Error"));
    let page = format!(
        "<!DOCTYPE html>\n<html><head><title>{title}</title></head>\n<body><h1>{title}</h1>\
         <p>The server is temporarily unable to service your request.</p></body></html>\n"
    );
    (status, [(CONTENT_TYPE, "text/html; charset=utf-8")], page).into_response()
}

/// `bytes` with a comma before the final `}` or `]`, which no JSON parser accepts; a body with
/// no closing bracket becomes `{,}`.
fn malformed(bytes: &[u8]) -> Vec<u8> {
    match bytes.iter().rposition(|byte| *byte == b'}' || *byte == b']') {
        Some(at) => {
            let (head, tail) = bytes.split_at(at);
            [head, b",", tail].concat()
        }
        None => b"{,}".to_vec(),
    }
}

/// A 200 of `bytes` bytes (or the envelope alone, when it is longer), streamed in chunks.
fn oversized(bytes: u64, request_id: &str) -> Response {
    let head = format!("{{\"HttpStatusCode\":200,\"RequestId\":\"{request_id}\",\"Padding\":\"");
    let tail = "\"}";
    let fixed = (head.len() + tail.len()) as u64;
    let stream = Padded { head: Some(Bytes::from(head)), padding: bytes.saturating_sub(fixed), tail: Some(tail) };
    let mut response = Response::new(Body::new(stream));
    response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// The body of [`oversized`]: the envelope's start, `padding` bytes of `x`, its end.
struct Padded {
    head: Option<Bytes>,
    padding: u64,
    tail: Option<&'static str>,
}

/// The padding is sent in chunks of this size, so a huge body is never held whole.
const CHUNK: usize = 64 * 1024;

impl HttpBody for Padded {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = self.get_mut();
        if let Some(head) = this.head.take() {
            return Poll::Ready(Some(Ok(Frame::data(head))));
        }
        if this.padding > 0 {
            let size = usize::try_from(this.padding).unwrap_or(CHUNK).min(CHUNK);
            this.padding -= size as u64;
            return Poll::Ready(Some(Ok(Frame::data(Bytes::from(vec![b'x'; size])))));
        }
        Poll::Ready(this.tail.take().map(|tail| Ok(Frame::data(Bytes::from_static(tail.as_bytes())))))
    }

    fn is_end_stream(&self) -> bool {
        self.head.is_none() && self.padding == 0 && self.tail.is_none()
    }
}

/// The body of a [`FaultKind::DropMidBody`]: announces `full` bytes, sends `half`, pauses, fails.
struct Cut {
    half: Option<Bytes>,
    full: u64,
    pause: Option<Pin<Box<Sleep>>>,
}

impl HttpBody for Cut {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = self.get_mut();
        if let Some(half) = this.half.take() {
            if !half.is_empty() {
                return Poll::Ready(Some(Ok(Frame::data(half))));
            }
        }
        let pause = this.pause.get_or_insert_with(|| Box::pin(tokio::time::sleep(MID_BODY_PAUSE)));
        if pause.as_mut().poll(cx).is_pending() {
            return Poll::Pending;
        }
        Poll::Ready(Some(Err(std::io::Error::new(
            std::io::ErrorKind::ConnectionAborted,
            "injected fault: dropped mid-body",
        ))))
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.full)
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

    #[test]
    fn malformed_bodies_are_not_json() {
        for body in [&b"{\"a\": [1]}"[..], b"[]", b"text", b""] {
            assert!(serde_json::from_slice::<Value>(&malformed(body)).is_err());
        }
    }
}

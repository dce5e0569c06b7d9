//! What the request log says of each request (docs/sandbox.md#the-request-log), so that a test
//! can assert on what its code sent: the operation, the shape of an Authorize, the user, LoginId
//! and RequestId it concerns, and its body with every secret masked.
//!
//! `routes.rs`'s outermost layer makes an entry for every request and puts a [`Note`] in it; the
//! layers here, in front of each operation's route, fill the note in: [`describe`] (outside the
//! fault layer, so a request a fault hits is described too) from the path and the body, and
//! [`learn_answer`] (inside it, so it reads the handler's own answer, not a mangled one) the
//! RequestId and LoginId an Authorize answer gave.

use std::sync::{Arc, Mutex};

use axum::body::{Body, HttpBody};
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value};

use crate::config::{AuthorizeKind, RecordedRequest, LOGGED_BODY_BYTES};
use crate::operations::authorize;
use crate::server::body::{self as body_of, Body as JsonBody, PathSegments};
use crate::server::inject::Faulted;
use bankfeed::protocol;
use bankfeed::sync::lock;

/// What a secret becomes in the log.
pub(crate) const MASK: &str = "***";

/// An Authorize answer is read for its ids only when it is at most this long: they are a few
/// hundred bytes, and a fault's oversized body is never read whole.
const ANSWER_READ_LIMIT: u64 = 64 * 1024;

/// What the layers learnt of a request, for its entry.
#[derive(Debug, Clone, Default)]
struct Concerns {
    operation: Option<&'static str>,
    authorize: Option<AuthorizeKind>,
    username: Option<String>,
    login_id: Option<String>,
    request_id: Option<String>,
    body: Kept,
}

/// What the log keeps of a body: its masked JSON as text, which costs its length (a parsed
/// `Value` costs up to some thirty times the text: docs/sandbox.md#the-request-log).
#[derive(Debug, Clone, Default)]
pub(crate) struct Kept {
    /// The masked JSON text when it is at most [`LOGGED_BODY_BYTES`] long.
    pub(crate) text: Option<String>,
    /// Its first [`LOGGED_BODY_BYTES`] when it is longer.
    pub(crate) prefix: Option<String>,
    /// The size of the body as received, when it was read.
    pub(crate) size: Option<usize>,
}

impl Kept {
    /// The masked `value` as kept, for a body of `size` bytes.
    fn of(value: &Value, size: Option<usize>) -> Kept {
        let mut text = value.to_string();
        if text.len() <= LOGGED_BODY_BYTES {
            return Kept { text: Some(text), prefix: None, size };
        }
        let mut cut = LOGGED_BODY_BYTES;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.shrink_to_fit();
        Kept { text: None, prefix: Some(text), size }
    }
}

/// The part of a request's log entry that the route layers fill in; shared with the entry's
/// maker through the request's extensions.
#[derive(Debug, Clone, Default)]
pub(crate) struct Note(Arc<Mutex<Concerns>>);

impl Note {
    /// Moves what was learnt into `entry`, but for the masked body's text, which it returns
    /// (the log keeps it as text and parses it when read).
    pub(crate) fn fill(&self, entry: &mut RecordedRequest) -> Option<String> {
        let concerns = std::mem::take(&mut *lock(&self.0));
        entry.operation = concerns.operation;
        entry.authorize = concerns.authorize;
        entry.username = concerns.username;
        entry.login_id = concerns.login_id;
        entry.request_id = concerns.request_id;
        entry.body_size = concerns.body.size;
        entry.body_prefix = concerns.body.prefix;
        concerns.body.text
    }
}

impl Note {
    /// What a widget page's request concerns (docs/sandbox.md#the-request-log): its query or
    /// form as a JSON object, every secret masked (the token, the password, the answers), and
    /// the username typed or the LoginId connected, when there is one.
    pub(crate) fn widget(&self, fields: &Value, username: Option<String>, login_id: Option<String>) {
        let mut concerns = lock(&self.0);
        concerns.body = Kept::of(&mask_secrets(fields), None);
        concerns.username = username;
        concerns.login_id = login_id;
    }
}

/// The layer in front of an operation's route (outside its fault layer): reads the body (and
/// puts it back) for the ids it names, and notes what the request concerns. A body that cannot
/// be read is refused here as the handlers' extractor refuses it.
pub(crate) async fn describe(State(route): State<Faulted>, request: Request, next: Next) -> Response {
    let Some(note) = request.extensions().get::<Note>().cloned() else {
        return next.run(request).await;
    };
    let (mut parts, body) = request.into_parts();
    let segments = PathSegments::of(&mut parts).await;
    let segment = |name: &str| segments.get(name);
    let bytes = match body_of::bytes_of(Request::new(body), &()).await {
        Ok(bytes) => bytes,
        Err(refusal) => return refusal.into_response(),
    };
    let mut json = if bytes.is_empty() { None } else { serde_json::from_slice::<Value>(&bytes).ok() };
    // The object is moved, not copied, into the reader and back: a large body is costly enough
    // parsed once.
    let fields = match json.take() {
        Some(Value::Object(map)) => Some(JsonBody::from_map(map)),
        other => {
            json = other;
            None
        }
    };
    let text = |key: &str| fields.as_ref().and_then(|fields| fields.string(key).ok().flatten().map(str::to_owned));
    let request_id = segment("request_id").or_else(|| text("RequestId"));
    let login_id = segment("login_id").or_else(|| text("LoginId"));
    let (user, login) = route.shared.lock().concerning(request_id.as_deref(), login_id.as_deref());
    let is_authorize = route.op.name == protocol::AUTHORIZE.name;
    {
        let mut concerns = lock(&note.0);
        concerns.operation = Some(route.op.name);
        concerns.authorize = fields.as_ref().filter(|_| is_authorize).map(authorize::shape);
        concerns.username = text("Username").or(user);
        concerns.login_id = login.or(login_id);
        concerns.request_id = request_id;
    }
    let body = fields.map(|fields| Value::Object(fields.into_map())).or(json);
    let kept = match body {
        Some(body) => Kept::of(&mask_secrets(&body), Some(bytes.len())),
        None => Kept { size: Some(bytes.len()), ..Kept::default() },
    };
    lock(&note.0).body = kept;
    next.run(Request::from_parts(parts, Body::from(bytes))).await
}

/// The layer closest to an Authorize handler: notes the RequestId and LoginId its answer (a 200
/// or a 203) gave, which the request did not name.
pub(crate) async fn learn_answer(State(route): State<Faulted>, request: Request, next: Next) -> Response {
    let note = request.extensions().get::<Note>().cloned();
    let response = next.run(request).await;
    let Some(note) = note.filter(|_| route.op.name == protocol::AUTHORIZE.name) else {
        return response;
    };
    let answered = matches!(response.status(), StatusCode::OK | StatusCode::NON_AUTHORITATIVE_INFORMATION);
    if !answered || response.body().size_hint().upper().is_none_or(|size| size > ANSWER_READ_LIMIT) {
        return response;
    }
    let (parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    if let Ok(Value::Object(answer)) = serde_json::from_slice::<Value>(&bytes) {
        let mut concerns = lock(&note.0);
        if let Some(Value::String(request_id)) = answer.get("RequestId") {
            concerns.request_id = Some(request_id.clone());
        }
        let login_id = answer.get("Login").and_then(|login| login.get("Id")).and_then(Value::as_str);
        if let Some(login_id) = login_id.filter(|id| !id.is_empty()) {
            concerns.login_id = Some(login_id.to_owned());
        }
    }
    Response::from_parts(parts, Body::from(bytes))
}

/// `value` with every secret replaced by [`MASK`]: the values of keys that name a password, a
/// secret, a key, a token or an answer, and the answers of `SecurityResponses` (whose keys, the
/// prompts, are kept: a test checks which prompts its code answered).
pub(crate) fn mask_secrets(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, value)| {
                    let masked = if is_secret(key) {
                        mask_all(value)
                    } else if key.eq_ignore_ascii_case("SecurityResponses") {
                        mask_answers(value)
                    } else {
                        mask_secrets(value)
                    };
                    (key.clone(), masked)
                })
                .collect::<Map<String, Value>>(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(mask_secrets).collect()),
        other => other.clone(),
    }
}

/// Whether the value of `key` is a secret, whatever the case and separators of its name.
fn is_secret(key: &str) -> bool {
    let key: String = key.chars().filter(char::is_ascii_alphanumeric).collect::<String>().to_ascii_lowercase();
    ["password", "secret", "token", "apikey", "authkey", "answer"].iter().any(|word| key.contains(word))
}

/// Every leaf of `value` masked; the shape (keys, list lengths, nulls) kept.
fn mask_all(value: &Value) -> Value {
    match value {
        Value::Null => Value::Null,
        Value::Object(map) => Value::Object(map.iter().map(|(key, value)| (key.clone(), mask_all(value))).collect()),
        Value::Array(items) => Value::Array(items.iter().map(mask_all).collect()),
        _ => Value::String(MASK.to_owned()),
    }
}

/// `SecurityResponses`: prompt to answers, the answers masked.
fn mask_answers(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            Value::Object(map.iter().map(|(prompt, answers)| (prompt.clone(), mask_all(answers))).collect())
        }
        other => mask_all(other),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn every_secret_is_masked_and_the_rest_is_kept() {
        let body = json!({
            "Institution": "FlinksCapital", "username": "Greatday", "PASSWORD": "Everyday",
            "SecurityResponses": {"What city were you born in?": ["Montreal"]},
            "Nested": [{"api_key": "k1", "SecretKey": 7, "flinks-auth-key": "t", "Tag": null}],
        });
        let masked = mask_secrets(&body);
        assert_eq!(
            masked,
            json!({
                "Institution": "FlinksCapital", "username": "Greatday", "PASSWORD": MASK,
                "SecurityResponses": {"What city were you born in?": [MASK]},
                "Nested": [{"api_key": MASK, "SecretKey": MASK, "flinks-auth-key": MASK, "Tag": null}],
            })
        );
        for secret in ["Everyday", "Montreal", "k1", "\"t\""] {
            assert!(!masked.to_string().contains(secret), "{secret} in {masked}");
        }
    }
}

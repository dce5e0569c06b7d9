//! The widget logs in through the sandbox's own Authorize (`authorize.rs`), in process: the same
//! users, the same challenges and the same checks as the REST API, and a connection saved under
//! the LoginId the API gives, so a cached session opens with it at once
//! (docs/sandbox.md#the-hosted-widget).

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue};
use axum::response::IntoResponse;
use serde_json::{json, Value};

use crate::operations::authorize;
use crate::server::body::BodyBytes;
use crate::world::state::Shared;

/// An Authorize answer is read whole up to this size: the image challenge's 16 images are the
/// largest, far below it.
const ANSWER_LIMIT: usize = 16 * 1024 * 1024;

/// A challenge as Authorize asked it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Asked {
    pub kind: String,
    pub prompt: String,
    pub choices: Vec<String>,
}

/// What an Authorize call came to.
#[derive(Debug)]
pub(crate) enum Answer {
    /// 200: the session is open, for this LoginId.
    Opened { login_id: String },
    /// 203: a round of challenges, to answer under this RequestId.
    Challenged { request_id: String, round: Vec<Asked> },
    /// Any refusal: its `FlinksCode`, `Message`, and `RequestId` when it named one.
    Refused { code: String, message: String, request_id: Option<String> },
}

/// A live login with credentials, saved, in the widget's language.
pub(crate) async fn with_credentials(shared: &Arc<Shared>, username: &str, password: &str, french: bool) -> Answer {
    let body = json!({
        "Institution": crate::server::reply::INSTITUTION,
        "Username": username,
        "Password": password,
        "Save": true,
        "MostRecentCached": false,
        "Language": language(french),
    });
    call(shared, &body).await
}

/// A live login by the LoginId just saved: where the sandbox asks the challenges of a saved
/// connection (the trusted device of `mfa_trusted_device`).
pub(crate) async fn saved_live(shared: &Arc<Shared>, login_id: &str, french: bool) -> Answer {
    let body = json!({ "LoginId": login_id, "MostRecentCached": false, "Language": language(french) });
    call(shared, &body).await
}

/// The answers to the pending round of `request_id`.
pub(crate) async fn answer(shared: &Arc<Shared>, request_id: &str, responses: Vec<(String, Vec<String>)>) -> Answer {
    let responses: serde_json::Map<String, Value> =
        responses.into_iter().map(|(key, answers)| (key, Value::from(answers))).collect();
    let body = json!({ "RequestId": request_id, "SecurityResponses": responses });
    call(shared, &body).await
}

/// Whether the sandbox's user `username` asks challenges on a live login by LoginId beyond those
/// of its credentials login (docs/sandbox.md#users).
pub(crate) fn asks_when_saved(username: &str) -> bool {
    crate::world::users::find(username).is_some_and(|user| user.scenario.saved_flow.is_some())
}

fn language(french: bool) -> &'static str {
    if french {
        "fr"
    } else {
        "en"
    }
}

/// Calls the Authorize handler with `body`, with a fresh token when the sandbox asks for one
/// (the widget's own token was checked when the flow began).
async fn call(shared: &Arc<Shared>, body: &Value) -> Answer {
    let mut headers = HeaderMap::new();
    if shared.config.required_secret_key().is_some() {
        let token = uuid::Uuid::new_v4();
        shared.lock().add_token(token.as_u128());
        if let Ok(value) = HeaderValue::from_str(&token.to_string()) {
            headers.insert("flinks-auth-key", value);
        }
    }
    let bytes = Bytes::from(serde_json::to_vec(body).unwrap_or_default());
    let response = match authorize::authorize(State(Arc::clone(shared)), headers, BodyBytes(bytes)).await {
        Ok(response) => response,
        Err(refusal) => refusal.into_response(),
    };
    let status = response.status().as_u16();
    let read = axum::body::to_bytes(response.into_body(), ANSWER_LIMIT).await.ok();
    let body: Value = read.and_then(|bytes| serde_json::from_slice(&bytes).ok()).unwrap_or(Value::Null);
    read_answer(status, &body)
}

fn text(value: &Value, key: &str) -> Option<String> {
    value.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn read_answer(status: u16, body: &Value) -> Answer {
    match status {
        200 => match body.get("Login").and_then(|login| text(login, "Id")) {
            Some(login_id) => Answer::Opened { login_id },
            None => refused_unreadable(),
        },
        203 => {
            let round = body.get("SecurityChallenges").and_then(Value::as_array).map(|challenges| {
                challenges
                    .iter()
                    .map(|challenge| Asked {
                        kind: text(challenge, "Type").unwrap_or_default(),
                        prompt: text(challenge, "Prompt").unwrap_or_default(),
                        choices: challenge
                            .get("Iterables")
                            .and_then(Value::as_array)
                            .map(|items| items.iter().filter_map(|item| item.as_str().map(str::to_owned)).collect())
                            .unwrap_or_default(),
                    })
                    .collect()
            });
            match (text(body, "RequestId"), round) {
                (Some(request_id), Some(round)) => Answer::Challenged { request_id, round },
                _ => refused_unreadable(),
            }
        }
        _ => Answer::Refused {
            code: text(body, "FlinksCode").unwrap_or_else(|| "UNKNOWN".to_owned()),
            message: text(body, "Message").unwrap_or_default(),
            request_id: text(body, "RequestId"),
        },
    }
}

/// An answer the widget cannot read: never one of Authorize's, but a page must still say so.
fn refused_unreadable() -> Answer {
    Answer::Refused {
        code: "UNKNOWN".to_owned(),
        message: "The sandbox's Authorize gave an answer the widget cannot read".to_owned(),
        request_id: None,
    }
}

//! The admin API (docs/sandbox.md#the-admin-api): what `sb.requests`, `sb.inject`,
//! `sb.clear_faults`, `sb.reset`, `sb.as_of` and `sb.advance` do in Python, over HTTP, for a sandbox run as a separate
//! process. It is served only when `SandboxConfig::admin_token` is set, under `/_sandbox/` (a
//! path outside `/v3/`, so no operation of the service can be mistaken for it), and only to a
//! request carrying that token. It sits outside the request log and every fault layer: no fault
//! reaches it, and a test reading the log does not see its own reading.

use std::sync::Arc;

use axum::extract::State;
use axum::http::header::AUTHORIZATION;
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use serde_json::{json, Value};

use crate::config::{PUBLIC_API_KEY, PUBLIC_SECRET_KEY};
use crate::server::body::BodyBytes;
use crate::server::faults::Fault;
use crate::server::reply::{self, ErrorReply};
use crate::world::state::Shared;

/// The admin routes, each behind the token check.
pub(crate) fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/_sandbox/requests", get(requests))
        .route("/_sandbox/faults", get(faults).post(inject).delete(clear_faults))
        .route("/_sandbox/reset", post(reset))
        .route("/_sandbox/info", get(info))
        .route("/_sandbox/clock", get(clock).post(advance))
        .route_layer(middleware::from_fn_with_state(Arc::clone(&shared), check_token))
        .with_state(shared)
}

/// Refuses a request without `Authorization: Bearer <admin_token>` with 401 `UNAUTHORIZED`,
/// comparing in constant time so that the token cannot be guessed a byte at a time.
async fn check_token(State(shared): State<Arc<Shared>>, request: axum::extract::Request, next: Next) -> Response {
    let Some(expected) = shared.config.admin_token.as_deref() else {
        return refused();
    };
    let given = request.headers().get(AUTHORIZATION).and_then(|value| value.to_str().ok()).unwrap_or_default();
    let token = given.strip_prefix("Bearer ").unwrap_or_default().trim();
    if !same(token.as_bytes(), expected.as_bytes()) {
        return refused();
    }
    next.run(request).await
}

fn refused() -> Response {
    ErrorReply::unauthorized(
        "UNAUTHORIZED",
        "The admin API needs the header Authorization: Bearer <token>, with the token the sandbox printed at start",
    )
    .into_response()
}

/// Constant-time equality of two byte strings.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

/// `GET /_sandbox/requests`: the request log, oldest first, the count of every request, and how
/// many entries the log dropped to stay within its bounds.
async fn requests(State(shared): State<Arc<Shared>>) -> Response {
    let requests: Vec<Value> = shared.requests().iter().map(crate::RecordedRequest::to_json).collect();
    let (count, dropped) = (shared.request_count(), shared.requests_dropped());
    reply::json(StatusCode::OK, &json!({"requests": requests, "count": count, "dropped": dropped}))
}

/// `GET /_sandbox/faults`: the faults still waiting.
async fn faults(State(shared): State<Arc<Shared>>) -> Response {
    waiting(&shared)
}

fn waiting(shared: &Shared) -> Response {
    let faults: Vec<Value> = shared.faults.list().iter().map(Fault::to_json).collect();
    reply::json(StatusCode::OK, &json!({ "faults": faults }))
}

/// `POST /_sandbox/faults`: adds a fault (an object) or several (a list), after those waiting;
/// a fault that cannot be read is 400 `INVALID_REQUEST` naming the item and the key, and none
/// of the faults sent with it is added.
async fn inject(State(shared): State<Arc<Shared>>, bytes: Result<BodyBytes, ErrorReply>) -> Response {
    let refused = |message: String| ErrorReply::invalid_request(message).of_admin().into_response();
    let bytes = match bytes {
        Ok(BodyBytes(bytes)) => bytes,
        Err(refusal) => return refusal.of_admin().into_response(),
    };
    let items = match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Array(items)) => items,
        Ok(item @ Value::Object(_)) => vec![item],
        Ok(_) | Err(_) => return refused("The body must be a fault (a JSON object) or a list of them".to_owned()),
    };
    let mut faults = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        match Fault::from_json(item) {
            Ok(fault) => faults.push(fault),
            Err(rule) => return refused(format!("faults item {index}: {rule}")),
        }
    }
    shared.faults.add(faults);
    waiting(&shared)
}

/// `DELETE /_sandbox/faults`: removes every fault still waiting.
async fn clear_faults(State(shared): State<Arc<Shared>>) -> Response {
    shared.faults.clear();
    waiting(&shared)
}

/// `POST /_sandbox/reset`: back to the state at start.
async fn reset(State(shared): State<Arc<Shared>>) -> Response {
    shared.reset();
    reply::json(StatusCode::OK, &json!({"reset": true}))
}

/// `GET /_sandbox/clock`: the sandbox's "today" (docs/sandbox.md#the-clock).
async fn clock(State(shared): State<Arc<Shared>>) -> Response {
    reply::json(StatusCode::OK, &json!({"as_of": shared.clock().date()}))
}

/// `POST /_sandbox/clock` with `{"days": n}`: moves the clock `n` days on (n >= 1) and answers
/// as `GET` does; a body that does not say so is 400 `INVALID_REQUEST` naming `days`, and the
/// clock stays where it was.
async fn advance(State(shared): State<Arc<Shared>>, bytes: Result<BodyBytes, ErrorReply>) -> Response {
    let refused = |message: String| ErrorReply::invalid_request(message).of_admin().into_response();
    let bytes = match bytes {
        Ok(BodyBytes(bytes)) => bytes,
        Err(refusal) => return refusal.of_admin().into_response(),
    };
    let body = serde_json::from_slice::<Value>(&bytes).ok();
    let Some(days) = body.as_ref().and_then(|body| body.get("days")) else {
        return refused(
            "The body must be a JSON object with days, the whole number of days to move the clock on, as {\"days\": 1}"
                .to_owned(),
        );
    };
    let Some(count) = days.as_i64() else {
        return refused(format!("days must be a whole number of days, 1 or more, got {days}"));
    };
    match shared.advance(count) {
        Ok(now) => reply::json(StatusCode::OK, &json!({"as_of": now.date()})),
        Err(rule) => refused(format!("days {rule}")),
    }
}

/// `GET /_sandbox/info`: what a client of this sandbox needs besides its URL.
async fn info(State(shared): State<Arc<Shared>>) -> Response {
    let config = &shared.config;
    reply::json(
        StatusCode::OK,
        &json!({
            "customer_id": config.customer_id,
            "seed": config.seed,
            "logins": config.logins,
            "as_of": shared.clock().date(),
            "api_key_required": config.required_api_key().is_some(),
            "secret_key_required": config.required_secret_key().is_some(),
            // The public test instance's keys are public test data, so a harness is handed them;
            // keys of one's own (`--keys-from-env`) never are (docs/sandbox.md#the-admin-api).
            "public_api_key": config.required_api_key().filter(|key| *key == PUBLIC_API_KEY),
            "public_secret_key": config.required_secret_key().filter(|key| *key == PUBLIC_SECRET_KEY),
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_compared_whole() {
        assert!(same(b"abc", b"abc"));
        assert!(!same(b"abc", b"abd"));
        assert!(!same(b"abc", b"ab"));
        assert!(!same(b"", b"a"));
    }
}

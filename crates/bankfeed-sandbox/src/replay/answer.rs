//! One HTTP request answered from the served cassette (or forwarded and recorded into it): it is
//! handed to the client crate's player as the client's send path hands it
//! (crates/bankfeed/src/http.rs), so the same request matches the same interaction whether it
//! comes from a bankfeed client in-process or from any client over HTTP. What the player refuses is answered in the service's JSON error shape, with the
//! player's own message (docs/cassettes.md#replay-for-any-client).

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::header::{CONTENT_TYPE, LOCATION, RETRY_AFTER};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use super::served::ServedCassette;
use crate::server::path_case::spelled_as;
use crate::server::reply::{too_large, ErrorReply, BODY_LIMIT};
use bankfeed::cassette::{Decision, Exchange, WireAnswer};
use bankfeed::error::Error;
use bankfeed::protocol;
use bankfeed::secret::Secret;

/// The request headers that carry secrets: handed to the player as the client's seam hands its
/// keys and tokens, so a recording keeps them as placeholders. The others (`User-Agent`,
/// `Accept`) are no part of an interaction.
const SECRET_HEADERS: [&str; 5] = ["flinks-auth-key", "x-api-key", "authorization", "proxy-authorization", "cookie"];

/// The status of every refusal of the player: a 4xx, which no client retries (a retried
/// unmatched request would be unmatched again).
const REFUSED: StatusCode = StatusCode::BAD_REQUEST;

/// The `FlinksCode` of a request the cassette has no interaction for.
pub(crate) const CASSETTE_UNMATCHED: &str = "CASSETTE_UNMATCHED";
/// The `FlinksCode` of a request whose recorded answers were all played.
pub(crate) const CASSETTE_RUN_OUT: &str = "CASSETTE_RUN_OUT";
/// The `FlinksCode` of a cassette that cannot answer at all (a body that does not decode), or
/// that a recording could not write.
pub(crate) const CASSETTE_ERROR: &str = "CASSETTE_ERROR";
/// The `FlinksCode` of a request a recording sandbox could not forward, or whose answer broke off.
pub(crate) const UPSTREAM_FAILED: &str = "CASSETTE_UPSTREAM_FAILED";

/// Answers `request` from `cassette`: the next unplayed interaction that matches it, or the
/// player's error. Never waits: a recorded `Retry-After` is sent as it was, for information.
/// A recording cassette has it forwarded, records the answer, and answers with it.
pub(crate) async fn answer(State(cassette): State<Arc<ServedCassette>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let Ok(body) = axum::body::to_bytes(body, BODY_LIMIT).await else {
        return too_large().into_response();
    };
    let path = parts.uri.path();
    let path_and_query = parts.uri.path_and_query().map_or(path, |whole| whole.as_str());
    // What the cassette records as the request's URI: the server's it goes to when recording.
    let url = match cassette.forward() {
        Some(forward) => forward.url_of(path_and_query),
        None => format!("http://127.0.0.1{path_and_query}"),
    };
    let secrets: Vec<(&str, Secret)> = SECRET_HEADERS
        .iter()
        .filter_map(|name| {
            let value = parts.headers.get(*name)?;
            Some((*name, Secret::new(String::from_utf8_lossy(value.as_bytes()).into_owned())))
        })
        .collect();
    // As the client's seam gives it: a media type with a body only (a GET that says
    // `Content-Type: application/json` with nothing to type matches a GET recorded without).
    let content_type =
        parts.headers.get(CONTENT_TYPE).and_then(|value| value.to_str().ok()).filter(|_| !body.is_empty());
    // A client in-process hands the secrets it was given; the server reads them from the body,
    // so that the fail-closed scan of a recording looks for them whatever the redactor did.
    let body_secrets = bankfeed::cassette::body_secrets(&body);
    let exchange = Exchange {
        operation: operation_of(path),
        method: parts.method.as_str(),
        url: &url,
        headers: secrets.iter().map(|(name, value)| (*name, value)).collect(),
        content_type,
        body: (!body.is_empty()).then_some(body.as_ref()),
        body_secrets: &body_secrets,
    };
    match cassette.session().replay(&exchange) {
        Ok(Decision::Replay(answer)) => replayed(answer),
        Ok(Decision::Record) => {
            let Some(forward) = cassette.forward() else {
                // A replay's player never asks for a request to be sent.
                return refused(&Error::Cassette {
                    path: cassette.path().display().to_string(),
                    message: "asked to send a request, which a replaying sandbox never does".to_owned(),
                });
            };
            let answer = match forward.send(&url, &parts, body.to_vec()).await {
                Ok(answer) => answer,
                Err(message) => {
                    return ErrorReply::new(StatusCode::BAD_GATEWAY, UPSTREAM_FAILED, message).into_response()
                }
            };
            cassette.session().record(&exchange, &answer);
            // Written after every answer, so that a sandbox stopped any way leaves every answer it
            // forwarded recorded; and never with a secret in it (fail closed): then the client
            // gets the error, not the answer, and knows the file lacks it.
            match cassette.session().save() {
                Ok(_) => replayed(answer),
                Err(error) => refused(&error),
            }
        }
        Err(error) => refused(&error),
    }
}

/// The name of the operation at `path` (what the player's errors name), or a description of none.
fn operation_of(path: &str) -> &'static str {
    protocol::ALL
        .into_iter()
        .find(|op| {
            spelled_as(op.path, path).is_some()
                || op.async_path.is_some_and(|async_path| spelled_as(async_path, path).is_some())
        })
        .map_or("no operation of the API", |op| op.name)
}

/// The recorded answer, as it was sent: status, the headers a cassette keeps, and the body.
fn replayed(answer: WireAnswer) -> Response {
    let WireAnswer { status, content_type, location, retry_after, body } = answer;
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    for (name, value) in [(CONTENT_TYPE, content_type), (LOCATION, location), (RETRY_AFTER, retry_after)] {
        if let Some(value) = value.and_then(|value| HeaderValue::from_str(&value).ok()) {
            response.headers_mut().insert(name, value);
        }
    }
    response
}

/// The player's `error`, in the service's error shape, with the message an in-process replay
/// raises.
fn refused(error: &Error) -> Response {
    let code = match error {
        Error::CassetteUnmatched { .. } => CASSETTE_UNMATCHED,
        Error::CassetteRunOut { .. } => CASSETTE_RUN_OUT,
        _ => CASSETTE_ERROR,
    };
    ErrorReply::new(REFUSED, code, error.to_string()).into_response()
}

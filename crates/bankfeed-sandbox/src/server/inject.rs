//! Fault injection (docs/sandbox.md#faults): a layer in front of each operation's route that,
//! when a configured [`Fault`](crate::server::faults::Fault) matches a request (by its route's wire
//! operation and by user), answers with an error status, waits, drops the connection, or mangles
//! the answer, so that a client's retries, timeouts and error paths can be tested against a real
//! server. The faults themselves, and which request each hits, are `faults.rs`.

use std::future::Future as _;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{Request, State};
use axum::http::header::{CONTENT_LENGTH, CONTENT_TYPE, LOCATION, RETRY_AFTER};
use axum::http::{HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use hyper::body::{Frame, SizeHint};
use serde_json::{json, Map, Value};
use tokio::time::Sleep;

use crate::server::body::PathSegments;
use crate::server::faults::FaultKind;
use crate::server::reply::{self, too_large, BODY_LIMIT};
use crate::world::state::Shared;
use bankfeed::protocol::WireOp;

/// The pause between the half of an answer that is sent and the dropped connection, so that the
/// half reaches the client first.
const MID_BODY_PAUSE: Duration = Duration::from_millis(20);

/// The state of one route's fault layer: the sandbox, and the wire operation the route serves,
/// which is what a fault's `operation` names.
#[derive(Clone)]
pub(crate) struct Faulted {
    pub shared: Arc<Shared>,
    pub op: &'static WireOp,
}

/// Marks the answer of a [`FaultKind::DropBeforeResponse`]: the connection closes instead
/// (crates/bankfeed-sandbox/src/server/connection.rs), and the request log shows status 0.
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

/// The middleware of one route (the router's `route_layer`, inside the customer check): passes a
/// request no fault hits to the handler unchanged.
pub(crate) async fn inject(State(route): State<Faulted>, request: Request, next: Next) -> Response {
    let Faulted { shared, op } = route;
    let Some(needs_user) = shared.faults.could_hit(op.name) else {
        return next.run(request).await;
    };
    // The ids the path names, decoded as the handler reads them; a path the handler will refuse
    // names none.
    let (mut parts, body) = request.into_parts();
    let segments = PathSegments::of(&mut parts).await;
    let segment = |name: &str| segments.get(name);
    // The body is read (and put back) for the ids it names: the request's user and RequestId.
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
    let request_id = segment("request_id").or_else(|| text("RequestId"));
    let login_id = segment("login_id").or_else(|| text("LoginId"));
    let username = if needs_user {
        text("Username").or_else(|| shared.lock().username_of(request_id.as_deref(), login_id.as_deref()))
    } else {
        None
    };
    let request = Request::from_parts(parts, Body::from(bytes));
    let Some(kind) = shared.faults.take(op.name, username.as_deref()) else {
        return next.run(request).await;
    };
    // Every answer the layer makes up names a RequestId, as the service's errors do.
    let request_id = request_id.unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
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
            Some(reply::SESSION_LOADING),
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
    reply::json(status, &Value::Object(body))
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
    fn malformed_bodies_are_not_json() {
        for body in [&b"{\"a\": [1]}"[..], b"[]", b"text", b""] {
            assert!(serde_json::from_slice::<Value>(&malformed(body)).is_err());
        }
    }
}

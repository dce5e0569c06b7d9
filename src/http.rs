//! The one place that sends requests: headers, timeouts, retries, and the classification of every
//! answer into data, pending, challenge or error.

use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderValue, ACCEPT, CONTENT_TYPE, RETRY_AFTER, USER_AGENT};
use reqwest::Method;
use serde_json::Value;

use crate::config::{ClientConfig, RetryPolicy};
use crate::data::json::{body_snippet, field, text_field};
use crate::error::{ApiError, Body, Error};
use crate::secret::Secret;

/// One request, kept whole so that the poll engine and the retry loop can send it again.
#[derive(Clone, Debug)]
pub(crate) struct ApiRequest {
    /// The operation's name, for error messages (`Authorize`, `Investments`, ...).
    pub operation: &'static str,
    pub method: Method,
    pub url: String,
    pub body: Option<Vec<u8>>,
    /// Header values are secrets (keys and tokens).
    pub headers: Vec<(&'static str, Secret)>,
    /// Safe to send twice. Credentials and challenge answers are not: a repeat can count against
    /// the bank's lockout, so they are retried only when the connection was never made.
    pub idempotent: bool,
}

impl ApiRequest {
    pub fn new(operation: &'static str, method: Method, url: String) -> Self {
        ApiRequest { operation, method, url, body: None, headers: Vec::new(), idempotent: true }
    }

    /// Sets the JSON body. Serialising the request bodies the client builds (maps of strings,
    /// numbers and the caller's JSON values) cannot fail, but an error is returned, not a panic.
    pub fn json(mut self, body: &impl serde::Serialize) -> Result<Self, Error> {
        let bytes = serde_json::to_vec(body).map_err(|e| {
            Error::config("request body", format!("of {} could not be serialised: {e}", self.operation))
        })?;
        self.body = Some(bytes);
        Ok(self)
    }

    pub fn header(mut self, name: &'static str, value: Secret) -> Self {
        self.headers.push((name, value));
        self
    }

    pub fn not_idempotent(mut self) -> Self {
        self.idempotent = false;
        self
    }
}

/// A 202: the data is still being processed.
#[derive(Clone, Debug)]
pub(crate) struct Pending {
    /// `OPERATION_PENDING` or `OPERATION_DISPATCHED`.
    pub code: Option<String>,
    pub request_id: Option<String>,
    /// The `href` of an `...Async` link, when the body names one: poll it with GET.
    pub async_href: Option<String>,
    /// The body as sent, for the error of an operation that does not expect a 202.
    pub body: Vec<u8>,
}

/// A classified answer.
#[derive(Debug)]
pub(crate) enum Reply {
    /// A 2xx other than 202 and 203, with its status.
    Data { status: u16, bytes: Vec<u8> },
    /// A 202.
    Pending(Pending),
    /// A 203, with its body.
    Challenge(Vec<u8>),
}

impl Reply {
    /// This answer as a protocol surprise of `operation` (docs/errors.md#protocol-surprises): the
    /// status that came, the RequestId its body carried, the start of the body, and `message`
    /// saying what the operation expected instead.
    pub fn unexpected(self, operation: &str, message: impl Into<String>) -> Error {
        let (status, bytes) = match self {
            Reply::Data { status, bytes } => (status, bytes),
            Reply::Pending(pending) => (202, pending.body),
            Reply::Challenge(bytes) => (203, bytes),
        };
        Error::protocol(operation, status, message, &bytes)
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Http {
    client: reqwest::Client,
    retry: RetryPolicy,
}

impl Http {
    pub fn new(config: &ClientConfig) -> Result<Self, Error> {
        // reqwest is built without a crypto provider (ring builds much faster than aws-lc); an
        // Err means the host application installed its own first, which is as good.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut headers = HeaderMap::new();
        headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
        headers.insert(USER_AGENT, HeaderValue::from_static(concat!("bankfeed/", env!("CARGO_PKG_VERSION"))));
        let client = reqwest::Client::builder()
            .default_headers(headers)
            .timeout(config.timeout)
            .connect_timeout(config.timeout.min(Duration::from_secs(30)))
            .build()
            .map_err(|e| Error::config("base_url", format!("could not build the HTTP client: {e}")))?;
        Ok(Http { client, retry: config.retry.clone() })
    }

    /// Sends `request`, retrying what is safe to retry, and classifies the answer.
    pub async fn send(&self, request: &ApiRequest) -> Result<Reply, Error> {
        let mut attempt = 0;
        loop {
            let outcome = self.send_once(request).await;
            let delay = match &outcome {
                Err(Attempt::Transport { connect, .. }) if *connect || request.idempotent => None,
                Err(Attempt::Api(api)) if request.idempotent && is_retryable_status(api) => api.retry_after,
                _ => return outcome.map_err(|attempt| attempt.into_error(request.operation)),
            };
            if attempt >= self.retry.max_retries {
                return outcome.map_err(|attempt| attempt.into_error(request.operation));
            }
            let backoff = self.retry.backoff.saturating_mul(1 << attempt.min(16)).min(self.retry.max_backoff);
            tokio::time::sleep(delay.map_or(backoff, |d| d.min(self.retry.max_backoff))).await;
            attempt += 1;
        }
    }

    async fn send_once(&self, request: &ApiRequest) -> Result<Reply, Attempt> {
        let mut builder = self.client.request(request.method.clone(), &request.url);
        for (name, value) in &request.headers {
            let mut value = HeaderValue::from_str(value.expose()).map_err(|_| Attempt::Transport {
                message: format!("the {name} header holds characters a header cannot carry"),
                connect: false,
                timed_out: false,
            })?;
            value.set_sensitive(true);
            builder = builder.header(*name, value);
        }
        if let Some(body) = &request.body {
            builder = builder.header(CONTENT_TYPE, "application/json").body(body.clone());
        }
        let response = builder.send().await.map_err(Attempt::from_reqwest)?;
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get(RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map(Duration::from_secs_f64);
        let bytes = response.bytes().await.map_err(Attempt::from_reqwest)?.to_vec();
        classify(status, bytes, retry_after)
    }
}

fn is_retryable_status(api: &ApiError) -> bool {
    let code = api.code.as_deref().unwrap_or("");
    matches!(api.status, 429 | 502 | 503 | 504) || code.eq_ignore_ascii_case("TOO_MANY_REQUESTS")
}

/// What one attempt ended with, before it becomes an [`Error`] naming the operation.
#[derive(Debug)]
enum Attempt {
    Transport { message: String, connect: bool, timed_out: bool },
    Api(Box<ApiError>),
    Decode { status: u16, message: String, snippet: String },
}

impl Attempt {
    fn from_reqwest(error: reqwest::Error) -> Self {
        // reqwest's Display names the URL; ours carry no secret (keys travel in headers).
        let mut message = error.to_string();
        let mut source = std::error::Error::source(&error);
        while let Some(inner) = source {
            message.push_str(": ");
            message.push_str(&inner.to_string());
            source = inner.source();
        }
        Attempt::Transport { message, connect: error.is_connect(), timed_out: error.is_timeout() }
    }

    fn into_error(self, operation: &'static str) -> Error {
        let operation = operation.to_owned();
        match self {
            Attempt::Transport { message, timed_out, .. } => Error::Transport { operation, message, timed_out },
            Attempt::Api(api) => Error::Api(api),
            Attempt::Decode { status, message, snippet } => Error::Decode { operation, status, message, snippet },
        }
    }
}

fn classify(status: u16, bytes: Vec<u8>, retry_after: Option<Duration>) -> Result<Reply, Attempt> {
    match status {
        202 => {
            let body = parse_object(status, &bytes)?;
            Ok(Reply::Pending(Pending {
                code: text_field(&body, &["FlinksCode", "ServiceCode"]),
                request_id: text_field(&body, &["RequestId"]),
                async_href: async_href(&body),
                body: bytes,
            }))
        }
        203 => Ok(Reply::Challenge(bytes)),
        200..=299 => Ok(Reply::Data { status, bytes }),
        _ => {
            let body = match serde_json::from_slice::<Value>(&bytes) {
                Ok(value) => Body::Json(value),
                Err(_) => Body::Text(String::from_utf8_lossy(&bytes).into_owned()),
            };
            let field = |names: &[&str]| match &body {
                Body::Json(value) => text_field(value, names),
                Body::Text(_) => None,
            };
            Err(Attempt::Api(Box::new(ApiError {
                status,
                code: field(&["FlinksCode", "ServiceCode"]),
                message: field(&["Message"]),
                request_id: field(&["RequestId"]),
                retry_after,
                body,
            })))
        }
    }
}

/// Parses a body that must be a JSON object.
fn parse_object(status: u16, bytes: &[u8]) -> Result<Value, Attempt> {
    match serde_json::from_slice::<Value>(bytes) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(_) => Err(decode_error(status, bytes, "expected a JSON object".to_owned())),
        Err(e) => Err(decode_error(status, bytes, e.to_string())),
    }
}

fn decode_error(status: u16, bytes: &[u8], message: String) -> Attempt {
    Attempt::Decode { status, message, snippet: body_snippet(bytes) }
}

fn async_href(body: &Value) -> Option<String> {
    let links = field(body, "Links")?.as_array()?;
    links.iter().find_map(|link| {
        let rel = text_field(link, &["rel"]).unwrap_or_default();
        let href = text_field(link, &["href"])?;
        (rel.ends_with("Async") || href.trim_end_matches('/').ends_with("Async")).then_some(href)
    })
}

/// A loopback HTTP server for the core's unit tests: it answers each request, in order, with the
/// next of its canned answers, then stops listening.
#[cfg(test)]
pub(crate) mod stub {
    use std::io::{Read, Write};
    use std::net::TcpListener;

    /// Serves `answers` (status, body) one request each; returns the base URL.
    pub(crate) fn serve(answers: Vec<(u16, &'static str)>) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            for (status, body) in answers {
                let (mut socket, _) = listener.accept().unwrap();
                read_request(&mut socket);
                let kind = if body.starts_with(['{', '[']) { "application/json" } else { "text/plain" };
                let answer = format!(
                    "HTTP/1.1 {status} Stub\r\ncontent-type: {kind}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                socket.write_all(answer.as_bytes()).unwrap();
            }
        });
        base
    }

    fn read_request(socket: &mut impl Read) {
        let mut request = Vec::new();
        let mut chunk = [0u8; 4096];
        loop {
            let read = socket.read(&mut chunk).unwrap();
            if read == 0 {
                return;
            }
            request.extend_from_slice(&chunk[..read]);
            if let Some(end) = request.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&request[..end]).to_ascii_lowercase();
                let length: usize = head
                    .lines()
                    .find_map(|line| line.strip_prefix("content-length:"))
                    .map_or(0, |value| value.trim().parse().unwrap());
                if request.len() >= end + 4 + length {
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn bytes(value: Value) -> Vec<u8> {
        serde_json::to_vec(&value).unwrap()
    }

    #[test]
    fn a_202_is_pending_under_either_code_name() {
        for key in ["FlinksCode", "ServiceCode"] {
            let body = json!({key: "OPERATION_DISPATCHED", "HttpStatusCode": 202, "RequestId": "r", "Links": []});
            match classify(202, bytes(body), None).unwrap() {
                Reply::Pending(p) => {
                    assert_eq!(p.code.as_deref(), Some("OPERATION_DISPATCHED"));
                    assert_eq!(p.request_id.as_deref(), Some("r"));
                    assert_eq!(p.async_href, None);
                }
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn a_202_naming_an_async_link_is_polled_there() {
        let body = json!({"FlinksCode": "OPERATION_PENDING", "Links": [{"rel": "GetAccountsDetailAsync",
            "href": "/GetAccountsDetailAsync", "example": "/GetAccountsDetailAsync/r"}]});
        match classify(202, bytes(body), None).unwrap() {
            Reply::Pending(p) => assert_eq!(p.async_href.as_deref(), Some("/GetAccountsDetailAsync")),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn errors_keep_code_message_request_id_and_body() {
        let body =
            json!({"HttpStatusCode": 400, "Message": "gone", "FlinksCode": "SESSION_NONEXISTENT", "RequestId": "r"});
        match classify(400, bytes(body.clone()), Some(Duration::from_secs(3))) {
            Err(Attempt::Api(api)) => {
                assert_eq!(api.code.as_deref(), Some("SESSION_NONEXISTENT"));
                assert_eq!(api.message.as_deref(), Some("gone"));
                assert_eq!(api.request_id.as_deref(), Some("r"));
                assert_eq!(api.retry_after, Some(Duration::from_secs(3)));
                assert_eq!(api.body, Body::Json(body.clone()));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_plain_text_error_body_is_kept_as_text() {
        match classify(500, b"Internal Server Error".to_vec(), None) {
            Err(Attempt::Api(api)) => {
                assert_eq!(api.body, Body::Text("Internal Server Error".into()));
                assert_eq!(api.code, None);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_unexpected_answer_keeps_its_status_request_id_and_body() {
        let pending = classify(202, br#"{"FlinksCode": "OPERATION_PENDING", "RequestId": "r-2"}"#.to_vec(), None);
        match pending.unwrap().unexpected("DeleteCard", "not polled") {
            Error::Protocol { operation, status, message, request_id, snippet } => {
                assert_eq!((operation.as_str(), status, message.as_str()), ("DeleteCard", 202, "not polled"));
                assert_eq!(request_id.as_deref(), Some("r-2"));
                assert!(snippet.contains("OPERATION_PENDING"), "{snippet}");
            }
            other => panic!("{other:?}"),
        }
        let challenge = classify(203, br#"{"RequestId": "r-3", "SecurityChallenges": []}"#.to_vec(), None);
        match challenge.unwrap().unexpected("Investments", "no challenge expected") {
            Error::Protocol { status, request_id, snippet, .. } => {
                assert_eq!((status, request_id.as_deref()), (203, Some("r-3")));
                assert!(snippet.contains("SecurityChallenges"), "{snippet}");
            }
            other => panic!("{other:?}"),
        }
        match classify(204, Vec::new(), None).unwrap().unexpected("GenerateAuthorizeToken", "no Token") {
            Error::Protocol { status, request_id, snippet, .. } => {
                assert_eq!((status, request_id, snippet.as_str()), (204, None, ""));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_2xx_keeps_its_status() {
        assert!(matches!(classify(201, b"{}".to_vec(), None), Ok(Reply::Data { status: 201, .. })));
    }

    #[test]
    fn a_202_that_is_not_json_is_a_decode_error_with_a_snippet() {
        match classify(202, b"<html>busy".to_vec(), None) {
            Err(Attempt::Decode { snippet, status, .. }) => {
                assert_eq!(status, 202);
                assert_eq!(snippet, "<html>busy");
            }
            other => panic!("{other:?}"),
        }
    }
}

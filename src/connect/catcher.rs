//! The loopback catcher (docs/connect.md#from-a-script): a one-shot HTTP server on 127.0.0.1, at
//! a random port and an unguessable path, that the widget redirects to (or that a page forwards
//! the widget's `REDIRECT` event to) with the LoginId.
//!
//! Only its own path answers: anything else is a 404, as is a request at its path that reports
//! no connection (a prefetch, another event), and none of those ends the wait. A redirect whose
//! LoginId is not a GUID ends it with that error: the path is known only to the widget's URL,
//! so that request came from the widget.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use axum::Router;
use tokio::sync::oneshot;

use super::connection::Connection;
use crate::error::Error;
use crate::sync::lock;

/// How long the answer to the browser has to be written once the connection is caught.
const FLUSH: Duration = Duration::from_secs(2);

/// The largest event body read: a `REDIRECT` event is a few hundred bytes.
const EVENT_LIMIT: usize = 64 * 1024;

const CLOSE_PAGE: &str = "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Bank connected</title>\
<style>body{font-family:system-ui,sans-serif;margin:4rem auto;padding:0 1rem;max-width:32rem;color:#1b1f24}h1{font-size:1.4rem}</style>\
</head><body><h1 id=\"connected\">Bank connected</h1><p>You can close this tab and go back to your program.</p></body></html>";

const ERROR_PAGE: &str = "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Not connected</title>\
</head><body><h1 id=\"not-connected\">The bank was not connected</h1><p>The widget's answer could not be read; \
your program says why. You can close this tab.</p></body></html>";

type Outcome = Result<Connection, Error>;

/// Where the first report of a connection goes; taken once.
struct Slot(Mutex<Option<oneshot::Sender<Outcome>>>);

impl Slot {
    fn deliver(&self, outcome: Outcome) {
        if let Some(sender) = lock(&self.0).take() {
            // The waiter may have gone (timed out) in between: nothing to tell then.
            let _ = sender.send(outcome);
        }
    }
}

/// A catcher serving on the runtime it was started in, from before its URL is given to anyone
/// (a browser command may wait for the page to load before it returns). Dropping it stops the
/// server and closes the socket at once.
pub struct Catcher {
    url: String,
    caught: oneshot::Receiver<Outcome>,
    stop: Option<oneshot::Sender<()>>,
    served: Option<tokio::task::JoinHandle<()>>,
}

impl Catcher {
    /// Binds 127.0.0.1 on a port the system picks, under a path of 244 random bits, and serves it
    /// on `runtime`.
    pub fn start(runtime: &tokio::runtime::Handle) -> Result<Catcher, Error> {
        let failed = |error: std::io::Error| Error::config("catcher", format!("cannot listen on 127.0.0.1: {error}"));
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).map_err(failed)?;
        listener.set_nonblocking(true).map_err(failed)?;
        let port = listener.local_addr().map_err(failed)?.port();
        let path = format!("/bankfeed-{}{}", uuid::Uuid::new_v4().simple(), uuid::Uuid::new_v4().simple());
        let listener = {
            let _entered = runtime.enter();
            tokio::net::TcpListener::from_std(listener).map_err(failed)?
        };
        let (sender, caught) = oneshot::channel();
        let slot = Arc::new(Slot(Mutex::new(Some(sender))));
        let router = Router::new().route(&path, any(catch)).fallback(not_found).with_state(Arc::clone(&slot));
        let (stop, stopped) = oneshot::channel::<()>();
        let served = runtime.spawn(async move {
            let served = axum::serve(listener, router).with_graceful_shutdown(async move {
                let _ = stopped.await;
            });
            if let Err(error) = served.await {
                slot.deliver(Err(Error::Internal { message: format!("the connection catcher stopped: {error}") }));
            }
        });
        Ok(Catcher { url: format!("http://127.0.0.1:{port}{path}"), caught, stop: Some(stop), served: Some(served) })
    }

    /// The URL to give the widget as its redirect.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Waits until the widget reports a connection, or `timeout` runs out; then stops serving,
    /// once the browser's answer ("you can close this tab") is written.
    pub async fn wait(mut self, timeout: Duration) -> Outcome {
        let outcome = match tokio::time::timeout(timeout, &mut self.caught).await {
            Ok(Ok(outcome)) => outcome,
            Ok(Err(_)) => Err(stopped_early()),
            Err(_) => Err(Error::ConnectTimeout { waited: timeout }),
        };
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(served) = self.served.as_mut() {
            let _ = tokio::time::timeout(FLUSH, served).await;
        }
        outcome
    }
}

impl Drop for Catcher {
    fn drop(&mut self) {
        if let Some(served) = self.served.take() {
            served.abort();
        }
    }
}

fn stopped_early() -> Error {
    Error::Internal { message: "the connection catcher stopped before a connection came".to_owned() }
}

async fn not_found() -> Response {
    (StatusCode::NOT_FOUND, "not found").into_response()
}

/// A redirect (GET with the widget's query) or a forwarded event (POST of its JSON).
async fn catch(State(slot): State<Arc<Slot>>, method: Method, RawQuery(query): RawQuery, body: Bytes) -> Response {
    let outcome = match method {
        Method::GET => match query {
            Some(query) if query.contains("loginId=") || query.contains("loginid=") => {
                Connection::from_redirect(&query)
            }
            _ => return not_found().await,
        },
        // A page of another origin forwards the event: the browser asks first.
        Method::OPTIONS => return cors(StatusCode::NO_CONTENT.into_response()),
        Method::POST if body.len() <= EVENT_LIMIT => {
            let Ok(event) = serde_json::from_slice::<serde_json::Value>(&body) else {
                return cors(not_found().await);
            };
            let is_redirect = crate::data::fields::field(&event, "step")
                .and_then(serde_json::Value::as_str)
                .is_some_and(|step| step.eq_ignore_ascii_case("REDIRECT"));
            if !is_redirect {
                // Every other event is forwarded too; it reports no connection.
                return cors(StatusCode::NO_CONTENT.into_response());
            }
            match Connection::from_event(&event) {
                Ok(connection) => {
                    slot.deliver(Ok(connection));
                    return cors(StatusCode::NO_CONTENT.into_response());
                }
                Err(error) => {
                    slot.deliver(Err(error));
                    return cors(StatusCode::BAD_REQUEST.into_response());
                }
            }
        }
        _ => return not_found().await,
    };
    let page = if outcome.is_ok() { (StatusCode::OK, CLOSE_PAGE) } else { (StatusCode::BAD_REQUEST, ERROR_PAGE) };
    slot.deliver(outcome);
    let mut response = page.into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

fn cors(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
    headers.insert(header::ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static("POST"));
    headers.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, HeaderValue::from_static("content-type"));
    response
}

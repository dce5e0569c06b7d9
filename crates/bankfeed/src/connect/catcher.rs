//! The loopback catcher (docs/connect.md#from-a-script): a one-shot HTTP server on 127.0.0.1, at
//! a random port, that the widget redirects to (or that a page forwards the widget's `REDIRECT`
//! event to) with the LoginId.
//!
//! It answers two paths of its own, each with 244 random bits:
//!
//! - the **return path**, the widget's redirect: the one-time secret that only the widget it
//!   opened knows. It travels inside the widget's URL, which goes to the browser through the
//!   launch page, never on a command line (where every local user can read it);
//! - the **launch path**, what the browser is opened at: it answers once with a redirect to the
//!   widget's URL, then "already opened" (410).
//!
//! Anything else is a refusal that ends nothing: another path is a 404, as is a request at the
//! return path that reports no connection (a prefetch, another event); a method the catcher
//! does not serve is a 405; a connection of another local user a 403 (crates/bankfeed/src/connect/serve.rs). No
//! answer carries a CORS header: no web page can read one. A redirect whose LoginId is not a GUID
//! ends the wait with that error: only the widget knows the return path.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, RawQuery, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use axum::Router;
use tokio::sync::oneshot;

use super::connection::Connection;
use super::serve::{serve, Limits};
use super::url::ConnectUrl;
use crate::error::Error;
use crate::secret::Secret;
use crate::sync::lock;

/// How long the answer to the browser has to be written once the connection is caught.
const FLUSH: Duration = Duration::from_secs(2);

/// How long `close` waits for the server to be gone: it is dropped at once, on another thread.
const CLOSE_WAIT: Duration = Duration::from_secs(1);

/// The largest event body read: a `REDIRECT` event is a few hundred bytes.
const EVENT_LIMIT: usize = 64 * 1024;

const CLOSE_PAGE: &str = "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Bank connected</title>\
<style>body{font-family:system-ui,sans-serif;margin:4rem auto;padding:0 1rem;max-width:32rem;color:#1b1f24}h1{font-size:1.4rem}</style>\
</head><body><h1 id=\"connected\">Bank connected</h1><p>You can close this tab and go back to your program.</p></body></html>";

const ERROR_PAGE: &str = "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Not connected</title>\
</head><body><h1 id=\"not-connected\">The bank was not connected</h1><p>The widget's answer could not be read; \
your program says why. You can close this tab.</p></body></html>";

const OPENED_PAGE: &str = "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Link used</title>\
</head><body><h1 id=\"already-opened\">This link was opened already</h1><p>It opens the bank's widget once. \
Go on in the tab where it opened, or start again from your program. If you did not open it, another program \
on this computer did: start again.</p></body></html>";

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

/// What the launch path answers.
enum Launch {
    /// No widget URL yet: a 404, as any path the catcher does not serve.
    Unset,
    /// The widget's URL, given to the first GET.
    Ready(Secret),
    /// Given already: every later GET is told so.
    Opened,
}

struct Shared {
    slot: Slot,
    launch: Mutex<Launch>,
}

/// A catcher serving on the runtime it was started in, from before its URL is given to anyone
/// (a browser command may wait for the page to load before it returns). Dropping it stops the
/// server and closes the socket at once.
pub struct Catcher {
    url: String,
    launch_url: String,
    shared: Arc<Shared>,
    caught: oneshot::Receiver<Outcome>,
    stop: Option<oneshot::Sender<()>>,
    served: Option<tokio::task::JoinHandle<()>>,
}

/// A path of 244 random bits (two v4 UUIDs).
fn random_path() -> String {
    format!("/bankfeed-{}{}", uuid::Uuid::new_v4().simple(), uuid::Uuid::new_v4().simple())
}

impl Catcher {
    /// Binds 127.0.0.1 on a port the system picks and serves it on `runtime`, within the
    /// default [`Limits`].
    pub fn start(runtime: &tokio::runtime::Handle) -> Result<Catcher, Error> {
        Catcher::start_with(runtime, Limits::default())
    }

    /// [`Catcher::start`] within `limits`.
    pub fn start_with(runtime: &tokio::runtime::Handle, limits: Limits) -> Result<Catcher, Error> {
        let failed = |error: std::io::Error| Error::config("catcher", format!("cannot listen on 127.0.0.1: {error}"));
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).map_err(failed)?;
        listener.set_nonblocking(true).map_err(failed)?;
        let port = listener.local_addr().map_err(failed)?.port();
        let (path, launch_path) = (random_path(), random_path());
        let listener = {
            let _entered = runtime.enter();
            tokio::net::TcpListener::from_std(listener).map_err(failed)?
        };
        let (sender, caught) = oneshot::channel();
        let shared = Arc::new(Shared { slot: Slot(Mutex::new(Some(sender))), launch: Mutex::new(Launch::Unset) });
        let router = Router::new()
            .route(&path, any(catch))
            .route(&launch_path, any(launch))
            .fallback(|| async { not_found() })
            .layer(DefaultBodyLimit::max(EVENT_LIMIT))
            .with_state(Arc::clone(&shared));
        let (stop, stopped) = oneshot::channel::<()>();
        let served = runtime.spawn(serve(
            listener,
            router,
            limits,
            async move {
                let _ = stopped.await;
            },
            FLUSH,
        ));
        Ok(Catcher {
            url: format!("http://127.0.0.1:{port}{path}"),
            launch_url: format!("http://127.0.0.1:{port}{launch_path}"),
            shared,
            caught,
            stop: Some(stop),
            served: Some(served),
        })
    }

    /// The URL to give the widget as its redirect: it holds the return path, the catcher's
    /// secret. It goes only into the widget's URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The URL to open the browser at: it sends the first GET to `widget` (the widget's URL,
    /// made with [`Catcher::url`] as its redirect), once. It holds no secret of the widget's.
    pub fn launch(&self, widget: &ConnectUrl) -> &str {
        *lock(&self.shared.launch) = Launch::Ready(Secret::new(widget.reveal()));
        &self.launch_url
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
            // The server lets the answer in flight finish within FLUSH, then ends.
            let _ = tokio::time::timeout(FLUSH + FLUSH, served).await;
        }
        outcome
    }

    /// Stops serving at once, and returns when the socket is closed (or after a second).
    pub async fn close(mut self) {
        if let Some(served) = self.served.take() {
            served.abort();
            let _ = tokio::time::timeout(CLOSE_WAIT, served).await;
        }
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

fn not_found() -> Response {
    (StatusCode::NOT_FOUND, "not found").into_response()
}

fn not_allowed() -> Response {
    (StatusCode::METHOD_NOT_ALLOWED, "not allowed").into_response()
}

fn page(status: StatusCode, html: &'static str) -> Response {
    let mut response = (status, html).into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// The launch path: the first GET is sent on to the widget's URL; HEAD, a prefetch of another
/// method, takes nothing.
async fn launch(State(shared): State<Arc<Shared>>, method: Method) -> Response {
    if method != Method::GET {
        return not_allowed();
    }
    let widget = {
        let mut launch = lock(&shared.launch);
        match std::mem::replace(&mut *launch, Launch::Opened) {
            Launch::Ready(widget) => widget,
            Launch::Opened => return page(StatusCode::GONE, OPENED_PAGE),
            Launch::Unset => {
                *launch = Launch::Unset;
                return not_found();
            }
        }
    };
    let Ok(location) = HeaderValue::from_str(widget.expose()) else {
        return (StatusCode::INTERNAL_SERVER_ERROR, "the widget's URL cannot be sent").into_response();
    };
    let mut response = StatusCode::SEE_OTHER.into_response();
    let headers = response.headers_mut();
    headers.insert(header::LOCATION, location);
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    response
}

/// The return path: a redirect (GET with the widget's query) or a forwarded event (POST of its
/// JSON, sent as a simple request: the catcher answers no preflight).
async fn catch(State(shared): State<Arc<Shared>>, method: Method, RawQuery(query): RawQuery, body: Bytes) -> Response {
    let slot = &shared.slot;
    match method {
        Method::GET => match query {
            Some(query) if query.contains("loginId=") || query.contains("loginid=") => {
                let outcome = Connection::from_redirect(&query);
                let answer = if outcome.is_ok() {
                    page(StatusCode::OK, CLOSE_PAGE)
                } else {
                    page(StatusCode::BAD_REQUEST, ERROR_PAGE)
                };
                slot.deliver(outcome);
                answer
            }
            _ => not_found(),
        },
        Method::POST => {
            let Ok(event) = serde_json::from_slice::<serde_json::Value>(&body) else {
                return not_found();
            };
            let is_redirect = crate::data::fields::field(&event, "step")
                .and_then(serde_json::Value::as_str)
                .is_some_and(|step| step.eq_ignore_ascii_case("REDIRECT"));
            if !is_redirect {
                // Every other event is forwarded too; it reports no connection.
                return StatusCode::NO_CONTENT.into_response();
            }
            match Connection::from_event(&event) {
                Ok(connection) => {
                    slot.deliver(Ok(connection));
                    StatusCode::NO_CONTENT.into_response()
                }
                Err(error) => {
                    slot.deliver(Err(error));
                    StatusCode::BAD_REQUEST.into_response()
                }
            }
        }
        _ => not_allowed(),
    }
}

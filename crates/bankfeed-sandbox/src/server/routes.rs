//! The router: the operations at their paths in protocol.rs, the customer-id check, the 404/405
//! answers, the request log, and what keeps every answer on a connection that stays usable.
//! Every refusal is the service's JSON error where it is made: the handlers' extractors
//! (`body.rs`), the fallbacks and the customer check here.

use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::SystemTime;

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::handler::Handler;
use axum::http::header::CONNECTION;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, on, MethodFilter, MethodRouter};
use axum::Router;
use hyper::body::{Frame, SizeHint};

use crate::config::RecordedRequest;
use crate::operations::operation::{self, DataOperation};
use crate::operations::{
    accounts, attributes, authorize, delete as delete_card, institutions, investments, linking, not_enabled, statements,
};
use crate::replay;
use crate::server::admin;
use crate::server::inject::{self, Dropped, Faulted};
use crate::server::path_case::spelled_as;
use crate::server::recorded::{self, Note};
use crate::server::reply::{self, ErrorReply, BODY_LIMIT, REQUEST_TIMEOUT};
use crate::server::upload::ReadTimedOut;
use crate::widget;
use crate::world::keys;
use crate::world::state::Shared;
use bankfeed::protocol::{self, HttpMethod, WireOp};

/// How much of a request body the sandbox reads after its answer is ready, past what the
/// handler read, so that the connection can carry the client's next request ([`whole_body`]).
const DRAIN_LIMIT: usize = BODY_LIMIT;

pub(crate) fn router(shared: Arc<Shared>) -> Router {
    if let Some(cassette) = shared.config.cassette.clone() {
        // A replay: every request, any path, is the cassette's to answer (crates/bankfeed-sandbox/src/replay/).
        let replaying = Router::new().fallback(replay::answer::answer).with_state(cassette);
        return served(shared, replaying);
    }
    // Every operation is served at its paths in protocol.rs, all under /v3/{customer_id}/; new
    // ones are added here and get the fault layer and the customer check for free.
    let operations = Routes { router: Router::new(), shared: Arc::clone(&shared) }
        .add(&protocol::GENERATE_AUTHORIZE_TOKEN, keys::generate_token)
        .add(&protocol::AUTHORIZE, authorize::authorize)
        .add(&protocol::DELETE_CARD, delete_card::delete_card)
        .add(&protocol::ATTRIBUTES, attributes::custom)
        .add(&protocol::ATTRIBUTES_USE_CASE, attributes::use_case)
        .add(&protocol::SET_SCHEDULED_REFRESH, linking::set_scheduled_refresh)
        .add(&protocol::GET_MFA_QUESTIONS, linking::get_mfa_questions)
        .add(&protocol::ANSWER_MFA_QUESTIONS, linking::answer_mfa_questions)
        .add(&protocol::GET_NIGHTLY_REFRESH_STATUS, linking::nightly_refresh_status)
        .add(&protocol::INSTITUTIONS, institutions::institutions)
        .data::<accounts::Detail>()
        .data::<accounts::Summary>()
        .data::<statements::Statements>()
        .data::<investments::Investments>()
        .not_enabled(&protocol::AUTHORIZE_MULTIPLE)
        .not_enabled(&protocol::GET_CATEGORIZATION)
        .router
        // Outside each route's fault layer: a request for another customer is no operation's.
        .route_layer(middleware::from_fn_with_state(Arc::clone(&shared), check_customer))
        // After the customer check, which is the operations' alone; inside the request log.
        .merge(widget::router());
    let routed =
        operations.fallback(not_found).method_not_allowed_fallback(method_not_allowed).with_state(Arc::clone(&shared));
    let served = served(Arc::clone(&shared), routed);
    // Merged after the layers, so no fault, no request log and no customer check touches it.
    if shared.config.admin_token.is_some() {
        served.merge(admin::router(shared))
    } else {
        served
    }
}

/// `routed` behind what every answer of the sandbox goes through, an imitation's or a replay's:
/// the body limit, the whole body read, the request log, and the paths in their canonical case.
fn served(shared: Arc<Shared>, routed: Router) -> Router {
    let routed = routed
        // What `BodyBytes` reads at most; axum's default is the same, but the limit is ours to say.
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        // Outside the faults (each route's own layer), which can refuse a body they read only in
        // part.
        .layer(middleware::from_fn(whole_body))
        // Outermost, so it sees every request, the unmatched ones included.
        .layer(middleware::from_fn_with_state(shared, record));
    // A layer of a router runs once it has routed; so the paths are put in their canonical case
    // by an outer router, whose only route is the inner one.
    Router::new().fallback_service(routed).layer(middleware::map_request(canonical_case))
}

/// Every path template of the operations, `...Async` ones included.
fn templates() -> impl Iterator<Item = &'static str> {
    protocol::ALL.into_iter().flat_map(|op| std::iter::once(op.path).chain(op.async_path))
}

/// The request with its path's fixed words spelled as the operations' templates spell them, when
/// the path matches one without regard to case (`/V3/{id}/bankingservices/authorize`): the
/// service's routing ignores case (docs/protocol.md#request-shapes-real-clients-send). Parameters
/// (ids) are kept as sent; the customer check compares the customer id without regard to case.
async fn canonical_case(mut request: Request) -> Request {
    let path = request.uri().path();
    let Some(canonical) = templates().find_map(|template| spelled_as(template, path)) else {
        return request;
    };
    if canonical == path {
        return request;
    }
    let uri = match request.uri().query() {
        Some(query) => format!("{canonical}?{query}"),
        None => canonical,
    };
    if let Ok(uri) = uri.parse() {
        *request.uri_mut() = uri;
    }
    request
}

/// The router's table, built one wire operation at a time. Each route has a fault layer of its
/// own (`inject.rs`), which knows the wire operation it serves: that is what a fault names, so
/// the router's table is also the faults' (docs/sandbox.md#faults).
struct Routes {
    router: Router<Arc<Shared>>,
    shared: Arc<Shared>,
}

impl Routes {
    /// `handler` at `op`'s path, for `op`'s method.
    fn add<H, T>(self, op: &'static WireOp, handler: H) -> Routes
    where
        H: Handler<T, Arc<Shared>>,
        T: 'static,
    {
        self.at(op, op.path, on(method_filter(op.method), handler))
    }

    /// A [`DataOperation`]: its POST, and the `...Async` GET that continues it when it has one.
    fn data<O: DataOperation>(self) -> Routes {
        let routes = self.add(O::WIRE, operation::start::<O>);
        match O::WIRE.async_path {
            // The GET counts as the operation, for faults as for the pending phase.
            Some(path) => routes.at(O::WIRE, path, get(operation::resume::<O>)),
            None => routes,
        }
    }

    /// `op`, answered with the service's refusal of an operation the customer does not have
    /// (docs/protocol.md#operations-beyond-the-interface).
    fn not_enabled(self, op: &'static WireOp) -> Routes {
        self.add(op, move |State(shared): State<Arc<Shared>>, headers: HeaderMap| async move {
            not_enabled::refuse(&shared, &headers, op)
        })
    }

    /// `route` at `path`, behind a fault layer for `op`.
    fn at(self, op: &'static WireOp, path: &'static str, route: MethodRouter<Arc<Shared>>) -> Routes {
        let faulted = Faulted { shared: Arc::clone(&self.shared), op };
        // Innermost first: the log reads the handler's own answer, the faults act on it, and the
        // log describes the request before any fault (recorded.rs).
        let route = route
            .route_layer(middleware::from_fn_with_state(faulted.clone(), recorded::learn_answer))
            .route_layer(middleware::from_fn_with_state(faulted.clone(), inject::inject))
            .route_layer(middleware::from_fn_with_state(faulted, recorded::describe));
        Routes { router: self.router.route(path, route), shared: self.shared }
    }
}

fn method_filter(method: HttpMethod) -> MethodFilter {
    match method {
        HttpMethod::Get => MethodFilter::GET,
        HttpMethod::Post => MethodFilter::POST,
        HttpMethod::Delete => MethodFilter::DELETE,
        HttpMethod::Patch => MethodFilter::PATCH,
    }
}

/// Counts and logs every request: its line and status here, and what it concerns from the
/// [`Note`] the route layers fill in (`recorded.rs`), its body only with every secret masked.
/// A request whose answer was never sent (its connection dropped by a fault, or closed by the
/// client first) is logged with status 0.
async fn record(State(shared): State<Arc<Shared>>, mut request: Request, next: Next) -> Response {
    shared.count_request();
    let logged = RecordedRequest {
        method: request.method().to_string(),
        path: request.uri().path().to_owned(),
        status: 0,
        operation: None,
        authorize: None,
        username: None,
        login_id: None,
        request_id: None,
        body: None,
        body_size: None,
        body_prefix: None,
        time: SystemTime::now(),
    };
    let note = Note::default();
    request.extensions_mut().insert(note.clone());
    let mut entry = Unanswered(Some((Arc::clone(&shared), logged, note)));
    let response = next.run(request).await;
    if let Some((shared, mut logged, note)) = entry.0.take() {
        logged.status = inject::logged_status(&response);
        let body = note.fill(&mut logged);
        shared.record(logged, body);
    }
    response
}

/// Logs its request with status 0 if the handler's future is dropped before it answers.
struct Unanswered(Option<(Arc<Shared>, RecordedRequest, Note)>);

impl Drop for Unanswered {
    fn drop(&mut self) {
        if let Some((shared, mut logged, note)) = self.0.take() {
            let body = note.fill(&mut logged);
            shared.record(logged, body);
        }
    }
}

async fn check_customer(State(shared): State<Arc<Shared>>, request: Request, next: Next) -> Response {
    let customer_id =
        request.uri().path().strip_prefix("/v3/").and_then(|rest| rest.split('/').next()).unwrap_or_default();
    // Without regard to case, as the service routes.
    if !customer_id.eq_ignore_ascii_case(&shared.config.customer_id) {
        return ErrorReply::new(
            StatusCode::NOT_FOUND,
            "INVALID_REQUEST",
            format!("unknown customer id {customer_id:?}"),
        )
        .into_response();
    }
    next.run(request).await
}

// The fallbacks answer without reading the body: [`whole_body`] reads what they leave. No
// operation of the service is at the path, so its framework answers, not the service: a
// `Message` alone and no `FlinksCode` (docs/protocol.md#errors).
async fn not_found(request: Request) -> Response {
    reply::no_resource(request.uri().path())
}

async fn method_not_allowed(method: Method) -> Response {
    let message = format!("The requested resource does not support http method '{method}'.");
    reply::json(StatusCode::METHOD_NOT_ALLOWED, &reply::FrameworkError { message })
}

/// Makes sure the client can send its next request on the connection after any answer, and
/// answers a request that did not arrive in time with a 408.
///
/// hyper does not read the rest of a body its handler left unread (the 404 of an unknown route,
/// a refusal before the body, the 413 past the limit): it closes the connection once the answer
/// is written, and without `Connection: close` the client sends its next request into a socket
/// being closed and gets a broken pipe or an incomplete message. Both remedies are used:
/// - the rest of the body, up to [`DRAIN_LIMIT`], is read and dropped before the answer, so the
///   connection stays open and the client's next request is served on it (closing it with
///   unread bytes could also reset it before the client read its answer);
/// - a body that is larger, broken, or stopped arriving (the bounds of `upload::Upload` limit the
///   wait) is not read further: the answer says `Connection: close`, so the client opens a new
///   connection for its next request.
///
/// A body that was not read whole in time ([`ReadTimedOut`]) before the answer was made gets a
/// 408 `REQUEST_TIMEOUT` instead of that answer, whichever layer was reading it: the body
/// extractor makes the failure a 400, and the fault layer a 413, neither of which says what
/// happened (only this layer sees the body's own error). The
/// request never reached its handler whole, so nothing was done (docs/sandbox.md#limits). A body
/// left unread by its handler and timed out while drained keeps the handler's answer, since the
/// handler has acted.
///
/// Done here, around every route, rather than in each handler, so no answer can miss it.
async fn whole_body(request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let seen = Arc::new(Seen::default());
    let body = Body::new(Watched { body, seen: Arc::clone(&seen) });
    let mut response = next.run(Request::from_parts(parts, body)).await;
    if let Some(timed_out) = seen.timed_out.lock().ok().and_then(|timed_out| *timed_out) {
        let mut reply =
            ErrorReply::new(StatusCode::REQUEST_TIMEOUT, REQUEST_TIMEOUT, timed_out.to_string()).into_response();
        reply.headers_mut().insert(CONNECTION, HeaderValue::from_static("close"));
        return reply;
    }
    if seen.ended.load(Ordering::SeqCst) || response.extensions().get::<Dropped>().is_some() {
        return response;
    }
    let left = seen.left.lock().ok().and_then(|mut left| left.take());
    let drained = match left {
        Some(body) if !seen.failed.load(Ordering::SeqCst) => drain(body).await,
        _ => false,
    };
    if !drained {
        response.headers_mut().insert(CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// Reads `body` to its end, for at most [`DRAIN_LIMIT`] bytes; true if it ended in time.
async fn drain(mut body: Body) -> bool {
    if body.size_hint().lower() > DRAIN_LIMIT as u64 {
        return false;
    }
    let mut read = 0usize;
    loop {
        match std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {
            None => return true,
            Some(Ok(frame)) => {
                read = read.saturating_add(frame.data_ref().map_or(0, Bytes::len));
                if read > DRAIN_LIMIT {
                    return false;
                }
            }
            Some(Err(_)) => return false,
        }
    }
}

/// What [`Watched`] learnt of its body, for [`whole_body`].
#[derive(Default)]
struct Seen {
    /// The body was read to its end.
    ended: AtomicBool,
    /// Reading the body failed; the rest of it is not worth waiting for.
    failed: AtomicBool,
    /// Why, when it failed for lack of time.
    timed_out: Mutex<Option<ReadTimedOut>>,
    /// The unread rest of the body, handed back when the handler dropped it.
    left: Mutex<Option<Body>>,
}

/// A request body that tells [`whole_body`] whether it was read to its end.
struct Watched {
    body: Body,
    seen: Arc<Seen>,
}

impl HttpBody for Watched {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = self.get_mut();
        let frame = Pin::new(&mut this.body).poll_frame(cx);
        match &frame {
            Poll::Ready(None) => this.seen.ended.store(true, Ordering::SeqCst),
            Poll::Ready(Some(Err(error))) => {
                this.seen.failed.store(true, Ordering::SeqCst);
                if let (Some(why), Ok(mut timed_out)) = (ReadTimedOut::find(error), this.seen.timed_out.lock()) {
                    *timed_out = Some(why);
                }
            }
            _ => {}
        }
        frame
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        if self.body.is_end_stream() {
            self.seen.ended.store(true, Ordering::SeqCst);
            return;
        }
        if let Ok(mut left) = self.seen.left.lock() {
            *left = Some(std::mem::take(&mut self.body));
        }
    }
}

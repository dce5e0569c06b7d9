//! What every data operation shares: the session its request names, the wait for account
//! detail where it applies, and the pending phase (docs/protocol.md#polling). For operations
//! answering a POST (the banking ones and Investments), the POST handler and the
//! `...Async/{requestId}` GET that continues it are generic over a [`DataOperation`], which the
//! router serves at its wire operation's paths: adding one is a type and a line in the router
//! (docs/architecture.md#adding-an-operation-to-the-sandbox).
//!
//! The answer itself is built after the session lock is released, so serialising a large data
//! set does not stall every other session.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;

use crate::server::body::{Body, BodyBytes, Segments};
use crate::server::reply::{self, ErrorReply, LoginBody, OPERATION_PENDING};
use crate::world::keys;
use crate::world::state::{Session, Shared};
use bankfeed::protocol::WireOp;

/// How a data operation takes part in the pending machinery.
pub(crate) struct Operation {
    /// What its requests are on the wire: the `...Async` link its 202s name (None for operations
    /// the caller repeats as they are), whether they name a LoginId (which must be the login of
    /// the RequestId), and whether it answers 202, not counted as a poll, until account detail
    /// has answered 200 for the RequestId (docs/protocol.md#attributes).
    pub wire: &'static WireOp,
    /// The key of its pending phase in the session, and how errors name it: the wire
    /// operation's name, or, for a use-case attributes GET, the operation its path names.
    pub name: &'static str,
}

/// Who the data is for, once the operation is done processing.
pub(crate) struct Ready {
    pub request_id: String,
    pub login_id: String,
    pub username: std::borrow::Cow<'static, str>,
    /// The `LastRefresh` of its connection when the session opened.
    pub last_refresh: String,
    /// The session's `Tag`, which the summary echoes.
    pub tag: Option<serde_json::Value>,
    pub scheduled_refresh: bool,
}

impl Ready {
    fn of(session: &Session, request_id: &str) -> Ready {
        Ready {
            request_id: request_id.to_owned(),
            login_id: session.login_id.clone().unwrap_or_default(),
            username: session.user.username(),
            last_refresh: reply::last_refresh(session.last_refresh),
            tag: session.tag.clone(),
            scheduled_refresh: session.scheduled_refresh,
        }
    }

    /// The `Login` of the answer: `kind` is `Personal` in banking answers, null in investment
    /// ones.
    pub(crate) fn login(&self, kind: Option<&'static str>) -> LoginBody<'_> {
        LoginBody {
            username: &self.username,
            is_scheduled_refresh: self.scheduled_refresh,
            last_refresh: &self.last_refresh,
            kind,
            id: &self.login_id,
        }
    }
}

pub(crate) enum Step {
    /// Still processing (or loading, or waiting for account detail): answer this.
    Wait(Response),
    /// Still processing, for a user whose 202s carry the results processed so far: this 202,
    /// with the first part of the answer `ready` would get, `done` polls of `of` in.
    Partial {
        wait: Response,
        ready: Ready,
        done: u32,
        of: u32,
    },
    Go(Ready),
}

/// The answer of a step: the 202 as it is, the 202 with the results so far, or the 200.
async fn respond<O: DataOperation>(shared: &Shared, step: Step, options: O::Options) -> Response {
    match step {
        Step::Wait(response) => response,
        Step::Partial { wait, ready, done, of } => {
            with_partial(wait, O::answer(shared, &ready, options), done, of).await
        }
        Step::Go(ready) => O::answer(shared, &ready, options),
    }
}

/// The lists of an answer that fill up as its processing goes on.
const PARTIAL_LISTS: [&str; 2] = ["Accounts", "StatementsByAccount"];

/// `wait` (a 202) with the first part of each list of `full` (the 200 it will become): as many of
/// its items as `done` polls of `of` have processed, never all of them (the rest is what is still
/// pending). The documentation does not show the shape of these partial results; the 200's own
/// lists are what a client already reads (docs/protocol.md#failures-of-a-session-or-a-login-in-use).
async fn with_partial(wait: Response, full: Response, done: u32, of: u32) -> Response {
    let (parts, body) = wait.into_parts();
    let bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap_or_default();
    let full = axum::body::to_bytes(full.into_body(), usize::MAX).await.unwrap_or_default();
    let parsed =
        (serde_json::from_slice::<serde_json::Value>(&bytes), serde_json::from_slice::<serde_json::Value>(&full));
    // Both are the sandbox's own JSON: a body that is not is sent as it came.
    let (Ok(serde_json::Value::Object(mut body)), Ok(full)) = parsed else {
        return Response::from_parts(parts, axum::body::Body::from(bytes));
    };
    for key in PARTIAL_LISTS {
        if let Some(serde_json::Value::Array(items)) = full.get(key) {
            let processed = (items.len() * done as usize).div_ceil(of as usize + 1).min(items.len().saturating_sub(1));
            body.insert(key.to_owned(), serde_json::Value::Array(items.iter().take(processed).cloned().collect()));
        }
    }
    reply::json(parts.status, &serde_json::Value::Object(body))
}

impl Operation {
    /// The pending machinery of `wire`, under its own name.
    pub(crate) const fn of(wire: &'static WireOp) -> Operation {
        Operation { wire, name: wire.name }
    }

    /// A request for this operation on `request_id` (and `login_id`, for operations naming one):
    /// the session checks every data operation shares, then the pending phase. `remember` keeps
    /// the body for the `...Async` GET; `on_ready` marks the session when the answer is a 200.
    pub(crate) fn enter(
        &self,
        shared: &Shared,
        request_id: &str,
        login_id: Option<&str>,
        remember: Option<Bytes>,
        on_ready: impl FnOnce(&mut Session),
    ) -> Result<Step, ErrorReply> {
        let ttl = shared.config.session_ttl;
        let mut inner = shared.lock();
        let session = match login_id {
            Some(login_id) => inner.data_session(request_id, login_id, ttl)?,
            None => inner.open_session(request_id, ttl)?,
        };
        if let Some(bytes) = remember {
            session.remember(self.name, bytes);
        }
        Ok(self.advance(shared, session, request_id, on_ready))
    }

    fn advance(
        &self,
        shared: &Shared,
        session: &mut Session,
        request_id: &str,
        on_ready: impl FnOnce(&mut Session),
    ) -> Step {
        // Not counted as a poll of this operation: its own processing starts after detail.
        if self.wire.after_detail && !session.detail_ready {
            return Step::Wait(reply::pending(OPERATION_PENDING, request_id));
        }
        let waits = shared.config.pending_operations.contains(self.wire.name);
        if let Some(wait) = session.pending(self.name, &shared.config, request_id, self.wire.async_rel(), waits) {
            return match session.progress(self.name, &shared.config) {
                Some((done, of)) if wait.status() == axum::http::StatusCode::ACCEPTED => {
                    Step::Partial { wait, ready: Ready::of(session, request_id), done, of }
                }
                _ => Step::Wait(wait),
            };
        }
        on_ready(session);
        Step::Go(Ready::of(session, request_id))
    }
}

/// A data operation answering a POST (and, when its wire operation has an `...Async` path, the
/// GET that continues it).
pub(crate) trait DataOperation: 'static {
    /// Its wire operation: its name, paths, whether it names a login and waits for account detail.
    const WIRE: &'static WireOp;
    /// What a request asks for, read from its body.
    type Options: Send + 'static;

    /// Checked before the session is touched, so a malformed request does not use up the
    /// pending phase.
    fn options(body: &Body) -> Result<Self::Options, ErrorReply>;

    /// Marks the session when the operation answers 200.
    fn on_ready(_session: &mut Session) {}

    /// The 200.
    fn answer(shared: &Shared, ready: &Ready, options: Self::Options) -> Response;
}

/// The POST of `O`'s wire operation.
pub(crate) async fn start<O: DataOperation>(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    BodyBytes(bytes): BodyBytes,
) -> Result<Response, ErrorReply> {
    let operation = Operation::of(O::WIRE);
    keys::check_api_key(&shared, &headers)?;
    let body = Body::parse(&bytes)?;
    let request_id = body.required("RequestId")?;
    let login_id = if O::WIRE.names_login { Some(body.required("LoginId")?) } else { None };
    let options = O::options(&body)?;
    let remember = O::WIRE.async_path.is_some().then(|| bytes.clone());
    let step = operation.enter(&shared, request_id, login_id, remember, O::on_ready)?;
    Ok(respond::<O>(&shared, step, options).await)
}

/// The `...Async/{requestId}` GET of `O`'s wire operation: the same pending phase as the POST,
/// with the options of the last POST.
pub(crate) async fn resume<O: DataOperation>(
    State(shared): State<Arc<Shared>>,
    Segments((_, request_id)): Segments<(String, String)>,
    headers: HeaderMap,
) -> Result<Response, ErrorReply> {
    let operation = Operation::of(O::WIRE);
    keys::check_api_key(&shared, &headers)?;
    let (step, options) = {
        let mut inner = shared.lock();
        let session = inner.open_session(&request_id, shared.config.session_ttl)?;
        let bytes = session.remembered(operation.name).ok_or_else(|| {
            ErrorReply::invalid_request(format!(
                "No {name} request was made for RequestId {request_id}: POST {name} first",
                name = operation.name
            ))
            .with_request_id(&request_id)
        })?;
        // Checked when it was first sent.
        let options = O::options(&Body::parse(&bytes)?)?;
        (operation.advance(&shared, session, &request_id, O::on_ready), options)
    };
    Ok(respond::<O>(&shared, step, options).await)
}

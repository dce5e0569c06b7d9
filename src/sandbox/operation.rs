//! What the banking data operations share: the POST that names a RequestId and remembers its
//! options, the `...Async/{requestId}` GET that continues it, and the pending phase of both.
//!
//! The answer itself is built after the session lock is released, so serialising a large data
//! set does not stall every other session.

use axum::body::Bytes;
use axum::http::HeaderMap;
use axum::response::Response;

use super::body::Body;
use super::keys;
use super::reply::{ApiError, LoginBody, LAST_REFRESH};
use super::state::{Session, Shared};

/// A banking operation: its name (also its key in the session's pending map) and the `rel` of
/// its polling link.
pub(crate) struct Operation {
    pub name: &'static str,
    pub async_rel: &'static str,
}

/// Who the data is for, once the operation is done processing.
pub(crate) struct Ready {
    pub request_id: String,
    pub login_id: String,
    pub username: &'static str,
}

impl Ready {
    fn of(session: &Session, request_id: &str) -> Ready {
        Ready {
            request_id: request_id.to_owned(),
            login_id: session.login_id.clone().unwrap_or_default(),
            username: session.user.username,
        }
    }

    /// The `Login` of banking answers.
    pub fn login(&self) -> LoginBody<'_> {
        LoginBody {
            username: self.username,
            is_scheduled_refresh: false,
            last_refresh: LAST_REFRESH,
            kind: Some("Personal"),
            id: &self.login_id,
        }
    }
}

pub(crate) enum Step<T> {
    /// Still processing (or loading): answer this.
    Wait(Response),
    Go(Ready, T),
}

impl Operation {
    /// The POST: options are checked before the session is touched, so a malformed request does
    /// not use up the pending phase; `on_ready` marks the session when the answer is a 200.
    pub fn start<T>(
        &self,
        shared: &Shared,
        headers: &HeaderMap,
        bytes: Bytes,
        parse: impl Fn(&Body) -> Result<T, ApiError>,
        on_ready: impl FnOnce(&mut Session),
    ) -> Result<Step<T>, ApiError> {
        keys::check_api_key(shared, headers)?;
        let body = Body::parse(&bytes)?;
        let request_id = body.required("RequestId")?.to_owned();
        let options = parse(&body)?;
        let mut inner = shared.lock();
        let session = inner.open_session(&request_id, shared.config.session_ttl)?;
        session.remember(self.name, bytes);
        Ok(self.advance(shared, session, &request_id, options, on_ready))
    }

    /// The `...Async/{requestId}` GET: the same pending phase, with the options of the last POST.
    pub fn resume<T>(
        &self,
        shared: &Shared,
        headers: &HeaderMap,
        request_id: &str,
        parse: impl Fn(&Body) -> Result<T, ApiError>,
        on_ready: impl FnOnce(&mut Session),
    ) -> Result<Step<T>, ApiError> {
        keys::check_api_key(shared, headers)?;
        let mut inner = shared.lock();
        let session = inner.open_session(request_id, shared.config.session_ttl)?;
        let bytes = session.remembered(self.name).ok_or_else(|| {
            ApiError::invalid_request(format!(
                "No {} request was made for RequestId {request_id}: POST {} first",
                self.name, self.name
            ))
            .with_request_id(request_id)
        })?;
        // Checked when it was first sent.
        let options = parse(&Body::parse(&bytes)?)?;
        Ok(self.advance(shared, session, request_id, options, on_ready))
    }

    fn advance<T>(
        &self,
        shared: &Shared,
        session: &mut Session,
        request_id: &str,
        options: T,
        on_ready: impl FnOnce(&mut Session),
    ) -> Step<T> {
        if let Some(wait) = session.pending(self.name, &shared.config, request_id, Some(self.async_rel)) {
            return Step::Wait(wait);
        }
        on_ready(session);
        Step::Go(Ready::of(session, request_id), options)
    }
}

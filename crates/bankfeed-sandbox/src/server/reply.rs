//! Building answers: JSON bodies, the error body, the 202 body, the envelope of every 200,
//! shared fragments.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;

/// The one institution of the sandbox, as the public test instance has it: every user banks
/// there, and answers name it.
pub(crate) const INSTITUTION: &str = "FlinksCapital";
pub(crate) const INSTITUTION_ID: u32 = 14;

/// The link of a banking operation's 202 (`SandboxConfig::async_links`). It lives with the
/// answers it shapes, so that the configuration, which names it, is not imported back by them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AsyncLinks {
    /// `{"rel": "{Endpoint}Async", "href": "/{Endpoint}Async", "example":
    /// "/{Endpoint}Async/{requestId}"}`, placeholders and all, as the service sends it.
    Template,
    /// The operation's own: `{"rel": "GetAccountsDetailAsync", "href": "/GetAccountsDetailAsync",
    /// "example": "/GetAccountsDetailAsync/<RequestId>"}`, as the sandbox sent before.
    Concrete,
}

impl AsyncLinks {
    /// `template` or `concrete`, as the knob is spelled.
    pub fn as_str(self) -> &'static str {
        match self {
            AsyncLinks::Template => "template",
            AsyncLinks::Concrete => "concrete",
        }
    }

    /// The form `text` names (any case), or the rule it breaks.
    pub fn parse(text: &str) -> Result<AsyncLinks, String> {
        match text.trim().to_ascii_lowercase().as_str() {
            "template" => Ok(AsyncLinks::Template),
            "concrete" => Ok(AsyncLinks::Concrete),
            _ => Err(format!("must be \"template\" or \"concrete\", got {text:?}")),
        }
    }
}

pub(crate) const OPERATION_PENDING: &str = "OPERATION_PENDING";
pub(crate) const OPERATION_DISPATCHED: &str = "OPERATION_DISPATCHED";
/// The error a data call gets while the session is still loading. The protocol does not name its
/// code (docs/protocol.md#polling); the client also recognises it by its message.
pub(crate) const SESSION_LOADING: &str = "SESSION_LOADING";
/// The code of the 408 of a request that did not arrive within the sandbox's limits
/// (docs/sandbox.md#limits): the sandbox's own, since the protocol names none.
pub(crate) const REQUEST_TIMEOUT: &str = "REQUEST_TIMEOUT";

/// The largest request body the sandbox reads (docs/sandbox.md#limits): past it, a request gets
/// the 413 of [`too_large`]. The router makes it axum's body limit too.
pub(crate) const BODY_LIMIT: usize = 2 * 1024 * 1024;

/// The `LastRefresh` of every connection until a live session refreshes it again: fixed, so a
/// first login's answers are reproducible (docs/sandbox.md#lastrefresh-loginids-and-languages).
pub(crate) const LAST_REFRESH: &str = "2026-11-20T08:15:42.1234567";

/// `LastRefresh` `ticks` of 100 ns after [`LAST_REFRESH`], written as the service writes it:
/// seven fractional digits, no zone (docs/protocol.md#authorize).
pub(crate) fn last_refresh(ticks: u64) -> String {
    if ticks == 0 {
        return LAST_REFRESH.to_owned();
    }
    let base = chrono::NaiveDateTime::parse_from_str(LAST_REFRESH, "%Y-%m-%dT%H:%M:%S%.f").unwrap_or_default();
    let nanos = i64::try_from(ticks.saturating_mul(100)).unwrap_or(i64::MAX);
    let moved = base.checked_add_signed(chrono::TimeDelta::nanoseconds(nanos)).unwrap_or(base);
    // chrono writes 3, 6 or 9 fractional digits; the service writes 7 (100 ns ticks).
    let tick = chrono::Timelike::nanosecond(&moved) / 100;
    format!("{}.{tick:07}", moved.format("%Y-%m-%dT%H:%M:%S"))
}

/// The error body of the service's web framework, for a request no operation takes.
#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
pub(crate) struct FrameworkError {
    pub message: String,
}

/// The framework's 404 for a path no operation (and no widget page) is at: a `Message` alone and
/// no `FlinksCode` (docs/protocol.md#errors).
pub(crate) fn no_resource(path: &str) -> Response {
    let message = format!("No HTTP resource was found that matches the request URI '{path}'.");
    json(StatusCode::NOT_FOUND, &FrameworkError { message })
}

/// An error answer: `{"HttpStatusCode", "Message", "FlinksCode"}`, plus `RequestId` when the
/// request named a known one (docs/protocol.md#errors). Named apart from the client's
/// `ApiError`, which is what a client makes of such an answer.
#[derive(Debug)]
pub(crate) struct ErrorReply {
    status: StatusCode,
    code: &'static str,
    message: String,
    request_id: Option<String>,
}

impl ErrorReply {
    pub(crate) fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> ErrorReply {
        ErrorReply { status, code, message: message.into(), request_id: None }
    }

    pub(crate) fn bad_request(code: &'static str, message: impl Into<String>) -> ErrorReply {
        ErrorReply::new(StatusCode::BAD_REQUEST, code, message)
    }

    pub(crate) fn unauthorized(code: &'static str, message: impl Into<String>) -> ErrorReply {
        ErrorReply::new(StatusCode::UNAUTHORIZED, code, message)
    }

    /// `INVALID_REQUEST` with the status the newest documentation of the banking and Authorize
    /// operations gives it, 401 (docs/protocol.md#errors); older pages said 400.
    pub(crate) fn invalid_request(message: impl Into<String>) -> ErrorReply {
        ErrorReply::unauthorized("INVALID_REQUEST", message)
    }

    /// The refusal as the attributes operations give it: their own error page gives
    /// `INVALID_REQUEST` the status 400 (docs/protocol.md#errors).
    pub(crate) fn of_attributes(self) -> ErrorReply {
        if self.code == "INVALID_REQUEST" && self.status == StatusCode::UNAUTHORIZED {
            return ErrorReply { status: StatusCode::BAD_REQUEST, ..self };
        }
        self
    }

    /// The refusal as the sandbox's own admin API gives it: `INVALID_REQUEST` is 400 there, since
    /// the 401 of the banking operations would read as a refused admin token.
    pub(crate) fn of_admin(self) -> ErrorReply {
        self.of_attributes()
    }

    /// Its `FlinksCode`.
    pub(crate) fn code(&self) -> &'static str {
        self.code
    }

    pub(crate) fn with_request_id(mut self, request_id: &str) -> ErrorReply {
        self.request_id = Some(request_id.to_owned());
        self
    }
}

/// The 413 of a request body past [`BODY_LIMIT`].
pub(crate) fn too_large() -> ErrorReply {
    ErrorReply::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "INVALID_REQUEST",
        format!("The request body is larger than the limit of {BODY_LIMIT} bytes"),
    )
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct ErrorBody<'a> {
    http_status_code: u16,
    message: &'a str,
    flinks_code: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    request_id: Option<&'a str>,
}

impl IntoResponse for ErrorReply {
    fn into_response(self) -> Response {
        let body = ErrorBody {
            http_status_code: self.status.as_u16(),
            message: &self.message,
            flinks_code: self.code,
            request_id: self.request_id.as_deref(),
        };
        json(self.status, &body)
    }
}

/// `body` as JSON with `status`.
pub(crate) fn json(status: StatusCode, body: &impl Serialize) -> Response {
    (status, Json(body)).into_response()
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct PendingBody<'a> {
    flinks_code: &'a str,
    links: [Link; 0],
    http_status_code: u16,
    message: &'a str,
    request_id: &'a str,
}

/// 202: the data is still being processed; the caller repeats the request.
pub(crate) fn pending(code: &str, request_id: &str) -> Response {
    let body = PendingBody {
        flinks_code: code,
        links: [],
        http_status_code: 202,
        message: "Your operation is still processing",
        request_id,
    };
    json(StatusCode::ACCEPTED, &body)
}

#[derive(Serialize)]
struct AsyncLink {
    rel: String,
    href: String,
    example: String,
}

impl AsyncLink {
    /// The link of a 202 of the operation whose `...Async` endpoint is `rel`, in the form the
    /// `async_links` knob asks for (docs/sandbox.md#knobs).
    fn new(rel: &str, request_id: &str, form: AsyncLinks) -> AsyncLink {
        match form {
            // As the service writes it, placeholders and all: a client builds the path itself.
            AsyncLinks::Template => AsyncLink {
                rel: "{Endpoint}Async".to_owned(),
                href: "/{Endpoint}Async".to_owned(),
                example: "/{Endpoint}Async/{requestId}".to_owned(),
            },
            AsyncLinks::Concrete => {
                AsyncLink { rel: rel.to_owned(), href: format!("/{rel}"), example: format!("/{rel}/{request_id}") }
            }
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct AsyncPendingBody<'a> {
    flinks_code: &'a str,
    links: [AsyncLink; 1],
    http_status_code: u16,
    message: &'a str,
    request_id: &'a str,
}

/// 202 for a banking operation: the body names its `...Async` endpoint, which the real service
/// is polled on (docs/protocol.md#polling): the service's template link by default, or the
/// operation's own (`rel` `GetAccountsDetailAsync`), as `form` says. Keys in the recorded order.
pub(crate) fn pending_async(code: &str, request_id: &str, rel: &str, form: AsyncLinks) -> Response {
    let body = AsyncPendingBody {
        flinks_code: code,
        links: [AsyncLink::new(rel, request_id, form)],
        http_status_code: 202,
        message: "Your operation is still processing",
        request_id,
    };
    json(StatusCode::ACCEPTED, &body)
}

/// An element of `Links`.
#[derive(Serialize)]
pub(crate) struct Link {
    pub rel: &'static str,
    pub href: &'static str,
    pub example: Option<&'static str>,
}

impl Link {
    pub(crate) const fn new(rel: &'static str, href: &'static str) -> Link {
        Link { rel, href, example: None }
    }
}

/// The fields every 200 repeats, around the operation's own (`body`, whose fields are written in
/// place): `HttpStatusCode` always; the institution, `Login` and `RequestId` in the answers
/// about a session (Authorize and the data operations), not in GenerateAuthorizeToken's or
/// DeleteCard's.
#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
pub(crate) struct Envelope<'a, B> {
    http_status_code: u16,
    #[serde(flatten)]
    body: B,
    #[serde(flatten)]
    around: Option<Around<'a>>,
}

/// What follows the operation's own fields, in the order the service writes them: in banking
/// answers `Login` sits between `InstitutionName` and `InstitutionId`, as every recorded answer
/// has it (docs/sandbox.md#where-the-sandbox-differs-from-the-real-service).
#[derive(Serialize)]
#[serde(untagged)]
enum Around<'a> {
    #[serde(rename_all = "PascalCase")]
    Banking {
        institution_name: &'static str,
        #[serde(skip_serializing_if = "Option::is_none")]
        login: Option<LoginBody<'a>>,
        institution_id: u32,
        institution: &'static str,
        request_id: &'a str,
    },
    #[serde(rename_all = "PascalCase")]
    Investments {
        institution: InstitutionBody,
        #[serde(skip_serializing_if = "Option::is_none")]
        login: Option<LoginBody<'a>>,
        request_id: &'a str,
    },
    #[serde(rename_all = "PascalCase")]
    Unnamed {
        #[serde(skip_serializing_if = "Option::is_none")]
        login: Option<LoginBody<'a>>,
        request_id: &'a str,
    },
}

/// How an answer names the institution: banking answers as three fields, investments as an
/// object, attributes not at all (None in [`Envelope::new`]).
#[derive(Clone, Copy)]
pub(crate) enum InstitutionFields {
    Banking,
    Investments,
}

/// `Institution` of investment answers.
#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
pub(crate) struct InstitutionBody {
    id: u32,
    name: &'static str,
}

impl InstitutionFields {
    pub(crate) const BANKING: InstitutionFields = InstitutionFields::Banking;
    pub(crate) const INVESTMENTS: InstitutionFields = InstitutionFields::Investments;
}

impl<'a, B: Serialize> Envelope<'a, B> {
    /// A 200 about a session; `login` is None only in the answer to a cached read's challenge,
    /// which the service sends without it (docs/sandbox.md#cached-reads-asked-a-question).
    pub(crate) fn new(
        body: B,
        institution: Option<InstitutionFields>,
        login: Option<LoginBody<'a>>,
        request_id: &'a str,
    ) -> Envelope<'a, B> {
        let around = match institution {
            Some(InstitutionFields::Banking) => Around::Banking {
                institution_name: INSTITUTION,
                login,
                institution_id: INSTITUTION_ID,
                institution: INSTITUTION,
                request_id,
            },
            Some(InstitutionFields::Investments) => Around::Investments {
                institution: InstitutionBody { id: INSTITUTION_ID, name: INSTITUTION },
                login,
                request_id,
            },
            None => Around::Unnamed { login, request_id },
        };
        Envelope { http_status_code: 200, body, around: Some(around) }
    }

    /// A 200 about no session.
    pub(crate) fn plain(body: B) -> Envelope<'a, B> {
        Envelope { http_status_code: 200, body, around: None }
    }

    /// The 200.
    pub(crate) fn ok(&self) -> Response {
        json(StatusCode::OK, self)
    }
}

/// The `Login` object of data and Authorize answers.
#[cfg(test)]
mod tests {
    #[test]
    fn last_refresh_moves_by_ticks_and_keeps_seven_digits() {
        assert_eq!(super::last_refresh(0), super::LAST_REFRESH);
        assert_eq!(super::last_refresh(1), "2026-11-20T08:15:42.1234568");
        assert_eq!(super::last_refresh(10_000_000 * 60), "2026-11-20T08:16:42.1234567");
    }
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
pub(crate) struct LoginBody<'a> {
    pub username: &'a str,
    pub is_scheduled_refresh: bool,
    pub last_refresh: &'a str,
    /// `Personal` in banking answers, null in investment ones.
    #[serde(rename = "Type")]
    pub kind: Option<&'a str>,
    pub id: &'a str,
}

//! One error type for the whole core. Service errors are classified by their code first and their
//! HTTP status second, because the status of a code has changed between versions of the service.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::authorize::challenge::Challenge;
use crate::shown::{html_page, snippet, Seconds};

/// A response body as received: JSON when it parsed, otherwise the text.
#[derive(Clone, Debug, PartialEq)]
pub enum Body {
    Json(serde_json::Value),
    Text(String),
}

/// An error answer of the service, with everything it said.
#[derive(Clone, Debug, PartialEq)]
pub struct ApiError {
    pub status: u16,
    /// `FlinksCode` (or `ServiceCode`), e.g. `SESSION_NONEXISTENT`.
    pub code: Option<String>,
    pub message: Option<String>,
    pub request_id: Option<String>,
    pub body: Body,
    /// From a `Retry-After` header, when the service sent one; `Duration::MAX` for a value too
    /// large to represent.
    pub retry_after: Option<Duration>,
    /// How many times the request was sent, retries included (1 when it was not retried).
    pub attempts: u32,
    /// The operation whose answer it was (`Authorize`, `Investments`, ...): an ETL job's failure
    /// record says whether the login or its data was refused. Set when the error becomes an
    /// [`Error`] of an operation; `None` only while the body is read.
    pub operation: Option<String>,
}

/// The families of service errors a caller handles differently.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApiErrorKind {
    Unauthorized,
    InvalidLogin,
    LoginDisabled,
    InvalidSecurityResponse,
    Session,
    ConcurrentSession,
    RetryLater,
    RateLimited,
    InvalidRequest,
    InstitutionUnavailable,
    Aggregation,
    Other,
}

impl ApiError {
    pub fn kind(&self) -> ApiErrorKind {
        use ApiErrorKind::{Aggregation, InvalidRequest, Other, RateLimited, RetryLater, Unauthorized};
        let by_code = self.code.as_deref().and_then(kind_of_code);
        by_code.unwrap_or(match self.status {
            401 | 403 => Unauthorized,
            429 => RateLimited,
            503 => RetryLater,
            400 | 404 | 422 => InvalidRequest,
            500..=599 => Aggregation,
            _ => Other,
        })
    }

    /// Whether the service says the session is still loading (docs/protocol.md#polling): such a
    /// data call is retried within the poll deadline.
    pub fn is_session_loading(&self) -> bool {
        if self.code.as_deref().is_some_and(|c| c.eq_ignore_ascii_case("SESSION_LOADING")) {
            return true;
        }
        self.message.as_deref().is_some_and(|m| {
            let m = m.to_ascii_lowercase();
            m.contains("still loading") || m.contains("session is loading")
        })
    }

    /// Whether this refusal of an answer leaves the challenge open to a new answer
    /// (docs/protocol.md#challenges-and-answer-rules).
    pub(crate) fn keeps_challenge_open(&self) -> bool {
        self.code.as_deref().is_some_and(|code| code.eq_ignore_ascii_case("INVALID_SECURITY_RESPONSE"))
    }

    /// What to do after a refused answer depends on whether the challenge is still open
    /// (docs/protocol.md#challenges-and-answer-rules).
    fn answer_next_step(&self) -> &'static str {
        match self.code.as_deref().map(str::to_ascii_uppercase).as_deref() {
            Some("INVALID_SECURITY_RESPONSE") => "the challenge stays open: answer it again (the error keeps it)",
            Some("INVALID_SECURITY_RESPONSE_NO_RETRY") => "the answer may not be retried: start a new login later",
            Some("UNKNOWN_CHALLENGE_KEY") => {
                "answer the prompts of the pending challenge: the step the last answer returned, not an earlier one"
            }
            Some("SECURITYRESPONSES_INCOMPLETE") => "answer every prompt of the challenge in one call",
            Some("QUESTION_NOT_FOUND") => "choose the questions among the challenge's choices",
            _ => "answer the challenge again",
        }
    }

    fn next_step(&self) -> &'static str {
        if self.is_session_loading() {
            // Whatever the status: the service says when to come back.
            return "retry in a moment: the session is still loading";
        }
        if self.status == 501 {
            // Not Implemented: the one 5xx that never succeeds when sent again (docs/protocol.md).
            return "the service does not implement this request: sending it again will not help; contact the provider";
        }
        match self.kind() {
            ApiErrorKind::Unauthorized => "check the api_key / secret_key and the customer's package",
            ApiErrorKind::InvalidLogin => "check the credentials or the LoginId",
            ApiErrorKind::LoginDisabled => "the end user must act at the institution first",
            ApiErrorKind::InvalidSecurityResponse => self.answer_next_step(),
            ApiErrorKind::Session => "open a new session (authorize again)",
            ApiErrorKind::ConcurrentSession => "wait for the other session on this login to end",
            ApiErrorKind::RetryLater | ApiErrorKind::RateLimited => "retry later",
            ApiErrorKind::InvalidRequest => "fix the request",
            ApiErrorKind::InstitutionUnavailable => "the institution or operation is not available",
            ApiErrorKind::Aggregation | ApiErrorKind::Other => NEXT_STEP_PROVIDER,
        }
    }
}

/// The family of a code the client knows, in any case.
fn kind_of_code(code: &str) -> Option<ApiErrorKind> {
    use ApiErrorKind::{
        Aggregation, ConcurrentSession, InstitutionUnavailable, InvalidLogin, InvalidRequest, InvalidSecurityResponse,
        LoginDisabled, RateLimited, RetryLater, Session, Unauthorized,
    };
    match code.to_ascii_uppercase().as_str() {
        "UNAUTHORIZED" | "ACCESS_DENIED" => Some(Unauthorized),
        "INVALID_LOGIN" | "INVALID_USERNAME" | "INVALID_PASSWORD" => Some(InvalidLogin),
        "DISABLED_LOGIN" | "NEW_ACCOUNT" => Some(LoginDisabled),
        "INVALID_SECURITY_RESPONSE"
        | "INVALID_SECURITY_RESPONSE_NO_RETRY"
        | "UNKNOWN_CHALLENGE_KEY"
        | "SECURITYRESPONSES_INCOMPLETE"
        | "QUESTION_NOT_FOUND" => Some(InvalidSecurityResponse),
        "SESSION_NONEXISTENT" | "SESSION_EXPIRED" => Some(Session),
        "CARD_IN_USE" | "CONCURRENT_SESSION" | "ALREADY_AUTHORIZED" => Some(ConcurrentSession),
        "RETRY_LATER" => Some(RetryLater),
        "TOO_MANY_REQUESTS" => Some(RateLimited),
        "INVALID_REQUEST" => Some(InvalidRequest),
        "DISABLED_INSTITUTION" | "METHOD_NOT_AVAILABLE" => Some(InstitutionUnavailable),
        "AGGREGATION_ERROR" => Some(Aggregation),
        _ => None,
    }
}

/// Whether the client knows `code` (it decides the class of an error, or that a call goes on):
/// such a code is kept as it came when what the server said is masked (crates/bankfeed/src/error_masking.rs), so that
/// the error keeps its class.
pub(crate) fn known_code(code: &str) -> bool {
    kind_of_code(code).is_some()
        || ["SESSION_LOADING", "OPERATION_PENDING", "OPERATION_DISPATCHED"]
            .iter()
            .any(|known| code.eq_ignore_ascii_case(known))
}

/// The next step of a service failure that is not the caller's to fix.
const NEXT_STEP_PROVIDER: &str = "retry later or contact the provider with the RequestId";

/// Text of the service shown with its control characters escaped (`\n`, `\r`, `\u{1b}`).
struct OneLine<'a>(&'a str);

impl fmt::Display for OneLine<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in self.0.chars() {
            if c.is_control() {
                write!(f, "{}", c.escape_default())?;
            } else {
                write!(f, "{c}")?;
            }
        }
        Ok(())
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The service's own text, kept on one line: a job logs `str(exc)` as one log line, and a
        // line break from the server must not split it or forge the next one.
        write!(f, "HTTP {}", self.status)?;
        if let Some(code) = &self.code {
            write!(f, " {}", OneLine(code))?;
        }
        match (&self.message, &self.body) {
            (Some(message), _) => write!(f, ": {}", OneLine(message))?,
            (None, Body::Text(text)) if !text.is_empty() => match html_page(text) {
                Some(page) => write!(f, ": {page}, not the service's JSON")?,
                None => write!(f, ": {}", OneLine(&snippet(text, 200)))?,
            },
            _ => {}
        }
        if let Some(request_id) = &self.request_id {
            write!(f, " (RequestId {})", OneLine(request_id))?;
        }
        if self.attempts > 1 {
            write!(f, " after {} attempts", self.attempts)?;
        }
        // The wait the service asked for, which the retries could not honour (past the time
        // left, or no retry left): the caller's "later" is at least this.
        match self.retry_after {
            Some(Duration::MAX) => write!(f, "; it asked (Retry-After) for a wait too long to honour")?,
            Some(wait) if !wait.is_zero() => write!(f, "; it asked (Retry-After) to wait {:.1} s", wait.as_secs_f64())?,
            _ => {}
        }
        // Not twice: the service's message may end with the same advice ("...; retry later").
        let step = match (self.next_step(), &self.request_id) {
            (NEXT_STEP_PROVIDER, None) => "retry later, or contact the provider (this answer named no RequestId)",
            (step, _) => step,
        };
        let said = self
            .message
            .as_deref()
            .is_some_and(|message| message.trim_end().trim_end_matches('.').to_ascii_lowercase().ends_with(step));
        if said {
            return Ok(());
        }
        write!(f, "; {step}")
    }
}

/// Everything that can go wrong in the core.
#[derive(Clone, Debug)]
pub enum Error {
    /// A client option is missing or invalid.
    Config { field: &'static str, rule: String },
    /// An answer breaks a rule of docs/protocol.md#challenges-and-answer-rules; nothing was sent.
    InvalidAnswer { prompt: String, rule: String },
    /// The service answered with an error.
    Api(Box<ApiError>),
    /// A challenge came where a session was needed and no handler was given.
    ChallengeRequired(Box<Challenge>),
    /// The service refused an answer and the challenge stays open (`INVALID_SECURITY_RESPONSE`):
    /// the challenge is kept, so that a login whose handler answered wrong can be answered again
    /// without a new live login (docs/errors.md#the-classes).
    AnswerRefused { error: Box<ApiError>, challenge: Box<Challenge> },
    /// The challenge loop hit its bound.
    TooManyChallenges { rounds: u32, request_id: String },
    /// Still 202 when the poll timeout ran out. `partial`: the last 202 body that carried results
    /// processed so far (the service documents them for `OPERATION_PENDING` and
    /// `OPERATION_DISPATCHED`; docs/protocol.md#polling), so they are not lost with the wait.
    PendingTimeout {
        operation: String,
        request_id: Option<String>,
        waited: Duration,
        partial: Option<Box<serde_json::Value>>,
    },
    /// No HTTP answer: connection refused or reset, or the request timed out. `attempts` counts
    /// the sends, retries included.
    /// `deadline` is set when the call's own `deadline` ran out, not a request's `timeout`.
    /// `resumable` is set when a data operation's RequestId was known (its session's, or the one
    /// a 202 named): the service may still finish it, and polling it can be resumed.
    /// `proxy` is the proxy the request went through, as shown with where it came from
    /// (`http://proxy.corp:3128 (from HTTPS_PROXY)`, never its user:password), when one did
    /// (docs/protocol.md#proxies). `cached` is set for a cached read's Authorize, which never
    /// reaches the bank: its message has nothing to say of live logins.
    Transport {
        operation: String,
        message: String,
        timed_out: bool,
        attempts: u32,
        deadline: bool,
        resumable: Option<Box<Resumable>>,
        proxy: Option<String>,
        cached: bool,
    },
    /// The server answered with a status or a shape the operation does not expect (a data call
    /// answering 203, a token call without a token, DeleteCard answering 202): `status` is the
    /// status that really came, `snippet` the start of the body.
    Protocol { operation: String, status: u16, message: String, request_id: Option<String>, snippet: String },
    /// A data answer of another login than the one the call was for: a RequestId resumed with
    /// the LoginId of another login (crates/bankfeed/src/data/login.rs). Raised as a `ProtocolError`, with its own
    /// next step: the caller's mapping is wrong, not the service.
    /// `message` names both LoginIds.
    OtherLogin { operation: String, message: String, request_id: String, snippet: String },
    /// An answer that could not be decoded; `resumable` as for `Transport`.
    Decode { operation: String, status: u16, message: String, snippet: String, resumable: Option<Box<Resumable>> },
    /// The caller's challenge handler failed; its own error is kept to be raised as it was.
    Handler(Arc<dyn std::error::Error + Send + Sync>),
    /// bankfeed's own failure, not the service's nor the caller's: an operation of a bulk call
    /// that panicked is reported as this, for its LoginId only (crates/bankfeed/src/bulk.rs).
    Internal { message: String },
    /// The client was closed: the call was cancelled where it stood, or refused before it began.
    Closed { operation: String },
    /// No bank was connected through the widget before the wait ran out (docs/connect.md).
    ConnectTimeout { waited: Duration },
    /// A cassette could not be read, parsed or written (docs/cassettes.md): `path` as given,
    /// `message` what went wrong.
    Cassette { path: String, message: String },
    /// A request that no interaction of the cassette answers, in a mode that only replays.
    /// `request` is the request after redaction (method, path, operation: never a secret);
    /// `closest` the recorded request nearest to it and how the two differ.
    CassetteUnmatched { path: String, request: String, closest: Option<(String, Vec<String>)> },
    /// A request whose recorded answers were all played already (a poll asking once more than
    /// it did when recorded): an error, not a repeat, which would hang a poller.
    CassetteRunOut { path: String, request: String, played: usize },
    /// Nothing was written: the cassette's text still held the value of `field` (a secret, or a
    /// value the redaction should have replaced). The value is never shown.
    CassetteSecret { path: String, field: String },
}

impl Error {
    pub fn config(field: &'static str, rule: impl Into<String>) -> Self {
        Error::Config { field, rule: rule.into() }
    }

    /// This configuration error as it reads when the value came from the environment variable
    /// `variable`, not from an argument: the message names the variable to fix.
    pub(crate) fn read_from(self, variable: &str) -> Self {
        match self {
            Error::Config { field, rule } => Error::Config { field, rule: format!("{rule} (read from {variable})") },
            other => other,
        }
    }

    /// The error of a variable whose bytes are not UTF-8 text: it names the option and the
    /// variable, never the value, which may be a key.
    pub(crate) fn not_unicode(field: &'static str, variable: &str) -> Self {
        Error::config(
            field,
            format!(
                "cannot be read: its variable is not UTF-8 text; set the variable as text or unset it, or give \
                 the {field} option"
            ),
        )
        .read_from(variable)
    }

    pub fn invalid_answer(prompt: &str, rule: impl Into<String>) -> Self {
        Error::InvalidAnswer { prompt: prompt.to_owned(), rule: rule.into() }
    }

    /// A protocol surprise of `operation` (docs/errors.md#protocol-surprises): `status` as it came,
    /// `message` what the operation expected, the RequestId when `body` is a JSON object naming one,
    /// and the start of `body`.
    pub(crate) fn protocol(operation: &str, status: u16, message: impl Into<String>, body: &[u8]) -> Self {
        Error::Protocol {
            operation: operation.to_owned(),
            status,
            message: message.into(),
            request_id: crate::data::fields::request_id_of(body),
            snippet: crate::shown::body_snippet(body),
        }
    }

    /// The RequestId this error belongs to, when one is known.
    pub fn request_id(&self) -> Option<&str> {
        match self {
            Error::Api(api) => api.request_id.as_deref(),
            Error::AnswerRefused { error, challenge } => error.request_id.as_deref().or(Some(&challenge.request_id)),
            Error::ChallengeRequired(challenge) => Some(&challenge.request_id),
            Error::TooManyChallenges { request_id, .. } => Some(request_id),
            Error::PendingTimeout { request_id, .. } => request_id.as_deref(),
            Error::Protocol { request_id, .. } => request_id.as_deref(),
            Error::OtherLogin { request_id, .. } => Some(request_id),
            Error::Transport { resumable, .. } | Error::Decode { resumable, .. } => {
                resumable.as_ref().map(|resumable| resumable.request_id.as_str())
            }
            _ => None,
        }
    }
}

/// The RequestId of the data operation a `Transport` or `Decode` failure interrupted (its
/// session's, or the one a 202 named): the service may still finish the operation, so the caller
/// resumes polling it rather than start over with a new Authorize (docs/errors.md#an-error-while-polling).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resumable {
    pub request_id: String,
}

impl Error {
    /// The error as a cached read's Authorize raised it: a transport failure of it says nothing
    /// of live logins, since a cached read never reaches the bank.
    pub(crate) fn of_cached_read(mut self) -> Self {
        if let Error::Transport { cached, .. } = &mut self {
            *cached = true;
        }
        self
    }

    /// This error as it ends a data operation of RequestId `request_id` (when one is known), while polling it or reading its answer: the error keeps that RequestId, and a
    /// failure that got no readable answer says that polling it can be resumed. A call started
    /// over would open a new RequestId, and the service's work on the first would be lost.
    pub(crate) fn resumable_at(mut self, request_id: Option<&str>) -> Self {
        let Some(id) = request_id else { return self };
        match &mut self {
            Error::Transport { resumable, .. } | Error::Decode { resumable, .. } => {
                *resumable = Some(Box::new(Resumable { request_id: id.to_owned() }));
            }
            Error::Api(api) if api.request_id.is_none() => api.request_id = Some(id.to_owned()),
            Error::Protocol { request_id: slot @ None, .. } => *slot = Some(id.to_owned()),
            _ => {}
        }
        self
    }

    /// The message of this error with the next steps in the words of `advice`: those of the
    /// API the caller used. `Display` gives the core's own ([`CoreAdvice`]).
    pub fn explained<'a>(&'a self, advice: &'a dyn Advice) -> impl fmt::Display + 'a {
        Explained(self, advice)
    }
}

/// The next steps an error gives that depend on the API its caller used: the core's errors carry
/// the facts (which operation, which RequestId, whether it can be resumed), and an API names its
/// own calls for them. The core's words ([`CoreAdvice`]) name its Rust API; the Python binding
/// names its methods (crates/bankfeed/src/raise.rs).
pub trait Advice {
    /// How to resume polling the RequestId `request_id` of the pending data operation
    /// `operation`, without a new Authorize.
    fn resume(&self, f: &mut fmt::Formatter<'_>, operation: &str, request_id: &str) -> fmt::Result;
    /// How to answer the challenges that came where a session was needed.
    fn answer_challenge(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result;
    /// What closed the client.
    fn closed_by(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result;
    /// How to resume each login with its own RequestId.
    fn own_request_ids(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result;
    /// The setting that turns proxies off (docs/protocol.md#proxies).
    fn direct_connection(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result;
}

/// The core's own words for the next steps of an error: its Rust API.
pub struct CoreAdvice;

impl Advice for CoreAdvice {
    fn resume(&self, f: &mut fmt::Formatter<'_>, _operation: &str, request_id: &str) -> fmt::Result {
        write!(f, "resume polling it with the same call on Target::login(login_id, Some({request_id:?}))")
    }

    fn answer_challenge(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("answer them with Client::answer, or complete the login with a ChallengeHandler")
    }

    fn closed_by(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Client::close")
    }

    fn own_request_ids(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Target::login(login_id, Some(the RequestId of that login's own call))")
    }

    fn direct_connection(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ProxyOption::Off")
    }
}

/// An error's message with the next steps of an [`Advice`].
struct Explained<'a>(&'a Error, &'a dyn Advice);

/// The end of the message of a failure that interrupted a pending operation.
fn write_resumable(
    f: &mut fmt::Formatter<'_>,
    operation: &str,
    resumable: Option<&Resumable>,
    advice: &dyn Advice,
) -> fmt::Result {
    match resumable {
        Some(Resumable { request_id }) => {
            write!(
                f,
                "; its RequestId {} stays open, and the service may still finish the operation: rather than \
                 start over, ",
                OneLine(request_id)
            )?;
            advice.resume(f, operation, request_id)
        }
        None => Ok(()),
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Explained(self, &CoreAdvice).fmt(f)
    }
}

impl fmt::Display for Explained<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Explained(error, advice) = *self;
        match error {
            Error::Config { field, rule } => write!(f, "{field} {rule}"),
            Error::InvalidAnswer { prompt, rule } => write!(f, "answer to {prompt:?}: {rule}"),
            Error::Api(api) | Error::AnswerRefused { error: api, .. } => api.fmt(f),
            Error::ChallengeRequired(challenge) => {
                write!(
                    f,
                    "the institution asks {} security challenge(s) (RequestId {}): ",
                    challenge.challenges.len(),
                    challenge.request_id
                )?;
                advice.answer_challenge(f)
            }
            Error::TooManyChallenges { rounds, request_id } => write!(
                f,
                "no session after {rounds} challenge round(s) (RequestId {request_id}); raise \
                 max_challenge_rounds if the institution really asks more"
            ),
            Error::PendingTimeout { operation, request_id, waited, .. } => {
                write!(f, "{operation} still pending after {}", Seconds(*waited))?;
                let raise = "raise poll_timeout (and deadline, when set)";
                match request_id {
                    Some(id) => {
                        write!(f, " (RequestId {id}): ")?;
                        advice.resume(f, operation, id)?;
                        write!(f, "; or {raise}")
                    }
                    None => write!(f, "; call again later, or {raise}"),
                }
            }
            Error::Transport { operation, message, timed_out, attempts, deadline, resumable, proxy, cached } => {
                let what = if *timed_out { "timed out" } else { "failed" };
                write!(f, "{operation} {what}")?;
                if *attempts > 1 {
                    write!(f, " after {attempts} attempts")?;
                }
                // A failure through a proxy may be the proxy's: the caller must know to look there
                // (docs/protocol.md#proxies).
                if let Some(proxy) = proxy {
                    write!(f, " through the proxy {proxy}")?;
                }
                write!(f, ": {}", OneLine(message))?;
                // Retries are spent by now (docs/errors.md#transporterror).
                if *deadline {
                    f.write_str("; raise deadline if the call may take that long, or retry later")?;
                } else if *timed_out {
                    f.write_str("; the service did not answer in time: retry later, or raise timeout")?;
                } else if proxy.is_some() {
                    f.write_str("; check the proxy, base_url and the network, then retry later (")?;
                    advice.direct_connection(f)?;
                    f.write_str(", or the host in NO_PROXY, connects directly)")?;
                } else {
                    f.write_str("; check base_url and the network, then retry later")?;
                }
                if operation == "Authorize" && *cached {
                    f.write_str(" (a cached read, which never reaches the bank: safe to repeat)")?;
                } else if operation == "Authorize" {
                    // A live login sent again may be a second login at the bank; a cached one is
                    // harmless to repeat. Only a cached read's own call knows it was one (`cached`).
                    f.write_str(" (if it was a live login, it may have reached the bank: do not repeat it blindly)")?;
                }
                write_resumable(f, operation, resumable.as_deref(), advice)
            }
            Error::Protocol { operation, status, message, request_id, snippet } => {
                write!(f, "{operation}: unexpected HTTP {status} answer ({message})")?;
                if let Some(request_id) = request_id {
                    write!(f, " (RequestId {})", OneLine(request_id))?;
                }
                write!(f, "; body starts {snippet:?}")?;
                // Only what the error has to report with.
                f.write_str(match (request_id.is_some(), snippet.is_empty()) {
                    (true, false) => "; not retried: report it to the provider with the RequestId and the body's start",
                    (true, true) => "; not retried: report it to the provider with the RequestId",
                    (false, false) => "; not retried: report it to the provider with the body's start",
                    (false, true) => "; not retried: report it to the provider with the operation and the time",
                })
            }
            Error::OtherLogin { operation, message, request_id, .. } => {
                write!(
                    f,
                    "{operation}: {message} (RequestId {request_id}): that RequestId belongs to another login; \
                     resume each login with its own RequestId ("
                )?;
                advice.own_request_ids(f)?;
                f.write_str(")")
            }
            Error::Decode { operation, status, message, snippet, resumable } => {
                write!(
                    f,
                    "{operation}: could not decode the HTTP {status} answer ({message}); body starts {snippet:?}"
                )?;
                f.write_str("; a proxy or an outage may have answered instead of the service: retry later, or report it with the body's start")?;
                write_resumable(f, operation, resumable.as_deref(), advice)
            }
            Error::Handler(error) => write!(f, "the challenge handler failed: {error}"),
            Error::Closed { operation } => {
                write!(f, "{operation} stopped: the client was closed (")?;
                advice.closed_by(f)?;
                f.write_str("), so the call was cancelled or never sent; make a new client to go on")
            }
            Error::Internal { message } => f.write_str(message),
            Error::ConnectTimeout { waited } => write!(
                f,
                "no bank was connected within {}: the widget did not redirect to the loopback catcher in time; \
                 start again and finish connecting in the browser tab that opens, or allow a longer timeout",
                Seconds(*waited)
            ),
            Error::Cassette { path, message } => write!(f, "cassette {path} {message}"),
            Error::CassetteUnmatched { path, request, closest } => {
                write!(f, "cassette {path} has no recorded answer for {request}")?;
                match closest {
                    Some((recorded, differences)) => {
                        write!(f, "; the closest recorded request is {recorded}, which differs in: ")?;
                        f.write_str(&differences.join("; "))?;
                    }
                    None => f.write_str("; it records no request at all")?,
                }
                f.write_str(
                    "; record it again (record_mode once on a new file, new_episodes, or rewrite), or make the test \
                     send what was recorded",
                )
            }
            Error::CassetteRunOut { path, request, played } => write!(
                f,
                "cassette {path} recorded {played} answer(s) to {request}, and all were played: the session asks \
                 more than the recording did; record it again"
            ),
            Error::CassetteSecret { path, field } => write!(
                f,
                "cassette {path} was not written: its text still holds the value of {field}, which must never be \
                 in a file; this is a bug of bankfeed's redaction, please report it (with the field's name only)"
            ),
        }
    }
}

impl std::error::Error for Error {}

impl From<ApiError> for Error {
    fn from(error: ApiError) -> Self {
        Error::Api(Box::new(error))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An API's own words, to see where each next step goes.
    struct Marked;

    impl Advice for Marked {
        fn resume(&self, f: &mut fmt::Formatter<'_>, operation: &str, request_id: &str) -> fmt::Result {
            write!(f, "<resume {operation} {request_id}>")
        }
        fn answer_challenge(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("<answer>")
        }
        fn closed_by(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("<closed>")
        }
        fn own_request_ids(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("<own>")
        }
        fn direct_connection(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("<direct>")
        }
    }

    #[test]
    fn a_pending_timeout_says_how_to_resume_its_request_id_in_the_words_of_the_api() {
        let timeout = |operation: &str, request_id: Option<&str>| Error::PendingTimeout {
            operation: operation.to_owned(),
            request_id: request_id.map(str::to_owned),
            waited: Duration::from_secs(30),
            partial: None,
        };
        assert_eq!(
            timeout("Investments", Some("r-1")).to_string(),
            "Investments still pending after 30.0 s (RequestId r-1): resume polling it with the same call on \
             Target::login(login_id, Some(\"r-1\")); or raise poll_timeout (and deadline, when set)"
        );
        assert_eq!(
            timeout("GetAccountsDetail", Some("r-2")).explained(&Marked).to_string(),
            "GetAccountsDetail still pending after 30.0 s (RequestId r-2): <resume GetAccountsDetail r-2>; or raise \
             poll_timeout (and deadline, when set)"
        );
        assert_eq!(
            timeout("GetStatements", None).explained(&Marked).to_string(),
            "GetStatements still pending after 30.0 s; call again later, or raise poll_timeout (and deadline, when set)"
        );
    }

    #[test]
    fn every_next_step_that_names_a_call_is_the_apis() {
        let challenge = crate::authorize::challenge::Challenge {
            request_id: "r-3".to_owned(),
            challenges: Vec::new(),
            institution: None,
            named_institution: crate::data::institution::NamedInstitution::default(),
            login_id: None,
            raw: std::sync::Arc::from(&b"{}"[..]),
            sent: crate::masking::SentSecrets::default(),
        };
        let required = Error::ChallengeRequired(Box::new(challenge)).explained(&Marked).to_string();
        assert!(required.ends_with("(RequestId r-3): <answer>"), "{required}");
        let closed = Error::Closed { operation: "Investments".to_owned() }.explained(&Marked).to_string();
        assert!(closed.starts_with("Investments stopped: the client was closed (<closed>), so"), "{closed}");
        let other = Error::OtherLogin {
            operation: "GetAccountsDetail".to_owned(),
            message: "the answer is another login's".to_owned(),
            request_id: "r-4".to_owned(),
            snippet: String::new(),
        };
        assert!(other.explained(&Marked).to_string().ends_with("with its own RequestId (<own>)"), "{other}");
    }

    #[test]
    fn a_wait_under_a_second_is_shown_to_the_millisecond() {
        let pending = |millis| {
            Error::PendingTimeout {
                operation: "Investments".to_owned(),
                request_id: None,
                waited: Duration::from_millis(millis),
                partial: None,
            }
            .to_string()
        };
        assert!(pending(22).starts_with("Investments still pending after 0.022 s;"), "{}", pending(22));
        assert!(pending(1_250).starts_with("Investments still pending after 1.2 s;"), "{}", pending(1_250));
    }

    #[test]
    fn advice_the_service_already_gave_is_not_repeated() {
        let mut error = api(401, Some("RETRY_LATER"));
        error.message = Some("The institution is unavailable at the moment; retry later.".to_owned());
        assert!(error.to_string().ends_with("unavailable at the moment; retry later."), "{error}");
        error.message = Some("The institution is unavailable at the moment".to_owned());
        assert!(error.to_string().ends_with("unavailable at the moment; retry later"), "{error}");
    }

    fn api(status: u16, code: Option<&str>) -> ApiError {
        ApiError {
            status,
            code: code.map(str::to_owned),
            message: None,
            request_id: None,
            body: Body::Text(String::new()),
            retry_after: None,
            attempts: 1,
            operation: None,
        }
    }

    #[test]
    fn the_code_wins_over_the_status() {
        assert_eq!(api(400, Some("UNAUTHORIZED")).kind(), ApiErrorKind::Unauthorized);
        assert_eq!(api(401, Some("SESSION_NONEXISTENT")).kind(), ApiErrorKind::Session);
        assert_eq!(api(405, Some("DISABLED_INSTITUTION")).kind(), ApiErrorKind::InstitutionUnavailable);
        assert_eq!(api(401, Some("disabled_login")).kind(), ApiErrorKind::LoginDisabled);
    }

    #[test]
    fn without_a_known_code_the_status_decides() {
        assert_eq!(api(403, None).kind(), ApiErrorKind::Unauthorized);
        assert_eq!(api(429, Some("SOMETHING_NEW")).kind(), ApiErrorKind::RateLimited);
        assert_eq!(api(502, None).kind(), ApiErrorKind::Aggregation);
        assert_eq!(api(418, None).kind(), ApiErrorKind::Other);
    }

    #[test]
    fn the_message_keeps_code_request_id_and_next_step() {
        let mut error = api(400, Some("SESSION_NONEXISTENT"));
        error.message = Some("No session".into());
        error.request_id = Some("r-1".into());
        let text = error.to_string();
        assert!(
            text.contains("SESSION_NONEXISTENT") && text.contains("r-1") && text.contains("authorize again"),
            "{text}"
        );
        assert!(!text.contains("attempts"), "{text}");
        error.attempts = 3;
        assert!(error.to_string().contains("(RequestId r-1) after 3 attempts; open a new session"), "{error}");
    }

    #[test]
    fn plain_text_bodies_appear_in_the_message() {
        let mut error = api(500, None);
        error.body = Body::Text("upstream exploded".into());
        assert!(error.to_string().contains("upstream exploded"));
    }

    #[test]
    fn the_services_line_breaks_stay_out_of_the_one_line_message() {
        let mut error = api(500, None);
        error.message = Some("line1\nFAKE LOG LINE: ok\r\n".into());
        let text = error.to_string();
        assert!(!text.contains(['\n', '\r']), "{text:?}");
        assert!(text.contains(r"line1\nFAKE LOG LINE: ok\r\n"), "{text:?}");
        let mut error = api(502, None);
        error.body = Body::Text("<html>\n<h1>Bad gateway</h1>".into());
        assert!(!error.to_string().contains('\n'), "{error}");
    }

    #[test]
    fn an_html_page_is_named_by_its_title_not_quoted() {
        // What nginx answers when the service behind it is down.
        let page = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n";
        let mut error = api(502, None);
        error.body = Body::Text(page.into());
        let text = error.to_string();
        assert!(
            text.starts_with("HTTP 502: an HTML page titled \"502 Bad Gateway\", not the service's JSON; "),
            "{text}"
        );
        assert!(!text.contains('<'), "{text}");
        // No title: the first heading; neither: the page is still not quoted.
        error.body = Body::Text("<!DOCTYPE html><html><body><h1>\n  Gateway\n Timeout </h1></body></html>".into());
        assert!(error.to_string().starts_with("HTTP 502: an HTML page titled \"Gateway Timeout\", "), "{error}");
        error.body = Body::Text("<HTML><BODY>down</BODY></HTML>".into());
        assert!(error.to_string().starts_with("HTTP 502: an HTML page, not the service's JSON; "), "{error}");
        // Text that merely mentions a tag is quoted as it came.
        error.body = Body::Text("upstream <title> missing".into());
        assert!(error.to_string().contains("upstream <title> missing"), "{error}");
    }

    #[test]
    fn a_501_says_that_sending_it_again_will_not_help() {
        let text = api(501, None).to_string();
        assert!(text.contains("sending it again will not help"), "{text}");
        assert!(!text.contains("retry later"), "{text}");
    }

    #[test]
    fn the_wait_the_service_asked_for_is_in_the_message() {
        let mut error = api(429, Some("TOO_MANY_REQUESTS"));
        error.retry_after = Some(Duration::from_secs(3600));
        assert!(error.to_string().ends_with("; it asked (Retry-After) to wait 3600.0 s; retry later"), "{error}");
        error.retry_after = Some(Duration::MAX);
        assert!(error.to_string().contains("a wait too long to honour"), "{error}");
        error.retry_after = Some(Duration::ZERO);
        assert!(!error.to_string().contains("Retry-After"), "{error}");
    }

    #[test]
    fn without_a_request_id_the_advice_names_none() {
        let mut error = api(500, Some("AGGREGATION_ERROR"));
        assert!(error.to_string().ends_with("(this answer named no RequestId)"), "{error}");
        error.request_id = Some("r-9".into());
        assert!(error.to_string().ends_with("contact the provider with the RequestId"), "{error}");
    }

    #[test]
    fn each_refused_answer_says_what_to_do_next() {
        let step = |code: &str| api(401, Some(code)).to_string();
        assert!(step("INVALID_SECURITY_RESPONSE").contains("the challenge stays open: answer it again"));
        assert!(step("UNKNOWN_CHALLENGE_KEY").contains("the step the last answer returned"));
        assert!(step("SECURITYRESPONSES_INCOMPLETE").contains("answer every prompt"));
        assert!(step("INVALID_SECURITY_RESPONSE_NO_RETRY").contains("may not be retried"));
        assert!(!step("UNKNOWN_CHALLENGE_KEY").contains("answer the challenge again"));
    }

    #[test]
    fn failures_without_an_answer_of_the_service_end_with_a_next_step() {
        let transport = |operation: &str, timed_out, cached| {
            Error::Transport {
                operation: operation.into(),
                message: "connection refused".into(),
                timed_out,
                attempts: 3,
                deadline: false,
                resumable: None,
                proxy: None,
                cached,
            }
            .to_string()
        };
        assert!(transport("Investments", false, false).ends_with("check base_url and the network, then retry later"));
        assert!(transport("Investments", true, false).ends_with("retry later, or raise timeout"));
        assert!(transport("Authorize", true, false).contains("do not repeat it blindly"));
        // A cached read's Authorize never reaches the bank: nothing of live logins.
        let cached = transport("Authorize", false, true);
        assert!(!cached.contains("live login") && cached.contains("a cached read"), "{cached}");
        let deadline = crate::call::ran_out("Investments", Duration::from_secs(5)).to_string();
        assert!(deadline.ends_with("raise deadline if the call may take that long, or retry later"), "{deadline}");
        let protocol = Error::protocol("Investments", 200, "no Accounts", br#"{"RequestId": "r-1"}"#).to_string();
        assert!(protocol.ends_with("report it to the provider with the RequestId and the body's start"), "{protocol}");
        let protocol = Error::protocol("Investments", 200, "no Accounts", b"{}").to_string();
        assert!(protocol.ends_with("report it to the provider with the body's start"), "{protocol}");
        let decode = Error::Decode {
            operation: "Investments".into(),
            status: 202,
            message: "EOF".into(),
            snippet: "<".into(),
            resumable: None,
        };
        assert!(decode.to_string().ends_with("report it with the body's start"), "{decode}");
    }

    #[test]
    fn a_failure_while_pending_keeps_its_request_id_and_says_it_can_be_resumed() {
        let dropped = Error::Transport {
            operation: "GetAccountsDetail".into(),
            message: "connection reset".into(),
            timed_out: false,
            attempts: 1,
            deadline: false,
            resumable: None,
            proxy: None,
            cached: false,
        }
        .resumable_at(Some("r-1"));
        assert_eq!(dropped.request_id(), Some("r-1"));
        let message = dropped.explained(&Marked).to_string();
        assert!(message.ends_with("rather than start over, <resume GetAccountsDetail r-1>"), "{message}");
        // Nothing pending: the error is left as it was.
        let api = Error::Api(Box::new(api(503, None)));
        assert_eq!(api.clone().resumable_at(None).request_id(), None);
        assert_eq!(api.resumable_at(Some("r-2")).request_id(), Some("r-2"));
    }

    #[test]
    fn snippet_cuts_on_characters() {
        assert_eq!(snippet("héllo", 2), "hé…");
        assert_eq!(snippet("hi", 5), "hi");
    }
}

//! The one bridge from core errors to Python exceptions (docs/architecture.md#how-errors-reach-python).
//!
//! Every failure that leaves a pymethod goes through [`PyBankfeedError`]: core errors convert with
//! `?` (`From<Error> for PyErr`), the run helpers attach the client that makes a challenge
//! answerable, and the classes of `bankfeed.errors` are imported once and kept.

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyType};

use super::challenge;
use super::convert;
use super::operation::Flavor;
use crate::error::{Advice, ApiError, ApiErrorKind, Body, Error};
use crate::Client;

/// A failure on its way to Python. Build it with `?` or `From`; raise it by converting to `PyErr`.
/// Boxed: a failure is rare, and the results that may carry one stay small.
pub(crate) struct PyBankfeedError(Box<Failure>);

enum Failure {
    /// A core error; `client` makes a `ChallengeRequired`'s challenge answerable, in the flavor
    /// of the client that raised it (an `AsyncClient` gives an `AsyncChallenge`).
    /// `call` is the Python method that failed, whose terms the next steps are given in.
    Core { error: Error, client: Option<(Client, Flavor)>, call: Option<&'static str> },
    /// A Python exception (Ctrl-C while waiting, a failed conversion): raised as it is.
    Python(PyErr),
    /// bankfeed's own failure outside the core (a panicked background task, a runtime that did
    /// not start): a plain `BankfeedError` with this text.
    Internal(String),
}

impl PyBankfeedError {
    /// `error`, with the client whose call failed (a `ChallengeRequired` then carries a challenge
    /// that can be answered).
    /// `call` is the Python method that failed (`investments`, `attributes_many`), when known: the
    /// error's next steps name it (see [`PythonAdvice`]).
    pub(crate) fn with_client(error: Error, client: &Client, flavor: Flavor, call: Option<&'static str>) -> Self {
        PyBankfeedError(Box::new(Failure::Core { error, client: Some((client.clone(), flavor)), call }))
    }

    pub(crate) fn internal(text: impl Into<String>) -> Self {
        PyBankfeedError(Box::new(Failure::Internal(text.into())))
    }

    /// The exception to raise. Never fails: when the rich exception cannot be built, the
    /// original text still arrives as a `BankfeedError`, with the bridge's failure as its cause.
    fn into_pyerr(self, py: Python<'_>) -> PyErr {
        let (error, client, call) = match *self.0 {
            Failure::Python(err) => return err,
            Failure::Internal(text) => return fallback(py, &text, None),
            Failure::Core { error, client, call } => (error, client, call),
        };
        let text = error.explained(&PythonAdvice { call }).to_string();
        match build(py, error, client.as_ref(), text.clone()) {
            Ok(err) => err,
            Err(failure) => fallback(py, &text, Some(failure)),
        }
    }
}

impl From<Error> for PyBankfeedError {
    fn from(error: Error) -> Self {
        PyBankfeedError(Box::new(Failure::Core { error, client: None, call: None }))
    }
}

impl From<PyErr> for PyBankfeedError {
    fn from(err: PyErr) -> Self {
        PyBankfeedError(Box::new(Failure::Python(err)))
    }
}

impl From<PyBankfeedError> for PyErr {
    fn from(error: PyBankfeedError) -> Self {
        Python::attach(|py| error.into_pyerr(py))
    }
}

impl From<Error> for PyErr {
    fn from(error: Error) -> Self {
        PyBankfeedError::from(error).into()
    }
}

/// The classes of `bankfeed.errors` the bridge raises. The order is that of [`Class::ALL`].
#[derive(Clone, Copy)]
enum Class {
    BankfeedError,
    ConfigError,
    InvalidAnswer,
    ChallengeRequired,
    TooManyChallenges,
    PendingTimeout,
    TransportError,
    DecodeError,
    ProtocolError,
    ClientClosed,
    ApiError,
    Unauthorized,
    InvalidLogin,
    LoginDisabled,
    InvalidSecurityResponse,
    SessionError,
    ConcurrentSession,
    RetryLater,
    RateLimited,
    InvalidRequest,
    InstitutionUnavailable,
    AggregationError,
}

impl Class {
    const ALL: [Class; 22] = [
        Class::BankfeedError,
        Class::ConfigError,
        Class::InvalidAnswer,
        Class::ChallengeRequired,
        Class::TooManyChallenges,
        Class::PendingTimeout,
        Class::TransportError,
        Class::DecodeError,
        Class::ProtocolError,
        Class::ClientClosed,
        Class::ApiError,
        Class::Unauthorized,
        Class::InvalidLogin,
        Class::LoginDisabled,
        Class::InvalidSecurityResponse,
        Class::SessionError,
        Class::ConcurrentSession,
        Class::RetryLater,
        Class::RateLimited,
        Class::InvalidRequest,
        Class::InstitutionUnavailable,
        Class::AggregationError,
    ];

    fn name(self) -> &'static str {
        match self {
            Class::BankfeedError => "BankfeedError",
            Class::ConfigError => "ConfigError",
            Class::InvalidAnswer => "InvalidAnswer",
            Class::ChallengeRequired => "ChallengeRequired",
            Class::TooManyChallenges => "TooManyChallenges",
            Class::PendingTimeout => "PendingTimeout",
            Class::TransportError => "TransportError",
            Class::DecodeError => "DecodeError",
            Class::ProtocolError => "ProtocolError",
            Class::ClientClosed => "ClientClosed",
            Class::ApiError => "ApiError",
            Class::Unauthorized => "Unauthorized",
            Class::InvalidLogin => "InvalidLogin",
            Class::LoginDisabled => "LoginDisabled",
            Class::InvalidSecurityResponse => "InvalidSecurityResponse",
            Class::SessionError => "SessionError",
            Class::ConcurrentSession => "ConcurrentSession",
            Class::RetryLater => "RetryLater",
            Class::RateLimited => "RateLimited",
            Class::InvalidRequest => "InvalidRequest",
            Class::InstitutionUnavailable => "InstitutionUnavailable",
            Class::AggregationError => "AggregationError",
        }
    }

    fn of_api(kind: ApiErrorKind) -> Class {
        match kind {
            ApiErrorKind::Unauthorized => Class::Unauthorized,
            ApiErrorKind::InvalidLogin => Class::InvalidLogin,
            ApiErrorKind::LoginDisabled => Class::LoginDisabled,
            ApiErrorKind::InvalidSecurityResponse => Class::InvalidSecurityResponse,
            ApiErrorKind::Session => Class::SessionError,
            ApiErrorKind::ConcurrentSession => Class::ConcurrentSession,
            ApiErrorKind::RetryLater => Class::RetryLater,
            ApiErrorKind::RateLimited => Class::RateLimited,
            ApiErrorKind::InvalidRequest => Class::InvalidRequest,
            ApiErrorKind::InstitutionUnavailable => Class::InstitutionUnavailable,
            ApiErrorKind::Aggregation => Class::AggregationError,
            ApiErrorKind::Other => Class::ApiError,
        }
    }

    /// The class object, imported from `bankfeed.errors` on the first error and kept.
    fn get(self, py: Python<'_>) -> PyResult<Bound<'_, PyType>> {
        static CLASSES: PyOnceLock<Vec<Py<PyType>>> = PyOnceLock::new();
        let classes = CLASSES.get_or_try_init(py, || {
            let module = py.import("bankfeed.errors")?;
            Class::ALL
                .iter()
                .map(|class| Ok(module.getattr(class.name())?.cast_into::<PyType>()?.unbind()))
                .collect::<PyResult<Vec<_>>>()
        })?;
        let class = classes.get(self as usize).ok_or_else(|| PyRuntimeError::new_err(self.name()))?;
        Ok(class.bind(py).clone())
    }
}

/// `bf.ClientClosed(text, operation=operation)` with a text of the binding's own: what only a bulk
/// iterator knows (which of its logins a close cut off, or that it belongs to another process).
/// Never fails: when the class cannot be built, the text still arrives (see [`fallback`]).
pub(crate) fn client_closed(py: Python<'_>, text: &str, operation: &str) -> PyErr {
    let built = (|| {
        let fields = PyDict::new(py);
        fields.set_item("operation", operation)?;
        Class::ClientClosed.get(py)?.call((text,), Some(&fields))
    })();
    match built {
        Ok(value) => PyErr::from_value(value),
        Err(failure) => fallback(py, text, Some(failure)),
    }
}

/// `BankfeedError(text)`, caused by the bridge's own `failure` when there was one; a
/// `RuntimeError(text)` only if `bankfeed.errors` itself cannot be imported.
fn fallback(py: Python<'_>, text: &str, failure: Option<PyErr>) -> PyErr {
    let err = match Class::BankfeedError.get(py).and_then(|class| class.call1((text,))) {
        Ok(value) => PyErr::from_value(value),
        Err(_) => PyRuntimeError::new_err(text.to_owned()),
    };
    err.set_cause(py, failure);
    err
}

/// The exception of `error`: `cls(text, **fields)`, its fields kept as attributes.
fn build(py: Python<'_>, error: Error, client: Option<&(Client, Flavor)>, text: String) -> PyResult<PyErr> {
    let fields = PyDict::new(py);
    let class = match error {
        Error::Config { field, rule } => {
            fields.set_item("field", field)?;
            fields.set_item("rule", rule)?;
            Class::ConfigError
        }
        Error::InvalidAnswer { prompt, rule } => {
            fields.set_item("prompt", prompt)?;
            fields.set_item("rule", rule)?;
            Class::InvalidAnswer
        }
        Error::AnswerRefused { error, challenge } => {
            let challenge =
                client.map(|(client, flavor)| challenge::to_py(py, client, *flavor, *challenge)).transpose()?;
            fields.set_item("challenge", challenge)?;
            api_fields(py, &fields, &error)?;
            Class::of_api(error.kind())
        }
        Error::Api(api) => {
            api_fields(py, &fields, &api)?;
            Class::of_api(api.kind())
        }
        Error::ChallengeRequired(challenge) => {
            fields.set_item("request_id", &challenge.request_id)?;
            fields.set_item("prompts", challenge.prompts().collect::<Vec<_>>())?;
            let challenge =
                client.map(|(client, flavor)| challenge::to_py(py, client, *flavor, *challenge)).transpose()?;
            fields.set_item("challenge", challenge)?;
            Class::ChallengeRequired
        }
        Error::TooManyChallenges { rounds, request_id } => {
            fields.set_item("rounds", rounds)?;
            fields.set_item("request_id", request_id)?;
            Class::TooManyChallenges
        }
        Error::PendingTimeout { operation, request_id, waited, .. } => {
            fields.set_item("operation", operation)?;
            fields.set_item("request_id", request_id)?;
            fields.set_item("waited", waited.as_secs_f64())?;
            Class::PendingTimeout
        }
        Error::Transport { operation, timed_out, attempts, resumable, .. } => {
            fields.set_item("operation", operation)?;
            fields.set_item("timed_out", timed_out)?;
            fields.set_item("attempts", attempts)?;
            fields.set_item("request_id", resumable.map(|resumable| resumable.request_id))?;
            Class::TransportError
        }
        // docs/errors.md#protocol-surprises
        Error::Protocol { operation, status, request_id, snippet, .. } => {
            fields.set_item("operation", operation)?;
            fields.set_item("status", status)?;
            fields.set_item("request_id", request_id)?;
            fields.set_item("snippet", snippet)?;
            Class::ProtocolError
        }
        // docs/errors.md#protocol-surprises: an answer, valid but not of the login asked for.
        Error::OtherLogin { operation, request_id, snippet, .. } => {
            fields.set_item("operation", operation)?;
            fields.set_item("status", 200)?;
            fields.set_item("request_id", request_id)?;
            fields.set_item("snippet", snippet)?;
            Class::ProtocolError
        }
        Error::Decode { operation, status, snippet, resumable, .. } => {
            fields.set_item("operation", operation)?;
            fields.set_item("status", status)?;
            fields.set_item("snippet", snippet)?;
            fields.set_item("request_id", resumable.map(|resumable| resumable.request_id))?;
            Class::DecodeError
        }
        Error::Closed { operation } => {
            fields.set_item("operation", operation)?;
            Class::ClientClosed
        }
        Error::Handler(inner) => {
            // The caller's own exception, raised as it was.
            if let Some(err) = inner.downcast_ref::<PyErr>() {
                return Ok(err.clone_ref(py));
            }
            Class::BankfeedError
        }
        Error::Internal { .. } => Class::BankfeedError,
    };
    Ok(PyErr::from_value(class.get(py)?.call((text,), Some(&fields))?))
}

/// The fields every `ApiError` keeps: what the service said, as it said it.
fn api_fields(py: Python<'_>, fields: &Bound<'_, PyDict>, api: &ApiError) -> PyResult<()> {
    fields.set_item("code", &api.code)?;
    fields.set_item("status", api.status)?;
    fields.set_item("message", &api.message)?;
    fields.set_item("request_id", &api.request_id)?;
    fields.set_item("retry_after", api.retry_after.map(|d| d.as_secs_f64()))?;
    fields.set_item("attempts", api.attempts)?;
    match &api.body {
        Body::Json(value) => fields.set_item("body", convert::to_python(py, value)?),
        Body::Text(text) => fields.set_item("body", text),
    }
}

/// The next steps of an error in the words of the Python API (docs/errors.md): the core's errors
/// carry the facts, and the method that failed decides which call resumes a pending operation.
struct PythonAdvice {
    /// The Python method that failed, when known.
    call: Option<&'static str>,
}

impl Advice for PythonAdvice {
    fn resume(&self, f: &mut std::fmt::Formatter<'_>, operation: &str, id: &str) -> std::fmt::Result {
        // The method's name decides (an attributes call pending on its account detail is resumed
        // by the attributes call); without one, the operation that was pending does.
        let call = self.call.unwrap_or(operation);
        if call.ends_with("_many") {
            // A job that read the failure from a bulk call resumes its pending logins with it.
            return write!(
                f,
                "resume polling it with client.{call}(..., request_ids={{login_id: {id:?}}}), one entry per pending login"
            );
        }
        let again = match call {
            "investments" | "Investments" => "client.investments(login_id, ",
            _ if call.eq_ignore_ascii_case("attributes") || call.ends_with("Attributes") => {
                "client.attributes(login_id, ..., "
            }
            _ => {
                return write!(
                    f,
                    "resume polling it with client.session({id:?}, login_id=login_id) and the same call on that session"
                )
            }
        };
        write!(f, "call again with request_id={id:?} to resume polling it, as {again}request_id={id:?})")
    }

    fn answer_challenge(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("answer them with challenge.answer(...) or pass on_challenge=")
    }

    fn closed_by(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("close(), or the end of its with or async with block")
    }

    fn own_request_ids(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(
            "request_ids={login_id: the RequestId of that login's own call}, or client.session(request_id, \
             login_id=...) with the LoginId that opened it",
        )
    }
}

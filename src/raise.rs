//! How a failure becomes the exception it raises: the classes of `bankfeed.errors`, imported once
//! and kept, the fields each keeps, and the next steps in the words of the Python API
//! (docs/architecture.md#how-errors-reach-python). The failure itself is `error.rs`'s.

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyType};
use pyo3::PyTypeInfo;

use crate::classes;
use crate::convert;
use crate::error::{Failure, PyBankfeedError};
use crate::invocation::Flavor;
use bankfeed::error::{Advice, ApiError, ApiErrorKind, Body, Error};
use bankfeed::Client;

impl From<PyBankfeedError> for PyErr {
    fn from(error: PyBankfeedError) -> Self {
        Python::attach(|py| into_pyerr(error, py))
    }
}

/// The exception to raise. Never fails: when the rich exception cannot be built, the
/// original text still arrives as a `BankfeedError`, with the bridge's failure as its cause.
fn into_pyerr(error: PyBankfeedError, py: Python<'_>) -> PyErr {
    let (error, client, call) = match *error.0 {
        Failure::Python(err) => return err,
        Failure::Internal(text) => return fallback(py, &text, None),
        Failure::Core { error, client, call } => (error, client, call),
    };
    let text = message(&error, call);
    match build(py, &text, error, client.as_ref()) {
        Ok(err) => err,
        Err(failure) => fallback(py, &text, Some(failure)),
    }
}

/// The classes of `bankfeed.errors` the bridge raises, one line each, named as Python names them
/// (`bf::ConfigError` is `bf.ConfigError`; docs/errors.md#the-classes).
/// Each is imported on its first use and kept: a class the module replaces later does not change
/// what the bridge raises.
mod bf {
    pyo3::import_exception!(bankfeed.errors, BankfeedError);
    pyo3::import_exception!(bankfeed.errors, ConfigError);
    pyo3::import_exception!(bankfeed.errors, InvalidAnswer);
    pyo3::import_exception!(bankfeed.errors, ChallengeRequired);
    pyo3::import_exception!(bankfeed.errors, TooManyChallenges);
    pyo3::import_exception!(bankfeed.errors, PendingTimeout);
    pyo3::import_exception!(bankfeed.errors, TransportError);
    pyo3::import_exception!(bankfeed.errors, DecodeError);
    pyo3::import_exception!(bankfeed.errors, ProtocolError);
    pyo3::import_exception!(bankfeed.errors, ClientClosed);
    pyo3::import_exception!(bankfeed.errors, ConnectTimeout);
    pyo3::import_exception!(bankfeed.errors, CassetteError);
    pyo3::import_exception!(bankfeed.errors, ApiError);
    pyo3::import_exception!(bankfeed.errors, Unauthorized);
    pyo3::import_exception!(bankfeed.errors, InvalidLogin);
    pyo3::import_exception!(bankfeed.errors, LoginDisabled);
    pyo3::import_exception!(bankfeed.errors, InvalidSecurityResponse);
    pyo3::import_exception!(bankfeed.errors, SessionError);
    pyo3::import_exception!(bankfeed.errors, ConcurrentSession);
    pyo3::import_exception!(bankfeed.errors, RetryLater);
    pyo3::import_exception!(bankfeed.errors, RateLimited);
    pyo3::import_exception!(bankfeed.errors, InvalidRequest);
    pyo3::import_exception!(bankfeed.errors, InstitutionUnavailable);
    pyo3::import_exception!(bankfeed.errors, AggregationError);
}

/// The class `C` of `bankfeed.errors`. `import_exception!` panics when its import fails, so the
/// module is imported here first (a lookup in `sys.modules` once it is loaded): a module that
/// cannot be imported is then an error, which [`fallback`] turns into a `RuntimeError`. Only a
/// class deleted from the module would still panic, raised as pyo3's `PanicException`.
fn class<C: PyTypeInfo>(py: Python<'_>) -> PyResult<Bound<'_, PyType>> {
    py.import("bankfeed.errors")?;
    Ok(C::type_object(py))
}

/// The class of an `ApiError` of `kind`.
fn api_class(py: Python<'_>, kind: ApiErrorKind) -> PyResult<Bound<'_, PyType>> {
    match kind {
        ApiErrorKind::Unauthorized => class::<bf::Unauthorized>(py),
        ApiErrorKind::InvalidLogin => class::<bf::InvalidLogin>(py),
        ApiErrorKind::LoginDisabled => class::<bf::LoginDisabled>(py),
        ApiErrorKind::InvalidSecurityResponse => class::<bf::InvalidSecurityResponse>(py),
        ApiErrorKind::Session => class::<bf::SessionError>(py),
        ApiErrorKind::ConcurrentSession => class::<bf::ConcurrentSession>(py),
        ApiErrorKind::RetryLater => class::<bf::RetryLater>(py),
        ApiErrorKind::RateLimited => class::<bf::RateLimited>(py),
        ApiErrorKind::InvalidRequest => class::<bf::InvalidRequest>(py),
        ApiErrorKind::InstitutionUnavailable => class::<bf::InstitutionUnavailable>(py),
        ApiErrorKind::Aggregation => class::<bf::AggregationError>(py),
        ApiErrorKind::Other => class::<bf::ApiError>(py),
    }
}

/// `bf.ClientClosed(text, operation=operation)` with a text of the binding's own: what only a bulk
/// iterator knows (which of its logins a close cut off, or that it belongs to another process).
/// Never fails: when the class cannot be built, the text still arrives (see [`fallback`]).
pub(crate) fn client_closed(py: Python<'_>, text: &str, operation: &str) -> PyErr {
    let built = (|| {
        let fields = PyDict::new(py);
        fields.set_item("operation", operation)?;
        class::<bf::ClientClosed>(py)?.call((text,), Some(&fields))
    })();
    match built {
        Ok(value) => PyErr::from_value(value),
        Err(failure) => fallback(py, text, Some(failure)),
    }
}

/// `BankfeedError(text)`, caused by the bridge's own `failure` when there was one; a
/// `RuntimeError(text)` only if `bankfeed.errors` itself cannot be imported.
fn fallback(py: Python<'_>, text: &str, failure: Option<PyErr>) -> PyErr {
    let err = match class::<bf::BankfeedError>(py).and_then(|class| class.call1((text,))) {
        Ok(value) => PyErr::from_value(value),
        Err(_) => PyRuntimeError::new_err(text.to_owned()),
    };
    err.set_cause(py, failure);
    err
}

/// The text of `error`'s exception, which the fallback keeps too: its facts, with the next steps
/// in the words of the Python method `call` that failed ([`PythonAdvice`]).
fn message(error: &Error, call: Option<&'static str>) -> String {
    error.explained(&PythonAdvice { call }).to_string()
}

/// The exception of `error`: `cls(text, **fields)`, its fields kept as attributes
/// (docs/errors.md#the-classes).
fn build(py: Python<'_>, text: &str, error: Error, client: Option<&(Client, Flavor)>) -> PyResult<PyErr> {
    let fields = PyDict::new(py);
    let class = match error {
        Error::Config { field, rule } => {
            fields.set_item("field", field)?;
            fields.set_item("rule", rule)?;
            class::<bf::ConfigError>(py)?
        }
        Error::InvalidAnswer { prompt, rule } => {
            fields.set_item("prompt", prompt)?;
            fields.set_item("rule", rule)?;
            class::<bf::InvalidAnswer>(py)?
        }
        Error::AnswerRefused { error, challenge } => {
            let challenge =
                client.map(|(client, flavor)| classes::challenge_to_py(py, client, *flavor, *challenge)).transpose()?;
            fields.set_item("challenge", challenge)?;
            api_fields(py, &fields, &error)?;
            api_class(py, error.kind())?
        }
        Error::Api(api) => {
            api_fields(py, &fields, &api)?;
            api_class(py, api.kind())?
        }
        Error::ChallengeRequired(challenge) => {
            fields.set_item("request_id", &challenge.request_id)?;
            fields.set_item("prompts", challenge.prompts().collect::<Vec<_>>())?;
            let challenge =
                client.map(|(client, flavor)| classes::challenge_to_py(py, client, *flavor, *challenge)).transpose()?;
            fields.set_item("challenge", challenge)?;
            class::<bf::ChallengeRequired>(py)?
        }
        Error::TooManyChallenges { rounds, request_id } => {
            fields.set_item("rounds", rounds)?;
            fields.set_item("request_id", request_id)?;
            class::<bf::TooManyChallenges>(py)?
        }
        Error::PendingTimeout { operation, request_id, waited, partial } => {
            fields.set_item("operation", operation)?;
            fields.set_item("request_id", request_id)?;
            fields.set_item("waited", waited.as_secs_f64())?;
            let partial = partial.as_deref().map(|partial| convert::to_python(py, partial)).transpose()?;
            fields.set_item("partial", partial)?;
            class::<bf::PendingTimeout>(py)?
        }
        Error::Transport { operation, timed_out, attempts, resumable, .. } => {
            fields.set_item("operation", operation)?;
            fields.set_item("timed_out", timed_out)?;
            fields.set_item("attempts", attempts)?;
            fields.set_item("request_id", resumable.map(|resumable| resumable.request_id))?;
            class::<bf::TransportError>(py)?
        }
        // docs/errors.md#protocol-surprises
        Error::Protocol { operation, status, request_id, snippet, .. } => {
            fields.set_item("operation", operation)?;
            fields.set_item("status", status)?;
            fields.set_item("request_id", request_id)?;
            fields.set_item("snippet", snippet)?;
            class::<bf::ProtocolError>(py)?
        }
        // docs/errors.md#protocol-surprises: an answer, valid but not of the login asked for.
        Error::OtherLogin { operation, request_id, snippet, .. } => {
            fields.set_item("operation", operation)?;
            fields.set_item("status", 200)?;
            fields.set_item("request_id", request_id)?;
            fields.set_item("snippet", snippet)?;
            class::<bf::ProtocolError>(py)?
        }
        Error::Decode { operation, status, snippet, resumable, .. } => {
            fields.set_item("operation", operation)?;
            fields.set_item("status", status)?;
            fields.set_item("snippet", snippet)?;
            fields.set_item("request_id", resumable.map(|resumable| resumable.request_id))?;
            class::<bf::DecodeError>(py)?
        }
        Error::Closed { operation } => {
            fields.set_item("operation", operation)?;
            class::<bf::ClientClosed>(py)?
        }
        Error::Handler(inner) => {
            // The caller's own exception, raised as it was.
            if let Some(err) = inner.downcast_ref::<PyErr>() {
                return Ok(err.clone_ref(py));
            }
            class::<bf::BankfeedError>(py)?
        }
        Error::Internal { .. } => class::<bf::BankfeedError>(py)?,
        // docs/cassettes.md#when-a-replay-fails: what a test needs to fix its cassette or its calls.
        Error::Cassette { path, .. } | Error::CassetteSecret { path, .. } => {
            cassette_fields(&fields, &path, None, None)?;
            class::<bf::CassetteError>(py)?
        }
        Error::CassetteRunOut { path, request, .. } => {
            cassette_fields(&fields, &path, Some(&request), None)?;
            class::<bf::CassetteError>(py)?
        }
        Error::CassetteUnmatched { path, request, closest } => {
            cassette_fields(&fields, &path, Some(&request), closest.as_ref())?;
            class::<bf::CassetteError>(py)?
        }
        Error::ConnectTimeout { waited } => {
            fields.set_item("waited", waited.as_secs_f64())?;
            class::<bf::ConnectTimeout>(py)?
        }
    };
    Ok(PyErr::from_value(class.call((text,), Some(&fields))?))
}

/// The fields of a `CassetteError`: the file, the request after redaction, the closest recorded
/// request and how the two differ.
fn cassette_fields(
    fields: &Bound<'_, PyDict>,
    path: &str,
    request: Option<&str>,
    closest: Option<&(String, Vec<String>)>,
) -> PyResult<()> {
    fields.set_item("path", path)?;
    fields.set_item("request", request)?;
    fields.set_item("closest", closest.map(|(recorded, _)| recorded))?;
    fields.set_item("differences", closest.map_or_else(Vec::new, |(_, differences)| differences.clone()))
}

/// The fields every `ApiError` keeps: what the service said, as it said it.
fn api_fields(py: Python<'_>, fields: &Bound<'_, PyDict>, api: &ApiError) -> PyResult<()> {
    fields.set_item("code", &api.code)?;
    fields.set_item("status", api.status)?;
    fields.set_item("message", &api.message)?;
    fields.set_item("request_id", &api.request_id)?;
    fields.set_item("retry_after", api.retry_after.map(|d| d.as_secs_f64()))?;
    fields.set_item("attempts", api.attempts)?;
    fields.set_item("operation", &api.operation)?;
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
        match self.call {
            // A job's login (a bulk call, an export): the person is not there to answer, so the
            // message says what they can do (docs/answering.md#cached-reads-that-ask-a-question).
            Some(call) if call.ends_with("_many") => write!(
                f,
                "nothing was answered, and only the login's user can: give the job their answers through \
                 on_challenge= (bf.answers({{prompt: answer}}) with client.{call}, bf.export or \
                 bankfeed.dlt.source; --on-challenge MODULE:NAME with bankfeed export), or have the user \
                 reconnect through the widget (client.connect); then fetch this login again"
            ),
            _ => f.write_str("answer them with challenge.answer(...) or pass on_challenge="),
        }
    }

    fn closed_by(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("close(), or the end of its with or async with block")
    }

    fn direct_connection(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("proxy=None")
    }

    fn own_request_ids(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(
            "request_ids={login_id: the RequestId of that login's own call}, or client.session(request_id, \
             login_id=...) with the LoginId that opened it",
        )
    }
}

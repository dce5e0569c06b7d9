//! The one place where core errors become Python exceptions (the classes of `bankfeed.errors`).

use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::challenge::PyChallenge;
use super::convert;
use crate::error::{ApiErrorKind, Body, Error};
use crate::Client;

fn api_class(kind: ApiErrorKind) -> &'static str {
    match kind {
        ApiErrorKind::Unauthorized => "Unauthorized",
        ApiErrorKind::InvalidLogin => "InvalidLogin",
        ApiErrorKind::LoginDisabled => "LoginDisabled",
        ApiErrorKind::InvalidSecurityResponse => "InvalidSecurityResponse",
        ApiErrorKind::Session => "SessionError",
        ApiErrorKind::ConcurrentSession => "ConcurrentSession",
        ApiErrorKind::RetryLater => "RetryLater",
        ApiErrorKind::RateLimited => "RateLimited",
        ApiErrorKind::InvalidRequest => "InvalidRequest",
        ApiErrorKind::InstitutionUnavailable => "InstitutionUnavailable",
        ApiErrorKind::Aggregation => "AggregationError",
        ApiErrorKind::Other => "ApiError",
    }
}

/// Maps `error` to its exception. `client` makes a `ChallengeRequired`'s challenge answerable.
pub(crate) fn to_py(py: Python<'_>, error: Error, client: Option<&Client>) -> PyErr {
    match build(py, error, client) {
        Ok(err) | Err(err) => err,
    }
}

fn build(py: Python<'_>, error: Error, client: Option<&Client>) -> PyResult<PyErr> {
    let text = error.to_string();
    let fields = PyDict::new(py);
    let class = match error {
        Error::Config { field, rule } => {
            fields.set_item("field", field)?;
            fields.set_item("rule", rule)?;
            "ConfigError"
        }
        Error::InvalidAnswer { prompt, rule } => {
            fields.set_item("prompt", prompt)?;
            fields.set_item("rule", rule)?;
            "InvalidAnswer"
        }
        Error::Api(api) => {
            fields.set_item("code", &api.code)?;
            fields.set_item("status", api.status)?;
            fields.set_item("message", &api.message)?;
            fields.set_item("request_id", &api.request_id)?;
            fields.set_item("retry_after", api.retry_after.map(|d| d.as_secs_f64()))?;
            match &api.body {
                Body::Json(value) => fields.set_item("body", convert::to_python(py, value)?)?,
                Body::Text(text) => fields.set_item("body", text)?,
            }
            api_class(api.kind())
        }
        Error::ChallengeRequired(challenge) => {
            fields.set_item("request_id", &challenge.request_id)?;
            fields.set_item("prompts", challenge.prompts().collect::<Vec<_>>())?;
            let challenge = client.map(|client| PyChallenge::new(client.clone(), *challenge));
            fields.set_item("challenge", challenge)?;
            "ChallengeRequired"
        }
        Error::TooManyChallenges { rounds, request_id } => {
            fields.set_item("rounds", rounds)?;
            fields.set_item("request_id", request_id)?;
            "TooManyChallenges"
        }
        Error::PendingTimeout { operation, request_id, waited } => {
            fields.set_item("operation", operation)?;
            fields.set_item("request_id", request_id)?;
            fields.set_item("waited", waited.as_secs_f64())?;
            "PendingTimeout"
        }
        Error::Transport { operation, timed_out, .. } => {
            fields.set_item("operation", operation)?;
            fields.set_item("timed_out", timed_out)?;
            "TransportError"
        }
        Error::Protocol { operation, status, request_id, snippet, .. } => {
            fields.set_item("operation", operation)?;
            fields.set_item("status", status)?;
            fields.set_item("request_id", request_id)?;
            fields.set_item("snippet", snippet)?;
            "ProtocolError"
        }
        Error::Decode { operation, status, snippet, .. } => {
            fields.set_item("operation", operation)?;
            fields.set_item("status", status)?;
            fields.set_item("snippet", snippet)?;
            "DecodeError"
        }
        Error::Handler(inner) => {
            // The caller's own exception, raised as it was.
            if let Some(err) = inner.downcast_ref::<PyErr>() {
                return Ok(err.clone_ref(py));
            }
            "BankfeedError"
        }
    };
    let class = py.import("bankfeed.errors")?.getattr(class)?;
    Ok(PyErr::from_value(class.call((text,), Some(&fields))?))
}

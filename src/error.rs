//! The binding's one error type: a failure on its way to Python, what it knows of the call that
//! failed (docs/architecture.md#how-errors-reach-python). What it becomes, the exception of
//! `bankfeed.errors` that is raised, is `raise.rs`'s: the `From<PyBankfeedError> for PyErr` there.

use pyo3::prelude::*;

use crate::invocation::Flavor;
use bankfeed::error::Error;
use bankfeed::Client;

/// A failure on its way to Python. Build it with `?` or `From`; raise it by converting to `PyErr`.
/// Boxed: a failure is rare, and the results that may carry one stay small.
pub(crate) struct PyBankfeedError(pub(crate) Box<Failure>);

pub(crate) enum Failure {
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
    /// error's next steps name it (see `PythonAdvice` in raise.rs).
    pub(crate) fn with_client(error: Error, client: &Client, flavor: Flavor, call: Option<&'static str>) -> Self {
        PyBankfeedError(Box::new(Failure::Core { error, client: Some((client.clone(), flavor)), call }))
    }

    pub(crate) fn internal(text: impl Into<String>) -> Self {
        PyBankfeedError(Box::new(Failure::Internal(text.into())))
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

/// A core error as the exception it raises. `?` cannot turn an [`Error`] into a `PyErr` by
/// itself (neither type is the binding's, so no `From` may join them): an error says
/// `.into_exception()`, a result `.or_raise()?`.
pub(crate) trait IntoException {
    fn into_exception(self) -> PyErr;
}

impl IntoException for Error {
    fn into_exception(self) -> PyErr {
        PyBankfeedError::from(self).into()
    }
}

/// A core result whose error is raised as its exception (see [`IntoException`]).
pub(crate) trait OrRaise<T> {
    fn or_raise(self) -> PyResult<T>;
}

impl<T> OrRaise<T> for Result<T, Error> {
    fn or_raise(self) -> PyResult<T> {
        self.map_err(IntoException::into_exception)
    }
}

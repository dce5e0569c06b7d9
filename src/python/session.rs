//! `Session`: an open session and the data operations it serves.

use pyo3::prelude::*;

use super::blocking;
use super::challenge::PyChallenge;
use super::convert;
use super::errors::to_py;
use crate::authorize::{Session, Step};
use crate::Client;

/// An open session: its `request_id` serves the data operations.
///
///     session = client.authorize_cached(login_id)
///     payload = session.investments()
#[pyclass(name = "Session", module = "bankfeed", frozen)]
pub(crate) struct PySession {
    client: Client,
    session: Session,
}

#[pymethods]
impl PySession {
    /// The RequestId of the session.
    #[getter]
    fn request_id(&self) -> &str {
        &self.session.request_id
    }

    /// The LoginId of the saved connection.
    #[getter]
    fn login_id(&self) -> Option<&str> {
        self.session.login_id.as_deref()
    }

    /// `Login` as sent (`Id`, `Username`, `IsScheduledRefresh`, `LastRefresh`, `Type`), or None.
    #[getter]
    fn login<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::raw_field(py, &self.session.raw, Some("Login"))
    }

    /// `Institution` as sent: a name, or a dict with `Id` and `Name`.
    #[getter]
    fn institution<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::raw_field(py, &self.session.raw, Some("Institution"))
    }

    /// `Links` as sent: dicts with `rel`, `href` and `example`.
    #[getter]
    fn links<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::raw_field(py, &self.session.raw, Some("Links"))
    }

    /// The 200 body exactly as the server sent it.
    #[getter]
    fn raw<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::raw_field(py, &self.session.raw, None)
    }

    /// The Investments payload of this session, 202 answers polled until 200.
    fn investments<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let (client, session) = (self.client.clone(), self.session.clone());
        let raw = blocking::run_plain(py, async move { client.investments(&session).await })?
            .map_err(|e| to_py(py, e, Some(&self.client)))?;
        convert::raw_field(py, raw.bytes(), None)
    }

    fn __repr__(&self) -> String {
        format!(
            "Session(request_id={:?}, login_id={:?})",
            self.session.request_id,
            self.session.login_id.as_deref().unwrap_or("None")
        )
    }
}

/// A step as Python sees it: a `Session` or a `Challenge`.
pub(crate) fn step_to_py(py: Python<'_>, client: &Client, step: Step) -> PyResult<Py<PyAny>> {
    Ok(match step {
        Step::Session(session) => Py::new(py, PySession { client: client.clone(), session })?.into_any(),
        Step::Challenge(challenge) => Py::new(py, PyChallenge::new(client.clone(), challenge))?.into_any(),
    })
}

pub(crate) fn session_to_py(py: Python<'_>, client: &Client, session: Session) -> PyResult<Py<PySession>> {
    Py::new(py, PySession { client: client.clone(), session })
}

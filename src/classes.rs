//! The classes of the core's Client, Session and Challenge (each with its async twin) and of
//! SecurityChallenge: what each holds, and the Python object of a core value. Their methods are
//! `client.rs`, `session.rs` and `challenge.rs`, which hand each other these objects, so that none
//! of those imports another (docs/architecture.md#one-call-two-runners).

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

use crate::convert::Parsed;
use crate::invocation::Flavor;
use bankfeed::authorize::{Challenge, SecurityChallenge, Session, Step};
use bankfeed::Client;

// What `Client` and `AsyncClient` share: the configuration, its getters, repr, pickling,
// `close()`, and every operation, run the way `flavor` says
// (docs/architecture.md#one-call-two-runners).
#[doc = stub_doc!("_BaseClient")]
#[pyclass(name = "_BaseClient", module = "bankfeed", frozen, subclass)]
pub(crate) struct PyBaseClient {
    pub(crate) client: Client,
    pub(crate) flavor: Flavor,
}

#[doc = stub_doc!("Client")]
#[pyclass(name = "Client", module = "bankfeed", frozen, extends = PyBaseClient)]
pub(crate) struct PyClient;

#[doc = stub_doc!("AsyncClient")]
#[pyclass(name = "AsyncClient", module = "bankfeed", frozen, extends = PyBaseClient)]
pub(crate) struct PyAsyncClient;

/// The Python object of `client`: a `Client`, or an `AsyncClient`.
pub(crate) fn client_to_py(py: Python<'_>, client: &Client, flavor: Flavor) -> PyResult<Py<PyAny>> {
    let base = PyClassInitializer::from(PyBaseClient { client: client.clone(), flavor });
    Ok(match flavor {
        Flavor::Blocking => Py::new(py, base.add_subclass(PyClient))?.into_any(),
        Flavor::Async => Py::new(py, base.add_subclass(PyAsyncClient))?.into_any(),
    })
}

// What `Session` and `AsyncSession` share: the session, its client, and every data operation,
// run the way `flavor` says (docs/architecture.md#one-call-two-runners).
#[doc = stub_doc!("_BaseSession")]
#[pyclass(name = "_BaseSession", module = "bankfeed", frozen, subclass)]
pub(crate) struct PyBaseSession {
    pub(crate) client: Client,
    pub(crate) flavor: Flavor,
    pub(crate) session: Session,
    pub(crate) raw: Parsed,
}

#[doc = stub_doc!("Session")]
#[pyclass(name = "Session", module = "bankfeed", frozen, extends = PyBaseSession)]
pub(crate) struct PySession;

#[doc = stub_doc!("AsyncSession")]
#[pyclass(name = "AsyncSession", module = "bankfeed", frozen, extends = PyBaseSession)]
pub(crate) struct PyAsyncSession;

/// The Python object of `session`: a `Session`, or an `AsyncSession` for an async client.
pub(crate) fn session_to_py(py: Python<'_>, client: &Client, flavor: Flavor, session: Session) -> PyResult<Py<PyAny>> {
    let base =
        PyClassInitializer::from(PyBaseSession { client: client.clone(), flavor, session, raw: Parsed::default() });
    Ok(match flavor {
        Flavor::Blocking => Py::new(py, base.add_subclass(PySession))?.into_any(),
        Flavor::Async => Py::new(py, base.add_subclass(PyAsyncSession))?.into_any(),
    })
}

/// A step as Python sees it: a session, or a challenge.
pub(crate) fn step_to_py(py: Python<'_>, client: &Client, flavor: Flavor, step: Step) -> PyResult<Py<PyAny>> {
    match step {
        Step::Session(session) => session_to_py(py, client, flavor, session),
        Step::Challenge(found) => challenge_to_py(py, client, flavor, found),
    }
}

// What `Challenge` and `AsyncChallenge` share: the challenge, its client and every method but
// how `answer` runs (docs/architecture.md#one-call-two-runners).
#[doc = stub_doc!("_BaseChallenge")]
#[pyclass(name = "_BaseChallenge", module = "bankfeed", frozen, subclass)]
pub(crate) struct PyBaseChallenge {
    pub(crate) client: Client,
    pub(crate) flavor: Flavor,
    pub(crate) challenge: Challenge,
    pub(crate) raw: Parsed,
    /// Built on first access, then the same objects every time (each keeps its parsed `.raw`).
    pub(crate) challenges: PyOnceLock<Vec<Py<PySecurityChallenge>>>,
}

#[doc = stub_doc!("Challenge")]
#[pyclass(name = "Challenge", module = "bankfeed", frozen, extends = PyBaseChallenge)]
pub(crate) struct PyChallenge;

#[doc = stub_doc!("AsyncChallenge")]
#[pyclass(name = "AsyncChallenge", module = "bankfeed", frozen, extends = PyBaseChallenge)]
pub(crate) struct PyAsyncChallenge;

/// The Python object of `challenge`: a `Challenge`, or an `AsyncChallenge` for an async client.
pub(crate) fn challenge_to_py(
    py: Python<'_>,
    client: &Client,
    flavor: Flavor,
    challenge: Challenge,
) -> PyResult<Py<PyAny>> {
    let base = PyBaseChallenge {
        client: client.clone(),
        flavor,
        challenge,
        raw: Parsed::default(),
        challenges: PyOnceLock::new(),
    };
    let base = PyClassInitializer::from(base);
    Ok(match flavor {
        Flavor::Blocking => Py::new(py, base.add_subclass(PyChallenge))?.into_any(),
        Flavor::Async => Py::new(py, base.add_subclass(PyAsyncChallenge))?.into_any(),
    })
}

#[doc = stub_doc!("SecurityChallenge")]
#[pyclass(name = "SecurityChallenge", module = "bankfeed", frozen)]
pub(crate) struct PySecurityChallenge {
    pub(crate) inner: SecurityChallenge,
    pub(crate) raw: Parsed,
}

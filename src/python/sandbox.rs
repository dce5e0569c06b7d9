//! `Sandbox`: the embedded server, for tests, demos and notebooks.

use std::sync::Mutex;

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use super::blocking;
use super::client::PyClient;
use crate::sandbox::{users, Sandbox, SandboxConfig};

#[allow(clippy::too_many_arguments)]
fn config(
    customer_id: Option<String>,
    host: &str,
    port: u16,
    pending_polls: u32,
    pending_seconds: f64,
    slow_pending_polls: u32,
    loading_polls: u32,
    secret_key: Option<String>,
    api_key: Option<String>,
) -> PyResult<SandboxConfig> {
    let mut config = SandboxConfig::default();
    if let Some(customer_id) = customer_id {
        config.customer_id = customer_id;
    }
    config.host = host.parse().map_err(|_| PyValueError::new_err(format!("host must be an IP address, not {host:?}")))?;
    if !(pending_seconds.is_finite() && pending_seconds >= 0.0) {
        return Err(PyValueError::new_err("pending_seconds must be a number of seconds >= 0"));
    }
    config.port = port;
    config.pending_polls = pending_polls;
    config.pending_seconds = pending_seconds;
    config.slow_pending_polls = slow_pending_polls;
    config.loading_polls = loading_polls;
    config.secret_key = secret_key;
    config.api_key = api_key;
    Ok(config)
}

/// The embedded sandbox: a real HTTP server on loopback that speaks the same API, with the
/// public test users and one user per challenge flow (see ``users``).
///
///     with bf.Sandbox() as sb:
///         client = sb.client(poll_interval=0.05)
///         session = client.login("FlinksCapital", "greatday_nomfa", "Everyday", save=True)
#[pyclass(name = "Sandbox", module = "bankfeed", frozen)]
pub(crate) struct PySandbox {
    server: Mutex<Option<Sandbox>>,
    url: String,
    customer_id: String,
    secret_key: Option<String>,
    api_key: Option<String>,
}

impl PySandbox {
    fn with_server<T>(&self, f: impl FnOnce(&Sandbox) -> T) -> PyResult<T> {
        let server = self.server.lock().unwrap_or_else(|e| e.into_inner());
        server.as_ref().map(f).ok_or_else(|| PyValueError::new_err("the sandbox is closed"))
    }
}

#[pymethods]
impl PySandbox {
    #[new]
    #[pyo3(signature = (*, customer_id=None, host="127.0.0.1", port=0, pending_polls=1, pending_seconds=0.0,
                        slow_pending_polls=5, loading_polls=0, secret_key=None, api_key=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        customer_id: Option<String>,
        host: &str,
        port: u16,
        pending_polls: u32,
        pending_seconds: f64,
        slow_pending_polls: u32,
        loading_polls: u32,
        secret_key: Option<String>,
        api_key: Option<String>,
    ) -> PyResult<Self> {
        let config = config(
            customer_id, host, port, pending_polls, pending_seconds, slow_pending_polls, loading_polls,
            secret_key.clone(), api_key.clone(),
        )?;
        let server = Sandbox::start(config).map_err(|e| PyOSError::new_err(format!("the sandbox could not start: {e}")))?;
        Ok(PySandbox {
            url: server.url(),
            customer_id: server.customer_id().to_owned(),
            server: Mutex::new(Some(server)),
            secret_key,
            api_key,
        })
    }

    /// The base URL, e.g. ``http://127.0.0.1:51234``.
    #[getter]
    fn url(&self) -> &str {
        &self.url
    }

    #[getter]
    fn customer_id(&self) -> &str {
        &self.customer_id
    }

    /// Every test user: ``username``, ``password``, ``description``, ``challenge_types`` (in the
    /// order they come) and ``answers`` (prompt, or chosen choice, to the answer list that passes).
    #[getter]
    fn users<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        users_list(py)
    }

    /// How many HTTP requests the sandbox has received.
    #[getter]
    fn request_count(&self) -> PyResult<u64> {
        self.with_server(Sandbox::request_count)
    }

    /// The requests received, oldest first: dicts with ``method``, ``path`` and ``status``.
    #[getter]
    fn requests<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let requests = self.with_server(Sandbox::requests)?;
        let list = PyList::empty(py);
        for request in requests {
            let item = PyDict::new(py);
            item.set_item("method", request.method)?;
            item.set_item("path", request.path)?;
            item.set_item("status", request.status)?;
            list.append(item)?;
        }
        Ok(list)
    }

    /// A Client of this sandbox; ``options`` are Client's keyword arguments.
    #[pyo3(signature = (**options))]
    fn client(&self, py: Python<'_>, options: Option<Bound<'_, PyDict>>) -> PyResult<Py<PyAny>> {
        let kwargs = options.unwrap_or_else(|| PyDict::new(py));
        for (name, value) in [("base_url", Some(&self.url)), ("customer_id", Some(&self.customer_id)),
                              ("api_key", self.api_key.as_ref()), ("secret_key", self.secret_key.as_ref())] {
            if !kwargs.contains(name)? {
                kwargs.set_item(name, value)?;
            }
        }
        Ok(py.get_type::<PyClient>().call((), Some(&kwargs))?.unbind())
    }

    /// Stops the server. Closing twice is harmless.
    fn close(&self, py: Python<'_>) {
        let server = self.server.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(server) = server {
            py.detach(move || server.stop());
        }
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, pyo3::types::PyTuple>) {
        self.close(py);
    }

    fn __repr__(&self) -> String {
        let state = if self.server.lock().map(|s| s.is_some()).unwrap_or(false) { "running" } else { "closed" };
        format!("Sandbox(url={:?}, customer_id={:?}, {state})", self.url, self.customer_id)
    }
}

fn users_list(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let list = PyList::empty(py);
    for user in users() {
        let item = PyDict::new(py);
        item.set_item("username", user.username)?;
        item.set_item("password", user.password)?;
        item.set_item("description", user.description)?;
        item.set_item("challenge_types", user.challenge_types)?;
        let answers = PyDict::new(py);
        for (prompt, values) in user.answers {
            answers.set_item(prompt, values)?;
        }
        item.set_item("answers", answers)?;
        list.append(item)?;
    }
    Ok(list)
}

/// Serves the sandbox on ``host:port`` until Ctrl-C (``python -m bankfeed sandbox``).
#[pyfunction]
#[pyo3(signature = (port, host="127.0.0.1", *, customer_id=None, pending_polls=1, pending_seconds=0.0,
                    slow_pending_polls=5, loading_polls=0, secret_key=None, api_key=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn serve_sandbox(
    py: Python<'_>,
    port: u16,
    host: &str,
    customer_id: Option<String>,
    pending_polls: u32,
    pending_seconds: f64,
    slow_pending_polls: u32,
    loading_polls: u32,
    secret_key: Option<String>,
    api_key: Option<String>,
) -> PyResult<()> {
    let config = config(
        customer_id, host, port, pending_polls, pending_seconds, slow_pending_polls, loading_polls, secret_key, api_key,
    )?;
    let server = Sandbox::start(config).map_err(|e| PyOSError::new_err(format!("the sandbox could not start: {e}")))?;
    println!("bankfeed sandbox on {} (customer id {})", server.url(), server.customer_id());
    // Wait until Ctrl-C: the server runs on its own thread; this only waits for a signal.
    let waited: Result<(), crate::Error> = blocking::run_plain(py, std::future::pending())?;
    let _ = waited;
    server.stop();
    Ok(())
}

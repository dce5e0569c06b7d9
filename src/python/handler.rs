//! The bridge to a login's `on_challenge` handler: where it runs, and how its answers come back
//! (docs/architecture.md#challenge-handlers).
//!
//! The handler never runs on the thread that waits for the call. A handler may block for as long
//! as the end user takes to answer, and the call must still end at its `deadline` or at the
//! client's `close()`: so a plain function runs on a daemon thread of its own, an `async def` one
//! as a task of the call's event loop (`bankfeed._handlers`), and its outcome comes back through
//! [`Deliver`]. A call that ends first leaves the thread to finish on its own; its answers are
//! dropped.

use std::sync::{Arc, Mutex};

use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyMapping;

use super::args::type_name;
use super::convert;
use super::invocation::Flavor;
use crate::authorize::{Answers, Challenge};
use crate::error::Error;
use crate::sync::lock;
use crate::Client;

/// What a handler's outcome is handed to, once: `(ok, value)`, `value` being what the handler
/// returned (`ok`) or raised.
type Outcome = Box<dyn FnOnce(Python<'_>, bool, Bound<'_, PyAny>) + Send>;

/// The callable `bankfeed._handlers` hands a handler's outcome to. Called once; later calls (none
/// are expected) do nothing.
#[pyclass(frozen)]
pub(crate) struct Deliver {
    outcome: Mutex<Option<Outcome>>,
}

impl Deliver {
    pub(crate) fn new(outcome: impl FnOnce(Python<'_>, bool, Bound<'_, PyAny>) + Send + 'static) -> Self {
        Deliver { outcome: Mutex::new(Some(Box::new(outcome))) }
    }
}

#[pymethods]
impl Deliver {
    fn __call__(&self, py: Python<'_>, ok: bool, value: Bound<'_, PyAny>) {
        let outcome = lock(&self.outcome).take();
        if let Some(outcome) = outcome {
            outcome(py, ok, value);
        }
    }
}

/// `bankfeed._handlers`, imported once.
fn handlers(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    static MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
    Ok(MODULE.get_or_try_init(py, || Ok::<_, PyErr>(py.import("bankfeed._handlers")?.unbind()))?.bind(py))
}

/// Starts `handler` on `challenge` for a blocking client: on a thread of its own; `deliver` gets
/// its outcome there, or at once the error that kept it from starting. Returns what is to be
/// told when the call ends (its `cancel()`), for a handler on a thread of its own.
pub(crate) fn start_blocking(
    py: Python<'_>,
    handler: &Bound<'_, PyAny>,
    client: &Client,
    challenge: Challenge,
    deliver: Deliver,
) -> Option<Py<PyAny>> {
    let started = Py::new(py, deliver).map_err(|err| (err, None)).and_then(|deliver| {
        let asked = super::challenge::to_py(py, client, Flavor::Blocking, challenge);
        let call = |asked| handlers(py)?.call_method1(intern!(py, "run_blocking"), (handler, asked, &deliver));
        asked.and_then(|asked| gated(|| call(asked))).map_err(|err| (err, Some(deliver)))
    });
    match started {
        Ok(answering) => Some(answering.unbind()).filter(|answering| !answering.is_none(py)),
        Err((err, deliver)) => {
            if let Some(deliver) = deliver {
                deliver.get().__call__(py, false, err.into_value(py).into_bound(py).into_any());
            }
            None
        }
    }
}

/// The handlers a blocking call started on threads of their own, each told when the call ends,
/// however it ends (an answer, an error, its deadline, `close()`, Ctrl-C): one still waiting for
/// the person then stops (`bf.ask_in_terminal` stops reading the terminal and puts its echo
/// back), and one that has answered ignores it. Dropped on the thread that waits for the call.
#[derive(Default)]
pub(crate) struct Started(Vec<Py<PyAny>>);

impl Started {
    pub(crate) fn push(&mut self, answering: Py<PyAny>) {
        self.0.push(answering);
    }
}

impl Drop for Started {
    fn drop(&mut self) {
        let answering = std::mem::take(&mut self.0);
        if answering.is_empty() {
            return;
        }
        super::exit::attach_unless_exiting(|py| {
            for one in answering {
                let one = one.bind(py);
                if let Err(err) = one.call_method0(intern!(py, "cancel")) {
                    err.write_unraisable(py, Some(one));
                }
            }
        });
    }
}

/// Starts `handler` on `challenge` for an async client, on its event loop's thread: a task of the
/// loop for an `async def` handler (returned, to be cancelled with its call), else a thread of its
/// own; `deliver` gets its outcome on the loop's thread, or at once the error that kept it from
/// starting.
pub(crate) fn start_on_loop<'py>(
    py: Python<'py>,
    event_loop: &Bound<'py, PyAny>,
    handler: &Bound<'py, PyAny>,
    client: &Client,
    challenge: Challenge,
    deliver: Deliver,
) -> Option<Bound<'py, PyAny>> {
    let deliver = Py::new(py, deliver).ok()?;
    let started = super::challenge::to_py(py, client, Flavor::Async, challenge).and_then(|asked| {
        gated(|| handlers(py)?.call_method1(intern!(py, "run_on_loop"), (event_loop, handler, asked, &deliver)))
    });
    match started {
        Ok(task) => Some(task).filter(|task| !task.is_none()),
        Err(err) => {
            deliver.get().__call__(py, false, err.into_value(py).into_bound(py).into_any());
            None
        }
    }
}

/// Runs `f`, Python code called from Rust, unless Python's exit has begun
/// (docs/architecture.md#exit-with-calls-in-flight).
fn gated<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    super::exit::run_unless_exiting(f).unwrap_or_else(|| Err(not_called()))
}

fn not_called() -> PyErr {
    PyRuntimeError::new_err("the interpreter is exiting: the challenge handler was not called")
}

/// The caller's own exception, kept to be raised as it was.
pub(crate) fn handler_error(err: PyErr) -> Error {
    Error::Handler(Arc::new(err))
}

/// The answers in what a handler gave, `ok` saying whether it returned it or raised it. For a
/// blocking client, which cannot await, an awaitable (an `async def` handler's coroutine) is
/// closed and refused.
pub(crate) fn outcome_answers(
    ok: bool,
    value: &Bound<'_, PyAny>,
    challenge: &Challenge,
    flavor: Flavor,
) -> Result<Answers, Error> {
    if !ok {
        return Err(handler_error(PyErr::from_value(value.clone())));
    }
    // Reading the answers may run the mapping's own Python code.
    super::exit::run_unless_exiting(|| returned_answers(value, challenge, flavor))
        .unwrap_or_else(|| Err(handler_error(not_called())))
}

fn returned_answers(value: &Bound<'_, PyAny>, challenge: &Challenge, flavor: Flavor) -> Result<Answers, Error> {
    if flavor == Flavor::Blocking && is_awaitable(value) {
        let got = match type_name(value).as_str() {
            "coroutine" => "a coroutine".to_owned(),
            other => format!("an awaitable {other}"),
        };
        close(value);
        return Err(handler_error(PyTypeError::new_err(format!(
            "on_challenge returned {got}, which bf.Client cannot await: a Client calls on_challenge as a plain \
             function, so pass a plain def that returns the answers, or use bf.AsyncClient to await an async def"
        ))));
    }
    handler_answers(value, challenge)
}

/// Reads the answers an `on_challenge` handler returned (for an `async def` one, what it returned
/// once awaited). Anything but a mapping is a TypeError naming its type, never its value: it may
/// be an answer returned on its own. The mapping's own exception (its `__iter__`, `__getitem__`)
/// is raised as it is.
pub(crate) fn handler_answers(answered: &Bound<'_, PyAny>, challenge: &Challenge) -> Result<Answers, Error> {
    if answered.cast::<PyMapping>().is_err() {
        let got = if answered.is_none() { "None".to_owned() } else { type_name(answered) };
        close(answered);
        return Err(handler_error(PyTypeError::new_err(format!(
            "on_challenge returned {got}, not the answers: it must return a mapping of each prompt \
             (challenge.prompts) to its answer, a str or a list of str"
        ))));
    }
    convert::answers(answered, challenge)
}

/// Whether `value` can be awaited (a coroutine, a Future, ...).
pub(crate) fn is_awaitable(value: &Bound<'_, PyAny>) -> bool {
    value.hasattr(intern!(value.py(), "__await__")).unwrap_or(false)
}

/// Closes a coroutine that will never be awaited, so that Python warns of none ("coroutine ...
/// was never awaited"); anything else is left as it is.
fn close(value: &Bound<'_, PyAny>) {
    let py = value.py();
    if is_awaitable(value) && value.hasattr(intern!(py, "close")).unwrap_or(false) {
        if let Err(err) = value.call_method0(intern!(py, "close")) {
            err.write_unraisable(py, Some(value));
        }
    }
}

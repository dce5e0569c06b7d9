//! The bridge to a login's `on_challenge` handler: where it runs, and how its answers come back
//! (docs/architecture.md#challenge-handlers).
//!
//! The handler never runs on the thread that waits for the call. A handler may block for as long
//! as the end user takes to answer, and the call must still end at its `deadline` or at the
//! client's `close()`: so a plain function runs on a daemon thread of its own, an `async def` one
//! as a task of the call's event loop (`bankfeed._handlers`), and its outcome comes back through
//! [`Deliver`]. A call that ends first leaves the thread to finish on its own; its answers are
//! dropped.
//!
//! A bulk call's logins ask its one handler through its iterator ([`BulkAskers`],
//! [`BulkHandler`]): the handler is started by the thread that reads a blocking call, or on the
//! event loop that reads an async one, never by an IO thread.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyMapping;
use tokio::sync::{mpsc, oneshot, Semaphore};

use crate::args::type_name;
use crate::convert;
use crate::invocation::{Answerer, Flavor};
use bankfeed::authorize::{Answers, Challenge, ChallengeHandler};
use bankfeed::error::Error;
use bankfeed::sync::lock;
use bankfeed::Client;

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
        let asked = crate::classes::challenge_to_py(py, client, Flavor::Blocking, challenge);
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
        crate::exit::attach_unless_exiting(|py| {
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
    let started = crate::classes::challenge_to_py(py, client, Flavor::Async, challenge).and_then(|asked| {
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
    crate::exit::run_unless_exiting(f).unwrap_or_else(|| Err(not_called()))
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
    crate::exit::run_unless_exiting(|| returned_answers(value, challenge, flavor))
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

/// Work to run on an event loop's thread, given the GIL and the loop.
pub(crate) type LoopWork = Box<dyn FnOnce(Python<'_>, &Bound<'_, PyAny>) + Send>;

/// A challenge that a login of a bulk call met, on its way to the call's `on_challenge`; the
/// answers (or the handler's failure) go back on `reply`.
pub(crate) struct Asked {
    challenge: Challenge,
    reply: oneshot::Sender<Result<Answers, Error>>,
}

/// What gives each login of a bulk call its answerer: every answerer hands its challenges to the
/// call's iterator, which starts `on_challenge` where its flavor runs handlers ([`BulkHandler`]).
/// One challenge of the call is with the handler at a time (`turn`), so that a handler written for
/// one login (a person at a terminal, a form) is never asked twice at once.
#[derive(Clone)]
pub(crate) struct BulkAskers {
    asks: mpsc::UnboundedSender<Asked>,
    turn: Arc<Semaphore>,
}

impl BulkAskers {
    /// The answerer of one login.
    pub(crate) fn answerer(&self) -> Answerer {
        Box::new(self.clone())
    }
}

impl ChallengeHandler for BulkAskers {
    fn answer<'a>(
        &'a mut self,
        challenge: &'a Challenge,
    ) -> Pin<Box<dyn Future<Output = Result<Answers, Error>> + Send + 'a>> {
        Box::pin(async move {
            // Closed only with the call's iterator, which aborts this login too.
            let _turn = self.turn.acquire().await.map_err(|_| not_answered())?;
            let (reply, answer) = oneshot::channel();
            self.asks.send(Asked { challenge: challenge.clone(), reply }).map_err(|_| not_answered())?;
            answer.await.map_err(|_| not_answered())?
        })
    }
}

fn not_answered() -> Error {
    handler_error(PyRuntimeError::new_err("the challenge was not answered: the bulk call ended first"))
}

/// A bulk call's `on_challenge`, and the challenges its logins wait on: a blocking call's reader
/// starts the handler on each ([`BulkHandler::start_asked`]) while it reads; an async call's
/// handler runs on the event loop that reads it ([`BulkHandler::on_loop`]).
pub(crate) struct BulkHandler {
    handler: Arc<Py<PyAny>>,
    client: Client,
    asks: mpsc::UnboundedReceiver<Asked>,
    /// The handlers a blocking call's reader started, told when the call ends (this is dropped
    /// with its iterator), as a blocking `login` tells its own: `bf.ask_in_terminal` still
    /// waiting for the person stops reading the terminal then.
    started: Mutex<Started>,
}

/// The two ends of a bulk call's `on_challenge`: what its logins ask, and what answers them.
pub(crate) fn for_bulk(handler: Py<PyAny>, client: &Client) -> (BulkAskers, BulkHandler) {
    let (asks, received) = mpsc::unbounded_channel();
    let askers = BulkAskers { asks, turn: Arc::new(Semaphore::new(1)) };
    let started = Mutex::new(Started::default());
    (askers, BulkHandler { handler: Arc::new(handler), client: client.clone(), asks: received, started })
}

impl BulkHandler {
    /// For a blocking call's reader: starts the handler on every challenge received, without
    /// waiting for its answers (a plain handler runs on a thread of its own, as for `login`).
    pub(crate) fn start_asked(&mut self, py: Python<'_>) {
        while let Ok(asked) = self.asks.try_recv() {
            self.start_blocking(py, asked);
        }
    }

    /// For a blocking call's reader: starts the handler on `asked`.
    pub(crate) fn start_blocking(&self, py: Python<'_>, Asked { challenge, reply }: Asked) {
        let asked = challenge.clone();
        let deliver = Deliver::new(move |_, ok, value| {
            // The login may be over (its deadline, a close): then nobody reads this.
            let _ = reply.send(outcome_answers(ok, &value, &asked, Flavor::Blocking));
        });
        if let Some(answering) = start_blocking(py, self.handler.bind(py), &self.client, challenge, deliver) {
            lock(&self.started).push(answering);
        }
    }

    /// The next challenge received, for a blocking reader that waits on its results and its
    /// logins' challenges at once; never ends once every login has finished (no one asks then).
    pub(crate) async fn asked(&mut self) -> Asked {
        match self.asks.recv().await {
            Some(asked) => asked,
            None => std::future::pending().await,
        }
    }

    /// For an async call: from now on, each challenge of its logins starts the handler on the
    /// event loop that `on_loop` runs work on (`OnLoop` of src/run/asyncio.rs, the loop that
    /// reads the call), as `AsyncClient.login` does (an `async def` as a task of the loop, a plain
    /// one on a thread of its own). `answering` keeps the task of an `async def` handler still
    /// answering, to be cancelled with the call. The returned task forwards the challenges; it
    /// ends when every login has finished, or when it is aborted.
    pub(crate) fn on_loop(
        self,
        on_loop: impl Fn(LoopWork) + Send + 'static,
        answering: Arc<Mutex<Option<Py<PyAny>>>>,
    ) -> PyResult<tokio::task::JoinHandle<()>> {
        let BulkHandler { handler, client, mut asks, .. } = self;
        let forward = async move {
            while let Some(Asked { challenge, reply }) = asks.recv().await {
                let (handler, client, answering) = (Arc::clone(&handler), client.clone(), Arc::clone(&answering));
                on_loop(Box::new(move |py, event_loop| {
                    let asked = challenge.clone();
                    let deliver = Deliver::new(move |_, ok, value| {
                        let _ = reply.send(outcome_answers(ok, &value, &asked, Flavor::Async));
                    });
                    let task = start_on_loop(py, event_loop, handler.bind(py), &client, challenge, deliver);
                    *lock(&answering) = task.map(Bound::unbind);
                }));
            }
        };
        Ok(crate::runtime::runtime()?.spawn(forward))
    }
}

/// Cancels the task of an `async def` handler still answering a bulk call's login, once the call
/// is closed: its answers can no longer be used. A finished task ignores this.
pub(crate) fn cancel_answering(py: Python<'_>, answering: &Mutex<Option<Py<PyAny>>>) {
    let task = lock(answering).take();
    if let Some(task) = task {
        let task = task.bind(py);
        if let Err(err) = task.call_method0(intern!(py, "cancel")) {
            err.write_unraisable(py, Some(task));
        }
    }
}

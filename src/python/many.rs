//! The bulk calls' iterators (`investments_many` and its twins): the core runs every login's
//! whole flow with a bound on how many run at once (src/bulk.rs); each result crosses into Python
//! once, when the iterator hands it out (docs/architecture.md#bulk-calls).

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use pyo3::exceptions::{PyRuntimeError, PyStopAsyncIteration};
use pyo3::prelude::*;
use pyo3::types::{PyMapping, PyTuple};
use tokio::sync::mpsc::{self, error::TryRecvError};

use super::args;
use super::asyncio;
use super::blocking::SIGNAL_CHECK;
use super::errors::PyBankfeedError;
use super::operation::{Convert, Flavor, Operation};
use super::runtime::{runtime, AbortOnDrop};
use crate::bulk::{check_concurrency, run_many};
use crate::config::shown;
use crate::error::Error;
use crate::sync::lock;
use crate::Client;

/// One login's outcome, made Python when it is handed out: the result, or the exception as a value.
type Outcome = Box<dyn FnOnce(Python<'_>) -> Py<PyAny> + Send>;
type Item = (String, Result<Outcome, Error>);

/// Results waiting to be handed out, at most this many per unit of concurrency: a consumer that
/// stops reading holds the work back instead of letting results pile up.
const BUFFER_PER_FLOW: usize = 2;

/// Starts a bulk call of `op` over `ids` and returns its iterator: `_BulkResults` (blocking) or
/// `_AsyncBulkResults` (async), wrapped in a progress display when `progress` is set.
pub(crate) fn start<T, F, Fut>(
    py: Python<'_>,
    client: &Client,
    flavor: Flavor,
    ids: Vec<String>,
    concurrency: usize,
    progress: bool,
    description: &str,
    op: F,
    convert: Convert<T>,
) -> PyResult<Py<PyAny>>
where
    T: Send + 'static,
    F: Fn(Client, String) -> Fut + Send + 'static,
    Fut: Future<Output = Result<T, Error>> + Send + 'static,
{
    let concurrency = check_concurrency(concurrency)?.get();
    super::logging::refresh(py);
    let total = ids.len();
    let capacity = concurrency.saturating_mul(BUFFER_PER_FLOW).clamp(16, 4096);
    let (sink, receiver) = mpsc::channel::<Item>(capacity);
    let owner = client.clone();
    let each = move |id: String| {
        let (client, flavor) = (owner.clone(), flavor);
        let future = op(owner.clone(), id);
        async move {
            let outcome: Outcome = match future.await {
                Ok(value) => Box::new(move |py| match convert(py, &client, flavor, value) {
                    Ok(object) => object,
                    Err(err) => err.into_value(py).into_any(),
                }),
                // Not one login's failure: the whole call ends, and the iterator raises it.
                Err(error @ Error::Closed { .. }) => return Err(error),
                Err(error) => Box::new(move |py| exception(py, error, &client, flavor)),
            };
            Ok(outcome)
        }
    };
    let task = runtime()?.spawn(async move {
        let _ = run_many(ids, concurrency, each, sink).await;
    });
    // Aborting the driver drops its `JoinSet`, which aborts every login in flight.
    let driver = Mutex::new(AbortOnDrop(Some(task)));
    let feed = Feed { receiver, client: client.clone(), flavor };
    let (iterator, wrap) = match flavor {
        Flavor::Blocking => {
            let results = PyBulkResults { state: Mutex::new(State::Idle(feed)), driver };
            (Py::new(py, results)?.into_any(), "wrap")
        }
        Flavor::Async => {
            let feed = Arc::new(tokio::sync::Mutex::new(Some(feed)));
            (Py::new(py, PyAsyncBulkResults { feed, driver, ended: AtomicBool::new(false) })?.into_any(), "awrap")
        }
    };
    if !progress {
        return Ok(iterator);
    }
    let kwargs = pyo3::types::PyDict::new(py);
    kwargs.set_item("description", description)?;
    Ok(py.import("bankfeed._progress")?.getattr(wrap)?.call((iterator, total), Some(&kwargs))?.unbind())
}

/// `request_ids=` of a bulk call: `{login_id: request_id}`, the RequestIds whose polling the logins
/// resume (the ones their `PendingTimeout`s named) instead of opening new sessions. Each RequestId
/// is checked when its login runs, as `request_id=` of a single call is, so a bad one fails that
/// login only; a LoginId missing from `login_ids` is refused here, as it would be silently unused.
pub(crate) fn request_ids(
    value: Option<&Bound<'_, PyAny>>,
    login_ids: &[String],
) -> PyResult<Arc<HashMap<String, String>>> {
    let Some(value) = value.filter(|value| !value.is_none()) else { return Ok(Arc::default()) };
    let Ok(mapping) = value.cast::<PyMapping>() else {
        let takes = "a mapping of login_id to request_id (e.g. {login_id: exc.request_id} of the PendingTimeouts \
                     of a previous call)";
        return Err(args::wrong_type("request_ids", takes, value));
    };
    let mut ids = HashMap::new();
    for item in mapping.items()?.iter() {
        let (login_id, request_id): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item.extract()?;
        let login_id = args::text("a key of request_ids", &login_id)?;
        let request_id = args::text(&format!("request_ids[{}]", shown(&login_id)), &request_id)?;
        ids.insert(login_id, request_id);
    }
    let listed: HashSet<&str> = login_ids.iter().map(String::as_str).collect();
    if let Some(stray) = ids.keys().find(|id| !listed.contains(id.as_str())) {
        let rule = format!("may only name LoginIds of login_ids, got {}", shown(stray));
        return Err(Error::config("request_ids", rule).into());
    }
    Ok(Arc::new(ids))
}

/// `(login_id, result or exception)`; `ClientClosed` for the whole call when the login was stopped
/// by `close()`, which is no failure of that login (docs/errors.md#clientclosed).
fn pair(py: Python<'_>, (id, outcome): Item, client: &Client, flavor: Flavor) -> PyResult<Py<PyAny>> {
    let value = match outcome {
        Ok(outcome) => outcome(py),
        Err(Error::Closed { .. }) => return Err(closed_call()),
        Err(error) => exception(py, error, client, flavor),
    };
    Ok(PyTuple::new(py, [id.into_pyobject(py)?.into_any().unbind(), value])?.into_any().unbind())
}

fn exception(py: Python<'_>, error: Error, client: &Client, flavor: Flavor) -> Py<PyAny> {
    PyErr::from(PyBankfeedError::with_client(error, client, flavor)).into_value(py).into_any()
}

/// Where a running bulk call's results arrive. Its driver is held apart (`driver` of the
/// iterators), so that `close()` can stop it while another thread or task waits on the feed.
struct Feed {
    receiver: mpsc::Receiver<Item>,
    client: Client,
    flavor: Flavor,
}

impl Feed {
    fn pair(&self, py: Python<'_>, item: Item) -> PyResult<Py<PyAny>> {
        pair(py, item, &self.client, self.flavor)
    }

    fn closed(&self) -> Option<PyErr> {
        self.client.is_closed().then(closed_call)
    }
}

/// What a bulk call raises when its client is closed.
fn closed_call() -> PyErr {
    Error::Closed { operation: "a bulk call".to_owned() }.into()
}

enum State {
    Idle(Feed),
    /// A thread is waiting for the next result.
    Busy,
    Ended,
}

/// The iterator of a blocking bulk call: ``(login_id, result)`` pairs as each login finishes.
#[pyclass(name = "_BulkResults", module = "bankfeed._native", frozen)]
pub(crate) struct PyBulkResults {
    state: Mutex<State>,
    driver: Mutex<AbortOnDrop>,
}

impl PyBulkResults {
    /// Stops every login in flight; the iteration is over.
    fn end(&self) {
        lock(&self.driver).abort();
        *lock(&self.state) = State::Ended;
    }

    /// Puts the feed back after a wait; false when the call ended meanwhile (`close()` from
    /// another thread), and then the feed goes.
    fn resume(&self, feed: Feed) -> bool {
        let mut state = lock(&self.state);
        if matches!(*state, State::Ended) {
            return false;
        }
        *state = State::Idle(feed);
        true
    }

    /// The next item: at once when one is ready, else waiting with the GIL released, looking for
    /// Ctrl-C and `close()` every [`SIGNAL_CHECK`]. None when every login has finished.
    fn next_item(&self, py: Python<'_>, feed: &mut Feed) -> PyResult<Option<Item>> {
        let runtime = runtime()?;
        loop {
            match feed.receiver.try_recv() {
                Ok(item) => return Ok(Some(item)),
                Err(TryRecvError::Disconnected) => return Ok(None),
                Err(TryRecvError::Empty) => {}
            }
            let receiver = &mut feed.receiver;
            // The timer is made inside `block_on`, in the runtime's context.
            let waited =
                py.detach(|| runtime.block_on(async { tokio::time::timeout(SIGNAL_CHECK, receiver.recv()).await }));
            if let Ok(item) = waited {
                return Ok(item);
            }
            py.check_signals()?;
            if let Some(closed) = feed.closed() {
                return Err(closed);
            }
            if matches!(*lock(&self.state), State::Ended) {
                return Ok(None);
            }
        }
    }
}

#[pymethods]
impl PyBulkResults {
    fn __iter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// The next login to finish. Waits with the GIL released, looking for Ctrl-C every few
    /// milliseconds: Ctrl-C ends the whole call (every login in flight stops) and is raised.
    fn __next__(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        // Taken in a statement of its own: the lock's guard must be gone before the arms lock again.
        let state = std::mem::replace(&mut *lock(&self.state), State::Busy);
        let mut feed = match state {
            State::Idle(feed) => feed,
            State::Ended => {
                *lock(&self.state) = State::Ended;
                return Ok(None);
            }
            State::Busy => {
                *lock(&self.state) = State::Busy;
                return Err(PyRuntimeError::new_err("this bulk call is already being iterated in another thread"));
            }
        };
        if let Some(closed) = feed.closed() {
            self.end();
            return Err(closed);
        }
        match self.next_item(py, &mut feed) {
            Ok(Some(item)) => match feed.pair(py, item) {
                Ok(pair) => Ok(self.resume(feed).then_some(pair)),
                Err(closed) => {
                    self.end();
                    Err(closed)
                }
            },
            Ok(None) => {
                self.end();
                Ok(None)
            }
            // Ctrl-C, or the client closed: every login in flight stops before it is raised.
            Err(err) => {
                self.end();
                Err(err)
            }
        }
    }

    /// Stops every login still running, also while another thread waits on the iterator; the
    /// iteration ends.
    fn close(&self) {
        self.end();
    }

    /// ``with client.investments_many(ids) as results:`` closes the call when the block ends, as
    /// the progress display's ``with`` does.
    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __exit__(&self, _kind: Py<PyAny>, _value: Py<PyAny>, _traceback: Py<PyAny>) {
        self.end();
    }

    fn __repr__(&self) -> &'static str {
        match *lock(&self.state) {
            State::Ended => "<bankfeed bulk results: ended>",
            _ => "<bankfeed bulk results: running>",
        }
    }
}

type SharedFeed = Arc<tokio::sync::Mutex<Option<Feed>>>;

/// The iterator of an async bulk call, for ``async for``.
#[pyclass(name = "_AsyncBulkResults", module = "bankfeed._native", frozen)]
pub(crate) struct PyAsyncBulkResults {
    feed: SharedFeed,
    driver: Mutex<AbortOnDrop>,
    /// Set by `aclose()`: results already received are not handed out after it.
    ended: AtomicBool,
}

#[pymethods]
impl PyAsyncBulkResults {
    fn __aiter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// The next login to finish: at once when one is ready, else when one finishes.
    fn __anext__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        if self.ended.load(Ordering::SeqCst) {
            return Err(PyStopAsyncIteration::new_err(()));
        }
        let client = {
            // Uncontended unless a previous `__anext__` is still waiting.
            let Ok(mut guard) = self.feed.try_lock() else {
                return Err(PyRuntimeError::new_err("anext(): the previous one is still waiting"));
            };
            let Some(feed) = guard.as_mut() else { return Err(PyStopAsyncIteration::new_err(())) };
            if let Some(closed) = feed.closed() {
                *guard = None;
                return Err(closed);
            }
            match feed.receiver.try_recv() {
                Ok(item) => {
                    let pair = feed.pair(py, item);
                    if pair.is_err() {
                        *guard = None;
                    }
                    return asyncio::ready(py, pair?);
                }
                Err(TryRecvError::Disconnected) => {
                    *guard = None;
                    return Err(PyStopAsyncIteration::new_err(()));
                }
                Err(TryRecvError::Empty) => feed.client.clone(),
            }
        };
        let feed = Arc::clone(&self.feed);
        let future = async move {
            let mut guard = feed.lock().await;
            let item = match guard.as_mut() {
                Some(feed) => feed.receiver.recv().await,
                None => None,
            };
            Ok(item)
        };
        Operation::new(&client, future, next_pair).run(py, Flavor::Async)
    }

    /// Stops every login still running, also while an ``__anext__`` waits (it then ends the
    /// iteration); the iteration ends.
    fn aclose(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.ended.store(true, Ordering::SeqCst);
        lock(&self.driver).abort();
        if let Ok(mut guard) = self.feed.try_lock() {
            guard.take();
        }
        asyncio::ready(py, py.None())
    }

    /// ``async with client.investments_many(ids) as results:`` closes the call when the block
    /// ends.
    fn __aenter__(slf: Py<Self>, py: Python<'_>) -> PyResult<Py<PyAny>> {
        asyncio::ready(py, slf.into_any())
    }

    fn __aexit__(
        &self,
        py: Python<'_>,
        _kind: Py<PyAny>,
        _value: Py<PyAny>,
        _traceback: Py<PyAny>,
    ) -> PyResult<Py<PyAny>> {
        self.aclose(py)
    }
}

/// The value of an `__anext__` that waited: the pair, or the end of the iteration.
fn next_pair(py: Python<'_>, client: &Client, flavor: Flavor, item: Option<Item>) -> PyResult<Py<PyAny>> {
    match item {
        Some(item) => pair(py, item, client, flavor),
        None => Err(PyStopAsyncIteration::new_err(())),
    }
}

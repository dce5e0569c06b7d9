//! The bulk calls' iterators (`investments_many` and its twins): the core runs every login's
//! whole flow with a bound on how many run at once (crates/bankfeed/src/bulk.rs); each result crosses into Python
//! once, when the iterator hands it out (docs/architecture.md#bulk-calls).

use std::collections::{HashMap, HashSet, VecDeque};
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use pyo3::exceptions::{PyRuntimeError, PyStopAsyncIteration};
use pyo3::prelude::*;
use pyo3::types::{PyMapping, PyString, PyTuple};
use tokio::sync::mpsc::{self, error::TryRecvError};

use crate::args;
use crate::error::PyBankfeedError;
use crate::error::{IntoException, OrRaise};
use crate::handler::{self, BulkHandler};
use crate::invocation::{Answerer, Convert, Flavor, Invocation};
use crate::raise::client_closed;
use crate::results::PyDataOperation;
use crate::run::asyncio;
use crate::run::blocking::SIGNAL_CHECK;
use crate::run::Run;
use crate::runtime::{runtime, AbortOnDrop};
use bankfeed::authorize::ChallengeHandler;
use bankfeed::bulk::{check_concurrency, run_many};
use bankfeed::config::{is_safe_segment, SAFE_SEGMENT};
use bankfeed::error::Error;
use bankfeed::masking::SentSecrets;
use bankfeed::ops::Target;
use bankfeed::shown::shown;
use bankfeed::sync::{get_mut, lock};
use bankfeed::Client;

/// One login's outcome, made Python when it is handed out: the result, or the exception as a value.
type Outcome = Box<dyn FnOnce(Python<'_>) -> Py<PyAny> + Send>;
/// What the driver sends for each login it ran.
type Sent = (String, Result<Outcome, Error>);
/// What the iterator hands out: a login and its outcome.
type Item = (LoginKey, Result<Outcome, Error>);

/// A LoginId as the iterator hands it back: its text, or, for one that cannot be sent, the key
/// `args::Unusable` says (the very `str` that came for one that is not valid text).
enum LoginKey {
    Text(String),
    Unusable(Py<PyAny>),
}

impl LoginKey {
    fn into_py(self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        match self {
            LoginKey::Text(id) => Ok(id.into_pyobject(py)?.into_any().unbind()),
            LoginKey::Unusable(id) => Ok(id),
        }
    }
}

/// Results waiting to be handed out, at most this many per unit of concurrency: a consumer that
/// stops reading holds the work back instead of letting results pile up.
const BUFFER_PER_FLOW: usize = 2;

/// Starts the bulk call named `call` (its Python name) of `op` over `ids` and returns its
/// iterator: `_BulkResults` (blocking) or `_AsyncBulkResults` (async), wrapped in a progress
/// display when `progress` is set. `op` is one login's whole flow, the same for both flavors;
/// given `on_challenge`, each login gets an answerer that asks it (src/handler.rs), and
/// without one, none: its challenges are its `ChallengeRequired`.
pub(crate) fn start<T, F, Fut>(
    py: Python<'_>,
    client: &Client,
    flavor: Flavor,
    login_ids: args::LoginIds,
    concurrency: usize,
    progress: bool,
    call: &'static str,
    on_challenge: Option<Py<PyAny>>,
    op: F,
    convert: Convert<T>,
) -> PyResult<Py<PyAny>>
where
    T: Send + 'static,
    F: Fn(Client, String, Option<Answerer>) -> Fut + Send + 'static,
    Fut: Future<Output = Result<T, Error>> + Send + 'static,
{
    let concurrency = check_concurrency(concurrency).or_raise()?.get();
    if client.is_closed() {
        // Refused, as every call of a closed client is: nothing starts.
        return Err(Error::Closed { operation: call.to_owned() }.into_exception());
    }
    crate::logging::refresh(py)?;
    let args::LoginIds { ids, unusable } = login_ids;
    let total = ids.len() + unusable.len();
    // A LoginId that cannot be sent (not text, or missing) fails alone, handed out first, and
    // never reaches the driver.
    let early: VecDeque<Item> =
        unusable.into_iter().map(|unusable| (LoginKey::Unusable(unusable.key), Err(unusable.error))).collect();
    let capacity = concurrency.saturating_mul(BUFFER_PER_FLOW).clamp(16, 4096);
    let (sink, receiver) = mpsc::channel::<Sent>(capacity);
    let owner = client.clone();
    // Each login's call masks in its errors what every login's call sent, a token minted for
    // another login included (docs/errors.md#secrets-a-server-repeats): the logins' calls are
    // made with a copy of the client that shares them.
    let (sharing, shared) = client.sharing_secrets();
    let (askers, handler) = match on_challenge {
        Some(on_challenge) => {
            let (askers, handler) = handler::for_bulk(on_challenge, client);
            (Some(askers), Some(Box::new(handler)))
        }
        None => (None, None),
    };
    let each = move |id: String| {
        let (client, flavor, shared) = (owner.clone(), flavor, shared.clone());
        let future = op(sharing.clone(), id, askers.as_ref().map(handler::BulkAskers::answerer));
        async move {
            let outcome: Outcome = match future.await {
                Ok(value) => Box::new(move |py| match convert(py, &client, flavor, value) {
                    Ok(object) => object,
                    Err(err) => err.into_value(py).into_any(),
                }),
                // Not this login's failure: the iterator hands out what a close leaves
                // (`Feed::settle`).
                Err(error @ Error::Closed { .. }) => return Err(error),
                // Masked again as it is handed out, with what the logins that ran since sent.
                Err(error) => Box::new(move |py| {
                    exception(
                        py,
                        SentSecrets::default().sharing(Some(shared)).error(error),
                        &client,
                        flavor,
                        Some(call),
                    )
                }),
            };
            Ok(outcome)
        }
    };
    let owed = Owed::new(&ids);
    let task = runtime()?.spawn(async move {
        let _ = run_many(ids, concurrency, each, sink).await;
    });
    // Aborting the driver drops its `JoinSet`, which aborts every login in flight.
    let driver = Mutex::new(AbortOnDrop(Some(task)));
    let closing = Arc::new(AtomicBool::new(false));
    let closing_flag = Arc::clone(&closing);
    let feed = Feed {
        receiver,
        client: client.clone(),
        flavor,
        call,
        owed,
        closing: closing_flag,
        early,
        rest: None,
        handler,
    };
    let origin = Origin::here(call);
    let (iterator, wrap) = match flavor {
        Flavor::Blocking => {
            let results = PyBulkResults { state: Mutex::new(State::Idle(feed)), driver, closing, origin };
            (Py::new(py, results)?.into_any(), "wrap")
        }
        Flavor::Async => {
            let feed = Arc::new(tokio::sync::Mutex::new(Some(feed)));
            let answering = Answering::default();
            let results = PyAsyncBulkResults { feed, driver, closing, origin, answering };
            (Py::new(py, results)?.into_any(), "awrap")
        }
    };
    if !progress {
        return Ok(iterator);
    }
    let kwargs = pyo3::types::PyDict::new(py);
    // What the progress line calls the results: "accounts detail" of accounts_detail_many.
    let description = call.trim_end_matches("_many").replace('_', " ");
    kwargs.set_item("description", description)?;
    Ok(py.import("bankfeed._progress")?.getattr(wrap)?.call((iterator, total), Some(&kwargs))?.unbind())
}

/// Starts the bulk call named `call` of the data operation `O` over `login_ids`: each login's
/// whole flow is `Client::data_answered::<O>` on the saved login, resumed at its RequestId of
/// `request_ids=` when it has one, the challenges of its cached Authorize answered by
/// `on_challenge` when there is one. The options are checked once here, rather than failing
/// every login the same way.
pub(crate) fn start_data<O: PyDataOperation>(
    py: Python<'_>,
    client: &Client,
    flavor: Flavor,
    login_ids: args::LoginIds,
    concurrency: usize,
    progress: bool,
    call: &'static str,
    resumes: Option<&Bound<'_, PyAny>>,
    on_challenge: Option<Bound<'_, PyAny>>,
    options: O::Options,
) -> PyResult<Py<PyAny>>
where
    O::Options: Sync,
{
    let resumes = request_ids(resumes, &login_ids.ids)?;
    O::validate(&options).or_raise()?;
    let options = Arc::new(options);
    let op = move |client: Client, login_id: String, answerer: Option<Answerer>| {
        let options = Arc::clone(&options);
        let request_id = resumes.get(&login_id.to_ascii_lowercase()).cloned();
        async move {
            let mut answerer = answerer;
            let handler = answerer.as_mut().map(|answerer| &mut **answerer as &mut dyn ChallengeHandler);
            let target = Target::login(&login_id, request_id.as_deref());
            // Each login is a call of its own: its own deadline, ended by a close.
            let call = client.call(O::WIRE.name).for_login(&login_id);
            call.run(client.data_answered::<O>(&call, target, &options, handler)).await
        }
    };
    let on_challenge = on_challenge.map(Bound::unbind);
    start(py, client, flavor, login_ids, concurrency, progress, call, on_challenge, op, O::CONVERT)
}

/// `request_ids=` of a bulk call: `{login_id: request_id}`, the RequestIds whose polling the logins
/// resume (the ones their `PendingTimeout`s named) instead of opening new sessions. Each RequestId
/// is checked here, by the rule of `request_id=` of a single call, and a LoginId missing from
/// `login_ids` is refused here too (it would be silently unused): before anything starts, rather
/// than as one login's failure among thousands. LoginIds are matched in any case, as the service
/// compares them (docs/protocol.md#hosts-paths-and-versions): the map is keyed by the LoginId in
/// lower case.
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
    let listed: HashSet<String> = login_ids.iter().map(|id| id.to_ascii_lowercase()).collect();
    for (index, entry) in args::entries(mapping)?.enumerate() {
        // A mapping of more entries than `login_ids` has LoginIds names one that is not among
        // them; it is not read to its end.
        if index >= listed.len() {
            let rule = "may only name LoginIds of login_ids, and holds more entries than login_ids has LoginIds";
            return Err(Error::config("request_ids", rule).into_exception());
        }
        let (login_id, request_id) = entry?;
        let login_id = match login_id.cast::<PyString>() {
            Ok(text) => args::str_of("request_ids", Some("a key"), text)?.to_owned(),
            Err(_) => return Err(args::wrong_type("a key of request_ids", "a str", &login_id)),
        };
        let request_id = match request_id.cast::<PyString>() {
            Ok(text) => args::str_of("request_ids", Some(&format!("a value for {}", shown(&login_id))), text)?,
            Err(_) => {
                return Err(args::wrong_type(&format!("request_ids[{}]", shown(&login_id)), "a str", &request_id))
            }
        };
        if !is_safe_segment(request_id) {
            let rule =
                format!("for {} must be {SAFE_SEGMENT}, such as a GUID, got {}", shown(&login_id), shown(request_id));
            return Err(Error::config("request_ids", rule).into_exception());
        }
        ids.insert(login_id, request_id.to_owned());
    }
    if let Some(stray) = ids.keys().find(|id| !listed.contains(&id.to_ascii_lowercase())) {
        let rule = format!("may only name LoginIds of login_ids, got {}", shown(stray));
        return Err(Error::config("request_ids", rule).into_exception());
    }
    Ok(Arc::new(ids.into_iter().map(|(login_id, request_id)| (login_id.to_ascii_lowercase(), request_id)).collect()))
}

/// `(login_id, result or exception)`.
fn pair(py: Python<'_>, (id, outcome): Item, client: &Client, flavor: Flavor) -> PyResult<Py<PyAny>> {
    let value = match outcome {
        Ok(outcome) => outcome(py),
        // A login that never ran (not text, or cut off by a close): no call to resume it by.
        Err(error) => exception(py, error, client, flavor, None),
    };
    Ok(PyTuple::new(py, [id.into_py(py)?, value])?.into_any().unbind())
}

fn exception(py: Python<'_>, error: Error, client: &Client, flavor: Flavor, call: Option<&'static str>) -> Py<PyAny> {
    PyErr::from(PyBankfeedError::with_client(error, client, flavor, call)).into_value(py).into_any()
}

/// What stopped a bulk call before every login was handed out (docs/errors.md#clientclosed).
#[derive(Clone, Copy)]
enum Stop {
    /// `close()`, `aclose()`, or the end of a `with` block around the iterator.
    Iterator,
    /// `close()` of the client, or the end of its `with` block.
    Client,
}

/// The pair of a login that a close cut off: a `ClientClosed` as its result, so that a reader
/// (`list()`, `bf.combine`) ends with every login it asked for, each fetched or named as not fetched.
fn cut_off(call: &'static str, stop: Stop) -> Outcome {
    Box::new(move |py| {
        let text = match stop {
            Stop::Iterator => format!(
                "{call} was closed (close() or aclose() of its iterator, or the end of its with block) before this \
                 login finished: nothing was fetched for it; ask for it again in a new call"
            ),
            Stop::Client => format!(
                "{call} stopped before this login finished: the client was closed (close(), or the end of its with \
                 or async with block); ask for it again with a new client"
            ),
        };
        client_closed(py, &text, call).into_value(py).into_any()
    })
}

/// The LoginIds of a call not handed out yet: each as many times as it was given and not yet
/// handed out, in the order of `login_ids`.
struct Owed {
    order: Vec<String>,
    left: HashMap<String, usize>,
}

impl Owed {
    fn new(ids: &[String]) -> Self {
        let mut left: HashMap<String, usize> = HashMap::with_capacity(ids.len());
        for id in ids {
            *left.entry(id.clone()).or_default() += 1;
        }
        Owed { order: ids.to_vec(), left }
    }

    fn handed_out(&mut self, id: &str) {
        if let Some(count) = self.left.get_mut(id) {
            *count = count.saturating_sub(1);
        }
    }

    /// Every LoginId still owed, once per occurrence; none is owed after.
    fn take_all(&mut self) -> Vec<String> {
        let mut all = Vec::new();
        for id in std::mem::take(&mut self.order) {
            if let Some(count) = self.left.get_mut(&id) {
                if *count > 0 {
                    *count -= 1;
                    all.push(id);
                }
            }
        }
        self.left.clear();
        all
    }
}

/// Where a running bulk call's results arrive. Its driver is held apart (`driver` of the
/// iterators), so that `close()` can stop it while another thread or task waits on the feed.
struct Feed {
    receiver: mpsc::Receiver<Sent>,
    client: Client,
    flavor: Flavor,
    call: &'static str,
    owed: Owed,
    /// Set by `close()` of the iterator, also from another thread or while a reader waits.
    closing: Arc<AtomicBool>,
    /// The logins that failed before the call started (a LoginId that is not text): handed out
    /// first.
    early: VecDeque<Item>,
    /// Once the call was stopped: the pairs left to hand out, then the end.
    rest: Option<VecDeque<Item>>,
    /// The call's `on_challenge`: a blocking reader starts it on its logins' challenges; an
    /// async one takes it to its event loop on its first `__anext__`.
    /// Boxed: most calls have none, and the feed moves in and out of the iterator's state.
    handler: Option<Box<BulkHandler>>,
}

impl Feed {
    fn pair(&self, py: Python<'_>, item: Item) -> PyResult<Py<PyAny>> {
        pair(py, item, &self.client, self.flavor)
    }

    fn stop(&self) -> Option<Stop> {
        if self.closing.load(Ordering::SeqCst) {
            Some(Stop::Iterator)
        } else if self.client.is_closed() {
            Some(Stop::Client)
        } else {
            None
        }
    }

    /// What is left once the call was stopped: the results already received, as they are (the
    /// data was fetched), then a `ClientClosed` for every login not handed out. Closing the
    /// receiver stops the driver (it watches for that) and fixes the list: nothing is received
    /// after it, so no login is handed out twice.
    fn settle(&mut self, stop: Stop) {
        if self.rest.is_some() {
            return;
        }
        self.receiver.close();
        let mut rest = std::mem::take(&mut self.early);
        while let Ok((id, outcome)) = self.receiver.try_recv() {
            // A login cut off by the client's close is one of those owed below.
            if !matches!(outcome, Err(Error::Closed { .. })) {
                self.owed.handed_out(&id);
                rest.push_back((LoginKey::Text(id), outcome));
            }
        }
        let call = self.call;
        rest.extend(self.owed.take_all().into_iter().map(|id| (LoginKey::Text(id), Ok(cut_off(call, stop)))));
        self.rest = Some(rest);
    }

    /// A result received from the driver: the item to hand out, or None when it shows the client
    /// was closed (then the call is settled and `rest` holds what comes next).
    fn received(&mut self, (id, outcome): Sent) -> Option<Item> {
        if matches!(outcome, Err(Error::Closed { .. })) {
            self.settle(Stop::Client);
            return None;
        }
        self.owed.handed_out(&id);
        Some((LoginKey::Text(id), outcome))
    }

    /// The next thing to hand out without waiting: `Some(Some(item))`, `Some(None)` for the end,
    /// or None when the reader must wait for the driver.
    #[expect(clippy::option_option, reason = "an item, the end, or nothing yet: three answers")]
    fn next_now(&mut self) -> Option<Option<Item>> {
        loop {
            if let Some(rest) = self.rest.as_mut() {
                return Some(rest.pop_front());
            }
            if let Some(stop) = self.stop() {
                self.settle(stop);
                continue;
            }
            if let Some(item) = self.early.pop_front() {
                return Some(Some(item));
            }
            match self.receiver.try_recv() {
                Ok(item) => {
                    if let Some(item) = self.received(item) {
                        return Some(Some(item));
                    }
                }
                // The driver is gone: every login was handed out, unless a close stopped it, which
                // the next turn sees (the flag is set before the driver is aborted).
                Err(TryRecvError::Disconnected) => {
                    if self.stop().is_none() {
                        return Some(None);
                    }
                }
                Err(TryRecvError::Empty) => return None,
            }
        }
    }
}

/// The process a bulk call was started in, and the refusal of any other: a forked child has the
/// iterator's memory but not the parent's threads that run its logins, so a read there would
/// wait forever (docs/architecture.md#fork-and-child-processes).
struct Origin {
    pid: u32,
    call: &'static str,
}

impl Origin {
    fn here(call: &'static str) -> Self {
        Origin { pid: std::process::id(), call }
    }

    fn is_here(&self) -> bool {
        self.pid == std::process::id()
    }

    fn check(&self, py: Python<'_>) -> PyResult<()> {
        if self.is_here() {
            return Ok(());
        }
        let text = format!(
            "{} was started in process {}; a forked child (process {}) cannot read its results, which only the \
             parent's threads receive: start the call in the child",
            self.call,
            self.pid,
            std::process::id()
        );
        Err(client_closed(py, &text, self.call))
    }

    /// Stops the driver: aborted in the process that started it, forgotten in any other, where
    /// its runtime is the parent's copy without threads (crates/bankfeed/src/fork.rs leaves such values alone).
    fn stop(&self, driver: &Mutex<AbortOnDrop>) {
        let mut driver = lock(driver);
        if self.is_here() {
            driver.abort();
        } else {
            std::mem::forget(driver.0.take());
        }
    }
}

/// What ended a blocking reader's wait: a login's result (None once the driver is gone), or a
/// login's challenge for the handler.
enum Woke {
    Received(Option<Sent>),
    Asked(handler::Asked),
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
    closing: Arc<AtomicBool>,
    origin: Origin,
}

impl PyBulkResults {
    /// Stops every login in flight; the iteration is over, and nothing more is handed out.
    fn end(&self) {
        self.origin.stop(&self.driver);
        *lock(&self.state) = State::Ended;
    }

    /// The next item: at once when one is ready, else waiting with the GIL released, looking for
    /// Ctrl-C and a close every [`SIGNAL_CHECK`]. None when every login has been handed out.
    fn next_item(&self, py: Python<'_>, feed: &mut Feed) -> PyResult<Option<Item>> {
        let runtime = runtime()?;
        loop {
            // Looked for before every result, not only after a wait: results that keep coming
            // never make the wait below time out, and a loop in C (list(), combine) runs no
            // Python code between them that would raise it. Cheap when nothing is pending.
            py.check_signals()?;
            // A login that met a challenge waits for this thread to start the handler: started
            // before anything is handed out, unless the call is closing.
            if feed.stop().is_none() {
                if let Some(handler) = feed.handler.as_mut() {
                    handler.start_asked(py);
                }
            }
            if let Some(next) = feed.next_now() {
                if feed.rest.is_some() {
                    // Stopped by a close: the driver goes at once, whoever closed.
                    self.origin.stop(&self.driver);
                }
                return Ok(next);
            }
            let (receiver, handler) = (&mut feed.receiver, feed.handler.as_mut());
            // The timer is made inside `block_on`, in the runtime's context.
            let waited = py.detach(|| {
                runtime.block_on(async {
                    let woke = async {
                        match handler {
                            Some(handler) => tokio::select! {
                                item = receiver.recv() => Woke::Received(item),
                                asked = handler.asked() => Woke::Asked(asked),
                            },
                            None => Woke::Received(receiver.recv().await),
                        }
                    };
                    tokio::time::timeout(SIGNAL_CHECK, woke).await
                })
            });
            match waited {
                Ok(Woke::Received(Some(item))) => {
                    if let Some(item) = feed.received(item) {
                        return Ok(Some(item));
                    }
                }
                Ok(Woke::Asked(asked)) if feed.stop().is_none() => {
                    if let Some(handler) = feed.handler.as_ref() {
                        handler.start_blocking(py, asked);
                    }
                }
                // Anything else (a timeout, the driver gone, the client closed) is sorted out by
                // `next_now` on the next turn.
                _ => {}
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
    /// After `close()` (or the client's), the results already received, then a `ClientClosed`
    /// pair for every login not handed out, then the end.
    fn __next__(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        self.origin.check(py)?;
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
        match self.next_item(py, &mut feed) {
            Ok(Some(item)) => {
                let pair = feed.pair(py, item);
                *lock(&self.state) = State::Idle(feed);
                pair.map(Some)
            }
            Ok(None) => {
                self.end();
                // The records of the call's last logins come before the end, as a call's do.
                crate::log_emitter::flush(py, crate::log_emitter::flush_until(None));
                Ok(None)
            }
            // Ctrl-C: every login in flight stops before it is raised.
            Err(err) => {
                self.end();
                Err(err)
            }
        }
    }

    /// Stops every login still running, also while another thread waits on the iterator. A
    /// reader that goes on reading gets the results already received, then ``(login_id,
    /// ClientClosed)`` for every login not handed out, then the end.
    fn close(&self) {
        self.closing.store(true, Ordering::SeqCst);
        self.origin.stop(&self.driver);
    }

    /// ``with client.investments_many(ids) as results:`` closes the call when the block ends, as
    /// the progress display's ``with`` does.
    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __exit__(&self, _kind: Py<PyAny>, _value: Py<PyAny>, _traceback: Py<PyAny>) {
        self.close();
    }

    /// The call, and where it stands: running, closed (what it left still to hand out), or ended.
    fn __repr__(&self) -> String {
        let stage = match &*lock(&self.state) {
            State::Ended => "ended",
            _ if self.closing.load(Ordering::SeqCst) => "closed",
            State::Idle(feed) if feed.client.is_closed() => "client closed",
            _ => "running",
        };
        format!("<bankfeed bulk results of Client.{}(...): {stage}>", self.origin.call)
    }
}

impl Drop for PyBulkResults {
    fn drop(&mut self) {
        if !self.origin.is_here() {
            // A forked child's copy: its channel and driver belong to the parent's runtime.
            std::mem::forget(std::mem::replace(get_mut(&mut self.state), State::Ended));
            self.origin.stop(&self.driver);
        }
    }
}

type SharedFeed = Arc<tokio::sync::Mutex<Option<Feed>>>;

/// Where an async bulk call's `on_challenge` runs, once its first `__anext__` has named the event
/// loop: the task that hands the logins' challenges to the loop, and the task of an `async def`
/// handler still answering.
#[derive(Default)]
struct Answering {
    forwarder: Mutex<AbortOnDrop>,
    task: Arc<Mutex<Option<Py<PyAny>>>>,
}

/// The iterator of an async bulk call, for ``async for``.
#[pyclass(name = "_AsyncBulkResults", module = "bankfeed._native", frozen)]
pub(crate) struct PyAsyncBulkResults {
    feed: SharedFeed,
    driver: Mutex<AbortOnDrop>,
    closing: Arc<AtomicBool>,
    origin: Origin,
    answering: Answering,
}

impl PyAsyncBulkResults {
    /// Stops every login still running: `aclose()` and `_stop_now()` (see them). An `async def`
    /// handler still answering is cancelled, as a single call's is when it ends.
    fn stop(&self, py: Python<'_>) {
        self.closing.store(true, Ordering::SeqCst);
        self.origin.stop(&self.driver);
        self.origin.stop(&self.answering.forwarder);
        handler::cancel_answering(py, &self.answering.task);
    }

    /// On the first `__anext__`, on the loop's thread: the handler of the call, if it has one,
    /// runs on this loop from now on.
    fn answer_on_loop(&self, py: Python<'_>, feed: &mut Feed) -> PyResult<()> {
        if let Some(handler) = feed.handler.take() {
            let on_loop = asyncio::OnLoop::running(py)?;
            let forwarder = (*handler).on_loop(move |work| on_loop.run(work), Arc::clone(&self.answering.task))?;
            *lock(&self.answering.forwarder) = AbortOnDrop(Some(forwarder));
        }
        Ok(())
    }
}

#[pymethods]
impl PyAsyncBulkResults {
    fn __aiter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// The next login to finish: at once when one is ready, else when one finishes. After
    /// `aclose()` (or the client's close), the results already received, then a `ClientClosed`
    /// pair for every login not handed out, then the end.
    fn __anext__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.origin.check(py)?;
        let client = {
            // Uncontended unless a previous `__anext__` is still waiting.
            let Ok(mut guard) = self.feed.try_lock() else {
                return Err(PyRuntimeError::new_err("anext(): the previous one is still waiting"));
            };
            let Some(feed) = guard.as_mut() else { return Err(PyStopAsyncIteration::new_err(())) };
            self.answer_on_loop(py, feed)?;
            match feed.next_now() {
                Some(Some(item)) => return asyncio::ready(py, feed.pair(py, item)?),
                Some(None) => {
                    *guard = None;
                    return Err(PyStopAsyncIteration::new_err(()));
                }
                None => feed.client.clone(),
            }
        };
        let feed = Arc::clone(&self.feed);
        let future = async move {
            let mut guard = feed.lock().await;
            let Some(feed) = guard.as_mut() else { return Ok(None) };
            loop {
                if let Some(next) = feed.next_now() {
                    if next.is_none() {
                        *guard = None;
                    }
                    return Ok(next);
                }
                // `aclose()` aborts the driver, which ends this wait; the client's close ends
                // every login, whose results end it.
                if let Some(item) = feed.receiver.recv().await {
                    if let Some(item) = feed.received(item) {
                        return Ok(Some(item));
                    }
                }
            }
        };
        Invocation::new(&client, future, next_pair).run(py, Flavor::Async)
    }

    /// Stops every login still running, also while an ``__anext__`` waits. A reader that goes on
    /// reading gets the results already received, then ``(login_id, ClientClosed)`` for every
    /// login not handed out, then the end.
    fn aclose(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.stop(py);
        asyncio::ready(py, py.None())
    }

    /// What `aclose()` does, at once and without a loop: for `bf.combine`, which refuses an
    /// async iterator from sync code and stops its logins rather than leave them running.
    fn _stop_now(&self, py: Python<'_>) {
        self.stop(py);
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

    /// As ``_BulkResults`` shows itself.
    fn __repr__(&self) -> String {
        let stage = match self.feed.try_lock() {
            Ok(feed) if feed.is_none() => "ended",
            _ if self.closing.load(Ordering::SeqCst) => "closed",
            Ok(feed) if feed.as_ref().is_some_and(|feed| feed.client.is_closed()) => "client closed",
            // Locked: an `__anext__` waits for the next result.
            _ => "running",
        };
        format!("<bankfeed bulk results of AsyncClient.{}(...): {stage}>", self.origin.call)
    }
}

impl Drop for PyAsyncBulkResults {
    fn drop(&mut self) {
        if !self.origin.is_here() {
            // As for `PyBulkResults`: the parent's channel is never dropped in a child.
            std::mem::forget(Arc::clone(&self.feed));
            self.origin.stop(&self.driver);
            self.origin.stop(&self.answering.forwarder);
        }
    }
}

/// The value of an `__anext__` that waited: the pair, or the end of the iteration.
fn next_pair(py: Python<'_>, client: &Client, flavor: Flavor, item: Option<Item>) -> PyResult<Py<PyAny>> {
    match item {
        Some(item) => pair(py, item, client, flavor),
        None => Err(PyStopAsyncIteration::new_err(())),
    }
}

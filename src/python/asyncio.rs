//! Runs operations for the async classes (`AsyncClient`, `AsyncSession`, `AsyncChallenge`): each
//! call returns a coroutine; awaiting it runs the operation on the shared runtime
//! (docs/architecture.md#the-asyncio-runner).
//!
//! The IO threads never take the GIL. A finished call leaves its value in a slot and its token in
//! its event loop's queue, then writes one byte to a socket the loop watches (`add_reader`); the
//! loop thread drains the queue and resolves the futures its tasks wait on, and each coroutine
//! converts its own value when its task resumes. So a busy event loop never stalls the IO of
//! other calls, nothing enters Python from a thread Python did not start (the exit gate of
//! docs/architecture.md#exit-with-calls-in-flight holds by construction), and many calls that
//! finish together cost the loop one wake-up.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use pyo3::exceptions::{PyBaseException, PyRuntimeError, PyStopIteration};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyDict;
use tokio::sync::oneshot;

use super::challenge::{self, handler_error};
use super::errors::PyBankfeedError;
use super::operation::{refuse, Answerer, Flavor, Operation};
use super::runtime::{runtime, AbortOnDrop};
use crate::authorize::{Answers, Challenge, ChallengeHandler};
use crate::error::Error;
use crate::sync::lock;
use crate::Client;

/// A finished call's outcome, turned into Python by the coroutine when its task resumes.
type Finish = Box<dyn FnOnce(Python<'_>) -> PyResult<Py<PyAny>> + Send>;
type Slot = Arc<Mutex<Option<Finish>>>;
/// Starts the call on the runtime, given its loop's queue, its token and its slot.
type Launch = Box<dyn FnOnce(&Arc<Wakeup>, u64, Slot) -> Result<tokio::task::JoinHandle<()>, PyBankfeedError> + Send>;

/// Tokens name calls in their loop's queue; unique in the process.
static NEXT_TOKEN: AtomicU64 = AtomicU64::new(0);

/// Returns a coroutine that runs `operation` when awaited.
pub(crate) fn start<T: Send + 'static>(py: Python<'_>, operation: Operation<T>) -> PyResult<Py<PyAny>> {
    super::logging::refresh(py);
    let Operation { client, start, on_challenge, convert } = operation;
    let answers = on_challenge.is_some();
    let owner = client.clone();
    let launch: Launch = Box::new(move |wakeup, token, slot| {
        let answerer: Answerer =
            if answers { Box::new(LoopAsker { wakeup: Arc::clone(wakeup), token }) } else { Box::new(refuse) };
        let future = start(answerer);
        let mut finisher = Finisher { slot, wakeup: Arc::clone(wakeup), token, finished: false };
        Ok(runtime()?.spawn(async move {
            let result = future.await;
            finisher.finish(Box::new(move |py| match result {
                Ok(value) => convert(py, &owner, Flavor::Async, value),
                Err(error) => Err(PyBankfeedError::with_client(error, &owner, Flavor::Async).into()),
            }));
        }))
    });
    let call = PyCall { state: Mutex::new(State::New { launch, handler: on_challenge, client }) };
    Ok(Py::new(py, call)?.into_any())
}

/// A coroutine that returns `value` at once (`__aenter__`, an item already received).
pub(crate) fn ready(py: Python<'_>, value: Py<PyAny>) -> PyResult<Py<PyAny>> {
    let call = PyCall { state: Mutex::new(State::Ready(Box::new(move |_| Ok(value)))) };
    Ok(Py::new(py, call)?.into_any())
}

/// Fills the slot and wakes the loop, also when the task ends without a value (a panic): a
/// coroutine must never wait for a call that is gone.
struct Finisher {
    slot: Slot,
    wakeup: Arc<Wakeup>,
    token: u64,
    finished: bool,
}

impl Finisher {
    fn finish(&mut self, outcome: Finish) {
        *lock(&self.slot) = Some(outcome);
        self.finished = true;
        self.wakeup.push(Wake::Done(self.token));
    }
}

impl Drop for Finisher {
    fn drop(&mut self) {
        // Dropped unfinished: the task panicked (its message went to stderr through the panic
        // hook), or it was aborted because its coroutine was cancelled, when nobody waits.
        if !self.finished {
            self.finish(Box::new(|_| {
                Err(PyBankfeedError::internal("bankfeed's background task panicked (its message is on stderr)").into())
            }));
        }
    }
}

/// A call's answerer: asks the event loop's thread to run `on_challenge`, as the blocking runner
/// asks the caller's thread.
struct LoopAsker {
    wakeup: Arc<Wakeup>,
    token: u64,
}

impl ChallengeHandler for LoopAsker {
    fn answer<'a>(
        &'a mut self,
        challenge: &'a Challenge,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<Answers, Error>> + Send + 'a>> {
        let (reply, answer) = oneshot::channel();
        self.wakeup.push(Wake::Ask(self.token, challenge.clone(), reply));
        Box::pin(async move {
            answer.await.map_err(|_| handler_error(PyRuntimeError::new_err("the challenge was not answered")))?
        })
    }
}

enum Wake {
    Done(u64),
    Ask(u64, Challenge, oneshot::Sender<Result<Answers, Error>>),
}

/// The IO threads' side of an event loop: what they hand it, and the socket that wakes it.
struct Wakeup {
    items: Mutex<Vec<Wake>>,
    /// A byte is in the socket that the loop has not drained yet: no need to write another.
    armed: AtomicBool,
    writer: UnixStream,
}

impl Wakeup {
    fn push(&self, wake: Wake) {
        lock(&self.items).push(wake);
        if !self.armed.swap(true, Ordering::SeqCst) {
            // Non-blocking: a full socket already holds a byte for the loop.
            let _ = (&self.writer).write(&[1]);
        }
    }
}

/// The loop thread's side: the calls waiting on this loop, and the reader callback that drains
/// the queue. Created once per event loop (and again in a forked child).
#[pyclass(frozen)]
struct LoopWaker {
    wakeup: Arc<Wakeup>,
    reader: UnixStream,
    calls: Mutex<HashMap<u64, Entry>>,
    event_loop: Py<PyAny>,
    pid: u32,
}

/// A call waiting on its loop.
struct Entry {
    /// The asyncio future its task waits on.
    future: Py<PyAny>,
    handler: Option<Py<PyAny>>,
    client: Client,
    /// The task awaiting an `async def` handler's answers, cancelled with the call.
    answering: Option<Py<PyAny>>,
}

impl LoopWaker {
    fn forget(&self, token: u64) -> Option<Entry> {
        lock(&self.calls).remove(&token)
    }

    /// Runs `on_challenge` on the loop thread; an awaitable it returns is awaited in a task of its
    /// own, whose result goes back to the call.
    fn ask(&self, py: Python<'_>, token: u64, challenge: Challenge, reply: oneshot::Sender<Result<Answers, Error>>) {
        let Some((handler, client)) = lock(&self.calls)
            .get(&token)
            .map(|entry| (entry.handler.as_ref().map(|handler| handler.clone_ref(py)), entry.client.clone()))
        else {
            return; // The call is gone; dropping `reply` ends its wait.
        };
        let Some(handler) = handler else {
            let _ = reply.send(refuse(&challenge));
            return;
        };
        let answered = match challenge::ask(py, handler.bind(py), &client, Flavor::Async, challenge.clone()) {
            Ok(answered) => answered,
            Err(error) => {
                let _ = reply.send(Err(error));
                return;
            }
        };
        if !challenge::is_awaitable(&answered) {
            let _ = reply.send(challenge::handler_answers(&answered, &challenge));
            return;
        }
        let waiting = ensure_future(py, &answered, self.event_loop.bind(py)).and_then(|task| {
            let reply = Py::new(py, Reply { reply: Mutex::new(Some(reply)), challenge })?;
            task.call_method1(intern!(py, "add_done_callback"), (reply,))?;
            Ok(task)
        });
        match waiting {
            Ok(task) => {
                if let Some(entry) = lock(&self.calls).get_mut(&token) {
                    entry.answering = Some(task.unbind());
                }
            }
            // `reply` went with the failed closure; the call then ends as not answered.
            Err(err) => err.write_unraisable(py, Some(&answered)),
        }
    }
}

#[pymethods]
impl LoopWaker {
    /// The reader callback: resolves the futures of the finished calls, and runs the handlers
    /// of the calls that met a challenge.
    fn __call__(&self, py: Python<'_>) {
        // Disarmed before the queue is taken, so a push after the take writes a new byte.
        self.wakeup.armed.store(false, Ordering::SeqCst);
        let mut buffer = [0_u8; 64];
        while matches!((&self.reader).read(&mut buffer), Ok(read) if read == buffer.len()) {}
        let items = std::mem::take(&mut *lock(&self.wakeup.items));
        for item in items {
            match item {
                Wake::Done(token) => {
                    let Some(entry) = self.forget(token) else { continue };
                    let future = entry.future.bind(py);
                    // A cancelled future stays cancelled: its coroutine was told already.
                    let resolved =
                        future.call_method0(intern!(py, "done")).and_then(|done| done.is_truthy()).and_then(|done| {
                            if done {
                                Ok(())
                            } else {
                                future.call_method1(intern!(py, "set_result"), (py.None(),)).map(drop)
                            }
                        });
                    if let Err(err) = resolved {
                        err.write_unraisable(py, Some(future));
                    }
                }
                Wake::Ask(token, challenge, reply) => self.ask(py, token, challenge, reply),
            }
        }
    }
}

/// Takes the answers of an `async def` handler when its task is done.
#[pyclass(frozen)]
struct Reply {
    reply: Mutex<Option<oneshot::Sender<Result<Answers, Error>>>>,
    challenge: Challenge,
}

#[pymethods]
impl Reply {
    fn __call__(&self, task: &Bound<'_, PyAny>) {
        let Some(reply) = lock(&self.reply).take() else { return };
        // `result()` raises the handler's exception (CancelledError too), which is then raised
        // by the call as it was.
        let answers = match task.call_method0(intern!(task.py(), "result")) {
            Ok(answers) => challenge::handler_answers(&answers, &self.challenge),
            Err(err) => Err(handler_error(err)),
        };
        let _ = reply.send(answers);
    }
}

fn asyncio_function<'py>(
    py: Python<'py>,
    cell: &'static PyOnceLock<Py<PyAny>>,
    name: &str,
) -> PyResult<Bound<'py, PyAny>> {
    Ok(cell.get_or_try_init(py, || Ok::<_, PyErr>(py.import("asyncio")?.getattr(name)?.unbind()))?.bind(py).clone())
}

fn ensure_future<'py>(
    py: Python<'py>,
    awaitable: &Bound<'py, PyAny>,
    event_loop: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    static ENSURE_FUTURE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let kwargs = PyDict::new(py);
    kwargs.set_item(intern!(py, "loop"), event_loop)?;
    asyncio_function(py, &ENSURE_FUTURE, "ensure_future")?.call((awaitable,), Some(&kwargs))
}

fn running_loop(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    static GET_RUNNING_LOOP: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    asyncio_function(py, &GET_RUNNING_LOOP, "get_running_loop")?.call0().map_err(|_| {
        PyRuntimeError::new_err(
            "an AsyncClient call runs in a running asyncio event loop: await it inside `async def` \
             (asyncio.run(main())), or use bf.Client outside one",
        )
    })
}

/// The waker of `event_loop`, made and registered with it on its first call.
fn waker_for<'py>(py: Python<'py>, event_loop: &Bound<'py, PyAny>) -> PyResult<Bound<'py, LoopWaker>> {
    static WAKERS: PyOnceLock<Py<PyDict>> = PyOnceLock::new();
    let wakers = WAKERS.get_or_init(py, || PyDict::new(py).unbind()).bind(py);
    let pid = std::process::id();
    if let Some(waker) = wakers.get_item(event_loop)? {
        let waker = waker.cast_into::<LoopWaker>()?;
        if waker.get().pid == pid {
            return Ok(waker);
        }
    }
    // A closed loop will not call again: its waker and sockets go (the dict held the loop).
    let mut closed = Vec::new();
    for (other, _) in wakers.iter() {
        if other.call_method0(intern!(py, "is_closed"))?.is_truthy()? {
            closed.push(other);
        }
    }
    for other in closed {
        wakers.del_item(other)?;
    }
    let (reader, writer) =
        UnixStream::pair().map_err(|e| PyBankfeedError::internal(format!("no wake-up socket: {e}")))?;
    reader
        .set_nonblocking(true)
        .and_then(|()| writer.set_nonblocking(true))
        .map_err(|e| PyBankfeedError::internal(format!("no wake-up socket: {e}")))?;
    let fd = reader.as_raw_fd();
    let wakeup = Arc::new(Wakeup { items: Mutex::new(Vec::new()), armed: AtomicBool::new(false), writer });
    let waker = Bound::new(
        py,
        LoopWaker { wakeup, reader, calls: Mutex::new(HashMap::new()), event_loop: event_loop.clone().unbind(), pid },
    )?;
    event_loop.call_method1(intern!(py, "add_reader"), (fd, &waker))?;
    wakers.set_item(event_loop, &waker)?;
    Ok(waker)
}

enum State {
    New { launch: Launch, handler: Option<Py<PyAny>>, client: Client },
    Ready(Finish),
    Running(Running),
    Done,
}

struct Running {
    future: Py<PyAny>,
    slot: Slot,
    /// Dropping it cancels the call: its task is aborted and its entry leaves the loop's table.
    _task: AbortOnDrop,
    registered: Registered,
}

/// A call's place in its loop's table, left when the call is dropped or cancelled.
struct Registered {
    waker: Py<LoopWaker>,
    token: u64,
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.waker.get().forget(self.token);
    }
}

/// The coroutine an async method returns. It is a `collections.abc.Coroutine` (`send`, `throw`,
/// `close`, `__await__`), so `await`, `asyncio.run`, `create_task`, `gather` and `wait_for` all
/// take it; the work starts when it is first awaited, and stops at once when it is cancelled.
#[pyclass(name = "_Call", module = "bankfeed", frozen)]
pub(crate) struct PyCall {
    state: Mutex<State>,
}

fn returned(result: PyResult<Py<PyAny>>) -> PyErr {
    match result {
        Ok(value) => PyStopIteration::new_err((value,)),
        Err(err) => err,
    }
}

impl PyCall {
    fn step(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let state = std::mem::replace(&mut *lock(&self.state), State::Done);
        match state {
            State::New { launch, handler, client } => {
                let event_loop = running_loop(py)?;
                let waker = waker_for(py, &event_loop)?;
                let future = event_loop.call_method0(intern!(py, "create_future"))?;
                let token = NEXT_TOKEN.fetch_add(1, Ordering::Relaxed);
                let entry = Entry { future: future.clone().unbind(), handler, client, answering: None };
                lock(&waker.get().calls).insert(token, entry);
                let registered = Registered { waker: waker.clone().unbind(), token };
                let slot = Slot::default();
                let task = AbortOnDrop(Some(launch(&waker.get().wakeup, token, Arc::clone(&slot))?));
                future.setattr(intern!(py, "_asyncio_future_blocking"), true)?;
                let running = Running { future: future.clone().unbind(), slot, _task: task, registered };
                *lock(&self.state) = State::Running(running);
                Ok(future.unbind())
            }
            State::Ready(finish) => Err(returned(finish(py))),
            State::Running(running) => {
                let finish = lock(&running.slot).take();
                match finish {
                    Some(finish) => Err(returned(finish(py))),
                    None => {
                        // Resumed before the call finished (driven by hand): wait again.
                        let future = running.future.clone_ref(py);
                        future.bind(py).setattr(intern!(py, "_asyncio_future_blocking"), true)?;
                        *lock(&self.state) = State::Running(running);
                        Ok(future)
                    }
                }
            }
            State::Done => Err(PyRuntimeError::new_err("cannot reuse an already awaited bankfeed call")),
        }
    }

    /// Stops the call where it stands: its task is aborted (the request in flight and any poll
    /// sleep are dropped), and an `async def` handler still answering is cancelled.
    fn cancel(&self, py: Python<'_>) {
        let state = std::mem::replace(&mut *lock(&self.state), State::Done);
        if let State::Running(running) = state {
            let answering = running.registered.waker.get().forget(running.registered.token).and_then(|e| e.answering);
            drop(running);
            if let Some(task) = answering {
                if let Err(err) = task.bind(py).call_method0(intern!(py, "cancel")) {
                    err.write_unraisable(py, None);
                }
            }
        }
    }
}

#[pymethods]
impl PyCall {
    fn __await__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.step(py)
    }

    /// Resumes the coroutine (the value sent is ignored, as its task sends None).
    fn send(&self, py: Python<'_>, _value: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.step(py)
    }

    /// Cancels the call, then raises the exception in the awaiting code (a task's cancellation,
    /// `asyncio.wait_for`'s timeout).
    #[pyo3(signature = (kind, value=None, traceback=None))]
    fn throw(
        &self,
        py: Python<'_>,
        kind: &Bound<'_, PyAny>,
        value: Option<&Bound<'_, PyAny>>,
        traceback: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        self.cancel(py);
        let exception = if kind.is_instance_of::<PyBaseException>() {
            kind.clone()
        } else {
            match value {
                Some(value) if value.is_instance_of::<PyBaseException>() => value.clone(),
                Some(value) if !value.is_none() => kind.call1((value,))?,
                _ => kind.call0()?,
            }
        };
        if let Some(traceback) = traceback.filter(|traceback| !traceback.is_none()) {
            exception.call_method1(intern!(py, "with_traceback"), (traceback,))?;
        }
        Err(PyErr::from_value(exception))
    }

    /// Cancels the call if it is running.
    fn close(&self, py: Python<'_>) {
        self.cancel(py);
    }
}

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
use std::ffi::CString;
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use pyo3::exceptions::{PyAttributeError, PyBaseException, PyRuntimeError, PyRuntimeWarning, PyStopIteration};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyString};
use tokio::sync::oneshot;

use crate::error::PyBankfeedError;
use crate::handler::{self, handler_error, Deliver, LoopWork};
use crate::invocation::{refuse, Answerer, CallName, Flavor, Invocation};
use crate::runtime::{runtime, AbortOnDrop};
use bankfeed::authorize::{Answers, Challenge, ChallengeHandler};
use bankfeed::error::Error;
use bankfeed::sync::{get_mut, lock};
use bankfeed::Client;

/// A finished call's outcome, turned into Python by the coroutine when its task resumes.
type Finish = Box<dyn FnOnce(Python<'_>) -> PyResult<Py<PyAny>> + Send>;
type Slot = Arc<Mutex<Option<Finish>>>;
/// Starts the call on the runtime, given its loop's queue, its token and its slot.
type Launch = Box<dyn FnOnce(&Arc<Wakeup>, u64, Slot) -> Result<tokio::task::JoinHandle<()>, PyBankfeedError> + Send>;

/// Tokens name calls in their loop's queue; unique in the process.
static NEXT_TOKEN: AtomicU64 = AtomicU64::new(0);

/// Returns a coroutine that runs `operation` when awaited.
pub(crate) fn start<T: Send + 'static>(py: Python<'_>, invocation: Invocation<T>) -> PyResult<Py<PyAny>> {
    crate::logging::refresh(py)?;
    let Invocation { client, name, start, on_challenge, convert } = invocation;
    let answers = on_challenge.is_some();
    let owner = client.clone();
    let method = name.map(|name| name.method);
    let launch: Launch = Box::new(move |wakeup, token, slot| {
        let answerer: Answerer =
            if answers { Box::new(LoopAsker { wakeup: Arc::clone(wakeup), token }) } else { Box::new(refuse) };
        let future = start(answerer);
        let mut finisher = Finisher { slot, wakeup: Arc::clone(wakeup), token, finished: false };
        Ok(runtime()?.spawn(async move {
            let result = future.await;
            finisher.finish(Box::new(move |py| match result {
                Ok(value) => convert(py, &owner, Flavor::Async, value),
                Err(error) => Err(PyBankfeedError::with_client(error, &owner, Flavor::Async, method).into()),
            }));
        }))
    });
    let call = PyCall { name, state: Mutex::new(State::New { launch, handler: on_challenge, client }) };
    Ok(Py::new(py, call)?.into_any())
}

/// A coroutine that returns `value` at once (`__aenter__`, an item already received).
pub(crate) fn ready(py: Python<'_>, value: Py<PyAny>) -> PyResult<Py<PyAny>> {
    let call = PyCall { name: None, state: Mutex::new(State::Ready(Box::new(move |_| Ok(value)))) };
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
        self.wakeup.push(Wake::Ask(self.token, Box::new(challenge.clone()), reply));
        Box::pin(async move {
            answer.await.map_err(|_| handler_error(PyRuntimeError::new_err("the challenge was not answered")))?
        })
    }
}

enum Wake {
    Done(u64),
    /// Boxed: a challenge is large, the other wakes a number.
    Ask(u64, Box<Challenge>, oneshot::Sender<Result<Answers, Error>>),
    /// Work of no one call, run on the loop's thread with the event loop ([`OnLoop`]).
    Run(LoopWork),
}

/// An event loop, as any thread sees it: work handed to it runs on the loop's thread, as the
/// answers of a call's challenge do. A bulk call's logins start its `on_challenge` through it
/// (src/handler.rs).
pub(crate) struct OnLoop {
    wakeup: Arc<Wakeup>,
}

impl OnLoop {
    /// The event loop running in this thread; a RuntimeError saying how to run one when none is.
    pub(crate) fn running(py: Python<'_>) -> PyResult<Self> {
        let event_loop = running_loop(py)?;
        let waker = waker_for(py, &event_loop)?;
        Ok(OnLoop { wakeup: Arc::clone(&waker.get().wakeup) })
    }

    /// Runs `work` on the loop's thread, soon; never when the loop is closed first.
    pub(crate) fn run(&self, work: LoopWork) {
        self.wakeup.push(Wake::Run(work));
    }
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

    /// Starts `on_challenge` for the call `token` (src/handler.rs): an `async def` one as
    /// a task of this loop, kept to be cancelled with the call; a plain one on a thread of its
    /// own, so that a handler that blocks does not stall the loop, and the call still ends at its
    /// deadline. The answers are read on the loop's thread, and go back to the call.
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
        let asked = challenge.clone();
        let deliver = Deliver::new(move |_, ok, value| {
            let _ = reply.send(handler::outcome_answers(ok, &value, &asked, Flavor::Async));
        });
        let event_loop = self.event_loop.bind(py);
        if let Some(task) = handler::start_on_loop(py, event_loop, handler.bind(py), &client, challenge, deliver) {
            if let Some(entry) = lock(&self.calls).get_mut(&token) {
                entry.answering = Some(task.unbind());
            }
        }
    }
}

#[pymethods]
impl LoopWaker {
    /// The reader callback: resolves the futures of the finished calls, runs the handlers of the
    /// calls that met a challenge, and the work handed to the loop ([`OnLoop`]).
    fn __call__(&self, py: Python<'_>) {
        // Drained, then disarmed, then the queue taken, in this order. Drained after the disarm,
        // the socket could lose the byte of a push made in between: `armed` would stay set with
        // nothing to read, no later push would write again, and every call of this loop would
        // wait forever. In this order a push before the disarm is in the queue taken below, and
        // a push after it writes a byte that wakes the loop again.
        let mut buffer = [0_u8; 64];
        while matches!((&self.reader).read(&mut buffer), Ok(read) if read == buffer.len()) {}
        self.wakeup.armed.store(false, Ordering::SeqCst);
        let items = std::mem::take(&mut *lock(&self.wakeup.items));
        for item in items {
            match item {
                Wake::Done(token) => {
                    let Some(entry) = self.forget(token) else { continue };
                    if let Some(answering) = &entry.answering {
                        // The call ended (its deadline ran out, say) while an `async def` handler
                        // was still answering: its answer can no longer be used, so it is stopped
                        // rather than left running in the background. A finished one ignores this.
                        let answering = answering.bind(py);
                        if let Err(err) = answering.call_method0(intern!(py, "cancel")) {
                            err.write_unraisable(py, Some(answering));
                        }
                    }
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
                Wake::Ask(token, challenge, reply) => self.ask(py, token, *challenge, reply),
                Wake::Run(work) => work(py, self.event_loop.bind(py)),
            }
        }
    }
}

fn asyncio_function<'py>(
    py: Python<'py>,
    cell: &'static PyOnceLock<Py<PyAny>>,
    name: &str,
) -> PyResult<Bound<'py, PyAny>> {
    Ok(cell.get_or_try_init(py, || Ok::<_, PyErr>(py.import("asyncio")?.getattr(name)?.unbind()))?.bind(py).clone())
}

fn running_loop(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    static GET_RUNNING_LOOP: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    asyncio_function(py, &GET_RUNNING_LOOP, "get_running_loop")?.call0().map_err(|_| {
        PyRuntimeError::new_err(
            "an AsyncClient call needs a running asyncio event loop (asyncio's or uvloop's) in this thread, and \
             none is running: await the call inside `async def` run by asyncio (asyncio.run(main()), a notebook, \
             pytest-asyncio, anyio's asyncio backend; trio is not supported), or use bf.Client outside one",
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
    // The loops are listed first: `is_closed` is Python code, during which another thread may
    // register its own loop, and a dict changed while it is iterated is a panic.
    let mut closed = Vec::new();
    for other in wakers.keys() {
        if other.call_method0(intern!(py, "is_closed"))?.is_truthy()? {
            closed.push(other);
        }
    }
    for other in closed {
        // Another thread may have let it go meanwhile.
        if wakers.contains(&other)? {
            wakers.del_item(other)?;
        }
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
/// Dropped without ever being driven, it warns as a forgotten native coroutine does: a call never
/// awaited sends nothing, and a notebook cell that forgot `await` would otherwise look done.
#[pyclass(name = "_Call", module = "bankfeed", frozen)]
pub(crate) struct PyCall {
    name: Option<CallName>,
    state: Mutex<State>,
}

impl Drop for PyCall {
    fn drop(&mut self) {
        let Some(name) = self.name else { return };
        let state = get_mut(&mut self.state);
        // Awaited, cancelled and closed calls have left `New` (the first step, `throw` or `close`).
        if !matches!(state, State::New { .. }) {
            return;
        }
        // No warning once Python's exit has begun: the warnings machinery may be gone by then.
        crate::exit::run_unless_exiting(|| Python::try_attach(|py| warn_never_awaited(py, name)));
    }
}

/// Warns, as `RuntimeWarning: coroutine '...' was never awaited` does, from the deallocation of
/// the call, with the GIL held.
fn warn_never_awaited(py: Python<'_>, name: CallName) {
    // The call may be dropped while an exception propagates (its frame unwinding): that exception
    // is set aside, since the warnings machinery must run without one, and put back after.
    let pending = PyErr::take(py);
    let message = format!("{name} was never awaited, so it sent nothing: a bankfeed async call runs when awaited");
    let warned = CString::new(message).map_err(|e| PyRuntimeError::new_err(e.to_string())).and_then(|message| {
        // Level 1: the Python line running when the call was dropped, as for a native coroutine.
        PyErr::warn(py, &py.get_type::<PyRuntimeWarning>(), &message, 1)
    });
    if let Err(err) = warned {
        // `-W error::RuntimeWarning`: reported as Python reports a native coroutine's.
        let shown = PyString::new(py, &format!("<awaitable {name}>"));
        err.write_unraisable(py, Some(shown.as_any()));
    }
    if let Some(pending) = pending {
        pending.restore(py);
    }
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
                if let Some(finish) = finish {
                    Err(returned(finish(py)))
                } else {
                    // Resumed before the call finished (driven by hand): wait again.
                    let future = running.future.clone_ref(py);
                    future.bind(py).setattr(intern!(py, "_asyncio_future_blocking"), true)?;
                    *lock(&self.state) = State::Running(running);
                    Ok(future)
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

    /// Names the call but never its arguments, which may be secrets.
    fn __repr__(&self) -> String {
        let stage = match *lock(&self.state) {
            State::New { .. } | State::Ready(_) => "",
            State::Running(_) => " (running)",
            State::Done => " (done)",
        };
        match self.name {
            Some(name) => format!("<awaitable {name}{stage}>"),
            None => format!("<awaitable bankfeed call{stage}>"),
        }
    }

    /// Only for a failed lookup: the usual slip is a call used as its result, without `await`.
    fn __getattr__(&self, attribute: &str) -> PyResult<Py<PyAny>> {
        let mut message = format!("'bankfeed._Call' object has no attribute '{attribute}'");
        if !attribute.starts_with('_') {
            let what = self.name.map_or_else(|| "this bankfeed call".to_owned(), |name| name.to_string());
            message
                .push_str(&format!(": {what} is an awaitable; did you forget `await`? (`(await call).{attribute}`)"));
        }
        Err(PyAttributeError::new_err(message))
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

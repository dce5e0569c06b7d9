//! Runs core futures for the synchronous API: on a shared runtime, with the GIL released, waking
//! every few milliseconds to let Python deliver signals, so Ctrl-C stops a wait at once
//! (docs/architecture.md#where-the-gil-is-released).

use std::future::Future;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use pyo3::prelude::*;
use tokio::runtime::Runtime;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::error::PyBankfeedError;
use crate::handler::{self, Deliver};
use crate::invocation::{refuse, Answerer, Flavor, Invocation};
use crate::log_emitter;
use crate::runtime::{runtime, AbortOnDrop};
use bankfeed::authorize::{Answers, Challenge, ChallengeHandler};
use bankfeed::bulk::panic_message;
use bankfeed::error::Error;
use bankfeed::Client;

/// How often a waiting call looks for Ctrl-C: well inside the half second a user tolerates.
pub(crate) const SIGNAL_CHECK: Duration = Duration::from_millis(50);

type Reply = oneshot::Sender<Result<Answers, Error>>;

enum Message<T> {
    Done(Result<T, Error>),
    /// The call met a challenge: the handler is to be started, and its outcome sent back on the
    /// sender that comes with it.
    Ask(Challenge, Reply, mpsc::Sender<Message<T>>),
    /// The handler's outcome, from its thread: read into answers on the waiting thread.
    Answered(bool, Py<PyAny>, Challenge, Reply),
}

/// A handler that asks the waiting Python thread for the answers: it starts the caller's
/// `on_challenge` (on a thread of its own, src/handler.rs) and goes on waiting, for the
/// answers or for the end of the call.
struct Asker<T> {
    sender: mpsc::Sender<Message<T>>,
}

impl<T: Send + 'static> ChallengeHandler for Asker<T> {
    fn answer<'a>(
        &'a mut self,
        challenge: &'a Challenge,
    ) -> std::pin::Pin<Box<dyn Future<Output = Result<Answers, Error>> + Send + 'a>> {
        let (reply, answer) = oneshot::channel();
        let sent = self.sender.send(Message::Ask(challenge.clone(), reply, self.sender.clone()));
        Box::pin(async move {
            sent.map_err(|_| cancelled())?;
            answer.await.map_err(|_| cancelled())?
        })
    }
}

fn cancelled() -> Error {
    Error::Handler(std::sync::Arc::new(std::io::Error::other("the call was cancelled")))
}

/// Runs `operation` to completion on the caller's behalf and converts its value.
pub(crate) fn run<T: Send + 'static>(py: Python<'_>, invocation: Invocation<T>) -> PyResult<Py<PyAny>> {
    let Invocation { client, name, start, on_challenge, convert } = invocation;
    let handler = on_challenge.as_ref().map(|handler| handler.bind(py));
    let value = wait(py, Some(&client), name.map(|name| name.method), start, handler)?;
    convert(py, &client, Flavor::Blocking, value)
}

/// Runs `start(answerer)` with the GIL released, waking every [`SIGNAL_CHECK`] for Ctrl-C.
/// `handler` (the caller's `on_challenge`) is started for each challenge the answerer receives,
/// and its answers are read on this thread; without one a challenge is `ChallengeRequired`. A
/// core error leaves as the bridge type, carrying `client` so that a `ChallengeRequired` can be
/// answered.
pub(crate) fn wait<T, Fut>(
    py: Python<'_>,
    client: Option<&Client>,
    call: Option<&'static str>,
    start: impl FnOnce(Answerer) -> Fut,
    handler: Option<&Bound<'_, PyAny>>,
) -> Result<T, PyBankfeedError>
where
    T: Send + 'static,
    Fut: Future<Output = Result<T, Error>> + Send + 'static,
{
    // The levels the application configured now apply to this call's records.
    crate::logging::refresh(py)?;
    // When the call's deadline runs out (or, given none, never): its records are awaited before
    // it returns, but not for long past that.
    let deadline =
        client.and_then(|client| client.config().deadline).and_then(|deadline| Instant::now().checked_add(deadline));
    let runtime = runtime()?;
    let (sender, mut receiver) = mpsc::channel();
    let future = start(Box::new(Asker { sender: sender.clone() }));
    // Aborting drops the future: the request in flight and any sleep end with it.
    let mut task = AbortOnDrop(Some(runtime.spawn(async move {
        let _ = sender.send(Message::Done(future.await));
    })));
    // A message taken without waiting, once the task was seen finished.
    let mut taken = None;
    // The handlers started on threads of their own, told on this thread when the call ends.
    let mut started = handler::Started::default();
    loop {
        let message = if let Some(message) = taken.take() {
            Ok(message)
        } else {
            let (back, message) = py.detach(move || {
                let message = receiver.recv_timeout(SIGNAL_CHECK);
                (receiver, message)
            });
            receiver = back;
            message
        };
        match message {
            Ok(Message::Done(result)) => {
                log_emitter::flush(py, log_emitter::flush_until(deadline));
                return result.map_err(|error| match client {
                    Some(client) => PyBankfeedError::with_client(error, client, Flavor::Blocking, call),
                    None => error.into(),
                });
            }
            Ok(Message::Ask(challenge, reply, answers_to)) => match (handler, client) {
                (Some(handler), Some(client)) => {
                    let asked = challenge.clone();
                    let deliver = Deliver::new(move |_, ok, value| {
                        // The call may be over (its deadline, a close): then nobody reads this.
                        let _ = answers_to.send(Message::Answered(ok, value.unbind(), asked, reply));
                    });
                    if let Some(answering) = handler::start_blocking(py, handler, client, challenge, deliver) {
                        started.push(answering);
                    }
                }
                _ => {
                    let _ = reply.send(refuse(&challenge));
                }
            },
            Ok(Message::Answered(ok, value, challenge, reply)) => {
                let _ = reply.send(handler::outcome_answers(ok, value.bind(py), &challenge, Flavor::Blocking));
            }
            Err(RecvTimeoutError::Timeout) => {
                py.check_signals()?;
                // A handler still running holds a sender, so a task that ended without an answer
                // (a panic) is not seen as a closed channel: it is seen finished. What it sent
                // before it ended is in the channel by then.
                if task.0.as_ref().is_some_and(JoinHandle::is_finished) {
                    match receiver.try_recv() {
                        Ok(message) => taken = Some(message),
                        Err(_) => return Err(ended(py, runtime, task.0.take())),
                    }
                }
            }
            Err(RecvTimeoutError::Disconnected) => return Err(ended(py, runtime, task.0.take())),
        }
    }
}

/// Why the task dropped its sender without an answer: its panic, with the panic's message.
fn ended(py: Python<'_>, runtime: &Runtime, task: Option<JoinHandle<()>>) -> PyBankfeedError {
    // Both senders are gone, so the task has finished or is unwinding: this wait is short.
    let outcome = task.map(|task| py.detach(move || runtime.block_on(task)));
    match outcome {
        Some(Err(error)) if error.is_panic() => PyBankfeedError::internal(format!(
            "bankfeed's background task panicked: {}",
            panic_message(error.into_panic().as_ref())
        )),
        _ => PyBankfeedError::internal("bankfeed's background task ended without an answer"),
    }
}

/// Runs a future that needs no challenge answers and no conversion (the sandbox's waits).
pub(crate) fn run_plain<T, Fut>(py: Python<'_>, future: Fut) -> Result<T, PyBankfeedError>
where
    T: Send + 'static,
    Fut: Future<Output = Result<T, Error>> + Send + 'static,
{
    wait(py, None, None, move |_| future, None)
}

// Lets the test suite check that the panic's message reaches Python as a `BankfeedError`
// (tests/python/properties/test_arguments.py).
#[doc = stub_doc!("_panic_in_background")]
#[pyfunction]
#[expect(clippy::panic, reason = "a test hook: the panic is what it tests")]
pub(crate) fn _panic_in_background(py: Python<'_>, message: String) -> PyResult<()> {
    let future = async move {
        if !message.is_empty() {
            std::panic::panic_any(message);
        }
        Ok(())
    };
    Ok(run_plain(py, future)?)
}

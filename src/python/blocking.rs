//! Runs core futures for the synchronous API: on a shared runtime, with the GIL released, waking
//! every few milliseconds to let Python deliver signals, so Ctrl-C stops a wait at once
//! (docs/architecture.md#where-the-gil-is-released).

use std::future::Future;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use pyo3::prelude::*;
use tokio::runtime::Runtime;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::challenge::call_handler;
use super::errors::PyBankfeedError;
use super::operation::{refuse, Answerer, Flavor, Operation};
use super::runtime::{runtime, AbortOnDrop};
use crate::authorize::{Answers, Challenge, ChallengeHandler};
use crate::bulk::panic_message;
use crate::error::Error;
use crate::Client;

/// How often a waiting call looks for Ctrl-C: well inside the half second a user tolerates.
pub(crate) const SIGNAL_CHECK: Duration = Duration::from_millis(50);

enum Message<T> {
    Done(Result<T, Error>),
    Ask(Challenge, oneshot::Sender<Result<Answers, Error>>),
}

/// A handler that asks the waiting Python thread for the answers, so that the caller's
/// `on_challenge` runs on the caller's own thread (where `input()` and Ctrl-C behave).
struct Asker<T> {
    sender: mpsc::Sender<Message<T>>,
}

impl<T: Send + 'static> ChallengeHandler for Asker<T> {
    fn answer<'a>(
        &'a mut self,
        challenge: &'a Challenge,
    ) -> std::pin::Pin<Box<dyn Future<Output = Result<Answers, Error>> + Send + 'a>> {
        let (reply, answer) = oneshot::channel();
        let sent = self.sender.send(Message::Ask(challenge.clone(), reply));
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
pub(crate) fn run<T: Send + 'static>(py: Python<'_>, operation: Operation<T>) -> PyResult<Py<PyAny>> {
    let Operation { client, start, on_challenge, convert, .. } = operation;
    let value = wait(py, Some(&client), start, |py, challenge| match &on_challenge {
        Some(handler) => call_handler(py, handler.bind(py), &client, Flavor::Blocking, challenge),
        None => refuse(&challenge),
    })?;
    convert(py, &client, Flavor::Blocking, value)
}

/// Runs `start(answerer)` with the GIL released, waking every [`SIGNAL_CHECK`] for Ctrl-C.
/// `on_challenge` is called (with the GIL, on this thread) for each challenge the answerer
/// receives. A core error leaves as the bridge type, carrying `client` so that a
/// `ChallengeRequired` can be answered.
pub(crate) fn wait<T, Fut>(
    py: Python<'_>,
    client: Option<&Client>,
    start: impl FnOnce(Answerer) -> Fut,
    mut on_challenge: impl FnMut(Python<'_>, Challenge) -> Result<Answers, Error>,
) -> Result<T, PyBankfeedError>
where
    T: Send + 'static,
    Fut: Future<Output = Result<T, Error>> + Send + 'static,
{
    // The levels the application configured now apply to this call's records.
    super::logging::refresh(py)?;
    let runtime = runtime()?;
    let (sender, mut receiver) = mpsc::channel();
    let future = start(Box::new(Asker { sender: sender.clone() }));
    // Aborting drops the future: the request in flight and any sleep end with it.
    let mut task = AbortOnDrop(Some(runtime.spawn(async move {
        let _ = sender.send(Message::Done(future.await));
    })));
    loop {
        let (back, message) = py.detach(move || {
            let message = receiver.recv_timeout(SIGNAL_CHECK);
            (receiver, message)
        });
        receiver = back;
        match message {
            Ok(Message::Done(result)) => {
                return result.map_err(|error| match client {
                    Some(client) => PyBankfeedError::with_client(error, client, Flavor::Blocking),
                    None => error.into(),
                })
            }
            Ok(Message::Ask(challenge, reply)) => {
                let _ = reply.send(on_challenge(py, challenge));
            }
            Err(RecvTimeoutError::Timeout) => py.check_signals()?,
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
    wait(py, None, move |_| future, |_, challenge| refuse(&challenge))
}

/// Panics on the IO threads with `message`: lets the test suite check that the panic's message
/// reaches Python as a `BankfeedError` (tests/python/test_arguments.py).
#[pyfunction]
#[allow(clippy::panic, reason = "a test hook: the panic is what it tests")]
pub(crate) fn _panic_in_background(py: Python<'_>, message: String) -> PyResult<()> {
    let future = async move {
        if !message.is_empty() {
            std::panic::panic_any(message);
        }
        Ok(())
    };
    Ok(run_plain(py, future)?)
}

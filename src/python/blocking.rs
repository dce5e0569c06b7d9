//! Runs core futures for the synchronous API: on a shared runtime, with the GIL released, waking
//! every few milliseconds to let Python deliver signals, so Ctrl-C stops a wait at once.

use std::future::Future;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::OnceLock;
use std::time::Duration;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use tokio::sync::oneshot;

use crate::authorize::{Answers, Challenge, ChallengeHandler};
use crate::error::Error;

/// How often a waiting call looks for Ctrl-C: well inside the half second a user tolerates.
const SIGNAL_CHECK: Duration = Duration::from_millis(50);

pub(crate) fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .thread_name("bankfeed-io")
            .build()
            .expect("the bankfeed runtime starts")
    })
}

enum Message<T> {
    Done(Result<T, Error>),
    Ask(Challenge, oneshot::Sender<Result<Answers, Error>>),
}

/// A handler that asks the waiting Python thread for the answers, so that the caller's
/// `on_challenge` runs on the caller's own thread (where `input()` and Ctrl-C behave).
pub(crate) struct Asker<T> {
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

/// Runs `make(asker)` to completion. `on_challenge` is called (with the GIL, on this thread) for
/// each challenge the future's handler receives. Returns the core's error as is; the caller maps it.
pub(crate) fn run<T, F, Fut>(
    py: Python<'_>,
    make: F,
    mut on_challenge: impl FnMut(Python<'_>, Challenge) -> Result<Answers, Error>,
) -> PyResult<Result<T, Error>>
where
    T: Send + 'static,
    F: FnOnce(Asker<T>) -> Fut,
    Fut: Future<Output = Result<T, Error>> + Send + 'static,
{
    let (sender, mut receiver) = mpsc::channel();
    let future = make(Asker { sender: sender.clone() });
    let task = runtime().spawn(async move {
        let _ = sender.send(Message::Done(future.await));
    });
    // Aborting drops the future: the request in flight and any sleep end with it.
    let abort = AbortOnDrop(task);
    loop {
        let (back, message) = py.detach(move || {
            let message = receiver.recv_timeout(SIGNAL_CHECK);
            (receiver, message)
        });
        receiver = back;
        match message {
            Ok(Message::Done(result)) => return Ok(result),
            Ok(Message::Ask(challenge, reply)) => {
                let _ = reply.send(on_challenge(py, challenge));
            }
            Err(RecvTimeoutError::Timeout) => py.check_signals()?,
            Err(RecvTimeoutError::Disconnected) => {
                drop(abort);
                return Err(PyRuntimeError::new_err("bankfeed's background task ended without an answer"));
            }
        }
    }
}

/// Runs a future that needs no challenge answers.
pub(crate) fn run_plain<T, Fut>(py: Python<'_>, future: Fut) -> PyResult<Result<T, Error>>
where
    T: Send + 'static,
    Fut: Future<Output = Result<T, Error>> + Send + 'static,
{
    run(py, move |_asker: Asker<T>| future, |_, challenge| Err(Error::ChallengeRequired(Box::new(challenge))))
}

struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

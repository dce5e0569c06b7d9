//! One definition of each operation, two ways to run it (docs/architecture.md#one-call-two-runners).
//!
//! A pymethod turns its Python arguments into an [`Invocation`]: a `'static + Send` future of a
//! core value, and the one conversion of that value to Python. The runners (`run/`) take it from
//! there: the blocking runner for `Client`, `Session`, `Challenge`, the asyncio runner for
//! `AsyncClient`, `AsyncSession`, `AsyncChallenge`; nothing else differs between the two.

use std::future::Future;
use std::pin::Pin;

use pyo3::prelude::*;

use bankfeed::authorize::{Challenge, ChallengeHandler};
use bankfeed::error::Error;
use bankfeed::Client;

/// How the object an operation belongs to runs it; also which classes its results come as (an
/// `AsyncClient` opens `AsyncSession`s and meets `AsyncChallenge`s).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flavor {
    /// The call blocks its thread, the GIL released (`Client`, `Session`, `Challenge`).
    Blocking,
    /// The call returns a coroutine for an asyncio event loop (`AsyncClient`, ...).
    Async,
}

/// Turns an operation's core value into Python, with the GIL: on the caller's thread (blocking)
/// or on the event loop's thread (async), never on an IO thread.
pub(crate) type Convert<T> = fn(Python<'_>, &Client, Flavor, T) -> PyResult<Py<PyAny>>;

/// What answers the challenges an operation meets: the runner's bridge to `on_challenge`.
pub(crate) type Answerer = Box<dyn ChallengeHandler>;

pub(crate) type CoreFuture<T> = Pin<Box<dyn Future<Output = Result<T, Error>> + Send>>;

type Start<T> = Box<dyn FnOnce(Answerer) -> CoreFuture<T> + Send>;

/// The Python name of an async call, e.g. `AsyncClient.investments`: what its coroutine's repr
/// and its "never awaited" warning show. Never its arguments, which may be secrets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CallName {
    pub(crate) class: &'static str,
    pub(crate) method: &'static str,
}

impl std::fmt::Display for CallName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}(...)", self.class, self.method)
    }
}

/// One call of one operation, not yet started.
pub(crate) struct Invocation<T> {
    pub(crate) client: Client,
    /// Set for the calls a user makes; None for the internal steps a user never holds (a bulk
    /// iterator's `__anext__`), which then never warn when dropped unawaited.
    pub(crate) name: Option<CallName>,
    /// Builds the future, given what answers its challenges.
    pub(crate) start: Start<T>,
    /// The caller's `on_challenge`; None raises ChallengeRequired at the first challenge.
    pub(crate) on_challenge: Option<Py<PyAny>>,
    pub(crate) convert: Convert<T>,
}

impl<T: Send + 'static> Invocation<T> {
    /// An operation that meets no challenge it could answer (a challenge raises ChallengeRequired).
    pub(crate) fn new(
        client: &Client,
        future: impl Future<Output = Result<T, Error>> + Send + 'static,
        convert: Convert<T>,
    ) -> Self {
        Invocation {
            client: client.clone(),
            name: None,
            start: Box::new(move |_| Box::pin(future)),
            on_challenge: None,
            convert,
        }
    }

    /// An operation whose challenges `on_challenge` answers, through the answerer the runner gives.
    pub(crate) fn answered<Fut>(
        client: &Client,
        on_challenge: Option<Py<PyAny>>,
        start: impl FnOnce(Answerer) -> Fut + Send + 'static,
        convert: Convert<T>,
    ) -> Self
    where
        Fut: Future<Output = Result<T, Error>> + Send + 'static,
    {
        let start: Start<T> = Box::new(move |answerer| Box::pin(start(answerer)));
        Invocation { client: client.clone(), name: None, start, on_challenge, convert }
    }

    /// Names the call `class.method` for its coroutine (see [`CallName`]).
    pub(crate) fn named(mut self, class: &'static str, method: &'static str) -> Self {
        self.name = Some(CallName { class, method });
        self
    }
}

/// The answerer of an operation without `on_challenge`: the challenge becomes the error.
pub(crate) fn refuse(challenge: &Challenge) -> Result<bankfeed::authorize::Answers, Error> {
    Err(Error::ChallengeRequired(Box::new(challenge.clone())))
}

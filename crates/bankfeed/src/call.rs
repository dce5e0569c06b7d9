//! One call of a user, made once and handed down: its name, its deadline (the `deadline` option,
//! docs/protocol.md#timing-and-limits), the client's close signal, and what it is doing. The
//! binding makes one for each Python call (and the bulk runner one for each login), runs the
//! whole call in it with [`Call::run`], and hands it to every step inside: the client's methods,
//! the poll engine, the sender. Authorize, the token calls, challenge rounds (the handler's time
//! included), polling and retries thus share one deadline, not one each.
//!
//! When time runs out the call's future is dropped, which ends the request in flight and any
//! wait, and the error says what the call was doing: `PendingTimeout` while an operation was
//! pending (a 202 or "session still loading" had come), otherwise a `TransportError` with
//! `timed_out` set. `close()` ends it the same way, with `ClientClosed`
//! (docs/architecture.md#closing-a-client).
//!
//! The call also keeps the secrets it sent (its client's keys, the tokens it minted, the
//! credentials and answers of its requests): every error leaves [`Call::run`] with them masked in
//! what the server said (crates/bankfeed/src/masking.rs, docs/errors.md#secrets-a-server-repeats). A later call
//! of the same login (a challenge's answer, a data call through a session) carries the secrets of
//! the calls before it (`Call::carry`), and each login's call of a bulk call shares what every
//! other one sent (`Call::sharing`).

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

use crate::error::Error;
use crate::events;
use crate::masking::{SentSecrets, SharedSecrets};
use crate::secret::Secret;
use crate::sync;

/// Why a pending operation ended when the `deadline` option ended it.
pub(crate) const CALL_DEADLINE: &str = "the call's deadline ran out";

/// One call of a user. Make it with [`crate::Client::call`], run the call's future in it with
/// [`Call::run`], and give it to each method the future calls:
///
/// ```ignore
/// let call = client.call("Investments");
/// let result = call.run(client.data::<ops::Investments>(&call, Target::login(login_id, None), &())).await;
/// ```
#[derive(Debug)]
pub struct Call {
    /// What the call is named in an error when nothing it did is known yet.
    name: &'static str,
    /// The `deadline` option and the instant it ends, counted from when the call was made.
    deadline: Option<(Duration, Instant)>,
    /// The client's close signal; `None` for a call no close ends.
    closed: Option<watch::Receiver<bool>>,
    progress: Mutex<Progress>,
    /// What the call sent that is a secret, masked in every error and log line of the call.
    sent: Mutex<SentSecrets>,
    /// The login the call is for, when it is one login's flow: its warnings name it
    /// (docs/logging.md#what-is-logged).
    login: Option<String>,
    /// What every call of the same bulk call sent, when this call is one of a bulk call's.
    shared: Option<SharedSecrets>,
    /// Whether the last answer the call got came from a cassette: the wait after it (a poll
    /// interval, a `Retry-After`) is then not slept (docs/cassettes.md).
    replayed: AtomicBool,
}

/// What the call is doing, for the error when its deadline runs out.
#[derive(Debug)]
struct Progress {
    operation: &'static str,
    pending: Option<Pending>,
    /// The RequestId of the session the call's data operation runs on, once it is open: a
    /// deadline that ends the operation before any 202 keeps it, as any failure of a data
    /// operation does (docs/errors.md#an-error-while-polling).
    request_id: Option<String>,
}

#[derive(Debug)]
struct Pending {
    operation: &'static str,
    request_id: Option<String>,
    since: Instant,
    /// The results processed so far that its last 202 carried, if any.
    partial: Option<Box<serde_json::Value>>,
}

impl Call {
    /// A call named `name` that ends after `limit` (none: never), or when `closed` turns true.
    pub(crate) fn new(name: &'static str, limit: Option<Duration>, closed: Option<watch::Receiver<bool>>) -> Self {
        let deadline = limit.and_then(|limit| Some((limit, Instant::now().checked_add(limit)?)));
        Call {
            name,
            deadline,
            closed,
            progress: Mutex::new(Progress { operation: name, pending: None, request_id: None }),
            sent: Mutex::new(SentSecrets::default()),
            login: None,
            shared: None,
            replayed: AtomicBool::new(false),
        }
    }

    /// The call as the flow of the login `login_id`, which its warnings name.
    pub fn for_login(mut self, login_id: &str) -> Self {
        self.login = Some(login_id.to_owned());
        self
    }

    /// The login the call is for, if it is one login's flow.
    pub(crate) fn login(&self) -> Option<&str> {
        self.login.as_deref()
    }

    /// This call, as one of the calls sharing `shared` (the logins of one bulk call): what it
    /// sends is recorded there too, and its errors mask what every one of them sent.
    pub(crate) fn sharing(mut self, shared: Option<SharedSecrets>) -> Self {
        self.shared = shared;
        self
    }

    /// Records that the call sends `secret` (a key, a token, a password, an answer): wherever the
    /// call keeps or shows what the server said, `secret` is masked.
    pub(crate) fn sent(&self, secret: &Secret) {
        sync::lock(&self.sent).add(secret);
        if let Some(shared) = &self.shared {
            shared.add(secret);
        }
    }

    /// Records the secrets the earlier calls of the same login sent (those a challenge or a
    /// session keeps from the call that made it): a server may repeat them in this call's errors.
    pub(crate) fn carry(&self, earlier: &SentSecrets) {
        sync::lock(&self.sent).extend(earlier);
    }

    /// The secrets the call has sent so far, those it carries, and those the other calls of its
    /// bulk call have sent (read as each text is masked): what a server's text is masked with.
    pub(crate) fn secrets(&self) -> SentSecrets {
        self.own_secrets().sharing(self.shared.clone())
    }

    /// The secrets of the call's login: those it has sent so far and those it carries, without
    /// the other logins' of its bulk call. What a challenge or a session it made keeps for the
    /// login's next call.
    pub(crate) fn own_secrets(&self) -> SentSecrets {
        sync::lock(&self.sent).clone()
    }

    /// Records whether the answer the call just got came from a cassette.
    pub(crate) fn answered_by_cassette(&self, replayed: bool) {
        self.replayed.store(replayed, Ordering::Relaxed);
    }

    /// Whether the last answer the call got came from a cassette.
    pub(crate) fn last_answer_replayed(&self) -> bool {
        self.replayed.load(Ordering::Relaxed)
    }

    /// The call's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// When the call's deadline ends, if it has one: no retry starts, and no wait is slept, past it.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        self.deadline.map(|(_, at)| at)
    }

    /// Records that the call is now doing `operation` (what a deadline error names).
    pub(crate) fn doing(&self, operation: &'static str) {
        self.with_progress(|progress| progress.operation = operation);
    }

    /// Records that the call's data operations now run on the session of `request_id`.
    pub(crate) fn on_session(&self, request_id: &str) {
        let request_id = request_id.to_owned();
        self.with_progress(|progress| progress.request_id = Some(request_id));
    }

    /// The RequestId of the session the call's data operations run on, once one is open: what a
    /// failure with no answer of the service is logged with (docs/logging.md).
    pub(crate) fn session_request_id(&self) -> Option<String> {
        sync::lock(&self.progress).request_id.clone()
    }

    /// Records that `operation` is pending since `since` (its first request), under `request_id`,
    /// with the results processed so far that its 202s carried (`partial`).
    pub(crate) fn pending(
        &self,
        operation: &'static str,
        request_id: Option<&str>,
        since: Instant,
        partial: Option<&serde_json::Value>,
    ) {
        if self.deadline.is_some() {
            let request_id = request_id.map(str::to_owned);
            let partial = partial.cloned().map(Box::new);
            self.with_progress(|progress| progress.pending = Some(Pending { operation, request_id, since, partial }));
        }
    }

    /// Records that the pending operation has ended, with data or an error.
    pub(crate) fn settled(&self) {
        self.with_progress(|progress| progress.pending = None);
    }

    fn with_progress(&self, change: impl FnOnce(&mut Progress)) {
        change(&mut sync::lock(&self.progress));
    }

    /// Runs `body`, the whole call, within the deadline, and ends it where it stands when the
    /// client is closed. Refused without running when the client is closed already. An error
    /// leaves with the secrets the call sent masked in what the server said.
    pub async fn run<T>(&self, body: impl Future<Output = Result<T, Error>>) -> Result<T, Error> {
        self.closable(body).await.map_err(|error| self.secrets().error(error))
    }

    async fn closable<T>(&self, body: impl Future<Output = Result<T, Error>>) -> Result<T, Error> {
        let mut closed = self.closed.clone();
        if closed.as_mut().is_some_and(|closed| *closed.borrow_and_update()) {
            return Err(Error::Closed { operation: self.name.to_owned() });
        }
        let close = async {
            let ended = match closed.as_mut() {
                Some(closed) => closed.wait_for(|closed| *closed).await.is_ok(),
                None => false,
            };
            // A client dropped without `close()` ends no call.
            if !ended {
                std::future::pending::<()>().await;
            }
        };
        tokio::select! {
            result = self.bounded(body) => result,
            () = close => Err(Error::Closed { operation: self.name.to_owned() }),
        }
    }

    async fn bounded<T>(&self, body: impl Future<Output = Result<T, Error>>) -> Result<T, Error> {
        let Some((limit, at)) = self.deadline else { return body.await };
        match tokio::time::timeout_at(at, body).await {
            // A request cut at the deadline itself (its timeout shortened to the time left) ends
            // a moment before the timer: the deadline ended it, and the message must say so, or
            // the caller raises `timeout`, which changes nothing.
            Ok(Err(Error::Transport {
                operation,
                timed_out: true,
                attempts,
                deadline: false,
                resumable,
                cached,
                ..
            })) if Instant::now() >= at => Err(match self.expired(limit) {
                pending @ Error::PendingTimeout { .. } => pending,
                _ => Error::Transport {
                    operation,
                    message: ran_out_message(limit),
                    timed_out: true,
                    attempts,
                    deadline: true,
                    resumable,
                    proxy: None,
                    cached,
                },
            }),
            Ok(result) => result,
            // What the call recorded last says what it was doing when time ran out.
            Err(_) => Err(self.expired(limit)),
        }
    }

    fn expired(&self, limit: Duration) -> Error {
        let progress = sync::lock(&self.progress);
        match &progress.pending {
            Some(pending) => {
                let waited = pending.since.elapsed();
                let (operation, request_id) = (pending.operation, pending.request_id.as_deref());
                let shown = request_id.map(|id| self.secrets().id(id));
                events::pending_timeout(operation, shown.as_deref(), self.login(), waited, CALL_DEADLINE);
                Error::PendingTimeout {
                    operation: operation.to_owned(),
                    request_id: request_id.map(str::to_owned),
                    waited,
                    partial: pending.partial.clone(),
                }
            }
            None => ran_out(progress.operation, limit).resumable_at(progress.request_id.as_deref()),
        }
    }
}

fn ran_out_message(limit: Duration) -> String {
    format!("the deadline of the whole call ({} s, the deadline option) ran out", limit.as_secs_f64())
}

pub(crate) fn ran_out(operation: &str, limit: Duration) -> Error {
    Error::Transport {
        operation: operation.to_owned(),
        message: ran_out_message(limit),
        timed_out: true,
        attempts: 1,
        deadline: true,
        resumable: None,
        proxy: None,
        cached: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHORT: Option<Duration> = Some(Duration::from_millis(50));

    async fn forever() -> Result<(), Error> {
        tokio::time::sleep(Duration::from_secs(3600)).await;
        Ok(())
    }

    fn call(name: &'static str, limit: Option<Duration>) -> Call {
        Call::new(name, limit, None)
    }

    #[tokio::test]
    async fn a_call_past_its_deadline_is_a_timed_out_transport_error() {
        let started = std::time::Instant::now();
        match call("Authorize", SHORT).run(forever()).await {
            Err(Error::Transport { operation, timed_out: true, message, .. }) => {
                assert_eq!(operation, "Authorize");
                assert!(message.contains("deadline"), "{message}");
            }
            other => panic!("{other:?}"),
        }
        assert!(started.elapsed() < Duration::from_secs(2));
    }

    #[tokio::test]
    async fn a_retry_cut_at_the_deadline_says_the_deadline_ended_it_not_the_timeout() {
        let call = call("Authorize", SHORT);
        // The retry's timeout was shortened to the time left: it times out at the deadline, a
        // moment before the call's own timer would end the call.
        let cut_retry = async {
            tokio::time::sleep_until(call.deadline().unwrap()).await;
            Err::<(), _>(Error::Transport {
                operation: "Authorize".into(),
                message: "operation timed out".into(),
                timed_out: true,
                attempts: 2,
                deadline: false,
                resumable: None,
                proxy: None,
                cached: false,
            })
        };
        match call.run(cut_retry).await {
            Err(error @ Error::Transport { deadline: true, attempts: 2, .. }) => {
                assert!(error.to_string().contains("raise deadline"), "{error}");
                assert!(!error.to_string().contains("raise timeout"), "{error}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn a_call_pending_when_its_deadline_runs_out_is_a_pending_timeout() {
        let call = call("GetAccountsDetail", SHORT);
        let body = async {
            call.pending("GetAccountsDetail", Some("r-1"), Instant::now(), None);
            forever().await
        };
        match call.run(body).await {
            Err(Error::PendingTimeout { operation, request_id, waited, .. }) => {
                assert_eq!((operation.as_str(), request_id.as_deref()), ("GetAccountsDetail", Some("r-1")));
                assert!(waited >= Duration::from_millis(40), "{waited:?}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn a_settled_operation_is_no_longer_pending_and_the_last_operation_is_named() {
        let call = call("Attributes", SHORT);
        let body = async {
            call.pending("GetAccountsDetail", Some("r-1"), Instant::now(), None);
            call.settled();
            call.doing("GetIncomeAttributes");
            forever().await
        };
        match call.run(body).await {
            Err(Error::Transport { operation, timed_out: true, .. }) => assert_eq!(operation, "GetIncomeAttributes"),
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn a_deadline_counts_from_when_the_call_was_made() {
        let call = call("Outer", Some(Duration::from_millis(200)));
        tokio::time::sleep(Duration::from_millis(150)).await;
        let started = std::time::Instant::now();
        let result = call.run(forever()).await;
        assert!(matches!(result, Err(Error::Transport { timed_out: true, .. })), "{result:?}");
        assert!(started.elapsed() < Duration::from_millis(150), "{:?}", started.elapsed());
    }

    #[tokio::test]
    async fn without_a_deadline_nothing_is_bounded_or_recorded() {
        let call = call("Investments", None);
        let body = async {
            assert!(call.deadline().is_none());
            call.pending("Investments", None, Instant::now(), None);
            assert!(call.progress.lock().unwrap().pending.is_none());
            Ok(7)
        };
        assert_eq!(call.run(body).await.unwrap(), 7);
    }

    #[tokio::test]
    async fn a_close_ends_the_call_where_it_stands_and_refuses_the_next() {
        let (close, closed) = watch::channel(false);
        let call = Call::new("Investments", None, Some(closed.clone()));
        let closing = async {
            tokio::time::sleep(Duration::from_millis(20)).await;
            let _ = close.send(true);
        };
        let (result, ()) = tokio::join!(call.run(forever()), closing);
        assert!(matches!(result, Err(Error::Closed { ref operation }) if operation == "Investments"), "{result:?}");
        let later = Call::new("Authorize", None, Some(closed));
        assert!(matches!(later.run(async { Ok(()) }).await, Err(Error::Closed { .. })));
    }

    #[tokio::test]
    async fn a_client_dropped_without_close_ends_no_call() {
        let (close, closed) = watch::channel(false);
        drop(close);
        let call = Call::new("Investments", None, Some(closed));
        assert_eq!(call.run(async { Ok(3) }).await.unwrap(), 3);
    }
}

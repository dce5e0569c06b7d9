//! The deadline of one whole call, the `deadline` option (docs/protocol.md#timing-and-limits):
//! Authorize, the token calls, challenge rounds (the handler's time included), polling and
//! retries, all together.
//!
//! The outermost operation of a call opens the scope; the operations it calls inside share it,
//! so an attributes call on a saved login (a cached Authorize, account detail, attributes) has
//! one deadline, not three. When time runs out the call's future is dropped, which ends the request in flight
//! and any wait, and the error says what the call was doing: `PendingTimeout` while an operation
//! was pending (a 202 or "session still loading" had come), otherwise a `TransportError` with
//! `timed_out` set.

use std::cell::RefCell;
use std::future::Future;
use std::time::Duration;

use tokio::time::Instant;

use crate::error::Error;

tokio::task_local! {
    static CALL: Call;
}

struct Call {
    at: Instant,
    limit: Duration,
    progress: RefCell<Progress>,
}

/// What the call is doing, for the error when its deadline runs out.
struct Progress {
    operation: &'static str,
    pending: Option<Pending>,
}

struct Pending {
    operation: &'static str,
    request_id: Option<String>,
    since: Instant,
}

/// Runs `call`, the operation `operation`, within `limit`, unless it is part of a call that has
/// a deadline already (then that one bounds it). `None` runs it without a bound.
pub(crate) async fn bounded<T>(
    operation: &'static str,
    limit: Option<Duration>,
    call: impl Future<Output = Result<T, Error>>,
) -> Result<T, Error> {
    if CALL.try_with(|outer| outer.progress.borrow_mut().operation = operation).is_ok() {
        return call.await;
    }
    let Some((limit, at)) = limit.and_then(|limit| Some((limit, Instant::now().checked_add(limit)?))) else {
        return call.await;
    };
    let scope = Call { at, limit, progress: RefCell::new(Progress { operation, pending: None }) };
    CALL.scope(scope, async move {
        match tokio::time::timeout_at(at, call).await {
            // A request cut at the deadline itself (its timeout shortened to the time left) ends
            // a moment before the timer: the deadline ended it, and the message must say so, or
            // the caller raises `timeout`, which changes nothing.
            Ok(Err(Error::Transport { operation, timed_out: true, attempts, deadline: false, resumable, .. }))
                if Instant::now() >= at =>
            {
                Err(match CALL.try_with(Call::expired) {
                    Ok(pending @ Error::PendingTimeout { .. }) => pending,
                    _ => Error::Transport {
                        operation,
                        message: ran_out_message(limit),
                        timed_out: true,
                        attempts,
                        deadline: true,
                        resumable,
                        proxy: None,
                    },
                })
            }
            Ok(result) => result,
            // What the call recorded last says what it was doing when time ran out.
            Err(_) => Err(CALL.try_with(Call::expired).unwrap_or_else(|_| ran_out(operation, limit))),
        }
    })
    .await
}

/// The deadline of the call running on this task, if it has one.
pub(crate) fn current() -> Option<Instant> {
    CALL.try_with(|call| call.at).ok()
}

/// Records that `operation` is pending since `since` (its first request), under `request_id`.
pub(crate) fn pending(operation: &'static str, request_id: Option<&str>, since: Instant) {
    let _ = CALL.try_with(|call| {
        call.progress.borrow_mut().pending =
            Some(Pending { operation, request_id: request_id.map(str::to_owned), since });
    });
}

/// Records that the pending operation has ended, with data or an error.
pub(crate) fn settled() {
    let _ = CALL.try_with(|call| call.progress.borrow_mut().pending = None);
}

impl Call {
    fn expired(&self) -> Error {
        let progress = self.progress.borrow();
        match &progress.pending {
            Some(pending) => {
                let waited = pending.since.elapsed();
                let (operation, request_id) = (pending.operation, pending.request_id.as_deref());
                crate::events::pending_timeout(operation, request_id, waited, CALL_DEADLINE);
                Error::PendingTimeout {
                    operation: operation.to_owned(),
                    request_id: request_id.map(str::to_owned),
                    waited,
                }
            }
            None => ran_out(progress.operation, self.limit),
        }
    }
}

/// Why a pending operation ended when the `deadline` option ended it.
pub(crate) const CALL_DEADLINE: &str = "the call's deadline ran out";

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

    #[tokio::test]
    async fn a_call_past_its_deadline_is_a_timed_out_transport_error() {
        let started = std::time::Instant::now();
        match bounded("Authorize", SHORT, forever()).await {
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
        // The retry's timeout was shortened to the time left: it times out at the deadline, a
        // moment before the call's own timer would end the call.
        let cut_retry = async {
            tokio::time::sleep_until(current().unwrap()).await;
            Err::<(), _>(Error::Transport {
                operation: "Authorize".into(),
                message: "operation timed out".into(),
                timed_out: true,
                attempts: 2,
                deadline: false,
                resumable: None,
                proxy: None,
            })
        };
        match bounded("Authorize", SHORT, cut_retry).await {
            Err(error @ Error::Transport { deadline: true, attempts: 2, .. }) => {
                assert!(error.to_string().contains("raise deadline"), "{error}");
                assert!(!error.to_string().contains("raise timeout"), "{error}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn a_call_pending_when_its_deadline_runs_out_is_a_pending_timeout() {
        let call = async {
            assert!(current().is_some());
            pending("GetAccountsDetail", Some("r-1"), Instant::now());
            forever().await
        };
        match bounded("GetAccountsDetail", SHORT, call).await {
            Err(Error::PendingTimeout { operation, request_id, waited, .. }) => {
                assert_eq!((operation.as_str(), request_id.as_deref()), ("GetAccountsDetail", Some("r-1")));
                assert!(waited >= Duration::from_millis(40), "{waited:?}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn a_settled_operation_is_no_longer_pending_and_the_last_operation_is_named() {
        let call = async {
            pending("GetAccountsDetail", Some("r-1"), Instant::now());
            settled();
            bounded("Attributes", Some(Duration::from_secs(3600)), forever()).await
        };
        match bounded("GetAccountsDetail", SHORT, call).await {
            Err(Error::Transport { operation, timed_out: true, .. }) => assert_eq!(operation, "Attributes"),
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn an_inner_operation_shares_the_outer_deadline() {
        let inner = bounded("Inner", Some(Duration::from_millis(200)), async {
            tokio::time::sleep(Duration::from_millis(100)).await;
            Ok(())
        });
        let call = async {
            tokio::time::sleep(Duration::from_millis(150)).await;
            inner.await
        };
        // The inner bound alone would allow it; the outer one (200 ms from the start) does not.
        let started = std::time::Instant::now();
        let result = bounded("Outer", Some(Duration::from_millis(200)), call).await;
        assert!(matches!(result, Err(Error::Transport { timed_out: true, .. })), "{result:?}");
        assert!(started.elapsed() < Duration::from_secs(1), "{:?}", started.elapsed());
    }

    #[tokio::test]
    async fn without_a_deadline_nothing_is_bounded_or_recorded() {
        let call = async {
            assert!(current().is_none());
            pending("Investments", None, Instant::now());
            settled();
            Ok(7)
        };
        assert_eq!(bounded("Investments", None, call).await.unwrap(), 7);
    }
}

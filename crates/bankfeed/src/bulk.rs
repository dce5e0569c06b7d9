//! Bulk calls: one operation per LoginId, at most a given number at once, each result handed
//! over as soon as it is ready (the core of `investments_many` and its twins).
//!
//! The operations run as tasks of the runtime that polls [`run_many`], so they spread over its
//! worker threads; [`run_many`] itself only starts them, collects them and forwards their results.

use std::any::Any;
use std::collections::HashMap;
use std::future::Future;
use std::num::NonZeroUsize;

use tokio::sync::mpsc::Sender;
use tokio::task::{Id, JoinError, JoinSet};

use crate::error::Error;

/// `concurrency` as [`run_many`] takes it: at least 1. The Python layer calls this before it
/// builds its iterator, so a bad value fails the call itself rather than its first item.
pub fn check_concurrency(concurrency: usize) -> Result<NonZeroUsize, Error> {
    NonZeroUsize::new(concurrency).ok_or_else(|| Error::config("concurrency", "must be at least 1"))
}

/// Runs `op(id)` for every id of `ids`, at most `concurrency` at once, and sends each id with its
/// result to `sink` as it finishes (in the order they finish, not the order of `ids`).
///
/// - One failure never stops the others: every id gets its own `(id, result)`.
/// - An operation that panics gives [`Error::Internal`] for its id; the others go on.
/// - A duplicated id runs once per occurrence and is sent once per occurrence.
/// - Only `concurrency` operations exist at a time: the next starts when one finishes, so memory
///   does not grow with the number of ids (only the ids themselves are held).
/// - When the receiver of `sink` is dropped or closed, the operations in flight are aborted and
///   this returns, without starting the others (a closed receiver still holds what was sent: the
///   Python iterator closes it to stop the run and keep the results already received).
/// - Dropping this future aborts every operation in flight at once (their tasks are aborted by the
///   [`JoinSet`] that holds them): no request is sent after that, no poll goes on.
///
/// Returns `Err` only for `concurrency == 0` ([`Error::Config`]), before anything starts; then
/// nothing is sent. Must be polled inside a tokio runtime, which runs the operations.
pub async fn run_many<T, F, Fut>(
    ids: Vec<String>,
    concurrency: usize,
    mut op: F,
    sink: Sender<(String, Result<T, Error>)>,
) -> Result<(), Error>
where
    T: Send + 'static,
    F: FnMut(String) -> Fut,
    Fut: Future<Output = Result<T, Error>> + Send + 'static,
{
    let concurrency = check_concurrency(concurrency)?.get();
    let mut waiting = ids.into_iter();
    let mut running: JoinSet<Result<T, Error>> = JoinSet::new();
    // A task's id is the way back to its LoginId when it panicked and left no result.
    let mut names: HashMap<Id, String> = HashMap::with_capacity(concurrency.min(waiting.len()));
    let mut start = |running: &mut JoinSet<Result<T, Error>>, names: &mut HashMap<Id, String>| {
        while running.len() < concurrency {
            let Some(id) = waiting.next() else { break };
            let task = running.spawn(op(id.clone()));
            names.insert(task.id(), id);
        }
    };
    loop {
        start(&mut running, &mut names);
        let joined = tokio::select! {
            joined = running.join_next_with_id() => joined,
            // Nobody reads any more: stop now rather than at the next finished operation.
            () = sink.closed() => return Ok(()),
        };
        let Some(joined) = joined else {
            // Nothing running after `start`: every id has been sent.
            return Ok(());
        };
        let (task, result) = match joined {
            Ok((task, result)) => (task, result),
            Err(error) => (error.id(), Err(failure(error))),
        };
        let id = names.remove(&task).unwrap_or_default();
        // The next operation starts before this result waits for room in the channel.
        start(&mut running, &mut names);
        if sink.send((id, result)).await.is_err() {
            return Ok(());
        }
    }
}

/// The error of an operation whose task ended without a result.
fn failure(error: JoinError) -> Error {
    let message = if error.is_panic() {
        format!("bankfeed's task for this login panicked: {}", panic_message(error.into_panic().as_ref()))
    } else {
        "bankfeed's task for this login was cancelled".to_owned()
    };
    Error::Internal { message }
}

/// The text a panic was raised with (`panic!("...")` gives a `&str` or a `String`).
pub fn panic_message(payload: &(dyn Any + Send)) -> &str {
    if let Some(text) = payload.downcast_ref::<&'static str>() {
        text
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text
    } else {
        "a panic without a message"
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn the_panic_message_is_kept() {
        let text = std::panic::catch_unwind(|| panic!("static text")).unwrap_err();
        assert_eq!(super::panic_message(text.as_ref()), "static text");
        let formatted = std::panic::catch_unwind(|| panic!("formatted {}", 42)).unwrap_err();
        assert_eq!(super::panic_message(formatted.as_ref()), "formatted 42");
        let other = std::panic::catch_unwind(|| std::panic::panic_any(7_u8)).unwrap_err();
        assert_eq!(super::panic_message(other.as_ref()), "a panic without a message");
    }

    use tokio::sync::mpsc;

    use super::*;

    fn ids(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("id-{i}")).collect()
    }

    async fn collect<T>(mut receiver: mpsc::Receiver<(String, Result<T, Error>)>) -> Vec<(String, Result<T, Error>)> {
        let mut all = Vec::new();
        while let Some(item) = receiver.recv().await {
            all.push(item);
        }
        all
    }

    #[tokio::test]
    async fn zero_concurrency_is_refused_before_anything_runs() {
        let (sink, receiver) = mpsc::channel::<(String, Result<(), Error>)>(4);
        let started = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&started);
        let result = run_many(
            ids(3),
            0,
            move |_| {
                counter.fetch_add(1, Ordering::SeqCst);
                async { Ok(()) }
            },
            sink,
        )
        .await;
        assert!(matches!(result, Err(Error::Config { field: "concurrency", .. })), "{result:?}");
        assert_eq!(started.load(Ordering::SeqCst), 0);
        assert!(collect(receiver).await.is_empty());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn results_come_in_completion_order_and_a_panic_stays_with_its_id() {
        let (sink, receiver) = mpsc::channel(1);
        // id-0 is the slowest, id-1 panics, the others fail or succeed at once.
        let run = run_many(
            ids(4),
            4,
            |id| async move {
                match id.as_str() {
                    "id-0" => {
                        tokio::time::sleep(Duration::from_millis(200)).await;
                        Ok(0)
                    }
                    "id-1" => panic!("boom for {id}"),
                    "id-2" => Err(Error::config("x", "bad")),
                    _ => Ok(3),
                }
            },
            sink,
        );
        let (done, all) = tokio::join!(run, collect(receiver));
        done.unwrap();
        assert_eq!(all.len(), 4);
        // Not the panicking one: capturing a backtrace on a loaded machine can take longer than id-0.
        let position = |name: &str| all.iter().position(|(id, _)| id == name).unwrap();
        assert!(position("id-0") > position("id-2") && position("id-0") > position("id-3"), "{all:?}");
        let of = |name: &str| &all.iter().find(|(id, _)| id == name).unwrap().1;
        match of("id-1") {
            Err(Error::Internal { message }) => assert!(message.contains("panicked: boom for id-1"), "{message}"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(of("id-2"), Err(Error::Config { .. })));
        assert!(matches!(of("id-3"), Ok(3)));
    }

    #[tokio::test]
    async fn duplicated_ids_run_and_are_sent_once_each() {
        let (sink, receiver) = mpsc::channel(8);
        let list = vec!["a".to_owned(), "a".to_owned(), "b".to_owned()];
        let (done, all) = tokio::join!(run_many(list, 2, |id| async move { Ok(id.len()) }, sink), collect(receiver));
        done.unwrap();
        let mut names: Vec<String> = all.into_iter().map(|(id, _)| id).collect();
        names.sort();
        assert_eq!(names, ["a", "a", "b"]);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_dropped_receiver_stops_the_run_and_aborts_the_operations() {
        let (sink, mut receiver) = mpsc::channel(1);
        let finished = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&finished);
        let run = tokio::spawn(run_many(
            ids(100),
            4,
            move |id| {
                let counter = Arc::clone(&counter);
                async move {
                    if id != "id-0" {
                        tokio::time::sleep(Duration::from_millis(500)).await;
                    }
                    counter.fetch_add(1, Ordering::SeqCst);
                    Ok(())
                }
            },
            sink,
        ));
        assert_eq!(receiver.recv().await.map(|(id, _)| id), Some("id-0".to_owned()));
        drop(receiver);
        tokio::time::timeout(Duration::from_secs(1), run).await.expect("stops at once").unwrap().unwrap();
        tokio::time::sleep(Duration::from_millis(800)).await;
        assert_eq!(finished.load(Ordering::SeqCst), 1, "the sleeping operations were aborted");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_closed_receiver_stops_the_run_and_keeps_what_was_sent() {
        let (sink, mut receiver) = mpsc::channel(4);
        let run = tokio::spawn(run_many(
            ids(100),
            4,
            |id| async move {
                if id != "id-0" {
                    tokio::time::sleep(Duration::from_secs(5)).await;
                }
                Ok(())
            },
            sink,
        ));
        tokio::time::sleep(Duration::from_millis(100)).await;
        receiver.close();
        tokio::time::timeout(Duration::from_secs(1), run).await.expect("stops at once").unwrap().unwrap();
        assert_eq!(receiver.try_recv().map(|(id, _)| id).ok(), Some("id-0".to_owned()));
        assert!(receiver.try_recv().is_err(), "nothing more came");
    }
}

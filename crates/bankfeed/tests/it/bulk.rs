//! Bulk calls (`bankfeed::bulk::run_many`) against the embedded sandbox: many saved logins, some
//! failing, the concurrency bound, and cancellation by dropping the run.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bankfeed::bulk::run_many;
use bankfeed::error::ApiErrorKind;
use bankfeed::ops::{self, Target};
use bankfeed::Error;
use bankfeed_sandbox::{Fault, FaultKind, SandboxConfig};
use tokio::sync::mpsc;

use crate::common::client_of;

/// Counts the operations in flight and keeps the highest count seen.
#[derive(Default)]
struct InFlight {
    now: AtomicUsize,
    max: AtomicUsize,
}

/// One operation in flight for as long as it lives (an aborted operation drops it too).
struct Running(Arc<InFlight>);

impl Running {
    fn start(counter: &Arc<InFlight>) -> Running {
        let now = counter.now.fetch_add(1, Ordering::SeqCst) + 1;
        counter.max.fetch_max(now, Ordering::SeqCst);
        Running(Arc::clone(counter))
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.0.now.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A LoginId of the right shape that no login has.
const UNKNOWN: &str = "00000000-0000-4000-8000-000000000000";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_logins_run_within_the_bound_and_failures_stay_with_their_login() {
    let (sandbox, client) = client_of(SandboxConfig { logins: 40, ..SandboxConfig::default() });
    let saved = sandbox.login_ids();
    // bulk_00007's connection is refused as a disabled login, every time it is asked for.
    let refused = saved[7].clone();
    sandbox.inject([Fault {
        operation: Some("Authorize".into()),
        username: Some("bulk_00007".into()),
        times: None,
        ..Fault::new(FaultKind::Status {
            status: 401,
            code: Some("DISABLED_LOGIN".into()),
            message: Some("The account is disabled at the institution".into()),
            retry_after: None,
        })
    }]);
    let mut ids = saved.clone();
    ids.insert(20, UNKNOWN.to_owned());

    let in_flight = Arc::new(InFlight::default());
    let counter = Arc::clone(&in_flight);
    let (sink, mut receiver) = mpsc::channel(4);
    let op = move |login_id: String| {
        let client = client.clone();
        let counter = Arc::clone(&counter);
        async move {
            let _running = Running::start(&counter);
            data!(client, ops::Investments, Target::login(&login_id, None), &())
        }
    };
    let run = tokio::spawn(run_many(ids.clone(), 6, op, sink));
    let mut results = HashMap::new();
    while let Some((login_id, result)) = receiver.recv().await {
        assert!(results.insert(login_id, result).is_none(), "each LoginId comes once");
    }
    run.await.unwrap().unwrap();

    assert_eq!(results.len(), ids.len());
    let max = in_flight.max.load(Ordering::SeqCst);
    assert!((2..=6).contains(&max), "at most 6 at once, and more than one: {max}");
    assert_eq!(in_flight.now.load(Ordering::SeqCst), 0);
    match &results[UNKNOWN] {
        Err(Error::Api(api)) => assert_eq!(api.code.as_deref(), Some("INVALID_LOGIN"), "{api}"),
        other => panic!("the unknown LoginId: {other:?}"),
    }
    match &results[&refused] {
        Err(Error::Api(api)) => assert_eq!(api.kind(), ApiErrorKind::LoginDisabled, "{api}"),
        other => panic!("the refused login: {other:?}"),
    }
    for login_id in saved.iter().filter(|id| **id != refused) {
        let payload = results[login_id].as_ref().unwrap_or_else(|e| panic!("{login_id}: {e}"));
        assert!(payload.tables.accounts.rows > 0, "{login_id} has investment accounts");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_run_stops_every_request_at_once() {
    // Every data call stays pending for a minute: the operations poll until they are stopped.
    let config = SandboxConfig { logins: 8, pending_seconds: 60.0, ..SandboxConfig::default() };
    let (sandbox, client) = client_of(config);
    let in_flight = Arc::new(InFlight::default());
    let counter = Arc::clone(&in_flight);
    let (sink, receiver) = mpsc::channel(4);
    let op = move |login_id: String| {
        let client = client.clone();
        let counter = Arc::clone(&counter);
        async move {
            let _running = Running::start(&counter);
            data!(client, ops::Investments, Target::login(&login_id, None), &())
        }
    };
    let run = run_many(sandbox.login_ids(), 4, op, sink);
    // The timeout drops the run while its operations are polling.
    let outcome = tokio::time::timeout(Duration::from_millis(500), run).await;
    assert!(outcome.is_err(), "still polling when dropped");
    let polled = sandbox.request_count();
    assert!(polled > 8, "the operations were polling: {polled} requests");

    // A request already on the wire may still arrive; after that, nothing more.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let settled = sandbox.request_count();
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(sandbox.request_count(), settled, "no request after the run was dropped");
    assert_eq!(in_flight.now.load(Ordering::SeqCst), 0, "every operation was dropped");
    drop(receiver);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_receiver_ends_the_run_and_its_requests() {
    let config = SandboxConfig { logins: 8, pending_seconds: 60.0, ..SandboxConfig::default() };
    let (sandbox, client) = client_of(config);
    let (sink, receiver) = mpsc::channel::<(String, Result<_, Error>)>(4);
    let op = move |login_id: String| {
        let client = client.clone();
        async move { data!(client, ops::Investments, Target::login(&login_id, None), &()) }
    };
    let run = tokio::spawn(run_many(sandbox.login_ids(), 4, op, sink));
    tokio::time::sleep(Duration::from_millis(300)).await;
    drop(receiver);
    tokio::time::timeout(Duration::from_millis(500), run).await.expect("the run ends at once").unwrap().unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let settled = sandbox.request_count();
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(sandbox.request_count(), settled, "no request after the receiver was dropped");
}

//! The sandbox at scale (docs/sandbox.md#many-logins): bulk users, logins saved at start, and
//! 10,000 sessions pending at once.

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bankfeed_sandbox::{login_id, login_ids, Fault, FaultKind, Sandbox, SandboxConfig, MAX_LOGINS};
use serde_json::{json, Value};

use crate::common::{assert_error, Api, Reply, AUTHORIZE, INVESTMENTS};

fn bulk(logins: u32, seed: u64) -> SandboxConfig {
    SandboxConfig { logins, seed, pending_polls: 0, investment_transactions: Some(3), ..SandboxConfig::default() }
}

impl Api {
    async fn login_as(&self, username: &str, save: bool) -> Reply {
        let body = json!({
            "Institution": "FlinksCapital",
            "Username": username,
            "Password": "Everyday",
            "MostRecentCached": false,
            "Save": save,
        });
        self.post(AUTHORIZE, body).await
    }

    /// A cached Authorize, then Investments polled to its 200, whose body it returns without
    /// the RequestId (which differs from session to session).
    async fn cached_investments(&self, login_id: &str) -> Value {
        let opened = self.cached(login_id).await;
        assert_eq!(opened.0, 200, "{login_id}: {}", opened.1);
        let request_id = opened.1["RequestId"].as_str().unwrap().to_owned();
        for _ in 0..20 {
            let (status, mut body) = self
                .post(INVESTMENTS, json!({"LoginId": login_id, "RequestId": request_id, "MostRecentCached": true}))
                .await;
            if status == 200 {
                assert_eq!(body["Login"]["Id"], login_id);
                body.as_object_mut().unwrap().remove("RequestId");
                return body;
            }
            assert_eq!(status, 202, "{body}");
        }
        panic!("{login_id}: Investments pending forever");
    }
}

#[test]
fn login_ids_are_distinct_deterministic_and_seeded() {
    let ids = login_ids(0, 10_000);
    assert_eq!(ids.len(), 10_000);
    assert_eq!(ids.iter().collect::<HashSet<_>>().len(), 10_000, "distinct");
    assert!(ids.iter().all(|id| uuid::Uuid::parse_str(id).is_ok_and(|uuid| uuid.get_version_num() == 4)));
    assert_eq!(ids, login_ids(0, 10_000));
    assert_eq!(login_ids(0, 10), ids[..10], "a prefix of a longer list");
    assert_eq!(ids[42], login_id(0, "bulk_00042"));
    // The number counts, not how it is written.
    for spelling in ["bulk_42", "BULK_0042", " Bulk_000000042 "] {
        assert_eq!(login_id(0, spelling), ids[42], "{spelling}");
    }
    let other = login_ids(1, 10_000);
    assert!(ids.iter().zip(&other).all(|(a, b)| a != b), "another seed, other LoginIds");
    assert_ne!(login_id(0, "bulk_00042"), login_id(0, "greatday_nomfa"));
}

#[test]
fn too_many_logins_are_refused() {
    let error = Sandbox::start(SandboxConfig { logins: MAX_LOGINS + 1, ..SandboxConfig::default() }).unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
    assert!(error.to_string().contains("logins"), "{error}");
}

#[tokio::test]
async fn a_bulk_username_logs_in_without_mfa_and_saves_its_own_login() {
    let api = Api::with(bulk(0, 7));
    assert!(api.sandbox.login_ids().is_empty());
    // Not saved yet: no sandbox saves bulk logins unless asked.
    let expected = login_id(7, "bulk_123456");
    assert_error(&api.cached(&expected).await, 401, "INVALID_LOGIN");

    let unsaved = api.login_as("bulk_123456", false).await;
    assert_eq!(unsaved.0, 200, "no challenge: {}", unsaved.1);
    assert_eq!(unsaved.1["Login"]["Id"], expected.as_str());
    assert_eq!(unsaved.1["Login"]["Username"], "bulk_123456");
    assert_error(&api.cached(&expected).await, 401, "INVALID_LOGIN");

    let saved = api.login_as("BULK_0123456", true).await;
    assert_eq!(saved.0, 200, "{}", saved.1);
    assert_eq!(saved.1["Login"]["Id"], expected.as_str(), "one user however the number is written");
    let small = api.login_as("bulk_7", true).await;
    assert_eq!(small.1["Login"]["Username"], "bulk_00007", "at least five digits");
    assert_ne!(small.1["Login"]["Id"], expected.as_str());

    let body = api.cached_investments(&expected).await;
    assert_eq!(body["Login"]["Username"], "bulk_123456");
    assert!(!body["Accounts"].as_array().unwrap().is_empty());

    for wrong in ["bulk_", "bulk_x1", "bulk_-1", "bulk_1234567890", "bulk 1", "bulk_1.5"] {
        assert_error(&api.login_as(wrong, true).await, 401, "INVALID_USERNAME");
    }
}

#[tokio::test]
async fn logins_saved_at_start_are_distinct_deterministic_and_readable() {
    const COUNT: u32 = 200;
    let (a, b, other) = (Api::with(bulk(COUNT, 3)), Api::with(bulk(COUNT, 3)), Api::with(bulk(COUNT, 4)));
    let ids = a.sandbox.login_ids();
    assert_eq!(ids, login_ids(3, COUNT));
    assert_eq!(ids.iter().collect::<HashSet<_>>().len(), COUNT as usize);
    assert_eq!(b.sandbox.login_ids(), ids, "same seed, same LoginIds");
    let others = other.sandbox.login_ids();
    assert!(ids.iter().all(|id| !others.contains(id)), "another seed, other LoginIds");

    let mut values = HashSet::new();
    for (index, id) in ids.iter().enumerate() {
        let from_a = a.cached_investments(id).await;
        assert_eq!(from_a["Login"]["Username"], format!("bulk_{index:05}"));
        if index % 20 == 0 {
            assert_eq!(from_a, b.cached_investments(id).await, "same seed, same data");
        }
        values.insert(from_a["Value"].to_string());
    }
    assert!(values.len() > COUNT as usize / 2, "each login its own data: {} distinct values", values.len());
    // A login saved at start is deleted like any other, and a live login connects it again under
    // a new LoginId (docs/sandbox.md#lastrefresh-loginids-and-languages).
    let deleted = a.send(reqwest::Method::DELETE, &format!("BankingServices/DeleteCard/{}", ids[5]), None).await;
    assert_eq!(deleted.0, 200, "{}", deleted.1);
    assert_error(&a.cached(&ids[5]).await, 401, "INVALID_LOGIN");
    let again = a.login_as("bulk_5", true).await.1["Login"]["Id"].as_str().unwrap().to_owned();
    assert!(!ids.contains(&again), "a new LoginId, no other login's");
    assert_eq!(a.cached(&again).await.0, 200);
    assert_error(&a.cached(&ids[5]).await, 401, "INVALID_LOGIN");
    // The other sandbox's logins are not this one's.
    assert_error(&a.cached(&others[0]).await, 401, "INVALID_LOGIN");
}

#[tokio::test]
async fn a_fault_for_a_bulk_user_hits_it_however_its_number_is_written() {
    let api = Api::with(bulk(50, 0));
    let status = FaultKind::Status { status: 503, code: None, message: None, retry_after: None };
    let fault = |username: &str| Fault {
        operation: Some("Authorize".into()),
        username: Some(username.into()),
        times: Some(1),
        ..Fault::new(status.clone())
    };
    api.sandbox.inject([fault("bulk_42"), fault("BULK_00043")]);
    // Another user's requests pass the faults by.
    assert_eq!(api.cached(&login_id(0, "bulk_00041")).await.0, 200);
    assert_eq!(api.cached(&login_id(0, "bulk_00042")).await.0, 503, "by LoginId");
    assert_eq!(api.login_as("bulk_0043", false).await.0, 503, "by username");
    assert!(api.sandbox.faults().is_empty());
}

#[tokio::test]
async fn a_hundred_thousand_logins_start_fast() {
    let started = Instant::now();
    let api = Api::with(bulk(100_000, 0));
    let took = started.elapsed();
    // Debug build on a loaded two-core machine: generous, but a per-login cost would show.
    assert!(took < Duration::from_secs(5), "took {took:?}");
    eprintln!("100,000 logins saved in {took:?}");
    let ids = api.sandbox.login_ids();
    assert_eq!(ids.len(), 100_000);
    for id in [&ids[0], &ids[54_321], &ids[99_999]] {
        api.cached_investments(id).await;
    }
}

/// 10,000 sessions of distinct logins, each left pending (its first Investments answered 202)
/// until all 10,000 are, then polled to the end: every one completes, with no session swept or
/// capped on the way. At most 256 requests are in flight at once, as a client of 10,000 flows
/// sleeping between polls would have; the sandbox holds the sessions, not the connections.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_sessions_pending_at_once_all_complete() {
    const SESSIONS: usize = 10_000;
    const POLLS: u32 = 1;
    let config = SandboxConfig {
        logins: SESSIONS as u32,
        pending_polls: POLLS,
        investment_transactions: Some(0),
        ..SandboxConfig::default()
    };
    let api = Arc::new(Api::with(config));
    let ids = api.sandbox.login_ids();
    let in_flight = Arc::new(tokio::sync::Semaphore::new(256));
    let all_pending = Arc::new(tokio::sync::Barrier::new(SESSIONS));
    let completed = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for id in ids {
        let (api, in_flight, all_pending, completed) =
            (Arc::clone(&api), Arc::clone(&in_flight), Arc::clone(&all_pending), Arc::clone(&completed));
        tasks.spawn(async move {
            let send = |body: Value, operation: &'static str| {
                let (api, in_flight) = (Arc::clone(&api), Arc::clone(&in_flight));
                async move {
                    let _permit = in_flight.acquire().await.unwrap();
                    api.post(operation, body).await
                }
            };
            let opened = send(json!({"LoginId": id, "MostRecentCached": true}), AUTHORIZE).await;
            assert_eq!(opened.0, 200, "{}", opened.1);
            let request_id = opened.1["RequestId"].as_str().unwrap().to_owned();
            let body = json!({"LoginId": id, "RequestId": request_id, "MostRecentCached": true});
            let first = send(body.clone(), INVESTMENTS).await;
            assert_eq!(first.0, 202, "{}", first.1);
            // Nobody polls on until every session is pending.
            all_pending.wait().await;
            let mut pending = 1;
            loop {
                let reply = send(body.clone(), INVESTMENTS).await;
                match reply.0 {
                    202 => pending += 1,
                    200 => break,
                    status => panic!("{status}: {}", reply.1),
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            assert_eq!(pending, POLLS, "{id}");
            completed.fetch_add(1, Ordering::Relaxed);
        });
    }
    while let Some(joined) = tasks.join_next().await {
        joined.unwrap();
    }
    assert_eq!(completed.load(Ordering::Relaxed), SESSIONS);
    eprintln!("{SESSIONS} sessions in {:?}", started.elapsed());
}

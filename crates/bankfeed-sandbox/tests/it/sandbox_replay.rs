//! The sandbox as a replay server (docs/cassettes.md#replay-for-any-client): a cassette served
//! over HTTP answers each request from its next matching interaction, in recorded order, never
//! waits, refuses a request past its recorded answers, and answers a request it has no
//! interaction for with the closest one and how it differs: the text an in-process replay raises.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bankfeed::cassette::{CassetteOptions, CassetteSession, Exchange, RecordMode, Upstream};
use bankfeed_sandbox::{Sandbox, SandboxConfig, ServedCassette};
use serde_json::Value;

const LOGIN: &str = "ca55e77e-0000-4000-8000-000000000001";
const REQUEST: &str = "ca55e77e-0000-4000-8000-000000000002";

/// A session as a bankfeed recording keeps it: an Authorize of a saved login, then account detail
/// polled twice (202, 202, 200) with a `Retry-After` of a minute.
fn cassette() -> String {
    format!(
        r"version: 1
recorded_with: bankfeed/0
origin: live
redactions: [LoginId, RequestId, flinks-auth-key]
interactions:
- request:
    method: POST
    uri: http://127.0.0.1:1/v3/ca55e77e-0000-4000-8000-0000000000cc/BankingServices/Authorize
    headers:
      content-type: application/json
      flinks-auth-key: REDACTED
    body:
      json: {{LoginId: {LOGIN}, MostRecentCached: true, Save: true}}
  response:
    status: 200
    headers:
      content-type: application/json; charset=utf-8
    body:
      json: {{HttpStatusCode: 200, RequestId: {REQUEST}, Login: {{Id: {LOGIN}}}}}
  recorded_at: 2026-01-01T00:00:00Z
- request:
    method: POST
    uri: http://127.0.0.1:1/v3/ca55e77e-0000-4000-8000-0000000000cc/BankingServices/GetAccountsDetail
    headers:
      content-type: application/json
    body:
      json: {{RequestId: {REQUEST}}}
  response:
    status: 202
    headers:
      content-type: application/json
      retry-after: '60'
    body:
      json: {{HttpStatusCode: 202, FlinksCode: OPERATION_PENDING, RequestId: {REQUEST}}}
  recorded_at: 2026-01-01T00:00:01Z
- request:
    method: GET
    uri: http://127.0.0.1:1/v3/ca55e77e-0000-4000-8000-0000000000cc/BankingServices/GetAccountsDetailAsync/{REQUEST}
  response:
    status: 202
    headers:
      content-type: application/json
      retry-after: '60'
    body:
      json: {{HttpStatusCode: 202, FlinksCode: OPERATION_PENDING, RequestId: {REQUEST}}}
  recorded_at: 2026-01-01T00:00:02Z
- request:
    method: GET
    uri: http://127.0.0.1:1/v3/ca55e77e-0000-4000-8000-0000000000cc/BankingServices/GetAccountsDetailAsync/{REQUEST}
  response:
    status: 200
    headers:
      content-type: application/json
    body:
      json: {{HttpStatusCode: 200, Accounts: [{{Title: Chequing}}], RequestId: {REQUEST}}}
  recorded_at: 2026-01-01T00:00:03Z
"
    )
}

/// The cassette written to a file of its own.
fn written(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("bankfeed-replay-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("session.yaml");
    std::fs::write(&path, cassette()).unwrap();
    path
}

fn replaying(path: &Path) -> Sandbox {
    let served = ServedCassette::replay(path, "any-customer").unwrap();
    Sandbox::start(SandboxConfig { cassette: Some(Arc::new(served)), ..SandboxConfig::default() }).unwrap()
}

fn http() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder().build().unwrap()
}

/// Sends `body` (or nothing) to `path` under another customer than the recording's, as any client
/// would; the status, the `Retry-After`, and the body as JSON.
async fn send(
    sandbox: &Sandbox,
    method: reqwest::Method,
    path: &str,
    body: Option<&str>,
) -> (u16, Option<String>, Value) {
    let url = format!("{}/v3/43387ca6-0391-4c82-857d-70d95f087ecb/BankingServices/{path}", sandbox.url());
    let mut request = http().request(method, url).header("flinks-auth-key", "a-real-key-not-recorded");
    if let Some(body) = body {
        request = request.header("content-type", "application/json").body(body.to_owned());
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let retry_after = response.headers().get("retry-after").map(|value| value.to_str().unwrap().to_owned());
    (status, retry_after, serde_json::from_slice(&response.bytes().await.unwrap()).unwrap())
}

#[tokio::test]
async fn a_session_replays_in_recorded_order_without_waiting() {
    let path = written("order");
    let sandbox = replaying(&path);
    let started = Instant::now();
    // Keys in another order, another customer id, another key: the same request.
    let (status, _, body) = send(
        &sandbox,
        reqwest::Method::POST,
        "Authorize",
        Some(&format!(r#"{{"Save":true,"MostRecentCached":true,"LoginId":"{LOGIN}"}}"#)),
    )
    .await;
    assert_eq!((status, body["RequestId"].as_str()), (200, Some(REQUEST)), "{body}");
    let (status, retry_after, _) =
        send(&sandbox, reqwest::Method::POST, "GetAccountsDetail", Some(&format!(r#"{{"RequestId":"{REQUEST}"}}"#)))
            .await;
    assert_eq!((status, retry_after.as_deref()), (202, Some("60")));
    let poll = format!("GetAccountsDetailAsync/{REQUEST}");
    let statuses: Vec<u16> = [
        send(&sandbox, reqwest::Method::GET, &poll, None).await,
        send(&sandbox, reqwest::Method::GET, &poll, None).await,
    ]
    .iter()
    .map(|(status, _, _)| *status)
    .collect();
    assert_eq!(statuses, [202, 200]);
    // The recorded Retry-After is information only: two minutes of them took no time.
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    assert_eq!(sandbox.cassette().unwrap().play_count(), (4, 4));
    // The request log logs a replay's requests like the imitation's.
    assert_eq!(sandbox.request_count(), 4);
    // A reset plays the cassette again from its start.
    sandbox.reset();
    assert_eq!(sandbox.cassette().unwrap().play_count(), (0, 4));
    let (status, _, _) = send(&sandbox, reqwest::Method::GET, &poll, None).await;
    assert_eq!(status, 202, "the first of the recorded polls again");
}

#[tokio::test]
async fn a_sequence_that_ran_out_is_an_error_not_a_repeat() {
    let path = written("run-out");
    let sandbox = replaying(&path);
    let poll = format!("GetAccountsDetailAsync/{REQUEST}");
    for expected in [202, 200] {
        assert_eq!(send(&sandbox, reqwest::Method::GET, &poll, None).await.0, expected);
    }
    let (status, _, body) = send(&sandbox, reqwest::Method::GET, &poll, None).await;
    assert_eq!((status, body["FlinksCode"].as_str()), (400, Some("CASSETTE_RUN_OUT")), "{body}");
    assert_eq!(body["HttpStatusCode"], 400);
    let message = body["Message"].as_str().unwrap();
    assert!(
        message.contains("recorded 2 answer(s) to GET /v3/{customer_id}/BankingServices/GetAccountsDetailAsync/"),
        "{message}"
    );
}

#[tokio::test]
async fn an_unmatched_request_shows_the_closest_as_an_in_process_replay_does() {
    let path = written("unmatched");
    let sandbox = replaying(&path);
    let other_login = "ca55e77e-0000-4000-8000-000000000009";
    let sent = format!(r#"{{"LoginId":"{other_login}","MostRecentCached":true,"Save":true}}"#);
    let (status, _, body) = send(&sandbox, reqwest::Method::POST, "Authorize", Some(&sent)).await;
    assert_eq!((status, body["FlinksCode"].as_str()), (400, Some("CASSETTE_UNMATCHED")), "{body}");
    let message = body["Message"].as_str().unwrap();
    assert!(
        message.contains(
            "the closest recorded request is interaction 0: POST /v3/{customer_id}/BankingServices/Authorize, which \
             differs in: body.LoginId: recorded"
        ),
        "{message}"
    );
    assert!(!message.contains("a-real-key-not-recorded"), "{message}");
    // The same request, replayed in-process from the same file, fails with the same text.
    let upstream = Upstream { base_urls: Vec::new(), customer_id: "any-customer" };
    let player = CassetteSession::open_for(&path, RecordMode::None, &upstream, &CassetteOptions::default()).unwrap();
    let url = format!("{}/v3/43387ca6-0391-4c82-857d-70d95f087ecb/BankingServices/Authorize", sandbox.url());
    let key = bankfeed::Secret::new("a-real-key-not-recorded");
    let exchange = Exchange {
        operation: "Authorize",
        method: "POST",
        url: &url,
        headers: vec![("flinks-auth-key", &key)],
        content_type: Some("application/json"),
        body: Some(sent.as_bytes()),
        body_secrets: &[],
    };
    let in_process = player.replay(&exchange).unwrap_err().to_string();
    assert_eq!(message, in_process);
    // Nothing was played by the refusal: the recorded request still answers.
    let recorded = format!(r#"{{"LoginId":"{LOGIN}","MostRecentCached":true,"Save":true}}"#);
    assert_eq!(send(&sandbox, reqwest::Method::POST, "Authorize", Some(&recorded)).await.0, 200);
}

#[test]
fn a_cassette_that_is_missing_or_broken_is_refused_naming_the_file() {
    let missing = std::env::temp_dir().join("bankfeed-replay-no-such-cassette.yaml");
    let error = ServedCassette::replay(&missing, "c").unwrap_err().to_string();
    assert!(error.contains("bankfeed-replay-no-such-cassette.yaml") && error.contains("does not exist"), "{error}");
    let path = written("broken");
    std::fs::write(&path, "version: 1\ninteractions: [").unwrap();
    let error = ServedCassette::replay(&path, "c").unwrap_err().to_string();
    assert!(error.contains("is not a cassette"), "{error}");
}

#[tokio::test]
async fn a_recording_sandbox_forwards_records_redacted_and_its_cassette_replays() {
    let upstream = Sandbox::start(SandboxConfig { auth: false, ..SandboxConfig::default() }).unwrap();
    let dir = std::env::temp_dir().join(format!("bankfeed-record-{}", std::process::id()));
    let path = dir.join("recorded.yaml");
    let _ = std::fs::remove_file(&path);
    let served = ServedCassette::record(&path, &upstream.url(), upstream.customer_id(), false).unwrap();
    let recorder =
        Sandbox::start(SandboxConfig { cassette: Some(Arc::new(served)), ..SandboxConfig::default() }).unwrap();
    let login = r#"{"Institution":"FlinksCapital","Username":"greatday_nomfa","Password":"Everyday","Save":true}"#;
    let (status, _, opened) = send(&recorder, reqwest::Method::POST, "Authorize", Some(login)).await;
    assert_eq!(status, 200, "{opened}");
    let real = opened["RequestId"].as_str().unwrap().to_owned();
    assert!(!real.starts_with("ca55e77e-"), "the client gets the upstream's answer as it came");
    let summary = format!(r#"{{"RequestId":"{real}"}}"#);
    let (status, _, accounts) = send(&recorder, reqwest::Method::POST, "GetAccountsSummary", Some(&summary)).await;
    assert_eq!(status, 200, "{accounts}");
    assert_eq!(upstream.request_count(), 2, "each request forwarded once");

    // Written after each answer, redacted: no password, username, key or real id.
    let text = std::fs::read_to_string(&path).unwrap();
    for secret in ["Everyday", "greatday_nomfa", "a-real-key-not-recorded", real.as_str()] {
        assert!(!text.to_lowercase().contains(&secret.to_lowercase()), "{secret} in\n{text}");
    }
    assert!(bankfeed::cassette::check_text(&text).is_empty(), "{:?}", bankfeed::cassette::check_text(&text));
    recorder.stop();
    upstream.stop();

    // Replayed with every server gone: the same requests, the cassette's ids.
    let replay = replaying(&path);
    let (status, _, again) = send(&replay, reqwest::Method::POST, "Authorize", Some(login)).await;
    assert_eq!(status, 200, "{again}");
    let fake = again["RequestId"].as_str().unwrap();
    assert_eq!(fake, bankfeed::cassette::pseudonym(&real));
    let summary = format!(r#"{{"RequestId":"{fake}"}}"#);
    let (status, _, replayed) = send(&replay, reqwest::Method::POST, "GetAccountsSummary", Some(&summary)).await;
    assert_eq!(status, 200);
    assert_eq!(replayed["Accounts"].as_array().unwrap().len(), accounts["Accounts"].as_array().unwrap().len());
}

#[test]
fn recording_a_remote_host_needs_allow_live_record() {
    let path = std::env::temp_dir().join("bankfeed-record-remote.yaml");
    let error = ServedCassette::record(&path, "https://bank.example.com", "c", false).unwrap_err().to_string();
    assert!(error.contains("allow_live_record") && error.contains("lockout"), "{error}");
    let error = ServedCassette::record(&path, "https://bank.example.com/v3/c", "c", true).unwrap_err().to_string();
    assert!(error.contains("upstream") && error.contains("root"), "{error}");
}

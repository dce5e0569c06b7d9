//! The request log is bounded in bytes (docs/sandbox.md#the-request-log): a flood of large
//! bodies, with keys and without, does not grow the log past its bound, and a large body is kept
//! as its size and the start of its masked text. The process's memory is measured by
//! tests/python/sandbox/test_request_log_bound.py on a sandbox process of its own: this binary
//! runs its tests in parallel threads, so its resident size counts theirs too.

use bankfeed_sandbox::{SandboxConfig, LOGGED_BODY_BYTES};
use serde_json::json;

use crate::common::{Api, AUTHORIZE, INSTITUTION, TOKEN};

/// A body of this size: the largest the sandbox reads whole.
const LARGE: usize = 2 * 1024 * 1024;

/// An Authorize body of about [`LARGE`] bytes whose bulk is a list of small numbers, the
/// costliest JSON to hold parsed, with a password that must never reach the log.
fn large_body() -> Vec<u8> {
    let head = json!({"Institution": INSTITUTION, "Username": "greatday_nomfa", "Password": "Everyday"}).to_string();
    let mut body = head.trim_end_matches('}').to_owned();
    body.push_str(",\"Filler\":[0");
    while body.len() < LARGE - 2 {
        body.push_str(",0");
    }
    body.push_str("]}");
    body.into_bytes()
}

/// Sends `count` large Authorize bodies, every other one with a fresh token (a keyed client's
/// request) and the rest without (refused 401, and logged all the same).
async fn flood(api: &Api, body: &[u8], count: usize) {
    for index in 0..count {
        let token = if index % 2 == 0 { Some(api.token().await) } else { None };
        let headers: Vec<(&str, &str)> = token.iter().map(|token| ("flinks-auth-key", token.as_str())).collect();
        let (status, _) = api.raw(reqwest::Method::POST, AUTHORIZE, &headers, Some(body.to_vec())).await;
        assert!(status == 200 || status == 401, "request {index}: status {status}");
    }
}

#[tokio::test]
async fn a_flood_of_large_bodies_keeps_the_log_within_its_bound() {
    let bound = 4 * 1024 * 1024;
    let api = Api::unkeyed(SandboxConfig { request_log_bytes: bound, ..SandboxConfig::default() });
    let body = large_body();
    // Kept whole, 44 bodies would be 88 MiB as text and some 3 GB parsed.
    flood(&api, &body, 44).await;
    let logged = api.sandbox.request_log_bytes();
    assert!(logged <= bound, "the log holds {logged} bytes, past its bound of {bound}");
    let requests = api.sandbox.requests();
    let authorizes: Vec<_> = requests.iter().filter(|r| r.path.ends_with("/Authorize")).collect();
    let newest = authorizes.last().unwrap();
    assert_eq!(newest.body_size, Some(body.len()));
    assert!(newest.body.is_none(), "a large body is kept as its start only");
    let prefix = newest.body_prefix.as_deref().unwrap();
    assert_eq!(prefix.len(), LOGGED_BODY_BYTES);
    assert!(prefix.starts_with('{') && prefix.contains("greatday_nomfa") && !prefix.contains("Everyday"));
}

#[tokio::test]
async fn the_oldest_entries_are_dropped_first_and_counted() {
    let bound = 256 * 1024;
    let api = Api::unkeyed(SandboxConfig { request_log_bytes: bound, ..SandboxConfig::default() });
    let body = large_body();
    flood(&api, &body, 10).await;
    let (status, _) = api.raw(reqwest::Method::POST, TOKEN, &[], None).await;
    assert_eq!(status, 401);
    assert!(api.sandbox.request_log_bytes() <= bound);
    let requests = api.sandbox.requests();
    // 10 Authorize and 5 token calls, then the last token call: what the bound left is the newest.
    let dropped = usize::try_from(api.sandbox.requests_dropped()).unwrap();
    assert_eq!(dropped + requests.len(), 16);
    assert!(dropped >= 6, "only {dropped} dropped");
    assert!(requests.last().unwrap().path.ends_with(TOKEN));
    // A small body is kept whole, masked.
    let small = json!({"Institution": INSTITUTION, "Username": "greatday_nomfa", "Password": "Everyday"});
    api.raw(reqwest::Method::POST, AUTHORIZE, &[], Some(small.to_string().into_bytes())).await;
    let newest = api.sandbox.requests().pop().unwrap();
    assert_eq!(newest.body.unwrap()["Password"], "***");
    assert_eq!(newest.body_prefix, None);
    api.sandbox.reset();
    assert_eq!((api.sandbox.requests_dropped(), api.sandbox.request_log_bytes()), (0, 0));
}

//! The sandbox's fault layer (docs/sandbox.md#faults), seen on the wire by a plain HTTP client.

use std::time::{Duration, Instant};

use bankfeed_sandbox::{Fault, FaultKind, SandboxConfig};
use serde_json::{json, Value};

use crate::common::{Api, AUTHORIZE, DETAIL, INVESTMENTS, TOKEN};

/// Without keys: these tests are about faults, and write some requests by hand.
fn api() -> Api {
    Api::with(SandboxConfig { pending_polls: 0, auth: false, ..SandboxConfig::default() })
}

fn fault(operation: &str, kind: FaultKind) -> Fault {
    Fault { operation: Some(operation.to_owned()), ..Fault::new(kind) }
}

fn credentials(username: &str) -> Value {
    json!({"Institution": "FlinksCapital", "Username": username, "Password": "Everyday", "MostRecentCached": false, "Save": true})
}

/// The status, headers and raw body of a POST, or the transport error's text.
async fn post(api: &Api, operation: &str, body: &Value) -> Result<(u16, reqwest::header::HeaderMap, Vec<u8>), String> {
    let response = api
        .http
        .post(api.url(operation))
        .header("content-type", "application/json")
        .body(serde_json::to_vec(body).unwrap())
        .send()
        .await
        .map_err(|e| format!("{e:?}"))?;
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let bytes = response.bytes().await.map_err(|e| format!("{e:?}"))?;
    Ok((status, headers, bytes.to_vec()))
}

/// A saved session of greatday_nomfa: (LoginId, RequestId).
async fn session(api: &Api) -> (String, String) {
    let (status, reply) = api.post(AUTHORIZE, credentials("greatday_nomfa")).await;
    assert_eq!(status, 200, "{reply}");
    (reply["Login"]["Id"].as_str().unwrap().to_owned(), reply["RequestId"].as_str().unwrap().to_owned())
}

#[tokio::test]
async fn a_status_fault_answers_an_envelope_with_retry_after_then_is_spent() {
    let api = api();
    let (login_id, request_id) = session(&api).await;
    api.sandbox.inject([Fault {
        times: Some(2),
        ..fault(
            "Investments",
            FaultKind::Status {
                status: 503,
                code: Some("RETRY_LATER".into()),
                message: None,
                retry_after: Some("Wed, 21 Oct 2015 07:28:00 GMT".into()),
            },
        )
    }]);
    let body = json!({"LoginId": login_id, "RequestId": request_id, "MostRecentCached": true});
    for left in [Some(1), None] {
        let (status, headers, bytes) = post(&api, INVESTMENTS, &body).await.unwrap();
        assert_eq!(status, 503);
        assert_eq!(headers["retry-after"], "Wed, 21 Oct 2015 07:28:00 GMT");
        let reply: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(reply["FlinksCode"], "RETRY_LATER");
        assert_eq!(reply["HttpStatusCode"], 503);
        assert_eq!(reply["RequestId"], request_id.as_str(), "the request's own RequestId");
        assert_eq!(api.sandbox.faults().first().and_then(|fault| fault.times), left);
    }
    let (status, _, _) = post(&api, INVESTMENTS, &body).await.unwrap();
    assert_eq!(status, 200, "spent after two");
    // Other operations were never hit.
    assert_eq!(api.post(DETAIL, json!({"RequestId": request_id})).await.0, 200);
}

#[tokio::test]
async fn faults_are_a_sequence_in_list_order() {
    let api = api();
    let status = |code| FaultKind::Status { status: code, code: None, message: None, retry_after: None };
    api.sandbox.inject([
        fault("Authorize", status(500)),
        fault("Authorize", status(502)),
        fault("Authorize", status(504)),
    ]);
    let mut seen = Vec::new();
    for _ in 0..4 {
        seen.push(api.post(AUTHORIZE, credentials("greatday_nomfa")).await.0);
    }
    assert_eq!(seen, [500, 502, 504, 200]);
    assert!(api.sandbox.faults().is_empty());
}

#[tokio::test]
async fn a_fault_for_a_user_hits_that_user_however_the_request_names_them() {
    let api = api();
    let (login_id, request_id) = session(&api).await;
    api.sandbox.inject([Fault {
        username: Some("GREATDAY_NOMFA".into()),
        times: None,
        ..Fault::new(FaultKind::SessionLoading)
    }]);
    // Another user, and the token call (no user), pass.
    assert_eq!(api.post(AUTHORIZE, credentials("mfa_image")).await.0, 203);
    assert_eq!(api.post(TOKEN, json!({})).await.0, 200);
    // By Username, by LoginId, by the body's RequestId, by the path's RequestId and LoginId.
    for (method, operation, body) in [
        (reqwest::Method::POST, AUTHORIZE.to_owned(), Some(credentials("greatday_nomfa"))),
        (reqwest::Method::POST, AUTHORIZE.to_owned(), Some(json!({"LoginId": login_id, "MostRecentCached": true}))),
        (reqwest::Method::POST, DETAIL.to_owned(), Some(json!({"RequestId": request_id}))),
        (reqwest::Method::GET, format!("insight/login/{login_id}/attributes/{request_id}/GetIncomeAttributes"), None),
        (reqwest::Method::DELETE, format!("BankingServices/DeleteCard/{login_id}"), None),
    ] {
        let (status, reply) = api.send(method, &operation, body).await;
        assert_eq!((status, reply["FlinksCode"].as_str()), (400, Some("SESSION_LOADING")), "{operation}");
        assert!(reply["RequestId"].as_str().is_some_and(|id| !id.is_empty()));
    }
}

/// A fault names the operation of the route a request reaches: a banking operation's `...Async`
/// GET is the operation, both shapes of the attributes call are `Attributes`, and a request that
/// reaches no operation (another customer, another method, no route) is hit by no fault.
#[tokio::test]
async fn a_fault_hits_the_operation_of_the_route() {
    let api = api();
    let (login_id, request_id) = session(&api).await;
    let loading = |operation: &str| Fault { times: None, ..fault(operation, FaultKind::SessionLoading) };
    api.sandbox.inject([loading("GetAccountsDetail"), loading("Attributes")]);
    let attributes = format!("insight/login/{login_id}/attributes/{request_id}");
    for (method, path, body) in [
        (reqwest::Method::POST, DETAIL.to_owned(), Some(json!({"RequestId": request_id}))),
        (reqwest::Method::GET, format!("BankingServices/GetAccountsDetailAsync/{request_id}"), None),
        (reqwest::Method::GET, format!("{attributes}/GetIncomeAttributes"), None),
        (reqwest::Method::POST, attributes.clone(), Some(json!({"MostRecentCached": true}))),
    ] {
        let (status, reply) = api.send(method, &path, body).await;
        assert_eq!((status, reply["FlinksCode"].as_str()), (400, Some("SESSION_LOADING")), "{path}");
        assert_eq!(reply["RequestId"], request_id.as_str(), "{path}");
    }
    // A fault for every operation, which none of these requests reaches.
    api.sandbox.clear_faults();
    api.sandbox.inject([Fault { times: None, ..Fault::new(FaultKind::SessionLoading) }]);
    let other_customer = format!("{}/v3/00000000-0000-0000-0000-000000000000/{DETAIL}", api.sandbox.url());
    let body = serde_json::to_vec(&json!({"RequestId": request_id})).unwrap();
    let (status, _) = api.send_url(reqwest::Method::POST, other_customer, &[], Some(body)).await;
    assert_eq!(status, 404);
    assert_eq!(api.send(reqwest::Method::GET, DETAIL, None).await.0, 405);
    assert_eq!(api.send(reqwest::Method::POST, "BankingServices/GetNothing", Some(json!({}))).await.0, 404);
}

#[tokio::test]
async fn a_dropped_connection_gives_no_answer_and_is_logged_with_status_0() {
    let api = api();
    api.sandbox.inject([fault("Authorize", FaultKind::DropBeforeResponse)]);
    let error = post(&api, AUTHORIZE, &credentials("greatday_nomfa")).await.unwrap_err();
    assert!(!error.is_empty());
    // The handler ran: the login was saved although the client heard nothing. (A login without
    // Save learns the LoginId, the same for every login of a user, and saves nothing.)
    let mut unsaved = credentials("greatday_nomfa");
    unsaved["Save"] = json!(false);
    let (_, reply) = api.post(AUTHORIZE, unsaved).await;
    let cached = json!({"LoginId": reply["Login"]["Id"], "MostRecentCached": true});
    assert_eq!(api.post(AUTHORIZE, cached).await.0, 200);
    let statuses: Vec<u16> = api.sandbox.requests().iter().map(|request| request.status).collect();
    assert_eq!(statuses.first(), Some(&0));
}

#[tokio::test]
async fn a_connection_dropped_mid_body_sends_half_of_what_it_announces() {
    let api = api();
    api.sandbox.inject([fault("Authorize", FaultKind::DropMidBody)]);
    let response = api
        .http
        .post(api.url(AUTHORIZE))
        .header("content-type", "application/json")
        .body(serde_json::to_vec(&credentials("greatday_nomfa")).unwrap())
        .send()
        .await
        .expect("the head arrives");
    assert_eq!(response.status(), 200);
    let announced = response.content_length().unwrap();
    assert!(announced > 100);
    let error = response.bytes().await.unwrap_err();
    assert!(error.is_body() || error.is_decode(), "{error:?}");
    assert_eq!(api.sandbox.requests()[0].status, 200);
}

#[tokio::test]
async fn mangled_bodies_keep_their_status() {
    let api = api();
    let body = credentials("greatday_nomfa");
    let (_, _, whole) = post(&api, AUTHORIZE, &body).await.unwrap();
    api.sandbox.inject([
        fault("Authorize", FaultKind::TruncatedBody),
        fault("Authorize", FaultKind::MalformedJson),
        fault("Authorize", FaultKind::WrongContentType { content_type: "text/plain".into() }),
    ]);
    let (status, _, truncated) = post(&api, AUTHORIZE, &body).await.unwrap();
    assert_eq!((status, truncated.len()), (200, whole.len() / 2));
    assert!(serde_json::from_slice::<Value>(&truncated).is_err());
    let (status, _, malformed) = post(&api, AUTHORIZE, &body).await.unwrap();
    assert_eq!((status, malformed.len()), (200, whole.len() + 1));
    assert!(serde_json::from_slice::<Value>(&malformed).is_err());
    let (status, headers, plain) = post(&api, AUTHORIZE, &body).await.unwrap();
    assert_eq!((status, headers["content-type"].to_str().unwrap()), (200, "text/plain"));
    assert!(serde_json::from_slice::<Value>(&plain).is_ok());
}

#[tokio::test]
async fn made_up_answers_replace_the_handler() {
    let api = api();
    let body = credentials("greatday_nomfa");
    api.sandbox.inject([
        fault("Authorize", FaultKind::HtmlErrorPage { status: 502 }),
        fault("Authorize", FaultKind::Redirect { status: 308, location: "http://127.0.0.1:9/elsewhere".into() }),
        fault("Authorize", FaultKind::OversizedBody { bytes: 3_000_000 }),
    ]);
    let (status, headers, page) = post(&api, AUTHORIZE, &body).await.unwrap();
    assert_eq!(status, 502);
    assert!(headers["content-type"].to_str().unwrap().starts_with("text/html"));
    assert!(String::from_utf8(page).unwrap().contains("502 Bad Gateway"));
    // reqwest follows redirects by default; this harness's client must see the 308 itself.
    let plain = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let request = plain.post(api.url(AUTHORIZE)).header("content-type", "application/json");
    let response = request.body(serde_json::to_vec(&body).unwrap()).send().await.unwrap();
    assert_eq!(response.status(), 308);
    assert_eq!(response.headers()["location"], "http://127.0.0.1:9/elsewhere");
    let (status, headers, big) = post(&api, AUTHORIZE, &body).await.unwrap();
    assert_eq!((status, big.len()), (200, 3_000_000));
    assert!(headers.get("content-length").is_none(), "streamed");
    assert_eq!(serde_json::from_slice::<Value>(&big).unwrap()["HttpStatusCode"], 200);
}

#[tokio::test]
async fn latency_delays_the_answer() {
    let api = api();
    api.sandbox.inject([fault("GenerateAuthorizeToken", FaultKind::Latency { seconds: 0.3 })]);
    let started = Instant::now();
    assert_eq!(api.post(TOKEN, json!({})).await.0, 200);
    assert!(started.elapsed() >= Duration::from_millis(300));
    let started = Instant::now();
    assert_eq!(api.post(TOKEN, json!({})).await.0, 200);
    assert!(started.elapsed() < Duration::from_millis(300));
}

#[tokio::test]
async fn a_request_the_client_abandons_is_logged_with_status_0() {
    let api = api();
    api.sandbox.inject([fault("GenerateAuthorizeToken", FaultKind::Latency { seconds: 5.0 })]);
    let impatient = api.http.post(api.url(TOKEN)).timeout(Duration::from_millis(200)).send().await;
    assert!(impatient.unwrap_err().is_timeout());
    let deadline = Instant::now() + Duration::from_secs(3);
    while api.sandbox.requests().is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(api.sandbox.requests()[0].status, 0);
}

#[tokio::test]
async fn faults_can_be_configured_cleared_and_read_back() {
    let spec = json!({"kind": "status", "status": 429, "code": "TOO_MANY_REQUESTS", "retry_after": 1, "times": null});
    let configured = Fault::from_json(&spec).unwrap();
    let api = Api::with(SandboxConfig { faults: vec![configured.clone()], ..SandboxConfig::default() });
    assert_eq!(api.post(TOKEN, json!({})).await.0, 429);
    assert_eq!(api.post(TOKEN, json!({})).await.0, 429);
    assert_eq!(api.sandbox.faults(), vec![configured], "a fault for every time is never spent");
    assert_eq!(api.sandbox.faults()[0].to_json()["retry_after"], "1");
    api.sandbox.clear_faults();
    assert_eq!(api.post(TOKEN, json!({})).await.0, 200);
}

#[tokio::test]
async fn without_faults_nothing_changes() {
    let api = api();
    assert!(api.sandbox.faults().is_empty());
    let (login_id, request_id) = session(&api).await;
    let (status, _) =
        api.post(INVESTMENTS, json!({"LoginId": login_id, "RequestId": request_id, "MostRecentCached": true})).await;
    assert_eq!(status, 200);
    assert!(api.sandbox.requests().iter().all(|request| request.status == 200));
}

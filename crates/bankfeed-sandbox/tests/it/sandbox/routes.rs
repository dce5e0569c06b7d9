//! The router: unknown customers and paths, the request log, the admin API.

use super::*;

#[tokio::test]
async fn unknown_customers_and_paths_get_404_and_everything_is_logged() {
    // Without keys, so that each request below is one request.
    let api = Api::with(SandboxConfig { auth: false, ..SandboxConfig::default() });
    assert_eq!(api.sandbox.request_count(), 0);
    let other = format!("{}/v3/00000000-0000-0000-0000-000000000000/BankingServices/Authorize", api.sandbox.url());
    let reply = api.send_url(reqwest::Method::POST, other, &[], Some(b"{}".to_vec())).await;
    assert_error(&reply, 404, "INVALID_REQUEST");
    assert_message_names(&reply, "00000000-0000-0000-0000-000000000000");

    // No operation: the framework's answer, a Message and no FlinksCode.
    let reply =
        api.send_url(reqwest::Method::GET, format!("{}/nowhere?password=x", api.sandbox.url()), &[], None).await;
    assert_eq!((reply.0, &reply.1["FlinksCode"]), (404, &Value::Null), "{}", reply.1);
    assert!(!reply.1.to_string().contains("password"), "{}", reply.1);
    let reply =
        api.send_url(reqwest::Method::POST, api.url("BankingServices/GetNothing"), &[], Some(b"{}".to_vec())).await;
    assert_eq!((reply.0, &reply.1["FlinksCode"]), (404, &Value::Null), "{}", reply.1);
    let reply = api.send_url(reqwest::Method::GET, api.url(AUTHORIZE), &[], None).await;
    assert_eq!((reply.0, &reply.1["FlinksCode"]), (405, &Value::Null), "{}", reply.1);
    let reply = api.credentials("greatday_nomfa", false).await;
    assert_eq!(reply.0, 200);

    assert_eq!(api.sandbox.request_count(), 5);
    let cid = api.sandbox.customer_id().to_owned();
    let record = |method: &str, path: String, status: u16| (method.to_owned(), path, status);
    let requests = api.sandbox.requests();
    assert_eq!(
        requests.iter().map(|r| (r.method.clone(), r.path.clone(), r.status)).collect::<Vec<_>>(),
        [
            record("POST", "/v3/00000000-0000-0000-0000-000000000000/BankingServices/Authorize".into(), 404),
            record("GET", "/nowhere".into(), 404),
            record("POST", format!("/v3/{cid}/BankingServices/GetNothing"), 404),
            record("GET", format!("/v3/{cid}/BankingServices/Authorize"), 405),
            record("POST", format!("/v3/{cid}/BankingServices/Authorize"), 200),
        ]
    );
    // Only the request an operation served says what it concerns (docs/sandbox.md#the-request-log).
    assert!(requests[..4].iter().all(|r| r.operation.is_none() && r.body.is_none()));
    let login = &requests[4];
    assert_eq!((login.operation, login.authorize), (Some("Authorize"), Some(AuthorizeKind::Credentials)));
    assert_eq!(login.username.as_deref(), Some("greatday_nomfa"));
    assert_eq!(login.body.as_ref().and_then(|body| body.get("Password")), Some(&serde_json::json!("***")));
    assert!(login.request_id.is_some() && login.login_id.is_some());
}

/// The admin API (docs/sandbox.md#the-admin-api), as a harness in another language speaks it.
#[tokio::test]
async fn the_admin_api_needs_its_token_and_stays_out_of_the_log_and_the_faults() {
    let token = "0123456789abcdef0123456789abcdef";
    let api = Api::with(SandboxConfig { admin_token: Some(token.into()), ..SandboxConfig::default() });
    let admin = |path: &str| format!("{}/_sandbox/{path}", api.sandbox.url());
    let bearer = format!("Bearer {token}");
    let auth = [("authorization", bearer.as_str())];
    for refused in [&[][..], &[("authorization", "Bearer 0123456789abcdef0123456789abcdee")][..]] {
        assert_error(&api.send_url(reqwest::Method::GET, admin("requests"), refused, None).await, 401, "UNAUTHORIZED");
    }
    // A fault for every operation, every time: the admin paths are none of them.
    let fault = serde_json::json!([{"kind": "drop_before_response", "times": null}]).to_string().into_bytes();
    let added = api.send_url(reqwest::Method::POST, admin("faults"), &auth, Some(fault)).await;
    assert_eq!((added.0, &added.1["faults"][0]["kind"]), (200, &serde_json::json!("drop_before_response")));
    let log = api.send_url(reqwest::Method::GET, admin("requests"), &auth, None).await;
    assert_eq!(log, (200, serde_json::json!({"requests": [], "count": 0, "dropped": 0})));
    let cleared = api.send_url(reqwest::Method::DELETE, admin("faults"), &auth, None).await;
    assert_eq!(cleared.1, serde_json::json!({"faults": []}));

    let session = api.login("greatday_nomfa", true).await;
    let log = api.send_url(reqwest::Method::GET, admin("requests"), &auth, None).await.1;
    // The token call, then the Authorize it opened.
    assert_eq!(log["count"], 2);
    assert_eq!(log["requests"][0]["operation"], "GenerateAuthorizeToken");
    let entry = &log["requests"][1];
    assert_eq!(
        (&entry["operation"], &entry["authorize"]),
        (&serde_json::json!("Authorize"), &serde_json::json!("credentials"))
    );
    assert_eq!(entry["body"]["Password"], "***");
    assert_eq!(entry["login_id"], session["Login"]["Id"]);

    assert_eq!(api.send_url(reqwest::Method::POST, admin("reset"), &auth, None).await.0, 200);
    assert_eq!(api.sandbox.request_count(), 0);
    assert_error(&api.cached(&login_id(&session)).await, 401, "INVALID_LOGIN");
}

#[tokio::test]
async fn without_a_token_the_admin_paths_are_unknown_routes() {
    let api = Api::new();
    let reply = api.send_url(reqwest::Method::GET, format!("{}/_sandbox/requests", api.sandbox.url()), &[], None).await;
    // The service's framework answer for a path it does not route (docs/protocol.md).
    assert_eq!(reply.0, 404, "{}", reply.1);
    assert!(reply.1.get("FlinksCode").is_none(), "{}", reply.1);
}

#[tokio::test]
async fn a_configured_customer_id_replaces_the_default() {
    let api = Api::with(SandboxConfig { customer_id: "acme".into(), ..SandboxConfig::default() });
    assert_eq!(api.sandbox.customer_id(), "acme");
    assert!(api.url(AUTHORIZE).contains("/v3/acme/"));
    assert_eq!(api.credentials("greatday_nomfa", false).await.0, 200);
    let default = format!("{}/v3/43387ca6-0391-4c82-857d-70d95f087ecb/{AUTHORIZE}", api.sandbox.url());
    assert_error(
        &api.send_url(reqwest::Method::POST, default, &[], Some(b"{}".to_vec())).await,
        404,
        "INVALID_REQUEST",
    );
}

//! GenerateAuthorizeToken: the keys asked for, single-use tokens and their lifetime.

use super::*;

/// A token from the sandbox's `GenerateAuthorizeToken`, minted with `secret`.
async fn mint(api: &Api, secret: &str) -> String {
    let reply = api.post_with(TOKEN, &[("flinks-auth-key", secret)], json!({})).await;
    assert_eq!(reply.0, 200, "{}", reply.1);
    reply.1["Token"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_default_sandbox_asks_for_the_public_test_instances_keys() {
    let api = Api::unkeyed(SandboxConfig { pending_polls: 0, ..SandboxConfig::default() });
    let nomfa = json!({"Institution": "FlinksCapital", "Username": "greatday_nomfa", "Password": "Everyday", "MostRecentCached": false});
    let refused = api.authorize(nomfa.clone()).await;
    assert_error(&refused, 401, "UNAUTHORIZED");
    assert_message_names(&refused, "You must provide a valid authorize token");
    let wrong = api.post_with(TOKEN, &[("flinks-auth-key", "not-the-key")], json!({})).await;
    assert_error(&wrong, 401, "UNAUTHORIZED");
    assert_message_names(&wrong, "You must provide a valid auth key");
    assert!(!wrong.1.to_string().contains("not-the-key"), "the key sent is not repeated: {}", wrong.1);

    let token = mint(&api, "c4569c54-e167-4d34-8de6-f4113bc82414").await;
    let session = api.post_with(AUTHORIZE, &[("flinks-auth-key", &token)], nomfa).await;
    assert_eq!(session.0, 200, "{}", session.1);
    let body = json!({"RequestId": session.1["RequestId"]});
    let keyless = api.post(crate::common::SUMMARY, body.clone()).await;
    assert_error(&keyless, 401, "UNAUTHORIZED");
    assert_message_names(&keyless, "You must provide a valid x-api-key");
    let keyed =
        api.post_with(crate::common::SUMMARY, &[("x-api-key", "3d5266a8-b697-48d4-8de6-52e2e2662acc")], body).await;
    assert_eq!(keyed.0, 200, "{}", keyed.1);
}

#[tokio::test]
async fn with_auth_off_no_key_is_asked_for() {
    // The keys stay configured; `auth` alone turns them off.
    let api = Api::unkeyed(SandboxConfig { auth: false, pending_polls: 0, ..SandboxConfig::default() });
    assert_eq!((api.sandbox.secret_key(), api.sandbox.api_key()), (None, None));
    let session = api.credentials("greatday_nomfa", false).await;
    assert_eq!(session.0, 200, "{}", session.1);
    let summary = api.post(crate::common::SUMMARY, json!({"RequestId": session.1["RequestId"]})).await;
    assert_eq!(summary.0, 200, "{}", summary.1);
}

#[tokio::test]
async fn a_token_opens_one_session_and_carries_its_challenge_answers() {
    let api =
        Api::unkeyed(SandboxConfig { secret_key: Some("s3cret".into()), api_key: None, ..SandboxConfig::default() });
    let nomfa = json!({"Institution": "FlinksCapital", "Username": "greatday_nomfa", "Password": "Everyday", "MostRecentCached": false});
    assert_error(&api.post(TOKEN, json!({})).await, 401, "UNAUTHORIZED");
    let token = api.post_with(TOKEN, &[("flinks-auth-key", "s3cret")], json!({})).await;
    assert_eq!(token.1["HttpStatusCode"], 200);
    let token = token.1["Token"].as_str().unwrap().to_owned();
    uuid::Uuid::parse_str(&token).unwrap();
    // The secret key is no token.
    assert_error(&api.post_with(AUTHORIZE, &[("flinks-auth-key", "s3cret")], nomfa.clone()).await, 401, "UNAUTHORIZED");
    assert_eq!(api.post_with(AUTHORIZE, &[("flinks-auth-key", &token)], nomfa.clone()).await.0, 200);
    // Its session is open: the token cannot open a second one.
    let again = api.post_with(AUTHORIZE, &[("flinks-auth-key", &token)], nomfa.clone()).await;
    assert_error(&again, 401, "UNAUTHORIZED");
    assert_message_names(&again, "You must provide a valid authorize token");

    // The token that opened a challenged session carries every answer of that RequestId.
    let opening = mint(&api, "s3cret").await;
    let three = json!({"Institution": "FlinksCapital", "Username": "greatday_three_rounds", "Password": "Everyday", "MostRecentCached": false});
    let mut reply = api.post_with(AUTHORIZE, &[("flinks-auth-key", &opening)], three.clone()).await;
    let user = user("greatday_three_rounds");
    let opened = request_id(&reply);
    let mut rounds = 0;
    while reply.0 == 203 {
        rounds += 1;
        let answer = json!({"RequestId": opened, "SecurityResponses": answers_for(&user, &reply.1)});
        assert_error(&api.post(AUTHORIZE, answer.clone()).await, 401, "UNAUTHORIZED");
        reply = api.post_with(AUTHORIZE, &[("flinks-auth-key", &opening)], answer).await;
    }
    assert_eq!((rounds, reply.0), (3, 200), "{}", reply.1);

    // A fresh token per call (what bankfeed's client sends) is good for the answers too.
    let other = api.post_with(AUTHORIZE, &[("flinks-auth-key", &mint(&api, "s3cret").await)], three.clone()).await;
    assert_eq!(other.0, 203);
    let answer = json!({"RequestId": request_id(&other), "SecurityResponses": answers_for(&user, &other.1)});
    assert_eq!(api.post_with(AUTHORIZE, &[("flinks-auth-key", &mint(&api, "s3cret").await)], answer).await.0, 203);

    // But the token of one session does not carry the answers of another.
    let answer = json!({"RequestId": request_id(&other), "SecurityResponses": {"What is the best country on earth?": ["Canada"]}});
    let borrowed = api.post_with(AUTHORIZE, &[("flinks-auth-key", &opening)], answer).await;
    assert_error(&borrowed, 401, "UNAUTHORIZED");
    assert_message_names(&borrowed, "opened another session");
}

#[tokio::test]
async fn without_a_secret_key_tokens_are_optional() {
    let api = Api::unkeyed(SandboxConfig { secret_key: None, api_key: None, ..SandboxConfig::default() });
    let token = api.send_url(reqwest::Method::POST, api.url(TOKEN), &[], None).await;
    assert_eq!(token.0, 200);
    assert!(token.1["Token"].is_string());
    assert_eq!(api.credentials("greatday_nomfa", false).await.0, 200);
    let with_token = api
        .post_with(AUTHORIZE, &[("flinks-auth-key", token.1["Token"].as_str().unwrap())], json!({
            "Institution": "FlinksCapital", "Username": "greatday_nomfa", "Password": "Everyday", "MostRecentCached": false,
        }))
        .await;
    assert_eq!(with_token.0, 200);
}

#[tokio::test]
async fn a_token_is_refused_after_its_lifetime_also_by_its_sessions_answers() {
    let api = Api::unkeyed(SandboxConfig {
        secret_key: Some("s3cret".into()),
        api_key: None,
        // Wide margins: a fresh token is used well within its second, a stale one well after.
        token_ttl: Duration::from_secs(1),
        ..SandboxConfig::default()
    });
    let nomfa = json!({"Institution": "FlinksCapital", "Username": "greatday_nomfa", "Password": "Everyday", "MostRecentCached": false});
    let three = json!({"Institution": "FlinksCapital", "Username": "greatday_three_rounds", "Password": "Everyday", "MostRecentCached": false});
    let stale = mint(&api, "s3cret").await;
    let opening = mint(&api, "s3cret").await;
    let challenged = api.post_with(AUTHORIZE, &[("flinks-auth-key", &opening)], three).await;
    assert_eq!(challenged.0, 203);
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let reply = api.post_with(AUTHORIZE, &[("flinks-auth-key", &stale)], nomfa.clone()).await;
    assert_error(&reply, 401, "UNAUTHORIZED");
    assert_message_names(&reply, "older than");
    let answer = json!({"RequestId": request_id(&challenged), "SecurityResponses": answers_for(&user("greatday_three_rounds"), &challenged.1)});
    assert_error(
        &api.post_with(AUTHORIZE, &[("flinks-auth-key", &opening)], answer.clone()).await,
        401,
        "UNAUTHORIZED",
    );
    assert_eq!(api.post_with(AUTHORIZE, &[("flinks-auth-key", &mint(&api, "s3cret").await)], answer).await.0, 203);
    assert_eq!(api.post_with(AUTHORIZE, &[("flinks-auth-key", &mint(&api, "s3cret").await)], nomfa).await.0, 200);
}

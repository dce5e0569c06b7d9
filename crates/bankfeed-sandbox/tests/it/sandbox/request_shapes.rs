//! The request shapes real clients send (docs/protocol.md#request-shapes-real-clients-send).

use super::*;

/// The status and JSON body of `request`.
async fn sent(request: reqwest::RequestBuilder) -> Reply {
    let response = request.send().await.expect("request sent");
    let status = response.status().as_u16();
    (status, serde_json::from_slice(&response.bytes().await.expect("body")).expect("a JSON body"))
}

#[tokio::test]
async fn empty_fields_and_cached_beside_credentials_are_a_live_login() {
    let api = Api::new();
    for extra in [
        json!({"ScheduleRefresh": ""}),
        json!({"LoginId": ""}),
        json!({"LoginId": "  ", "MostRecentCached": true}),
        json!({"MostRecentCached": true}),
        json!({"MostRecentCached": "true", "ScheduleRefresh": "", "Save": ""}),
    ] {
        let mut body = json!({"Institution": "FlinksCapital", "Username": "greatday_nomfa", "Password": "Everyday"});
        body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        let reply = api.authorize(body.clone()).await;
        assert_eq!(reply.0, 200, "{body}: {}", reply.1);
        assert_eq!(reply.1["Login"]["Username"], "greatday_nomfa", "{body}");
    }
    // A LoginId that is given still names a saved connection, whatever else comes.
    let unknown = json!({"LoginId": "4a0d5b8e-1c2d-4e3f-8a9b-0c1d2e3f4a5b", "MostRecentCached": true, "Username": "x"});
    assert_error(&api.authorize(unknown).await, 401, "INVALID_LOGIN");
}

#[tokio::test]
async fn the_test_password_is_read_in_any_case() {
    let api = Api::new();
    for password in ["Everyday", "everyday", "EVERYDAY", "EveryDay"] {
        let body = json!({"Institution": "FlinksCapital", "Username": "greatday_nomfa", "Password": password, "MostRecentCached": false});
        assert_eq!(api.authorize(body).await.0, 200, "{password}");
    }
    let wrong = json!({"Institution": "FlinksCapital", "Username": "greatday_nomfa", "Password": "Everydays", "MostRecentCached": false});
    assert_error(&api.authorize(wrong).await, 401, "INVALID_PASSWORD");
}

#[tokio::test]
async fn routes_and_the_customer_id_are_matched_in_any_case() {
    let api = Api::with(SandboxConfig { pending_polls: 0, ..SandboxConfig::default() });
    let base = format!("{}/V3/{}", api.sandbox.url(), api.sandbox.customer_id().to_ascii_uppercase());
    let body = json!({"Institution": "FlinksCapital", "Username": "greatday_nomfa", "Password": "Everyday", "MostRecentCached": false});
    let session = api
        .send_url(
            reqwest::Method::POST,
            format!("{base}/bankingservices/AUTHORIZE"),
            &[],
            Some(serde_json::to_vec(&body).unwrap()),
        )
        .await;
    assert_eq!(session.0, 200, "{}", session.1);
    let id = request_id(&session);
    let detail = json!({"RequestId": id});
    let posted = api
        .send_url(
            reqwest::Method::POST,
            format!("{base}/BankingServices/getaccountsdetail"),
            &[],
            Some(serde_json::to_vec(&detail).unwrap()),
        )
        .await;
    assert_eq!(posted.0, 200, "{}", posted.1);
    let polled = api
        .send_url(reqwest::Method::GET, format!("{base}/bankingservices/GetAccountsDetailASYNC/{id}"), &[], None)
        .await;
    assert_eq!(polled.0, 200, "{}", polled.1);
    // The path the request log keeps is the one the operation is known by.
    let logged = api.sandbox.requests();
    assert!(
        logged.iter().any(|r| r.path.ends_with(&format!("/BankingServices/GetAccountsDetailAsync/{id}"))),
        "{logged:?}"
    );
}

#[tokio::test]
async fn a_body_without_the_json_content_type_is_refused_naming_the_header() {
    let api = Api::new();
    let body = serde_json::to_vec(
        &json!({"Institution": "FlinksCapital", "Username": "greatday_nomfa", "Password": "Everyday"}),
    )
    .unwrap();
    let token = api.token().await;
    let post = || api.http.post(api.url(AUTHORIZE)).header("flinks-auth-key", token.clone()).body(body.clone());
    let missing = sent(post()).await;
    assert_error(&missing, 401, "INVALID_REQUEST");
    assert_message_names(&missing, "Content-Type");
    let plain = sent(
        api.http
            .post(api.url(AUTHORIZE))
            .header("flinks-auth-key", api.token().await)
            .header("content-type", "text/plain")
            .body(body.clone()),
    )
    .await;
    assert_error(&plain, 401, "INVALID_REQUEST");
    assert_message_names(&plain, "\"text/plain\"");
    for media in ["application/json; charset=utf-8", "Application/JSON", "text/json"] {
        let reply = sent(
            api.http
                .post(api.url(AUTHORIZE))
                .header("flinks-auth-key", api.token().await)
                .header("content-type", media)
                .body(body.clone()),
        )
        .await;
        assert_eq!(reply.0, 200, "{media}: {}", reply.1);
    }
    // The token call takes no body, so it needs no Content-Type.
    let minted = sent(api.http.post(api.url(TOKEN)).header("flinks-auth-key", api.sandbox.secret_key().unwrap())).await;
    assert_eq!(minted.0, 200, "{}", minted.1);
}

#[tokio::test]
async fn greatday_asks_one_of_its_questions_per_login_picked_with_the_seed() {
    let prompts = |seed: u64| async move {
        let api = Api::with(SandboxConfig { seed, ..SandboxConfig::default() });
        let mut asked = Vec::new();
        for _ in 0..12 {
            let reply = api.credentials("Greatday", false).await;
            assert_eq!(reply.0, 203);
            let round = challenges(&reply.1);
            assert_eq!(round.len(), 1, "one question: {}", reply.1);
            asked.push(round[0]["Prompt"].as_str().unwrap().to_owned());
            // One round: its answer opens the session.
            let done = api.answer(&request_id(&reply), answers_for(&user("Greatday"), &reply.1)).await;
            assert_eq!(done.0, 200, "{}", done.1);
        }
        asked
    };
    let first = prompts(7).await;
    assert_eq!(first, prompts(7).await, "the same seed asks the same questions in the same order");
    assert_eq!(first.iter().collect::<HashSet<_>>().len(), 3, "each of the three comes up: {first:?}");
    assert_ne!(first, prompts(8).await, "another seed, another order");
}

#[tokio::test]
async fn greatday_asks_again_when_the_answers_are_empty() {
    let api = Api::new();
    let challenged = api.credentials("Greatday", false).await;
    let id = request_id(&challenged);
    let prompt = challenges(&challenged.1)[0]["Prompt"].as_str().unwrap().to_owned();
    for empty in
        [json!({}), json!({prompt.clone(): []}), json!({prompt.clone(): [""]}), json!({prompt.clone(): ["  "]})]
    {
        let again = api.answer(&id, empty.clone()).await;
        assert_eq!(again.0, 203, "{empty}: {}", again.1);
        assert_eq!(request_id(&again), id);
        assert_eq!(challenges(&again.1)[0]["Prompt"], prompt.as_str(), "the same question");
    }
    assert_error(&api.answer(&id, json!({prompt.clone(): ["Nowhere"]})).await, 401, "INVALID_SECURITY_RESPONSE");
    assert_eq!(api.answer(&id, answers_for(&user("Greatday"), &challenged.1)).await.0, 200);
}

#[tokio::test]
async fn greatday_three_rounds_keeps_the_three_rounds_flow() {
    let api = Api::new();
    let mut reply = api.credentials("greatday_three_rounds", false).await;
    let mut prompts = Vec::new();
    while reply.0 == 203 {
        prompts.push(challenges(&reply.1)[0]["Prompt"].as_str().unwrap().to_owned());
        // Empty answers are no answers here: the round is incomplete.
        assert_error(&api.answer(&request_id(&reply), json!({})).await, 401, "SECURITYRESPONSES_INCOMPLETE");
        reply = api.answer(&request_id(&reply), answers_for(&user("greatday_three_rounds"), &reply.1)).await;
    }
    assert_eq!(reply.0, 200);
    assert_eq!(
        prompts,
        ["What city were you born in?", "What is the best country on earth?", "What shape do people like most?"]
    );
}

#[tokio::test]
async fn invalid_request_has_the_newest_documented_status() {
    let api = Api::new();
    let missing = api.authorize(json!({"Institution": "FlinksCapital", "Username": "greatday_nomfa"})).await;
    assert_error(&missing, 401, "INVALID_REQUEST");
    assert_message_names(&missing, "Password");
    let not_json = api.raw(reqwest::Method::POST, AUTHORIZE, &[], Some(b"{".to_vec())).await;
    assert_error(&not_json, 401, "INVALID_REQUEST");
}

#[tokio::test]
async fn unknown_routes_and_methods_get_the_frameworks_answer_not_an_invented_code() {
    let api = Api::new();
    let unknown = api.post("BankingServices/NoSuchOperation", json!({})).await;
    assert_eq!(unknown.0, 404);
    assert!(unknown.1["FlinksCode"].is_null(), "{}", unknown.1);
    assert!(unknown.1["Message"].as_str().unwrap().contains("/BankingServices/NoSuchOperation"), "{}", unknown.1);
    let method = api.get(AUTHORIZE).await;
    assert_eq!(method.0, 405);
    assert!(method.1["FlinksCode"].is_null(), "{}", method.1);
    assert!(method.1["Message"].as_str().unwrap().contains("'GET'"), "{}", method.1);
}

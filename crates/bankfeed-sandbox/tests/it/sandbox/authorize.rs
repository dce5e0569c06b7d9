//! Authorize for every user of the table, with credentials: rounds, errors, the body's forms.

use super::*;

#[tokio::test]
async fn every_user_behaves_as_its_table_entry_says() {
    let api = Api::new();
    for user in users() {
        let reply = api.credentials(user.username, true).await;
        match user.username {
            "test_disabled_account" => assert_error(&reply, 401, "DISABLED_LOGIN"),
            "test_service_unavailable" => assert_error(&reply, 401, "RETRY_LATER"),
            "mfa_trusted_device" | "greatday_nomfa" => assert_eq!(reply.0, 200, "{}", reply.1),
            _ => {
                // The types the table lists are the types the server asks, in order.
                let mut seen = Vec::new();
                let mut reply = reply;
                while reply.0 == 203 {
                    seen.extend(challenges(&reply.1).iter().map(|c| c["Type"].as_str().unwrap().to_owned()));
                    reply = api.answer(&request_id(&reply), answers_for(&user, &reply.1)).await;
                }
                assert_eq!(reply.0, 200, "{}: {}", user.username, reply.1);
                assert_eq!(seen, user.challenge_types, "{}", user.username);
                assert_eq!(reply.1["Login"]["Username"], user.username);
            }
        }
    }
}

#[tokio::test]
async fn greatday_three_rounds_asks_one_question_per_round_and_opens_the_session() {
    let api = Api::new();
    let first = api.credentials("greatday_three_rounds", false).await;
    assert_eq!(first.0, 203);
    let id = request_id(&first);
    assert_eq!(
        first.1,
        json!({
            "HttpStatusCode": 203,
            "Links": [{"rel": "Authorization", "href": "/Authorize", "example": null}],
            "SecurityChallenges": [{"Type": "QuestionAndAnswer", "Prompt": "What city were you born in?"}],
            "InstitutionName": "FlinksCapital",
            "InstitutionId": 14,
            "Institution": "FlinksCapital",
            "RequestId": id,
        })
    );
    // Answers are trimmed and compared without case.
    let second = api.answer(&id, json!({"What city were you born in?": ["  montreal "]})).await;
    assert_eq!((second.0, request_id(&second)), (203, id.clone()));
    assert_eq!(prompts(&second.1), ["What is the best country on earth?"]);
    let third = api.answer(&id, json!({"What is the best country on earth?": ["CANADA"]})).await;
    assert_eq!(prompts(&third.1), ["What shape do people like most?"]);
    let done = api.answer(&id, json!({"What shape do people like most?": ["Triangle"]})).await;
    assert_eq!(done.0, 200);
    let login = login_id(&done.1);
    assert_eq!(
        done.1,
        json!({
            "Links": [
                {"rel": "AccountsDetail", "href": "/GetAccountsDetail", "example": null},
                {"rel": "AccountsSummary", "href": "/GetAccountsSummary", "example": null},
                {"rel": "Statements", "href": "/GetStatements", "example": null},
            ],
            "HttpStatusCode": 200,
            "Login": {
                "Username": "greatday_three_rounds",
                "IsScheduledRefresh": false,
                "LastRefresh": "2026-11-20T08:15:42.1234567",
                "Type": "Personal",
                "Id": login,
            },
            "InstitutionName": "FlinksCapital",
            "InstitutionId": 14,
            "Institution": "FlinksCapital",
            "RequestId": id,
        })
    );
    uuid::Uuid::parse_str(&login).expect("LoginId is a GUID");
    uuid::Uuid::parse_str(&id).expect("RequestId is a GUID");
}

#[tokio::test]
async fn nomfa_opens_at_once_keeps_its_login_id_and_echoes_the_tag() {
    let api = Api::new();
    let first = api.credentials("greatday_nomfa", false).await;
    assert_eq!(first.0, 200);
    assert!(first.1.get("Tag").is_none());
    let second = api
        .authorize(json!({
            "Institution": "FlinksCapital", "Username": "greatday_nomfa", "Password": "Everyday",
            "MostRecentCached": false, "Tag": "customer-42", "Language": "fr", "ScheduleRefresh": false,
        }))
        .await;
    assert_eq!(second.0, 200);
    assert_eq!(second.1["Tag"], "customer-42");
    assert_eq!(login_id(&first.1), login_id(&second.1), "one LoginId per username");
    assert_ne!(request_id(&first), request_id(&second), "a new RequestId per session");
    let other = api.login("Greatday", false).await;
    assert_ne!(login_id(&other), login_id(&first.1));

    // The Tag is echoed through the challenge rounds too.
    let tagged = api
        .authorize(json!({
            "Institution": "FlinksCapital", "Username": "mfa_securid", "Password": "Everyday",
            "MostRecentCached": false, "Tag": {"batch": 7},
        }))
        .await;
    assert_eq!((tagged.0, &tagged.1["Tag"]), (203, &json!({"batch": 7})));
    let done = api.complete("mfa_securid", tagged).await;
    assert_eq!(done["Tag"], json!({"batch": 7}));
}

#[tokio::test]
async fn credential_errors() {
    let api = Api::new();
    let base = json!({"Institution": "FlinksCapital", "Username": "Greatday", "Password": "Everyday", "MostRecentCached": false});
    let without = |field: &str| {
        let mut body = base.clone();
        body.as_object_mut().unwrap().remove(field);
        body
    };
    for field in ["Institution", "Username", "Password"] {
        let reply = api.authorize(without(field)).await;
        assert_error(&reply, 401, "INVALID_REQUEST");
        assert_message_names(&reply, field);
    }
    let mut body = base.clone();
    body["Institution"] = json!("OtherBank");
    let reply = api.authorize(body).await;
    assert_error(&reply, 401, "INVALID_REQUEST");
    assert_message_names(&reply, "unknown institution");

    let mut body = base.clone();
    body["Institution"] = json!("flinkscapital");
    assert_eq!(api.authorize(body).await.0, 203, "the institution is matched without case");

    let mut body = base.clone();
    body["Username"] = json!("nobody");
    assert_error(&api.authorize(body).await, 401, "INVALID_USERNAME");

    let mut body = base.clone();
    body["Password"] = json!("Someday");
    assert_error(&api.authorize(body).await, 401, "INVALID_PASSWORD");

    // MostRecentCached true beside credentials is a live login, as clients send it
    // (docs/protocol.md#request-shapes-real-clients-send).
    let mut body = base.clone();
    body["MostRecentCached"] = json!(true);
    assert_eq!(api.authorize(body).await.0, 203);

    let mut body = base.clone();
    body["Save"] = json!("maybe");
    let reply = api.authorize(body).await;
    assert_error(&reply, 401, "INVALID_REQUEST");
    assert_message_names(&reply, "Save");
}

#[tokio::test]
async fn bodies_that_are_not_json_objects_are_rejected() {
    let api = Api::new();
    for body in [&b"[1,2]"[..], b"\"text\"", b"{not json", b"", b"null"] {
        let reply = api.raw(reqwest::Method::POST, AUTHORIZE, &[], Some(body.to_vec())).await;
        assert_error(&reply, 401, "INVALID_REQUEST");
        let reply = api.raw(reqwest::Method::POST, INVESTMENTS, &[], Some(body.to_vec())).await;
        assert_error(&reply, 401, "INVALID_REQUEST");
    }
}

#[tokio::test]
async fn keys_are_case_insensitive_and_true_may_be_a_string() {
    let api = Api::new();
    let reply = api
        .authorize(json!({
            "INSTITUTION": "FlinksCapital", "username": "greatday_nomfa", "passWORD": "Everyday",
            "mostrecentcached": "False", "save": "TRUE",
        }))
        .await;
    assert_eq!(reply.0, 200, "{}", reply.1);
    let login = login_id(&reply.1);
    // Saved, since "TRUE" counted as true: a cached read works.
    let cached = api.authorize(json!({"loginid": login, "MOSTRECENTCACHED": "true"})).await;
    assert_eq!(cached.0, 200, "{}", cached.1);
    assert_eq!(login_id(&cached.1), login);

    let challenge = api.credentials("greatday_three_rounds", false).await;
    let reply = api
        .authorize(json!({"requestid": request_id(&challenge), "securityresponses": {"What city were you born in?": ["Montreal"]}}))
        .await;
    assert_eq!(reply.0, 203, "{}", reply.1);

    let session = api.login("greatday_nomfa", false).await;
    let (codes, done) = {
        let body =
            json!({"loginId": login_id(&session), "REQUESTID": session["RequestId"], "mostRecentCached": "TRUE"});
        let first = api.post(INVESTMENTS, body.clone()).await;
        (first.1["FlinksCode"].clone(), api.post(INVESTMENTS, body).await)
    };
    assert_eq!(codes, "OPERATION_PENDING");
    assert_eq!(done.0, 200);
}

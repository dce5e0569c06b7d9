//! The sandbox server, driven over real HTTP the way a client sees it.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use bankfeed_sandbox::{users, AuthorizeKind, Fault, FaultKind, Sandbox, SandboxConfig};
use base64::Engine as _;
use serde_json::{json, Value};

use crate::common::{answers_for, assert_error, assert_message_names, challenges, strings, user, Api, Reply};
use crate::common::{AUTHORIZE, INVESTMENTS, TOKEN};

impl Api {
    fn new() -> Api {
        Api::with(SandboxConfig::default())
    }

    async fn authorize(&self, body: Value) -> Reply {
        self.post(AUTHORIZE, body).await
    }

    async fn credentials(&self, username: &str, save: bool) -> Reply {
        self.authorize(json!({
            "Institution": "FlinksCapital",
            "Username": username,
            "Password": "Everyday",
            "MostRecentCached": false,
            "Save": save,
        }))
        .await
    }

    async fn answer(&self, request_id: &str, responses: Value) -> Reply {
        self.authorize(json!({"RequestId": request_id, "SecurityResponses": responses})).await
    }

    /// Answers 203s from the user's documented answers until the 200, which it returns.
    async fn complete(&self, username: &str, mut reply: Reply) -> Value {
        let user = user(username);
        let mut rounds = 0;
        while reply.0 == 203 {
            rounds += 1;
            assert!(rounds <= 5, "{username}: too many rounds");
            let request_id = reply.1["RequestId"].as_str().unwrap().to_owned();
            reply = self.answer(&request_id, answers_for(&user, &reply.1)).await;
            if reply.0 == 200 {
                assert_eq!(reply.1["RequestId"], request_id.as_str(), "the RequestId carries on through the rounds");
            }
        }
        assert_eq!(reply.0, 200, "{username}: {}", reply.1);
        reply.1
    }

    async fn login(&self, username: &str, save: bool) -> Value {
        let reply = self.credentials(username, save).await;
        self.complete(username, reply).await
    }

    async fn investments(&self, login_id: &str, request_id: &str) -> Reply {
        self.post(INVESTMENTS, json!({"LoginId": login_id, "RequestId": request_id, "MostRecentCached": true})).await
    }

    /// Polls Investments until it stops answering 202; returns the 202 codes seen and the last reply.
    async fn poll_investments(&self, login_id: &str, request_id: &str) -> (Vec<String>, Reply) {
        let mut codes = Vec::new();
        loop {
            let reply = self.investments(login_id, request_id).await;
            if reply.0 != 202 {
                return (codes, reply);
            }
            assert_eq!(reply.1["HttpStatusCode"], 202);
            assert_eq!(reply.1["Message"], "Your operation is still processing");
            assert_eq!(reply.1["RequestId"], request_id);
            assert_eq!(reply.1["Links"], json!([]));
            codes.push(reply.1["FlinksCode"].as_str().unwrap().to_owned());
            assert!(codes.len() < 50, "pending forever");
        }
    }
}

fn prompts(reply: &Value) -> Vec<&str> {
    challenges(reply).iter().map(|challenge| challenge["Prompt"].as_str().unwrap()).collect()
}

fn request_id(reply: &Reply) -> String {
    reply.1["RequestId"].as_str().unwrap_or_else(|| panic!("no RequestId in {}", reply.1)).to_owned()
}

fn login_id(body: &Value) -> String {
    body["Login"]["Id"].as_str().unwrap().to_owned()
}

// ---- the public surface --------------------------------------------------------------------

#[test]
fn sandbox_is_send_and_sync_and_defaults_match_the_public_instance() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Sandbox>();
    let config = SandboxConfig::default();
    assert_eq!(config.customer_id, "43387ca6-0391-4c82-857d-70d95f087ecb");
    assert_eq!(config.host.to_string(), "127.0.0.1");
    assert_eq!((config.port, config.pending_polls, config.slow_pending_polls), (0, 1, 5));
    assert!(config.pending_seconds.abs() < f64::EPSILON);
    assert_eq!(config.session_ttl, Duration::from_secs(480));
    assert_eq!(config.token_ttl, Duration::from_secs(30 * 60));
    // The keys the public test instance publishes, on by default.
    assert!(config.auth);
    assert_eq!(config.secret_key.as_deref(), Some("c4569c54-e167-4d34-8de6-f4113bc82414"));
    assert_eq!(config.api_key.as_deref(), Some("3d5266a8-b697-48d4-8de6-52e2e2662acc"));
    assert_eq!(config.header_read_timeout, Duration::from_secs(10));
    assert_eq!(config.request_read_timeout, Duration::from_secs(30));
    assert_eq!(config.idle_timeout, Duration::from_secs(30));
    assert_eq!(config.max_connections, 1024);
}

#[test]
fn users_are_listed_documented_ones_first() {
    let names: Vec<&str> = users().iter().map(|user| user.username).collect();
    assert_eq!(
        names,
        [
            "Greatday",
            "greatday_nomfa",
            "test_disabled_account",
            "test_service_unavailable",
            "test_pending",
            "test_dispatched",
            "greatday_three_rounds",
            "mfa_three_questions",
            "mfa_image",
            "mfa_securid",
            "mfa_multiple_choice",
            "mfa_multiple_answers",
            "mfa_text_or_call",
            "mfa_trusted_device",
            "mfa_reset_questions",
        ]
    );
    for user in users().into_iter().filter(|user| user.username != "Greatday") {
        assert_eq!(user.password, "Everyday");
        assert!(!user.description.is_empty());
        assert_eq!(user.answers.len(), user.challenge_types.len(), "{}", user.username);
    }
    // Greatday is asked one of its three questions per login, and any of the three may come.
    assert_eq!(user("Greatday").challenge_types, ["QuestionAndAnswer"]);
    assert_eq!(user("Greatday").answers, user("greatday_three_rounds").answers);
    assert_eq!(user("greatday_three_rounds").challenge_types, ["QuestionAndAnswer"; 3]);
    assert_eq!(user("mfa_trusted_device").challenge_types, ["WaitUntilEUAccept"]);
    assert!(user("mfa_trusted_device").description.contains("MostRecentCached false"));
    assert_eq!(user("mfa_text_or_call").answers[0], ("(514) 555-0101".to_owned(), vec!["Text".to_owned()]));
    let reset = user("mfa_reset_questions");
    let questions: HashSet<&str> = reset.answers[2..].iter().map(|(_, answer)| answer[0].as_str()).collect();
    assert_eq!(questions.len(), 3, "the sample reset answers pick different questions");
    assert!(user("greatday_nomfa").challenge_types.is_empty());
}

#[tokio::test]
async fn url_addr_and_stop() {
    let api = Api::new();
    let url = api.sandbox.url();
    assert_eq!(url, format!("http://127.0.0.1:{}", api.sandbox.addr().port()));
    assert!(!url.ends_with('/'));
    assert_ne!(api.sandbox.addr().port(), 0);
    assert_eq!(api.credentials("greatday_nomfa", false).await.0, 200);
    let started = Instant::now();
    api.sandbox.stop();
    assert!(started.elapsed() < Duration::from_secs(3), "stop took {:?}", started.elapsed());
    let after = api.http.post(format!("{url}/v3/x/Investments")).send().await;
    assert!(after.is_err(), "the server still answers after stop");
}

#[tokio::test]
async fn serve_runs_on_a_given_listener_until_shutdown() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    // Without keys: the test is about serving, and writes its request by hand.
    let config = SandboxConfig { customer_id: "my-customer".into(), auth: false, ..SandboxConfig::default() };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(bankfeed_sandbox::serve(listener, config, async {
        let _ = stopped.await;
    }));
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::builder().build().unwrap();
    let reply = http
        .post(format!("http://{addr}/v3/my-customer/BankingServices/Authorize"))
        .header("content-type", "application/json")
        .body(r#"{"Institution":"FlinksCapital","Username":"greatday_nomfa","Password":"Everyday","MostRecentCached":false}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status().as_u16(), 200);
    drop(http);
    stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(10), server).await.unwrap().unwrap().unwrap();
}

// ---- every user ----------------------------------------------------------------------------

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

// ---- cached and saved connections ----------------------------------------------------------

#[tokio::test]
async fn cached_reads_need_a_saved_connection() {
    let api = Api::new();
    let unsaved = api.login("Greatday", false).await;
    let login = login_id(&unsaved);
    assert_error(&api.authorize(json!({"LoginId": login, "MostRecentCached": true})).await, 401, "INVALID_LOGIN");

    let saved = api.login("Greatday", true).await;
    assert_eq!(login_id(&saved), login, "same user, same LoginId");
    let cached = api.authorize(json!({"LoginId": login, "MostRecentCached": true})).await;
    assert_eq!(cached.0, 200);
    assert_eq!(cached.1["Login"]["Id"], login.as_str());
    assert_eq!(cached.1["Login"]["Username"], "Greatday");
    assert_ne!(request_id(&cached), saved["RequestId"].as_str().unwrap());
    // LoginIds are GUIDs: the case they come in does not matter.
    let upper = api.authorize(json!({"LoginId": login.to_uppercase(), "MostRecentCached": true})).await;
    assert_eq!(upper.0, 200);
    // A later unsaved login does not forget the saved connection.
    api.login("Greatday", false).await;
    assert_eq!(api.authorize(json!({"LoginId": login, "MostRecentCached": true})).await.0, 200);

    let unknown = uuid::Uuid::new_v4().to_string();
    assert_error(&api.authorize(json!({"LoginId": unknown, "MostRecentCached": true})).await, 401, "INVALID_LOGIN");
    assert_error(&api.authorize(json!({"LoginId": unknown, "MostRecentCached": false})).await, 401, "INVALID_LOGIN");
}

#[tokio::test]
async fn live_login_by_saved_connection_runs_the_users_own_flow() {
    let api = Api::new();
    let saved = api.login("Greatday", true).await;
    let login = login_id(&saved);
    let live = api.authorize(json!({"LoginId": login, "MostRecentCached": false, "Save": true})).await;
    assert_eq!(live.0, 203);
    assert_eq!(prompts(&live.1), ["What city were you born in?"]);
    let done = api.complete("Greatday", live).await;
    assert_eq!(login_id(&done), login);

    let nomfa = api.login("greatday_nomfa", true).await;
    let live = api.authorize(json!({"LoginId": login_id(&nomfa), "MostRecentCached": false})).await;
    assert_eq!(live.0, 200);
    assert_eq!(login_id(&live.1), login_id(&nomfa));
}

#[tokio::test]
async fn trusted_device_confirms_on_the_saved_connection_call() {
    let api = Api::new();
    let first = api.credentials("mfa_trusted_device", true).await;
    assert_eq!(first.0, 200, "no challenge with credentials");
    let login = login_id(&first.1);
    let live = api.authorize(json!({"LoginId": login, "MostRecentCached": false})).await;
    assert_eq!(live.0, 203);
    let id = request_id(&live);
    assert_eq!(
        live.1["SecurityChallenges"],
        json!([{"Type": "WaitUntilEUAccept", "Prompt": "Confirm this sign-in on your trusted device, then continue"}])
    );
    let prompt = "Confirm this sign-in on your trusted device, then continue";
    assert_error(&api.answer(&id, json!({prompt: ["NOT YET"]})).await, 401, "INVALID_SECURITY_RESPONSE");
    let done = api.answer(&id, json!({prompt: ["VERIFIED"]})).await;
    assert_eq!(done.0, 200);
    assert_eq!(login_id(&done.1), login);
    assert_eq!(request_id(&done), id);
}

// ---- answering challenges ------------------------------------------------------------------

#[tokio::test]
async fn answer_errors() {
    let api = Api::new();
    let unknown = uuid::Uuid::new_v4().to_string();
    let reply = api.answer(&unknown, json!({"What city were you born in?": ["Montreal"]})).await;
    assert_error(&reply, 400, "SESSION_NONEXISTENT");
    assert!(reply.1.get("RequestId").is_none(), "an unknown RequestId is not echoed");

    let reply = api.authorize(json!({"RequestId": unknown})).await;
    assert_error(&reply, 401, "INVALID_REQUEST");
    assert_message_names(&reply, "SecurityResponses");

    let challenge = api.credentials("mfa_three_questions", false).await;
    let id = request_id(&challenge);
    let reply =
        api.answer(&id, json!({"What city were you born in?": ["Montreal"], "What is your name?": ["Bob"]})).await;
    assert_error(&reply, 401, "UNKNOWN_CHALLENGE_KEY");
    assert_message_names(&reply, "What is your name?");
    assert_eq!(reply.1["RequestId"], id.as_str());

    // Prompts are keys verbatim: a re-cased prompt is not one.
    let reply = api
        .answer(&id, json!({"what city were you born in?": ["Montreal"], "What is the best country on earth?": ["Canada"], "What shape do people like most?": ["Triangle"]}))
        .await;
    assert_error(&reply, 401, "UNKNOWN_CHALLENGE_KEY");

    let reply = api
        .answer(
            &id,
            json!({"What city were you born in?": ["Montreal"], "What is the best country on earth?": ["Canada"]}),
        )
        .await;
    assert_error(&reply, 401, "SECURITYRESPONSES_INCOMPLETE");
    assert_message_names(&reply, "What shape do people like most?");
    assert_eq!(reply.1["RequestId"], id.as_str());

    let all = |shape: &str| json!({"What city were you born in?": ["Montreal"], "What is the best country on earth?": ["Canada"], "What shape do people like most?": [shape]});
    let reply = api.answer(&id, all("Circle")).await;
    assert_error(&reply, 401, "INVALID_SECURITY_RESPONSE");
    assert_eq!(reply.1["RequestId"], id.as_str());
    let reply = api.answer(&id, json!({"What city were you born in?": "Montreal", "What is the best country on earth?": ["Canada"], "What shape do people like most?": ["Triangle"]})).await;
    assert_error(&reply, 401, "INVALID_REQUEST");
    // The challenge stays pending after a wrong answer: try again.
    let done = api.answer(&id, all("triangle")).await;
    assert_eq!(done.0, 200, "{}", done.1);

    assert_error(&api.answer(&id, all("Triangle")).await, 400, "ALREADY_AUTHORIZED");
    let cached = api.login("greatday_nomfa", false).await;
    let reply = api.answer(cached["RequestId"].as_str().unwrap(), json!({"x": ["y"]})).await;
    assert_error(&reply, 400, "ALREADY_AUTHORIZED");
    assert_eq!(reply.1["RequestId"], cached["RequestId"]);
}

#[tokio::test]
async fn three_questions_come_in_one_round() {
    let api = Api::new();
    let reply = api.credentials("mfa_three_questions", false).await;
    assert_eq!(reply.0, 203);
    assert_eq!(
        prompts(&reply.1),
        ["What city were you born in?", "What is the best country on earth?", "What shape do people like most?"]
    );
    assert!(challenges(&reply.1).iter().all(|c| c["Type"] == "QuestionAndAnswer" && c.get("Iterables").is_none()));
    let done = api.complete("mfa_three_questions", reply).await;
    assert_eq!(done["HttpStatusCode"], 200);
}

#[tokio::test]
async fn securid_code_comes_before_the_question() {
    let api = Api::new();
    let first = api.credentials("mfa_securid", false).await;
    let id = request_id(&first);
    assert_eq!(prompts(&first.1), ["Enter the 6-digit security code from your SecurID token"]);
    let code = "Enter the 6-digit security code from your SecurID token";
    assert_error(&api.answer(&id, json!({code: ["654321"]})).await, 401, "INVALID_SECURITY_RESPONSE");
    let second = api.answer(&id, json!({code: ["123456"]})).await;
    assert_eq!(prompts(&second.1), ["What city were you born in?"]);
    assert_eq!(api.answer(&id, json!({"What city were you born in?": ["Montreal"]})).await.0, 200);
}

/// A sandbox that takes any number of wrong answers on one RequestId, so a test can try every
/// wrong shape of an answer in turn (the default ends the session at the third).
fn patient_api() -> Api {
    Api::with(SandboxConfig { max_wrong_answers: u32::MAX, ..SandboxConfig::default() })
}

#[tokio::test]
async fn multiple_choice_takes_exactly_the_right_choice() {
    let api = patient_api();
    let first = api.credentials("mfa_multiple_choice", false).await;
    let id = request_id(&first);
    let prompt = "Which of these streets have you lived on?";
    assert_eq!(
        first.1["SecurityChallenges"],
        json!([{"Type": "MultipleChoice", "Prompt": prompt,
                "Iterables": ["Rue Sherbrooke", "Maple Avenue", "Elm Street", "None of the above"]}])
    );
    for wrong in [json!(["Elm Street"]), json!(["Maple Avenue", "Elm Street"]), json!(["Main Street"]), json!([])] {
        assert_error(&api.answer(&id, json!({prompt: wrong})).await, 401, "INVALID_SECURITY_RESPONSE");
    }
    assert_eq!(api.answer(&id, json!({prompt: ["Maple Avenue"]})).await.0, 200);
}

#[tokio::test]
async fn multiple_answers_must_match_as_a_set() {
    let api = patient_api();
    let first = api.credentials("mfa_multiple_answers", false).await;
    let id = request_id(&first);
    let prompt = "Which of these cards do you hold?";
    let challenge = &challenges(&first.1)[0];
    assert_eq!(challenge["Type"], "MultipleChoiceMultipleAnswers");
    assert_eq!(strings(&challenge["Iterables"]), ["Visa Infinite", "Mastercard World", "Amex Gold", "Visa Classic"]);
    for wrong in [
        json!(["Visa Infinite"]),
        json!(["Visa Infinite", "Amex Gold", "Visa Classic"]),
        json!(["Amex Gold", "Visa Classic"]),
    ] {
        assert_error(&api.answer(&id, json!({prompt: wrong})).await, 401, "INVALID_SECURITY_RESPONSE");
    }
    assert_eq!(api.answer(&id, json!({prompt: ["Amex Gold", "Visa Infinite"]})).await.0, 200);
}

#[tokio::test]
async fn text_or_call_is_keyed_by_the_chosen_number() {
    let api = patient_api();
    let prompt = "How would you like to receive your security code?";
    for (choice, how) in [("(514) 555-0101", "Text"), ("(438) 555-0199", "Call"), ("(438) 555-0199", "text")] {
        let first = api.credentials("mfa_text_or_call", false).await;
        let id = request_id(&first);
        assert_eq!(
            first.1["SecurityChallenges"],
            json!([{"Type": "TextOrCall", "Prompt": prompt, "Iterables": ["(514) 555-0101", "(438) 555-0199"]}])
        );
        let reply = api.answer(&id, json!({prompt: ["Text"]})).await;
        assert_error(&reply, 401, "UNKNOWN_CHALLENGE_KEY");
        assert_message_names(&reply, prompt);
        assert_error(&api.answer(&id, json!({choice: ["Email"]})).await, 401, "INVALID_SECURITY_RESPONSE");
        assert_error(
            &api.answer(&id, json!({"(514) 555-0101": ["Text"], "(438) 555-0199": ["Call"]})).await,
            401,
            "INVALID_SECURITY_RESPONSE",
        );
        let second = api.answer(&id, json!({choice: [how]})).await;
        assert_eq!(second.0, 203);
        assert_eq!(prompts(&second.1), ["Enter the security code we sent you"]);
        assert_eq!(challenges(&second.1)[0]["Type"], "QuestionAndAnswer");
        assert_error(
            &api.answer(&id, json!({"Enter the security code we sent you": ["123456"]})).await,
            401,
            "INVALID_SECURITY_RESPONSE",
        );
        assert_eq!(api.answer(&id, json!({"Enter the security code we sent you": ["654321"]})).await.0, 200);
    }
}

#[tokio::test]
async fn reset_questions_take_a_question_and_an_answer_each() {
    let api = patient_api();
    let first = api.credentials("mfa_reset_questions", false).await;
    let id = request_id(&first);
    let round1 = challenges(&first.1);
    assert_eq!(round1.len(), 2);
    assert!(round1.iter().all(|c| c["Type"] == "MultipleChoice" && strings(&c["Iterables"]).len() == 4));
    assert_eq!(strings(&round1[1]["Iterables"]), ["1998", "2003", "2010", "2015"]);
    let branch = "Which bank branch did you open your first account at?";
    let year = "What year did you open your first account?";
    assert_eq!(prompts(&first.1), [branch, year]);
    let right_branch = user("mfa_reset_questions").answers[0].1.clone();
    assert_error(
        &api.answer(&id, json!({branch: right_branch, year: ["1998"]})).await,
        401,
        "INVALID_SECURITY_RESPONSE",
    );
    let second = api.answer(&id, json!({branch: right_branch, year: ["2003"]})).await;
    assert_eq!(second.0, 203, "{}", second.1);
    assert_eq!(prompts(&second.1), ["New security question 1", "New security question 2", "New security question 3"]);
    let questions = strings(&challenges(&second.1)[0]["Iterables"]);
    assert_eq!(questions.len(), 5);
    for challenge in challenges(&second.1) {
        assert_eq!(challenge["Type"], "QuestionAndAnswer");
        assert_eq!(strings(&challenge["Iterables"]), questions);
    }
    let with = |third: Value| {
        json!({
            "New security question 1": [questions[0], "Rex"],
            "New security question 2": [questions[1], "Civic"],
            "New security question 3": third,
        })
    };
    for wrong in [json!(["What is your favourite colour?", "Blue"]), json!([questions[2], "  "]), json!([questions[2]])]
    {
        assert_error(&api.answer(&id, with(wrong)).await, 401, "INVALID_SECURITY_RESPONSE");
    }
    assert_eq!(api.answer(&id, with(json!([questions[3], "Sainte-Anne"]))).await.0, 200);
}

#[tokio::test]
async fn image_selection_sends_16_real_png_images() {
    let api = Api::new();
    let first = api.credentials("mfa_image", false).await;
    let id = request_id(&first);
    assert_eq!(prompts(&first.1), ["What city were you born in?"]);
    let second = api.answer(&id, json!({"What city were you born in?": ["Montreal"]})).await;
    assert_eq!(second.0, 203);
    let challenge = &challenges(&second.1)[0];
    assert_eq!(challenge["Type"], "ImageSelection");
    assert_eq!(challenge["Prompt"], "Select your personal image");
    let images = strings(&challenge["Iterables"]);
    assert_eq!(images.len(), 16);
    let mut pixels = HashSet::new();
    for image in &images {
        assert!((3_500..=4_500).contains(&image.len()), "about 4,000 characters, got {}", image.len());
        let bytes = base64::engine::general_purpose::STANDARD.decode(image).expect("base64");
        let decoded = decode_png(&bytes);
        assert!(decoded.iter().collect::<HashSet<_>>().len() >= 2, "an image with a pattern, not a flat colour");
        assert!(pixels.insert(decoded), "every image looks different");
    }
    // The same images every time.
    let again = api.credentials("mfa_image", false).await;
    let again = api.answer(&request_id(&again), json!({"What city were you born in?": ["Montreal"]})).await;
    assert_eq!(strings(&challenges(&again.1)[0]["Iterables"]), images);
    assert_eq!(user("mfa_image").answers[1].1, [images[7].clone()]);

    let prompt = "Select your personal image";
    assert_error(&api.answer(&id, json!({prompt: [images[6]]})).await, 401, "INVALID_SECURITY_RESPONSE");
    let done = api.answer(&id, json!({prompt: [images[7]]})).await;
    assert_eq!(done.0, 200);
}

/// A strict decoder for what the sandbox makes: 8-bit RGB, stored deflate blocks. Checks every
/// CRC and the Adler-32, returns the pixels.
fn decode_png(bytes: &[u8]) -> Vec<[u8; 3]> {
    fn crc32(data: &[u8]) -> u32 {
        let mut crc = 0xffff_ffffu32;
        for &byte in data {
            crc ^= u32::from(byte);
            for _ in 0..8 {
                crc = if crc & 1 == 1 { (crc >> 1) ^ 0xedb8_8320 } else { crc >> 1 };
            }
        }
        !crc
    }
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    let (mut at, mut width, mut height, mut idat, mut ended) = (8, 0, 0, Vec::new(), false);
    while at < bytes.len() {
        let len = be(&bytes[at..]) as usize;
        let kind = &bytes[at + 4..at + 8];
        let data = &bytes[at + 8..at + 8 + len];
        assert_eq!(be(&bytes[at + 8 + len..]), crc32(&bytes[at + 4..at + 8 + len]), "CRC of {kind:?}");
        match kind {
            b"IHDR" => {
                width = be(data) as usize;
                height = be(&data[4..]) as usize;
                assert_eq!(&data[8..], [8, 2, 0, 0, 0], "8-bit RGB");
            }
            b"IDAT" => idat.extend_from_slice(data),
            b"IEND" => ended = true,
            _ => {}
        }
        at += 12 + len;
    }
    assert!(ended && width > 0 && height > 0);
    assert_eq!((u16::from(idat[0]) << 8 | u16::from(idat[1])) % 31, 0, "zlib header check");
    let mut raw = Vec::new();
    let mut at = 2;
    loop {
        let header = idat[at];
        assert_eq!(header & 0b110, 0, "stored block");
        let len = u16::from_le_bytes([idat[at + 1], idat[at + 2]]);
        let nlen = u16::from_le_bytes([idat[at + 3], idat[at + 4]]);
        assert_eq!(len, !nlen);
        raw.extend_from_slice(&idat[at + 5..at + 5 + len as usize]);
        at += 5 + len as usize;
        if header & 1 == 1 {
            break;
        }
    }
    let (mut a, mut b) = (1u32, 0u32);
    for &byte in &raw {
        a = (a + u32::from(byte)) % 65_521;
        b = (b + a) % 65_521;
    }
    assert_eq!(be(&idat[at..]), (b << 16) | a, "Adler-32");
    assert_eq!(raw.len(), height * (1 + 3 * width));
    raw.chunks(1 + 3 * width)
        .flat_map(|row| {
            assert_eq!(row[0], 0, "filter None");
            row[1..].chunks(3).map(|p| [p[0], p[1], p[2]]).collect::<Vec<_>>()
        })
        .collect()
}

// ---- investments ---------------------------------------------------------------------------

#[tokio::test]
async fn investments_answer_202_once_then_a_consistent_portfolio() {
    let api = Api::new();
    let session = api.login("Greatday", true).await;
    let (login, id) = (login_id(&session), session["RequestId"].as_str().unwrap().to_owned());
    let (codes, reply) = api.poll_investments(&login, &id).await;
    assert_eq!(codes, ["OPERATION_PENDING"]);
    assert_eq!(reply.0, 200, "{}", reply.1);
    let body = &reply.1;
    assert_eq!(body["HttpStatusCode"], 200);
    assert_eq!(body["RequestId"], id.as_str());
    assert_eq!(body["Institution"], json!({"Id": 14, "Name": "FlinksCapital"}));
    assert_eq!(body["Login"]["Type"], Value::Null);
    assert_eq!(body["Login"]["Id"], login.as_str());
    assert_eq!(body["Login"]["Username"], "Greatday");

    let accounts = body["Accounts"].as_array().unwrap();
    let securities = body["Securities"].as_array().unwrap();
    assert!((2..=4).contains(&accounts.len()));
    assert!(!securities.is_empty());
    let security_ids: HashSet<&str> = securities.iter().map(|s| s["Id"].as_str().unwrap()).collect();
    assert!(securities.iter().any(|s| s.get("CUSIP").is_none()), "one Security without CUSIP");
    assert!(securities.iter().any(|s| s.get("ISIN") == Some(&Value::Null)), "one Security with ISIN null");
    for security in securities {
        for field in ["Name", "Symbol", "Type", "Currency"] {
            assert!(security[field].is_string(), "{field}");
        }
        assert!(security["Price"].is_number() && security["Aliases"].is_array());
        let date = security["Date"].as_str().unwrap();
        assert!(date.ends_with('Z') && date.split('.').nth(1).unwrap().len() == 8, "7 fractional digits: {date}");
    }

    let cents = |value: &Value| (value.as_f64().unwrap() * 100.0).round() as i64;
    let (mut value, mut cash, mut buys, mut sells) = (0, 0, 0, 0);
    for account in accounts {
        uuid::Uuid::parse_str(account["Id"].as_str().unwrap()).unwrap();
        let kind = account["Type"].as_str().unwrap();
        assert!(["cash", "margin", "tfsa", "rrsp"].contains(&kind), "{kind}");
        assert_eq!(account["Registered"], kind == "tfsa" || kind == "rrsp");
        let full = account["FullAccountId"].as_str().unwrap();
        assert!(full.contains(':') && full.contains('-') && full.contains(account["AccountId"].as_str().unwrap()));
        let positions = account["Positions"].as_array().unwrap();
        let market: i64 = positions.iter().map(|p| cents(&p["MarketValue"])).sum();
        assert_eq!(cents(&account["AccountValue"]), cents(&account["Cash"]) + market);
        assert_eq!(account["CurrencyValue"], account["AccountValue"]);
        for position in positions {
            assert!(security_ids.contains(position["SecurityId"].as_str().unwrap()));
            assert_eq!(position["Class"], "equity");
            let gain = cents(&position["MarketValue"]) - cents(&position["BookValue"]);
            assert_eq!(cents(&position["GainAmount"]), gain);
            let percent = position["GainPercent"].as_f64().unwrap();
            assert!((percent - gain as f64 / cents(&position["BookValue"]) as f64).abs() < 0.0001);
        }
        for transaction in account["Transactions"].as_array().unwrap() {
            assert!(security_ids.contains(transaction["SecurityId"].as_str().unwrap()));
            let quantity = transaction["Quantity"].as_f64().unwrap();
            let amount = transaction["Amount"].as_f64().unwrap();
            match transaction["Type"].as_str().unwrap() {
                "buy" => {
                    assert!(quantity > 0.0 && amount < 0.0);
                    buys += 1;
                }
                "sell" => {
                    assert!(quantity < 0.0 && amount > 0.0);
                    sells += 1;
                }
                other => panic!("unexpected type {other}"),
            }
            assert_eq!(transaction["Date"].as_str().unwrap().len(), 10);
        }
        value += cents(&account["AccountValue"]);
        cash += cents(&account["Cash"]);
    }
    assert_eq!(cents(&body["Value"]), value);
    assert_eq!(cents(&body["Cash"]), cash);
    assert!(buys >= 2 && sells >= 1, "{buys} buys, {sells} sells");

    // Once done, it stays done; a new session (RequestId) has its own pending phase.
    assert_eq!(api.investments(&login, &id).await.0, 200);
    let cached = api.authorize(json!({"LoginId": login, "MostRecentCached": true})).await;
    let (codes, reply) = api.poll_investments(&login, &request_id(&cached)).await;
    assert_eq!((codes.len(), reply.0), (1, 200));
    assert_eq!(reply.1["Accounts"], body["Accounts"], "the same portfolio every time");
}

#[tokio::test]
async fn pending_polls_is_configurable() {
    for polls in [0, 3] {
        let api = Api::with(SandboxConfig { pending_polls: polls, ..SandboxConfig::default() });
        let session = api.login("greatday_nomfa", false).await;
        let (codes, reply) = api.poll_investments(&login_id(&session), session["RequestId"].as_str().unwrap()).await;
        assert_eq!(codes.len(), polls as usize);
        assert_eq!(reply.0, 200);
    }
}

#[tokio::test]
async fn pending_seconds_keep_answering_202_until_they_pass() {
    let api = Api::with(SandboxConfig { pending_polls: 0, pending_seconds: 0.3, ..SandboxConfig::default() });
    let session = api.login("greatday_nomfa", false).await;
    let (login, id) = (login_id(&session), session["RequestId"].as_str().unwrap().to_owned());
    let started = Instant::now();
    assert_eq!(api.investments(&login, &id).await.0, 202);
    assert_eq!(api.investments(&login, &id).await.0, 202);
    tokio::time::sleep(Duration::from_millis(350)).await;
    assert_eq!(api.investments(&login, &id).await.0, 200);
    assert!(started.elapsed() >= Duration::from_millis(300));
}

#[tokio::test]
async fn slow_users_stay_pending_longer_with_their_own_code() {
    let api = Api::with(SandboxConfig { slow_pending_polls: 4, ..SandboxConfig::default() });
    for (username, code) in [("test_pending", "OPERATION_PENDING"), ("test_dispatched", "OPERATION_DISPATCHED")] {
        let session = api.login(username, false).await;
        let (codes, reply) = api.poll_investments(&login_id(&session), session["RequestId"].as_str().unwrap()).await;
        assert_eq!(codes, [code; 4], "{username}");
        assert_eq!(reply.0, 200);
    }
}

#[tokio::test]
async fn investments_errors() {
    let api = Api::new();
    let session = api.login("greatday_nomfa", false).await;
    let (login, id) = (login_id(&session), session["RequestId"].as_str().unwrap().to_owned());

    let reply = api.investments(&login, &uuid::Uuid::new_v4().to_string()).await;
    assert_error(&reply, 400, "SESSION_NONEXISTENT");

    // A RequestId still at its challenges is known, but not authorized (docs/sandbox.md#documented-failures).
    let challenged = api.credentials("Greatday", false).await;
    let reply = api.investments(&login, &request_id(&challenged)).await;
    assert_error(&reply, 401, "UNAUTHORIZED");
    assert_eq!(reply.1["RequestId"], request_id(&challenged).as_str());

    let reply = api.investments(&uuid::Uuid::new_v4().to_string(), &id).await;
    assert_error(&reply, 401, "INVALID_REQUEST");
    assert_eq!(reply.1["RequestId"], id.as_str());

    for (field, body) in [("RequestId", json!({"LoginId": login})), ("LoginId", json!({"RequestId": id}))] {
        let reply = api.post(INVESTMENTS, body).await;
        assert_error(&reply, 401, "INVALID_REQUEST");
        assert_message_names(&reply, field);
    }
    // The failures above did not use up the pending phase.
    let (codes, reply) = api.poll_investments(&login, &id).await;
    assert_eq!((codes.len(), reply.0), (1, 200));
}

#[tokio::test]
async fn investments_need_the_api_key_when_configured() {
    let api = Api::unkeyed(SandboxConfig {
        secret_key: None,
        api_key: Some("k-123".into()),
        pending_polls: 0,
        ..SandboxConfig::default()
    });
    let session = api.login("greatday_nomfa", false).await;
    let body = json!({"LoginId": login_id(&session), "RequestId": session["RequestId"], "MostRecentCached": true});
    assert_error(&api.post(INVESTMENTS, body.clone()).await, 401, "UNAUTHORIZED");
    assert_error(&api.post_with(INVESTMENTS, &[("x-api-key", "wrong")], body.clone()).await, 401, "UNAUTHORIZED");
    assert_eq!(api.post_with(INVESTMENTS, &[("X-API-Key", "k-123")], body).await.0, 200);
}

// ---- tokens --------------------------------------------------------------------------------

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

// ---- sessions expire -----------------------------------------------------------------------

#[tokio::test]
async fn idle_sessions_expire() {
    let api = Api::with(SandboxConfig {
        // Wide margins (a third of the time to live between two calls): a loaded CI machine
        // must not expire a session the test keeps active.
        session_ttl: Duration::from_millis(900),
        pending_polls: 0,
        ..SandboxConfig::default()
    });
    let challenged = api.credentials("Greatday", false).await;
    let open = api.login("greatday_nomfa", false).await;
    let open_id = open["RequestId"].as_str().unwrap().to_owned();
    // Activity keeps a session alive.
    for _ in 0..3 {
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(api.investments(&login_id(&open), &open_id).await.0, 200);
    }
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    let reply = api.answer(&request_id(&challenged), json!({"What city were you born in?": ["Montreal"]})).await;
    assert_error(&reply, 400, "SESSION_EXPIRED");
    assert_eq!(reply.1["RequestId"], request_id(&challenged).as_str());
    let reply = api.investments(&login_id(&open), &open_id).await;
    assert_error(&reply, 400, "SESSION_EXPIRED");
    assert_eq!(reply.1["RequestId"], open_id.as_str());
}

// ---- routing and the request log -----------------------------------------------------------

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

// ---- connections: timeouts and limits (docs/sandbox.md#limits) ------------------------------
//
// Raw blocking sockets, so each test sees exactly what the server does on the wire.

/// A sandbox with short connection limits, so each test takes a second or two; without keys,
/// since these tests are about connections and write their requests by hand.
fn limited(header_read_timeout: Duration, idle_timeout: Duration, max_connections: usize) -> Sandbox {
    Sandbox::start(SandboxConfig {
        header_read_timeout,
        idle_timeout,
        max_connections,
        auth: false,
        ..SandboxConfig::default()
    })
    .unwrap()
}

fn connect(sandbox: &Sandbox) -> std::net::TcpStream {
    let stream = std::net::TcpStream::connect(sandbox.addr()).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    stream
}

/// A keep-alive Authorize of `greatday_nomfa`, which answers 200 at once.
fn nomfa_request(sandbox: &Sandbox) -> String {
    let body =
        r#"{"Institution":"FlinksCapital","Username":"greatday_nomfa","Password":"Everyday","MostRecentCached":false}"#;
    format!(
        "POST /v3/{}/{AUTHORIZE} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        sandbox.customer_id(),
        sandbox.addr(),
        body.len()
    )
}

/// Reads one answer (head and a Content-Length body) and returns its status and body.
fn read_answer(stream: &mut std::net::TcpStream) -> (u16, String) {
    use std::io::Read;
    // Byte-exact: the head a byte at a time, then exactly its body, so that an answer that came
    // in the same segment (to a pipelined request) is left on the stream for the next call.
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        let n = stream.read(&mut byte).expect("an answer");
        assert!(n > 0, "closed before an answer: {:?}", String::from_utf8_lossy(&head));
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).to_string();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    let length: usize = head
        .lines()
        .find_map(|line| line.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse().unwrap()))
        .unwrap_or_else(|| panic!("no Content-Length in {head:?}"));
    let mut body = vec![0u8; length];
    stream.read_exact(&mut body).expect("the whole body");
    (status, String::from_utf8_lossy(&body).to_string())
}

/// Waits for the server to close `stream` (end of stream or a reset), returning how long it
/// took; fails if it is still open after `limit`. Any bytes the server sends first are returned.
fn wait_closed(stream: &mut std::net::TcpStream, limit: Duration) -> (Duration, Vec<u8>) {
    use std::io::Read;
    let started = Instant::now();
    stream.set_read_timeout(Some(limit)).unwrap();
    let mut received = Vec::new();
    let mut chunk = [0u8; 1024];
    loop {
        match stream.read(&mut chunk) {
            Ok(0) => return (started.elapsed(), received),
            Ok(n) => received.extend_from_slice(&chunk[..n]),
            Err(error) if matches!(error.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                panic!("still open after {:?}; received {:?}", started.elapsed(), String::from_utf8_lossy(&received))
            }
            Err(_) => return (started.elapsed(), received),
        }
        assert!(started.elapsed() < limit, "still open after {limit:?}");
    }
}

#[test]
fn a_slowloris_is_closed_within_the_header_read_timeout() {
    use std::io::{Read, Write};
    let sandbox = limited(Duration::from_millis(600), Duration::from_secs(20), 16);
    let mut stream = connect(&sandbox);
    stream.set_read_timeout(Some(Duration::from_millis(100))).unwrap();
    let request = nomfa_request(&sandbox);
    let started = Instant::now();
    // One byte every 100 ms: each byte is progress, and still the head is never complete.
    let closed = request.as_bytes().iter().take(200).find_map(|byte| {
        if stream.write_all(&[*byte]).is_err() {
            return Some(started.elapsed());
        }
        match stream.read(&mut [0u8; 64]) {
            Ok(_) => Some(started.elapsed()),
            Err(error) if matches!(error.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => None,
            Err(_) => Some(started.elapsed()),
        }
    });
    let closed = closed.expect("the slow connection stayed open");
    assert!(closed >= Duration::from_millis(500), "closed too early, after {closed:?}");
    assert!(closed < Duration::from_millis(1500), "closed after {closed:?}");
    // The timer counts from the head's first byte, also on a connection that has served one.
    let mut stream = connect(&sandbox);
    stream.write_all(request.as_bytes()).unwrap();
    assert_eq!(read_answer(&mut stream).0, 200);
    stream.write_all(b"POST /v3/").unwrap();
    let (after, _) = wait_closed(&mut stream, Duration::from_secs(3));
    assert!(after < Duration::from_millis(1500), "closed after {after:?}");
    assert_eq!(sandbox.request_count(), 1);
}

#[test]
fn a_connection_that_sends_nothing_is_closed_after_the_header_read_timeout() {
    let sandbox = limited(Duration::from_millis(500), Duration::from_secs(20), 16);
    let mut stream = connect(&sandbox);
    let (after, received) = wait_closed(&mut stream, Duration::from_secs(3));
    assert!(after >= Duration::from_millis(400) && after < Duration::from_millis(1500), "closed after {after:?}");
    assert!(received.is_empty());
}

#[test]
fn an_idle_keep_alive_connection_is_closed_after_the_idle_timeout() {
    use std::io::Write;
    let sandbox = limited(Duration::from_secs(10), Duration::from_millis(700), 16);
    let mut stream = connect(&sandbox);
    let request = nomfa_request(&sandbox);
    stream.write_all(request.as_bytes()).unwrap();
    assert_eq!(read_answer(&mut stream).0, 200);
    // Reused within the idle timeout, the connection serves again.
    std::thread::sleep(Duration::from_millis(300));
    stream.write_all(request.as_bytes()).unwrap();
    assert_eq!(read_answer(&mut stream).0, 200);
    let (after, received) = wait_closed(&mut stream, Duration::from_secs(3));
    assert!(after >= Duration::from_millis(600) && after < Duration::from_millis(1700), "closed after {after:?}");
    assert!(received.is_empty(), "{:?}", String::from_utf8_lossy(&received));
    assert_eq!(sandbox.request_count(), 2);
}

#[test]
fn a_body_announced_and_not_sent_ends_within_the_idle_timeout() {
    use std::io::Write;
    let sandbox = limited(Duration::from_secs(10), Duration::from_millis(500), 16);
    let mut stream = connect(&sandbox);
    let head = format!(
        "POST /v3/{}/{AUTHORIZE} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{",
        sandbox.customer_id()
    );
    stream.write_all(head.as_bytes()).unwrap();
    let started = Instant::now();
    let (_, received) = wait_closed(&mut stream, Duration::from_secs(3));
    assert!(started.elapsed() < Duration::from_millis(1700), "took {:?}", started.elapsed());
    // A JSON 408 that says the connection closes: the rest of the body is not waited for.
    let (status, head, body) = answer_of(&received);
    assert_eq!(status, 408, "{head}");
    assert!(head.to_ascii_lowercase().contains("\r\nconnection: close\r\n"), "{head}");
    assert_eq!(body["HttpStatusCode"], 408, "{body}");
    assert_eq!(body["FlinksCode"], "REQUEST_TIMEOUT", "{body}");
    assert_eq!(body["Message"], "The request body stopped arriving for 0.5 s", "{body}");
}

/// The status, head and JSON body of an answer read whole by [`wait_closed`].
fn answer_of(received: &[u8]) -> (u16, String, Value) {
    let received = String::from_utf8_lossy(received);
    let (head, body) = received.split_once("\r\n\r\n").unwrap_or_else(|| panic!("no answer: {received:?}"));
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    let body = serde_json::from_str(body).unwrap_or_else(|error| panic!("{error}: {body:?}"));
    (status, head.to_owned(), body)
}

/// A sandbox whose requests must arrive whole within `request_read_timeout`; its other
/// timeouts are long enough to play no part. Without keys, as [`limited`].
fn bounded(request_read_timeout: Duration, max_connections: usize) -> Sandbox {
    Sandbox::start(SandboxConfig {
        auth: false,
        request_read_timeout,
        header_read_timeout: Duration::from_secs(20),
        idle_timeout: Duration::from_secs(20),
        max_connections,
        ..SandboxConfig::default()
    })
    .unwrap()
}

/// The head of an Authorize whose body of `length` bytes is still to come.
fn upload_head(sandbox: &Sandbox, length: usize) -> String {
    format!(
        "POST /v3/{}/{AUTHORIZE} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n\r\n",
        sandbox.customer_id()
    )
}

/// Sends `bytes` one at a time, every `pace`, until the server answers or closes: then returns
/// how long that took, counted from `started`, and all it sent. None when `stop` is set first.
fn dribble(
    stream: &mut std::net::TcpStream,
    bytes: &[u8],
    pace: Duration,
    started: Instant,
    stop: &std::sync::atomic::AtomicBool,
) -> Option<(Duration, Vec<u8>)> {
    use std::io::{Read, Write};
    stream.set_read_timeout(Some(pace)).unwrap();
    for byte in bytes {
        if stop.load(std::sync::atomic::Ordering::SeqCst) {
            return None;
        }
        let written = stream.write_all(&[*byte]);
        let mut chunk = [0u8; 1024];
        match stream.read(&mut chunk) {
            Ok(0) => return Some((started.elapsed(), Vec::new())),
            Ok(n) => {
                let after = started.elapsed();
                let (_, rest) = wait_closed(stream, Duration::from_secs(3));
                return Some((after, [&chunk[..n], &rest[..]].concat()));
            }
            Err(error) if matches!(error.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                assert!(written.is_ok(), "the server closed without a word: {written:?}");
            }
            Err(_) => return Some((started.elapsed(), Vec::new())),
        }
    }
    panic!("no answer after {} bytes", bytes.len())
}

#[test]
fn a_body_sent_a_byte_at_a_time_gets_a_408_within_the_request_read_timeout() {
    use std::io::Write;
    let sandbox = bounded(Duration::from_secs(1), 16);
    let mut stream = connect(&sandbox);
    let started = Instant::now();
    stream.write_all(upload_head(&sandbox, 10_000).as_bytes()).unwrap();
    // A byte every 100 ms: each one is progress, so the idle timeout (20 s) would never end it.
    let stop = std::sync::atomic::AtomicBool::new(false);
    let (after, received) =
        dribble(&mut stream, &[b' '; 200], Duration::from_millis(100), started, &stop).expect("an answer");
    assert!(after >= Duration::from_millis(900) && after < Duration::from_secs(3), "answered after {after:?}");
    // The service's error envelope, and the connection closes: the rest is not waited for.
    let (status, head, body) = answer_of(&received);
    assert_eq!(status, 408, "{head}");
    assert!(head.to_ascii_lowercase().contains("\r\nconnection: close\r\n"), "{head}");
    assert_eq!(body["HttpStatusCode"], 408, "{body}");
    assert_eq!(body["FlinksCode"], "REQUEST_TIMEOUT", "{body}");
    assert_eq!(body["Message"], "The request was not received whole within 1 s of its first byte", "{body}");
    assert_eq!(sandbox.requests().last().map(|request| request.status), Some(408));
    // A request sent whole is served as before.
    let mut stream = connect(&sandbox);
    stream.write_all(nomfa_request(&sandbox).as_bytes()).unwrap();
    assert_eq!(read_answer(&mut stream).0, 200);
}

#[test]
fn a_head_sent_a_byte_at_a_time_is_cut_within_the_request_read_timeout() {
    // The header-read timeout is 20 s here: the bound of the whole request cuts the head first.
    let sandbox = bounded(Duration::from_secs(1), 16);
    let mut stream = connect(&sandbox);
    let stop = std::sync::atomic::AtomicBool::new(false);
    let request = nomfa_request(&sandbox);
    let (after, received) =
        dribble(&mut stream, request.as_bytes(), Duration::from_millis(100), Instant::now(), &stop).expect("a close");
    assert!(after >= Duration::from_millis(900) && after < Duration::from_secs(3), "closed after {after:?}");
    // No request was read, so there is none to answer, as for the header-read timeout.
    assert!(received.is_empty(), "{:?}", String::from_utf8_lossy(&received));
    assert_eq!(sandbox.request_count(), 0);
}

#[test]
fn with_every_connection_held_by_slow_uploads_a_normal_request_is_answered_at_once() {
    use std::io::Write;
    // The uploads would hold their places for 20 s, and each byte restarts their idle timeout.
    let sandbox = bounded(Duration::from_secs(20), 4);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let uploads: Vec<_> = (0..4)
        .map(|_| {
            let mut stream = connect(&sandbox);
            stream.write_all(upload_head(&sandbox, 10_000).as_bytes()).unwrap();
            let stop = std::sync::Arc::clone(&stop);
            std::thread::spawn(move || {
                dribble(&mut stream, &[b' '; 10_000], Duration::from_millis(200), Instant::now(), &stop)
            })
        })
        .collect();
    // Every place taken, for longer than the second a connection has to send its request.
    std::thread::sleep(Duration::from_millis(1_500));
    let started = Instant::now();
    let mut stream = connect(&sandbox);
    stream.write_all(nomfa_request(&sandbox).as_bytes()).unwrap();
    assert_eq!(read_answer(&mut stream).0, 200);
    let waited = started.elapsed();
    assert!(waited < Duration::from_secs(3), "answered after {waited:?}");
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    // One upload gave its place up, and was told why; the others were left alone.
    let cut: Vec<_> = uploads.into_iter().filter_map(|upload| upload.join().unwrap()).collect();
    assert_eq!(cut.len(), 1, "{cut:?}");
    let (status, _, body) = answer_of(&cut[0].1);
    assert_eq!((status, &body["FlinksCode"]), (408, &json!("REQUEST_TIMEOUT")), "{body}");
    assert!(body["Message"].as_str().unwrap().contains("every connection"), "{body}");
}

#[test]
fn past_max_connections_a_newcomer_takes_the_place_of_the_longest_idle_connection() {
    use std::io::Write;
    let sandbox = limited(Duration::from_secs(10), Duration::from_secs(30), 4);
    let mut idle: Vec<_> = (0..4).map(|_| connect(&sandbox)).collect();
    std::thread::sleep(Duration::from_millis(1_200));
    let started = Instant::now();
    let mut stream = connect(&sandbox);
    stream.write_all(nomfa_request(&sandbox).as_bytes()).unwrap();
    assert_eq!(read_answer(&mut stream).0, 200);
    assert!(started.elapsed() < Duration::from_secs(3), "answered after {:?}", started.elapsed());
    // The oldest gave its place up, closed without a word: it had sent no request.
    let (_, received) = wait_closed(&mut idle[0], Duration::from_secs(1));
    assert!(received.is_empty(), "{:?}", String::from_utf8_lossy(&received));
}

#[test]
fn stop_does_not_wait_for_a_place_to_free() {
    let sandbox = limited(Duration::from_secs(10), Duration::from_secs(30), 1);
    let _holder = connect(&sandbox);
    // Accepted, and waiting for the one place: its holder is within its second of grace.
    let mut waiting = connect(&sandbox);
    std::thread::sleep(Duration::from_millis(200));
    let started = Instant::now();
    sandbox.stop();
    assert!(started.elapsed() < Duration::from_secs(2), "stop took {:?}", started.elapsed());
    let (_, received) = wait_closed(&mut waiting, Duration::from_secs(1));
    assert!(received.is_empty(), "{:?}", String::from_utf8_lossy(&received));
}

#[test]
fn a_request_being_answered_keeps_its_place() {
    use std::io::Write;
    let sandbox = limited(Duration::from_secs(10), Duration::from_secs(30), 2);
    let slow = Fault {
        operation: Some("Authorize".into()),
        times: Some(2),
        ..Fault::new(FaultKind::Latency { seconds: 2.5 })
    };
    sandbox.inject([slow]);
    // Both places held by requests that take 2.5 s to answer: neither may be cut.
    let answering: Vec<_> = (0..2)
        .map(|_| {
            let mut stream = connect(&sandbox);
            stream.write_all(nomfa_request(&sandbox).as_bytes()).unwrap();
            stream
        })
        .collect();
    std::thread::sleep(Duration::from_millis(1_500));
    let started = Instant::now();
    let mut stream = connect(&sandbox);
    stream.write_all(nomfa_request(&sandbox).as_bytes()).unwrap();
    assert_eq!(read_answer(&mut stream).0, 200);
    assert!(started.elapsed() >= Duration::from_millis(800), "answered after {:?}", started.elapsed());
    for mut stream in answering {
        assert_eq!(read_answer(&mut stream).0, 200);
    }
}

/// Found by the fuzzing: the 404 of an unknown route answered before its body had arrived, and
/// the sandbox closed the connection without `Connection: close`, so the next request on it failed.
#[test]
fn a_request_after_an_unknown_route_with_a_body_is_served_on_the_same_connection() {
    use std::io::Write;
    let sandbox = limited(Duration::from_secs(10), Duration::from_secs(30), 16);
    let mut stream = connect(&sandbox);
    let body = format!(r#"{{"RequestId":"{}"}}"#, "x".repeat(256 * 1024));
    let head = format!(
        "POST /v3/{}/BankingServices/NoSuchOperation HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        sandbox.customer_id(),
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    // The head alone first, so the answer is ready before the body arrives.
    std::thread::sleep(Duration::from_millis(100));
    // The next request pipelined behind the body, before the answer is read.
    stream.write_all(body.as_bytes()).unwrap();
    stream.write_all(nomfa_request(&sandbox).as_bytes()).unwrap();
    let (status, answer) = read_answer(&mut stream);
    assert_eq!(status, 404, "{answer}");
    let answer: Value = serde_json::from_str(&answer).unwrap();
    assert!(answer["Message"].as_str().unwrap().contains("NoSuchOperation"), "{answer}");
    let (status, answer) = read_answer(&mut stream);
    assert_eq!(status, 200, "{answer}");
    assert_eq!(sandbox.request_count(), 2);
}

/// A body past the 2 MiB limit gets the JSON error envelope, not axum's plain-text 413, and the
/// connection carries the next request.
#[test]
fn a_body_over_the_limit_gets_a_json_413_and_the_connection_goes_on() {
    use std::io::Write;
    let sandbox = limited(Duration::from_secs(10), Duration::from_secs(30), 16);
    let mut stream = connect(&sandbox);
    let body = format!(r#"{{"Username":"{}"}}"#, "x".repeat(3 * 1024 * 1024));
    let head = format!(
        "POST /v3/{}/{AUTHORIZE} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        sandbox.customer_id(),
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    // The next request pipelined behind the body, before the answer is read.
    stream.write_all(body.as_bytes()).unwrap();
    stream.write_all(nomfa_request(&sandbox).as_bytes()).unwrap();
    let (status, answer) = read_answer(&mut stream);
    assert_eq!(status, 413, "{answer}");
    let answer: Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(answer["HttpStatusCode"], 413, "{answer}");
    assert_eq!(answer["FlinksCode"], "INVALID_REQUEST", "{answer}");
    assert!(answer["Message"].as_str().unwrap().contains("limit"), "{answer}");
    let (status, answer) = read_answer(&mut stream);
    assert_eq!(status, 200, "{answer}");
}

#[tokio::test]
async fn a_pooled_client_carries_on_after_the_server_closes_its_idle_connection() {
    // Without keys: the token calls would be requests of their own.
    let config = SandboxConfig { idle_timeout: Duration::from_millis(300), auth: false, ..SandboxConfig::default() };
    let api = Api::with(config);
    assert_eq!(api.credentials("greatday_nomfa", false).await.0, 200);
    tokio::time::sleep(Duration::from_millis(800)).await;
    // The pooled connection is gone; the client notices and opens another.
    assert_eq!(api.credentials("greatday_nomfa", false).await.0, 200);
    assert_eq!(api.sandbox.request_count(), 2);
}

#[test]
fn an_http2_preface_or_garbage_gets_an_error_or_a_close_at_once() {
    use std::io::Write;
    let sandbox = limited(Duration::from_secs(10), Duration::from_secs(30), 16);
    let inputs: [&[u8]; 4] = [
        b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
        b"PRI * HTTP/2.0\r\n\r\n",
        // The start of a TLS ClientHello.
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",
        b"\x00\x01\x02\x03\r\n\r\n",
    ];
    for input in &inputs[1..] {
        let mut stream = connect(&sandbox);
        stream.write_all(input).unwrap();
        let (after, received) = wait_closed(&mut stream, Duration::from_secs(2));
        assert!(after < Duration::from_secs(1), "{input:?}: closed after {after:?}");
        let answer = String::from_utf8_lossy(&received);
        assert!(answer.is_empty() || answer.starts_with("HTTP/1.1 400"), "{answer}");
    }
    // An HTTP/2 client is told to use HTTP/1.1 (an empty SETTINGS, then GOAWAY with
    // HTTP_1_1_REQUIRED); an HTTP/1 parser that meets the start of the preface gets 400.
    let mut stream = connect(&sandbox);
    stream.write_all(inputs[0]).unwrap();
    let refusal: &[u8] = &[0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 8, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xd];
    let (after, received) = wait_closed(&mut stream, Duration::from_secs(2));
    assert!(after < Duration::from_secs(1), "closed after {after:?}");
    assert_eq!(received, refusal);
    let mut stream = connect(&sandbox);
    stream.write_all(inputs[1]).unwrap();
    let (_, received) = wait_closed(&mut stream, Duration::from_secs(1));
    assert!(String::from_utf8_lossy(&received).starts_with("HTTP/1.1 400"), "{:?}", String::from_utf8_lossy(&received));
    assert_eq!(sandbox.request_count(), 0);
}

#[tokio::test]
async fn an_http2_client_is_told_to_use_http1() {
    let sandbox = limited(Duration::from_secs(10), Duration::from_secs(30), 16);
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::builder().http2_prior_knowledge().build().unwrap();
    let started = Instant::now();
    let error = http.get(format!("{}/v3/x", sandbox.url())).send().await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(1), "took {:?}", started.elapsed());
    let chain = std::iter::successors(Some(&error as &dyn std::error::Error), |error| error.source())
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(": ");
    assert!(chain.contains("HTTP/1.1"), "{chain}");
}

#[test]
fn hundreds_of_idle_connections_do_not_stop_a_real_request() {
    use std::io::Write;
    let sandbox = limited(Duration::from_secs(10), Duration::from_secs(30), 1024);
    let idle: Vec<_> = (0..300).map(|_| connect(&sandbox)).collect();
    let started = Instant::now();
    let mut stream = connect(&sandbox);
    stream.write_all(nomfa_request(&sandbox).as_bytes()).unwrap();
    assert_eq!(read_answer(&mut stream).0, 200);
    assert!(started.elapsed() < Duration::from_secs(2), "answered after {:?}", started.elapsed());
    drop(idle);
}

#[test]
fn past_max_connections_a_request_waits_until_idle_ones_time_out() {
    use std::io::Write;
    let sandbox = limited(Duration::from_millis(500), Duration::from_secs(30), 4);
    let idle: Vec<_> = (0..8).map(|_| connect(&sandbox)).collect();
    let started = Instant::now();
    let mut stream = connect(&sandbox);
    stream.write_all(nomfa_request(&sandbox).as_bytes()).unwrap();
    // The first four are accepted and time out after 500 ms, the next four after 1 s; then ours.
    assert_eq!(read_answer(&mut stream).0, 200);
    let waited = started.elapsed();
    assert!(waited >= Duration::from_millis(900) && waited < Duration::from_secs(4), "answered after {waited:?}");
    drop(idle);
}

#[test]
fn a_limit_of_zero_connections_still_serves_one_at_a_time() {
    use std::io::Write;
    let sandbox = limited(Duration::from_secs(10), Duration::from_secs(30), 0);
    for _ in 0..2 {
        let mut stream = connect(&sandbox);
        stream.write_all(nomfa_request(&sandbox).as_bytes()).unwrap();
        assert_eq!(read_answer(&mut stream).0, 200);
    }
}

#[test]
fn stop_does_not_wait_for_idle_connections() {
    use std::io::Write;
    let sandbox = limited(Duration::from_secs(10), Duration::from_secs(30), 16);
    let _idle: Vec<_> = (0..10).map(|_| connect(&sandbox)).collect();
    let mut stream = connect(&sandbox);
    stream.write_all(nomfa_request(&sandbox).as_bytes()).unwrap();
    assert_eq!(read_answer(&mut stream).0, 200);
    let started = Instant::now();
    sandbox.stop();
    assert!(started.elapsed() < Duration::from_secs(1), "stop took {:?}", started.elapsed());
    let (after, _) = wait_closed(&mut stream, Duration::from_secs(1));
    assert!(after < Duration::from_secs(1));
}

/// A body whose framing breaks (a chunk size that is not hex) cannot be read: the refusal is the
/// JSON error envelope made by the body extractor, not axum's plain-text 400, and says the
/// connection closes, since the rest of the stream cannot be told from a next request.
#[test]
fn a_body_that_cannot_be_read_gets_a_json_400() {
    use std::io::Write;
    let sandbox = limited(Duration::from_secs(10), Duration::from_secs(30), 16);
    let mut stream = connect(&sandbox);
    let head = format!(
        "POST /v3/{}/{AUTHORIZE} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{{}}\r\nzz\r\n",
        sandbox.customer_id()
    );
    stream.write_all(head.as_bytes()).unwrap();
    let (_, received) = wait_closed(&mut stream, Duration::from_secs(3));
    let (status, head, body) = answer_of(&received);
    assert_eq!(status, 400, "{head}");
    assert!(head.to_ascii_lowercase().contains("\r\nconnection: close\r\n"), "{head}");
    assert_eq!(body["HttpStatusCode"], 400, "{body}");
    assert_eq!(body["FlinksCode"], "INVALID_REQUEST", "{body}");
    assert!(body["Message"].as_str().unwrap().starts_with("Failed to buffer the request body"), "{body}");
}

// ---- request shapes that real clients send (docs/protocol.md#request-shapes-real-clients-send) --

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

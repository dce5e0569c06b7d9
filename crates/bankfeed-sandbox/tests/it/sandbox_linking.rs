//! The service's operations beyond the interface (docs/protocol.md#operations-beyond-the-interface):
//! each one public clients call is answered at its documented method and path, never with the
//! 404 of a path no operation has.

use bankfeed_sandbox::{Fault, FaultKind, SandboxConfig};
use reqwest::Method;
use serde_json::{json, Value};

use crate::common::{answers_for, assert_error, assert_message_names, user, Api, AUTHORIZE, DETAIL};

const LOGIN: &str = "5e115eac-1209-4f19-641c-08d6d484e2fe";
const REQUEST: &str = "006fd2f3-055b-4ef6-a9fc-c1261cd76ec6";

/// The operations the sandbox answers as not enabled for its customer, with a path and a body as
/// the public clients send them.
fn not_enabled() -> Vec<(&'static str, Method, String, Option<serde_json::Value>)> {
    vec![
        (
            "AuthorizeMultiple",
            Method::POST,
            "BankingServices/AuthorizeMultiple".to_owned(),
            Some(json!({"LoginIds": [LOGIN]})),
        ),
        ("GetCategorization", Method::GET, format!("categorization/login/{LOGIN}/requestid/{REQUEST}"), None),
    ]
}

#[tokio::test]
async fn operations_the_customer_lacks_are_refused_as_not_enabled_not_404() {
    let api = Api::with(SandboxConfig::default());
    for (name, method, path, body) in not_enabled() {
        let reply = api.send(method.clone(), &path, body.clone()).await;
        assert_error(&reply, 401, "ACCESS_DENIED");
        let message = reply.1["Message"].as_str().unwrap();
        assert!(message.contains(name) && message.contains("not enabled"), "{message}");
        // Without the API key, the key is what is refused first, as for every other operation.
        let unkeyed = Api::unkeyed(SandboxConfig::default());
        let reply = unkeyed.send(method, &path, body).await;
        assert_error(&reply, 401, "UNAUTHORIZED");
    }
}

#[tokio::test]
async fn a_fault_can_target_an_operation_beyond_the_interface() {
    let api = Api::with(SandboxConfig::default());
    let status = FaultKind::Status { status: 503, code: None, message: None, retry_after: None };
    api.sandbox.inject([Fault { operation: Some("GetNightlyRefreshStatus".to_owned()), ..Fault::new(status) }]);
    assert_eq!(api.get("BankingServices/GetNightlyRefreshStatus").await.0, 503);
    let secret = format!("Bearer {}", api.sandbox.secret_key().unwrap());
    let after = api
        .send_with(Method::GET, "BankingServices/GetNightlyRefreshStatus", &[("authorization", &secret)], None)
        .await;
    assert_eq!(after.0, 200, "{}", after.1);
}

const SET_SCHEDULED_REFRESH: &str = "BankingServices/SetScheduledRefresh";
const ANSWER_MFA_QUESTIONS: &str = "BankingServices/AnswerMFAQuestions";

fn credentials(username: &str) -> Value {
    json!({"Institution": "FlinksCapital", "Username": username, "Password": "Everyday", "MostRecentCached": false, "Save": true})
}

/// A saved connection of `username`, through its challenges: its LoginId.
async fn saved(api: &Api, username: &str, extra: Value) -> String {
    let mut body = credentials(username);
    body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    let mut reply = api.post(AUTHORIZE, body).await;
    while reply.0 == 203 {
        let answers = answers_for(&user(username), &reply.1);
        reply = api.post(AUTHORIZE, json!({"RequestId": reply.1["RequestId"], "SecurityResponses": answers})).await;
    }
    assert_eq!(reply.0, 200, "{}", reply.1);
    reply.1["Login"]["Id"].as_str().unwrap().to_owned()
}

async fn is_scheduled(api: &Api, login_id: &str) -> bool {
    let opened = api.cached(login_id).await;
    assert_eq!(opened.0, 200, "{}", opened.1);
    let detail = api.post(DETAIL, json!({"RequestId": opened.1["RequestId"]})).await;
    assert_eq!(detail.0, 200, "{}", detail.1);
    let scheduled = opened.1["Login"]["IsScheduledRefresh"].as_bool().unwrap();
    assert_eq!(detail.1["Login"]["IsScheduledRefresh"].as_bool(), Some(scheduled), "detail and Authorize agree");
    scheduled
}

#[tokio::test]
async fn set_scheduled_refresh_turns_the_nightly_refresh_on_and_off_as_the_answers_show() {
    let api = Api::with(SandboxConfig { pending_polls: 0, ..SandboxConfig::default() });
    let login_id = saved(&api, "greatday_nomfa", json!({})).await;
    assert!(!is_scheduled(&api, &login_id).await);

    let on =
        api.send(Method::PATCH, SET_SCHEDULED_REFRESH, Some(json!({"LoginId": login_id, "IsActivated": true}))).await;
    assert_eq!(on.0, 200, "{}", on.1);
    assert_eq!(on.1["HttpStatusCode"], 200);
    assert!(is_scheduled(&api, &login_id).await);
    // "false" as text is read as false, as every flag of the service.
    let off = api
        .send(Method::PATCH, SET_SCHEDULED_REFRESH, Some(json!({"loginId": login_id, "IsActivated": "false"})))
        .await;
    assert_eq!(off.0, 200, "{}", off.1);
    assert!(!is_scheduled(&api, &login_id).await);

    let unknown =
        api.send(Method::PATCH, SET_SCHEDULED_REFRESH, Some(json!({"LoginId": LOGIN, "IsActivated": true}))).await;
    assert_error(&unknown, 401, "INVALID_LOGIN");
    let missing = api.send(Method::PATCH, SET_SCHEDULED_REFRESH, Some(json!({"LoginId": login_id}))).await;
    assert_error(&missing, 401, "INVALID_REQUEST");
    assert_message_names(&missing, "IsActivated");
}

#[tokio::test]
async fn schedule_refresh_on_the_authorize_that_saves_a_login_turns_it_on() {
    let api = Api::with(SandboxConfig { pending_polls: 0, ..SandboxConfig::default() });
    let login_id = saved(&api, "greatday_nomfa", json!({"ScheduleRefresh": true})).await;
    assert!(is_scheduled(&api, &login_id).await);
    // Only a new login takes it: the docs send later changes through SetScheduledRefresh.
    let again = saved(&api, "greatday_nomfa", json!({"ScheduleRefresh": false})).await;
    assert_eq!(again, login_id);
    assert!(is_scheduled(&api, &login_id).await);
}

#[tokio::test]
async fn mfa_questions_are_listed_and_stored_answers_let_a_live_refresh_through() {
    let api = Api::with(SandboxConfig { pending_polls: 0, ..SandboxConfig::default() });
    let login_id = saved(&api, "greatday", json!({})).await;
    let listed = api.get(&format!("BankingServices/GetMFAQuestions/{login_id}")).await;
    assert_eq!(listed.0, 200, "{}", listed.1);
    assert_eq!(listed.1["Message"], "SUCCESS");
    let questions: Vec<&str> =
        listed.1["Questions"].as_array().unwrap().iter().map(|q| q["Question"].as_str().unwrap()).collect();
    let greatday = user("greatday");
    assert_eq!(questions.len(), greatday.answers.len());
    assert!(greatday.answers.iter().all(|(prompt, _)| questions.contains(&prompt.as_str())), "{questions:?}");

    // Without stored answers a live refresh asks.
    let live = json!({"LoginId": login_id, "MostRecentCached": false});
    assert_eq!(api.post(AUTHORIZE, live.clone()).await.0, 203);

    let unknown = json!({"LoginId": login_id, "Questions": [{"Question": "Favourite colour?", "Answer": "Blue"}]});
    let refused = api.send(Method::PATCH, ANSWER_MFA_QUESTIONS, Some(unknown)).await;
    assert_error(&refused, 401, "INVALID_REQUEST");
    assert_message_names(&refused, "Favourite colour?");
    let empty = json!({"LoginId": login_id, "Questions": [{"Question": questions[0], "Answer": ""}]});
    let refused = api.send(Method::PATCH, ANSWER_MFA_QUESTIONS, Some(empty)).await;
    assert_error(&refused, 401, "INVALID_REQUEST");
    assert_message_names(&refused, "Questions[0].Answer");

    let answers: Vec<Value> =
        greatday.answers.iter().map(|(question, answer)| json!({"Question": question, "Answer": answer[0]})).collect();
    let stored =
        api.send(Method::PATCH, ANSWER_MFA_QUESTIONS, Some(json!({"LoginId": login_id, "Questions": answers}))).await;
    assert_eq!(stored.0, 200, "{}", stored.1);
    assert_eq!(stored.1["Message"], "Answers updated");
    let opened = api.post(AUTHORIZE, live).await;
    assert_eq!(opened.0, 200, "a live refresh gives the stored answers itself: {}", opened.1);

    // The answers never reach the request log.
    let logged = api.sandbox.requests();
    let text = serde_json::to_string(&logged.iter().map(|entry| entry.body.clone()).collect::<Vec<_>>()).unwrap();
    assert!(!text.contains("Montreal") && !text.contains("Triangle"), "{text}");
    assert!(logged.iter().any(|entry| entry.operation == Some("AnswerMFAQuestions")));
}

#[tokio::test]
async fn linking_operations_name_a_saved_login() {
    let api = Api::with(SandboxConfig::default());
    assert_error(&api.get(&format!("BankingServices/GetMFAQuestions/{LOGIN}")).await, 401, "INVALID_LOGIN");
    let body = json!({"LoginId": LOGIN, "Questions": [{"Question": "q", "Answer": "a"}]});
    assert_error(&api.send(Method::PATCH, ANSWER_MFA_QUESTIONS, Some(body)).await, 401, "INVALID_LOGIN");
    let unkeyed = Api::unkeyed(SandboxConfig::default());
    let body = json!({"LoginId": LOGIN, "IsActivated": true});
    assert_error(&unkeyed.send(Method::PATCH, SET_SCHEDULED_REFRESH, Some(body)).await, 401, "UNAUTHORIZED");
}

#[tokio::test]
async fn nightly_refresh_status_lists_scheduled_logins_a_question_would_stop() {
    let api = Api::with(SandboxConfig { pending_polls: 0, ..SandboxConfig::default() });
    let status = "BankingServices/GetNightlyRefreshStatus";
    let secret = format!("Bearer {}", api.sandbox.secret_key().unwrap());
    let bearer = [("authorization", secret.as_str())];
    // It asks for the secret key, not the API key.
    assert_error(&api.get(status).await, 401, "UNAUTHORIZED");

    let quiet = saved(&api, "greatday_nomfa", json!({"ScheduleRefresh": true})).await;
    let asking = saved(&api, "greatday", json!({"ScheduleRefresh": true})).await;
    let listed = api.send_with(Method::GET, status, &bearer, None).await;
    assert_eq!(listed.0, 200, "{}", listed.1);
    let cards = listed.1["IneligibleCards"].as_array().unwrap();
    assert_eq!(cards.len(), 1, "{cards:?}");
    assert_eq!(cards[0]["LoginId"], asking.as_str());
    assert_eq!(cards[0]["LastRefreshState"], "AnsweringSecurityChallenge");
    assert!(cards[0]["LastRefreshErrorCode"].is_null());
    assert_ne!(asking, quiet);

    // Stored answers make it eligible.
    let answers: Vec<Value> = user("greatday")
        .answers
        .iter()
        .map(|(question, answer)| json!({"Question": question, "Answer": answer[0]}))
        .collect();
    let stored =
        api.send(Method::PATCH, ANSWER_MFA_QUESTIONS, Some(json!({"LoginId": asking, "Questions": answers}))).await;
    assert_eq!(stored.0, 200);
    let listed = api.send_with(Method::GET, status, &bearer, None).await;
    assert_eq!(listed.1["IneligibleCards"], json!([]));
}

#[tokio::test]
async fn institutions_are_listed_and_paged() {
    let api = Api::with(SandboxConfig::default());
    let listed = api.get("BankingServices/Institutions").await;
    assert_eq!(listed.0, 200, "{}", listed.1);
    assert_eq!(listed.1["Count"], 1);
    let institution = &listed.1["Data"][0];
    assert_eq!(institution["Id"], 14);
    assert_eq!(institution["Status"], "Enabled");
    assert_eq!(institution["Country"], "CA");
    assert_eq!(institution["Localizations"][0]["Name"], "FlinksCapital");
    let past = api.get("BankingServices/Institutions?skip=1&take=10").await;
    assert_eq!((past.1["Data"].clone(), past.1["Count"].clone()), (json!([]), json!(1)));
    let refused = api.get("BankingServices/Institutions?take=5000").await;
    assert_error(&refused, 401, "INVALID_REQUEST");
    assert_message_names(&refused, "take");
    let refused = api.get("BankingServices/Institutions?skip=-1").await;
    assert_message_names(&refused, "skip");
}

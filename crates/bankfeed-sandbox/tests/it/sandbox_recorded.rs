//! The sandbox answers in the shapes recorded at the service by default
//! (docs/sandbox.md#where-the-sandbox-differs-from-the-real-service): keys in the recorded order,
//! the template link of a 202, the summary and statements at once, the institution's fields,
//! LoginIds with a sequential tail, cached reads that may be asked a question, a 202 nobody polls
//! that ends when its processing would, every account in the statements, and DeleteCard right
//! after a new login refused for a while. The knobs that keep the former behaviour are tested
//! beside each.

use std::time::Duration;

use bankfeed_sandbox::{AsyncLinks, CachedChallenges, PendingOperations, SandboxConfig, CARD_IN_USE};
use serde_json::{json, Value};

use crate::common::{answers_for, assert_error, user, Api, Reply, AUTHORIZE, DETAIL, INSTITUTION, INVESTMENTS};
use crate::common::{STATEMENTS, SUMMARY};

/// The link of a banking operation's 202, as the service writes it.
fn template_link() -> Value {
    json!([{"rel": "{Endpoint}Async", "href": "/{Endpoint}Async", "example": "/{Endpoint}Async/{requestId}"}])
}

/// The keys of an answer, in the order they came.
fn keys(value: &Value) -> Vec<&str> {
    value.as_object().expect("an object").keys().map(String::as_str).collect()
}

/// The recorded order of the keys around a banking answer's own.
const AROUND: [&str; 5] = ["InstitutionName", "Login", "InstitutionId", "Institution", "RequestId"];

fn with_around<'a>(own: &[&'a str]) -> Vec<&'a str> {
    let mut all = vec!["HttpStatusCode"];
    all.extend_from_slice(own);
    all.extend_from_slice(&AROUND);
    all
}

fn credentials(username: &str) -> Value {
    json!({"Institution": INSTITUTION, "Username": username, "Password": "Everyday", "MostRecentCached": false,
           "Save": true})
}

/// Answers every 203 of `reply` with the user's documented answers; the last reply.
async fn answered(api: &Api, username: &str, mut reply: Reply) -> Reply {
    let user = user(username);
    while reply.0 == 203 {
        let responses = answers_for(&user, &reply.1);
        reply = api.post(AUTHORIZE, json!({"RequestId": reply.1["RequestId"], "SecurityResponses": responses})).await;
    }
    reply
}

/// A live login of `username` with `Save`, its challenges answered: the 200's body.
async fn saved(api: &Api, username: &str) -> Value {
    let reply = answered(api, username, api.post(AUTHORIZE, credentials(username)).await).await;
    assert_eq!(reply.0, 200, "{}", reply.1);
    reply.1
}

fn text(value: &Value) -> String {
    value.as_str().unwrap_or_else(|| panic!("not a string: {value}")).to_owned()
}

async fn delete(api: &Api, login_id: &str) -> Reply {
    api.send(reqwest::Method::DELETE, &format!("BankingServices/DeleteCard/{login_id}"), None).await
}

#[tokio::test]
async fn default_answers_have_the_recorded_keys_in_the_recorded_order() {
    let api = Api::with(SandboxConfig::default());
    let asked = api.post(AUTHORIZE, credentials("Greatday")).await;
    assert_eq!(asked.0, 203, "{}", asked.1);
    assert_eq!(
        keys(&asked.1),
        [
            "HttpStatusCode",
            "Links",
            "SecurityChallenges",
            "InstitutionName",
            "InstitutionId",
            "Institution",
            "RequestId"
        ]
    );
    assert_eq!((&asked.1["InstitutionName"], &asked.1["InstitutionId"]), (&json!(INSTITUTION), &json!(14)));

    let opened = answered(&api, "Greatday", asked).await;
    assert_eq!(opened.0, 200, "{}", opened.1);
    assert_eq!(keys(&opened.1), with_around(&["Links"]));
    assert_eq!(keys(&opened.1["Login"]), ["Username", "IsScheduledRefresh", "LastRefresh", "Type", "Id"]);
    let request_id = text(&opened.1["RequestId"]);
    let body = json!({"RequestId": request_id});

    // The summary and the statements answer at once, as recorded.
    let summary = api.post(SUMMARY, body.clone()).await;
    assert_eq!(summary.0, 200, "{}", summary.1);
    assert_eq!(keys(&summary.1), with_around(&["Accounts", "Links"]));
    let statements = api.post(STATEMENTS, body.clone()).await;
    assert_eq!(statements.0, 200, "{}", statements.1);
    assert_eq!(keys(&statements.1), with_around(&["StatementsByAccount"]));

    // Account detail answers 202 first, with the service's template link.
    let pending = api.post(DETAIL, body.clone()).await;
    assert_eq!(pending.0, 202, "{}", pending.1);
    assert_eq!(keys(&pending.1), ["FlinksCode", "Links", "HttpStatusCode", "Message", "RequestId"]);
    assert_eq!(pending.1["Links"], template_link());
    assert!(!pending.1.to_string().contains("GetAccountsDetailAsync"), "no concrete link: {}", pending.1);
    // The operation's own ...Async GET still serves it, as the clients build it.
    let detail = api.get(&format!("BankingServices/GetAccountsDetailAsync/{request_id}")).await;
    assert_eq!(detail.0, 200, "{}", detail.1);
    assert_eq!(keys(&detail.1), with_around(&["Accounts"]));

    // So does the same request repeated, on a new session.
    let cached = api.cached(&text(&opened.1["Login"]["Id"])).await;
    let again = json!({"RequestId": cached.1["RequestId"]});
    assert_eq!(api.post(DETAIL, again.clone()).await.0, 202);
    let repeated = api.post(DETAIL, again).await;
    assert_eq!(repeated.0, 200, "{}", repeated.1);
    assert_eq!(keys(&repeated.1), with_around(&["Accounts"]));

    // Investments still answer 202 first, and are repeated as they are (no link).
    let investments =
        api.post(INVESTMENTS, json!({"LoginId": opened.1["Login"]["Id"], "RequestId": cached.1["RequestId"]})).await;
    assert_eq!((investments.0, &investments.1["Links"]), (202, &json!([])));
}

#[tokio::test]
async fn async_links_concrete_keeps_the_operations_own_link() {
    let api = Api::with(SandboxConfig { async_links: AsyncLinks::Concrete, ..SandboxConfig::default() });
    let opened = saved(&api, "greatday_nomfa").await;
    let request_id = text(&opened["RequestId"]);
    let pending = api.post(DETAIL, json!({"RequestId": request_id})).await;
    assert_eq!(pending.0, 202);
    let rel = "GetAccountsDetailAsync";
    assert_eq!(
        pending.1["Links"],
        json!([{"rel": rel, "href": format!("/{rel}"), "example": format!("/{rel}/{request_id}")}])
    );
    assert_eq!(keys(&pending.1), ["FlinksCode", "Links", "HttpStatusCode", "Message", "RequestId"]);
    assert_eq!(api.get(&format!("BankingServices/{rel}/{request_id}")).await.0, 200);
}

#[tokio::test]
async fn pending_operations_say_which_data_operations_wait() {
    // All of them: the summary and statements wait too, behind the template link.
    let api = Api::with(SandboxConfig { pending_operations: PendingOperations::all(), ..SandboxConfig::default() });
    let opened = saved(&api, "greatday_nomfa").await;
    let request_id = text(&opened["RequestId"]);
    for (operation, name) in [(SUMMARY, "GetAccountsSummary"), (STATEMENTS, "GetStatements")] {
        let pending = api.post(operation, json!({"RequestId": request_id})).await;
        assert_eq!((pending.0, &pending.1["Links"]), (202, &template_link()), "{operation}");
        assert_eq!(api.get(&format!("BankingServices/{name}Async/{request_id}")).await.0, 200, "{operation}");
    }

    // None named: even account detail and Investments answer at once.
    let none: [&str; 0] = [];
    let api = Api::with(SandboxConfig {
        pending_operations: PendingOperations::from_names(&none).unwrap(),
        ..SandboxConfig::default()
    });
    let opened = saved(&api, "greatday_nomfa").await;
    assert_eq!(api.post(DETAIL, json!({"RequestId": opened["RequestId"]})).await.0, 200);
    let investments =
        api.post(INVESTMENTS, json!({"LoginId": opened["Login"]["Id"], "RequestId": opened["RequestId"]})).await;
    assert_eq!(investments.0, 200, "{}", investments.1);

    // A slow user waits on every operation whatever the knob says: that is what it is for.
    let slow = saved(&api, "test_pending").await;
    let summary = api.post(SUMMARY, json!({"RequestId": slow["RequestId"]})).await;
    assert_eq!((summary.0, &summary.1["FlinksCode"]), (202, &json!("OPERATION_PENDING")));

    let refused = PendingOperations::from_names(&["GetAccountsDetail", "Transfers"]).unwrap_err();
    assert!(refused.contains("\"Transfers\"") && refused.contains("GetStatements"), "{refused}");
    assert_eq!(
        PendingOperations::from_names(&["investments", "getaccountsdetail"]).unwrap().names(),
        ["GetAccountsDetail", "Investments"]
    );
}

#[tokio::test]
async fn login_ids_have_the_services_sequential_tail_and_are_taken_in_any_case() {
    let api = Api::with(SandboxConfig { card_in_use: Duration::ZERO, pending_polls: 0, ..SandboxConfig::default() });
    let opened = saved(&api, "greatday_nomfa").await;
    let login_id = text(&opened["Login"]["Id"]);
    let parsed = uuid::Uuid::parse_str(&login_id).unwrap();
    // The variant nibble (the first of the fourth group) is outside RFC 4122's 8 to b, so a
    // check for a version-4 UUID refuses it, as it refuses the service's.
    let variant = login_id.split('-').nth(3).unwrap().chars().next().unwrap();
    assert!(!"89ab".contains(variant), "{login_id}");
    assert!(!matches!(parsed.get_variant(), uuid::Variant::RFC4122), "{login_id}");
    // The RequestId stays a random version-4 GUID.
    let request_id = uuid::Uuid::parse_str(&text(&opened["RequestId"])).unwrap();
    assert_eq!((request_id.get_version_num(), request_id.get_variant()), (4, uuid::Variant::RFC4122));

    // Nothing in the sandbox refuses such a LoginId, in either case.
    let upper = login_id.to_uppercase();
    let cached = api.cached(&upper).await;
    assert_eq!(cached.0, 200, "{}", cached.1);
    assert_eq!(cached.1["Login"]["Id"], json!(login_id));
    let investments = api.post(INVESTMENTS, json!({"LoginId": upper, "RequestId": cached.1["RequestId"]})).await;
    assert_eq!(investments.0, 200, "{}", investments.1);
    assert_eq!(investments.1["Login"]["Id"], json!(login_id));
    let (status, _) = api
        .get(&format!(
            "insight/login/{upper}/attributes/{}/GetIncomeAttributes",
            cached.1["RequestId"].as_str().unwrap()
        ))
        .await;
    assert_eq!(status, 202, "attributes wait for detail, and take the LoginId");
    let deleted = delete(&api, &upper).await;
    assert_eq!(deleted.0, 200, "{}", deleted.1);
}

#[tokio::test]
async fn a_cached_read_is_asked_a_question_first_when_the_knob_says() {
    let always = SandboxConfig { cached_challenges: CachedChallenges::Always, logins: 1, ..SandboxConfig::default() };
    let bulk_id = bankfeed_sandbox::login_ids(0, 1).remove(0);
    let api = Api::with(always);

    // A user without challenges is asked the question the service was recorded asking.
    let asked = api.cached(&bulk_id).await;
    assert_eq!(asked.0, 203, "{}", asked.1);
    assert_eq!(
        asked.1["SecurityChallenges"],
        json!([{"Type": "QuestionAndAnswer", "Prompt": "What is the best country on earth?"}])
    );
    let request_id = text(&asked.1["RequestId"]);
    // Not open until answered.
    assert_error(&api.post(SUMMARY, json!({"RequestId": request_id})).await, 401, "UNAUTHORIZED");
    let wrong = api
        .post(
            AUTHORIZE,
            json!({"RequestId": request_id, "SecurityResponses": {"What is the best country on earth?": ["Narnia"]}}),
        )
        .await;
    assert_error(&wrong, 401, "INVALID_SECURITY_RESPONSE");
    let opened = api
        .post(
            AUTHORIZE,
            json!({"RequestId": request_id, "MostRecentCached": false,
                                "SecurityResponses": {"What is the best country on earth?": ["Canada"]}}),
        )
        .await;
    assert_eq!(opened.0, 200, "{}", opened.1);
    // The 200 names no Login, as recorded; the session is the login's all the same.
    assert_eq!(
        keys(&opened.1),
        ["HttpStatusCode", "Links", "InstitutionName", "InstitutionId", "Institution", "RequestId"]
    );
    assert_eq!(opened.1["RequestId"], json!(request_id));
    let summary = api.post(SUMMARY, json!({"RequestId": request_id})).await;
    assert_eq!(summary.0, 200, "{}", summary.1);
    assert_eq!(summary.1["Login"]["Id"], json!(bulk_id));
    assert_eq!(summary.1["Login"]["Username"], "bulk_00000");

    // A user with security questions is asked one of its own.
    let greatday = saved(&api, "Greatday").await;
    let asked = api.cached(&text(&greatday["Login"]["Id"])).await;
    assert_eq!(asked.0, 203);
    assert_eq!(asked.1["SecurityChallenges"][0]["Prompt"], "What is the best country on earth?");
    let image = saved(&api, "mfa_image").await;
    let asked = api.cached(&text(&image["Login"]["Id"])).await;
    assert_eq!(asked.1["SecurityChallenges"][0]["Prompt"], "What city were you born in?", "its only question");
    let opened = answered(&api, "mfa_image", asked).await;
    assert_eq!(opened.0, 200, "{}", opened.1);
    assert!(opened.1.get("Login").is_none());

    // Per user: only the users the table names are asked.
    let api = Api::with(SandboxConfig { cached_challenges: CachedChallenges::PerUser, ..SandboxConfig::default() });
    for (username, asks) in
        [("Greatday", true), ("greatday_three_rounds", true), ("greatday_nomfa", false), ("mfa_image", false)]
    {
        let login = saved(&api, username).await;
        let reply = api.cached(&text(&login["Login"]["Id"])).await;
        assert_eq!(reply.0, if asks { 203 } else { 200 }, "{username}: {}", reply.1);
    }

    // Never, by default: a cached read opens at once, with its Login.
    let api = Api::with(SandboxConfig::default());
    let login = saved(&api, "Greatday").await;
    let reply = api.cached(&text(&login["Login"]["Id"])).await;
    assert_eq!(reply.0, 200, "{}", reply.1);
    assert_eq!(reply.1["Login"]["Id"], login["Login"]["Id"]);
}

#[tokio::test]
async fn a_202_nobody_polls_stops_holding_the_login_when_its_processing_ends() {
    // One 202 by default: its processing lasts a second (docs/sandbox.md#documented-failures).
    let api = Api::with(SandboxConfig { card_in_use: Duration::ZERO, ..SandboxConfig::default() });
    let opened = saved(&api, "greatday_nomfa").await;
    let login_id = text(&opened["Login"]["Id"]);
    let request_id = text(&opened["RequestId"]);
    assert_eq!(api.post(DETAIL, json!({"RequestId": request_id})).await.0, 202);
    // Abandoned: while it processes, a live login and DeleteCard are refused ...
    assert_error(&api.post(AUTHORIZE, credentials("greatday_nomfa")).await, 400, "CONCURRENT_SESSION");
    assert_error(&delete(&api, &login_id).await, 400, "CARD_IN_USE");
    // ... and once it would have ended, no longer, though nobody polled it.
    tokio::time::sleep(Duration::from_millis(1_300)).await;
    let live = api.post(AUTHORIZE, credentials("greatday_nomfa")).await;
    assert_eq!(live.0, 200, "{}", live.1);
    // Its data is ready for whoever comes back for it.
    let late = api.get(&format!("BankingServices/GetAccountsDetailAsync/{request_id}")).await;
    assert_eq!(late.0, 200, "{}", late.1);
    let other = saved(&api, "mfa_securid").await;
    let other_request = text(&other["RequestId"]);
    assert_eq!(api.post(DETAIL, json!({"RequestId": other_request})).await.0, 202);
    tokio::time::sleep(Duration::from_millis(1_300)).await;
    let deleted = delete(&api, &text(&other["Login"]["Id"])).await;
    assert_eq!(deleted.0, 200, "{}", deleted.1);

    // pending_seconds makes the processing as long as it says.
    let api =
        Api::with(SandboxConfig { card_in_use: Duration::ZERO, pending_seconds: 3.0, ..SandboxConfig::default() });
    let opened = saved(&api, "greatday_nomfa").await;
    assert_eq!(api.post(DETAIL, json!({"RequestId": opened["RequestId"]})).await.0, 202);
    tokio::time::sleep(Duration::from_millis(1_300)).await;
    assert_error(&delete(&api, &text(&opened["Login"]["Id"])).await, 400, "CARD_IN_USE");
}

#[tokio::test]
async fn delete_card_right_after_a_new_login_is_card_in_use_for_a_while() {
    assert_eq!(SandboxConfig::default().card_in_use, CARD_IN_USE);
    assert!(CARD_IN_USE > Duration::ZERO && CARD_IN_USE <= Duration::from_secs(5), "a short time");
    let api =
        Api::with(SandboxConfig { card_in_use: Duration::from_millis(600), logins: 1, ..SandboxConfig::default() });
    let opened = saved(&api, "greatday_nomfa").await;
    let login_id = text(&opened["Login"]["Id"]);
    let refused = delete(&api, &login_id).await;
    assert_error(&refused, 400, "CARD_IN_USE");
    // A cached read of it in the meantime changes nothing: the login is still new.
    assert_eq!(api.cached(&login_id).await.0, 200);
    assert_error(&delete(&api, &login_id).await, 400, "CARD_IN_USE");
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert_eq!(delete(&api, &login_id).await.0, 200);

    // A login saved before (a bulk login) is no new login: deleted at once after its Authorize.
    let bulk_id = bankfeed_sandbox::login_ids(0, 1).remove(0);
    assert_eq!(api.cached(&bulk_id).await.0, 200);
    let deleted = delete(&api, &bulk_id).await;
    assert_eq!(deleted.0, 200, "{}", deleted.1);

    // Zero turns it off.
    let api = Api::with(SandboxConfig { card_in_use: Duration::ZERO, ..SandboxConfig::default() });
    let opened = saved(&api, "greatday_nomfa").await;
    assert_eq!(delete(&api, &text(&opened["Login"]["Id"])).await.0, 200);
}

#[tokio::test]
async fn a_cards_number_is_masked_everywhere_and_statements_list_every_account() {
    let api = Api::with(SandboxConfig { pending_polls: 0, ..SandboxConfig::default() });
    let opened = saved(&api, "greatday_nomfa").await;
    let body = json!({"RequestId": opened["RequestId"], "WithAccountIdentity": true});
    let masked = |number: &str| {
        let bytes = number.as_bytes();
        bytes.len() == 16
            && bytes[..6].iter().all(u8::is_ascii_digit)
            && &bytes[6..12] == b"******"
            && bytes[12..].iter().all(u8::is_ascii_digit)
    };
    let summary = api.post(SUMMARY, body.clone()).await.1;
    let detail = api.post(DETAIL, body.clone()).await.1;
    let statements = api.post(STATEMENTS, body).await.1;
    let cards: Vec<&Value> =
        summary["Accounts"].as_array().unwrap().iter().filter(|account| account["Category"] == "Credits").collect();
    assert!(!cards.is_empty());
    for card in cards {
        let number = text(&card["AccountNumber"]);
        assert!(masked(&number), "{number}: 6 digits, 6 asterisks, the last 4");
        assert_eq!(card["LastFourDigits"], json!(number[12..]));
        let in_detail = detail["Accounts"].as_array().unwrap().iter().find(|account| account["Id"] == card["Id"]);
        assert_eq!(in_detail.unwrap()["AccountNumber"], card["AccountNumber"]);
        let listed =
            statements["StatementsByAccount"].as_array().unwrap().iter().find(|a| a["AccountNumber"] == number);
        assert_eq!(listed.unwrap()["Statements"], json!([]));
    }
    assert_eq!(
        statements["StatementsByAccount"].as_array().unwrap().len(),
        summary["Accounts"].as_array().unwrap().len(),
        "every account is listed"
    );
}

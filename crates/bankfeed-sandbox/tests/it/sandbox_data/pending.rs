//! The pending path of every data operation, GetAccountsSummary's shape, the API key.

use super::*;

#[tokio::test]
async fn every_operation_answers_202_then_200_and_async_polls_continue_the_post() {
    // Every banking operation made to wait, as the knob allows (by default the summary and
    // statements answer at once, as recorded: sandbox_recorded.rs).
    let api = Api::with(SandboxConfig {
        pending_polls: 2,
        pending_operations: PendingOperations::all(),
        ..SandboxConfig::default()
    });
    let login = api.saved_login("greatday_nomfa").await;
    for operation in [DETAIL, SUMMARY, STATEMENTS] {
        let body = json!({"RequestId": login.request_id});
        let name = operation.rsplit('/').next().unwrap();
        let early = api.get(&format!("BankingServices/{name}Async/{}", login.request_id)).await;
        assert_error(&early, 401, "INVALID_REQUEST");
        let (pending, reply) = api.banking(operation, body.clone()).await;
        assert_eq!((pending, reply.0), (2, 200), "{operation}: {}", reply.1);
        assert_eq!(reply.1["RequestId"], login.request_id.as_str());
        assert_eq!(reply.1["Login"]["Id"], login.login_id.as_str());
        // Done stays done, on the POST and on the GET.
        assert_eq!(api.post(operation, body).await.0, 200);
        assert_eq!(api.get(&format!("BankingServices/{name}Async/{}", login.request_id)).await.0, 200);
    }

    // The Async GET answers with the options of the POST.
    let cached = api.cached(&login.login_id).await;
    let again =
        Login { login_id: login.login_id.clone(), request_id: cached.1["RequestId"].as_str().unwrap().to_owned() };
    let first = api
        .post(DETAIL, json!({"RequestId": again.request_id, "WithTransactions": false, "WithAccountIdentity": true}))
        .await;
    assert_eq!(first.0, 202);
    let mut reply = first;
    while reply.0 == 202 {
        reply = api.get(&format!("BankingServices/GetAccountsDetailAsync/{}", again.request_id)).await;
    }
    assert_eq!(reply.0, 200);
    for account in reply.1["Accounts"].as_array().unwrap() {
        assert!(account.get("Transactions").is_none());
        assert!(account["Holder"]["Name"].is_string());
    }

    // Investments keep their own pending phase and no Async link.
    let reply = api.post(INVESTMENTS, json!({"LoginId": login.login_id, "RequestId": login.request_id})).await;
    assert_eq!((reply.0, &reply.1["Links"]), (202, &json!([])));

    let unknown = api.get(&format!("BankingServices/GetStatementsAsync/{}", uuid::Uuid::new_v4())).await;
    assert_error(&unknown, 400, "SESSION_NONEXISTENT");
}

#[tokio::test]
async fn summary_shape() {
    let api = Api::with(config());
    let login = api.saved_login("greatday_nomfa").await;
    let detail = api.all_transactions(&login).await;
    let (_, reply) = api.banking(SUMMARY, json!({"RequestId": login.request_id})).await;
    assert_eq!(reply.0, 200);
    let accounts = reply.1["Accounts"].as_array().unwrap();
    assert_eq!(accounts.len(), detail["Accounts"].as_array().unwrap().len());
    for (summary, full) in accounts.iter().zip(detail["Accounts"].as_array().unwrap()) {
        assert!(summary.get("Transactions").is_none());
        assert_eq!(summary["Id"], full["Id"]);
        assert_eq!(summary["Balance"], full["Balance"]);
        assert_eq!(summary["Holder"], json!({"Name": full["Holder"]["Name"]}));
        for ratio in ["EftEligibleRatio", "ETransferEligibleRatio"] {
            let value = summary[ratio].as_f64().unwrap();
            assert!((0.0..=1.0).contains(&value), "{ratio}");
        }
    }
    let (_, bare) = api
        .banking(SUMMARY, json!({"RequestId": login.request_id, "WithBalance": false, "WithAccountIdentity": false}))
        .await;
    assert_eq!(bare.1["Accounts"][0]["Balance"], Value::Null);
    assert_eq!(bare.1["Accounts"][0]["Holder"], Value::Null);
}

#[tokio::test]
async fn every_data_operation_needs_the_api_key_when_configured() {
    // DeleteCard comes right after the login: the test is of the key, not of CARD_IN_USE.
    let api = Api::unkeyed(SandboxConfig {
        secret_key: None,
        api_key: Some("k-1".into()),
        tier2: true,
        card_in_use: std::time::Duration::ZERO,
        ..config()
    });
    let login = api.saved_login("greatday_nomfa").await;
    let id = &login.request_id;
    let attributes = Api::attributes_path(&login);
    let calls = [
        (reqwest::Method::POST, DETAIL.to_owned(), Some(json!({"RequestId": id}))),
        (reqwest::Method::GET, format!("BankingServices/GetAccountsDetailAsync/{id}"), None),
        (reqwest::Method::POST, SUMMARY.to_owned(), Some(json!({"RequestId": id}))),
        (reqwest::Method::GET, format!("BankingServices/GetAccountsSummaryAsync/{id}"), None),
        (reqwest::Method::POST, STATEMENTS.to_owned(), Some(json!({"RequestId": id}))),
        (reqwest::Method::GET, format!("BankingServices/GetStatementsAsync/{id}"), None),
        (reqwest::Method::GET, format!("{attributes}/GetAllAttributes"), None),
        (
            reqwest::Method::POST,
            attributes.clone(),
            Some(json!({"MostRecentCached": true, "Attributes": {"Card": ["count_nsf"]}})),
        ),
        (reqwest::Method::DELETE, format!("BankingServices/DeleteCard/{}", login.login_id), None),
    ];
    for (method, path, body) in &calls {
        let reply = api.send(method.clone(), path, body.clone()).await;
        assert_error(&reply, 401, "UNAUTHORIZED");
    }
    for (method, path, body) in calls {
        let reply = api.send_with(method.clone(), &path, &[("x-api-key", "k-1")], body).await;
        assert_eq!(reply.0, 200, "{method} {path}: {}", reply.1);
    }
}

//! Investments: its 202s, its pending phase, its errors and its key.

use super::*;

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

//! GetAccountsDetail and its options: the accounts and their transactions.

use super::*;

/// Every rule of one account detail payload.
pub(super) fn check_accounts(body: &Value, days: i64) {
    assert_eq!(body["HttpStatusCode"], 200);
    assert_eq!(body["Institution"], "FlinksCapital");
    assert_eq!(body["InstitutionName"], "FlinksCapital");
    assert_eq!(body["InstitutionId"], 14);
    assert_eq!(body["Login"]["Type"], "Personal");
    let accounts = body["Accounts"].as_array().unwrap();
    assert!((3..=5).contains(&accounts.len()));
    let kinds: Vec<(&str, &str)> = accounts.iter().map(|a| (text(&a["Category"]), text(&a["Type"]))).collect();
    assert!(kinds.contains(&("Operations", "Chequing")));
    assert!(kinds.contains(&("Credits", "CreditCard")));
    for kind in &kinds {
        assert!(
            [
                ("Operations", "Chequing"),
                ("Operations", "Savings"),
                ("Credits", "CreditCard"),
                ("Products", "LoanPersonal")
            ]
            .contains(kind),
            "{kind:?}"
        );
    }
    for account in accounts {
        assert!(is_guid(&account["Id"]));
        for field in ["Title", "AccountType", "LastFourDigits"] {
            assert!(!text(&account[field]).is_empty(), "{field}");
        }
        // The numbers come with WithAccountIdentity only, all three or none.
        let numbers = ["AccountNumber", "TransitNumber", "InstitutionNumber"];
        if account["AccountNumber"].is_null() {
            assert!(numbers.iter().all(|field| account[*field].is_null()), "{account}");
        } else {
            assert!(numbers.iter().all(|field| !text(&account[*field]).is_empty()), "{account}");
            assert!(text(&account["AccountNumber"]).ends_with(text(&account["LastFourDigits"])));
        }
        assert_eq!(account["Currency"], "CAD");
        assert!(cents(&account["OverdraftLimit"]) >= 0);
        let balance = &account["Balance"];
        let current = cents(&balance["Current"]);
        if account["Type"] == "Chequing" {
            assert_eq!(balance["Limit"], Value::Null);
        }
        cents_or_none(&balance["Available"]);
        cents_or_none(&balance["Limit"]);
        let transactions = account["Transactions"].as_array().unwrap();
        // Newest first; the running balance goes the other way.
        let mut previous: Option<(String, i64)> = None;
        for transaction in transactions.iter().rev() {
            assert!(is_guid(&transaction["Id"]));
            let date = text(&transaction["Date"]).to_owned();
            let age = days_before_as_of(&date);
            assert!((0..days).contains(&age), "{date} outside {days} days");
            assert!(transaction["Code"].is_null(), "the deprecated Code is null, as documented");
            assert!(!text(&transaction["Description"]).is_empty());
            let (debit, credit) = (cents_or_none(&transaction["Debit"]), cents_or_none(&transaction["Credit"]));
            let delta = match (debit, credit) {
                (Some(debit), None) if debit > 0 => -debit,
                (None, Some(credit)) if credit > 0 => credit,
                other => panic!("Debit and Credit must be exclusive: {other:?}"),
            };
            let after = cents(&transaction["Balance"]);
            if let Some((previous_date, before)) = &previous {
                assert!(*previous_date <= date, "date order");
                assert_eq!(after, before + delta, "running balance at {transaction}");
            }
            previous = Some((date, after));
        }
        if let Some((_, last)) = previous {
            if days == 365 {
                assert_eq!(current, last, "Current is the balance after the last transaction");
            }
        }
    }
}

#[tokio::test]
async fn banking_accounts_follow_the_rules_for_every_user() {
    let api = Api::with(config());
    let (mut dipped, mut with_benefit, mut logins, mut two_employers) = (0, 0, 0, 0);
    for (username, login) in open_users(&api).await {
        logins += 1;
        let body = api.all_transactions(&login).await;
        check_accounts(&body, 365);
        let chequing = body["Accounts"].as_array().unwrap().iter().find(|a| a["Type"] == "Chequing").unwrap();
        let transactions = chequing["Transactions"].as_array().unwrap();
        let described =
            |prefix: &str| transactions.iter().filter(|t| text(&t["Description"]).starts_with(prefix)).count();
        assert!(described("PAYROLL DEPOSIT ") >= 26, "{username}: bi-weekly payroll");
        assert!(described("BILL PAYMENT ") >= 33, "{username}: three bills a month");
        assert!(described("CREDIT CARD PAYMENT VISA") >= 11, "{username}");
        assert!(described("E-TRANSFER") >= 1, "{username}");
        let fees: Vec<&Value> = transactions.iter().filter(|t| t["Description"] == "NSF FEE").collect();
        assert!((2..=4).contains(&fees.len()), "{username}: a few NSF fees");
        assert!(fees.iter().all(|fee| cents(&fee["Debit"]) == 4800));
        let employers: HashSet<&str> =
            transactions.iter().filter_map(|t| text(&t["Description"]).strip_prefix("PAYROLL DEPOSIT ")).collect();
        two_employers += usize::from(employers.len() == 2);
        if transactions.iter().any(|t| cents(&t["Balance"]) < 0) {
            dipped += 1;
        }
        if described("GOVT CANADA CCB") > 0 {
            assert!(described("GOVT CANADA CCB") >= 12);
            with_benefit += 1;
        }
        let has_loan = body["Accounts"].as_array().unwrap().iter().any(|a| a["Type"] == "LoanPersonal");
        assert_eq!(described("LOAN PAYMENT") >= 12, has_loan, "{username}");
        let card = body["Accounts"].as_array().unwrap().iter().find(|a| a["Type"] == "CreditCard").unwrap();
        assert!(card["Transactions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| text(&t["Description"]).starts_with("POS PURCHASE ")));
        assert!(body["Accounts"][0]["Holder"]["Address"]["City"].is_string());
    }
    assert!(dipped * 2 > logins, "most chequing accounts dip below 0: {dipped}/{logins}");
    assert!(with_benefit > 0 && with_benefit < logins, "CCB for some: {with_benefit}/{logins}");
    println!("{two_employers}/{logins} logins have two employers");
}

#[tokio::test]
async fn account_detail_options() {
    let api = Api::with(config());
    let login = api.saved_login("greatday_nomfa").await;
    let year = api.all_transactions(&login).await;
    // Days90 is the default.
    let recent = api.detail(&login, json!({})).await;
    check_accounts(&recent, 90);
    for (long, short) in year["Accounts"].as_array().unwrap().iter().zip(recent["Accounts"].as_array().unwrap()) {
        let expected: Vec<&Value> =
            long["Transactions"].as_array().unwrap().iter().filter(|t| text(&t["Date"]) >= DAY_89).collect();
        let got: Vec<&Value> = short["Transactions"].as_array().unwrap().iter().collect();
        assert_eq!(got, expected, "Days90 is the last 90 days of Days365");
        assert!(short["Holder"]["Name"].is_string(), "WithKYC is true by default");
        for field in ["AccountNumber", "TransitNumber", "InstitutionNumber"] {
            assert_eq!(short[field], Value::Null, "no {field} unless WithAccountIdentity");
            assert!(long[field].is_string(), "{field} with WithAccountIdentity");
        }
        assert_eq!(long["Holder"], short["Holder"]);
        assert_eq!(long["Balance"], short["Balance"]);
    }
    let explicit = api.detail(&login, json!({"DaysOfTransactions": "Days90"})).await;
    assert_eq!(explicit["Accounts"], recent["Accounts"]);

    let without = api.detail(&login, json!({"WithTransactions": false})).await;
    for account in without["Accounts"].as_array().unwrap() {
        assert!(account.get("Transactions").is_none());
    }

    let card = year["Accounts"].as_array().unwrap().iter().find(|a| a["Type"] == "CreditCard").unwrap();
    let filtered = api
        .detail(
            &login,
            json!({"AccountsFilter": [text(&card["Id"]).to_uppercase()], "DaysOfTransactions": "Days365", "WithAccountIdentity": true}),
        )
        .await;
    assert_eq!(filtered["Accounts"], json!([card]));

    for bad in [json!("Days30"), json!(90)] {
        let reply = api.post(DETAIL, json!({"RequestId": login.request_id, "DaysOfTransactions": bad})).await;
        assert_error(&reply, 401, "INVALID_REQUEST");
        assert_message_names(&reply, "DaysOfTransactions");
    }
    let reply = api.post(DETAIL, json!({"RequestId": login.request_id, "AccountsFilter": "x"})).await;
    assert_error(&reply, 401, "INVALID_REQUEST");
    assert_message_names(&reply, "AccountsFilter");
    let reply = api.post(DETAIL, json!({"WithTransactions": true})).await;
    assert_error(&reply, 401, "INVALID_REQUEST");
    assert_message_names(&reply, "RequestId");
}

#[tokio::test]
async fn with_kyc_controls_the_holder_and_with_account_identity_the_numbers() {
    let api = Api::with(config());
    let login = api.saved_login("greatday_nomfa").await;
    for (options, holder, numbers) in [
        (json!({}), true, false),
        (json!({"WithKYC": false}), false, false),
        (json!({"WithKYC": "false", "WithAccountIdentity": "true"}), false, true),
        (json!({"WithAccountIdentity": true}), true, true),
    ] {
        let body = api.detail(&login, options.clone()).await;
        for account in body["Accounts"].as_array().unwrap() {
            assert_eq!(account["Holder"]["Name"].is_string(), holder, "{options}: Holder");
            assert_eq!(account["Holder"].is_null(), !holder, "{options}: Holder");
            for field in ["AccountNumber", "TransitNumber", "InstitutionNumber"] {
                assert_eq!(account[field].is_string(), numbers, "{options}: {field}");
            }
            assert!(account["LastFourDigits"].is_string(), "LastFourDigits always comes");
        }
    }
}

/// The transactions of every account of `body`, as (account id, transaction) pairs.
fn transactions_of(body: &Value) -> Vec<(String, Value)> {
    body["Accounts"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|account| {
            let id = text(&account["Id"]).to_owned();
            account["Transactions"].as_array().unwrap().iter().map(move |t| (id.clone(), t.clone()))
        })
        .collect()
}

#[tokio::test]
async fn date_options_narrow_the_transactions_and_bad_ones_are_refused_by_name() {
    let api = Api::with(config());
    let login = api.saved_login("greatday_nomfa").await;
    let year = transactions_of(&api.all_transactions(&login).await);
    let between = |from: &str, to: &str| -> Vec<(String, Value)> {
        year.iter().filter(|(_, t)| (from..=to).contains(&text(&t["Date"]))).cloned().collect()
    };
    // A window older than 90 days: the dates decide when DaysOfTransactions is not given.
    let body = api.detail(&login, json!({"DateFrom": "2026-01-01", "DateTo": "2026-01-31"})).await;
    let got = transactions_of(&body);
    assert!(!got.is_empty());
    assert_eq!(got, between("2026-01-01", "2026-01-31"));
    // A time of day is read as its day; DaysOfTransactions, when given, still bounds the window.
    let body = api.detail(&login, json!({"DateFrom": "2026-01-01T00:00:00", "DaysOfTransactions": "Days90"})).await;
    assert_eq!(transactions_of(&body), between(DAY_89, AS_OF));
    let body = api.detail(&login, json!({"DateTo": "2026-09-30"})).await;
    assert_eq!(transactions_of(&body), between(OLDEST, "2026-09-30"));
    // The spelling of older clients is read too.
    let body = api.detail(&login, json!({"DaysOfTransaction": "Days365"})).await;
    assert_eq!(transactions_of(&body), year);

    for (body, field) in [
        (json!({"DateFrom": "01/01/2026"}), "DateFrom"),
        (json!({"DateTo": "2026-02-30"}), "DateTo"),
        (json!({"DateFrom": 20_260_101}), "DateFrom"),
        (json!({"DateFrom": "2026-02-01", "DateTo": "2026-01-01"}), "DateFrom"),
        (json!({"DaysOfTransaction": "Days30"}), "DaysOfTransaction"),
        (json!({"RefreshDelta": "x"}), "RefreshDelta"),
        (json!({"RefreshDelta": [{"AccountId": "x"}]}), "RefreshDelta"),
    ] {
        let mut request = json!({"RequestId": login.request_id});
        request.as_object_mut().unwrap().extend(body.as_object().unwrap().clone());
        let reply = api.post(DETAIL, request).await;
        // 401: the status the newest error table gives INVALID_REQUEST of the banking operations
        // (docs/protocol.md).
        assert_error(&reply, 401, "INVALID_REQUEST");
        assert_message_names(&reply, field);
    }
}

#[tokio::test]
async fn refresh_delta_gives_only_the_transactions_after_the_one_held() {
    let api = Api::with(config());
    let login = api.saved_login("greatday_nomfa").await;
    let year = api.all_transactions(&login).await;
    let chequing = year["Accounts"].as_array().unwrap().iter().find(|a| a["Type"] == "Chequing").unwrap();
    let listed = chequing["Transactions"].as_array().unwrap();
    // Newest first: the fifth newest is the last one held, so the four newer ones come.
    let held = &listed[4];
    let body = api
        .detail(
            &login,
            json!({"DaysOfTransactions": "Days365",
                   "RefreshDelta": [{"AccountId": chequing["Id"], "TransactionId": held["Id"]}]}),
        )
        .await;
    for account in body["Accounts"].as_array().unwrap() {
        let got = account["Transactions"].as_array().unwrap();
        if account["Id"] == chequing["Id"] {
            assert_eq!(got.as_slice(), &listed[..4]);
        } else {
            let full = year["Accounts"].as_array().unwrap().iter().find(|a| a["Id"] == account["Id"]).unwrap();
            assert_eq!(got, full["Transactions"].as_array().unwrap(), "other accounts are whole");
        }
    }
    for delta in [
        json!([{"AccountId": "00000000-0000-0000-0000-000000000000", "TransactionId": held["Id"]}]),
        json!([{"AccountId": chequing["Id"], "TransactionId": "00000000-0000-0000-0000-000000000000"}]),
    ] {
        let (_, reply) = api.banking(DETAIL, json!({"RequestId": login.request_id, "RefreshDelta": delta})).await;
        assert_error(&reply, 401, "INVALID_REQUEST");
        assert_message_names(&reply, "RefreshDelta");
    }
}

#[tokio::test]
async fn an_accounts_filter_naming_an_unknown_account_is_refused() {
    let api = Api::with(config());
    let login = api.saved_login("greatday_nomfa").await;
    let year = api.all_transactions(&login).await;
    let known = text(&year["Accounts"][0]["Id"]).to_owned();
    let unknown = "00000000-0000-0000-0000-000000000000";
    let (_, reply) =
        api.banking(DETAIL, json!({"RequestId": login.request_id, "AccountsFilter": [known, unknown]})).await;
    assert_error(&reply, 401, "INVALID_REQUEST");
    assert_message_names(&reply, "AccountsFilter");
    assert!(reply.1["Message"].as_str().unwrap().contains(unknown), "{}", reply.1);
    let (_, reply) = api.banking(STATEMENTS, json!({"RequestId": login.request_id, "AccountsFilter": [unknown]})).await;
    assert_error(&reply, 401, "INVALID_REQUEST");
    assert_message_names(&reply, "AccountsFilter");
}

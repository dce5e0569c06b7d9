//! The sandbox's generated data and the operations that serve it (account detail, summary,
//! statements, investments, attributes, DeleteCard), driven over real HTTP. Every attribute is
//! recomputed here, independently, from the account detail payload.

use std::collections::{BTreeSet, HashMap, HashSet};

use bankfeed_sandbox::{attribute_catalogue, attribute_packages, users, PendingOperations, SandboxConfig};
use base64::Engine as _;
use serde_json::{json, Value};

use crate::common::{answers_for, assert_error, assert_message_names, user, Api, Reply};
use crate::common::{AUTHORIZE, DETAIL, INSTITUTION, INVESTMENTS, STATEMENTS, SUMMARY};

/// The as-of date of all data, and the oldest and the 90-day boundary dates it implies.
const AS_OF: &str = "2026-11-20";
const OLDEST: &str = "2025-11-21";
const DAY_89: &str = "2026-08-23";

/// A logged-in user: LoginId and RequestId.
struct Login {
    login_id: String,
    request_id: String,
}

fn config() -> SandboxConfig {
    SandboxConfig { pending_polls: 0, ..SandboxConfig::default() }
}

impl Api {
    /// Logs `username` in with credentials and `Save`, answering any challenges; None for the
    /// users the institution refuses.
    async fn try_saved_login(&self, username: &str) -> Option<Login> {
        let user = user(username);
        let mut reply = self
            .post(
                AUTHORIZE,
                json!({"Institution": INSTITUTION, "Username": username, "Password": "Everyday",
                       "MostRecentCached": false, "Save": true}),
            )
            .await;
        while reply.0 == 203 {
            let responses = answers_for(&user, &reply.1);
            let request_id = reply.1["RequestId"].clone();
            reply = self.post(AUTHORIZE, json!({"RequestId": request_id, "SecurityResponses": responses})).await;
        }
        (reply.0 == 200).then(|| Login {
            login_id: reply.1["Login"]["Id"].as_str().unwrap().to_owned(),
            request_id: reply.1["RequestId"].as_str().unwrap().to_owned(),
        })
    }

    async fn saved_login(&self, username: &str) -> Login {
        self.try_saved_login(username).await.unwrap_or_else(|| panic!("{username} logs in"))
    }

    /// POSTs a banking operation, then polls its `...Async/{requestId}` GET, as the service's
    /// template link says, while it answers 202; returns the number of 202s and the last reply.
    async fn banking(&self, operation: &str, body: Value) -> (usize, Reply) {
        let request_id = body["RequestId"].as_str().unwrap().to_owned();
        let mut reply = self.post(operation, body).await;
        let mut pending = 0;
        while reply.0 == 202 {
            pending += 1;
            assert!(pending < 50, "pending forever");
            let rel = format!("{}Async", operation.rsplit('/').next().unwrap());
            assert_eq!(reply.1["HttpStatusCode"], 202);
            assert_eq!(
                reply.1["Links"],
                json!([{"rel": "{Endpoint}Async", "href": "/{Endpoint}Async", "example": "/{Endpoint}Async/{requestId}"}]),
                "the 202 carries the service's template link"
            );
            reply = self.get(&format!("BankingServices/{rel}/{request_id}")).await;
        }
        (pending, reply)
    }

    async fn detail(&self, login: &Login, options: Value) -> Value {
        let mut body = json!({"RequestId": login.request_id});
        body.as_object_mut().unwrap().extend(options.as_object().unwrap().clone());
        let (_, reply) = self.banking(DETAIL, body).await;
        assert_eq!(reply.0, 200, "{}", reply.1);
        reply.1
    }

    async fn all_transactions(&self, login: &Login) -> Value {
        self.detail(login, json!({"DaysOfTransactions": "Days365", "WithAccountIdentity": true})).await
    }

    async fn investments_of(&self, login: &Login) -> Value {
        let body = json!({"LoginId": login.login_id, "RequestId": login.request_id, "MostRecentCached": true});
        for _ in 0..50 {
            let reply = self.post(INVESTMENTS, body.clone()).await;
            if reply.0 != 202 {
                assert_eq!(reply.0, 200, "{}", reply.1);
                return reply.1;
            }
        }
        panic!("Investments pending forever")
    }

    fn attributes_path(login: &Login) -> String {
        format!("insight/login/{}/attributes/{}", login.login_id, login.request_id)
    }

    async fn use_case(&self, login: &Login, operation: &str) -> Reply {
        self.get(&format!("{}/{operation}", Api::attributes_path(login))).await
    }

    async fn custom(&self, login: &Login, body: Value) -> Reply {
        self.post(&Api::attributes_path(login), body).await
    }
}

/// Every user that can log in (not the refused ones).
async fn open_users(api: &Api) -> Vec<(String, Login)> {
    let mut open = Vec::new();
    for user in users() {
        if let Some(login) = api.try_saved_login(user.username).await {
            open.push((user.username.to_owned(), login));
        }
    }
    assert!(open.len() >= 10, "most users log in");
    open
}

fn cents(value: &Value) -> i64 {
    let amount = value.as_f64().unwrap_or_else(|| panic!("not a number: {value}"));
    let cents = (amount * 100.0).round();
    assert!((amount * 100.0 - cents).abs() < 1e-6, "more than 2 decimals: {value}");
    cents as i64
}

fn cents_or_none(value: &Value) -> Option<i64> {
    (!value.is_null()).then(|| cents(value))
}

fn text(value: &Value) -> &str {
    value.as_str().unwrap_or_else(|| panic!("not a string: {value}"))
}

fn is_guid(value: &Value) -> bool {
    uuid::Uuid::parse_str(text(value)).is_ok()
}

/// Days since 1970-01-01 of `YYYY-MM-DD` or `YYYY/MM/DD`, by counting, not by formula, so it
/// does not share the sandbox's algorithm.
fn day_number(date: &str) -> i64 {
    let parts: Vec<i64> = date.split(['-', '/']).map(|part| part.parse().unwrap()).collect();
    let (year, month, day) = (parts[0], parts[1], parts[2]);
    let leap = |y: i64| (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let month_days = |y: i64, m: i64| match m {
        2 if leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    let mut days = 0;
    for y in 1970..year {
        days += if leap(y) { 366 } else { 365 };
    }
    for m in 1..month {
        days += month_days(year, m);
    }
    days + day - 1
}

fn days_before_as_of(date: &str) -> i64 {
    day_number(AS_OF) - day_number(date)
}

// ---- determinism ---------------------------------------------------------------------------

#[tokio::test]
async fn login_ids_come_from_the_seed_and_the_username() {
    let (first, second) = (Api::with(config()), Api::with(config()));
    let a = first.saved_login("greatday_nomfa").await;
    let b = second.saved_login("GreatDay_NoMFA").await;
    assert_eq!(a.login_id, b.login_id, "same seed, same user, same LoginId");
    assert!(uuid::Uuid::parse_str(&a.login_id).is_ok());
    assert_eq!(first.saved_login("greatday_nomfa").await.login_id, a.login_id);
    assert_ne!(first.saved_login("Greatday").await.login_id, a.login_id);
    let seeded = Api::with(SandboxConfig { seed: 7, ..config() });
    assert_ne!(seeded.saved_login("greatday_nomfa").await.login_id, a.login_id);
}

#[tokio::test]
async fn the_same_login_has_the_same_data_in_every_sandbox_and_users_differ() {
    let (first, second) = (Api::with(config()), Api::with(config()));
    let mut seen = HashSet::new();
    for username in ["greatday_nomfa", "Greatday", "mfa_multiple_choice"] {
        let (a, b) = (first.saved_login(username).await, second.saved_login(username).await);
        let (mut x, mut y) = (first.all_transactions(&a).await, second.all_transactions(&b).await);
        assert_ne!(x["RequestId"], y["RequestId"]);
        x["RequestId"] = Value::Null;
        y["RequestId"] = Value::Null;
        assert_eq!(x, y, "{username}: account detail");
        let (mut x_inv, mut y_inv) = (first.investments_of(&a).await, second.investments_of(&b).await);
        x_inv["RequestId"] = Value::Null;
        y_inv["RequestId"] = Value::Null;
        assert_eq!(x_inv, y_inv, "{username}: investments");
        for kind in ["GetAccountsSummary", "GetStatements"] {
            let op = format!("BankingServices/{kind}");
            let (_, mut p) = first.banking(&op, json!({"RequestId": a.request_id})).await;
            let (_, mut q) = second.banking(&op, json!({"RequestId": b.request_id})).await;
            p.1["RequestId"] = Value::Null;
            q.1["RequestId"] = Value::Null;
            assert_eq!(p, q, "{username}: {kind}");
        }
        assert!(seen.insert(x["Accounts"].to_string()), "{username}: own accounts");
        assert!(seen.insert(x_inv["Accounts"].to_string()), "{username}: own portfolio");
    }
    let seeded = Api::with(SandboxConfig { seed: 99, ..config() });
    let login = seeded.saved_login("greatday_nomfa").await;
    let other = seeded.all_transactions(&login).await;
    assert!(!seen.contains(&other["Accounts"].to_string()), "another seed, other data");
}

// ---- investments ---------------------------------------------------------------------------

/// Every rule of the investments payload; returns the number of trades.
fn check_portfolio(body: &Value, login: &Login, username: &str) -> usize {
    assert_eq!(body["HttpStatusCode"], 200);
    assert_eq!(body["Institution"], json!({"Id": 14, "Name": "FlinksCapital"}));
    assert_eq!(body["Login"]["Type"], Value::Null);
    assert_eq!(body["Login"]["Id"], login.login_id.as_str());
    assert_eq!(body["Login"]["Username"], username);
    assert_eq!(body["RequestId"], login.request_id.as_str());

    let securities: HashMap<&str, &Value> =
        body["Securities"].as_array().unwrap().iter().map(|security| (text(&security["Id"]), security)).collect();
    for security in securities.values() {
        assert!(is_guid(&security["Id"]));
        assert_eq!(security["Type"], "equity");
        for field in ["Name", "Symbol", "Currency"] {
            assert!(!text(&security[field]).is_empty(), "{field}");
        }
        assert!(security["Aliases"].is_array());
        assert!(cents(&security["Price"]) > 0);
        let date = text(&security["Date"]);
        assert_eq!(date.len(), "2026-11-19T21:00:00.0000000Z".len(), "{date}");
        assert!(date.ends_with('Z') && date.split('.').nth(1).unwrap().len() == 8);
        assert!(date[..10] <= *AS_OF);
    }
    let all = securities.values();
    assert!(all.clone().any(|s| s.get("CUSIP").is_none()), "a CUSIP absent");
    assert!(all.clone().any(|s| s.get("ISIN") == Some(&Value::Null)), "an ISIN null");
    assert!(all.clone().any(|s| s.get("ISIN").is_none()), "an ISIN absent");
    assert!(all.clone().any(|s| s["ISIN"].is_string()), "an ISIN given");

    let accounts = body["Accounts"].as_array().unwrap();
    assert!((2..=4).contains(&accounts.len()), "{} accounts", accounts.len());
    let currencies: HashSet<&str> = accounts.iter().map(|a| text(&a["Currency"])).collect();
    assert_eq!(currencies, HashSet::from(["CAD", "USD"]));
    let (mut value, mut cash, mut trades) = (0, 0, 0);
    for account in accounts {
        assert!(is_guid(&account["Id"]));
        let kind = text(&account["Type"]);
        assert!(["cash", "margin", "tfsa", "rrsp"].contains(&kind), "{kind}");
        let registered = kind == "tfsa" || kind == "rrsp";
        assert_eq!(account["Registered"], registered);
        let currency = text(&account["Currency"]);
        let registration = if registered { "Registered" } else { "NonRegistered" };
        assert_eq!(
            text(&account["FullAccountId"]),
            format!("{registration}:{}-{kind}-{currency}", text(&account["AccountId"]))
        );
        assert!(!text(&account["Name"]).is_empty());

        // Positions are what the trades add up to.
        let mut net: HashMap<&str, i64> = HashMap::new();
        for trade in account["Transactions"].as_array().unwrap() {
            trades += 1;
            assert!(is_guid(&trade["Id"]));
            let security = securities[text(&trade["SecurityId"])];
            assert_eq!(security["Currency"], currency);
            let date = text(&trade["Date"]);
            assert!(date.len() == 10 && (OLDEST..=AS_OF).contains(&date), "{date}");
            let quantity = trade["Quantity"].as_f64().unwrap();
            let fee = cents(&trade["Fee"]);
            assert!(fee >= 0);
            // The trade price is in the description: "Bought 10 RY @ 131.25".
            let description = text(&trade["Description"]);
            let price = cents(&json!(description.rsplit("@ ").next().unwrap().parse::<f64>().unwrap()));
            let gross = (quantity.abs() as i64) * price;
            let amount = cents(&trade["Amount"]);
            match text(&trade["Type"]) {
                "buy" => {
                    assert!(quantity > 0.0 && amount < 0, "{trade}");
                    assert_eq!(amount, -gross - fee, "{trade}");
                }
                "sell" => {
                    assert!(quantity < 0.0 && amount > 0, "{trade}");
                    assert_eq!(amount, gross - fee, "{trade}");
                }
                other => panic!("trade type {other}"),
            }
            *net.entry(text(&trade["SecurityId"])).or_default() += quantity as i64;
        }
        let mut market_total = 0;
        let positions = account["Positions"].as_array().unwrap();
        for position in positions {
            assert!(is_guid(&position["Id"]));
            assert_eq!(position["Class"], "equity");
            let security = securities[text(&position["SecurityId"])];
            assert_eq!(position["Currency"], security["Currency"]);
            let quantity = position["Quantity"].as_f64().unwrap();
            assert_eq!(net[text(&position["SecurityId"])], quantity as i64);
            let market = cents(&position["MarketValue"]);
            assert_eq!(market, (quantity * security["Price"].as_f64().unwrap() * 100.0).round() as i64);
            let book = cents(&position["BookValue"]);
            assert_eq!(cents(&position["GainAmount"]), market - book);
            assert_eq!(position["GainCurrencyAmount"], position["GainAmount"]);
            let percent = position["GainPercent"].as_f64().unwrap();
            assert!((percent - (market - book) as f64 / book as f64).abs() < 1e-5);
            market_total += market;
        }
        let held = net.values().filter(|quantity| **quantity > 0).count();
        assert_eq!(positions.len(), held, "a position per security still held");
        assert_eq!(cents(&account["AccountValue"]), cents(&account["Cash"]) + market_total);
        assert_eq!(account["CurrencyValue"], account["AccountValue"]);
        value += cents(&account["AccountValue"]);
        cash += cents(&account["Cash"]);
    }
    assert_eq!(cents(&body["Value"]), value);
    assert_eq!(cents(&body["Cash"]), cash);
    trades
}

#[tokio::test]
async fn every_portfolio_is_consistent() {
    for seed in [0, 1] {
        let api = Api::with(SandboxConfig { seed, ..config() });
        for (username, login) in open_users(&api).await {
            let body = api.investments_of(&login).await;
            let trades = check_portfolio(&body, &login, &username);
            assert!((50..=70).contains(&trades), "about 60 trades, not {trades}");
            let kinds: HashSet<&str> = body["Accounts"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|a| a["Transactions"].as_array().unwrap())
                .map(|t| text(&t["Type"]))
                .collect();
            assert_eq!(kinds, HashSet::from(["buy", "sell"]), "{username}");
        }
    }
}

// ---- banking -------------------------------------------------------------------------------

/// Every rule of one account detail payload.
fn check_accounts(body: &Value, days: i64) {
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

// ---- sizes ---------------------------------------------------------------------------------

fn banking_count(body: &Value) -> usize {
    body["Accounts"].as_array().unwrap().iter().map(|a| a["Transactions"].as_array().unwrap().len()).sum()
}

fn trade_count(body: &Value) -> usize {
    body["Accounts"].as_array().unwrap().iter().map(|a| a["Transactions"].as_array().unwrap().len()).sum()
}

#[tokio::test]
async fn transaction_counts_are_exact() {
    for count in [0usize, 1, 7, 100_000] {
        let api = Api::with(SandboxConfig {
            investment_transactions: Some(count),
            banking_transactions: Some(count),
            tier2: true,
            ..config()
        });
        // Timing is for benchmarks; this checks sizes and consistency only.
        let login = api.saved_login("greatday_nomfa").await;
        let banking = api.all_transactions(&login).await;
        let portfolio = api.investments_of(&login).await;
        assert_eq!(banking_count(&banking), count);
        check_accounts(&banking, 365);
        assert_eq!(trade_count(&portfolio), count);
        check_portfolio(&portfolio, &login, "greatday_nomfa");
        if count == 0 {
            for account in portfolio["Accounts"].as_array().unwrap() {
                assert_eq!(account["Positions"], json!([]));
                assert_eq!(account["AccountValue"], account["Cash"]);
            }
        }
        if count == 1 {
            let positions: usize = portfolio["Accounts"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a["Positions"].as_array().unwrap().len())
                .sum();
            assert_eq!(positions, 1, "one buy, one position");
        }
        // Attributes run over the same transactions.
        let reply =
            api.custom(&login, json!({"MostRecentCached": true, "Attributes": {"Card": ["count_transactions"]}})).await;
        assert_eq!(reply.1["Card"]["count_transactions"], count);
    }
}

#[tokio::test]
async fn with_100000_transactions_the_summary_answers_and_attributes_still_wait_for_detail() {
    // How fast is for benchmarks; this checks that a large login is served at all.
    let api = Api::with(SandboxConfig {
        investment_transactions: Some(100_000),
        banking_transactions: Some(100_000),
        tier2: true,
        ..config()
    });
    let login = api.saved_login("Greatday").await;
    let (_, reply) = api.banking(SUMMARY, json!({"RequestId": login.request_id})).await;
    assert_eq!(reply.0, 200);
    assert!(!reply.1["Accounts"].as_array().unwrap().is_empty());
    let reply =
        api.custom(&login, json!({"MostRecentCached": true, "Attributes": {"Card": ["count_transactions"]}})).await;
    assert_eq!(reply.0, 202, "before detail");
}

// ---- the pending path of every operation ---------------------------------------------------

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

// ---- statements ----------------------------------------------------------------------------

/// Checks that `pdf` is a whole PDF whose cross-reference table points at its objects; returns
/// its text.
fn check_pdf(pdf: &[u8]) -> String {
    assert!(pdf.starts_with(b"%PDF-"));
    assert!(pdf.ends_with(b"%%EOF"));
    let text = String::from_utf8_lossy(pdf).into_owned();
    let start: usize =
        text.rsplit("startxref").next().unwrap().trim().trim_end_matches("%%EOF").trim().parse().unwrap();
    let xref = std::str::from_utf8(&pdf[start..]).unwrap();
    let mut lines = xref.lines();
    assert_eq!(lines.next(), Some("xref"));
    let header: Vec<usize> = lines.next().unwrap().split(' ').map(|n| n.parse().unwrap()).collect();
    assert_eq!(header[0], 0);
    let table = &pdf[start + "xref\n".len() + lines_len(xref)..];
    for object in 0..header[1] {
        let entry = std::str::from_utf8(&table[object * 20..object * 20 + 20]).unwrap();
        let offset: usize = entry[..10].parse().unwrap();
        if object == 0 {
            assert!(entry.starts_with("0000000000 65535 f"));
            continue;
        }
        assert!(entry[10..].starts_with(" 00000 n"), "{entry:?}");
        assert!(pdf[offset..].starts_with(format!("{object} 0 obj").as_bytes()), "object {object} at {offset}");
    }
    assert!(text.contains("/Type /Catalog") && text.contains("/Type /Page "));
    text
}

/// The length of the subsection header line after `xref\n`, newline included.
fn lines_len(xref: &str) -> usize {
    xref["xref\n".len()..].find('\n').unwrap() + 1
}

#[tokio::test]
async fn statements_are_real_pdfs_of_the_operations_accounts_and_none_of_the_others() {
    let api = Api::with(config());
    let login = api.saved_login("Greatday").await;
    let detail = api.all_transactions(&login).await;
    let accounts = detail["Accounts"].as_array().unwrap();
    let operations: Vec<&Value> = accounts.iter().filter(|a| a["Category"] == "Operations").collect();
    assert!(operations.len() < accounts.len(), "a card at least is no operations account");
    for (option, months) in [(None, 1), (Some("MostRecent"), 1), (Some("Months3"), 3), (Some("Months12"), 12)] {
        let mut body = json!({"RequestId": login.request_id});
        if let Some(option) = option {
            body["NumberOfStatements"] = json!(option);
        }
        let (_, reply) = api.banking(STATEMENTS, body).await;
        assert_eq!(reply.0, 200, "{}", reply.1);
        let by_account = reply.1["StatementsByAccount"].as_array().unwrap();
        // Every account, in the order of the detail, as the service lists them.
        let numbers = |list: &[Value], key: &str| list.iter().map(|item| item[key].clone()).collect::<Vec<_>>();
        assert_eq!(numbers(by_account, "AccountNumber"), numbers(accounts, "AccountNumber"));
        let mut unique = HashSet::new();
        for (statements, account) in by_account.iter().zip(accounts) {
            assert_eq!(statements["AccountNumber"], account["AccountNumber"]);
            let list = statements["Statements"].as_array().unwrap();
            if account["Category"] != "Operations" {
                assert!(list.is_empty(), "{account}: listed with no statements");
                continue;
            }
            assert_eq!(list.len(), months);
            for (index, statement) in list.iter().enumerate() {
                assert!(is_guid(&statement["UniqueId"]));
                assert!(unique.insert(statement["UniqueId"].clone()));
                assert_eq!(statement["FileType"], "PDF", "as the reference writes it");
                let unique_id = text(&statement["UniqueId"]);
                assert!(
                    unique_id.len() == 32 && unique_id.chars().all(|c| c.is_ascii_digit() || c.is_ascii_uppercase()),
                    "UniqueId is 32 upper-case hex digits: {unique_id}"
                );
                let pdf = base64::engine::general_purpose::STANDARD.decode(text(&statement["Base64Bytes"])).unwrap();
                let content = check_pdf(&pdf);
                assert!(content.contains(text(&account["AccountNumber"])));
                if index == 0 {
                    assert!(content.contains("October 2026"), "the most recent month first");
                }
            }
        }
    }
    let chequing = operations[0]["Id"].clone();
    let (_, reply) =
        api.banking(STATEMENTS, json!({"RequestId": login.request_id, "AccountsFilter": [chequing]})).await;
    assert_eq!(reply.1["StatementsByAccount"].as_array().unwrap().len(), 1);
    let reply = api.post(STATEMENTS, json!({"RequestId": login.request_id, "NumberOfStatements": "Months6"})).await;
    assert_error(&reply, 401, "INVALID_REQUEST");
    assert_message_names(&reply, "NumberOfStatements");
}

// ---- DeleteCard ----------------------------------------------------------------------------

#[tokio::test]
async fn delete_card_forgets_the_connection_and_a_new_one_gets_a_new_login_id() {
    // Deleted right after the login: CARD_IN_USE is sandbox_recorded.rs's subject.
    let api = Api::with(SandboxConfig { card_in_use: std::time::Duration::ZERO, ..config() });
    let unknown =
        api.send(reqwest::Method::DELETE, &format!("BankingServices/DeleteCard/{}", uuid::Uuid::new_v4()), None).await;
    assert_error(&unknown, 401, "INVALID_LOGIN");

    let login = api.saved_login("greatday_nomfa").await;
    let before = api.all_transactions(&login).await;
    let reply =
        api.send(reqwest::Method::DELETE, &format!("BankingServices/DeleteCard/{}", login.login_id), None).await;
    assert_eq!(reply.0, 200, "{}", reply.1);
    assert_eq!(
        reply.1,
        json!({"HttpStatusCode": 200, "Message": format!("All of the information about LoginId {} has been removed", login.login_id)})
    );
    assert_error(&api.cached(&login.login_id).await, 401, "INVALID_LOGIN");
    let gone = api.post(DETAIL, json!({"RequestId": login.request_id})).await;
    assert_error(&gone, 400, "SESSION_NONEXISTENT");
    let again =
        api.send(reqwest::Method::DELETE, &format!("BankingServices/DeleteCard/{}", login.login_id), None).await;
    assert_error(&again, 401, "INVALID_LOGIN");

    // Connecting again is a new connection, with a LoginId of its own, as on the service
    // (docs/sandbox.md#lastrefresh-loginids-and-languages); the deleted one stays unknown.
    let back = api.saved_login("greatday_nomfa").await;
    assert_ne!(back.login_id, login.login_id, "a new LoginId");
    assert_eq!(api.cached(&back.login_id).await.0, 200);
    assert_error(&api.cached(&login.login_id).await, 401, "INVALID_LOGIN");
    let after = api.all_transactions(&back).await;
    assert_eq!(after["Login"]["Id"], json!(back.login_id));
    assert_ne!(before["Login"]["Id"], after["Login"]["Id"]);
}

// ---- attributes ----------------------------------------------------------------------------

const PACKAGES: [(&str, &[&str]); 4] = [
    (
        "GetIncomeAttributes",
        &[
            "sum_employer_income",
            "count_employer_income",
            "avg_employer_income",
            "count_employers",
            "days_since_last_employer_income",
            "sum_government_income",
            "avg_monthly_deposit",
            "sum_deposits_90_days",
        ],
    ),
    (
        "GetCreditRiskAttributes",
        &[
            "count_nsf",
            "count_nsf_90_days",
            "sum_nsf_fees",
            "count_negative_balance",
            "balance_min",
            "balance_max",
            "balance_current",
            "sum_loan_payments",
            "count_loan_payments",
        ],
    ),
    (
        "GetUserAnalysisAttributes",
        &[
            "account_age_days",
            "count_accounts",
            "count_transactions",
            "avg_monthly_deposit",
            "avg_monthly_withdrawal",
            "sum_bill_payments",
            "sum_credit_card_payments",
            "balance_current",
        ],
    ),
    (
        "GetLendingAttributes",
        &[
            "balance_current",
            "balance_min",
            "count_nsf",
            "sum_employer_income",
            "avg_monthly_deposit",
            "avg_monthly_withdrawal",
            "sum_loan_payments",
            "sum_withdrawals_90_days",
            "days_since_last_employer_income",
        ],
    ),
];

fn all_names() -> Vec<&'static str> {
    attribute_catalogue().iter().map(|(name, _)| *name).collect()
}

/// Logs in, fetches account detail once (so attributes are available) and returns the detail.
async fn prepared(api: &Api, username: &str) -> (Login, Value) {
    let login = api.saved_login(username).await;
    let detail = api.all_transactions(&login).await;
    (login, detail)
}

/// Repeats an attributes call until it stops answering 202.
async fn settle(api: &Api, login: &Login, method: reqwest::Method, op: &str, body: Option<Value>) -> Reply {
    for _ in 0..50 {
        let path =
            if op.is_empty() { Api::attributes_path(login) } else { format!("{}/{op}", Api::attributes_path(login)) };
        let reply = api.send(method.clone(), &path, body.clone()).await;
        if reply.0 != 202 {
            return reply;
        }
    }
    panic!("attributes pending forever")
}

#[test]
fn the_catalogue_and_packages_are_exposed() {
    let catalogue = attribute_catalogue();
    assert_eq!(catalogue.len(), 24);
    assert!(catalogue.iter().all(|(_, description)| !description.is_empty()));
    let packages = attribute_packages();
    assert_eq!(packages.len(), 5);
    for ((operation, names), (expected_operation, expected)) in packages.iter().zip(PACKAGES) {
        assert_eq!(*operation, expected_operation);
        assert_eq!(names.as_slice(), expected);
    }
    assert_eq!(packages[4], ("GetAllAttributes", all_names()));
}

#[tokio::test]
async fn attributes_wait_for_account_detail_then_have_their_own_pending_phase() {
    let api = Api::with(SandboxConfig { pending_polls: 1, tier2: true, ..SandboxConfig::default() });
    let login = api.saved_login("greatday_nomfa").await;
    let custom = json!({"MostRecentCached": true, "Attributes": {"Card": ["count_nsf"]}});
    for _ in 0..3 {
        for reply in [api.use_case(&login, "GetIncomeAttributes").await, api.custom(&login, custom.clone()).await] {
            assert_eq!(reply.0, 202);
            assert_eq!(reply.1["FlinksCode"], "OPERATION_PENDING");
            assert_eq!(reply.1["Links"], json!([]), "no Async link: repeat the request");
            assert_eq!(reply.1["RequestId"], login.request_id.as_str());
        }
    }
    // A detail call still pending does not count.
    assert_eq!(api.post(DETAIL, json!({"RequestId": login.request_id})).await.0, 202);
    assert_eq!(api.use_case(&login, "GetIncomeAttributes").await.0, 202);
    assert_eq!(api.post(DETAIL, json!({"RequestId": login.request_id})).await.0, 200);
    // Now each attributes operation goes through its own pending phase.
    assert_eq!(api.use_case(&login, "GetIncomeAttributes").await.0, 202);
    assert_eq!(api.use_case(&login, "GetIncomeAttributes").await.0, 200);
    assert_eq!(api.custom(&login, custom.clone()).await.0, 202);
    assert_eq!(api.custom(&login, custom.clone()).await.0, 200);
    // Another RequestId of the same login waits for its own account detail.
    let cached = api.cached(&login.login_id).await;
    let other =
        Login { login_id: login.login_id.clone(), request_id: cached.1["RequestId"].as_str().unwrap().to_owned() };
    assert_eq!(api.use_case(&other, "GetIncomeAttributes").await.0, 202);
    let (_, done) = api.banking(DETAIL, json!({"RequestId": other.request_id})).await;
    assert_eq!(done.0, 200);
    assert_eq!(api.use_case(&other, "GetIncomeAttributes").await.0, 202);
    assert_eq!(api.use_case(&other, "GetIncomeAttributes").await.0, 200);
}

#[tokio::test]
async fn use_case_operations_answer_exactly_their_package() {
    for tier2 in [false, true] {
        let api = Api::with(SandboxConfig { tier2, ..config() });
        let (login, _) = prepared(&api, "greatday_nomfa").await;
        for (operation, names) in PACKAGES {
            let reply = api.use_case(&login, operation).await;
            assert_eq!(reply.0, 200, "{operation}: {}", reply.1);
            let body = reply.1.as_object().unwrap();
            let keys: BTreeSet<&str> = body.keys().map(String::as_str).collect();
            assert_eq!(keys, BTreeSet::from(["Card", "Login", "RequestId", "HttpStatusCode"]));
            let card = body["Card"].as_object().unwrap();
            let mut expected: BTreeSet<&str> = names.iter().copied().collect();
            expected.insert("Id");
            assert_eq!(card.keys().map(String::as_str).collect::<BTreeSet<_>>(), expected);
            assert_eq!(card["Id"], login.login_id.as_str(), "the group's Id is the LoginId");
            assert_eq!(body["HttpStatusCode"], 200);
            assert_eq!(body["Login"]["Id"], login.login_id.as_str());
        }
        let all = api.use_case(&login, "GetAllAttributes").await;
        if tier2 {
            assert_eq!(all.0, 200);
            let names: BTreeSet<&str> =
                all.1["Card"].as_object().unwrap().keys().map(String::as_str).filter(|key| *key != "Id").collect();
            assert_eq!(names, all_names().into_iter().collect());
        } else {
            assert_error(&all, 401, "ACCESS_DENIED");
            assert_message_names(&all, "Tier 2");
        }
        for business in ["GetBusinessAnalysisAttributes", "GetAllBusinessAttributes"] {
            assert_error(&api.use_case(&login, business).await, 405, "METHOD_NOT_AVAILABLE");
        }
        assert_error(&api.use_case(&login, "GetEverything").await, 404, "INVALID_REQUEST");
        let stranger = Login { login_id: uuid::Uuid::new_v4().to_string(), request_id: login.request_id.clone() };
        assert_error(&api.use_case(&stranger, "GetIncomeAttributes").await, 400, "INVALID_REQUEST");
        let nowhere = Login { login_id: login.login_id.clone(), request_id: uuid::Uuid::new_v4().to_string() };
        assert_error(&api.use_case(&nowhere, "GetIncomeAttributes").await, 400, "SESSION_NONEXISTENT");
    }
}

#[tokio::test]
async fn custom_attribute_requests_are_refused_as_the_documentation_lists() {
    let api = Api::with(SandboxConfig { tier2: true, ..config() });
    let (login, detail) = prepared(&api, "greatday_nomfa").await;
    let card = json!({"Card": ["count_nsf"]});
    let unknown = "00000000-0000-0000-0000-000000000000";
    let known = text(&detail["Accounts"][0]["Id"]).to_owned();
    let cases = [
        (json!({"MostRecentCached": true}), "At least a single attribute"),
        (json!({"Attributes": {}}), "At least a single attribute"),
        (json!({"Attributes": {"Card": []}}), "At least a single attribute"),
        (json!({"Attributes": ["count_nsf"]}), "Attributes"),
        (json!({"Attributes": {"Card": ["count_nsf", "Count_NSF"]}}), "Count_NSF"),
        (json!({"Attributes": {"Card": ["no_such_thing"]}}), "no_such_thing"),
        (json!({"Attributes": {"Risk": ["count_nsf"]}}), "only supported attribute level"),
        (json!({"Attributes": card, "Options": {"AttributesDetail": ["bogus_detail"]}}), "bogus_detail"),
        (json!({"Attributes": card, "AttributesDetail": ["balance_min"]}), "AttributesDetail"),
        (json!({"Attributes": card, "Filters": {"AccountCategory": "Operations"}}), "AccountCategory"),
        (json!({"Attributes": card, "Filters": {"AccountCategory": ["Credits"]}}), "One or more filters are invalid"),
        (json!({"Attributes": card, "Filters": {"Currency": ["CAD"]}}), "One or more filters are invalid"),
        (json!({"Attributes": card, "AccountFilter": {"AccountID": [unknown]}}), unknown),
        (json!({"Attributes": card, "Options": {"AccountFilter": [known, unknown]}}), unknown),
        (json!({"Attributes": card, "AccountFilter": {"AccountID": []}}), "At least one accountId"),
        (json!({"Attributes": card, "AccountFilter": {}}), "At least one accountId"),
        (json!({"Attributes": card, "Options": {"AccountFilter": []}}), "At least one accountId"),
    ];
    for (body, named) in cases {
        let reply = api.custom(&login, body.clone()).await;
        assert_error(&reply, 400, "INVALID_REQUEST");
        assert!(reply.1["Message"].as_str().unwrap().contains(named), "{body}: {}", reply.1);
    }
    let stranger = Login { login_id: uuid::Uuid::new_v4().to_string(), request_id: login.request_id.clone() };
    let reply = api.custom(&stranger, json!({"Attributes": card})).await;
    assert_error(&reply, 400, "INVALID_REQUEST");
    // MostRecentCached is accepted, not required.
    for body in [json!({"Attributes": card}), json!({"Attributes": card, "MostRecentCached": true})] {
        assert_eq!(settle(&api, &login, reqwest::Method::POST, "", Some(body)).await.0, 200);
    }
}

#[tokio::test]
async fn the_custom_post_needs_a_tier2_package_as_get_all_attributes_does() {
    let api = Api::with(config());
    let (login, _) = prepared(&api, "greatday_nomfa").await;
    let body = json!({"Attributes": {"Card": ["count_nsf"]}});
    let reply = api.custom(&login, body.clone()).await;
    assert_error(&reply, 401, "ACCESS_DENIED");
    assert_message_names(&reply, "Tier 2");
    let all = api.use_case(&login, "GetAllAttributes").await;
    assert_error(&all, 401, "ACCESS_DENIED");
    // A use-case package answers.
    assert_eq!(settle(&api, &login, reqwest::Method::GET, "GetIncomeAttributes", None).await.0, 200);
}

#[tokio::test]
async fn the_limit_days_header_limits_the_transactions_counted() {
    let api = Api::with(SandboxConfig { tier2: true, ..config() });
    let (login, detail) = prepared(&api, "greatday_nomfa").await;
    let (_, t) = scope(&detail, None, None);
    let path = Api::attributes_path(&login);
    let body = json!({"Attributes": {"Card": ["count_transactions"]}, "AttributesDetail": ["count_transactions"]});
    for days in [1_i64, 30, 365] {
        let reply = api.post_with(&path, &[("limitDays", &days.to_string())], body.clone()).await;
        assert_eq!(reply.0, 200, "{}", reply.1);
        let within = t.iter().filter(|tx| tx.age() < days).count();
        assert_eq!(reply.1["Card"]["count_transactions"], within, "limitDays {days}");
        let listed = reply.1["Card"][DETAIL_KEY][0]["Transactions"].as_array().unwrap();
        assert!(listed.iter().all(|item| days_before_as_of(&text(&item["Date"]).replace('/', "-")) < days));
    }
    let reply =
        api.send_with(reqwest::Method::GET, &format!("{path}/GetIncomeAttributes"), &[("limitDays", "30")], None).await;
    assert_eq!(reply.0, 200, "a use-case GET takes it too: {}", reply.1);
    for bad in ["0", "366", "ten", "-1"] {
        let reply = api.post_with(&path, &[("limitDays", bad)], body.clone()).await;
        assert_error(&reply, 400, "INVALID_REQUEST");
        assert_message_names(&reply, "limitDays");
    }
}

/// One account detail transaction, as the test reads it.
#[derive(Clone, Debug)]
struct Tx {
    id: String,
    account: String,
    date: String,
    description: String,
    debit: Option<i64>,
    credit: Option<i64>,
    balance: i64,
}

impl Tx {
    fn age(&self) -> i64 {
        days_before_as_of(&self.date)
    }
}

/// The included accounts (their Balance.Current) and T, from account detail with Days365.
fn scope(detail: &Value, categories: Option<&[&str]>, ids: Option<&[String]>) -> (Vec<i64>, Vec<Tx>) {
    let mut currents = Vec::new();
    let mut all = Vec::new();
    for account in detail["Accounts"].as_array().unwrap() {
        let id = text(&account["Id"]).to_owned();
        if categories.is_some_and(|c| !c.contains(&text(&account["Category"]))) {
            continue;
        }
        if ids.is_some_and(|ids| !ids.contains(&id)) {
            continue;
        }
        currents.push(cents(&account["Balance"]["Current"]));
        for t in account["Transactions"].as_array().unwrap() {
            all.push(Tx {
                id: text(&t["Id"]).to_owned(),
                account: id.clone(),
                date: text(&t["Date"]).to_owned(),
                description: text(&t["Description"]).to_owned(),
                debit: cents_or_none(&t["Debit"]),
                credit: cents_or_none(&t["Credit"]),
                balance: cents(&t["Balance"]),
            });
        }
    }
    (currents, all)
}

/// "First" is by date, then Id.
fn first(rows: Vec<&Tx>) -> Option<&Tx> {
    rows.into_iter().min_by(|a, b| (&a.date, &a.id).cmp(&(&b.date, &b.id)))
}

/// The expected value (as JSON) and the Ids behind it, of one attribute, from its definition.
fn expected(name: &str, currents: &[i64], t: &[Tx]) -> (Value, BTreeSet<String>) {
    let money = |cents: i64| json!(cents as f64 / 100.0);
    let ids = |rows: Vec<&Tx>| rows.iter().map(|tx| tx.id.clone()).collect::<BTreeSet<_>>();
    let rows = |test: &dyn Fn(&Tx) -> bool| t.iter().filter(|tx| test(tx)).collect::<Vec<_>>();
    let average = |sum: i64, count: i64| money((sum as f64 / count as f64).round() as i64);
    let payroll = |tx: &Tx| tx.credit.is_some() && tx.description.starts_with("PAYROLL DEPOSIT ");
    let government = |tx: &Tx| tx.credit.is_some() && tx.description.starts_with("GOVT ");
    // The word NSF, not the letters: E-TRANSFER is not an NSF event.
    let nsf = |tx: &Tx| tx.description.to_lowercase().split(|c: char| !c.is_alphanumeric()).any(|word| word == "nsf");
    let recent = |tx: &Tx| tx.age() <= 89;
    let debit_starting = |prefix: &'static str| move |tx: &Tx| tx.debit.is_some() && tx.description.starts_with(prefix);
    let credits = |rows: &[&Tx]| rows.iter().filter_map(|tx| tx.credit).sum::<i64>();
    let debits = |rows: &[&Tx]| rows.iter().filter_map(|tx| tx.debit).sum::<i64>();
    let none = || json!("NONE_DETECTED");
    match name {
        "account_age_days" => match first(rows(&|_| true)) {
            Some(tx) => (json!(tx.age()), ids(vec![tx])),
            None => (none(), BTreeSet::new()),
        },
        "count_accounts" => (json!(currents.len()), BTreeSet::new()),
        "count_transactions" => (json!(t.len()), ids(rows(&|_| true))),
        "balance_current" => (money(currents.iter().sum()), BTreeSet::new()),
        "balance_max" | "balance_min" => {
            let extreme = if name == "balance_max" {
                t.iter().map(|tx| tx.balance).max()
            } else {
                t.iter().map(|tx| tx.balance).min()
            };
            match extreme {
                Some(value) => (money(value), ids(first(rows(&|tx| tx.balance == value)).into_iter().collect())),
                None => (none(), BTreeSet::new()),
            }
        }
        "count_negative_balance" => {
            let r = rows(&|tx| tx.balance < 0);
            (json!(r.len()), ids(r))
        }
        "count_nsf" => {
            let r = rows(&nsf);
            (json!(r.len()), ids(r))
        }
        "count_nsf_90_days" => {
            let r = rows(&|tx| nsf(tx) && recent(tx));
            (json!(r.len()), ids(r))
        }
        "sum_nsf_fees" => {
            let r = rows(&nsf);
            (money(debits(&r)), ids(r))
        }
        "avg_monthly_deposit" => (average(credits(&rows(&|_| true)), 12), ids(rows(&|tx| tx.credit.is_some()))),
        "avg_monthly_withdrawal" => (average(debits(&rows(&|_| true)), 12), ids(rows(&|tx| tx.debit.is_some()))),
        "sum_deposits_90_days" => {
            let r = rows(&|tx| recent(tx) && tx.credit.is_some());
            (money(credits(&r)), ids(r))
        }
        "sum_withdrawals_90_days" => {
            let r = rows(&|tx| recent(tx) && tx.debit.is_some());
            (money(debits(&r)), ids(r))
        }
        "sum_employer_income" => {
            let r = rows(&payroll);
            (money(credits(&r)), ids(r))
        }
        "count_employer_income" => {
            let r = rows(&payroll);
            (json!(r.len()), ids(r))
        }
        "avg_employer_income" => {
            let r = rows(&payroll);
            if r.is_empty() {
                (none(), BTreeSet::new())
            } else {
                (average(credits(&r), r.len() as i64), ids(r))
            }
        }
        "count_employers" => {
            let r = rows(&payroll);
            let employers: HashSet<&str> = r.iter().map(|tx| &tx.description["PAYROLL DEPOSIT ".len()..]).collect();
            (json!(employers.len()), ids(r))
        }
        "days_since_last_employer_income" => {
            let r = rows(&payroll);
            let latest = r.iter().map(|tx| tx.date.clone()).max();
            match latest {
                Some(date) => {
                    let on_day = first(r.into_iter().filter(|tx| tx.date == date).collect()).unwrap();
                    (json!(days_before_as_of(&date)), ids(vec![on_day]))
                }
                None => (none(), BTreeSet::new()),
            }
        }
        "sum_government_income" => {
            let r = rows(&government);
            if r.is_empty() {
                (none(), BTreeSet::new())
            } else {
                (money(credits(&r)), ids(r))
            }
        }
        "sum_loan_payments" => {
            let r = rows(&debit_starting("LOAN PAYMENT"));
            (money(debits(&r)), ids(r))
        }
        "count_loan_payments" => {
            let r = rows(&debit_starting("LOAN PAYMENT"));
            (json!(r.len()), ids(r))
        }
        "sum_credit_card_payments" => {
            let r = rows(&debit_starting("CREDIT CARD PAYMENT"));
            (money(debits(&r)), ids(r))
        }
        "sum_bill_payments" => {
            let r = rows(&debit_starting("BILL PAYMENT"));
            (money(debits(&r)), ids(r))
        }
        other => panic!("no expectation for {other}"),
    }
}

/// Compares one group of an attributes answer with the definitions, and its AttributesDetail
/// (when `detailed`) with the transactions behind each value.
fn check_group(group: &Value, names: &[&str], currents: &[i64], t: &[Tx], detailed: bool, label: &str) {
    let by_id: HashMap<&str, &Tx> = t.iter().map(|tx| (tx.id.as_str(), tx)).collect();
    for name in names {
        let (value, behind) = expected(name, currents, t);
        let got = &group[*name];
        if value.is_string() {
            assert_eq!(got, &value, "{label}: {name}");
        } else if value.is_u64() || value.is_i64() {
            assert!(got.is_u64() || got.is_i64(), "{label}: {name} is an integer: {got}");
            assert_eq!(got, &value, "{label}: {name}");
        } else {
            assert_eq!(cents(got), cents(&value), "{label}: {name}");
        }
        if !detailed {
            continue;
        }
        let detail = group[DETAIL_KEY]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["Attribute"] == *name)
            .unwrap_or_else(|| panic!("{label}: no {DETAIL_KEY} for {name}"));
        let listed = detail["Transactions"].as_array().unwrap();
        let ids: BTreeSet<String> = listed.iter().map(|tx| text(&tx["TransactionId"]).to_owned()).collect();
        assert_eq!(ids.len(), listed.len(), "{label}: {name} lists each once");
        assert_eq!(ids, behind, "{label}: what is behind {name}");
        for item in listed {
            let tx = by_id[text(&item["TransactionId"])];
            assert_eq!(item["AccountId"], tx.account.as_str());
            assert_eq!(text(&item["Date"]), tx.date.replace('-', "/"));
            assert_eq!(item["Description"], tx.description.as_str());
            assert_eq!(cents_or_none(&item["Debit"]), tx.debit);
            assert_eq!(cents_or_none(&item["Credit"]), tx.credit);
            assert_eq!(cents(&item["Balance"]), tx.balance, "{label}: the balance after it");
        }
    }
}

/// `Filters.AccountCategory` and `Options.AccountFilter`, each when given.
type Restriction<'a> = (Option<&'a [&'a str]>, Option<&'a [String]>);

/// The detail list's key, as the newest documentation spells it (docs/protocol.md#attributes).
const DETAIL_KEY: &str = "AttributeDetails";

#[tokio::test]
async fn every_attribute_matches_its_definition() {
    let api = Api::with(SandboxConfig { tier2: true, ..config() });
    let names = all_names();
    let mut none_detected = HashSet::new();
    for (username, login) in open_users(&api).await {
        let detail = api.all_transactions(&login).await;
        let label = username.as_str();

        // The use-case GETs, over every account.
        let (currents, t) = scope(&detail, None, None);
        for (operation, package) in PACKAGES {
            let reply = settle(&api, &login, reqwest::Method::GET, operation, None).await;
            check_group(&reply.1["Card"], package, &currents, &t, false, label);
            assert!(reply.1["Card"].get(DETAIL_KEY).is_none());
        }
        let all = settle(&api, &login, reqwest::Method::GET, "GetAllAttributes", None).await;
        let fees = t.iter().filter(|tx| tx.description == "NSF FEE").count();
        assert_eq!(all.1["Card"]["count_nsf"], fees, "{label}: NSF events are the NSF fees");
        check_group(&all.1["Card"], &names, &currents, &t, false, label);
        for name in &names {
            if all.1["Card"][*name] == "NONE_DETECTED" {
                none_detected.insert(*name);
            }
        }

        // The custom POST, with filters, in both documented shapes, with every detail.
        let accounts = detail["Accounts"].as_array().unwrap();
        let chequing_and_card: Vec<String> = accounts
            .iter()
            .filter(|a| a["Type"] == "Chequing" || a["Type"] == "CreditCard")
            .map(|a| text(&a["Id"]).to_owned())
            .collect();
        let variants: [Restriction; 4] = [
            (None, None),
            (Some(&["Operations"]), None),
            (None, Some(&chequing_and_card)),
            (Some(&["Operations"]), Some(&chequing_and_card)),
        ];
        for ((categories, ids), documented) in variants.into_iter().flat_map(|v| [(v, false), (v, true)]) {
            let mut body = json!({"Attributes": {"Card": names}});
            if documented {
                body["AttributesDetail"] = json!({"Card": names});
            } else {
                body["MostRecentCached"] = json!(true);
                body["Options"] = json!({"AttributesDetail": names});
            }
            if let Some(categories) = categories {
                body["Filters"] = json!({"AccountCategory": categories});
            }
            if let Some(ids) = ids {
                if documented {
                    body["AccountFilter"] = json!({"AccountID": ids});
                } else {
                    body["Options"]["AccountFilter"] = json!(ids);
                }
            }
            let reply = settle(&api, &login, reqwest::Method::POST, "", Some(body)).await;
            assert_eq!(reply.0, 200, "{}", reply.1);
            let (currents, t) = scope(&detail, categories, ids);
            let label = format!("{username} {categories:?} {ids:?} documented={documented}");
            check_group(&reply.1["Card"], &names, &currents, &t, true, &label);
            assert_eq!(reply.1["HttpStatusCode"], 200);
            assert_eq!(reply.1["RequestId"], login.request_id.as_str());
        }

        // Detail only for the attributes named.
        let body = json!({"Attributes": {"Card": ["count_nsf", "balance_min"]}, "AttributesDetail": ["count_nsf"]});
        let reply = settle(&api, &login, reqwest::Method::POST, "", Some(body)).await;
        let detail_names: Vec<&Value> =
            reply.1["Card"][DETAIL_KEY].as_array().unwrap().iter().map(|d| &d["Attribute"]).collect();
        assert_eq!(detail_names, [&json!("count_nsf")]);
    }
    println!("NONE_DETECTED seen for: {none_detected:?}");
    assert!(none_detected.contains("sum_government_income"), "government income is sometimes absent");
}

#[tokio::test]
async fn attributes_of_an_empty_login_are_none_detected() {
    let api = Api::with(SandboxConfig { banking_transactions: Some(0), tier2: true, ..config() });
    let (login, detail) = prepared(&api, "greatday_nomfa").await;
    let reply = api.use_case(&login, "GetAllAttributes").await;
    let (currents, t) = scope(&detail, None, None);
    assert!(t.is_empty());
    check_group(&reply.1["Card"], &all_names(), &currents, &t, false, "empty");
    for name in [
        "account_age_days",
        "balance_min",
        "balance_max",
        "avg_employer_income",
        "days_since_last_employer_income",
        "sum_government_income",
    ] {
        assert_eq!(reply.1["Card"][name], "NONE_DETECTED", "{name}");
    }
    assert_eq!(reply.1["Card"]["count_transactions"], 0);
    assert_eq!(reply.1["Card"]["sum_nsf_fees"], 0.0);
}

/// The value of `name` folded from the transactions its `AttributesDetail` lists, and nothing
/// else; None for the attributes of the accounts themselves, which list no transaction.
fn from_detail(name: &str, listed: &[&Tx]) -> Option<Value> {
    let money = |cents: i64| json!(cents as f64 / 100.0);
    let average = |sum: i64, count: usize| money((sum as f64 / count as f64).round() as i64);
    let credits = listed.iter().filter_map(|tx| tx.credit).sum::<i64>();
    let debits = listed.iter().filter_map(|tx| tx.debit).sum::<i64>();
    let none = json!("NONE_DETECTED");
    let only = || {
        assert!(listed.len() <= 1, "{name} lists the one transaction behind it");
        listed.first()
    };
    Some(match name {
        "count_accounts" | "balance_current" => return None,
        "count_transactions"
        | "count_negative_balance"
        | "count_nsf"
        | "count_nsf_90_days"
        | "count_employer_income"
        | "count_loan_payments" => json!(listed.len()),
        "account_age_days" | "days_since_last_employer_income" => only().map_or(none, |tx| json!(tx.age())),
        "balance_max" | "balance_min" => only().map_or(none, |tx| money(tx.balance)),
        "sum_nsf_fees"
        | "sum_withdrawals_90_days"
        | "sum_loan_payments"
        | "sum_credit_card_payments"
        | "sum_bill_payments" => money(debits),
        "sum_deposits_90_days" | "sum_employer_income" => money(credits),
        "sum_government_income" if listed.is_empty() => none,
        "sum_government_income" => money(credits),
        "avg_monthly_deposit" => average(credits, 12),
        "avg_monthly_withdrawal" => average(debits, 12),
        "avg_employer_income" if listed.is_empty() => none,
        "avg_employer_income" => average(credits, listed.len()),
        "count_employers" => {
            let employers: HashSet<&str> =
                listed.iter().map(|tx| tx.description.trim_start_matches("PAYROLL DEPOSIT ")).collect();
            json!(employers.len())
        }
        other => panic!("{other}: say how its detail makes its value"),
    })
}

#[tokio::test]
async fn every_attribute_value_is_recomputed_from_its_own_detail() {
    let api = Api::with(SandboxConfig { tier2: true, ..config() });
    let names = all_names();
    for (username, login) in open_users(&api).await {
        let detail = api.all_transactions(&login).await;
        let (_, t) = scope(&detail, None, None);
        let by_id: HashMap<&str, &Tx> = t.iter().map(|tx| (tx.id.as_str(), tx)).collect();
        let body =
            json!({"MostRecentCached": true, "Attributes": {"Card": names}, "Options": {"AttributesDetail": names}});
        let reply = settle(&api, &login, reqwest::Method::POST, "", Some(body)).await;
        assert_eq!(reply.0, 200, "{}", reply.1);
        let card = &reply.1["Card"];
        for name in &names {
            let label = format!("{username}: {name}");
            let entry = card[DETAIL_KEY]
                .as_array()
                .unwrap()
                .iter()
                .find(|entry| entry["Attribute"] == *name)
                .unwrap_or_else(|| panic!("{label}: no {DETAIL_KEY}"));
            let listed: Vec<&Tx> = entry["Transactions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|item| by_id[text(&item["TransactionId"])])
                .collect();
            let got = &card[*name];
            match from_detail(name, &listed) {
                None => assert!(listed.is_empty(), "{label}: an account-level value lists no transaction"),
                Some(value) if value.is_number() && !value.is_f64() => assert_eq!(got, &value, "{label}"),
                Some(value) if value.is_number() => assert_eq!(cents(got), cents(&value), "{label}"),
                Some(value) => assert_eq!(got, &value, "{label}"),
            }
        }
    }
}

//! The sandbox's clock (docs/sandbox.md#the-clock), over real HTTP: `as_of` fixes the data, a
//! moved clock is a sandbox started on the new day, nights post new transactions (some dated
//! back), `RefreshDelta` returns exactly those, balances and `LastRefresh` follow, and the admin
//! API reads and moves the clock behind its token.

use std::collections::{BTreeMap, BTreeSet};

use bankfeed_sandbox::{AsOf, SandboxConfig};
use serde_json::{json, Value};

use crate::common::{Api, DETAIL, INVESTMENTS};

/// A few days past the clock's first day, so that late transactions can post.
const START: &str = "2026-11-26";

fn config(as_of: &str, logins: u32) -> SandboxConfig {
    SandboxConfig { pending_polls: 0, logins, as_of: AsOf::parse(as_of).unwrap(), ..SandboxConfig::default() }
}

impl Api {
    /// GetAccountsDetail of a cached session of `login_id`, with `options`.
    async fn clock_detail_of(&self, login_id: &str, options: Value) -> Value {
        let (status, opened) = self.cached(login_id).await;
        assert_eq!(status, 200, "{opened}");
        let mut body = json!({"RequestId": opened["RequestId"]});
        body.as_object_mut().unwrap().extend(options.as_object().unwrap().clone());
        let (status, answer) = self.post(DETAIL, body).await;
        assert_eq!(status, 200, "{answer}");
        answer
    }

    async fn clock_year_of(&self, login_id: &str) -> Value {
        self.clock_detail_of(login_id, json!({"DaysOfTransactions": "Days365"})).await
    }

    async fn portfolio_of(&self, login_id: &str) -> Value {
        let (_, opened) = self.cached(login_id).await;
        let body = json!({"LoginId": login_id, "RequestId": opened["RequestId"], "MostRecentCached": true});
        let (status, answer) = self.post(INVESTMENTS, body).await;
        assert_eq!(status, 200, "{answer}");
        answer
    }
}

/// Every transaction of an answer by Id.
fn transactions(answer: &Value) -> BTreeMap<String, Value> {
    answer["Accounts"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|account| account["Transactions"].as_array().unwrap().iter())
        .map(|transaction| (transaction["Id"].as_str().unwrap().to_owned(), transaction.clone()))
        .collect()
}

/// Per account, the last transaction posted (the first listed), as `RefreshDelta` takes it.
fn last_held(answer: &Value) -> Value {
    let pairs: Vec<Value> = answer["Accounts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|account| {
            let first = account["Transactions"].as_array().unwrap().first()?;
            Some(json!({"AccountId": account["Id"], "TransactionId": first["Id"]}))
        })
        .collect();
    Value::Array(pairs)
}

#[tokio::test]
async fn a_moved_clock_answers_as_a_sandbox_started_on_its_day() {
    let moved = Api::with(config(START, 3));
    let again = Api::with(config(START, 3));
    let started = Api::with(config("2026-11-29", 3));
    assert_eq!(moved.sandbox.as_of().date(), START);
    let logins = moved.sandbox.login_ids();
    for login_id in &logins {
        assert_eq!(moved.clock_year_of(login_id).await["Accounts"], again.clock_year_of(login_id).await["Accounts"]);
    }
    assert_eq!(moved.sandbox.advance(3).unwrap().date(), "2026-11-29");
    for login_id in &logins {
        assert_eq!(moved.clock_year_of(login_id).await["Accounts"], started.clock_year_of(login_id).await["Accounts"]);
        assert_eq!(moved.portfolio_of(login_id).await["Accounts"], started.portfolio_of(login_id).await["Accounts"]);
    }
}

#[tokio::test]
async fn nights_post_new_transactions_some_late_and_refresh_delta_returns_exactly_them() {
    let api = Api::with(config(START, 16));
    let mut days_late = BTreeSet::new();
    // New transactions RefreshDelta returned dated no later than the transaction it named: the
    // late ones a reader asking by date from the next day on would miss.
    let mut before_the_held = 0;
    for login_id in api.sandbox.login_ids() {
        let before = api.clock_year_of(&login_id).await;
        api.sandbox.advance(3).unwrap();
        let after = api.clock_year_of(&login_id).await;
        let delta = api.clock_detail_of(&login_id, json!({"RefreshDelta": last_held(&before)})).await;
        let (old, new) = (transactions(&before), transactions(&after));
        // What was shown is unchanged (the days that left the year aside).
        for (id, transaction) in &old {
            if transaction["Date"].as_str().unwrap() > "2025-11-29" {
                assert_eq!(new.get(id), Some(transaction), "{id} is kept as it was");
            }
        }
        let posted: BTreeSet<&String> = new.keys().filter(|id| !old.contains_key(*id)).collect();
        assert_eq!(transactions(&delta).keys().collect::<BTreeSet<_>>(), posted, "RefreshDelta: exactly the new");
        for id in posted {
            let date = new[id]["Date"].as_str().unwrap();
            assert!(("2026-11-24"..="2026-11-29").contains(&date), "{date}");
            days_late.insert(date.to_owned());
        }
        for (held, account) in before["Accounts"].as_array().unwrap().iter().zip(delta["Accounts"].as_array().unwrap())
        {
            let Some(held) = held["Transactions"].as_array().unwrap().first() else { continue };
            before_the_held += account["Transactions"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|transaction| transaction["Date"].as_str() <= held["Date"].as_str())
                .count();
        }
        // The balance is the running balance after the last one posted.
        for account in after["Accounts"].as_array().unwrap() {
            if let Some(last) = account["Transactions"].as_array().unwrap().first() {
                assert_eq!(account["Balance"]["Current"], last["Balance"]);
            }
        }
        api.sandbox.reset();
    }
    assert!(days_late.iter().any(|date| date.as_str() < "2026-11-26"), "some post after their date: {days_late:?}");
    assert!(before_the_held > 0, "RefreshDelta returns transactions dated no later than the one it names");
}

#[tokio::test]
async fn last_refresh_and_the_newest_dates_follow_the_clock() {
    let api = Api::with(config(START, 1));
    let login_id = &api.sandbox.login_ids()[0];
    let refreshed = |answer: &Value| answer["Login"]["LastRefresh"].as_str().unwrap().to_owned();
    assert_eq!(refreshed(&api.clock_year_of(login_id).await), "2026-11-26T08:15:42.1234567");
    api.sandbox.advance(7).unwrap();
    assert_eq!(refreshed(&api.clock_year_of(login_id).await), "2026-12-03T08:15:42.1234567");
    let newest =
        transactions(&api.clock_year_of(login_id).await).values().map(|t| t["Date"].to_string()).max().unwrap();
    assert!(newest.as_str() <= "\"2026-12-03\"" && newest.as_str() > "\"2026-11-26\"", "{newest}");
}

#[test]
fn a_bad_advance_says_the_rule_and_leaves_the_clock() {
    let api = Api::with(config(START, 0));
    assert_eq!(api.sandbox.advance(0).unwrap_err(), "must be a whole number of days, 1 or more, got 0");
    assert!(api.sandbox.advance(5_000).unwrap_err().contains("2036-11-20"));
    assert_eq!(api.sandbox.as_of().date(), START);
    assert!(AsOf::parse("2026-11-19").unwrap_err().contains("from 2026-11-20"));
}

#[tokio::test]
async fn the_admin_api_reads_and_moves_the_clock_behind_its_token() {
    let token = "clock-test-token-0123456789abcdef";
    let api = Api::with(SandboxConfig { admin_token: Some(token.to_owned()), ..config(START, 0) });
    let url = format!("{}/_sandbox/clock", api.sandbox.url());
    let call = |body: Option<&str>, bearer: &str| {
        let request = match body {
            Some(body) => api.http.post(&url).header("content-type", "application/json").body(body.to_owned()),
            None => api.http.get(&url),
        };
        let request = request.header("authorization", format!("Bearer {bearer}"));
        async move {
            let response = request.send().await.unwrap();
            let status = response.status().as_u16();
            (status, serde_json::from_slice::<Value>(&response.bytes().await.unwrap()).unwrap())
        }
    };
    assert_eq!(call(None, token).await, (200, json!({"as_of": START})));
    assert_eq!(call(Some(r#"{"days": 1}"#), "wrong").await.0, 401);
    assert_eq!(api.sandbox.as_of().date(), START);
    assert_eq!(call(Some(r#"{"days": 2}"#), token).await, (200, json!({"as_of": "2026-11-28"})));
    let (status, refused) = call(Some(r#"{"days": -1}"#), token).await;
    assert_eq!((status, refused["FlinksCode"].as_str()), (400, Some("INVALID_REQUEST")));
    assert!(refused["Message"].as_str().unwrap().starts_with("days must be"), "{refused}");
    assert_eq!(api.sandbox.as_of().date(), "2026-11-28");
}

//! The sandbox's generated data and the operations that serve it (account detail, summary,
//! statements, investments, attributes, DeleteCard), driven over real HTTP. Every attribute is
//! recomputed here, independently, from the account detail payload.

use std::collections::{BTreeSet, HashMap, HashSet};

use bankfeed_sandbox::{attribute_catalogue, attribute_packages, users, PendingOperations, SandboxConfig};
use base64::Engine as _;
use serde_json::{json, Value};

use crate::common::{answers_for, assert_error, assert_message_names, user, Api, Reply};
use crate::common::{AUTHORIZE, DETAIL, INSTITUTION, INVESTMENTS, STATEMENTS, SUMMARY};

mod accounts;
mod attributes;
mod delete;
mod determinism;
mod investments;
mod pending;
mod sizes;
mod statements;

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

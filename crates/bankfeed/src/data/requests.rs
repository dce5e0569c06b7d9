//! Options of the banking data operations (docs/protocol.md#account-detail-summary-and-statements),
//! checked before they are sent.

use serde_json::{json, Map, Value};

use crate::error::Error;

/// GetAccountsDetail options; `None` leaves the service's default.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AccountsDetailOptions {
    pub with_transactions: Option<bool>,
    /// `Days90` or `Days365`.
    pub days: Option<String>,
    pub with_account_identity: Option<bool>,
    pub with_kyc: Option<bool>,
    pub accounts_filter: Vec<String>,
    pub with_details_and_banking_statements: Option<bool>,
    /// `MostRecent`, `Months3` or `Months12`.
    pub number_of_banking_statements: Option<String>,
    /// `DateFrom` and `DateTo`, `YYYY-MM-DD`: the transactions of those days only
    /// (docs/protocol.md#account-detail-options).
    pub date_from: Option<String>,
    pub date_to: Option<String>,
    /// `RefreshDelta`: (AccountId, the last TransactionId the caller holds of it); that account
    /// answers only the transactions after it.
    pub refresh_delta: Vec<(String, String)>,
}

/// GetAccountsSummary options.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AccountsSummaryOptions {
    pub with_balance: Option<bool>,
    pub with_account_identity: Option<bool>,
}

/// GetStatements options.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StatementsOptions {
    /// `MostRecent`, `Months3` or `Months12`.
    pub number_of_statements: Option<String>,
    pub accounts_filter: Vec<String>,
}

const DAYS: [&str; 2] = ["Days90", "Days365"];
const PERIODS: [&str; 3] = ["MostRecent", "Months3", "Months12"];

fn one_of(field: &'static str, value: Option<&String>, allowed: &[&str]) -> Result<(), Error> {
    match value {
        Some(v) if !allowed.contains(&v.as_str()) => {
            Err(Error::config(field, format!("must be one of {allowed:?}, got {}", crate::config::shown(v))))
        }
        _ => Ok(()),
    }
}

fn insert<T: Into<Value>>(body: &mut Map<String, Value>, key: &str, value: Option<T>) {
    if let Some(value) = value {
        body.insert(key.to_owned(), value.into());
    }
}

impl AccountsDetailOptions {
    pub fn validate(&self) -> Result<(), Error> {
        one_of("days", self.days.as_ref(), &DAYS)?;
        one_of("number_of_banking_statements", self.number_of_banking_statements.as_ref(), &PERIODS)?;
        let from = date("date_from", self.date_from.as_ref())?;
        let to = date("date_to", self.date_to.as_ref())?;
        if let (Some(from), Some(to)) = (from, to) {
            if from > to {
                return Err(Error::config(
                    "date_from",
                    format!("must not be later than date_to, got {} and {}", shown_date(from), shown_date(to)),
                ));
            }
        }
        for (account_id, transaction_id) in &self.refresh_delta {
            if account_id.trim().is_empty() || transaction_id.trim().is_empty() {
                return Err(Error::config(
                    "refresh_delta",
                    "maps an account id to the id of its last transaction held; neither may be empty",
                ));
            }
        }
        Ok(())
    }

    pub(crate) fn body(&self, request_id: &str) -> Value {
        let mut body = Map::new();
        body.insert("RequestId".into(), json!(request_id));
        insert(&mut body, "WithTransactions", self.with_transactions);
        insert(&mut body, "DaysOfTransactions", self.days.clone());
        insert(&mut body, "WithAccountIdentity", self.with_account_identity);
        insert(&mut body, "WithKYC", self.with_kyc);
        if !self.accounts_filter.is_empty() {
            body.insert("AccountsFilter".into(), json!(self.accounts_filter));
        }
        insert(&mut body, "WithDetailsAndBankingStatements", self.with_details_and_banking_statements);
        insert(&mut body, "NumberOfBankingStatements", self.number_of_banking_statements.clone());
        insert(&mut body, "DateFrom", self.date_from.clone());
        insert(&mut body, "DateTo", self.date_to.clone());
        if !self.refresh_delta.is_empty() {
            let delta: Vec<Value> = self
                .refresh_delta
                .iter()
                .map(|(account, transaction)| json!({"AccountId": account, "TransactionId": transaction}))
                .collect();
            body.insert("RefreshDelta".into(), Value::Array(delta));
        }
        Value::Object(body)
    }
}

/// A date option: `YYYY-MM-DD` (days since the epoch), checked before anything is sent.
fn date(field: &'static str, value: Option<&String>) -> Result<Option<i32>, Error> {
    let Some(text) = value else { return Ok(None) };
    let well_formed = text.len() == 10 && text.as_bytes().get(4) == Some(&b'-');
    match crate::data::dates::parse_date(text).filter(|_| well_formed) {
        Some(days) => Ok(Some(days)),
        None => {
            Err(Error::config(field, format!("must be a date written YYYY-MM-DD, got {}", crate::config::shown(text))))
        }
    }
}

fn shown_date(days: i32) -> String {
    let (year, month, day) = crate::data::dates::ymd(days);
    format!("{year:04}-{month:02}-{day:02}")
}

impl AccountsSummaryOptions {
    pub(crate) fn body(&self, request_id: &str) -> Value {
        let mut body = Map::new();
        body.insert("RequestId".into(), json!(request_id));
        insert(&mut body, "WithBalance", self.with_balance);
        insert(&mut body, "WithAccountIdentity", self.with_account_identity);
        Value::Object(body)
    }
}

impl StatementsOptions {
    pub fn validate(&self) -> Result<(), Error> {
        one_of("number_of_statements", self.number_of_statements.as_ref(), &PERIODS)
    }

    pub(crate) fn body(&self, request_id: &str) -> Value {
        let mut body = Map::new();
        body.insert("RequestId".into(), json!(request_id));
        insert(&mut body, "NumberOfStatements", self.number_of_statements.clone());
        if !self.accounts_filter.is_empty() {
            body.insert("AccountsFilter".into(), json!(self.accounts_filter));
        }
        Value::Object(body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_given_options_are_sent() {
        let options =
            AccountsDetailOptions { with_transactions: Some(true), days: Some("Days365".into()), ..Default::default() };
        options.validate().unwrap();
        assert_eq!(
            options.body("r"),
            json!({"RequestId": "r", "WithTransactions": true, "DaysOfTransactions": "Days365"})
        );
        assert_eq!(AccountsSummaryOptions::default().body("r"), json!({"RequestId": "r"}));
    }

    #[test]
    fn enumerated_options_name_their_field() {
        let bad = AccountsDetailOptions { days: Some("Days30".into()), ..Default::default() };
        assert!(matches!(bad.validate(), Err(Error::Config { field: "days", .. })));
        let bad = StatementsOptions { number_of_statements: Some("Months6".into()), ..Default::default() };
        assert!(matches!(bad.validate(), Err(Error::Config { field: "number_of_statements", .. })));
    }

    #[test]
    fn date_options_are_checked_and_sent_as_the_service_names_them() {
        let options = AccountsDetailOptions {
            date_from: Some("2026-09-01".into()),
            date_to: Some("2026-09-30".into()),
            refresh_delta: vec![("a".into(), "t".into())],
            ..Default::default()
        };
        options.validate().unwrap();
        assert_eq!(
            options.body("r"),
            json!({"RequestId": "r", "DateFrom": "2026-09-01", "DateTo": "2026-09-30",
                   "RefreshDelta": [{"AccountId": "a", "TransactionId": "t"}]})
        );
        for (from, to, field) in [
            (Some("2026/09/01"), None, "date_from"),
            (None, Some("yesterday"), "date_to"),
            (Some("2026-10-01"), Some("2026-09-30"), "date_from"),
        ] {
            let bad = AccountsDetailOptions {
                date_from: from.map(Into::into),
                date_to: to.map(Into::into),
                ..Default::default()
            };
            match bad.validate() {
                Err(Error::Config { field: named, .. }) => assert_eq!(named, field),
                other => panic!("{other:?}"),
            }
        }
        let bad = AccountsDetailOptions { refresh_delta: vec![("a".into(), " ".into())], ..Default::default() };
        assert!(matches!(bad.validate(), Err(Error::Config { field: "refresh_delta", .. })));
    }
}

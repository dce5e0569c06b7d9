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
        one_of("number_of_banking_statements", self.number_of_banking_statements.as_ref(), &PERIODS)
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
        Value::Object(body)
    }
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
}

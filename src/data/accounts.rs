//! Banking payloads: GetAccountsDetail, GetAccountsSummary and GetStatements (service-notes.md).

use serde::Deserialize;

use super::de;
use crate::authorize::{Institution, Login};

/// GetAccountsDetail and GetAccountsSummary share their account shape.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct Accounts {
    #[serde(deserialize_with = "de::list")]
    pub accounts: Vec<BankAccount>,
    #[serde(deserialize_with = "de::lenient")]
    pub login: Option<Login>,
    #[serde(deserialize_with = "de::lenient")]
    pub institution: Option<Institution>,
    #[serde(deserialize_with = "de::text")]
    pub institution_name: Option<String>,
    #[serde(deserialize_with = "de::text")]
    pub institution_id: Option<String>,
    #[serde(deserialize_with = "de::text")]
    pub request_id: Option<String>,
    /// Summary only; some versions send the ratios per account instead.
    #[serde(deserialize_with = "de::number")]
    pub eft_eligible_ratio: Option<f64>,
    #[serde(rename = "ETransferEligibleRatio", deserialize_with = "de::number")]
    pub e_transfer_eligible_ratio: Option<f64>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct BankAccount {
    #[serde(deserialize_with = "de::text")]
    pub id: Option<String>,
    #[serde(deserialize_with = "de::text")]
    pub title: Option<String>,
    #[serde(deserialize_with = "de::text")]
    pub account_number: Option<String>,
    #[serde(deserialize_with = "de::text")]
    pub last_four_digits: Option<String>,
    #[serde(deserialize_with = "de::text")]
    pub transit_number: Option<String>,
    #[serde(deserialize_with = "de::text")]
    pub institution_number: Option<String>,
    #[serde(deserialize_with = "de::number")]
    pub overdraft_limit: Option<f64>,
    pub balance: Option<Balance>,
    #[serde(deserialize_with = "de::text")]
    pub category: Option<String>,
    #[serde(rename = "Type", deserialize_with = "de::text")]
    pub kind: Option<String>,
    #[serde(deserialize_with = "de::text")]
    pub currency: Option<String>,
    #[serde(deserialize_with = "de::text")]
    pub account_type: Option<String>,
    pub holder: Option<Holder>,
    #[serde(deserialize_with = "de::list")]
    pub transactions: Vec<BankTransaction>,
    #[serde(deserialize_with = "de::number")]
    pub eft_eligible_ratio: Option<f64>,
    #[serde(rename = "ETransferEligibleRatio", deserialize_with = "de::number")]
    pub e_transfer_eligible_ratio: Option<f64>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct Balance {
    #[serde(deserialize_with = "de::number")]
    pub available: Option<f64>,
    #[serde(deserialize_with = "de::number")]
    pub current: Option<f64>,
    #[serde(deserialize_with = "de::number")]
    pub limit: Option<f64>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct Holder {
    #[serde(deserialize_with = "de::text")]
    pub name: Option<String>,
    pub address: Option<Address>,
    #[serde(deserialize_with = "de::text")]
    pub email: Option<String>,
    #[serde(deserialize_with = "de::text")]
    pub phone_number: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct Address {
    #[serde(deserialize_with = "de::text")]
    pub civic_address: Option<String>,
    #[serde(deserialize_with = "de::text")]
    pub city: Option<String>,
    #[serde(deserialize_with = "de::text")]
    pub province: Option<String>,
    #[serde(deserialize_with = "de::text")]
    pub postal_code: Option<String>,
    #[serde(rename = "POBox", deserialize_with = "de::text")]
    pub po_box: Option<String>,
    #[serde(deserialize_with = "de::text")]
    pub country: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct BankTransaction {
    #[serde(deserialize_with = "de::text")]
    pub id: Option<String>,
    #[serde(deserialize_with = "de::text")]
    pub date: Option<String>,
    #[serde(deserialize_with = "de::text")]
    pub code: Option<String>,
    #[serde(deserialize_with = "de::text")]
    pub description: Option<String>,
    #[serde(deserialize_with = "de::number")]
    pub debit: Option<f64>,
    #[serde(deserialize_with = "de::number")]
    pub credit: Option<f64>,
    #[serde(deserialize_with = "de::number")]
    pub balance: Option<f64>,
}

/// GetStatements.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct Statements {
    #[serde(deserialize_with = "de::list")]
    pub statements_by_account: Vec<AccountStatements>,
    #[serde(deserialize_with = "de::text")]
    pub request_id: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct AccountStatements {
    #[serde(deserialize_with = "de::text")]
    pub account_number: Option<String>,
    #[serde(deserialize_with = "de::list")]
    pub statements: Vec<Statement>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct Statement {
    #[serde(deserialize_with = "de::text")]
    pub unique_id: Option<String>,
    #[serde(deserialize_with = "de::text")]
    pub file_type: Option<String>,
    #[serde(deserialize_with = "de::text")]
    pub base64_bytes: Option<String>,
}

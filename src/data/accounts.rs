//! Banking payloads: GetAccountsDetail, GetAccountsSummary and GetStatements (service-notes.md).
//!
//! The account types are generic over their text, `String` by default, as the Investments ones
//! are (see there): a year of transactions is read into tables borrowing from the bytes.

use serde::Deserialize;

use super::de;
use crate::authorize::{Institution, Login};

/// GetAccountsDetail and GetAccountsSummary share their account shape.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default, bound(deserialize = "S: de::JsonText<'de> + Default"))]
pub struct Accounts<S = String> {
    #[serde(deserialize_with = "de::list")]
    pub accounts: Vec<BankAccount<S>>,
    #[serde(deserialize_with = "de::lenient")]
    pub login: Option<Login>,
    #[serde(deserialize_with = "de::lenient")]
    pub institution: Option<Institution>,
    #[serde(deserialize_with = "de::text")]
    pub institution_name: Option<S>,
    #[serde(deserialize_with = "de::text")]
    pub institution_id: Option<S>,
    #[serde(deserialize_with = "de::text")]
    pub request_id: Option<S>,
    /// Summary only; some versions send the ratios per account instead.
    #[serde(deserialize_with = "de::number")]
    pub eft_eligible_ratio: Option<f64>,
    #[serde(rename = "ETransferEligibleRatio", deserialize_with = "de::number")]
    pub e_transfer_eligible_ratio: Option<f64>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default, bound(deserialize = "S: de::JsonText<'de> + Default"))]
pub struct BankAccount<S = String> {
    #[serde(deserialize_with = "de::text")]
    pub id: Option<S>,
    #[serde(deserialize_with = "de::text")]
    pub title: Option<S>,
    #[serde(deserialize_with = "de::text")]
    pub account_number: Option<S>,
    #[serde(deserialize_with = "de::text")]
    pub last_four_digits: Option<S>,
    #[serde(deserialize_with = "de::text")]
    pub transit_number: Option<S>,
    #[serde(deserialize_with = "de::text")]
    pub institution_number: Option<S>,
    #[serde(deserialize_with = "de::number")]
    pub overdraft_limit: Option<f64>,
    pub balance: Option<Balance>,
    #[serde(deserialize_with = "de::text")]
    pub category: Option<S>,
    #[serde(rename = "Type", deserialize_with = "de::text")]
    pub kind: Option<S>,
    #[serde(deserialize_with = "de::text")]
    pub currency: Option<S>,
    #[serde(deserialize_with = "de::text")]
    pub account_type: Option<S>,
    pub holder: Option<Holder<S>>,
    #[serde(deserialize_with = "de::list")]
    pub transactions: Vec<BankTransaction<S>>,
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
#[serde(rename_all = "PascalCase", default, bound(deserialize = "S: de::JsonText<'de> + Default"))]
pub struct Holder<S = String> {
    #[serde(deserialize_with = "de::text")]
    pub name: Option<S>,
    pub address: Option<Address<S>>,
    #[serde(deserialize_with = "de::text")]
    pub email: Option<S>,
    #[serde(deserialize_with = "de::text")]
    pub phone_number: Option<S>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default, bound(deserialize = "S: de::JsonText<'de> + Default"))]
pub struct Address<S = String> {
    #[serde(deserialize_with = "de::text")]
    pub civic_address: Option<S>,
    #[serde(deserialize_with = "de::text")]
    pub city: Option<S>,
    #[serde(deserialize_with = "de::text")]
    pub province: Option<S>,
    #[serde(deserialize_with = "de::text")]
    pub postal_code: Option<S>,
    #[serde(rename = "POBox", deserialize_with = "de::text")]
    pub po_box: Option<S>,
    #[serde(deserialize_with = "de::text")]
    pub country: Option<S>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default, bound(deserialize = "S: de::JsonText<'de> + Default"))]
pub struct BankTransaction<S = String> {
    #[serde(deserialize_with = "de::text")]
    pub id: Option<S>,
    #[serde(deserialize_with = "de::text")]
    pub date: Option<S>,
    #[serde(deserialize_with = "de::text")]
    pub code: Option<S>,
    #[serde(deserialize_with = "de::text")]
    pub description: Option<S>,
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

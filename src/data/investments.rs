//! The Investments payload (interface-v3.md 2.7).

use serde::Deserialize;

use super::de;
use crate::authorize::{Institution, Login};

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct Investments {
    #[serde(deserialize_with = "de::list")]
    pub accounts: Vec<InvestmentAccount>,
    #[serde(deserialize_with = "de::list")]
    pub securities: Vec<Security>,
    #[serde(deserialize_with = "de::number")]
    pub value: Option<f64>,
    #[serde(deserialize_with = "de::number")]
    pub cash: Option<f64>,
    #[serde(deserialize_with = "de::lenient")]
    pub login: Option<Login>,
    #[serde(deserialize_with = "de::lenient")]
    pub institution: Option<Institution>,
    #[serde(deserialize_with = "de::text")]
    pub request_id: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct InvestmentAccount {
    #[serde(deserialize_with = "de::text")]
    pub id: Option<String>,
    #[serde(deserialize_with = "de::text")]
    pub full_account_id: Option<String>,
    /// The account number.
    #[serde(deserialize_with = "de::text")]
    pub account_id: Option<String>,
    #[serde(deserialize_with = "de::text")]
    pub name: Option<String>,
    #[serde(rename = "Type", deserialize_with = "de::text")]
    pub kind: Option<String>,
    #[serde(deserialize_with = "de::boolean")]
    pub registered: Option<bool>,
    #[serde(deserialize_with = "de::text")]
    pub currency: Option<String>,
    #[serde(deserialize_with = "de::number")]
    pub cash: Option<f64>,
    #[serde(deserialize_with = "de::number")]
    pub account_value: Option<f64>,
    #[serde(deserialize_with = "de::number")]
    pub currency_value: Option<f64>,
    #[serde(deserialize_with = "de::list")]
    pub positions: Vec<Position>,
    #[serde(deserialize_with = "de::list")]
    pub transactions: Vec<InvestmentTransaction>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct Position {
    #[serde(deserialize_with = "de::text")]
    pub id: Option<String>,
    #[serde(deserialize_with = "de::text")]
    pub category: Option<String>,
    #[serde(deserialize_with = "de::text")]
    pub class: Option<String>,
    #[serde(deserialize_with = "de::number")]
    pub book_value: Option<f64>,
    #[serde(deserialize_with = "de::number")]
    pub quantity: Option<f64>,
    #[serde(deserialize_with = "de::number")]
    pub market_value: Option<f64>,
    #[serde(deserialize_with = "de::number")]
    pub gain_amount: Option<f64>,
    #[serde(deserialize_with = "de::number")]
    pub gain_currency_amount: Option<f64>,
    /// A fraction: -0.08 means -8 %.
    #[serde(deserialize_with = "de::number")]
    pub gain_percent: Option<f64>,
    #[serde(deserialize_with = "de::text")]
    pub currency: Option<String>,
    #[serde(deserialize_with = "de::text")]
    pub security_id: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct InvestmentTransaction {
    #[serde(deserialize_with = "de::text")]
    pub id: Option<String>,
    #[serde(deserialize_with = "de::text")]
    pub date: Option<String>,
    #[serde(rename = "Type", deserialize_with = "de::text")]
    pub kind: Option<String>,
    #[serde(deserialize_with = "de::text")]
    pub description: Option<String>,
    #[serde(deserialize_with = "de::number")]
    pub quantity: Option<f64>,
    #[serde(deserialize_with = "de::number")]
    pub fee: Option<f64>,
    #[serde(deserialize_with = "de::number")]
    pub amount: Option<f64>,
    #[serde(deserialize_with = "de::text")]
    pub security_id: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct Security {
    #[serde(deserialize_with = "de::text")]
    pub id: Option<String>,
    #[serde(deserialize_with = "de::text")]
    pub name: Option<String>,
    #[serde(deserialize_with = "de::text")]
    pub symbol: Option<String>,
    #[serde(rename = "Type", deserialize_with = "de::text")]
    pub kind: Option<String>,
    #[serde(deserialize_with = "de::number")]
    pub price: Option<f64>,
    #[serde(deserialize_with = "de::text")]
    pub date: Option<String>,
    #[serde(deserialize_with = "de::strings")]
    pub aliases: Vec<String>,
    #[serde(deserialize_with = "de::text")]
    pub currency: Option<String>,
    #[serde(rename = "CUSIP", alias = "Cusip", deserialize_with = "de::text")]
    pub cusip: Option<String>,
    #[serde(rename = "ISIN", alias = "Isin", deserialize_with = "de::text")]
    pub isin: Option<String>,
}

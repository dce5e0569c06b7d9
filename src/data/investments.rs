//! The Investments payload (docs/protocol.md#investments).
//!
//! Each type is generic over its text, `String` by default. Reading a large payload only to
//! flatten it into tables uses `Cow<str>`, which borrows every string that has no escape from
//! the payload's bytes instead of allocating it.

use serde::Deserialize;

use super::de;
use super::json::{Expected, Shape};
use super::login::{Institution, Login, NamesLogin};

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default, bound(deserialize = "S: de::JsonText<'de> + Default"))]
pub struct Investments<S = String> {
    #[serde(deserialize_with = "de::list")]
    pub accounts: Vec<InvestmentAccount<S>>,
    #[serde(deserialize_with = "de::list")]
    pub securities: Vec<Security<S>>,
    #[serde(deserialize_with = "de::number")]
    pub value: Option<f64>,
    #[serde(deserialize_with = "de::number")]
    pub cash: Option<f64>,
    #[serde(deserialize_with = "de::lenient")]
    pub login: Option<Login>,
    #[serde(deserialize_with = "de::lenient")]
    pub institution: Option<Institution>,
    #[serde(deserialize_with = "de::text")]
    pub request_id: Option<S>,
}

/// A 200 holding none of these is not an Investments payload (docs/errors.md#protocol-surprises).
impl Investments {
    /// Reads an Investments 200, such as a saved one, checked as a live answer is.
    pub fn parse(bytes: &[u8]) -> Result<Self, crate::Error> {
        super::json::decode_payload("Investments", 200, bytes)
    }
}

impl<S> Expected for Investments<S> {
    const SHAPE: Shape = Shape::AnyOf(&["Accounts", "Securities", "Value", "Cash"]);
}

impl<S> NamesLogin for Investments<S> {
    fn login_id(&self) -> Option<&str> {
        self.login.as_ref()?.id.as_deref()
    }
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default, bound(deserialize = "S: de::JsonText<'de> + Default"))]
pub struct InvestmentAccount<S = String> {
    #[serde(deserialize_with = "de::text")]
    pub id: Option<S>,
    #[serde(deserialize_with = "de::text")]
    pub full_account_id: Option<S>,
    /// The account number.
    #[serde(deserialize_with = "de::text")]
    pub account_id: Option<S>,
    #[serde(deserialize_with = "de::text")]
    pub name: Option<S>,
    #[serde(rename = "Type", deserialize_with = "de::text")]
    pub kind: Option<S>,
    #[serde(deserialize_with = "de::boolean")]
    pub registered: Option<bool>,
    #[serde(deserialize_with = "de::text")]
    pub currency: Option<S>,
    #[serde(deserialize_with = "de::number")]
    pub cash: Option<f64>,
    #[serde(deserialize_with = "de::number")]
    pub account_value: Option<f64>,
    #[serde(deserialize_with = "de::number")]
    pub currency_value: Option<f64>,
    #[serde(deserialize_with = "de::list")]
    pub positions: Vec<Position<S>>,
    #[serde(deserialize_with = "de::list")]
    pub transactions: Vec<InvestmentTransaction<S>>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default, bound(deserialize = "S: de::JsonText<'de> + Default"))]
pub struct Position<S = String> {
    #[serde(deserialize_with = "de::text")]
    pub id: Option<S>,
    #[serde(deserialize_with = "de::text")]
    pub category: Option<S>,
    #[serde(deserialize_with = "de::text")]
    pub class: Option<S>,
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
    pub currency: Option<S>,
    #[serde(deserialize_with = "de::text")]
    pub security_id: Option<S>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default, bound(deserialize = "S: de::JsonText<'de> + Default"))]
pub struct InvestmentTransaction<S = String> {
    #[serde(deserialize_with = "de::text")]
    pub id: Option<S>,
    #[serde(deserialize_with = "de::text")]
    pub date: Option<S>,
    #[serde(rename = "Type", deserialize_with = "de::text")]
    pub kind: Option<S>,
    #[serde(deserialize_with = "de::text")]
    pub description: Option<S>,
    #[serde(deserialize_with = "de::number")]
    pub quantity: Option<f64>,
    #[serde(deserialize_with = "de::number")]
    pub fee: Option<f64>,
    #[serde(deserialize_with = "de::number")]
    pub amount: Option<f64>,
    #[serde(deserialize_with = "de::text")]
    pub security_id: Option<S>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default, bound(deserialize = "S: de::JsonText<'de> + Default"))]
pub struct Security<S = String> {
    #[serde(deserialize_with = "de::text")]
    pub id: Option<S>,
    #[serde(deserialize_with = "de::text")]
    pub name: Option<S>,
    #[serde(deserialize_with = "de::text")]
    pub symbol: Option<S>,
    #[serde(rename = "Type", deserialize_with = "de::text")]
    pub kind: Option<S>,
    #[serde(deserialize_with = "de::number")]
    pub price: Option<f64>,
    #[serde(deserialize_with = "de::text")]
    pub date: Option<S>,
    #[serde(deserialize_with = "de::strings")]
    pub aliases: Vec<S>,
    #[serde(deserialize_with = "de::text")]
    pub currency: Option<S>,
    #[serde(rename = "CUSIP", alias = "Cusip", deserialize_with = "de::text")]
    pub cusip: Option<S>,
    #[serde(rename = "ISIN", alias = "Isin", deserialize_with = "de::text")]
    pub isin: Option<S>,
}

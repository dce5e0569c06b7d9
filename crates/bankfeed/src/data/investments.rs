//! The Investments payload (docs/protocol.md#investments).
//!
//! Each type is generic over its text, `String` by default. Reading a large payload only to
//! flatten it into tables uses `Cow<str>`, which borrows every string that has no escape from
//! the payload's bytes instead of allocating it.

use std::fmt;
use std::marker::PhantomData;

use serde::de::value::MapAccessDeserializer;
use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

use super::de;
use super::json::{Expected, Shape};
use super::login::{Institution, Login, NamesLogin};
use super::money::JsonNumber;

/// Read in either shape the service is documented with (docs/protocol.md#investments): the
/// interface's, with `Accounts` beside `Institution`, and the public reference's, with them inside
/// it. Either way they end in [`Investments::accounts`].
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(
    rename_all = "PascalCase",
    default,
    from = "Wire<S, N>",
    bound(deserialize = "S: de::JsonText<'de> + Default, N: JsonNumber<'de> + Default")
)]
pub struct Investments<S = String, N = f64> {
    pub accounts: Vec<InvestmentAccount<S, N>>,
    #[serde(deserialize_with = "de::list")]
    pub securities: Vec<Security<S, N>>,
    #[serde(deserialize_with = "de::number")]
    pub value: Option<f64>,
    #[serde(deserialize_with = "de::number")]
    pub cash: Option<f64>,
    #[serde(deserialize_with = "de::lenient")]
    pub login: Option<Login>,
    pub institution: Option<Institution>,
    pub request_id: Option<S>,
}

/// [`Investments`] as it comes: the accounts may be in `Institution`.
#[derive(Default, Deserialize)]
#[serde(
    rename_all = "PascalCase",
    default,
    bound(deserialize = "S: de::JsonText<'de> + Default, N: JsonNumber<'de> + Default")
)]
struct Wire<S, N> {
    #[serde(deserialize_with = "de::list")]
    accounts: Vec<InvestmentAccount<S, N>>,
    #[serde(deserialize_with = "de::list")]
    securities: Vec<Security<S, N>>,
    #[serde(deserialize_with = "de::number")]
    value: Option<f64>,
    #[serde(deserialize_with = "de::number")]
    cash: Option<f64>,
    #[serde(deserialize_with = "de::lenient")]
    login: Option<Login>,
    #[serde(deserialize_with = "institution")]
    institution: Option<WireInstitution<S, N>>,
    #[serde(deserialize_with = "de::text")]
    request_id: Option<S>,
}

/// `Institution` of an Investments answer: its id (a number in the interface, text in the
/// reference), its name, and in the reference's shape the accounts.
#[derive(Default, Deserialize)]
#[serde(
    rename_all = "PascalCase",
    default,
    bound(deserialize = "S: de::JsonText<'de> + Default, N: JsonNumber<'de> + Default")
)]
struct WireInstitution<S, N> {
    #[serde(deserialize_with = "de::text")]
    id: Option<String>,
    #[serde(deserialize_with = "de::text")]
    name: Option<String>,
    #[serde(deserialize_with = "de::list")]
    accounts: Vec<InvestmentAccount<S, N>>,
    /// It came as a name alone.
    #[serde(skip)]
    named_only: bool,
}

/// `Institution`: an object, or a name alone as banking answers write it; anything else is read
/// as missing, as every small field of a payload is (`de`'s module says why).
fn institution<'de, D, S, N>(deserializer: D) -> Result<Option<WireInstitution<S, N>>, D::Error>
where
    D: Deserializer<'de>,
    S: de::JsonText<'de> + Default,
    N: JsonNumber<'de> + Default,
{
    struct Either<S, N>(PhantomData<(S, N)>);
    impl<'de, S: de::JsonText<'de> + Default, N: JsonNumber<'de> + Default> Visitor<'de> for Either<S, N> {
        type Value = Option<WireInstitution<S, N>>;
        fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
            formatter.write_str("an institution")
        }
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            WireInstitution::deserialize(MapAccessDeserializer::new(map)).map(Some)
        }
        fn visit_str<E>(self, name: &str) -> Result<Self::Value, E> {
            Ok(Some(WireInstitution { name: Some(name.to_owned()), named_only: true, ..WireInstitution::default() }))
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(None)
        }
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
    }
    deserializer.deserialize_any(Either(PhantomData))
}

impl<S, N> From<Wire<S, N>> for Investments<S, N> {
    fn from(wire: Wire<S, N>) -> Self {
        let (institution, mut nested) = match wire.institution {
            Some(WireInstitution { name: Some(name), named_only: true, .. }) => {
                (Some(Institution::Name(name)), Vec::new())
            }
            Some(WireInstitution { id, name, accounts, .. }) => (Some(Institution::Object { id, name }), accounts),
            None => (None, Vec::new()),
        };
        // Both shapes at once is not documented; neither list is dropped if it comes.
        let mut accounts = wire.accounts;
        accounts.append(&mut nested);
        Self {
            accounts,
            securities: wire.securities,
            value: wire.value,
            cash: wire.cash,
            login: wire.login,
            institution,
            request_id: wire.request_id,
        }
    }
}

/// A 200 holding none of these is not an Investments payload (docs/errors.md#protocol-surprises).
impl Investments {
    /// Reads an Investments 200, such as a saved one, checked as a live answer is.
    pub fn parse(bytes: &[u8]) -> Result<Self, crate::Error> {
        super::json::decode_payload("Investments", 200, bytes)
    }
}

impl<S, N> Expected for Investments<S, N> {
    const SHAPE: Shape = Shape::AnyOf(&["Accounts", "Securities", "Value", "Cash"]);
}

impl<S, N> NamesLogin for Investments<S, N> {
    fn login_id(&self) -> Option<&str> {
        self.login.as_ref()?.id.as_deref()
    }
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(
    rename_all = "PascalCase",
    default,
    bound(deserialize = "S: de::JsonText<'de> + Default, N: JsonNumber<'de> + Default")
)]
pub struct InvestmentAccount<S = String, N = f64> {
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
    #[serde(deserialize_with = "de::currency")]
    pub currency: Option<S>,
    #[serde(deserialize_with = "JsonNumber::read")]
    pub cash: Option<N>,
    #[serde(deserialize_with = "JsonNumber::read")]
    pub account_value: Option<N>,
    #[serde(deserialize_with = "JsonNumber::read")]
    pub currency_value: Option<N>,
    #[serde(deserialize_with = "de::list")]
    pub positions: Vec<Position<S, N>>,
    #[serde(deserialize_with = "de::list")]
    pub transactions: Vec<InvestmentTransaction<S, N>>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(
    rename_all = "PascalCase",
    default,
    bound(deserialize = "S: de::JsonText<'de> + Default, N: JsonNumber<'de> + Default")
)]
pub struct Position<S = String, N = f64> {
    #[serde(deserialize_with = "de::text")]
    pub id: Option<S>,
    #[serde(deserialize_with = "de::text")]
    pub category: Option<S>,
    #[serde(deserialize_with = "de::text")]
    pub class: Option<S>,
    #[serde(deserialize_with = "JsonNumber::read")]
    pub book_value: Option<N>,
    #[serde(deserialize_with = "JsonNumber::read")]
    pub quantity: Option<N>,
    #[serde(deserialize_with = "JsonNumber::read")]
    pub market_value: Option<N>,
    #[serde(deserialize_with = "JsonNumber::read")]
    pub gain_amount: Option<N>,
    #[serde(deserialize_with = "JsonNumber::read")]
    pub gain_currency_amount: Option<N>,
    /// A fraction: -0.08 means -8 %.
    #[serde(deserialize_with = "de::number")]
    pub gain_percent: Option<f64>,
    #[serde(deserialize_with = "de::currency")]
    pub currency: Option<S>,
    #[serde(deserialize_with = "de::text")]
    pub security_id: Option<S>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(
    rename_all = "PascalCase",
    default,
    bound(deserialize = "S: de::JsonText<'de> + Default, N: JsonNumber<'de> + Default")
)]
pub struct InvestmentTransaction<S = String, N = f64> {
    #[serde(deserialize_with = "de::text")]
    pub id: Option<S>,
    #[serde(deserialize_with = "de::text")]
    pub date: Option<S>,
    #[serde(rename = "Type", deserialize_with = "de::text")]
    pub kind: Option<S>,
    #[serde(deserialize_with = "de::text")]
    pub description: Option<S>,
    #[serde(deserialize_with = "JsonNumber::read")]
    pub quantity: Option<N>,
    #[serde(deserialize_with = "JsonNumber::read")]
    pub fee: Option<N>,
    #[serde(deserialize_with = "JsonNumber::read")]
    pub amount: Option<N>,
    #[serde(deserialize_with = "de::text")]
    pub security_id: Option<S>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(
    rename_all = "PascalCase",
    default,
    bound(deserialize = "S: de::JsonText<'de> + Default, N: JsonNumber<'de> + Default")
)]
pub struct Security<S = String, N = f64> {
    #[serde(deserialize_with = "de::text")]
    pub id: Option<S>,
    #[serde(deserialize_with = "de::text")]
    pub name: Option<S>,
    #[serde(deserialize_with = "de::text")]
    pub symbol: Option<S>,
    #[serde(rename = "Type", deserialize_with = "de::text")]
    pub kind: Option<S>,
    #[serde(deserialize_with = "JsonNumber::read")]
    pub price: Option<N>,
    #[serde(deserialize_with = "de::text")]
    pub date: Option<S>,
    #[serde(deserialize_with = "de::strings")]
    pub aliases: Vec<S>,
    #[serde(deserialize_with = "de::currency")]
    pub currency: Option<S>,
    #[serde(rename = "CUSIP", alias = "Cusip", deserialize_with = "de::text")]
    pub cusip: Option<S>,
    #[serde(rename = "ISIN", alias = "Isin", deserialize_with = "de::text")]
    pub isin: Option<S>,
}

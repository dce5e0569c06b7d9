//! The fields of a payload that no table knows (docs/export.md#fields-the-service-adds): a key the service added
//! that no wire struct reads would otherwise be dropped without a word.
//!
//! The known names of each object are the field names of the serde structs that read it, asked of
//! serde itself (`field_names`), so the lists cannot drift from what the tables read. The count is
//! a second pass over the bytes that descends only into known objects and lists and skips every
//! value (`IgnoredAny`): nothing is built but the counts.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::OnceLock;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

use super::accounts::{AccountStatements, Accounts, Address, Balance, BankAccount, BankTransaction, Holder};
use super::accounts::{Statement, Statements};
use super::attributes::NOT_GROUPS;
use super::investments::{InvestmentAccount, InvestmentTransaction, Investments, Position, Security};
use super::login::Login;

/// Path of a field (`Accounts[].Positions[].NewField`: `[]` marks an item of a list, `.` an
/// object's key, as written in the payload) to the number of objects that carry it.
pub type UnknownFields = BTreeMap<String, u64>;

/// The payloads whose fields are counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PayloadKind {
    Investments,
    /// GetAccountsDetail and GetAccountsSummary.
    Accounts,
    Statements,
}

/// The unknown fields of `bytes`, a payload of `kind`. A body that is not JSON has none: reading
/// it as its kind already failed, or said why.
pub fn unknown_fields(kind: PayloadKind, bytes: &[u8]) -> UnknownFields {
    let mut counts = UnknownFields::new();
    let shape = match kind {
        PayloadKind::Investments => investments(),
        PayloadKind::Accounts => accounts(),
        PayloadKind::Statements => statements(),
    };
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let seed = Walk { shape, prefix: "", counts: &mut counts };
    match seed.deserialize(&mut deserializer) {
        Ok(()) => counts,
        Err(_) => UnknownFields::new(),
    }
}

/// What an object of a payload holds: the keys its struct reads (and at the top, those of the
/// envelope), and which of them are objects or lists of objects whose keys are checked in turn.
pub(crate) struct Shape {
    known: &'static [&'static str],
    /// The envelope's keys (status, login, institution: the answer's, not its data), known at
    /// the top of every payload whether or not its struct reads them.
    envelope: &'static [&'static str],
    nested: Vec<(&'static str, Nested)>,
}

enum Nested {
    Object(Shape),
    List(Shape),
}

impl Shape {
    fn leaf(known: &'static [&'static str]) -> Self {
        Shape { known, envelope: &[], nested: Vec::new() }
    }

    fn top(known: &'static [&'static str]) -> Self {
        Shape { known, envelope: &NOT_GROUPS, nested: Vec::new() }
    }

    fn with(mut self, key: &'static str, nested: Nested) -> Self {
        self.nested.push((key, nested));
        self
    }
}

fn login() -> Shape {
    Shape::leaf(field_names::<Login>())
}

/// `Institution` of a payload: a name, or an object of the fields the untagged enum reads.
const INSTITUTION: &[&str] = &["Id", "Name"];

fn investments() -> &'static Shape {
    static SHAPE: OnceLock<Shape> = OnceLock::new();
    SHAPE.get_or_init(|| {
        let account = || {
            Shape::leaf(field_names::<InvestmentAccount>())
                .with("Positions", Nested::List(Shape::leaf(field_names::<Position>())))
                .with("Transactions", Nested::List(Shape::leaf(field_names::<InvestmentTransaction>())))
        };
        // `Investments` is read through its wire struct (`from`), whose fields serde gives.
        Shape::top(field_names::<Investments>())
            .with("Accounts", Nested::List(account()))
            .with("Securities", Nested::List(Shape::leaf(field_names::<Security>())))
            .with("Login", Nested::Object(login()))
            .with("Institution", Nested::Object(Shape::leaf(INSTITUTION).with("Accounts", Nested::List(account()))))
    })
}

fn accounts() -> &'static Shape {
    static SHAPE: OnceLock<Shape> = OnceLock::new();
    SHAPE.get_or_init(|| {
        let holder =
            Shape::leaf(field_names::<Holder>()).with("Address", Nested::Object(Shape::leaf(field_names::<Address>())));
        let account = Shape::leaf(field_names::<BankAccount>())
            .with("Balance", Nested::Object(Shape::leaf(field_names::<Balance>())))
            .with("Holder", Nested::Object(holder))
            .with("Transactions", Nested::List(Shape::leaf(field_names::<BankTransaction>())));
        Shape::top(field_names::<Accounts>())
            .with("Accounts", Nested::List(account))
            .with("Login", Nested::Object(login()))
            .with("Institution", Nested::Object(Shape::leaf(INSTITUTION)))
    })
}

fn statements() -> &'static Shape {
    static SHAPE: OnceLock<Shape> = OnceLock::new();
    SHAPE.get_or_init(|| {
        let account = Shape::leaf(field_names::<AccountStatements>())
            .with("Statements", Nested::List(Shape::leaf(field_names::<Statement>())));
        Shape::top(field_names::<Statements>())
            .with("StatementsByAccount", Nested::List(account))
            .with("Login", Nested::Object(login()))
    })
}

/// The keys the struct `T` reads (renamed, aliases included), as its derived `Deserialize` gives
/// them to `deserialize_struct`; empty for a type that is no struct.
pub(crate) fn field_names<'de, T: Deserialize<'de>>() -> &'static [&'static str] {
    let mut names: &'static [&'static str] = &[];
    let _ = T::deserialize(FieldNames(&mut names));
    names
}

/// A deserializer that only records the field names of the struct asked of it, then stops.
struct FieldNames<'a>(&'a mut &'static [&'static str]);

#[derive(Debug)]
struct Stop;

impl fmt::Display for Stop {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("field names read")
    }
}

impl std::error::Error for Stop {}

impl serde::de::Error for Stop {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Stop
    }
}

impl<'de> Deserializer<'de> for FieldNames<'_> {
    type Error = Stop;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Stop> {
        Err(Stop)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Stop> {
        *self.0 = fields;
        Err(Stop)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option
        unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
    }
}

/// Walks one JSON value as `shape` says, counting the keys it does not know under `prefix`.
struct Walk<'a> {
    shape: &'a Shape,
    /// The path of this object with its trailing `.` (empty at the top).
    prefix: &'a str,
    counts: &'a mut UnknownFields,
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

/// The visits of a scalar (a number, a string, a boolean, null): nothing to walk in one, and no
/// error either, whatever the shape expected there (the tables' readers judge the values).
macro_rules! skip_scalars {
    () => {
        fn visit_bool<E>(self, _: bool) -> Result<(), E> {
            Ok(())
        }

        fn visit_i64<E>(self, _: i64) -> Result<(), E> {
            Ok(())
        }

        fn visit_u64<E>(self, _: u64) -> Result<(), E> {
            Ok(())
        }

        fn visit_f64<E>(self, _: f64) -> Result<(), E> {
            Ok(())
        }

        fn visit_str<E>(self, _: &str) -> Result<(), E> {
            Ok(())
        }

        fn visit_unit<E>(self) -> Result<(), E> {
            Ok(())
        }
    };
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            let key: &str = &key;
            if let Some((_, nested)) = self.shape.nested.iter().find(|(name, _)| *name == key) {
                let (shape, list) = match nested {
                    Nested::Object(shape) => (shape, ""),
                    Nested::List(shape) => (shape, "[]"),
                };
                let prefix = format!("{}{key}{list}.", self.prefix);
                let inner = Walk { shape, prefix: &prefix, counts: &mut *self.counts };
                if list.is_empty() {
                    map.next_value_seed(inner)?;
                } else {
                    map.next_value_seed(Items(inner))?;
                }
                continue;
            }
            if !self.shape.known.contains(&key) && !self.shape.envelope.contains(&key) {
                *self.counts.entry(format!("{}{key}", self.prefix)).or_default() += 1;
            }
            map.next_value::<IgnoredAny>()?;
        }
        Ok(())
    }

    // Anything but an object is no object to check (a name as `Institution`, a `null` list).
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        IgnoredAny.visit_seq(seq).map(|_| ())
    }

    skip_scalars!();
}

/// The items of a list, each walked as the list's shape says; anything but a list is skipped.
struct Items<'a>(Walk<'a>);

impl<'de> DeserializeSeed<'de> for Items<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Items<'_> {
    type Value = ();

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let Walk { shape, prefix, counts } = self.0;
        while seq.next_element_seed(Walk { shape, prefix, counts: &mut *counts })?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        IgnoredAny.visit_map(map).map(|_| ())
    }

    skip_scalars!();
}

/// An object's key, borrowed from the payload unless it has an escape.
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str("a key")
            }
            fn visit_borrowed_str<E>(self, key: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(key)))
            }
            fn visit_str<E>(self, key: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(key.to_owned())))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn counted(kind: PayloadKind, body: serde_json::Value) -> UnknownFields {
        unknown_fields(kind, &serde_json::to_vec(&body).unwrap())
    }

    /// Every name the structs read, one object of each, all known: nothing is counted; then one
    /// planted key per object is counted under its path, once per object that carries it.
    fn every_known_and_planted(shape: &Shape) -> (serde_json::Value, serde_json::Value) {
        let mut known = serde_json::Map::new();
        let mut planted = serde_json::Map::new();
        for name in shape.known {
            known.insert((*name).to_owned(), json!(null));
            planted.insert((*name).to_owned(), json!(null));
        }
        for (name, nested) in &shape.nested {
            let (child, shape) = match nested {
                Nested::Object(shape) | Nested::List(shape) => (name, shape),
            };
            let (k, p) = every_known_and_planted(shape);
            let (k, p) = match nested {
                Nested::Object(_) => (k, p),
                Nested::List(_) => (json!([k.clone(), k]), json!([p.clone(), p])),
            };
            known.insert((*child).to_owned(), k);
            planted.insert((*child).to_owned(), p);
        }
        planted.insert("NewField".to_owned(), json!({"Deep": [1, {"X": 2}]}));
        (serde_json::Value::Object(known), serde_json::Value::Object(planted))
    }

    #[test]
    fn every_field_a_wire_struct_reads_is_known_and_a_planted_one_is_counted() {
        for kind in [PayloadKind::Investments, PayloadKind::Accounts, PayloadKind::Statements] {
            let shape = match kind {
                PayloadKind::Investments => investments(),
                PayloadKind::Accounts => accounts(),
                PayloadKind::Statements => statements(),
            };
            let (known, planted) = every_known_and_planted(shape);
            assert_eq!(counted(kind, known), UnknownFields::new(), "{kind:?}");
            let counts = counted(kind, planted);
            assert_eq!(counts.get("NewField"), Some(&1), "{kind:?}: {counts:?}");
            assert!(counts.values().all(|count| *count >= 1), "{kind:?}: {counts:?}");
            if kind == PayloadKind::Investments {
                assert_eq!(counts.get("Accounts[].Positions[].NewField"), Some(&4), "{counts:?}");
                assert_eq!(counts.get("Institution.Accounts[].NewField"), Some(&2), "{counts:?}");
                assert_eq!(counts.get("Login.NewField"), Some(&1), "{counts:?}");
            }
            if kind == PayloadKind::Accounts {
                assert_eq!(counts.get("Accounts[].Holder.Address.NewField"), Some(&2), "{counts:?}");
                assert_eq!(counts.get("Accounts[].Transactions[].NewField"), Some(&4), "{counts:?}");
            }
        }
    }

    fn shape_at<'a>(shape: &'a Shape, path: &[&str]) -> &'a Shape {
        let Some((first, rest)) = path.split_first() else { return shape };
        let found = shape.nested.iter().find(|(name, _)| name == first);
        let Some((_, Nested::Object(inner) | Nested::List(inner))) = found else { panic!("no {first}") };
        shape_at(inner, rest)
    }

    /// Each object's known keys hold every key the struct that reads it reads: a struct that
    /// gains a field (a new column) cannot leave it counted as unknown.
    #[test]
    fn every_object_knows_every_field_of_its_struct() {
        let read: [(&Shape, &[&str], &[&str]); 17] = [
            (investments(), &[], field_names::<Investments>()),
            (investments(), &["Accounts"], field_names::<InvestmentAccount>()),
            (investments(), &["Institution", "Accounts"], field_names::<InvestmentAccount>()),
            (investments(), &["Accounts", "Positions"], field_names::<Position>()),
            (investments(), &["Accounts", "Transactions"], field_names::<InvestmentTransaction>()),
            (investments(), &["Securities"], field_names::<Security>()),
            (investments(), &["Login"], field_names::<Login>()),
            (accounts(), &[], field_names::<Accounts>()),
            (accounts(), &["Accounts"], field_names::<BankAccount>()),
            (accounts(), &["Accounts", "Balance"], field_names::<Balance>()),
            (accounts(), &["Accounts", "Holder"], field_names::<Holder>()),
            (accounts(), &["Accounts", "Holder", "Address"], field_names::<Address>()),
            (accounts(), &["Accounts", "Transactions"], field_names::<BankTransaction>()),
            (accounts(), &["Login"], field_names::<Login>()),
            (statements(), &[], field_names::<Statements>()),
            (statements(), &["StatementsByAccount"], field_names::<AccountStatements>()),
            (statements(), &["StatementsByAccount", "Statements"], field_names::<Statement>()),
        ];
        for (shape, path, fields) in read {
            assert!(!fields.is_empty(), "{path:?}");
            let known = shape_at(shape, path).known;
            for field in fields {
                assert!(known.contains(field), "{path:?}: {field} is read but not known");
            }
        }
    }

    #[test]
    fn the_names_are_those_serde_reads() {
        let position = field_names::<Position>();
        for name in ["Id", "BookValue", "MarketValue", "GainPercent", "SecurityId"] {
            assert!(position.contains(&name), "{name}: {position:?}");
        }
        // Renamed and aliased keys, and the wire struct behind `from`.
        assert!(field_names::<Security>().contains(&"CUSIP"));
        assert!(field_names::<Security>().contains(&"Cusip"));
        assert!(field_names::<Investments>().contains(&"Institution"));
        assert!(field_names::<Address>().contains(&"POBox"));
    }

    #[test]
    fn new_fields_at_several_levels_are_counted_per_object() {
        let body = json!({
            "Accounts": [
                {"Id": "a", "Tier": "gold", "Positions": [{"Id": "p", "Esg": 1}, {"Id": "q", "Esg": 2}],
                 "Transactions": [{"Id": "t", "Memo": "x"}]},
                {"Id": "b", "Positions": [{"Id": "r", "Esg": null}], "Transactions": null}
            ],
            "Securities": [{"Id": "s", "Sector": "tech"}],
            "Institution": "Flinks Capital",
            "Login": {"Id": "l", "Region": "ca"},
            "Snapshot": true,
            "RequestId": "r"
        });
        let counts = counted(PayloadKind::Investments, body);
        let expected: UnknownFields = [
            ("Accounts[].Positions[].Esg", 3),
            ("Accounts[].Tier", 1),
            ("Accounts[].Transactions[].Memo", 1),
            ("Login.Region", 1),
            ("Securities[].Sector", 1),
            ("Snapshot", 1),
        ]
        .into_iter()
        .map(|(path, count)| (path.to_owned(), count))
        .collect();
        assert_eq!(counts, expected);
    }

    #[test]
    fn the_envelope_is_known_at_the_top_only() {
        let body = json!({"HttpStatusCode": 200, "Links": [], "Tag": "t", "FlinksCode": null,
                          "StatementsByAccount": [{"HttpStatusCode": 200}]});
        let counts = counted(PayloadKind::Statements, body);
        assert_eq!(counts.into_iter().collect::<Vec<_>>(), [("StatementsByAccount[].HttpStatusCode".to_owned(), 1)]);
    }

    #[test]
    fn a_body_that_is_not_json_has_none() {
        assert!(unknown_fields(PayloadKind::Accounts, b"<html>").is_empty());
        assert!(unknown_fields(PayloadKind::Accounts, b"[]").is_empty());
    }
}

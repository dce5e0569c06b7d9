//! Lenient field decoders: the service's payloads vary (numbers sent as strings, `null` lists,
//! `"true"` for true), and a value that does not fit is read as missing rather than failing the
//! whole payload.
//!
//! The scalar decoders are visitors over the parser's own events rather than a detour through
//! `serde_json::Value`: a 20,000-transaction payload has some 200,000 such fields, and building
//! and dropping a `Value` for each was most of the time it took to read one.
//!
//! Text is read into any [`JsonText`]: `String` for the owned models, or `Cow<str>` borrowing
//! from the payload's bytes when a large payload is read only to be flattened into tables.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// What a text field can be read into: `String`, or `Cow<'de, str>` to borrow from the input.
pub trait JsonText<'de>: From<&'de str> + From<String> + AsRef<str> {}

impl<'de, T: From<&'de str> + From<String> + AsRef<str>> JsonText<'de> for T {}

/// A number, a numeric string, or nothing.
pub(crate) fn number<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<f64>, D::Error> {
    deserializer.deserialize_any(Lenient::<String>::new(Kind::Number)).map(|v| match v {
        Scalar::Number(n) => Some(n),
        _ => None,
    })
}

/// A string, a number written as text, or nothing.
pub(crate) fn text<'de, D: Deserializer<'de>, S: JsonText<'de>>(deserializer: D) -> Result<Option<S>, D::Error> {
    deserializer.deserialize_any(Lenient::<S>::new(Kind::Text)).map(|v| match v {
        Scalar::Text(s) => Some(s),
        _ => None,
    })
}

/// A currency code in capitals, as ISO 4217 writes it: the public Investments reference shows
/// `"cad"` where the interface shows `"CAD"` (docs/protocol.md#investments), and a table of
/// both must not hold two currencies.
pub(crate) fn currency<'de, D: Deserializer<'de>, S: JsonText<'de>>(deserializer: D) -> Result<Option<S>, D::Error> {
    Ok(text::<D, S>(deserializer)?.map(|code| {
        if code.as_ref().bytes().any(|byte| byte.is_ascii_lowercase()) {
            S::from(code.as_ref().to_ascii_uppercase())
        } else {
            code
        }
    }))
}

/// A boolean, `"true"`/`"false"` in any case, or nothing.
pub(crate) fn boolean<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<bool>, D::Error> {
    deserializer.deserialize_any(Lenient::<String>::new(Kind::Boolean)).map(|v| match v {
        Scalar::Boolean(b) => Some(b),
        _ => None,
    })
}

/// A list, with `null` read as empty.
pub(crate) fn list<'de, D, T>(deserializer: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Ok(Option::<Vec<T>>::deserialize(deserializer)?.unwrap_or_default())
}

/// A list of strings; other items are skipped, and anything but a list is empty.
pub(crate) fn strings<'de, D: Deserializer<'de>, S: JsonText<'de>>(deserializer: D) -> Result<Vec<S>, D::Error> {
    deserializer.deserialize_any(Strings(PhantomData))
}

/// Any value that fits `T`; one that does not is read as missing. (Only for the few small
/// objects, such as `Login`, where a partial read is worth nothing.)
pub(crate) fn lenient<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: serde::de::DeserializeOwned,
{
    Ok(serde_json::from_value(Value::deserialize(deserializer)?).ok())
}

#[derive(Clone, Copy)]
enum Kind {
    Number,
    /// A string, or a number or boolean written as text.
    Text,
    /// A string and nothing else.
    StringOnly,
    Boolean,
}

/// What a lenient scalar read: the wanted kind, or `Missing` for anything that does not fit.
enum Scalar<S> {
    Number(f64),
    Text(S),
    Boolean(bool),
    Missing,
}

struct Lenient<S>(Kind, PhantomData<S>);

impl<'de, S: JsonText<'de>> Lenient<S> {
    fn new(kind: Kind) -> Self {
        Lenient(kind, PhantomData)
    }

    fn read_str(&self, s: &str) -> Scalar<S> {
        match self.0 {
            Kind::Number => s.trim().parse().map_or(Scalar::Missing, Scalar::Number),
            Kind::Text | Kind::StringOnly => Scalar::Text(S::from(s.to_owned())),
            Kind::Boolean if s.eq_ignore_ascii_case("true") => Scalar::Boolean(true),
            Kind::Boolean if s.eq_ignore_ascii_case("false") => Scalar::Boolean(false),
            Kind::Boolean => Scalar::Missing,
        }
    }

    /// A number as text is written as the JSON had it (`1.5`, `12`), so an id sent as a number
    /// reads the same as one sent as a string.
    fn read_number(&self, value: f64, written: impl FnOnce() -> String) -> Scalar<S> {
        match self.0 {
            Kind::Number => Scalar::Number(value),
            Kind::Text => Scalar::Text(S::from(written())),
            Kind::StringOnly | Kind::Boolean => Scalar::Missing,
        }
    }
}

impl<'de, S: JsonText<'de>> Visitor<'de> for Lenient<S> {
    type Value = Scalar<S>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
        Ok(match self.0 {
            Kind::Boolean => Scalar::Boolean(v),
            Kind::Text => Scalar::Text(S::from(v.to_string())),
            Kind::Number | Kind::StringOnly => Scalar::Missing,
        })
    }

    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(self.read_number(v as f64, || v.to_string()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(self.read_number(v as f64, || v.to_string()))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
        Ok(self.read_number(v, || serde_json::Number::from_f64(v).map_or_else(String::new, |n| n.to_string())))
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(match self.0 {
            Kind::Text | Kind::StringOnly => Scalar::Text(S::from(v)),
            _ => self.read_str(v),
        })
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(self.read_str(v))
    }

    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(match self.0 {
            Kind::Text | Kind::StringOnly => Scalar::Text(S::from(v)),
            _ => self.read_str(&v),
        })
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Scalar::Missing)
    }

    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(Scalar::Missing)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        IgnoredAny.visit_seq(seq).map(|_| Scalar::Missing)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        IgnoredAny.visit_map(map).map(|_| Scalar::Missing)
    }
}

struct Strings<S>(PhantomData<S>);

impl<'de, S: JsonText<'de>> Visitor<'de> for Strings<S> {
    type Value = Vec<S>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of strings")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<S>, A::Error> {
        let mut out = Vec::new();
        while let Some(item) = seq.next_element::<OnlyString<S>>()? {
            out.extend(item.0);
        }
        Ok(out)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Vec<S>, A::Error> {
        IgnoredAny.visit_map(map).map(|_| Vec::new())
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Vec<S>, E> {
        Ok(Vec::new())
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Vec<S>, E> {
        Ok(Vec::new())
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Vec<S>, E> {
        Ok(Vec::new())
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Vec<S>, E> {
        Ok(Vec::new())
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Vec<S>, E> {
        Ok(Vec::new())
    }

    fn visit_unit<E: de::Error>(self) -> Result<Vec<S>, E> {
        Ok(Vec::new())
    }
}

/// A list item that is kept only when it is a string.
struct OnlyString<S>(Option<S>);

impl<'de, S: JsonText<'de>> Deserialize<'de> for OnlyString<S> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(OnlyString(match deserializer.deserialize_any(Lenient::<S>::new(Kind::StringOnly))? {
            Scalar::Text(s) => Some(s),
            _ => None,
        }))
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    #[derive(Deserialize)]
    struct Row {
        #[serde(default, deserialize_with = "super::number")]
        n: Option<f64>,
        #[serde(default, deserialize_with = "super::text")]
        t: Option<String>,
        #[serde(default, deserialize_with = "super::boolean")]
        b: Option<bool>,
        #[serde(default, deserialize_with = "super::strings")]
        s: Vec<String>,
    }

    fn row(json: &str) -> Row {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn numbers_come_as_numbers_or_numeric_strings() {
        assert_eq!(row(r#"{"n": 1.5}"#).n, Some(1.5));
        assert_eq!(row(r#"{"n": -3}"#).n, Some(-3.0));
        assert_eq!(row(r#"{"n": " 12.25 "}"#).n, Some(12.25));
        for missing in
            [r#"{"n": null}"#, r#"{"n": "abc"}"#, r#"{"n": true}"#, r#"{"n": [1]}"#, r#"{"n": {"a": 1}}"#, "{}"]
        {
            assert_eq!(row(missing).n, None, "{missing}");
        }
    }

    #[test]
    fn text_keeps_numbers_as_written() {
        assert_eq!(row(r#"{"t": "x"}"#).t.as_deref(), Some("x"));
        assert_eq!(row(r#"{"t": 14}"#).t.as_deref(), Some("14"));
        assert_eq!(row(r#"{"t": 1.5}"#).t.as_deref(), Some("1.5"));
        assert_eq!(row(r#"{"t": "caf\u00e9"}"#).t.as_deref(), Some("café"));
        assert_eq!(row(r#"{"t": null}"#).t, None);
        assert_eq!(row(r#"{"t": {"Id": 1}}"#).t, None);
    }

    #[test]
    fn booleans_accept_true_in_any_case() {
        assert_eq!(row(r#"{"b": true}"#).b, Some(true));
        assert_eq!(row(r#"{"b": "TRUE"}"#).b, Some(true));
        assert_eq!(row(r#"{"b": "false"}"#).b, Some(false));
        assert_eq!(row(r#"{"b": "yes"}"#).b, None);
        assert_eq!(row(r#"{"b": 1}"#).b, None);
    }

    #[test]
    fn string_lists_skip_what_is_not_a_string() {
        assert_eq!(row(r#"{"s": ["a", 1, null, {"x": 1}, ["y"], "b"]}"#).s, ["a", "b"]);
        assert!(row(r#"{"s": null}"#).s.is_empty());
        assert!(row(r#"{"s": "a"}"#).s.is_empty());
    }

    #[test]
    fn a_value_that_does_not_fit_does_not_stop_the_rest() {
        let r = row(r#"{"n": {"deep": [1, {"x": null}]}, "t": "kept", "b": [true]}"#);
        assert_eq!((r.n, r.t.as_deref(), r.b), (None, Some("kept"), None));
    }
}

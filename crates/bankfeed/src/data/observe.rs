//! Decoding a body and learning its top level in the same pass.
//!
//! The check that a 200 is its operation's payload and not an error envelope needs the body's
//! top-level keys, whether each value is null or an object, and the values of the envelope's own
//! keys (`json.rs`). Parsing the body a second time for them cost a third of reading a payload
//! into tables. Instead the payload's decoding reports them as it goes: its deserializer is
//! wrapped so that the top-level object's keys pass through [`Members`], and the first event of
//! each top-level value is seen on its way to the model. Nothing below the top level is touched:
//! an array of 20,000 transactions reaches the model exactly as it did before.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, EnumAccess, IntoDeserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// What a top-level value is, as far as the check goes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Kind {
    Null,
    Object,
    /// An array, a string, a number or a boolean.
    Other,
}

/// What the decoding reports of the body's top level.
pub(crate) trait TopLevel {
    /// The body is not an object: it is `what` (`an array`, `null`, ...).
    fn not_object(&mut self, what: &'static str);
    /// Whether `key`'s whole value is wanted rather than its [`Kind`]: it is then read into a
    /// `Value`, handed to [`TopLevel::value`], and decoded from that.
    fn wants_value(&self, key: &str) -> bool;
    fn value(&mut self, key: String, value: &Value);
    fn kind(&mut self, key: String, kind: Kind);
    /// Something was met that this way cannot judge (an enum's value, a value the model read
    /// without looking at it): the caller parses the body instead.
    fn unsure(&mut self);
}

/// Decodes a `T` from `deserializer`, telling `top` about the top level on the way.
pub(crate) fn decode<'de, T: de::Deserialize<'de>, D: Deserializer<'de>>(
    deserializer: D,
    top: &mut dyn TopLevel,
) -> Result<T, D::Error> {
    T::deserialize(Probe { inner: deserializer, seen: Seen::Body(top) })
}

/// Who hears of what a [`Probe`] sees: the body's [`TopLevel`], or the slot of one of its values.
enum Seen<'t> {
    Body(&'t mut dyn TopLevel),
    Value(&'t mut Option<Kind>),
}

impl Seen<'_> {
    /// A value that is not an object was visited.
    fn saw(&mut self, kind: Kind, what: &'static str) {
        match self {
            Seen::Body(top) => top.not_object(what),
            Seen::Value(slot) => **slot = Some(kind),
        }
    }
}

/// A deserializer passed on unchanged but for its visitor, which is wrapped in a [`Watch`].
struct Probe<'t, D> {
    inner: D,
    seen: Seen<'t>,
}

macro_rules! forward {
    ($($method:ident($($arg:ident: $ty:ty),*);)*) => {
        $(
            fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, D::Error> {
                self.inner.$method($($arg,)* Watch { inner: visitor, seen: self.seen })
            }
        )*
    };
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Probe<'_, D> {
    type Error = D::Error;

    forward! {
        deserialize_any();
        deserialize_bool();
        deserialize_i8();
        deserialize_i16();
        deserialize_i32();
        deserialize_i64();
        deserialize_i128();
        deserialize_u8();
        deserialize_u16();
        deserialize_u32();
        deserialize_u64();
        deserialize_u128();
        deserialize_f32();
        deserialize_f64();
        deserialize_char();
        deserialize_str();
        deserialize_string();
        deserialize_bytes();
        deserialize_byte_buf();
        deserialize_option();
        deserialize_unit();
        deserialize_unit_struct(name: &'static str);
        deserialize_newtype_struct(name: &'static str);
        deserialize_seq();
        deserialize_tuple(len: usize);
        deserialize_tuple_struct(name: &'static str, len: usize);
        deserialize_map();
        deserialize_struct(name: &'static str, fields: &'static [&'static str]);
        deserialize_enum(name: &'static str, variants: &'static [&'static str]);
        deserialize_identifier();
    }

    /// A value the model ignores is still looked at: the parser's own skipping says nothing of
    /// what it skipped (it visits a unit whatever the value was).
    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.inner.deserialize_any(Watch { inner: visitor, seen: self.seen })
    }

    fn is_human_readable(&self) -> bool {
        self.inner.is_human_readable()
    }
}

/// Visits of a value that is not an object, each passed on after it is told.
macro_rules! seen_as {
    ($($method:ident($value:ty): $kind:ident, $what:literal;)*) => {
        $(
            fn $method<E: de::Error>(mut self, value: $value) -> Result<V::Value, E> {
                self.seen.saw(Kind::$kind, $what);
                self.inner.$method(value)
            }
        )*
    };
}

/// A visitor passed on unchanged, which first tells what it was visited with.
struct Watch<'t, V> {
    inner: V,
    seen: Seen<'t>,
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Watch<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.inner.expecting(f)
    }

    seen_as! {
        visit_bool(bool): Other, "a boolean";
        visit_i64(i64): Other, "a number";
        visit_i128(i128): Other, "a number";
        visit_u64(u64): Other, "a number";
        visit_u128(u128): Other, "a number";
        visit_f64(f64): Other, "a number";
        visit_char(char): Other, "a string";
        visit_str(&str): Other, "a string";
        visit_borrowed_str(&'de str): Other, "a string";
        visit_string(String): Other, "a string";
        visit_bytes(&[u8]): Other, "a string";
        visit_borrowed_bytes(&'de [u8]): Other, "a string";
        visit_byte_buf(Vec<u8>): Other, "a string";
    }

    fn visit_none<E: de::Error>(mut self) -> Result<V::Value, E> {
        self.seen.saw(Kind::Null, "null");
        self.inner.visit_none()
    }

    fn visit_unit<E: de::Error>(mut self) -> Result<V::Value, E> {
        self.seen.saw(Kind::Null, "null");
        self.inner.visit_unit()
    }

    /// Not null: what it is, the value inside tells.
    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<V::Value, D::Error> {
        self.inner.visit_some(Probe { inner: deserializer, seen: self.seen })
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, deserializer: D) -> Result<V::Value, D::Error> {
        self.inner.visit_newtype_struct(Probe { inner: deserializer, seen: self.seen })
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, seq: A) -> Result<V::Value, A::Error> {
        self.seen.saw(Kind::Other, "an array");
        self.inner.visit_seq(seq)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        match self.seen {
            Seen::Body(top) => self.inner.visit_map(Members { inner: map, top, key: None }),
            Seen::Value(slot) => {
                *slot = Some(Kind::Object);
                self.inner.visit_map(map)
            }
        }
    }

    /// A string or an object read as an enum: which of the two, the access does not say.
    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<V::Value, A::Error> {
        if let Seen::Body(top) = self.seen {
            top.unsure();
        }
        self.inner.visit_enum(data)
    }
}

/// The members of the top-level object, passed on to the model one by one, each key and what
/// its value is told to the [`TopLevel`] on the way.
struct Members<'t, A> {
    inner: A,
    top: &'t mut dyn TopLevel,
    /// The key whose value comes next.
    key: Option<String>,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Members<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, A::Error> {
        let Some(key) = self.inner.next_key::<String>()? else { return Ok(None) };
        let decoded = seed.deserialize(key.as_str().into_deserializer())?;
        self.key = Some(key);
        Ok(Some(decoded))
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, A::Error> {
        let key = self.key.take().unwrap_or_default();
        if self.top.wants_value(&key) {
            let value: Value = self.inner.next_value()?;
            self.top.value(key, &value);
            return seed.deserialize(value).map_err(de::Error::custom);
        }
        let mut kind = None;
        let decoded = self.inner.next_value_seed(Slot { inner: seed, kind: &mut kind })?;
        match kind {
            Some(kind) => self.top.kind(key, kind),
            None => self.top.unsure(),
        }
        Ok(decoded)
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

/// The seed of a top-level value, whose deserializer is probed for what the value is.
struct Slot<'k, S> {
    inner: S,
    kind: &'k mut Option<Kind>,
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Slot<'_, S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<S::Value, D::Error> {
        self.inner.deserialize(Probe { inner: deserializer, seen: Seen::Value(self.kind) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    /// Everything told, in order.
    #[derive(Default)]
    struct Log(Vec<String>);

    impl TopLevel for Log {
        fn not_object(&mut self, what: &'static str) {
            self.0.push(format!("not an object: {what}"));
        }

        fn wants_value(&self, key: &str) -> bool {
            key == "Whole"
        }

        fn value(&mut self, key: String, value: &Value) {
            self.0.push(format!("{key} = {value}"));
        }

        fn kind(&mut self, key: String, kind: Kind) {
            self.0.push(format!("{key}: {kind:?}"));
        }

        fn unsure(&mut self) {
            self.0.push("unsure".to_owned());
        }
    }

    #[derive(Deserialize, Debug, PartialEq)]
    struct Model {
        #[serde(rename = "Rows", default, deserialize_with = "super::super::de::list")]
        rows: Vec<u32>,
        #[serde(rename = "Name", default)]
        name: Option<String>,
        #[serde(rename = "Whole", default)]
        whole: Option<u32>,
    }

    fn run(body: &str) -> (Result<Model, serde_json::Error>, Vec<String>) {
        let mut log = Log::default();
        let mut deserializer = serde_json::Deserializer::from_str(body);
        let model = decode(&mut deserializer, &mut log).and_then(|model| deserializer.end().map(|()| model));
        (model, log.0)
    }

    #[test]
    fn every_top_level_value_is_told_and_the_model_gets_it_unchanged() {
        let body = r#"{"Rows": [1, 2], "Name": "n", "Skipped": {"Rows": [3]}, "Null": null, "Whole": 7, "Text": "t"}"#;
        let (model, log) = run(body);
        assert_eq!(model.unwrap(), Model { rows: vec![1, 2], name: Some("n".to_owned()), whole: Some(7) });
        assert_eq!(log, ["Rows: Other", "Name: Other", "Skipped: Object", "Null: Null", "Whole = 7", "Text: Other"]);
        let (model, log) = run(r#"{"Rows": null, "Name": null}"#);
        assert_eq!(model.unwrap(), Model { rows: vec![], name: None, whole: None });
        assert_eq!(log, ["Rows: Null", "Name: Null"]);
    }

    #[test]
    fn a_body_that_is_not_an_object_is_told_so() {
        assert_eq!(run("[]").1, ["not an object: an array"]);
        assert_eq!(run("null").1, Vec::<String>::new(), "the model refuses it before any visit");
        assert!(run("null").0.is_err());
    }
}

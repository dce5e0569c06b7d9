//! Reading JSON answers: typed decoding that keeps the start of a body it could not read, the
//! check that a 200 is the operation's payload and not an empty or error envelope, and lookups of
//! fields whose keys the service spells in varying case.

use std::fmt;

use serde::de::{IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;

use super::observe::{self, Kind, TopLevel};
use crate::error::Error;
// Callers read fields and show bodies through this module too.
pub(crate) use super::fields::{field, request_id_of, text_field};
pub(crate) use crate::shown::body_snippet;

/// A decode error of `operation` that keeps the start of the body.
pub(crate) fn decode_error(operation: &str, status: u16, bytes: &[u8], message: impl Into<String>) -> Error {
    let (operation, message, snippet) = (operation.to_owned(), message.into(), body_snippet(bytes));
    Error::Decode { operation, status, message, snippet, resumable: None }
}

/// Decodes a successful body into `T`, or a decode error that keeps a snippet of it.
pub(crate) fn decode<'a, T: serde::Deserialize<'a>>(operation: &str, status: u16, bytes: &'a [u8]) -> Result<T, Error> {
    // Checking UTF-8 once up front is faster than serde_json checking every string it reads;
    // bytes that are not UTF-8 go the slow way, for an error that says where.
    let parsed = match std::str::from_utf8(bytes) {
        Ok(text) => serde_json::from_str(text),
        Err(_) => serde_json::from_slice(bytes),
    };
    parsed.map_err(|e| decode_error(operation, status, bytes, e.to_string()))
}

/// What makes a 200 body the payload of its operation rather than an empty result
/// (docs/errors.md#protocol-surprises). Keys are matched in any case, and a field whose value is
/// `null` does not count.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Shape {
    /// At least one of these top-level fields.
    AnyOf(&'static [&'static str]),
    /// An attributes answer: at least one group (an object under a key that is not one of
    /// `not_groups`), a `Login`, or a `RequestId` in a body that names no code (a bare pending or
    /// error envelope carries a RequestId too).
    Attributes { not_groups: &'static [&'static str] },
}

/// A payload model and the shape its 200 must have.
pub(crate) trait Expected {
    const SHAPE: Shape;
}

/// Codes that mean "ask again", never an error (docs/protocol.md#polling).
const PENDING_CODES: [&str; 2] = ["OPERATION_PENDING", "OPERATION_DISPATCHED"];

/// Decodes a 200 of `operation` into `T` after checking that it is `T`'s payload: an envelope
/// that says error is that error (an `Error::Api`, built as an error status would be), and a
/// body that is not a JSON object, or holds none of the payload's fields, is a protocol surprise.
pub(crate) fn decode_payload<'a, T: serde::Deserialize<'a> + Expected>(
    operation: &str,
    status: u16,
    bytes: &'a [u8],
) -> Result<T, Error> {
    // The top level is learnt while the body is decoded (observe.rs), not by parsing it twice.
    let mut observed = Observed::default();
    match decode_observing(operation, status, bytes, &mut observed) {
        Ok(decoded) => {
            let top = if observed.unsure { Top::parsed(operation, status, bytes)? } else { observed.top };
            top.verdict(operation, status, bytes, T::SHAPE)?;
            Ok(decoded)
        }
        // The check speaks first: an error envelope, or a body that is not this payload, says
        // more than where the decoding stopped.
        Err(error) => {
            check_payload(operation, status, bytes, T::SHAPE)?;
            Err(error)
        }
    }
}

/// [`decode`], telling `top` about the body's top level on the way.
fn decode_observing<'a, T: serde::Deserialize<'a>>(
    operation: &str,
    status: u16,
    bytes: &'a [u8],
    top: &mut dyn TopLevel,
) -> Result<T, Error> {
    fn run<'a, R: serde_json::de::Read<'a>, T: serde::Deserialize<'a>>(
        mut deserializer: serde_json::Deserializer<R>,
        top: &mut dyn TopLevel,
    ) -> serde_json::Result<T> {
        let decoded = observe::decode(&mut deserializer, top)?;
        deserializer.end()?;
        Ok(decoded)
    }
    // As in `decode`: UTF-8 checked once up front, the slow way only for an error that says where.
    let parsed = match std::str::from_utf8(bytes) {
        Ok(text) => run(serde_json::Deserializer::from_str(text), top),
        Err(_) => run(serde_json::Deserializer::from_slice(bytes), top),
    };
    parsed.map_err(|e| decode_error(operation, status, bytes, e.to_string()))
}

/// Checks that `bytes`, a 2xx answer of `operation`, is a payload of `shape` (see
/// [`decode_payload`]). A body that is not JSON at all is a decode error.
pub(crate) fn check_payload(operation: &str, status: u16, bytes: &[u8], shape: Shape) -> Result<(), Error> {
    Top::parsed(operation, status, bytes)?.verdict(operation, status, bytes, shape)
}

/// For the fuzz tests: `Err` when the top level of `bytes` learnt while decoding it into `T`
/// differs from the one parsed. Only bodies that decode count: the others are parsed anyway.
pub(crate) fn observed_top_agrees<'a, T: serde::Deserialize<'a>>(bytes: &'a [u8]) -> Result<(), Error> {
    let mut observed = Observed::default();
    if decode_observing::<T>("Op", 200, bytes, &mut observed).is_err() || observed.unsure {
        return Ok(());
    }
    match serde_json::from_slice::<Top>(bytes) {
        Ok(parsed) if parsed == observed.top => Ok(()),
        parsed => Err(Error::Internal {
            message: format!(
                "the top level learnt while decoding, {:?}, is not the parsed one, {parsed:?}",
                observed.top
            ),
        }),
    }
}

/// The error a 2xx body's envelope says it is, for an operation whose success body has no fixed
/// shape (DeleteCard): any body that is not such an envelope, JSON or not, is fine.
pub(crate) fn check_error_envelope(operation: &str, status: u16, bytes: &[u8]) -> Result<(), Error> {
    match serde_json::from_slice::<Top>(bytes) {
        Ok(top) if top.not_object.is_none() => top.envelope_error(operation, status, bytes),
        _ => Ok(()),
    }
}

/// [`check_payload`] of a body already parsed into `value`.
pub(crate) fn check_payload_value(
    operation: &str,
    status: u16,
    bytes: &[u8],
    value: &Value,
    shape: Shape,
) -> Result<(), Error> {
    Top::of_value(value).verdict(operation, status, bytes, shape)
}

/// What a body is at its top level, read without building anything below it.
#[derive(Debug, Default, PartialEq)]
struct Top {
    /// `None` for an object, otherwise what the body is instead (`an array`, `null`, ...).
    not_object: Option<&'static str>,
    http_status: Option<f64>,
    code: Option<String>,
    message: Option<String>,
    /// Top-level keys whose value is not null, each with whether that value is an object.
    present: Vec<(String, bool)>,
}

impl Top {
    fn of_value(value: &Value) -> Top {
        let Value::Object(object) = value else { return Top { not_object: Some(kind_of(value)), ..Top::default() } };
        let number = |v: &Value| match v {
            Value::Number(n) => n.as_f64(),
            Value::String(s) => s.trim().parse().ok(),
            _ => None,
        };
        let mut top = Top::default();
        for (key, value) in object {
            let slot = match Slot::of(key) {
                Slot::Status => {
                    top.http_status = top.http_status.or_else(|| number(value));
                    None
                }
                Slot::Code => Some(&mut top.code),
                Slot::Message => Some(&mut top.message),
                Slot::Other => None,
            };
            if let (Some(slot @ None), Some(text)) = (slot, value.as_str()) {
                *slot = Some(text.to_owned());
            }
            if !value.is_null() {
                top.present.push((key.clone(), value.is_object()));
            }
        }
        top
    }

    /// The top level of `bytes`, parsed; a body that is not JSON is a decode error.
    fn parsed(operation: &str, status: u16, bytes: &[u8]) -> Result<Top, Error> {
        serde_json::from_slice(bytes).map_err(|e| decode_error(operation, status, bytes, e.to_string()))
    }

    /// Records an `HttpStatusCode`: the first that is a number counts. It is no payload field.
    fn status(&mut self, number: Option<f64>) {
        self.http_status = self.http_status.or(number);
    }

    /// Records a code or a `Message`: the first that is text counts, and makes the key present.
    fn text(&mut self, slot: Slot, key: String, text: Option<String>) {
        let Some(text) = text else { return };
        let kept = if matches!(slot, Slot::Code) { &mut self.code } else { &mut self.message };
        if kept.is_none() {
            *kept = Some(text);
        }
        self.present.push((key, false));
    }

    /// Records any other key, present unless its value is null.
    fn other(&mut self, key: String, presence: Presence) {
        match presence {
            Presence::Null => {}
            Presence::Object => self.present.push((key, true)),
            Presence::Other => self.present.push((key, false)),
        }
    }

    fn verdict(self, operation: &str, status: u16, bytes: &[u8], shape: Shape) -> Result<(), Error> {
        if let Some(what) = self.not_object {
            return Err(Error::protocol(operation, status, format!("expected a JSON object, got {what}"), bytes));
        }
        self.envelope_error(operation, status, bytes)?;
        if self.holds(shape) {
            return Ok(());
        }
        let expected = match shape {
            Shape::AnyOf(fields) => format!("none of {}", fields.join(", ")),
            Shape::Attributes { .. } => "no attribute group, Login or RequestId".to_owned(),
        };
        Err(Error::protocol(
            operation,
            status,
            format!("the answer holds {expected}: it is not this operation's payload"),
            bytes,
        ))
    }

    /// The error this envelope says it is, if it says one.
    fn envelope_error(&self, operation: &str, status: u16, bytes: &[u8]) -> Result<(), Error> {
        let Some(error_status) = self.error_status(status) else { return Ok(()) };
        // Built by the same code as an answer with an error status, so that it is classified
        // (code first, then status) and kept exactly as one. An envelope that names no error
        // status keeps the status that came; the body is read the same for any error status.
        match crate::data::answer::api_error(error_status.max(400), bytes.to_vec()) {
            Some(mut api) => {
                api.status = error_status;
                api.operation = Some(operation.to_owned());
                Err(api.into())
            }
            None => Ok(()),
        }
    }

    /// The status of the error this envelope says it is, if it says one: its `HttpStatusCode`
    /// when that is an error status, else the status that came. An envelope says error when its
    /// `HttpStatusCode` is 400 or more, or when it names a code that is not a pending one with a
    /// `Message` and no `HttpStatusCode` saying otherwise.
    fn error_status(&self, status: u16) -> Option<u16> {
        // `as` is exact here: the value is finite and within 100..1000.
        let http_status = self.http_status.filter(|s| (100.0..1000.0).contains(s)).map(|s| s as u16);
        if let Some(error @ 400..) = http_status {
            return Some(error);
        }
        let code = self.code.as_deref().map(str::trim).filter(|c| !c.is_empty())?;
        let pending = PENDING_CODES.iter().any(|p| p.eq_ignore_ascii_case(code));
        let has_message = self.message.as_deref().is_some_and(|m| !m.trim().is_empty());
        (!pending && has_message && http_status.is_none()).then_some(status)
    }

    fn holds(&self, shape: Shape) -> bool {
        let named = |names: &[&str], key: &str| names.iter().any(|name| name.eq_ignore_ascii_case(key));
        match shape {
            Shape::AnyOf(fields) => self.present.iter().any(|(key, _)| named(fields, key)),
            Shape::Attributes { not_groups } => self.present.iter().any(|(key, is_object)| {
                (*is_object && !named(not_groups, key))
                    || key.eq_ignore_ascii_case("Login")
                    || (key.eq_ignore_ascii_case("RequestId") && self.code.is_none())
            }),
        }
    }
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

impl<'de> serde::Deserialize<'de> for Top {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(TopVisitor)
    }
}

struct TopVisitor;

impl TopVisitor {
    #[expect(clippy::unnecessary_wraps, reason = "the result every visit_* method returns")]
    fn other<E>(what: &'static str) -> Result<Top, E> {
        Ok(Top { not_object: Some(what), ..Top::default() })
    }
}

impl<'de> Visitor<'de> for TopVisitor {
    type Value = Top;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Top, A::Error> {
        let mut top = Top::default();
        while let Some(key) = map.next_key::<String>()? {
            match Slot::of(&key) {
                Slot::Status => {
                    let Number(number) = map.next_value()?;
                    top.status(number);
                }
                slot @ (Slot::Code | Slot::Message) => {
                    let Text(text) = map.next_value()?;
                    top.text(slot, key, text);
                }
                Slot::Other => {
                    let presence = map.next_value()?;
                    top.other(key, presence);
                }
            }
        }
        Ok(top)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Top, A::Error> {
        IgnoredAny.visit_seq(seq)?;
        Self::other("an array")
    }

    fn visit_unit<E>(self) -> Result<Top, E> {
        Self::other("null")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Top, E> {
        Self::other("a boolean")
    }

    fn visit_i64<E>(self, _: i64) -> Result<Top, E> {
        Self::other("a number")
    }

    fn visit_u64<E>(self, _: u64) -> Result<Top, E> {
        Self::other("a number")
    }

    fn visit_f64<E>(self, _: f64) -> Result<Top, E> {
        Self::other("a number")
    }

    fn visit_str<E>(self, _: &str) -> Result<Top, E> {
        Self::other("a string")
    }
}

/// A lenient number (a number or numeric text), as the models read them.
#[derive(serde::Deserialize)]
struct Number(#[serde(deserialize_with = "super::de::number")] Option<f64>);

/// A lenient text (a string, or a number as written).
#[derive(serde::Deserialize)]
struct Text(#[serde(deserialize_with = "super::de::text")] Option<String>);

/// A [`Top`] learnt while the body was decoded, and whether it can be trusted.
#[derive(Default)]
struct Observed {
    top: Top,
    /// Something was met that the decoding could not judge: the body is parsed for its top level.
    unsure: bool,
}

impl TopLevel for Observed {
    fn not_object(&mut self, what: &'static str) {
        self.top.not_object = Some(what);
    }

    fn wants_value(&self, key: &str) -> bool {
        !matches!(Slot::of(key), Slot::Other)
    }

    /// Read as the parsed [`Top`] reads it, with the same lenient decoders.
    fn value(&mut self, key: String, value: &Value) {
        match Slot::of(&key) {
            Slot::Status => match Number::deserialize(value) {
                Ok(Number(number)) => self.top.status(number),
                Err(_) => self.unsure = true,
            },
            slot => match Text::deserialize(value) {
                Ok(Text(text)) => self.top.text(slot, key, text),
                Err(_) => self.unsure = true,
            },
        }
    }

    fn kind(&mut self, key: String, kind: Kind) {
        let presence = match kind {
            Kind::Null => Presence::Null,
            Kind::Object => Presence::Object,
            Kind::Other => Presence::Other,
        };
        self.top.other(key, presence);
    }

    fn unsure(&mut self) {
        self.unsure = true;
    }
}

/// What a top-level key is to the check.
#[derive(Clone, Copy)]
enum Slot {
    Status,
    Code,
    Message,
    Other,
}

impl Slot {
    fn of(key: &str) -> Slot {
        if key.eq_ignore_ascii_case("HttpStatusCode") {
            Slot::Status
        } else if key.eq_ignore_ascii_case("FlinksCode") || key.eq_ignore_ascii_case("ServiceCode") {
            Slot::Code
        } else if key.eq_ignore_ascii_case("Message") {
            Slot::Message
        } else {
            Slot::Other
        }
    }
}

/// Whether a value is there, read without building it.
enum Presence {
    Null,
    Object,
    Other,
}

impl<'de> serde::Deserialize<'de> for Presence {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct PresenceVisitor;
        impl<'de> Visitor<'de> for PresenceVisitor {
            type Value = Presence;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Presence, A::Error> {
                IgnoredAny.visit_map(map).map(|_| Presence::Object)
            }

            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Presence, A::Error> {
                IgnoredAny.visit_seq(seq).map(|_| Presence::Other)
            }

            fn visit_unit<E>(self) -> Result<Presence, E> {
                Ok(Presence::Null)
            }

            fn visit_none<E>(self) -> Result<Presence, E> {
                Ok(Presence::Null)
            }

            fn visit_bool<E>(self, _: bool) -> Result<Presence, E> {
                Ok(Presence::Other)
            }

            fn visit_i64<E>(self, _: i64) -> Result<Presence, E> {
                Ok(Presence::Other)
            }

            fn visit_u64<E>(self, _: u64) -> Result<Presence, E> {
                Ok(Presence::Other)
            }

            fn visit_f64<E>(self, _: f64) -> Result<Presence, E> {
                Ok(Presence::Other)
            }

            fn visit_str<E>(self, _: &str) -> Result<Presence, E> {
                Ok(Presence::Other)
            }
        }
        deserializer.deserialize_any(PresenceVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn field_lookup_ignores_case() {
        assert_eq!(text_field(&json!({"flinkscode": "X"}), &["FlinksCode"]).as_deref(), Some("X"));
        assert_eq!(text_field(&json!({"ServiceCode": "Y"}), &["FlinksCode", "ServiceCode"]).as_deref(), Some("Y"));
        assert_eq!(text_field(&json!(["RequestId"]), &["RequestId"]), None);
    }

    #[test]
    fn the_request_id_is_read_from_object_bodies_only() {
        assert_eq!(request_id_of(br#"{"requestid": "r"}"#).as_deref(), Some("r"));
        assert_eq!(request_id_of(b"<html>"), None);
    }

    const INVESTMENTS: Shape = Shape::AnyOf(&["Accounts", "Securities", "Value", "Cash"]);
    const ACCOUNTS: Shape = Shape::AnyOf(&["Accounts"]);
    const ATTRIBUTES: Shape = Shape::Attributes { not_groups: &["Login", "RequestId", "HttpStatusCode", "FlinksCode"] };

    fn check(shape: Shape, body: &str) -> Result<(), Error> {
        check_payload("Op", 200, body.as_bytes(), shape)
    }

    fn protocol(result: Result<(), Error>) -> (u16, Option<String>, String) {
        match result {
            Err(Error::Protocol { operation, status, request_id, snippet, .. }) => {
                assert_eq!(operation, "Op");
                (status, request_id, snippet)
            }
            other => panic!("expected a protocol error, got {other:?}"),
        }
    }

    fn api(result: Result<(), Error>) -> crate::error::ApiError {
        match result {
            Err(Error::Api(api)) => *api,
            other => panic!("expected an API error, got {other:?}"),
        }
    }

    #[test]
    fn a_body_that_is_not_an_object_or_holds_no_payload_field_is_a_protocol_surprise() {
        for shape in [INVESTMENTS, ACCOUNTS, ATTRIBUTES] {
            for body in ["{}", "[]", "null", "\"x\"", "3", "true", "[{\"Accounts\": []}]", r#"{"HttpStatusCode": 200}"#]
            {
                let (status, request_id, snippet) = protocol(check(shape, body));
                assert_eq!((status, request_id, snippet.as_str()), (200, None, body), "{shape:?} {body}");
            }
        }
        let (_, request_id, _) = protocol(check(ACCOUNTS, r#"{"RequestId": "r-1", "Accounts": null}"#));
        assert_eq!(request_id.as_deref(), Some("r-1"));
        let (_, request_id, _) = protocol(check(INVESTMENTS, r#"{"RequestId": "r-2", "Login": {"Id": "l"}}"#));
        assert_eq!(request_id.as_deref(), Some("r-2"));
    }

    #[test]
    fn a_payload_field_in_any_case_makes_a_payload_even_empty() {
        check(ACCOUNTS, r#"{"Accounts": []}"#).unwrap();
        check(ACCOUNTS, r#"{"accounts": [], "HttpStatusCode": 200, "RequestId": "r"}"#).unwrap();
        check(INVESTMENTS, r#"{"Value": 0}"#).unwrap();
        check(INVESTMENTS, r#"{"SECURITIES": []}"#).unwrap();
        // A value the model reads as missing is still the field: the payload is there.
        check(INVESTMENTS, r#"{"Cash": "n/a"}"#).unwrap();
        // A pending code on a 200 is not an error; the fields decide.
        check(ACCOUNTS, r#"{"FlinksCode": "OPERATION_PENDING", "Message": "m", "Accounts": []}"#).unwrap();
        protocol(check(ACCOUNTS, r#"{"FlinksCode": "OPERATION_PENDING", "Message": "m", "RequestId": "r"}"#));
    }

    #[test]
    fn an_attributes_payload_has_a_group_a_login_or_a_bare_request_id() {
        check(ATTRIBUTES, r#"{"Card": {"balance_min": 1}}"#).unwrap();
        check(ATTRIBUTES, r#"{"Login": {"Id": "l"}}"#).unwrap();
        check(ATTRIBUTES, r#"{"requestid": "r", "HttpStatusCode": 200}"#).unwrap();
        // A key that is not a group does not make one, nor does a group that is not an object.
        protocol(check(ATTRIBUTES, r#"{"FlinksCode": "OPERATION_PENDING", "RequestId": "r"}"#));
        protocol(check(ATTRIBUTES, r#"{"Card": [1, 2], "Other": 3}"#));
    }

    #[test]
    fn an_envelope_that_says_error_is_that_error() {
        let body =
            r#"{"HttpStatusCode": 500, "Message": "failed", "FlinksCode": "AGGREGATION_ERROR", "RequestId": "r-5"}"#;
        for shape in [INVESTMENTS, ACCOUNTS, ATTRIBUTES] {
            let error = api(check(shape, body));
            assert_eq!(error.status, 500);
            assert_eq!(error.code.as_deref(), Some("AGGREGATION_ERROR"));
            assert_eq!(error.message.as_deref(), Some("failed"));
            assert_eq!(error.request_id.as_deref(), Some("r-5"));
            assert_eq!(error.operation.as_deref(), Some("Op"));
            assert_eq!(error.kind(), crate::error::ApiErrorKind::Aggregation);
            assert_eq!(error.body, crate::error::Body::Json(serde_json::from_str(body).unwrap()));
        }
        // Even with payload fields, and with the status as text, in any case.
        let error =
            api(check(ACCOUNTS, r#"{"httpstatuscode": "401", "flinkscode": "SESSION_EXPIRED", "Accounts": []}"#));
        assert_eq!((error.status, error.kind()), (401, crate::error::ApiErrorKind::Session));
        // No status: a code that is not pending, with a message, keeps the status that came.
        let error = api(check(INVESTMENTS, r#"{"ServiceCode": "SESSION_NONEXISTENT", "Message": "gone"}"#));
        assert_eq!((error.status, error.kind()), (200, crate::error::ApiErrorKind::Session));
        // A status alone decides too: a 503 envelope without a code.
        assert_eq!(api(check(ACCOUNTS, r#"{"HttpStatusCode": 503}"#)).kind(), crate::error::ApiErrorKind::RetryLater);
        // A success status, an absurd one, or a code without a message are not errors.
        check(ACCOUNTS, r#"{"HttpStatusCode": 200, "FlinksCode": "X", "Message": "ok", "Accounts": []}"#).unwrap();
        check(ACCOUNTS, r#"{"HttpStatusCode": 1e308, "Accounts": []}"#).unwrap();
        check(ACCOUNTS, r#"{"FlinksCode": "SOMETHING", "Accounts": []}"#).unwrap();
    }

    #[test]
    fn a_body_that_is_not_json_is_a_decode_error() {
        assert!(matches!(check(ACCOUNTS, "<html>oops"), Err(Error::Decode { status: 200, .. })));
        assert!(matches!(check(ACCOUNTS, ""), Err(Error::Decode { .. })));
    }

    #[derive(serde::Deserialize, Debug)]
    struct Rows {
        #[serde(rename = "Accounts", default, deserialize_with = "super::super::de::list")]
        accounts: Vec<Value>,
    }

    impl Expected for Rows {
        const SHAPE: Shape = ACCOUNTS;
    }

    #[test]
    fn large_bodies_are_checked_as_small_ones_are() {
        let rows: Vec<Value> = (0..20_000).map(|i| json!({"Id": format!("a{i}"), "Title": "x".repeat(10)})).collect();
        let large = serde_json::to_vec(&json!({"Accounts": rows})).unwrap();
        let decoded: Rows = decode_payload("Op", 200, &large).unwrap();
        assert_eq!(decoded.accounts.len(), 20_000);
        let envelope =
            serde_json::to_vec(&json!({"HttpStatusCode": 500, "Accounts": rows, "FlinksCode": "AGGREGATION_ERROR"}))
                .unwrap();
        assert!(matches!(decode_payload::<Rows>("Op", 200, &envelope), Err(Error::Api(_))));
        let other = serde_json::to_vec(&json!({"Something": rows})).unwrap();
        assert!(matches!(decode_payload::<Rows>("Op", 200, &other), Err(Error::Protocol { .. })));
        assert!(matches!(decode_payload::<Rows>("Op", 200, &large[..large.len() - 1]), Err(Error::Decode { .. })));
        assert!(matches!(decode_payload::<Rows>("Op", 200, b"[]"), Err(Error::Protocol { .. })));
    }

    /// A model that reads nothing: every top-level value is skipped by the decoding.
    #[derive(serde::Deserialize, Debug)]
    struct Nothing {}

    #[test]
    fn the_top_level_learnt_while_decoding_is_the_parsed_one() {
        let bodies = [
            r#"{"Accounts": [{"Id": "a", "Message": "m"}], "HttpStatusCode": 200, "RequestId": "r"}"#,
            r#"{"HttpStatusCode": "500", "FlinksCode": 12, "Message": "x\"y", "Login": {"Id": "l"}}"#,
            r#"{"httpstatuscode": null, "flinkscode": "A", "servicecode": "B", "message": {"x": 1}, "Card": {}}"#,
            r#"{"Value": 0, "Cash": "n/a", "Securities": null, "accounts": [], "Accounts": null}"#,
            r#" { "HttpStatusCode" : 4.01e2 , "Message" : "\u00e9" , "Other" : [ "}" , { } ] } "#,
            r#"{"Acc\u006funts": [], "Message": true, "FlinksCode": [1], "HttpStatusCode": {"a": 1}}"#,
            "{}",
            "[]",
        ];
        for body in bodies {
            let parsed: Top = serde_json::from_slice(body.as_bytes()).unwrap();
            let mut observed = Observed::default();
            decode_observing::<Nothing>("Op", 200, body.as_bytes(), &mut observed).unwrap();
            assert!(!observed.unsure, "{body}");
            assert_eq!(observed.top, parsed, "{body}");
            let mut observed = Observed::default();
            if decode_observing::<Rows>("Op", 200, body.as_bytes(), &mut observed).is_ok() {
                assert_eq!(observed.top, parsed, "{body}");
            }
            observed_top_agrees::<Nothing>(body.as_bytes()).unwrap();
        }
    }

    #[test]
    fn a_payload_learnt_while_decoding_gets_the_verdict_of_one_parsed() {
        let escaped_key = br#"{"\u0041ccounts": [], "HttpStatusCode": 500, "FlinksCode": "E", "Message": "m"}"#;
        assert!(matches!(decode_payload::<Rows>("Op", 200, escaped_key), Err(Error::Api(_))));
        assert!(matches!(decode_payload::<Rows>("Op", 200, br#"{"accounts": []}"#), Ok(Rows { .. })));
        let error = decode_payload::<Rows>("Op", 200, br#"{"Message": "m", "FlinksCode": "E", "Rows": 1}"#);
        assert!(matches!(error, Err(Error::Api(_))), "{error:?}");
        // A body the model reads from an array is still not an object.
        assert!(matches!(decode_payload::<Rows>("Op", 200, b"[[]]"), Err(Error::Protocol { .. })));
    }

    #[test]
    fn a_body_that_does_not_decode_keeps_its_start() {
        match decode::<Value>("Investments", 200, br#"{"Accounts": [{"Id": "a1", "#) {
            Err(Error::Decode { operation, status, snippet, .. }) => {
                assert_eq!((operation.as_str(), status), ("Investments", 200));
                assert!(snippet.contains(r#""Id": "a1""#), "{snippet}");
            }
            other => panic!("{other:?}"),
        }
    }
}

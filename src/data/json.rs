//! Reading JSON answers: typed decoding that keeps the start of a body it could not read, the
//! check that a 200 is the operation's payload and not an empty or error envelope, and lookups of
//! fields whose keys the service spells in varying case.

use std::fmt;

use serde::de::{IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::error::{snippet, Error};

/// How much of a body an error keeps.
const SNIPPET_CHARS: usize = 200;

/// The start of `bytes` as text, for an error message.
pub(crate) fn body_snippet(bytes: &[u8]) -> String {
    snippet(&String::from_utf8_lossy(bytes), SNIPPET_CHARS)
}

/// A decode error of `operation` that keeps the start of the body.
pub(crate) fn decode_error(operation: &str, status: u16, bytes: &[u8], message: impl Into<String>) -> Error {
    Error::Decode { operation: operation.to_owned(), status, message: message.into(), snippet: body_snippet(bytes) }
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

/// The value under `name` in `value`, the key matched case-insensitively (the service binds keys
/// case-insensitively, and its answers vary in casing too).
pub(crate) fn field<'a>(value: &'a Value, name: &str) -> Option<&'a Value> {
    value.as_object()?.iter().find(|(key, _)| key.eq_ignore_ascii_case(name)).map(|(_, v)| v)
}

/// The first of `names` present in `value` as a string, keys matched case-insensitively.
pub(crate) fn text_field(value: &Value, names: &[&str]) -> Option<String> {
    names.iter().find_map(|name| field(value, name).and_then(Value::as_str).map(str::to_owned))
}

/// The `RequestId` of a body, when it is a JSON object that names one.
pub(crate) fn request_id_of(bytes: &[u8]) -> Option<String> {
    let value: Value = serde_json::from_slice(bytes).ok()?;
    text_field(&value, &["RequestId"])
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

/// Bodies from this size on are checked on a second thread while the first decodes them: the
/// check reads the whole body, which would otherwise add half again to the decoding of a large one.
const PARALLEL_CHECK_BYTES: usize = 256 * 1024;

/// Decodes a 200 of `operation` into `T` after checking that it is `T`'s payload: an envelope
/// that says error is that error (an `Error::Api`, built as an error status would be), and a
/// body that is not a JSON object, or holds none of the payload's fields, is a protocol surprise.
pub(crate) fn decode_payload<'a, T: serde::Deserialize<'a> + Expected>(
    operation: &str,
    status: u16,
    bytes: &'a [u8],
) -> Result<T, Error> {
    if bytes.len() < PARALLEL_CHECK_BYTES {
        check_payload(operation, status, bytes, T::SHAPE)?;
        return decode(operation, status, bytes);
    }
    std::thread::scope(|scope| {
        let checked = std::thread::Builder::new()
            .name("bankfeed-check".to_owned())
            .spawn_scoped(scope, || check_payload(operation, status, bytes, T::SHAPE));
        let decoded = decode(operation, status, bytes);
        // A thread that could not start or failed is not a verdict: check here instead.
        let verdict = match checked.map(|thread| thread.join()) {
            Ok(Ok(verdict)) => verdict,
            _ => check_payload(operation, status, bytes, T::SHAPE),
        };
        verdict?;
        decoded
    })
}

/// Checks that `bytes`, a 2xx answer of `operation`, is a payload of `shape` (see
/// [`decode_payload`]). A body that is not JSON at all is a decode error.
pub(crate) fn check_payload(operation: &str, status: u16, bytes: &[u8], shape: Shape) -> Result<(), Error> {
    let top: Top = serde_json::from_slice(bytes).map_err(|e| decode_error(operation, status, bytes, e.to_string()))?;
    top.verdict(operation, status, bytes, shape)
}

/// The error a 2xx body's envelope says it is, for an operation whose success body has no fixed
/// shape (DeleteCard): any body that is not such an envelope, JSON or not, is fine.
pub(crate) fn check_error_envelope(status: u16, bytes: &[u8]) -> Result<(), Error> {
    match serde_json::from_slice::<Top>(bytes) {
        Ok(top) if top.not_object.is_none() => top.envelope_error(status, bytes),
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
#[derive(Debug, Default)]
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
            let slot = if key.eq_ignore_ascii_case("HttpStatusCode") {
                top.http_status = top.http_status.or_else(|| number(value));
                None
            } else if key.eq_ignore_ascii_case("FlinksCode") || key.eq_ignore_ascii_case("ServiceCode") {
                Some(&mut top.code)
            } else if key.eq_ignore_ascii_case("Message") {
                Some(&mut top.message)
            } else {
                None
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

    fn verdict(self, operation: &str, status: u16, bytes: &[u8], shape: Shape) -> Result<(), Error> {
        if let Some(what) = self.not_object {
            return Err(Error::protocol(operation, status, format!("expected a JSON object, got {what}"), bytes));
        }
        self.envelope_error(status, bytes)?;
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
    fn envelope_error(&self, status: u16, bytes: &[u8]) -> Result<(), Error> {
        let Some(error_status) = self.error_status(status) else { return Ok(()) };
        // Built by the same code as an answer with an error status, so that it is classified
        // (code first, then status) and kept exactly as one. An envelope that names no error
        // status keeps the status that came; the body is read the same for any error status.
        match crate::http::api_error(error_status.max(400), bytes.to_vec()) {
            Some(mut api) => {
                api.status = error_status;
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
            let slot = if key.eq_ignore_ascii_case("HttpStatusCode") {
                let Number(number) = map.next_value()?;
                top.http_status = top.http_status.or(number);
                // Not a payload field of any operation: its presence does not matter.
                continue;
            } else if key.eq_ignore_ascii_case("FlinksCode") || key.eq_ignore_ascii_case("ServiceCode") {
                &mut top.code
            } else if key.eq_ignore_ascii_case("Message") {
                &mut top.message
            } else {
                match map.next_value()? {
                    Presence::Null => {}
                    Presence::Object => top.present.push((key, true)),
                    Presence::Other => top.present.push((key, false)),
                }
                continue;
            };
            let Text(text) = map.next_value()?;
            if let Some(text) = text {
                if slot.is_none() {
                    *slot = Some(text);
                }
                top.present.push((key, false));
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
    fn large_bodies_are_checked_alongside_their_decoding() {
        let rows: Vec<Value> = (0..20_000).map(|i| json!({"Id": format!("a{i}"), "Title": "x".repeat(10)})).collect();
        let large = serde_json::to_vec(&json!({"Accounts": rows})).unwrap();
        assert!(large.len() > PARALLEL_CHECK_BYTES);
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

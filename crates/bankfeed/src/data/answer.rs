//! What an answer is, before any operation reads it: data, pending (a 202 and what it names), a
//! challenge (203), or an error answer of the service, kept whole and bounded as an
//! [`ApiError`] (docs/errors.md). The sender classifies every answer here; a 200 whose envelope
//! says error becomes the same `ApiError` (`data/json.rs`).

use std::time::Duration;

use serde_json::Value;

use crate::data::fields::{field, text_field};
use crate::error::{ApiError, Body, Error};
use crate::shown::{body_snippet, snippet};

/// Error bodies smaller than this are kept whole on the `ApiError`; a larger one is kept as a
/// snippet, so that an exception stays small enough to log and pickle.
const ERROR_BODY_KEPT: usize = 64 * 1024;
/// Longest `Message` an `ApiError` keeps, and its display with it.
const MESSAGE_CHARS: usize = 1000;
/// A code or a RequestId longer than this is not one; it is cut rather than kept whole.
pub(crate) const ID_CHARS: usize = 100;

#[derive(Clone, Debug)]
pub(crate) struct Pending {
    /// `OPERATION_PENDING` or `OPERATION_DISPATCHED`.
    pub code: Option<String>,
    pub request_id: Option<String>,
    /// The `href` of an `...Async` link that names its endpoint (`/GetAccountsDetailAsync`):
    /// poll it with GET. None when the body names none usable, production's literal
    /// `{Endpoint}Async` template included: the operation's own way is taken then
    /// (docs/protocol.md#polling).
    pub async_href: Option<String>,
    /// The body as sent, for the error of an operation that does not expect a 202.
    pub body: Vec<u8>,
}

/// A classified answer.
#[derive(Debug)]
pub(crate) enum Reply {
    /// A 2xx other than 202 and 203, with its status.
    Data { status: u16, bytes: Vec<u8> },
    /// A 202.
    Pending(Pending),
    /// A 203, with its body.
    Challenge(Vec<u8>),
}

impl Reply {
    /// This answer as a protocol surprise of `operation` (docs/errors.md#protocol-surprises): the
    /// status that came, the RequestId its body carried, the start of the body, and `message`
    /// saying what the operation expected instead.
    pub(crate) fn unexpected(self, operation: &str, message: impl Into<String>) -> Error {
        let (status, bytes) = match self {
            Reply::Data { status, bytes } => (status, bytes),
            Reply::Pending(pending) => (202, pending.body),
            Reply::Challenge(bytes) => (203, bytes),
        };
        Error::protocol(operation, status, message, &bytes)
    }
}

/// An answer that is none of the [`Reply`]s: an error answer, or a 202 whose body is not a JSON
/// object. The sender makes it an [`crate::Error`] naming its operation.
#[derive(Debug)]
pub(crate) enum Refusal {
    Api(Box<ApiError>),
    Decode { status: u16, message: String, snippet: String },
}

/// The RequestId of a body, found without building the rest of it.
pub(crate) fn request_id_field(bytes: &[u8]) -> Option<String> {
    serde_json::from_slice::<ErrorFields>(bytes).ok()?.request_id
}

/// Sorts an answer by its status: data (2xx), pending (202, whose body must be a JSON object),
/// a challenge (203), or an error answer, kept whole as an [`ApiError`].
pub(crate) fn classify(status: u16, bytes: Vec<u8>, retry_after: Option<Duration>) -> Result<Reply, Refusal> {
    match status {
        202 => {
            let body = parse_object(status, &bytes)?;
            Ok(Reply::Pending(Pending {
                code: text_field(&body, &["FlinksCode", "ServiceCode"]),
                request_id: text_field(&body, &["RequestId"]),
                async_href: async_href(&body),
                body: bytes,
            }))
        }
        203 => Ok(Reply::Challenge(bytes)),
        200..=299 => Ok(Reply::Data { status, bytes }),
        _ => Err(Refusal::Api(Box::new(error_answer(status, bytes, retry_after)))),
    }
}

/// An error answer, kept bounded: the parsed body when it is small, a snippet otherwise, and
/// code, message and RequestId cut to a sane length.
fn error_answer(status: u16, bytes: Vec<u8>, retry_after: Option<Duration>) -> ApiError {
    let fields = serde_json::from_slice::<ErrorFields>(&bytes).unwrap_or_default();
    let body = if bytes.len() >= ERROR_BODY_KEPT {
        Body::Text(body_snippet(&bytes))
    } else {
        match serde_json::from_slice::<Value>(&bytes) {
            Ok(value) => Body::Json(value),
            Err(_) => Body::Text(String::from_utf8_lossy(&bytes).into_owned()),
        }
    };
    let cut = |text: Option<String>, max: usize| text.map(|text| snippet(&text, max));
    ApiError {
        status,
        code: cut(fields.flinks_code.or(fields.service_code), ID_CHARS),
        message: cut(fields.message, MESSAGE_CHARS),
        request_id: cut(fields.request_id, ID_CHARS),
        retry_after,
        body,
        attempts: 1,
        operation: None,
    }
}

/// The fields an error body is read for, found without building the rest of the body, so that a
/// large one costs no more than its bytes. Keys match case-insensitively, as everywhere.
#[derive(Debug, Default)]
struct ErrorFields {
    flinks_code: Option<String>,
    service_code: Option<String>,
    message: Option<String>,
    request_id: Option<String>,
}

impl<'de> serde::Deserialize<'de> for ErrorFields {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Fields;
        impl<'de> serde::de::Visitor<'de> for Fields {
            type Value = ErrorFields;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<ErrorFields, A::Error> {
                let mut fields = ErrorFields::default();
                while let Some(key) = map.next_key::<String>()? {
                    let slot = match key.to_ascii_lowercase().as_str() {
                        "flinkscode" => &mut fields.flinks_code,
                        "servicecode" => &mut fields.service_code,
                        "message" => &mut fields.message,
                        "requestid" => &mut fields.request_id,
                        _ => {
                            map.next_value::<serde::de::IgnoredAny>()?;
                            continue;
                        }
                    };
                    // Only a string counts; the first one under the name wins.
                    let value = map.next_value::<Value>()?;
                    if slot.is_none() {
                        *slot = value.as_str().map(str::to_owned);
                    }
                }
                Ok(fields)
            }
        }
        deserializer.deserialize_map(Fields)
    }
}

/// The `ApiError` an answer of the error status `status` with `bytes` becomes, built exactly as
/// `Http::send` builds one; for a 200 whose envelope says error (docs/errors.md#protocol-surprises).
/// `None` when `status` is not an error status.
pub(crate) fn api_error(status: u16, bytes: Vec<u8>) -> Option<ApiError> {
    match classify(status, bytes, None) {
        Err(Refusal::Api(api)) => Some(*api),
        _ => None,
    }
}

/// Parses a body that must be a JSON object.
fn parse_object(status: u16, bytes: &[u8]) -> Result<Value, Refusal> {
    match serde_json::from_slice::<Value>(bytes) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(_) => Err(decode_error(status, bytes, "expected a JSON object".to_owned())),
        Err(e) => Err(decode_error(status, bytes, e.to_string())),
    }
}

fn decode_error(status: u16, bytes: &[u8], message: String) -> Refusal {
    Refusal::Decode { status, message, snippet: body_snippet(bytes) }
}

/// The first `...Async` link of a 202 that names its endpoint. Production sends its link as a
/// literal template (`"rel": "{Endpoint}Async", "href": "/{Endpoint}Async"`), which names none: a
/// link with a brace anywhere, or an empty href, is passed over, so that no brace can reach a
/// request path (docs/protocol.md#polling).
fn async_href(body: &Value) -> Option<String> {
    let links = field(body, "Links")?.as_array()?;
    links.iter().find_map(|link| {
        let rel = text_field(link, &["rel"]).unwrap_or_default();
        let href = text_field(link, &["href"])?;
        let example = text_field(link, &["example"]).unwrap_or_default();
        let template = [&rel, &href, &example].iter().any(|text| text.contains(['{', '}']));
        let named = rel.ends_with("Async") || href.trim_end_matches('/').ends_with("Async");
        (named && !template && !href.trim_matches('/').is_empty()).then_some(href)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn bytes(value: Value) -> Vec<u8> {
        serde_json::to_vec(&value).unwrap()
    }

    #[test]
    fn a_202_is_pending_under_either_code_name() {
        for key in ["FlinksCode", "ServiceCode"] {
            let body = json!({key: "OPERATION_DISPATCHED", "HttpStatusCode": 202, "RequestId": "r", "Links": []});
            match classify(202, bytes(body), None).unwrap() {
                Reply::Pending(p) => {
                    assert_eq!(p.code.as_deref(), Some("OPERATION_DISPATCHED"));
                    assert_eq!(p.request_id.as_deref(), Some("r"));
                    assert_eq!(p.async_href, None);
                }
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn a_202_naming_an_async_link_is_polled_there() {
        let body = json!({"FlinksCode": "OPERATION_PENDING", "Links": [{"rel": "GetAccountsDetailAsync",
            "href": "/GetAccountsDetailAsync", "example": "/GetAccountsDetailAsync/r"}]});
        match classify(202, bytes(body), None).unwrap() {
            Reply::Pending(p) => assert_eq!(p.async_href.as_deref(), Some("/GetAccountsDetailAsync")),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_template_or_empty_link_names_no_endpoint() {
        let with = |link: Value| json!({"FlinksCode": "OPERATION_PENDING", "Links": [link], "RequestId": "r"});
        let unnamed = [
            // As production sends it (docs/protocol.md#polling).
            json!({"rel": "{Endpoint}Async", "href": "/{Endpoint}Async", "example": "/{Endpoint}Async/{requestId}"}),
            json!({"rel": "GetAccountsDetailAsync", "href": "/GetAccountsDetailAsync", "example": "/x/{requestId}"}),
            json!({"rel": "GetAccountsDetailAsync", "href": "/{Endpoint}Async"}),
            json!({"rel": "GetAccountsDetailAsync", "href": "/"}),
            json!({"rel": "GetAccountsDetailAsync", "href": ""}),
            json!({"rel": "GetAccountsDetailAsync"}),
            json!({"rel": "Statements", "href": "/GetStatements"}),
        ];
        for link in unnamed {
            match classify(202, bytes(with(link.clone())), None).unwrap() {
                Reply::Pending(p) => assert_eq!(p.async_href, None, "{link}"),
                other => panic!("{other:?}"),
            }
        }
        // A concrete link after a template one is still found.
        let both = json!({"Links": [{"rel": "{Endpoint}Async", "href": "/{Endpoint}Async"},
                                    {"rel": "GetStatementsAsync", "href": "/GetStatementsAsync", "example": null}]});
        match classify(202, bytes(both), None).unwrap() {
            Reply::Pending(p) => assert_eq!(p.async_href.as_deref(), Some("/GetStatementsAsync")),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn errors_keep_code_message_request_id_and_body() {
        let body =
            json!({"HttpStatusCode": 400, "Message": "gone", "FlinksCode": "SESSION_NONEXISTENT", "RequestId": "r"});
        match classify(400, bytes(body.clone()), Some(Duration::from_secs(3))) {
            Err(Refusal::Api(api)) => {
                assert_eq!(api.code.as_deref(), Some("SESSION_NONEXISTENT"));
                assert_eq!(api.message.as_deref(), Some("gone"));
                assert_eq!(api.request_id.as_deref(), Some("r"));
                assert_eq!(api.retry_after, Some(Duration::from_secs(3)));
                assert_eq!(api.body, Body::Json(body.clone()));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_plain_text_error_body_is_kept_as_text() {
        match classify(500, b"Internal Server Error".to_vec(), None) {
            Err(Refusal::Api(api)) => {
                assert_eq!(api.body, Body::Text("Internal Server Error".into()));
                assert_eq!(api.code, None);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_unexpected_answer_keeps_its_status_request_id_and_body() {
        let pending = classify(202, br#"{"FlinksCode": "OPERATION_PENDING", "RequestId": "r-2"}"#.to_vec(), None);
        match pending.unwrap().unexpected("DeleteCard", "not polled") {
            Error::Protocol { operation, status, message, request_id, snippet } => {
                assert_eq!((operation.as_str(), status, message.as_str()), ("DeleteCard", 202, "not polled"));
                assert_eq!(request_id.as_deref(), Some("r-2"));
                assert!(snippet.contains("OPERATION_PENDING"), "{snippet}");
            }
            other => panic!("{other:?}"),
        }
        let challenge = classify(203, br#"{"RequestId": "r-3", "SecurityChallenges": []}"#.to_vec(), None);
        match challenge.unwrap().unexpected("Investments", "no challenge expected") {
            Error::Protocol { status, request_id, snippet, .. } => {
                assert_eq!((status, request_id.as_deref()), (203, Some("r-3")));
                assert!(snippet.contains("SecurityChallenges"), "{snippet}");
            }
            other => panic!("{other:?}"),
        }
        match classify(204, Vec::new(), None).unwrap().unexpected("GenerateAuthorizeToken", "no Token") {
            Error::Protocol { status, request_id, snippet, .. } => {
                assert_eq!((status, request_id, snippet.as_str()), (204, None, ""));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_2xx_keeps_its_status() {
        assert!(matches!(classify(201, b"{}".to_vec(), None), Ok(Reply::Data { status: 201, .. })));
    }

    #[test]
    fn a_202_that_is_not_json_is_a_decode_error_with_a_snippet() {
        match classify(202, b"<html>busy".to_vec(), None) {
            Err(Refusal::Decode { snippet, status, .. }) => {
                assert_eq!(status, 202);
                assert_eq!(snippet, "<html>busy");
            }
            other => panic!("{other:?}"),
        }
    }
}

//! Reading requests: the extractors a handler reads its path and body with, which refuse with the
//! service's JSON error, and request bodies read the way the service binds them: keys
//! case-insensitively, `"true"` as true, null as absent.

use axum::extract::{FromRequest, FromRequestParts, Path, RawPathParams, Request};
use axum::http::header::CONTENT_TYPE;
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode};
use serde_json::{Map, Value};

use crate::server::reply::{too_large, ErrorReply};

/// The segments of a request's path by name (`request_id`, `login_id`), decoded as its handler
/// reads them, for the layers in front of the handlers that note what a request concerns (the
/// request log, the faults); a path the handler will refuse names none.
pub(crate) struct PathSegments(Vec<(String, String)>);

impl PathSegments {
    pub(crate) async fn of(parts: &mut Parts) -> PathSegments {
        let params = RawPathParams::from_request_parts(parts, &()).await.ok();
        let pairs = params.iter().flat_map(|params| params.iter());
        PathSegments(pairs.map(|(key, value)| (key.to_owned(), value.to_owned())).collect())
    }

    pub(crate) fn get(&self, name: &str) -> Option<String> {
        self.0.iter().find(|(key, _)| key == name).map(|(_, value)| value.clone())
    }
}

/// `SecurityResponses` as sent: (key, answers), in the order of the request.
pub(crate) type Responses<'a> = Vec<(&'a str, Vec<String>)>;

/// A request body that is a JSON object.
pub(crate) struct Body(Map<String, Value>);

impl Body {
    pub(crate) fn parse(bytes: &[u8]) -> Result<Body, ErrorReply> {
        match serde_json::from_slice::<Value>(bytes) {
            Ok(Value::Object(map)) => Ok(Body(map)),
            Ok(_) => Err(ErrorReply::invalid_request("The request body must be a JSON object")),
            Err(error) => Err(ErrorReply::invalid_request(format!("The request body is not valid JSON: {error}"))),
        }
    }

    /// A body already parsed as a JSON object.
    pub(crate) fn from_map(map: Map<String, Value>) -> Body {
        Body(map)
    }

    /// The object, for a reader done with it.
    pub(crate) fn into_map(self) -> Map<String, Value> {
        self.0
    }

    /// The value of `key`; an exact match wins over a match that differs in case only.
    pub(crate) fn get(&self, key: &str) -> Option<&Value> {
        let value = match self.0.get(key) {
            Some(value) => Some(value),
            None => self.0.iter().find(|(name, _)| name.eq_ignore_ascii_case(key)).map(|(_, value)| value),
        };
        value.filter(|value| !value.is_null())
    }

    /// Whether `key` is given: neither absent, null nor an empty or blank string, which clients
    /// send for a field they leave out (`"LoginId": ""` beside credentials).
    pub(crate) fn present(&self, key: &str) -> bool {
        match self.get(key) {
            None => false,
            Some(Value::String(text)) => !text.trim().is_empty(),
            Some(_) => true,
        }
    }

    /// A string field; absent and empty are both None.
    pub(crate) fn string(&self, key: &str) -> Result<Option<&str>, ErrorReply> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(text)) if text.trim().is_empty() => Ok(None),
            Some(Value::String(text)) => Ok(Some(text)),
            Some(_) => Err(ErrorReply::invalid_request(format!("{key} must be a string"))),
        }
    }

    /// A required string field.
    pub(crate) fn required(&self, key: &str) -> Result<&str, ErrorReply> {
        self.string(key)?.ok_or_else(|| ErrorReply::invalid_request(format!("{key} is required")))
    }

    /// A boolean field: `true`/`false`, or those words as strings in any case; an empty string
    /// is absent (`"ScheduleRefresh": ""`, which clients send), so it reads as the default.
    pub(crate) fn flag(&self, key: &str) -> Result<Option<bool>, ErrorReply> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(text)) if text.trim().is_empty() => Ok(None),
            Some(Value::Bool(flag)) => Ok(Some(*flag)),
            Some(Value::String(text)) if text.trim().eq_ignore_ascii_case("true") => Ok(Some(true)),
            Some(Value::String(text)) if text.trim().eq_ignore_ascii_case("false") => Ok(Some(false)),
            Some(_) => Err(ErrorReply::invalid_request(format!("{key} must be true or false"))),
        }
    }

    /// An array of strings; absent, null and empty are all None (no restriction).
    pub(crate) fn strings(&self, key: &str) -> Result<Option<Vec<String>>, ErrorReply> {
        match self.get(key) {
            None => Ok(None),
            Some(value) => string_list(key, value),
        }
    }

    /// One of `allowed` (compared case-insensitively, returned as spelled in `allowed`).
    pub(crate) fn choice(&self, key: &str, allowed: &[&'static str]) -> Result<Option<&'static str>, ErrorReply> {
        let Some(text) = self.string(key)? else {
            return Ok(None);
        };
        allowed.iter().find(|choice| choice.eq_ignore_ascii_case(text.trim())).map(|choice| Some(*choice)).ok_or_else(
            || ErrorReply::invalid_request(format!("{key} must be one of {}, not {text:?}", allowed.join(", "))),
        )
    }

    /// `SecurityResponses`: prompt → array of strings, in the order sent.
    pub(crate) fn security_responses(&self) -> Result<Option<Responses<'_>>, ErrorReply> {
        const KEY: &str = "SecurityResponses";
        let map = match self.get(KEY) {
            None => return Ok(None),
            Some(Value::Object(map)) => map,
            Some(_) => return Err(ErrorReply::invalid_request(format!("{KEY} must be an object"))),
        };
        let mut responses = Vec::with_capacity(map.len());
        for (key, value) in map {
            let not_strings = || ErrorReply::invalid_request(format!("{KEY}[{key:?}] must be an array of strings"));
            let items = value.as_array().ok_or_else(not_strings)?;
            let answer = items
                .iter()
                .map(|item| item.as_str().map(str::to_owned))
                .collect::<Option<Vec<String>>>()
                .ok_or_else(not_strings)?;
            responses.push((key.as_str(), answer));
        }
        Ok(Some(responses))
    }
}

/// `value` as an array of strings; an empty array is None (no restriction).
pub(crate) fn string_list(key: &str, value: &Value) -> Result<Option<Vec<String>>, ErrorReply> {
    let not_strings = || ErrorReply::invalid_request(format!("{key} must be an array of strings"));
    let items = value.as_array().ok_or_else(not_strings)?;
    let strings = items
        .iter()
        .map(|item| item.as_str().map(str::to_owned))
        .collect::<Option<Vec<String>>>()
        .ok_or_else(not_strings)?;
    Ok((!strings.is_empty()).then_some(strings))
}

/// The value of `key` in a nested object, matched the way [`Body::get`] matches.
pub(crate) fn field<'a>(map: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    map.get(key)
        .or_else(|| map.iter().find(|(name, _)| name.eq_ignore_ascii_case(key)).map(|(_, value)| value))
        .filter(|value| !value.is_null())
}

// The two extractors below are how handlers read a request: each refuses with the service's
// error envelope (docs/protocol.md#errors), where axum's own would answer in plain text, so
// every refusal is JSON where it is made rather than rewritten afterwards.

/// The path parameters of a route, as `axum`'s `Path` reads them, but refused the way the
/// service refuses a request: a segment that is not valid percent-encoded UTF-8 (`%ED%A0%80`)
/// gets a JSON `INVALID_REQUEST`, not axum's plain-text 400 (docs/bad-input.md).
pub(crate) struct Segments<T>(pub T);

impl<T, S> FromRequestParts<S> for Segments<T>
where
    T: serde::de::DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = ErrorReply;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ErrorReply> {
        match Path::<T>::from_request_parts(parts, state).await {
            Ok(Path(value)) => Ok(Segments(value)),
            Err(rejection) => {
                Err(ErrorReply::invalid_request(format!("The path is not valid: {}", rejection.body_text())))
            }
        }
    }
}

/// The request body, read whole as axum's `Bytes` reads it (at most the router's body limit,
/// [`BODY_LIMIT`](crate::server::reply::BODY_LIMIT)), but refused the way the service refuses a request:
/// a body past the limit gets the JSON 413 of [`too_large`], one that could not be read a JSON
/// 400 `INVALID_REQUEST` naming why (docs/bad-input.md). A body that stopped arriving becomes a
/// 408 in the router's `whole_body`, which knows why it failed.
pub(crate) struct BodyBytes(pub axum::body::Bytes);

impl<S: Send + Sync> FromRequest<S> for BodyBytes {
    type Rejection = ErrorReply;

    async fn from_request(request: Request, state: &S) -> Result<Self, ErrorReply> {
        check_content_type(request.headers())?;
        bytes_of(request, state).await.map(BodyBytes)
    }
}

/// The body of `request` read whole, refused as [`BodyBytes`] refuses it, whatever its type: for
/// the layers that read a body only to see what it names (the request log), and leave its
/// `Content-Type` to the handler, which has the headers.
pub(crate) async fn bytes_of<S: Send + Sync>(request: Request, state: &S) -> Result<axum::body::Bytes, ErrorReply> {
    match axum::body::Bytes::from_request(request, state).await {
        Ok(bytes) => Ok(bytes),
        Err(rejection) if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE => Err(too_large()),
        Err(rejection) => Err(ErrorReply::new(rejection.status(), "INVALID_REQUEST", rejection.body_text().trim())),
    }
}

/// The documentation lists `Content-Type: application/json` among the headers of every operation
/// with a body, and the service reads no other (docs/protocol.md#request-shapes-real-clients-send):
/// a body sent without it, or as another type, is refused naming the header. `text/json` and
/// `application/<anything>+json` are JSON too, with any parameters (`; charset=utf-8`).
fn check_content_type(headers: &HeaderMap) -> Result<(), ErrorReply> {
    let Some(value) = headers.get(CONTENT_TYPE) else {
        return Err(ErrorReply::invalid_request(
            "The Content-Type header is missing: a request body must be sent as Content-Type: application/json",
        ));
    };
    let media = value.to_str().unwrap_or_default().split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    let json = media == "application/json"
        || media == "text/json"
        || media.strip_prefix("application/").is_some_and(|subtype| subtype.ends_with("+json"));
    if json {
        return Ok(());
    }
    let came = value.to_str().map_or_else(|_| "not text".to_owned(), bankfeed::shown::shown);
    Err(ErrorReply::invalid_request(format!(
        "The Content-Type header is {came}: a request body must be sent as Content-Type: application/json"
    )))
}

/// Request bodies mutated from the client's own, through every reader the handlers use
/// (docs/bad-input.md): each answers or refuses with a 4xx, and none panics.
/// `BANKFEED_FUZZ_ITERATIONS` sets the number of inputs (CONTRIBUTING.md).
#[cfg(test)]
mod fuzz {
    use axum::response::IntoResponse;
    use serde_json::json;

    use super::*;
    use crate::operations::accounts::{Detail, Summary};
    use crate::operations::investments::Investments;
    use crate::operations::operation::DataOperation;
    use crate::operations::statements::Statements;
    use bankfeed_testing::{iterations, mutate, seed, Rng};

    const KEYS: [&str; 20] = [
        "Institution",
        "Username",
        "Password",
        "MostRecentCached",
        "Save",
        "ScheduleRefresh",
        "Language",
        "Tag",
        "LoginId",
        "RequestId",
        "WithTransactions",
        "DaysOfTransactions",
        "WithAccountIdentity",
        "WithKYC",
        "AccountsFilter",
        "NumberOfStatements",
        "NumberOfBankingStatements",
        "WithBalance",
        "Attributes",
        "Filters",
    ];

    fn refused(reply: ErrorReply) {
        let status = reply.into_response().status();
        assert!(status.is_client_error(), "{status}");
    }

    fn read_everything(body: &Body) {
        for key in KEYS {
            body.present(key);
            body.string(key).map_or_else(refused, drop);
            body.required(key).map_or_else(refused, drop);
            body.flag(key).map_or_else(refused, drop);
            body.strings(key).map_or_else(refused, drop);
            body.choice(key, &["Days90", "Days365"]).map_or_else(refused, drop);
        }
        body.security_responses().map_or_else(refused, drop);
        Detail::options(body).map_or_else(refused, drop);
        Summary::options(body).map_or_else(refused, drop);
        Statements::options(body).map_or_else(refused, drop);
        Investments::options(body).map_or_else(refused, drop);
    }

    #[test]
    fn mutated_request_bodies_are_read_or_refused_with_a_4xx() {
        let id = "4a0d5b8e-1c2d-4e3f-8a9b-0c1d2e3f4a5b";
        let seeds: Vec<Vec<u8>> = [
            json!({"Institution": "FlinksCapital", "Username": "greatday", "Password": "Everyday",
                "MostRecentCached": false, "Save": true, "Language": "en", "Tag": "t", "ScheduleRefresh": false}),
            json!({"LoginId": id, "MostRecentCached": true}),
            json!({"RequestId": id, "SecurityResponses": {"What city were you born in?": ["Montreal"]}}),
            json!({"RequestId": id, "WithTransactions": true, "DaysOfTransactions": "Days365",
                "WithAccountIdentity": true, "WithKYC": false, "AccountsFilter": [id],
                "WithDetailsAndBankingStatements": true, "NumberOfBankingStatements": "Months3"}),
            json!({"RequestId": id, "WithBalance": "true", "WithAccountIdentity": "FALSE"}),
            json!({"RequestId": id, "NumberOfStatements": "MostRecent", "AccountsFilter": [id]}),
            json!({"LoginId": id, "RequestId": id, "MostRecentCached": true}),
            json!({"MostRecentCached": true, "Attributes": {"Card": ["balance_min"]},
                "Filters": {"AccountCategory": ["Operations"]}, "Options": {"AttributesDetail": ["count_nsf"]}}),
        ]
        .iter()
        .map(|value| serde_json::to_vec(value).unwrap())
        .collect();
        let seed = seed();
        let mut rng = Rng::new(seed);
        for index in 0..iterations(10_000) {
            let input = mutate(rng.pick(&seeds).unwrap(), &mut rng);
            let outcome = std::panic::catch_unwind(|| match Body::parse(&input) {
                Ok(body) => read_everything(&body),
                Err(reply) => refused(reply),
            });
            assert!(outcome.is_ok(), "input {index} of seed {seed}: {:?}", String::from_utf8_lossy(&input));
        }
    }
}

//! API credentials: the secret key and the Authorize tokens it mints, each opening one session,
//! and the data API key (docs/sandbox.md#keys).

use std::sync::Arc;
use std::time::Instant;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use serde::Serialize;

use crate::server::reply::{Envelope, ErrorReply};
use crate::world::state::{Inner, OpeningToken, Shared};

const AUTH_HEADER: &str = "flinks-auth-key";
const API_KEY_HEADER: &str = "x-api-key";
/// A token as the token call writes it: a hyphenated GUID.
const GUID_LENGTH: usize = 36;

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct TokenBody {
    token: String,
}

/// The service's words for a refused secret key and a refused token
/// (docs/protocol.md#authentication); each refusal adds what was wrong, never the value sent.
const BAD_AUTH_KEY: &str = "You must provide a valid auth key";
const BAD_TOKEN: &str = "You must provide a valid authorize token";
/// The documentation gives no words for a refused API key; these follow the two above.
const BAD_API_KEY: &str = "You must provide a valid x-api-key";

/// `POST BankingServices/GenerateAuthorizeToken`: the body is ignored (it is empty on the wire).
/// Without a secret key to ask for, any caller gets a token, which is harmless since Authorize
/// then asks for none; so it is not kept, and token calls cost such a sandbox no memory.
pub(crate) async fn generate_token(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
) -> Result<Response, ErrorReply> {
    let token = uuid::Uuid::new_v4();
    if let Some(secret) = shared.config.required_secret_key() {
        if header(&headers, AUTH_HEADER) != Some(secret) {
            return Err(ErrorReply::unauthorized(
                "UNAUTHORIZED",
                format!("{BAD_AUTH_KEY}: the {AUTH_HEADER} header of this call carries the secret key"),
            ));
        }
        shared.lock().add_token(token.as_u128());
    }
    Ok(Envelope::plain(TokenBody { token: token.to_string() }).ok())
}

/// The private key of an operation that asks for the secret key itself (GetNightlyRefreshStatus):
/// `Authorization: Bearer <secret key>`, as its reference shows, or the secret key in
/// `flinks-auth-key`, as the token call takes it (docs/protocol.md#operations-beyond-the-interface).
pub(crate) fn check_secret_key(shared: &Shared, headers: &HeaderMap) -> Result<(), ErrorReply> {
    let Some(secret) = shared.config.required_secret_key() else { return Ok(()) };
    let bearer = header(headers, "authorization")
        .and_then(|value| value.trim().split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, key)| key.trim());
    if bearer == Some(secret) || header(headers, AUTH_HEADER) == Some(secret) {
        return Ok(());
    }
    Err(ErrorReply::unauthorized(
        "UNAUTHORIZED",
        format!("{BAD_AUTH_KEY}: this operation needs the secret key, as Authorization: Bearer <secret key>"),
    ))
}

/// The token an Authorize call presents in `flinks-auth-key`: None when the sandbox asks for
/// none; refused when it is missing or is not a GUID as the token call writes it (in any case).
/// Nothing is used up yet: which token is good depends on the body (docs/sandbox.md#keys).
pub(crate) fn presented_token(shared: &Shared, headers: &HeaderMap) -> Result<Option<u128>, ErrorReply> {
    if shared.config.required_secret_key().is_none() {
        return Ok(None);
    }
    let token = header(headers, AUTH_HEADER).map(str::trim).unwrap_or_default();
    if token.is_empty() {
        return Err(refused_token(&format!("the {AUTH_HEADER} header is missing")));
    }
    let token = if token.len() == GUID_LENGTH { uuid::Uuid::try_parse(token).ok() } else { None };
    token.map(|token| Some(token.as_u128())).ok_or_else(|| {
        refused_token(&format!("the {AUTH_HEADER} header does not hold a token from GenerateAuthorizeToken"))
    })
}

/// An Authorize that opens a session (credentials, or a LoginId) uses up a fresh token: one
/// issued, not used yet and not expired. The session keeps it for its challenge answers.
pub(crate) fn open_with(shared: &Shared, presented: Option<u128>) -> Result<Option<OpeningToken>, ErrorReply> {
    let Some(token) = presented else { return Ok(None) };
    shared.lock().take_token(token).map(Some).ok_or_else(|| refused_token(&unusable(shared)))
}

/// A challenge answer of `request_id` may carry the token that opened that session, until it
/// expires; or a fresh token, which it uses up (a client that asks for a token before every
/// Authorize call). A token that opened another session is refused (docs/sandbox.md#keys).
pub(crate) fn admit_answer(
    inner: &mut Inner,
    shared: &Shared,
    request_id: &str,
    presented: Option<u128>,
) -> Result<(), ErrorReply> {
    let Some(token) = presented else { return Ok(()) };
    let opening = inner.opening_token(request_id);
    if opening.is_some_and(|opening| opening.token == token && Instant::now() < opening.expires) {
        return Ok(());
    }
    inner.take_token(token).map(drop).ok_or_else(|| refused_token(&unusable(shared)))
}

fn unusable(shared: &Shared) -> String {
    let minutes = shared.config.token_ttl.as_secs_f64() / 60.0;
    format!(
        "the token in {AUTH_HEADER} was not issued by GenerateAuthorizeToken, has opened another session, \
         or is older than {minutes} minutes"
    )
}

fn refused_token(why: &str) -> ErrorReply {
    ErrorReply::unauthorized("UNAUTHORIZED", format!("{BAD_TOKEN}: {why}"))
}

/// Data operations and DeleteCard need the API key when one is asked for.
pub(crate) fn check_api_key(shared: &Shared, headers: &HeaderMap) -> Result<(), ErrorReply> {
    match shared.config.required_api_key() {
        Some(key) if header(headers, API_KEY_HEADER) != Some(key) => {
            let why = if headers.contains_key(API_KEY_HEADER) { "is not the API key" } else { "is missing" };
            Err(ErrorReply::unauthorized("UNAUTHORIZED", format!("{BAD_API_KEY}: the {API_KEY_HEADER} header {why}")))
        }
        _ => Ok(()),
    }
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|value| value.to_str().ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::tokens::MAX_TOKENS;
    use crate::SandboxConfig;

    fn flood(config: SandboxConfig, calls: usize) -> (Arc<Shared>, Vec<String>) {
        let shared = Arc::new(Shared::new(config));
        let mut headers = HeaderMap::new();
        headers.insert(AUTH_HEADER, "s3cret".parse().unwrap());
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let tokens = (0..calls)
            .map(|_| {
                let answer = runtime.block_on(generate_token(State(Arc::clone(&shared)), headers.clone())).unwrap();
                assert_eq!(answer.status(), 200);
                let body = runtime.block_on(axum::body::to_bytes(answer.into_body(), 1024)).unwrap();
                let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
                body["Token"].as_str().unwrap().to_owned()
            })
            .collect();
        (shared, tokens)
    }

    fn presenting(token: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(AUTH_HEADER, token.parse().unwrap());
        headers
    }

    #[test]
    fn without_a_secret_key_token_calls_keep_nothing() {
        let (shared, tokens) = flood(SandboxConfig { auth: false, ..SandboxConfig::default() }, 1000);
        assert_eq!(shared.lock().token_count(), 0);
        assert_eq!(tokens.iter().collect::<std::collections::HashSet<_>>().len(), 1000, "each call a new token");
    }

    #[test]
    fn a_flood_of_token_calls_keeps_at_most_the_cap() {
        let config = SandboxConfig { secret_key: Some("s3cret".into()), ..SandboxConfig::default() };
        let (shared, tokens) = flood(config, MAX_TOKENS + 2_000);
        assert_eq!(shared.lock().token_count(), MAX_TOKENS);
        // The oldest were forgotten; the newest are still good, once, in any case.
        let open = |token: &str| open_with(&shared, presented_token(&shared, &presenting(token)).unwrap());
        assert!(open(&tokens[0]).is_err());
        assert!(open(&tokens[1_999]).is_err());
        let newest = tokens.last().unwrap().to_ascii_uppercase();
        assert!(open(&newest).is_ok());
        assert!(open(&newest).is_err());
        assert_eq!(shared.lock().token_count(), MAX_TOKENS - 1);
    }
}

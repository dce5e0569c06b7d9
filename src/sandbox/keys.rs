//! API credentials: the secret key and its single-use Authorize tokens, and the data API key.

use std::sync::Arc;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use serde::Serialize;

use super::reply::{Envelope, ErrorReply};
use super::state::Shared;

const AUTH_HEADER: &str = "flinks-auth-key";
const API_KEY_HEADER: &str = "x-api-key";
/// A token as the token call writes it: a hyphenated GUID.
const GUID_LENGTH: usize = 36;

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct TokenBody {
    token: String,
}

/// `POST BankingServices/GenerateAuthorizeToken`: the body is ignored (it is empty on the wire).
/// Without a configured secret key any caller gets a token, which is harmless since Authorize
/// then asks for none; so it is not kept, and token calls cost such a sandbox no memory.
pub(crate) async fn generate_token(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
) -> Result<Response, ErrorReply> {
    let token = uuid::Uuid::new_v4();
    if let Some(secret) = &shared.config.secret_key {
        if header(&headers, AUTH_HEADER) != Some(secret.as_str()) {
            return Err(ErrorReply::unauthorized(
                "UNAUTHORIZED",
                format!("The {AUTH_HEADER} header must carry the secret key"),
            ));
        }
        shared.lock().add_token(token.as_u128());
    }
    Ok(Envelope::plain(TokenBody { token: token.to_string() }).ok())
}

/// Authorize needs a fresh token when a secret key is configured; presenting one uses it up,
/// whether or not the rest of the request succeeds, as a real single-use token would be. A token
/// is a GUID as the token call writes it, in any case; one past its lifetime is refused as one
/// never issued (docs/sandbox.md#limits).
pub(crate) fn take_authorize_token(shared: &Shared, headers: &HeaderMap) -> Result<(), ErrorReply> {
    if shared.config.secret_key.is_none() {
        return Ok(());
    }
    let token = header(headers, AUTH_HEADER).map(str::trim).unwrap_or_default();
    let token = if token.len() == GUID_LENGTH { uuid::Uuid::try_parse(token).ok() } else { None };
    if token.is_some_and(|token| shared.lock().take_token(token.as_u128())) {
        return Ok(());
    }
    Err(ErrorReply::unauthorized(
        "UNAUTHORIZED",
        format!("The {AUTH_HEADER} header must carry an unused, unexpired token from GenerateAuthorizeToken"),
    ))
}

/// Data operations need the API key when one is configured.
pub(crate) fn check_api_key(shared: &Shared, headers: &HeaderMap) -> Result<(), ErrorReply> {
    match &shared.config.api_key {
        Some(key) if header(headers, API_KEY_HEADER) != Some(key.as_str()) => {
            Err(ErrorReply::unauthorized("UNAUTHORIZED", format!("The {API_KEY_HEADER} header must carry the API key")))
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
    use crate::sandbox::tokens::MAX_TOKENS;
    use crate::sandbox::SandboxConfig;

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
        let (shared, tokens) = flood(SandboxConfig::default(), 1000);
        assert_eq!(shared.lock().token_count(), 0);
        assert_eq!(tokens.iter().collect::<std::collections::HashSet<_>>().len(), 1000, "each call a new token");
    }

    #[test]
    fn a_flood_of_token_calls_keeps_at_most_the_cap() {
        let config = SandboxConfig { secret_key: Some("s3cret".into()), ..SandboxConfig::default() };
        let (shared, tokens) = flood(config, MAX_TOKENS + 2_000);
        assert_eq!(shared.lock().token_count(), MAX_TOKENS);
        // The oldest were forgotten; the newest are still good, once, in any case.
        assert!(take_authorize_token(&shared, &presenting(&tokens[0])).is_err());
        assert!(take_authorize_token(&shared, &presenting(&tokens[1_999])).is_err());
        let newest = tokens.last().unwrap().to_ascii_uppercase();
        assert!(take_authorize_token(&shared, &presenting(&newest)).is_ok());
        assert!(take_authorize_token(&shared, &presenting(&newest)).is_err());
        assert_eq!(shared.lock().token_count(), MAX_TOKENS - 1);
    }
}

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

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct TokenBody {
    token: String,
}

/// `POST BankingServices/GenerateAuthorizeToken`: the body is ignored (it is empty on the wire).
/// Without a configured secret key any caller gets a token, which is harmless since Authorize
/// then asks for none.
pub(crate) async fn generate_token(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
) -> Result<Response, ErrorReply> {
    if let Some(secret) = &shared.config.secret_key {
        if header(&headers, AUTH_HEADER) != Some(secret.as_str()) {
            return Err(ErrorReply::unauthorized(
                "UNAUTHORIZED",
                format!("The {AUTH_HEADER} header must carry the secret key"),
            ));
        }
    }
    let token = uuid::Uuid::new_v4().to_string();
    shared.lock().add_token(token.clone());
    Ok(Envelope::plain(TokenBody { token }).ok())
}

/// Authorize needs a fresh token when a secret key is configured; presenting one uses it up,
/// whether or not the rest of the request succeeds, as a real single-use token would be.
pub(crate) fn take_authorize_token(shared: &Shared, headers: &HeaderMap) -> Result<(), ErrorReply> {
    if shared.config.secret_key.is_none() {
        return Ok(());
    }
    let token = header(headers, AUTH_HEADER).map(str::trim).unwrap_or_default();
    if !token.is_empty() && shared.lock().take_token(&token.to_ascii_lowercase()) {
        return Ok(());
    }
    Err(ErrorReply::unauthorized(
        "UNAUTHORIZED",
        format!("The {AUTH_HEADER} header must carry an unused token from GenerateAuthorizeToken"),
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

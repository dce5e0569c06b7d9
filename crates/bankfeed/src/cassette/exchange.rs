//! What the send path hands a cassette: one request as it goes on the wire, and one answer as it
//! came off it. The sender (crates/bankfeed/src/http.rs) builds these at its transport seam, so
//! a replayed answer goes through the same classification, retries and polling as a live one.

use crate::secret::Secret;

/// One request, as sent.
#[derive(Debug)]
pub struct Exchange<'a> {
    /// The operation's name (`Authorize`, `GetAccountsDetail`): what errors name.
    pub operation: &'static str,
    pub method: &'a str,
    pub url: &'a str,
    /// Every header the request carries beside the client's defaults: names and secret values
    /// (keys, a single-use token).
    pub headers: Vec<(&'a str, &'a Secret)>,
    pub content_type: Option<&'a str>,
    pub body: Option<&'a [u8]>,
    /// The values of `body` the client knows are secrets (a username, a password, answers).
    pub body_secrets: &'a [Secret],
}

/// One answer, as it came: what the classification of an answer reads.
#[derive(Clone, Debug, PartialEq)]
pub struct WireAnswer {
    pub status: u16,
    pub content_type: Option<String>,
    pub location: Option<String>,
    pub retry_after: Option<String>,
    pub body: Vec<u8>,
}

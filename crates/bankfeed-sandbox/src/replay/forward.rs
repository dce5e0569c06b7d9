//! The forwarding of a recording sandbox (docs/cassettes.md#recording-any-client): each request a
//! client sends is sent on to the server recorded, as it came but for the headers of its
//! connection, and its answer handed back to the player to be recorded, redacted, then to the
//! client as it came.

use std::time::Duration;

use axum::http::request::Parts;
use axum::http::HeaderName;
use bankfeed::cassette::WireAnswer;
use bankfeed::error::Error;

/// How long an answer of the server recorded may take: a data operation of a large login can
/// take a minute at the service.
const UPSTREAM_TIMEOUT: Duration = Duration::from_secs(300);

/// The most bytes of an answer forwarded: far past any answer of the API (a statement's PDF).
const MOST_ANSWER_BYTES: usize = 256 * 1024 * 1024;

/// The headers of a connection, not of a request: never forwarded.
const CONNECTION_HEADERS: [&str; 9] = [
    "host",
    "connection",
    "content-length",
    "transfer-encoding",
    "keep-alive",
    "upgrade",
    "te",
    "trailer",
    "proxy-connection",
];

/// Where a recording sandbox sends the requests it receives.
#[derive(Debug)]
pub(crate) struct Forward {
    /// The server's root, without a trailing slash: the request's path is added to it.
    base_url: String,
    client: reqwest::Client,
}

impl Forward {
    /// A forwarder to `base_url`, an http(s) URL of the server's root (a client's `base_url`).
    pub(crate) fn new(base_url: &str) -> Result<Forward, Error> {
        let parsed = reqwest::Url::parse(base_url).map_err(|error| {
            Error::config("upstream", format!("must be an http or https URL, got {base_url:?}: {error}"))
        })?;
        if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
            return Err(Error::config("upstream", format!("must be an http or https URL, got {base_url:?}")));
        }
        if parsed.query().is_some() || parsed.path().trim_end_matches('/').contains("/v3") {
            let rule = format!(
                "must be the server's root, as a client's base_url (https://toolbox-api.private.fin.ag), got \
                 {base_url:?}: the paths the clients send (/v3/...) are added to it"
            );
            return Err(Error::config("upstream", rule));
        }
        // As the client's sender (crates/bankfeed/src/http.rs): reqwest comes without a crypto
        // provider; an Err means one is installed already, which is as good.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            // The client must see a redirect as the server sent it, and it is recorded so.
            .redirect(reqwest::redirect::Policy::none())
            // The proxy variables would send loopback traffic, passwords included, to a proxy.
            .no_proxy()
            .timeout(UPSTREAM_TIMEOUT)
            .build()
            .map_err(|error| Error::config("upstream", format!("no HTTP client for it: {error}")))?;
        Ok(Forward { base_url: base_url.trim_end_matches('/').to_owned(), client })
    }

    /// The URL a request to `path_and_query` goes to: what the cassette records.
    pub(crate) fn url_of(&self, path_and_query: &str) -> String {
        format!("{}{path_and_query}", self.base_url)
    }

    /// Sends the request of `parts` with `body` to `url`; the answer as it came, or why none came.
    pub(crate) async fn send(&self, url: &str, parts: &Parts, body: Vec<u8>) -> Result<WireAnswer, String> {
        let mut request = self.client.request(parts.method.clone(), url);
        for (name, value) in &parts.headers {
            if !CONNECTION_HEADERS.contains(&name.as_str()) {
                request = request.header(name, value);
            }
        }
        if !body.is_empty() {
            request = request.body(body);
        }
        let mut response =
            request.send().await.map_err(|error| format!("the server recorded did not answer: {error}"))?;
        let header = |name: &str| {
            response
                .headers()
                .get(HeaderName::from_bytes(name.as_bytes()).ok()?)
                .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned())
        };
        let (content_type, location, retry_after) = (header("content-type"), header("location"), header("retry-after"));
        let status = response.status().as_u16();
        let mut answer = Vec::new();
        while let Some(chunk) =
            response.chunk().await.map_err(|error| format!("the answer of the server recorded broke off: {error}"))?
        {
            if answer.len().saturating_add(chunk.len()) > MOST_ANSWER_BYTES {
                return Err(format!("the answer of the server recorded is larger than {MOST_ANSWER_BYTES} bytes"));
            }
            answer.extend_from_slice(&chunk);
        }
        Ok(WireAnswer { status, content_type, location, retry_after, body: answer })
    }
}

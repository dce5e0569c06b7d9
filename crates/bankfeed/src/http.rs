//! The one place that sends requests: headers, timeouts, retries, and the classification of every
//! answer into data, pending, challenge or error.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use reqwest::header::{HeaderMap, HeaderValue, ACCEPT, CONTENT_TYPE, LOCATION, RETRY_AFTER, USER_AGENT};
use reqwest::{redirect, Method};
use tokio::time::Instant;

use crate::call::Call;
use crate::cassette::{CassetteSession, Decision, Exchange, WireAnswer};
use crate::config::{ClientConfig, RetryPolicy};
use crate::data::answer::{classify, request_id_field, Refusal, Reply};
use crate::data::json::{body_snippet, field, request_id_of};
use crate::error::{ApiError, Body, Error};
use crate::events::{self, LogId};
use crate::masking::SentSecrets;
use crate::proxy::Proxies;
use crate::secret::Secret;
use crate::shown::snippet;

/// One request, kept whole so that the poll engine and the retry loop can send it again.
#[derive(Clone, Debug)]
pub(crate) struct ApiRequest {
    /// The operation's name, for error messages (`Authorize`, `Investments`, ...).
    pub operation: &'static str,
    pub method: Method,
    /// Set by [`ApiRequest::new`] and never changed after: `parsed_url` is read from it there.
    pub url: String,
    /// `url` parsed once for every send of this request (a poll sends it many times); `None`
    /// when it does not parse, and reqwest says why at the send.
    parsed_url: Option<reqwest::Url>,
    pub body: Option<Vec<u8>>,
    /// Header values are secrets (keys and tokens).
    pub headers: Vec<(&'static str, Secret)>,
    /// The values of `body` that are secrets (a username, a password, answers): with the header
    /// values, what the call masks in the server's text (docs/errors.md#secrets-a-server-repeats).
    pub secrets: Vec<Secret>,
    /// Safe to send twice. Credentials and challenge answers are not: a repeat can count against
    /// the bank's lockout, so they are retried only when the connection was never made.
    pub idempotent: bool,
    /// A header whose value may be used once: fetched anew before every attempt.
    pub fresh_header: Option<FreshHeader>,
}

/// A single-use header value and where each one comes from. The caller names the header, the
/// request that fetches a value and how to read it from the answer, so that this module stays
/// free of protocol names while the retry loop remains the one place that retries and waits.
#[derive(Clone, Debug)]
pub(crate) struct FreshHeader {
    pub name: &'static str,
    /// Sent before every attempt, with its own retries, within the same deadline.
    pub request: Box<ApiRequest>,
    /// Reads the value from the answer; its errors must never hold the value.
    pub parse: fn(Reply) -> Result<Secret, Error>,
}

impl ApiRequest {
    pub(crate) fn new(operation: &'static str, method: Method, url: String) -> Self {
        let parsed_url = reqwest::Url::parse(&url).ok();
        ApiRequest {
            operation,
            method,
            url,
            parsed_url,
            body: None,
            headers: Vec::new(),
            secrets: Vec::new(),
            idempotent: true,
            fresh_header: None,
        }
    }

    /// Sets the JSON body. Serialising the request bodies the client builds (maps of strings,
    /// numbers and the caller's JSON values) cannot fail, but an error is returned, not a panic.
    pub(crate) fn json(mut self, body: &impl serde::Serialize) -> Result<Self, Error> {
        let bytes = serde_json::to_vec(body).map_err(|e| {
            Error::config("request body", format!("of {} could not be serialised: {e}", self.operation))
        })?;
        self.body = Some(bytes);
        Ok(self)
    }

    pub(crate) fn header(mut self, name: &'static str, value: Secret) -> Self {
        self.headers.push((name, value));
        self
    }

    /// Says which values of the body are secrets.
    pub(crate) fn carrying(mut self, secrets: impl IntoIterator<Item = Secret>) -> Self {
        self.secrets.extend(secrets);
        self
    }

    /// What a log line says of this request, with `secrets` masked in its path.
    pub(crate) fn sent<'a>(&'a self, secrets: &'a SentSecrets) -> events::Sent<'a> {
        events::Sent { operation: self.operation, method: &self.method, url: &self.url, secrets }
    }

    pub(crate) fn not_idempotent(mut self) -> Self {
        self.idempotent = false;
        self
    }

    /// Gives every attempt the header `name` with a new value, read by `parse` from the answer
    /// to `source`.
    pub(crate) fn fresh_header(
        mut self,
        name: &'static str,
        source: ApiRequest,
        parse: fn(Reply) -> Result<Secret, Error>,
    ) -> Self {
        self.fresh_header = Some(FreshHeader { name, request: Box::new(source), parse });
        self
    }
}

/// A 202: the data is still being processed.
/// A failure of the call that fetches a single-use header (a token), with the answer's body left
/// out: whatever the status or shape of an answer that is not the token, it may hold the token
/// under any key, and secrets never reach an error (docs/errors.md#what-every-error-keeps). The
/// service's code, message and RequestId stay, and an error envelope keeps its body unless it
/// names a token.
fn withheld(error: Error) -> Error {
    const WITHHELD: &str = " (body withheld: it may hold a token)";
    match error {
        Error::Protocol { operation, status, message, request_id, snippet } if !snippet.is_empty() => Error::Protocol {
            operation,
            status,
            message: format!("{message}{WITHHELD}"),
            request_id,
            snippet: String::new(),
        },
        Error::Decode { operation, status, message, snippet, resumable } if !snippet.is_empty() => Error::Decode {
            operation,
            status,
            message: format!("{message}{WITHHELD}"),
            snippet: String::new(),
            resumable,
        },
        // An error envelope keeps its body, as every `ApiError` does, unless it names a token.
        Error::Api(mut api) if names_a_token(&api.body) => {
            api.body = Body::Text(String::new());
            Error::Api(api)
        }
        other => other,
    }
}

/// Whether an error body names a token: a `Token` field, or the word in a text body.
fn names_a_token(body: &Body) -> bool {
    match body {
        Body::Json(value) => field(value, "Token").is_some(),
        Body::Text(text) => text.to_ascii_lowercase().contains("token"),
    }
}

/// Where the sender's requests go: the transport seam (docs/cassettes.md). Below it sit only the
/// socket and the cassette; above it, retries, classification and polling run the same for all.
#[derive(Clone, Debug, Default)]
pub(crate) enum Transport {
    /// Every request goes out.
    #[default]
    Live,
    /// A cassette answers what it can; what it cannot goes out, and is recorded, as its mode says.
    Cassette(std::sync::Arc<CassetteSession>),
}

#[derive(Clone, Debug)]
pub(crate) struct Http {
    client: reqwest::Client,
    transport: Transport,
    retry: RetryPolicy,
    /// Per request; a retry gets no more than what is left before its deadline.
    timeout: Duration,
    /// What bounds the retries of a call sent without a deadline of its own.
    budget: Duration,
    max_body_bytes: usize,
    /// One permit per request in flight (`max_connections`): shared by the clones of this pool.
    slots: std::sync::Arc<tokio::sync::Semaphore>,
    /// The one decision of which proxy a request goes through, shared with reqwest's connector,
    /// so that a transport error names the proxy that carried the request.
    proxies: std::sync::Arc<Proxies>,
}

impl Http {
    pub(crate) fn new(config: &ClientConfig) -> Result<Self, Error> {
        // reqwest is built without a crypto provider (ring builds much faster than aws-lc); an
        // Err means the host application installed its own first, which is as good.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut headers = HeaderMap::new();
        headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
        headers.insert(USER_AGENT, HeaderValue::from_static(concat!("bankfeed/", env!("CARGO_PKG_VERSION"))));
        let proxies = std::sync::Arc::new(config.proxy.clone());
        let mut builder = reqwest::Client::builder()
            // reqwest's own reading of the proxy variables is off: it proxies loopback hosts, and a
            // sandbox's passwords with them (docs/protocol.md#proxies). `Proxies` decides instead.
            .no_proxy()
            .default_headers(headers)
            .timeout(config.timeout)
            .connect_timeout(config.timeout.min(Duration::from_secs(30)))
            // Following a redirect would carry the keys, the token and a POSTed password to
            // wherever the answer points: a 3xx is an error instead (docs/errors.md#protocol-surprises).
            .redirect(redirect::Policy::none())
            // Drop idle connections before a server does (the sandbox closes them after 30 s), so
            // that a request that is not safe to repeat never goes out on a connection being closed.
            .pool_idle_timeout(Duration::from_secs(20))
            // The requests in flight are bounded by `max_connections` (see `slots`); a connection
            // opened in a race for an idle one is not kept past that many.
            .pool_max_idle_per_host(config.max_connections);
        if proxies.any() {
            let decide = std::sync::Arc::clone(&proxies);
            builder =
                builder.proxy(reqwest::Proxy::custom(move |url| decide.route(url).map(|proxy| proxy.url().clone())));
        }
        let client =
            builder.build().map_err(|e| Error::config("base_url", format!("could not build the HTTP client: {e}")))?;
        Ok(Http {
            client,
            transport: Transport::Live,
            retry: config.retry.clone(),
            timeout: config.timeout,
            budget: config.poll.timeout,
            max_body_bytes: config.max_body_bytes,
            slots: std::sync::Arc::new(tokio::sync::Semaphore::new(config.max_connections)),
            proxies,
        })
    }

    /// This sender on `transport`: a pool of its own, never one shared by a configuration's clients.
    pub(crate) fn on(mut self, transport: Transport) -> Self {
        self.transport = transport;
        self
    }

    /// Waits `wait` (a retry's back-off, a poll interval) after an answer of `call`, unless that
    /// answer came from a cassette: a replay never sleeps, whatever the recorded `Retry-After`
    /// said, and a request that goes out after a replayed one (`new_episodes`) waits as usual.
    pub(crate) async fn pause(&self, wait: Duration, call: &Call) {
        if !call.last_answer_replayed() {
            tokio::time::sleep(wait).await;
        }
    }

    /// The proxy `request` goes through, as messages show it, if any.
    fn proxy_of(&self, request: &ApiRequest) -> Option<String> {
        request.parsed_url.as_ref().and_then(|url| self.proxies.route(url)).map(ToString::to_string)
    }

    /// Sends `request`, retrying what is safe to retry within `poll_timeout` from now, and
    /// classifies the answer.
    pub(crate) async fn send(&self, request: &ApiRequest, call: &Call) -> Result<Reply, Error> {
        self.send_until(request, None, call).await
    }

    /// Sends `request`, retrying what is safe to retry (docs/protocol.md#timing-and-limits), and
    /// classifies the answer. No retry starts, and no wait is slept, past `deadline` (by default
    /// `poll_timeout` from now) or the whole call's deadline: the last answer is the outcome then.
    /// The first send is made whatever the time, with the usual timeout, so that a poll's last
    /// round still gets its answer.
    pub(crate) async fn send_until(
        &self,
        request: &ApiRequest,
        deadline: Option<Instant>,
        call: &Call,
    ) -> Result<Reply, Error> {
        // Past the end of time (poll_timeout is bounded by the config, so only in theory): no
        // retry waits at all.
        let deadline = deadline.unwrap_or_else(|| Instant::now().checked_add(self.budget).unwrap_or_else(Instant::now));
        let deadline = call.deadline().map_or(deadline, |call| deadline.min(call));
        let mut jitter = Jitter::seeded();
        let mut sent: u32 = 0;
        let mut time_left = None;
        // Whatever is sent, a server may repeat: the call masks it in what comes back.
        for secret in request.headers.iter().map(|(_, value)| value).chain(&request.secrets) {
            call.sent(secret);
        }
        let mut fresh = self.fresh_value(request, deadline, call).await?;
        loop {
            let started = Instant::now();
            let outcome = self.send_once(request, fresh.as_ref(), time_left, call).await;
            sent = sent.saturating_add(1);
            log_attempt(request, &outcome, started, sent, call);
            let failure = match outcome {
                Ok(reply) => return Ok(reply),
                Err(failure) => failure,
            };
            if !failure.retryable(request.idempotent) {
                return Err(failure.into_error(request.operation, sent));
            }
            if sent > self.retry.max_retries {
                log_given_up(request, &failure, sent, "no retries left", call);
                return Err(failure.into_error(request.operation, sent));
            }
            let retry = sent.saturating_sub(1);
            let wait = failure.retry_after().unwrap_or_else(|| full_jitter(&self.retry, retry, jitter.next()));
            match Instant::now().checked_add(wait) {
                Some(resume) if resume < deadline => {}
                _ => {
                    log_given_up(request, &failure, sent, "the next wait would pass the deadline", call);
                    return Err(failure.into_error(request.operation, sent));
                }
            }
            if events::debug_wanted(events::HTTP_TARGET) {
                let most = self.retry.max_retries.saturating_add(1);
                let secrets = call.secrets();
                events::retry(request.sent(&secrets), wait, sent.saturating_add(1), most, &failure.summary(&secrets));
            }
            self.pause(wait, call).await;
            // A value already sent may have been used even when no answer came back: each attempt
            // carries a new one, fetched within the same deadline.
            fresh = self.fresh_value(request, deadline, call).await?;
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                log_given_up(request, &failure, sent, "the deadline passed", call);
                return Err(failure.into_error(request.operation, sent));
            }
            time_left = Some(left);
        }
    }

    /// A new value of the request's single-use header, when it has one. Boxed: the fetch goes
    /// through `send_until` for its own retries.
    async fn fresh_value(
        &self,
        request: &ApiRequest,
        deadline: Instant,
        call: &Call,
    ) -> Result<Option<(&'static str, Secret)>, Error> {
        let Some(source) = &request.fresh_header else { return Ok(None) };
        let reply = Box::pin(self.send_until(&source.request, Some(deadline), call)).await.map_err(withheld)?;
        let value = (source.parse)(reply).map_err(withheld)?;
        call.sent(&value);
        Ok(Some((source.name, value)))
    }

    /// One send; `fresh` is the attempt's single-use header, `time_left` shortens the request's timeout to what is left before the deadline.
    /// The transport seam: the answer comes from the socket or from a cassette, and is classified
    /// the same way either way.
    async fn send_once(
        &self,
        request: &ApiRequest,
        fresh: Option<&(&'static str, Secret)>,
        time_left: Option<Duration>,
        call: &Call,
    ) -> Result<Reply, Attempt> {
        // Boxed: reqwest's future is large, and every caller up to the poll loop would carry it.
        let Transport::Cassette(cassette) = &self.transport else {
            return classified(Box::pin(self.exchange(request, fresh, time_left)).await?);
        };
        call.answered_by_cassette(false);
        let exchange = Exchange {
            operation: request.operation,
            method: request.method.as_str(),
            url: &request.url,
            headers: request.headers.iter().chain(fresh).map(|(name, value)| (*name, value)).collect(),
            content_type: request.body.as_ref().map(|_| "application/json"),
            body: request.body.as_deref(),
            body_secrets: &request.secrets,
        };
        match cassette.replay(&exchange).map_err(|error| Attempt::Cassette(Box::new(error)))? {
            Decision::Replay(answer) => {
                call.answered_by_cassette(true);
                classified(answer)
            }
            Decision::Record => {
                let answer = Box::pin(self.exchange(request, fresh, time_left)).await?;
                cassette.record(&exchange, &answer);
                classified(answer)
            }
        }
    }

    /// One request on the wire, and its answer as it came.
    async fn exchange(
        &self,
        request: &ApiRequest,
        fresh: Option<&(&'static str, Secret)>,
        time_left: Option<Duration>,
    ) -> Result<WireAnswer, Attempt> {
        // Held until the body is read, when the connection is back in the pool for the next
        // request: so the requests in flight, and the connections open, stay near
        // `max_connections`. The wait for a permit counts in the call's deadline like any other.
        let _slot = self
            .slots
            .acquire()
            .await
            .map_err(|_| Attempt::Unsendable { message: "the client's connection slots are closed".to_owned() })?;
        let mut builder = match &request.parsed_url {
            Some(url) => self.client.request(request.method.clone(), url.clone()),
            None => self.client.request(request.method.clone(), &request.url),
        };
        if let Some(left) = time_left {
            builder = builder.timeout(left.min(self.timeout));
        }
        for (name, value) in request.headers.iter().chain(fresh) {
            let mut value = HeaderValue::from_str(value.expose()).map_err(|_| Attempt::Unsendable {
                message: format!("the {name} header holds characters a header cannot carry"),
            })?;
            value.set_sensitive(true);
            builder = builder.header(*name, value);
        }
        if let Some(body) = &request.body {
            builder = builder.header(CONTENT_TYPE, "application/json").body(body.clone());
        }
        let mut response =
            builder.send().await.map_err(|error| Attempt::from_reqwest(error, self.proxy_of(request)))?;
        let status = response.status().as_u16();
        let header = |name| {
            response
                .headers()
                .get(name)
                .map(|value: &HeaderValue| String::from_utf8_lossy(value.as_bytes()).into_owned())
        };
        let (content_type, location, retry_after) = (header(CONTENT_TYPE), header(LOCATION), header(RETRY_AFTER));
        let body = if (300..=399).contains(&status) {
            // The body only adds a RequestId and a snippet; the redirect is the error either way.
            self.read_body(&mut response, status).await.unwrap_or_default()
        } else {
            self.read_body(&mut response, status).await.map_err(|failure| failure.through(self.proxy_of(request)))?
        };
        Ok(WireAnswer { status, content_type, location, retry_after, body })
    }

    /// Reads the body chunk by chunk, refusing it once it passes `max_body_bytes` (or at once when
    /// its Content-Length does), so that a server cannot make the client hold more than that.
    async fn read_body(&self, response: &mut reqwest::Response, status: u16) -> Result<Vec<u8>, Attempt> {
        let limit = self.max_body_bytes;
        let declared = response.content_length();
        if let Some(length) = declared {
            if usize::try_from(length).map_or(true, |length| length > limit) {
                return Err(too_large(status, limit, declared));
            }
        }
        let capacity = declared.and_then(|length| usize::try_from(length).ok()).unwrap_or(0).min(limit);
        let mut bytes = Vec::with_capacity(capacity);
        while let Some(chunk) = response.chunk().await.map_err(|error| Attempt::from_reqwest(error, None))? {
            if chunk.len() > limit.saturating_sub(bytes.len()) {
                return Err(too_large(status, limit, None));
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok(bytes)
    }
}

/// What an answer is: data, pending, a challenge, or a failure (a redirect is one).
fn classified(answer: WireAnswer) -> Result<Reply, Attempt> {
    let WireAnswer { status, location, retry_after, body, .. } = answer;
    let retry_after = retry_after.as_deref().and_then(|v| parse_retry_after(v, SystemTime::now()));
    if (300..=399).contains(&status) {
        return Err(redirected(status, location.as_deref(), &body));
    }
    classify(status, body, retry_after).map_err(Attempt::from)
}

/// The DEBUG line of one attempt; the RequestId of a data answer is read from its body only when
/// the line is wanted. What the server chose (its code, its RequestId) is shown with the call's
/// secrets masked.
fn log_attempt(request: &ApiRequest, outcome: &Result<Reply, Attempt>, started: Instant, attempt: u32, call: &Call) {
    if !events::debug_wanted(events::HTTP_TARGET) {
        return;
    }
    let secrets = call.secrets();
    let (answer, request_id) = match outcome {
        Ok(Reply::Data { status, bytes }) => (status.to_string(), request_id_field(bytes)),
        Ok(Reply::Pending(pending)) => ("202".to_owned(), pending.request_id.clone()),
        Ok(Reply::Challenge(bytes)) => ("203".to_owned(), request_id_field(bytes)),
        Err(failure) => (failure.summary(&secrets), failure.request_id()),
    };
    let request_id = request_id.map(|id| secrets.id(&id));
    events::attempt(request.sent(&secrets), &answer, request_id.as_deref(), started, attempt);
}

/// The WARNING of a failure that could have been retried and ends the call.
fn log_given_up(request: &ApiRequest, failure: &Attempt, attempts: u32, why: &str, call: &Call) {
    // A failure with no answer (a timeout, a dropped connection) names no RequestId of its own:
    // the session's, which the error carries too, ties the record to it.
    let secrets = call.secrets();
    let request_id = failure.request_id().or_else(|| call.session_request_id()).map(|id| secrets.id(&id));
    let summary = failure.summary(&secrets);
    events::given_up(request.sent(&secrets), attempts, why, &summary, request_id.as_deref(), call.login());
}

/// A 3xx: never followed, never sent again (docs/errors.md#protocol-surprises).
fn redirected(status: u16, location: Option<&str>, body: &[u8]) -> Attempt {
    let message = match location {
        Some(location) => format!(
            "redirected to {}; bankfeed does not follow redirects: set base_url to the final address",
            snippet(location, 200)
        ),
        None => "a redirect without a Location; bankfeed does not follow redirects".to_owned(),
    };
    Attempt::Protocol { status, message, request_id: request_id_of(body), snippet: body_snippet(body) }
}

/// A body past `max_body_bytes`. No snippet: the body is not known to be free of a token.
fn too_large(status: u16, limit: usize, declared: Option<u64>) -> Attempt {
    let size = match declared {
        Some(length) => format!("its Content-Length is {length} bytes"),
        None => "it runs longer".to_owned(),
    };
    let message = format!(
        "the answer is larger than max_body_bytes ({limit} bytes): {size}; raise max_body_bytes if it is expected"
    );
    Attempt::Protocol { status, message, request_id: None, snippet: String::new() }
}

/// `Retry-After` as seconds (a fraction is accepted) or as an HTTP date, measured from `now`;
/// `None` for anything else. A delay too large to represent is `Duration::MAX`, which is past any
/// deadline, and a date already past is no delay.
pub(crate) fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<f64>() {
        if seconds.is_nan() || seconds < 0.0 {
            return None;
        }
        return Some(Duration::try_from_secs_f64(seconds).unwrap_or(Duration::MAX));
    }
    let date = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    let now = now.duration_since(UNIX_EPOCH).ok()?;
    let Ok(seconds) = u64::try_from(date.timestamp()) else { return Some(Duration::ZERO) };
    Some(Duration::new(seconds, date.timestamp_subsec_nanos()).saturating_sub(now))
}

/// Full jitter: a wait drawn from `[0, min(max_backoff, backoff * 2^retry)]` by `random`.
fn full_jitter(policy: &RetryPolicy, retry: u32, random: u64) -> Duration {
    let factor = 2u32.checked_pow(retry).unwrap_or(u32::MAX);
    let ceiling = policy.backoff.saturating_mul(factor).min(policy.max_backoff);
    let nanos = u64::try_from(ceiling.as_nanos()).unwrap_or(u64::MAX);
    Duration::from_nanos(random % nanos.saturating_add(1))
}

/// The jitter's generator (splitmix64): no dependency, and no need for more than spreading the
/// retries of clients refused together. Seeded per call from the clock and a process-wide
/// counter, so that calls started at the same instant still draw apart.
struct Jitter(u64);

impl Jitter {
    fn seeded() -> Self {
        static CALLS: AtomicU64 = AtomicU64::new(0);
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        // Truncated on purpose: only the fast-moving low bits matter for a seed.
        let clock = nanos as u64;
        Jitter(clock ^ CALLS.fetch_add(1, Ordering::Relaxed).wrapping_mul(0x9E37_79B9_7F4A_7C15))
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

fn is_retryable_status(api: &ApiError) -> bool {
    let code = api.code.as_deref().unwrap_or("");
    // Every 5xx is the server's trouble and may pass, except 501 and 505, which say the request
    // itself (its method, its HTTP version) will never be served.
    matches!(api.status, 408 | 429)
        || ((500..=599).contains(&api.status) && !matches!(api.status, 501 | 505))
        || code.eq_ignore_ascii_case("TOO_MANY_REQUESTS")
        || code.eq_ignore_ascii_case("RETRY_LATER")
}

/// What one attempt ended with, before it becomes an [`Error`] naming the operation.
#[derive(Debug)]
enum Attempt {
    /// No answer; `connect` when the connection was never made, so nothing was sent. `proxy`:
    /// the proxy the request went through, as shown; `refused` when that proxy would not open a
    /// tunnel to the host, which a new attempt would not change.
    Transport {
        message: String,
        connect: bool,
        timed_out: bool,
        proxy: Option<String>,
        refused: bool,
    },
    /// The request cannot be put on the wire at all; sending it again would fail the same way.
    Unsendable {
        message: String,
    },
    Api(Box<ApiError>),
    Decode {
        status: u16,
        message: String,
        snippet: String,
    },
    Protocol {
        status: u16,
        message: String,
        request_id: Option<String>,
        snippet: String,
    },
    /// The cassette could not answer (docs/cassettes.md): never retried, the same request would
    /// miss again.
    Cassette(Box<Error>),
}

impl From<Refusal> for Attempt {
    fn from(refusal: Refusal) -> Self {
        match refusal {
            Refusal::Api(api) => Attempt::Api(api),
            Refusal::Decode { status, message, snippet } => Attempt::Decode { status, message, snippet },
        }
    }
}

impl Attempt {
    /// A failure of reqwest's, of a request sent through `proxy` when one is named.
    fn from_reqwest(error: reqwest::Error, proxy: Option<String>) -> Self {
        // reqwest's Display names the URL; ours carry no secret (keys travel in headers). A
        // proxy's user:password never reaches a message: reqwest keeps it in a header.
        let mut message = error.to_string();
        let mut refusal = None;
        let mut source = std::error::Error::source(&error);
        while let Some(inner) = source {
            let text = inner.to_string();
            refusal = refusal.or_else(|| tunnel_refusal(&text));
            message.push_str(": ");
            message.push_str(&text);
            source = inner.source();
        }
        if let Some(refusal) = refusal.filter(|_| proxy.is_some()) {
            message.push_str(" (");
            message.push_str(refusal);
            message.push(')');
        }
        Attempt::Transport {
            message,
            connect: error.is_connect(),
            timed_out: error.is_timeout(),
            refused: refusal.is_some() && proxy.is_some(),
            proxy,
        }
    }

    /// This failure, of a request sent through `proxy` when one is named.
    fn through(self, proxy: Option<String>) -> Self {
        match self {
            Attempt::Transport { message, connect, timed_out, refused, .. } => {
                Attempt::Transport { message, connect, timed_out, proxy, refused }
            }
            other => other,
        }
    }

    /// Whether sending again may help and cannot harm: a request that never reached the server
    /// always; a transient failure only when the request is safe to send twice.
    fn retryable(&self, idempotent: bool) -> bool {
        match self {
            Attempt::Transport { refused: true, .. } => false,
            Attempt::Transport { connect: true, .. } => true,
            Attempt::Transport { .. } => idempotent,
            Attempt::Api(api) => idempotent && is_retryable_status(api),
            Attempt::Unsendable { .. } | Attempt::Decode { .. } | Attempt::Protocol { .. } | Attempt::Cassette(_) => {
                false
            }
        }
    }

    /// The status, or why there was no answer, for a log line, with `secrets` masked in a code the
    /// client does not know. Never the transport's message: it names the whole URL.
    fn summary(&self, secrets: &SentSecrets) -> String {
        match self {
            Attempt::Transport { refused: true, .. } => "no answer (the proxy refused the tunnel)".to_owned(),
            Attempt::Transport { connect: true, .. } => "no answer (could not connect)".to_owned(),
            Attempt::Transport { timed_out: true, .. } => "no answer (timed out)".to_owned(),
            Attempt::Transport { .. } => "no answer (connection lost)".to_owned(),
            Attempt::Unsendable { .. } => "not sent (a header cannot carry its value)".to_owned(),
            Attempt::Api(api) => match &api.code {
                Some(code) => format!("{} {}", api.status, LogId(Some(&secrets.code(code)))),
                None => api.status.to_string(),
            },
            Attempt::Decode { status, .. } => format!("{status} (undecodable body)"),
            Attempt::Protocol { status, .. } => format!("{status} (unexpected)"),
            Attempt::Cassette(_) => "no answer in the cassette".to_owned(),
        }
    }

    /// The RequestId the answer carried.
    fn request_id(&self) -> Option<String> {
        match self {
            Attempt::Api(api) => api.request_id.clone(),
            Attempt::Protocol { request_id, .. } => request_id.clone(),
            _ => None,
        }
    }

    /// The wait the server asked for.
    fn retry_after(&self) -> Option<Duration> {
        match self {
            Attempt::Api(api) => api.retry_after,
            _ => None,
        }
    }

    /// The error of `operation` after `attempts` sends.
    fn into_error(self, operation: &'static str, attempts: u32) -> Error {
        let operation = operation.to_owned();
        match self {
            Attempt::Transport { message, timed_out, proxy, .. } => Error::Transport {
                operation,
                message,
                timed_out,
                attempts,
                deadline: false,
                resumable: None,
                proxy,
                cached: false,
            },
            Attempt::Unsendable { message } => Error::Transport {
                operation,
                message,
                timed_out: false,
                attempts,
                deadline: false,
                resumable: None,
                proxy: None,
                cached: false,
            },
            Attempt::Api(mut api) => {
                api.attempts = attempts;
                api.operation = Some(operation);
                Error::Api(api)
            }
            Attempt::Decode { status, message, snippet } => {
                Error::Decode { operation, status, message, snippet, resumable: None }
            }
            Attempt::Protocol { status, message, request_id, snippet } => {
                Error::Protocol { operation, status, message, request_id, snippet }
            }
            Attempt::Cassette(error) => *error,
        }
    }
}

/// What a proxy's refusal to open a tunnel (its answer to CONNECT) means, from the text of the
/// error hyper-util gives for it; `None` for any other error.
fn tunnel_refusal(text: &str) -> Option<&'static str> {
    match text {
        "tunnel error: proxy authorization required" => Some(
            "the proxy answered 407 Proxy Authentication Required: put its user name and password in the \
             proxy's URL, as http://user:password@host:port",
        ),
        "tunnel error: unsuccessful" => Some(
            "the proxy refused to open a tunnel to the service's host (a 403, say): ask for the host to be let through",
        ),
        _ => None,
    }
}

/// A loopback HTTP server for the core's unit tests: it answers each request, in order, with the
/// next of its canned answers, records what it received, then stops listening.
#[cfg(test)]
pub(crate) mod stub {
    use std::io::{Read, Write};
    use std::net::TcpListener;
    use std::sync::{Arc, Mutex};

    /// One canned answer.
    #[derive(Clone, Debug)]
    pub(crate) struct Answer {
        pub status: u16,
        pub headers: Vec<(String, String)>,
        pub body: Vec<u8>,
        /// Close the connection after reading the request, without answering.
        pub drop: bool,
        /// Keep the connection open after reading the request, never answering.
        pub stall: bool,
        /// Send no Content-Length: the body runs until the connection closes.
        pub until_close: bool,
    }

    impl Answer {
        pub(crate) fn new(status: u16, body: impl Into<Vec<u8>>) -> Self {
            Answer { status, headers: Vec::new(), body: body.into(), drop: false, stall: false, until_close: false }
        }

        pub(crate) fn header(mut self, name: &str, value: impl Into<String>) -> Self {
            self.headers.push((name.to_owned(), value.into()));
            self
        }

        /// Reads the request, then closes the connection: the server saw it, the client gets
        /// no answer.
        pub(crate) fn dropped() -> Self {
            Answer { drop: true, ..Answer::new(0, Vec::new()) }
        }

        /// Reads the request and never answers: the client's timeout ends the attempt.
        pub(crate) fn stalled() -> Self {
            Answer { stall: true, ..Answer::new(0, Vec::new()) }
        }

        pub(crate) fn until_close(mut self) -> Self {
            self.until_close = true;
            self
        }
    }

    /// A running stub: its base URL and the requests it received (head and body, as text).
    pub(crate) struct Stub {
        pub url: String,
        pub log: Arc<Mutex<Vec<String>>>,
    }

    impl Stub {
        pub(crate) fn requests(&self) -> Vec<String> {
            self.log.lock().unwrap().clone()
        }
    }

    /// Serves `answers` (status, body) one request each; returns the base URL.
    pub(crate) fn serve(answers: Vec<(u16, &'static str)>) -> String {
        serve_answers(answers.into_iter().map(|(status, body)| Answer::new(status, body)).collect()).url
    }

    /// Serves `answers`, one request each, recording every request.
    pub(crate) fn serve_answers(answers: Vec<Answer>) -> Stub {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let log = Arc::new(Mutex::new(Vec::new()));
        let record = Arc::clone(&log);
        std::thread::spawn(move || {
            let mut stalled = Vec::new();
            for answer in answers {
                let Ok((mut socket, _)) = listener.accept() else { return };
                let request = read_request(&mut socket);
                record.lock().unwrap().push(String::from_utf8_lossy(&request).into_owned());
                if answer.stall {
                    stalled.push(socket);
                    continue;
                }
                if answer.drop {
                    continue;
                }
                let kind = if answer.body.starts_with(b"{") || answer.body.starts_with(b"[") {
                    "application/json"
                } else {
                    "text/plain"
                };
                let mut head =
                    format!("HTTP/1.1 {} Stub\r\ncontent-type: {kind}\r\nconnection: close\r\n", answer.status);
                if !answer.until_close {
                    head.push_str(&format!("content-length: {}\r\n", answer.body.len()));
                }
                for (name, value) in &answer.headers {
                    head.push_str(&format!("{name}: {value}\r\n"));
                }
                head.push_str("\r\n");
                // The client may stop reading (a body past its limit): not the stub's failure.
                let _ = socket.write_all(head.as_bytes()).and_then(|()| socket.write_all(&answer.body));
            }
            // Held open past any client timeout of the tests.
            if !stalled.is_empty() {
                std::thread::sleep(std::time::Duration::from_secs(10));
            }
        });
        Stub { url, log }
    }

    fn read_request(socket: &mut impl Read) -> Vec<u8> {
        let mut request = Vec::new();
        let mut chunk = [0u8; 4096];
        loop {
            let read = match socket.read(&mut chunk) {
                Ok(0) | Err(_) => return request,
                Ok(read) => read,
            };
            request.extend_from_slice(&chunk[..read]);
            if let Some(end) = request.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&request[..end]).to_ascii_lowercase();
                let length: usize = head
                    .lines()
                    .find_map(|line| line.strip_prefix("content-length:"))
                    .map_or(0, |value| value.trim().parse().unwrap());
                if request.len() >= end + 4 + length {
                    return request;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A call without a deadline that no close ends: the sender alone is under test.
    fn free() -> Call {
        Call::new("test", None, None)
    }
    use serde_json::json;

    /// Every delay of the retry loop shortened, so that the tests run in milliseconds.
    fn http_with(max_retries: u32, tweak: impl FnOnce(&mut ClientConfig)) -> Http {
        let mut config = ClientConfig::new("http://127.0.0.1:9", "cid").unwrap();
        config.retry =
            RetryPolicy { max_retries, backoff: Duration::from_millis(1), max_backoff: Duration::from_millis(5) };
        tweak(&mut config);
        Http::new(&config).unwrap()
    }

    fn post(url: &str) -> ApiRequest {
        ApiRequest::new("GetAccountsDetail", Method::POST, format!("{url}/v3/cid/BankingServices/GetAccountsDetail"))
            .header("x-api-key", Secret::new("ak-secret"))
            .json(&json!({"RequestId": "r-0"}))
            .unwrap()
    }

    fn login(url: &str) -> ApiRequest {
        ApiRequest::new("Authorize", Method::POST, format!("{url}/v3/cid/BankingServices/Authorize"))
            .json(&json!({"Username": "u", "Password": "pw-secret"}))
            .unwrap()
            .not_idempotent()
    }

    fn error_body(code: &str, request_id: &str) -> String {
        json!({"HttpStatusCode": 503, "FlinksCode": code, "Message": "later", "RequestId": request_id}).to_string()
    }

    fn api(result: Result<Reply, Error>) -> ApiError {
        match result {
            Err(Error::Api(api)) => *api,
            other => panic!("expected an ApiError, got {other:?}"),
        }
    }

    /// A port nothing listens on: connecting is refused, so nothing is ever sent.
    fn closed_port() -> String {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        drop(listener);
        url
    }

    const LATER: &str = "Wed, 21 Oct 2015 07:28:00 GMT";

    #[test]
    fn retry_after_reads_seconds_fractions_and_dates_and_never_panics() {
        let now = UNIX_EPOCH + Duration::from_secs(1_445_412_450); // 07:27:30 on that day
        let parse = |value: &str| parse_retry_after(value, now);
        assert_eq!(parse("7"), Some(Duration::from_secs(7)));
        assert_eq!(parse(" 0 "), Some(Duration::ZERO));
        assert_eq!(parse("0.25"), Some(Duration::from_millis(250)));
        assert_eq!(parse(LATER), Some(Duration::from_secs(30)));
        assert_eq!(parse("Wed, 21 Oct 2015 07:28:00 +0000"), Some(Duration::from_secs(30)));
        // A date already past is no wait; one before 1970 too.
        assert_eq!(parse("Tue, 20 Oct 2015 07:28:00 GMT"), Some(Duration::ZERO));
        assert_eq!(parse("Thu, 01 Jan 1920 00:00:00 GMT"), Some(Duration::ZERO));
        for garbage in ["", "soon", "-1", "NaN", "1 2", "Wed, 99 Oct 2015 07:28:00 GMT", "\u{0}"] {
            assert_eq!(parse(garbage), None, "{garbage:?}");
        }
        // Too large for a Duration: past any deadline, never a panic.
        for huge in ["1e308", "18446744073709551616", "1e20", "inf", "1e309"] {
            assert_eq!(parse(huge), Some(Duration::MAX), "{huge:?}");
        }
        assert_eq!(parse("Fri, 31 Dec 9999 23:59:59 GMT").map(|d| d > Duration::from_secs(1 << 37)), Some(true));
    }

    #[test]
    fn jitter_stays_under_the_doubled_ceiling_and_spreads() {
        let policy =
            RetryPolicy { max_retries: 10, backoff: Duration::from_millis(500), max_backoff: Duration::from_secs(30) };
        let mut jitter = Jitter::seeded();
        for retry in [0u32, 1, 2, 5, 6, 31, 32, 1000, u32::MAX] {
            let ceiling = policy.backoff.saturating_mul(2u32.saturating_pow(retry.min(31))).min(policy.max_backoff);
            for random in [0, 1, u64::MAX, u64::MAX / 2].into_iter().chain((0..1000).map(|_| jitter.next())) {
                assert!(full_jitter(&policy, retry, random) <= ceiling, "retry {retry}");
            }
        }
        let draws: Vec<Duration> = (0..1000).map(|_| full_jitter(&policy, 0, jitter.next())).collect();
        assert!(draws.iter().any(|d| *d < Duration::from_millis(50)), "full jitter reaches down to 0");
        assert!(draws.iter().any(|d| *d > Duration::from_millis(450)), "and up to the ceiling");
        // Two calls at the same instant draw apart.
        assert_ne!(Jitter::seeded().next(), Jitter::seeded().next());
        let huge = RetryPolicy { max_retries: 1, backoff: Duration::MAX, max_backoff: Duration::MAX };
        assert!(full_jitter(&huge, 7, u64::MAX) <= Duration::MAX);
    }

    #[tokio::test]
    async fn redirects_are_never_followed_and_name_the_location() {
        let target = stub::serve_answers(vec![stub::Answer::new(200, r#"{"RequestId": "elsewhere"}"#)]);
        for status in 300..=308 {
            let location = format!("{}/v3/cid/BankingServices/Authorize", target.url);
            let origin = stub::serve_answers(vec![
                stub::Answer::new(status, r#"{"RequestId": "r-3xx"}"#).header("Location", location.clone()),
                stub::Answer::new(200, "{}"),
            ]);
            // Safe to repeat, with retries left: still sent once (a resend would get the 200).
            match http_with(2, |_| {}).send(&post(&origin.url), &free()).await {
                Err(Error::Protocol { operation, status: got, message, request_id, .. }) => {
                    assert_eq!((operation.as_str(), got), ("GetAccountsDetail", status));
                    assert!(message.contains(&location) && message.contains("base_url"), "{message}");
                    // A 304 has no body, by definition.
                    if status != 304 {
                        assert_eq!(request_id.as_deref(), Some("r-3xx"));
                    }
                }
                other => panic!("{status}: {other:?}"),
            }
            assert_eq!(origin.requests().len(), 1, "{status}: sent once, never again");
        }
        assert!(target.requests().is_empty(), "nothing reached the redirect's target");
    }

    #[tokio::test]
    async fn a_redirect_of_a_login_carries_nothing_anywhere() {
        let target = stub::serve_answers(vec![stub::Answer::new(200, "{}")]);
        for status in [301, 302, 303, 307, 308] {
            let origin = stub::serve_answers(vec![
                stub::Answer::new(status, "moved").header("Location", format!("{}/steal", target.url))
            ]);
            let error = http_with(2, |_| {}).send(&login(&origin.url), &free()).await.unwrap_err();
            assert!(matches!(error, Error::Protocol { status: s, .. } if s == status), "{error:?}");
            assert!(!error.to_string().contains("pw-secret"), "{error}");
            assert_eq!(origin.requests().len(), 1);
        }
        let origin = stub::serve_answers(vec![stub::Answer::new(302, "")]);
        let error = http_with(0, |_| {}).send(&post(&origin.url), &free()).await.unwrap_err();
        assert!(error.to_string().contains("without a Location"), "{error}");
        assert!(target.requests().is_empty());
    }

    #[tokio::test]
    async fn transient_failures_are_retried_until_success() {
        let cases = [
            stub::Answer::new(408, "timeout"),
            stub::Answer::new(429, error_body("TOO_MANY_REQUESTS", "r-1")),
            stub::Answer::new(500, "oops"),
            stub::Answer::new(502, "bad gateway"),
            stub::Answer::new(503, error_body("RETRY_LATER", "r-1")),
            stub::Answer::new(504, "gateway timeout"),
            stub::Answer::new(507, "insufficient storage"),
            stub::Answer::new(599, "network connect timeout"),
            stub::Answer::new(400, error_body("RETRY_LATER", "r-1")),
            stub::Answer::new(401, error_body("too_many_requests", "r-1")),
            stub::Answer::dropped(),
        ];
        for failure in cases {
            let server = stub::serve_answers(vec![failure.clone(), failure.clone(), stub::Answer::new(200, "{}")]);
            let reply = http_with(2, |_| {}).send(&post(&server.url), &free()).await;
            assert!(matches!(reply, Ok(Reply::Data { status: 200, .. })), "{failure:?}: {reply:?}");
            let requests = server.requests();
            assert_eq!(requests.len(), 3, "{failure:?}");
            assert!(requests.iter().all(|r| r.contains(r#"{"RequestId":"r-0"}"#)), "the same body each time");
        }
    }

    #[tokio::test]
    async fn other_answers_are_not_retried() {
        for status in [400, 401, 404, 409, 501, 505] {
            let server = stub::serve_answers(vec![
                stub::Answer::new(status, error_body("INVALID_REQUEST", "r-1")),
                stub::Answer::new(200, "{}"),
            ]);
            let error = api(http_with(2, |_| {}).send(&post(&server.url), &free()).await);
            assert_eq!((error.status, error.attempts), (status, 1));
            assert_eq!(server.requests().len(), 1);
        }
    }

    #[tokio::test]
    async fn exhausted_retries_keep_the_last_answer_and_count_the_attempts() {
        let server = stub::serve_answers(vec![
            stub::Answer::new(503, error_body("RETRY_LATER", "r-1")),
            stub::Answer::new(503, error_body("RETRY_LATER", "r-2")),
            stub::Answer::new(503, error_body("RETRY_LATER", "r-3")),
            stub::Answer::new(200, "{}"),
        ]);
        let error = api(http_with(2, |_| {}).send(&post(&server.url), &free()).await);
        assert_eq!((error.attempts, error.request_id.as_deref()), (3, Some("r-3")));
        assert_eq!(error.operation.as_deref(), Some("GetAccountsDetail"));
        assert!(error.to_string().contains("(RequestId r-3) after 3 attempts"), "{error}");
        assert_eq!(server.requests().len(), 3);

        let server = stub::serve_answers(vec![stub::Answer::dropped(), stub::Answer::dropped()]);
        match http_with(1, |_| {}).send(&post(&server.url), &free()).await {
            Err(error @ Error::Transport { attempts: 2, .. }) => {
                assert!(error.to_string().starts_with("GetAccountsDetail failed after 2 attempts: "), "{error}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn a_login_the_server_saw_is_never_sent_again() {
        for first in [stub::Answer::dropped(), stub::Answer::new(503, error_body("RETRY_LATER", "r-1"))] {
            let server = stub::serve_answers(vec![first.clone(), stub::Answer::new(200, "{}")]);
            let result = http_with(2, |_| {}).send(&login(&server.url), &free()).await;
            match result {
                Err(Error::Transport { attempts: 1, .. }) => assert!(first.drop),
                Err(Error::Api(api)) => assert_eq!((api.status, api.attempts), (503, 1)),
                other => panic!("{other:?}"),
            }
            assert_eq!(server.requests().len(), 1, "{first:?}");
        }
    }

    #[tokio::test]
    async fn a_login_that_never_reached_the_server_is_retried() {
        match http_with(2, |_| {}).send(&login(&closed_port()), &free()).await {
            Err(error @ Error::Transport { attempts: 3, timed_out: false, .. }) => {
                assert!(error.to_string().starts_with("Authorize failed after 3 attempts"), "{error}");
                assert!(!error.to_string().contains("pw-secret"));
            }
            other => panic!("{other:?}"),
        }
    }

    /// A cached Authorize (safe to repeat) with a token fetched from the same stub.
    fn authorize_with_token(url: &str) -> ApiRequest {
        let token = ApiRequest::new(
            "GenerateAuthorizeToken",
            Method::POST,
            format!("{url}/v3/cid/BankingServices/GenerateAuthorizeToken"),
        )
        .header("flinks-auth-key", Secret::new("sk-secret"));
        ApiRequest::new("Authorize", Method::POST, format!("{url}/v3/cid/BankingServices/Authorize"))
            .json(&json!({"LoginId": "l-1", "MostRecentCached": true}))
            .unwrap()
            .fresh_header("flinks-auth-key", token, crate::client::parse_token)
    }

    #[tokio::test]
    async fn a_retried_request_carries_a_fresh_single_use_header_each_attempt() {
        let server = stub::serve_answers(vec![
            stub::Answer::new(200, r#"{"Token": "tok-1"}"#),
            stub::Answer::dropped(),
            stub::Answer::new(200, r#"{"Token": "tok-2"}"#),
            stub::Answer::new(503, error_body("RETRY_LATER", "r-1")),
            stub::Answer::new(200, r#"{"Token": "tok-3"}"#),
            stub::Answer::new(200, "{}"),
        ]);
        let reply = http_with(2, |_| {}).send(&authorize_with_token(&server.url), &free()).await;
        assert!(matches!(reply, Ok(Reply::Data { status: 200, .. })), "{reply:?}");
        let requests: Vec<String> = server.requests().into_iter().map(|r| r.to_ascii_lowercase()).collect();
        assert_eq!(requests.len(), 6);
        for (i, request) in requests.iter().enumerate() {
            let (path, key) = if i % 2 == 0 {
                ("/generateauthorizetoken", "sk-secret".to_owned())
            } else {
                ("/authorize", format!("tok-{}", i / 2 + 1))
            };
            assert!(request.contains(path), "{i}: {request}");
            assert!(request.contains(&format!("flinks-auth-key: {key}\r\n")), "{i}: {request}");
        }
    }

    #[tokio::test]
    async fn a_failed_fetch_of_the_fresh_header_ends_the_call_without_the_value() {
        let server = stub::serve_answers(vec![
            stub::Answer::new(200, r#"{"Token": "tok-1"}"#),
            stub::Answer::dropped(),
            stub::Answer::new(200, r#"{"Token": 7, "Secret": "tok-2"}"#),
        ]);
        let request = authorize_with_token(&server.url);
        assert!(!format!("{request:?}").contains("sk-secret"), "the source's key stays out of a repr");
        match http_with(2, |_| {}).send(&request, &free()).await {
            Err(error @ Error::Protocol { .. }) => {
                let text = format!("{error} {error:?}");
                assert!(text.contains("GenerateAuthorizeToken") && !text.contains("tok-"), "{text}");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(server.requests().len(), 3, "no Authorize went out without its token");
    }

    #[tokio::test]
    async fn no_answer_of_the_token_call_reaches_the_error_whatever_its_shape() {
        for (status, body) in [
            (202, r#"{"Token": "SECRET-1"}"#),
            (302, r#"{"Token": "SECRET-2"}"#),
            (200, r#"["SECRET-3"]"#),
            (200, r#"{"HttpStatusCode": 200, "AuthToken": "SECRET-4"}"#),
            (500, r#"{"FlinksCode": "AGGREGATION_ERROR", "Message": "m", "Token": "SECRET-5"}"#),
            (200, r#"{"Token": "SECRET-6"#),
        ] {
            let server = stub::serve_answers(vec![stub::Answer::new(status, body)]);
            match http_with(0, |_| {}).send(&authorize_with_token(&server.url), &free()).await {
                Err(error) => {
                    let text = format!("{error} {error:?}");
                    assert!(!text.contains("SECRET"), "{status} {body}: {text}");
                }
                Ok(reply) => panic!("{status} {body}: {reply:?}"),
            }
        }
    }

    #[tokio::test]
    async fn retry_after_is_waited_in_seconds_and_as_a_date() {
        let server = stub::serve_answers(vec![
            stub::Answer::new(429, error_body("TOO_MANY_REQUESTS", "r-1")).header("Retry-After", "0.4"),
            stub::Answer::new(503, "busy").header("Retry-After", LATER),
            stub::Answer::new(200, "{}"),
        ]);
        let started = Instant::now();
        // The back-off alone would be a few milliseconds.
        assert!(http_with(2, |_| {}).send(&post(&server.url), &free()).await.is_ok());
        let took = started.elapsed();
        assert!(took >= Duration::from_millis(400) && took < Duration::from_secs(5), "{took:?}");
        assert_eq!(server.requests().len(), 3);
    }

    #[tokio::test]
    async fn a_wait_past_the_deadline_ends_the_call_with_the_servers_answer() {
        let far = ["1e308", "18446744073709551616", "3600", "Fri, 31 Dec 9999 23:59:59 GMT"];
        for retry_after in far {
            let server = stub::serve_answers(vec![
                stub::Answer::new(429, error_body("TOO_MANY_REQUESTS", "r-429")).header("Retry-After", retry_after),
                stub::Answer::new(200, "{}"),
            ]);
            let started = Instant::now();
            let deadline = Instant::now() + Duration::from_secs(60);
            let error = api(http_with(2, |_| {}).send_until(&post(&server.url), Some(deadline), &free()).await);
            assert!(started.elapsed() < Duration::from_secs(2), "{retry_after}: not slept");
            assert_eq!((error.status, error.request_id.as_deref(), error.attempts), (429, Some("r-429"), 1));
            assert!(error.retry_after.unwrap() > Duration::from_secs(60));
            assert_eq!(server.requests().len(), 1);
        }
        // Without a deadline of its own, a call's retries stay within poll_timeout.
        let server = stub::serve_answers(vec![
            stub::Answer::new(503, "busy").header("Retry-After", "5"),
            stub::Answer::new(200, ""),
        ]);
        let http = http_with(2, |config| config.poll.timeout = Duration::from_secs(2));
        assert_eq!(api(http.send(&post(&server.url), &free()).await).attempts, 1);
        // A back-off that would pass the deadline is not slept either.
        let server = stub::serve_answers(vec![stub::Answer::new(503, "busy"), stub::Answer::new(200, "")]);
        let slow = http_with(2, |config| config.retry.backoff = Duration::from_secs(3600));
        let started = Instant::now();
        let deadline = Instant::now() + Duration::from_millis(1);
        assert_eq!(api(slow.send_until(&post(&server.url), Some(deadline), &free()).await).attempts, 1);
        assert!(started.elapsed() < Duration::from_secs(2));
    }

    #[tokio::test]
    async fn a_huge_retry_after_on_a_success_is_harmless() {
        let server =
            stub::serve_answers(vec![stub::Answer::new(200, r#"{"RequestId": "r"}"#).header("Retry-After", "1e308")]);
        assert!(matches!(
            http_with(2, |_| {}).send(&login(&server.url), &free()).await,
            Ok(Reply::Data { status: 200, .. })
        ));
    }

    #[tokio::test]
    async fn bodies_past_the_limit_are_refused() {
        let limit = 64 * 1024;
        let http = http_with(2, |config| config.max_body_bytes = limit);
        let big = vec![b'x'; limit + 1];
        for answer in [stub::Answer::new(200, big.clone()), stub::Answer::new(200, big.clone()).until_close()] {
            let server = stub::serve_answers(vec![answer.clone(), stub::Answer::new(200, "{}")]);
            match http.send(&post(&server.url), &free()).await {
                Err(Error::Protocol { operation, status: 200, message, snippet, .. }) => {
                    assert_eq!(operation, "GetAccountsDetail");
                    assert!(message.contains("max_body_bytes (65536 bytes)"), "{message}");
                    assert_eq!(answer.until_close, !message.contains("Content-Length"), "{message}");
                    assert!(snippet.is_empty());
                }
                other => panic!("{other:?}"),
            }
            assert_eq!(server.requests().len(), 1, "not retried: the same answer would come");
        }
        let exact = stub::serve_answers(vec![stub::Answer::new(200, vec![b' '; limit]).until_close()]);
        match http.send(&post(&exact.url), &free()).await {
            Ok(Reply::Data { bytes, .. }) => assert_eq!(bytes.len(), limit),
            other => panic!("{other:?}"),
        }
        // An error answer past the limit is refused the same way, keeping its status.
        let server = stub::serve_answers(vec![stub::Answer::new(500, big)]);
        assert!(matches!(http.send(&post(&server.url), &free()).await, Err(Error::Protocol { status: 500, .. })));
    }

    #[tokio::test]
    async fn a_large_error_body_is_kept_as_a_snippet_with_its_fields() {
        let message = "m".repeat(500_000);
        let filler: Vec<u32> = (0..200_000).collect();
        let body = json!({"Message": message, "Filler": filler, "FlinksCode": "INVALID_REQUEST", "RequestId": "r-big"});
        let server = stub::serve_answers(vec![stub::Answer::new(400, body.to_string())]);
        let error = api(http_with(0, |_| {}).send(&post(&server.url), &free()).await);
        assert_eq!((error.code.as_deref(), error.request_id.as_deref()), (Some("INVALID_REQUEST"), Some("r-big")));
        match &error.body {
            Body::Text(text) => assert!(text.chars().count() <= 201 && text.starts_with(r#"{"Message":"mmm"#)),
            other @ Body::Json(_) => panic!("{other:?}"),
        }
        assert!(error.message.as_ref().unwrap().chars().count() <= 1001);
        assert!(error.to_string().len() < 2000, "the display stays short");
        // Under 64 KiB the body is kept whole, parsed.
        let small = json!({"Message": "m".repeat(60_000), "FlinksCode": "INVALID_REQUEST"});
        let server = stub::serve_answers(vec![stub::Answer::new(400, small.to_string())]);
        assert_eq!(api(http_with(0, |_| {}).send(&post(&server.url), &free()).await).body, Body::Json(small));
    }

    #[tokio::test]
    async fn a_header_that_cannot_be_sent_is_not_retried() {
        let server = stub::serve_answers(vec![stub::Answer::new(200, "{}")]);
        let request = post(&server.url).header("x-extra", Secret::new("line\nbreak"));
        match http_with(2, |_| {}).send(&request, &free()).await {
            Err(Error::Transport { attempts: 1, message, .. }) => assert!(message.contains("x-extra"), "{message}"),
            other => panic!("{other:?}"),
        }
        assert!(server.requests().is_empty());
    }

    #[tokio::test]
    async fn a_timeout_is_retried_only_when_safe() {
        let quick = |retries| http_with(retries, |config| config.timeout = Duration::from_millis(200));
        let server =
            stub::serve_answers(vec![stub::Answer::stalled(), stub::Answer::stalled(), stub::Answer::new(200, "{}")]);
        assert!(quick(2).send(&post(&server.url), &free()).await.is_ok());
        assert_eq!(server.requests().len(), 3);

        let server = stub::serve_answers(vec![stub::Answer::stalled(), stub::Answer::new(200, "{}")]);
        match quick(2).send(&login(&server.url), &free()).await {
            Err(Error::Transport { timed_out: true, attempts: 1, .. }) => {}
            other => panic!("{other:?}"),
        }
        assert_eq!(server.requests().len(), 1, "a login the server saw is not sent again");

        let server = stub::serve_answers(vec![stub::Answer::stalled(); 3]);
        match quick(2).send(&post(&server.url), &free()).await {
            Err(error @ Error::Transport { timed_out: true, attempts: 3, .. }) => {
                assert!(error.to_string().starts_with("GetAccountsDetail timed out after 3 attempts"), "{error}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn a_retry_gets_only_the_time_left_before_the_deadline() {
        let server = stub::serve_answers(vec![stub::Answer::new(503, "busy"), stub::Answer::stalled()]);
        let patient = http_with(2, |config| config.timeout = Duration::from_secs(60));
        let started = Instant::now();
        let deadline = Instant::now() + Duration::from_millis(500);
        match patient.send_until(&post(&server.url), Some(deadline), &free()).await {
            Err(Error::Transport { timed_out: true, attempts: 2, .. }) => {}
            other => panic!("{other:?}"),
        }
        assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
    }

    /// An `Http` whose `proxy=` is `proxy`.
    fn proxied(proxy: &str, max_retries: u32) -> Http {
        let option = crate::proxy::ProxyOption::Url(Secret::new(proxy));
        let proxies = Proxies::resolve(option, false, &|_| Err(std::env::VarError::NotPresent)).unwrap();
        http_with(max_retries, |config| config.proxy = proxies)
    }

    #[tokio::test]
    async fn a_failure_through_a_proxy_names_the_proxy_without_its_password() {
        let dead = closed_port().replace("http://", "http://alice:hunter2@");
        match proxied(&dead, 0).send(&post("https://api.example.invalid"), &free()).await {
            Err(error @ Error::Transport { .. }) => {
                let text = error.to_string();
                let shown = dead.replace("alice:hunter2@", "***@");
                assert!(text.contains(&format!("through the proxy {shown} (from the proxy option)")), "{text}");
                assert!(text.contains("check the proxy") && !text.contains("hunter2") && !text.contains("alice"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn a_loopback_host_is_reached_directly_whatever_the_proxy() {
        let server = stub::serve_answers(vec![stub::Answer::new(200, "{}")]);
        let reply = proxied(&closed_port(), 0).send(&post(&server.url), &free()).await;
        assert!(matches!(reply, Ok(Reply::Data { status: 200, .. })), "{reply:?}");
        assert!(server.requests()[0].starts_with("POST /v3/cid/"), "{:?}", server.requests());
    }

    #[tokio::test]
    async fn a_tunnel_the_proxy_refuses_is_named_and_not_retried() {
        for (status, says) in [(407, "407 Proxy Authentication Required"), (403, "refused to open a tunnel")] {
            let proxy = stub::serve_answers(vec![stub::Answer::new(status, ""); 3]);
            let url = proxy.url.replace("http://", "http://alice:hunter2@");
            match proxied(&url, 2).send(&post("https://api.example.invalid"), &free()).await {
                Err(error @ Error::Transport { attempts: 1, .. }) => {
                    let text = error.to_string();
                    assert!(text.contains(says) && text.contains("through the proxy http://***@"), "{text}");
                    assert!(!text.contains("hunter2"), "{text}");
                }
                other => panic!("{status}: {other:?}"),
            }
            let requests = proxy.requests();
            assert_eq!(requests.len(), 1, "{requests:?}");
            assert!(requests[0].starts_with("CONNECT api.example.invalid:443 "), "{requests:?}");
            assert!(requests[0].to_ascii_lowercase().contains("proxy-authorization: basic "), "{requests:?}");
        }
    }
}

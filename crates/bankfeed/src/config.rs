//! Client configuration: what the caller passed, completed from `BANKFEED_*` variables and
//! validated once, at construction, so that a bad option fails before the first call.

use std::env::VarError;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::data::money::MoneyType;
use crate::error::Error;
use crate::proxy::{is_loopback, Proxies, ProxyOption};
// Messages of the options show refused values this way; callers name them from here too.
use crate::secret::Secret;
pub(crate) use crate::shown::{shown, shown_url};

/// How 202 "still processing" answers are polled (docs/protocol.md#polling; the defaults are those
/// of docs/protocol.md#timing-and-limits).
#[derive(Clone, Debug, PartialEq)]
pub struct PollPolicy {
    pub interval: Duration,
    /// The whole time one operation may stay pending before `PendingTimeout`.
    pub timeout: Duration,
}

impl Default for PollPolicy {
    fn default() -> Self {
        PollPolicy { interval: Duration::from_secs(10), timeout: Duration::from_secs(30 * 60) }
    }
}

/// How failed requests that are safe to repeat are retried (docs/protocol.md#timing-and-limits).
#[derive(Clone, Debug, PartialEq)]
pub struct RetryPolicy {
    pub max_retries: u32,
    /// Ceiling of the first back-off; doubled on each retry, capped at `max_backoff`. The wait is
    /// drawn at random below the ceiling (full jitter), so that clients refused together do not
    /// come back together. A `Retry-After` wins over it.
    pub backoff: Duration,
    pub max_backoff: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy { max_retries: 2, backoff: Duration::from_millis(500), max_backoff: Duration::from_secs(30) }
    }
}

/// A validated client configuration.
#[derive(Clone, Debug)]
pub struct ClientConfig {
    /// `https://{instance}-api.private.fin.ag`, without the `/v3/...` part.
    pub base_url: String,
    /// Investments live on a separate host at the real service.
    pub investments_base_url: String,
    pub customer_id: String,
    /// Sent as `x-api-key` on data operations.
    pub api_key: Option<Secret>,
    /// When set, each Authorize first asks `GenerateAuthorizeToken` for a single-use token.
    pub secret_key: Option<Secret>,
    /// Per request. Live calls can take 210 s before the service answers, hence 240 s.
    pub timeout: Duration,
    pub poll: PollPolicy,
    pub retry: RetryPolicy,
    /// Bound of the challenge loop of `login`.
    pub max_challenge_rounds: u32,
    /// Largest response body read; a larger one is refused (docs/protocol.md#timing-and-limits).
    pub max_body_bytes: usize,
    /// Lets `http://` reach a host that is not loopback, credentials and keys in clear text
    /// (docs/protocol.md#authentication).
    pub allow_insecure_http: bool,
    /// Bound of one whole call: authorize, challenges, polling, retries
    /// (docs/protocol.md#timing-and-limits). `None`: no bound beyond the other limits.
    pub deadline: Option<Duration>,
    /// At most this many requests of the client are in flight at once, so at most about this
    /// many connections are open to a host; further requests wait their turn
    /// (docs/protocol.md#timing-and-limits). The clients of one configuration in a process share
    /// the bound (docs/architecture.md#one-pool-per-configuration).
    pub max_connections: usize,
    /// The proxy of each request (docs/protocol.md#proxies), decided without an error for both
    /// hosts when the configuration was made.
    pub proxy: Proxies,
    /// How the tables hold money: `float64`, or exact `decimal128` (docs/tables.md#money).
    pub money: MoneyType,
}

/// What the caller passed. The hosts, the customer and the keys left out (`None`) are read from
/// the `BANKFEED_*` variables; every other option has its default in [`Default`], which the
/// Python signatures repeat as literals so that `help()` shows them
/// (`tests/python/tooling/test_defaults.py` compares the two). A pickled Python `Client` travels as these,
/// keys included (docs/architecture.md#pickling).
#[derive(Clone, Debug, Serialize, Deserialize)]
// A field missing from a pickle takes its default; a field this version does not know (a newer
// version's option) is refused rather than dropped without a word.
#[serde(default, deny_unknown_fields)]
pub struct ClientOptions {
    pub base_url: Option<String>,
    pub investments_base_url: Option<String>,
    pub customer_id: Option<String>,
    #[serde(with = "crate::secret::exposed")]
    pub api_key: Option<Secret>,
    #[serde(with = "crate::secret::exposed")]
    pub secret_key: Option<Secret>,
    /// Seconds per request.
    pub timeout: f64,
    pub poll_interval: f64,
    pub poll_timeout: f64,
    pub max_retries: u32,
    pub max_challenge_rounds: u32,
    pub max_body_bytes: usize,
    pub allow_insecure_http: bool,
    pub deadline: Option<f64>,
    pub max_connections: usize,
    #[serde(with = "crate::proxy::as_given")]
    pub proxy: ProxyOption,
    pub money: MoneyType,
}

impl Default for ClientOptions {
    fn default() -> Self {
        let poll = PollPolicy::default();
        ClientOptions {
            base_url: None,
            investments_base_url: None,
            customer_id: None,
            api_key: None,
            secret_key: None,
            // Live calls can take 210 s before the service answers (docs/protocol.md#timing-and-limits).
            timeout: 240.0,
            poll_interval: poll.interval.as_secs_f64(),
            poll_timeout: poll.timeout.as_secs_f64(),
            max_retries: RetryPolicy::default().max_retries,
            max_challenge_rounds: 10,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            allow_insecure_http: false,
            deadline: None,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            proxy: ProxyOption::Environment,
            money: MoneyType::Float,
        }
    }
}

/// At a few hundred bytes each, 100,000 transactions of account detail are some tens of MiB; the
/// default leaves room for several times that while still bounding what a server can make the
/// client hold.
pub const DEFAULT_MAX_BODY_BYTES: usize = 128 * 1024 * 1024;

/// Requests of one client in flight at once, by default: as aiohttp and httpx bound their pools.
/// Thousands of flows sleeping between polls need only these few connections, where opening one
/// per flow would run into the server's connection limit (the sandbox accepts 1,024 at once)
/// and the process's file descriptors.
pub const DEFAULT_MAX_CONNECTIONS: usize = 100;

/// The largest `max_connections`: more than a process can usually keep descriptors for.
pub const MAX_CONNECTIONS: usize = 10_000;

/// The most retries of one request: beyond it the backoff would outlast any call's patience.
pub const MAX_RETRIES: u32 = 10;

/// The shortest wait between two polls: a smaller `poll_interval` (0 included) is raised to it, so
/// that a pending operation cannot become a flood of requests (docs/protocol.md#polling).
pub const MIN_POLL_INTERVAL: Duration = Duration::from_millis(10);

pub const ENV_BASE_URL: &str = "BANKFEED_BASE_URL";
pub const ENV_INVESTMENTS_BASE_URL: &str = "BANKFEED_INVESTMENTS_BASE_URL";
pub const ENV_CUSTOMER_ID: &str = "BANKFEED_CUSTOMER_ID";
pub const ENV_API_KEY: &str = "BANKFEED_API_KEY";
pub const ENV_SECRET_KEY: &str = "BANKFEED_SECRET_KEY";

/// The variables of the process a configuration reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variables {
    /// The `BANKFEED_*` variables and the proxy variables: a client made by the caller.
    All,
    /// Only the proxy variables, which belong to the machine's network: a sandbox's client, and
    /// an unpickled one, whose keys and hosts must not come from the `BANKFEED_*` variables of a
    /// machine set up for the real service, or of another process.
    ProxiesOnly,
}

impl ClientConfig {
    /// A configuration for `base_url` and `customer_id` with every default.
    pub fn new(base_url: &str, customer_id: &str) -> Result<Self, Error> {
        let options = ClientOptions {
            base_url: Some(base_url.to_owned()),
            customer_id: Some(customer_id.to_owned()),
            ..ClientOptions::default()
        };
        Self::resolve(options, |_| None)
    }

    /// Completes `options` from every variable of the process it reads (`Variables::All`), then
    /// validates.
    pub fn from_options(options: ClientOptions) -> Result<Self, Error> {
        Self::from_environment(options, Variables::All)
    }

    /// Completes `options` from the variables of the process that `variables` names, then
    /// validates.
    pub fn from_environment(options: ClientOptions, variables: Variables) -> Result<Self, Error> {
        Self::resolve_vars(options, |name| {
            if variables == Variables::ProxiesOnly && name.starts_with("BANKFEED_") {
                return Err(VarError::NotPresent);
            }
            std::env::var(name)
        })
    }

    /// Completes `options` from `env` (a lookup of `BANKFEED_*` names and proxy variables, which
    /// are all unset when it gives `None`), then validates.
    pub fn resolve(options: ClientOptions, env: impl Fn(&str) -> Option<String>) -> Result<Self, Error> {
        Self::resolve_vars(options, |name| env(name).ok_or(VarError::NotPresent))
    }

    /// Completes `options` from `env`, a lookup that answers as `std::env::var` does, then
    /// validates. A variable set to an empty string counts as unset; one whose value is not UTF-8
    /// is refused, naming it, when it is read.
    pub fn resolve_vars(options: ClientOptions, env: impl Fn(&str) -> Result<String, VarError>) -> Result<Self, Error> {
        // A variable is read only for an option the caller left out; one that is not UTF-8 is an
        // error rather than unset, which would quietly drop a key.
        let read = |field: &'static str, variable: &'static str| match env(variable) {
            Ok(value) if value.is_empty() => Ok(None),
            Ok(value) => Ok(Some(value)),
            Err(VarError::NotPresent) => Ok(None),
            Err(VarError::NotUnicode(_)) => Err(Error::not_unicode(field, variable)),
        };
        // A value read from a variable is checked as an argument would be; its error names the
        // variable, since the caller passed nothing of that name.
        let given = |field: &'static str, value: Option<String>, variable: &'static str| -> Result<_, Error> {
            match value {
                Some(value) => Ok(Some(Given { value, variable: None })),
                None => Ok(read(field, variable)?.map(|value| Given { value, variable: Some(variable) })),
            }
        };
        let base_url_given = options.base_url.is_some();
        let base_url = given("base_url", options.base_url, ENV_BASE_URL)?.ok_or_else(|| {
            Error::config("base_url", format!("is required: give the base_url option, or set {ENV_BASE_URL}"))
        })?;
        let allow_insecure_http = options.allow_insecure_http;
        let base_url = base_url.check(|url| checked_url("base_url", url, allow_insecure_http))?;
        // A host given as an argument is never split by a variable: `base_url=` a sandbox must not
        // send Investments, and the key with them, to the host BANKFEED_INVESTMENTS_BASE_URL names
        // (docs/protocol.md#hosts-paths-and-versions).
        let investments_base_url = match options.investments_base_url {
            Some(url) => Some(Given { value: url, variable: None }),
            None if base_url_given => None,
            None => given("investments_base_url", None, ENV_INVESTMENTS_BASE_URL)?,
        };
        let investments_base_url = match investments_base_url {
            Some(url) => url.check(|url| checked_url("investments_base_url", url, allow_insecure_http))?,
            None => base_url.clone(),
        };
        let customer_id = given("customer_id", options.customer_id, ENV_CUSTOMER_ID)?.ok_or_else(|| {
            Error::config("customer_id", format!("is required: give the customer_id option, or set {ENV_CUSTOMER_ID}"))
        })?;
        // The customer id is the second segment of every path: anything but a plain segment could
        // move the credentials to another path (`..` would send them to /BankingServices/Authorize).
        let customer_id = customer_id.check(|id| {
            if is_safe_segment(id) {
                Ok(id.to_owned())
            } else {
                Err(Error::config("customer_id", format!("must be a GUID or {SAFE_SEGMENT}, got {}", shown(id))))
            }
        })?;
        let key = |field: &'static str, value: Option<Secret>, variable: &'static str| match value {
            Some(key) => checked_key(field, Some(key)),
            None => match read(field, variable)? {
                Some(key) => checked_key(field, Some(Secret::new(key))).map_err(|error| error.read_from(variable)),
                None => Ok(None),
            },
        };
        let api_key = key("api_key", options.api_key, ENV_API_KEY)?;
        let secret_key = key("secret_key", options.secret_key, ENV_SECRET_KEY)?;

        let timeout = seconds("timeout", options.timeout, false)?;
        let poll = PollPolicy {
            interval: seconds("poll_interval", options.poll_interval, true)?.max(MIN_POLL_INTERVAL),
            timeout: seconds("poll_timeout", options.poll_timeout, true)?,
        };
        let max_retries = options.max_retries;
        if max_retries > MAX_RETRIES {
            return Err(Error::config(
                "max_retries",
                format!("must be between 0 and {MAX_RETRIES}, got {max_retries}"),
            ));
        }
        let max_challenge_rounds = options.max_challenge_rounds;
        if max_challenge_rounds == 0 {
            return Err(Error::config("max_challenge_rounds", "must be at least 1, got 0"));
        }
        let deadline = options.deadline.map(|value| seconds("deadline", value, false)).transpose()?;
        let max_body_bytes = options.max_body_bytes;
        if max_body_bytes == 0 {
            return Err(Error::config("max_body_bytes", "must be a number of bytes > 0, got 0"));
        }
        let max_connections = options.max_connections;
        if !(1..=MAX_CONNECTIONS).contains(&max_connections) {
            let rule = format!("must be from 1 to {MAX_CONNECTIONS}, got {max_connections}");
            return Err(Error::config("max_connections", rule));
        }
        // Checked for the client's own hosts, the only ones it sends to: a proxy variable that
        // cannot be used is an error only for a client it would carry (docs/protocol.md#proxies).
        let proxy = Proxies::resolve(options.proxy, allow_insecure_http, &env)?;
        for url in [&base_url, &investments_base_url] {
            if let Ok(url) = reqwest::Url::parse(url) {
                proxy.decide(&url)?;
            }
        }
        Ok(ClientConfig {
            base_url,
            investments_base_url,
            customer_id,
            api_key,
            secret_key,
            timeout,
            poll,
            retry: RetryPolicy { max_retries, ..RetryPolicy::default() },
            max_challenge_rounds,
            max_body_bytes,
            allow_insecure_http,
            deadline,
            max_connections,
            proxy,
            money: options.money,
        })
    }
}

impl ClientConfig {
    /// The options that rebuild this configuration, keys included (a pickled Python `Client`
    /// travels as these). Resolve them without the `BANKFEED_*` variables
    /// ([`Variables::ProxiesOnly`]): a key this configuration lacks must not be filled in from the
    /// variables of another process. The proxy travels as given: `Environment` reads the proxy
    /// variables where the copy is made, since a proxy belongs to the machine's network.
    pub fn to_options(&self) -> ClientOptions {
        ClientOptions {
            base_url: Some(self.base_url.clone()),
            investments_base_url: Some(self.investments_base_url.clone()),
            customer_id: Some(self.customer_id.clone()),
            api_key: self.api_key.clone(),
            secret_key: self.secret_key.clone(),
            timeout: self.timeout.as_secs_f64(),
            poll_interval: self.poll.interval.as_secs_f64(),
            poll_timeout: self.poll.timeout.as_secs_f64(),
            max_retries: self.retry.max_retries,
            max_challenge_rounds: self.max_challenge_rounds,
            max_body_bytes: self.max_body_bytes,
            allow_insecure_http: self.allow_insecure_http,
            deadline: self.deadline.map(|deadline| deadline.as_secs_f64()),
            max_connections: self.max_connections,
            proxy: self.proxy.option().clone(),
            money: self.money,
        }
    }
}

/// What [`is_safe_segment`] accepts, for messages.
pub const SAFE_SEGMENT: &str =
    "a path segment of 1 to 128 ASCII letters, digits, '-' and '_' (no '.', '/', '\\', '%' or spaces)";

/// Whether `value` can stand alone as one segment of a URL path: only ASCII letters, digits, `-`
/// and `_`, so no `..`, no percent-escape, no separator (`/` or `\`), no CR/LF can move a request
/// carrying keys to another path. GUIDs pass.
pub fn is_safe_segment(value: &str) -> bool {
    (1..=128).contains(&value.len()) && value.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// A base URL: https, or http to a loopback host (or anywhere with `allow_insecure_http`), with no
/// userinfo, query or fragment (docs/protocol.md#hosts-paths-and-versions). Messages show the URL
/// without its userinfo, query and fragment, which may hold a secret (`shown_url`).
fn checked_url(field: &'static str, url: &str, allow_insecure_http: bool) -> Result<String, Error> {
    const EXAMPLE: &str = "such as https://toolbox-api.private.fin.ag";
    let given = url;
    let url = url.trim().trim_end_matches('/');
    // The URL parser drops tabs and newlines silently; a URL holding any is refused instead.
    let clean =
        !url.is_empty() && !url.contains(['?', '#']) && !url.chars().any(|c| c.is_whitespace() || c.is_control());
    let parsed = reqwest::Url::parse(url)
        .ok()
        .filter(|parsed| clean && parsed.query().is_none() && parsed.fragment().is_none())
        .ok_or_else(|| {
            // The part left out of the shown URL is said to be there, or the URL would look valid.
            let hidden = if given.contains(['?', '#']) { " and a query or fragment (not shown)" } else { "" };
            Error::config(
                field,
                format!(
                    "must be an https:// URL without query or fragment, {EXAMPLE}; got {}{hidden}",
                    shown_url(given)
                ),
            )
        })?;
    // bankfeed adds /v3/{customer_id}/... itself (docs/protocol.md#hosts-paths-and-versions): a
    // base URL ending in the version would send every request to /v3/v3/... and a 404.
    if parsed
        .path_segments()
        .and_then(|mut segments| segments.next_back())
        .is_some_and(|last| last.eq_ignore_ascii_case("v3"))
    {
        return Err(Error::config(
            field,
            format!(
                "must be the service's root, without the /v3 version bankfeed adds to every path, {EXAMPLE}; \
                 got {}",
                shown_url(given)
            ),
        ));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(Error::config(
            field,
            "must not hold a user name or password (user:password@host): they would show in reprs and logs; \
             give the service's keys as the api_key and secret_key options",
        ));
    }
    match parsed.scheme() {
        "https" => {}
        "http" if allow_insecure_http || is_loopback(&parsed) => {}
        "http" => {
            let host = shown(parsed.host_str().unwrap_or_default());
            return Err(Error::config(
                field,
                format!(
                    "uses http:// to a host that is not loopback (127.0.0.0/8, ::1, localhost), got {host}: \
                     credentials and keys are sent only over https; use https://, or turn on the \
                     allow_insecure_http option to send them in clear text"
                ),
            ));
        }
        // Named only when written as a scheme: in `user:password@host` it would be the user name.
        scheme if url.starts_with(&format!("{scheme}://")) => {
            return Err(Error::config(
                field,
                format!("uses the scheme {scheme}:// but the service is reached only over https://, {EXAMPLE}"),
            ))
        }
        _ => return Err(Error::config(field, format!("must be an https:// URL {EXAMPLE}; got {}", shown_url(given)))),
    }
    if parsed.host().is_none() {
        return Err(Error::config(
            field,
            format!("names no host: it must be an https:// URL {EXAMPLE}; got {}", shown_url(given)),
        ));
    }
    Ok(url.to_owned())
}

/// A value given as an argument, or read from the variable named.
struct Given {
    value: String,
    variable: Option<&'static str>,
}

impl Given {
    /// `check`'s result; its error names the variable the value came from, if one did.
    fn check(self, check: impl FnOnce(&str) -> Result<String, Error>) -> Result<String, Error> {
        check(&self.value).map_err(|error| match self.variable {
            Some(variable) => error.read_from(variable),
            None => error,
        })
    }
}

/// A key that is given must be sendable as a header and not empty (an empty header would be sent
/// as if it were a key). Messages name the field, never the value.
fn checked_key(field: &'static str, key: Option<Secret>) -> Result<Option<Secret>, Error> {
    if let Some(key) = &key {
        if key.expose().is_empty() {
            return Err(Error::config(
                field,
                "must not be empty: leave it out (None) when the service takes no such key",
            ));
        }
        if !key.expose().bytes().all(|b| b.is_ascii_graphic()) {
            return Err(Error::config(
                field,
                "holds characters a header cannot carry: only visible ASCII, no spaces or line breaks",
            ));
        }
    }
    Ok(key)
}

/// Seconds below this are taken (about 31 years): far beyond any wait, well inside a `Duration`.
const MAX_SECONDS: f64 = 1e9;

fn seconds(field: &'static str, value: f64, zero_allowed: bool) -> Result<Duration, Error> {
    let ok = value.is_finite() && (value > 0.0 || (zero_allowed && value == 0.0)) && value < MAX_SECONDS;
    if !ok {
        let low = if zero_allowed { ">= 0" } else { "> 0" };
        let rule = format!("must be a number of seconds {low} and below 1e9, got {}", number(value));
        return Err(Error::config(field, rule));
    }
    Ok(Duration::from_secs_f64(value))
}

/// A number much as Python shows it: `-1` for a whole one, `0.5`, `1e+300`, `-1e-5`, `nan`, `inf`.
fn number(value: f64) -> String {
    if value.is_nan() {
        "nan".to_owned()
    } else if value.is_infinite() {
        if value > 0.0 { "inf" } else { "-inf" }.to_owned()
    } else if value.fract() == 0.0 && value.abs() < 1e16 {
        format!("{value:.0}")
    } else if value.abs() >= 1e16 || value.abs() < 1e-4 {
        format!("{value:e}").replace('e', "e+").replace("e+-", "e-")
    } else {
        format!("{value}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(base_url: &str, customer_id: &str) -> ClientOptions {
        ClientOptions {
            base_url: Some(base_url.into()),
            customer_id: Some(customer_id.into()),
            ..ClientOptions::default()
        }
    }

    fn field_of(result: Result<ClientConfig, Error>) -> &'static str {
        match result {
            Err(Error::Config { field, .. }) => field,
            other => panic!("expected a config error, got {other:?}"),
        }
    }

    #[test]
    fn defaults_follow_the_spec_limits() {
        let config = ClientConfig::new("https://toolbox-api.private.fin.ag/", "cid").unwrap();
        assert_eq!(config.base_url, "https://toolbox-api.private.fin.ag");
        assert_eq!(config.investments_base_url, config.base_url);
        assert_eq!(config.timeout, Duration::from_secs(240));
        assert_eq!(config.poll.interval, Duration::from_secs(10));
        assert_eq!(config.poll.timeout, Duration::from_secs(1800));
        assert_eq!(config.retry.max_retries, 2);
        assert_eq!(config.max_challenge_rounds, 10);
        assert_eq!(config.max_body_bytes, 128 * 1024 * 1024);
    }

    #[test]
    fn missing_values_come_from_the_environment() {
        let env = |name: &str| match name {
            ENV_BASE_URL => Some("http://127.0.0.1:9".to_owned()),
            ENV_CUSTOMER_ID => Some("env-cid".to_owned()),
            ENV_API_KEY => Some("ak".to_owned()),
            _ => None,
        };
        let config = ClientConfig::resolve(ClientOptions::default(), env).unwrap();
        assert_eq!(config.customer_id, "env-cid");
        assert_eq!(config.api_key.unwrap().expose(), "ak");
        assert!(config.secret_key.is_none());
    }

    #[test]
    fn the_investments_host_comes_from_its_variable_too() {
        let env = |name: &str| match name {
            ENV_BASE_URL => Some("https://toolbox-api.private.fin.ag".to_owned()),
            ENV_INVESTMENTS_BASE_URL => Some("https://toolbox-wealth-api.private.fin.ag".to_owned()),
            ENV_CUSTOMER_ID => Some("c".to_owned()),
            _ => None,
        };
        let config = ClientConfig::resolve(ClientOptions::default(), env).unwrap();
        assert_eq!(config.investments_base_url, "https://toolbox-wealth-api.private.fin.ag");
        // An argument wins over the variable, as for every other option.
        let given =
            ClientOptions { investments_base_url: Some("https://w.example".into()), ..ClientOptions::default() };
        assert_eq!(ClientConfig::resolve(given, env).unwrap().investments_base_url, "https://w.example");
    }

    #[test]
    fn a_base_url_given_as_an_argument_is_the_investments_host_too() {
        // A shell set up for the real service, and a client made by hand for a sandbox.
        let env = |name: &str| match name {
            ENV_BASE_URL => Some("https://toolbox-api.private.fin.ag".to_owned()),
            ENV_INVESTMENTS_BASE_URL => Some("https://toolbox-wealth-api.private.fin.ag".to_owned()),
            ENV_API_KEY => Some("prod-key".to_owned()),
            _ => None,
        };
        let config = ClientConfig::resolve(options("http://127.0.0.1:9", "c"), env).unwrap();
        assert_eq!(config.investments_base_url, "http://127.0.0.1:9");
        // The keys still come from their variables (docs/protocol.md#authentication).
        assert_eq!(config.api_key.unwrap().expose(), "prod-key");
        // Both given: each is its own.
        let both = ClientOptions {
            investments_base_url: Some("https://w.example".into()),
            ..options("https://x.example", "c")
        };
        assert_eq!(ClientConfig::resolve(both, env).unwrap().investments_base_url, "https://w.example");
        // A refused BANKFEED_INVESTMENTS_BASE_URL is not even read then.
        let refused = |name: &str| (name == ENV_INVESTMENTS_BASE_URL).then(|| "ftp://x".to_owned());
        assert!(ClientConfig::resolve(options("https://x.example", "c"), refused).is_ok());
    }

    #[test]
    fn a_variable_that_is_not_utf8_is_refused_naming_it_never_dropped() {
        for (variable, field) in [
            (ENV_API_KEY, "api_key"),
            (ENV_SECRET_KEY, "secret_key"),
            (ENV_BASE_URL, "base_url"),
            (ENV_INVESTMENTS_BASE_URL, "investments_base_url"),
            (ENV_CUSTOMER_ID, "customer_id"),
            ("HTTPS_PROXY", "proxy"),
        ] {
            let env = |name: &str| match name {
                name if name == variable => Err(VarError::NotUnicode(std::ffi::OsString::from("k3y-\u{fffd}"))),
                ENV_BASE_URL => Ok("https://x.example".to_owned()),
                ENV_CUSTOMER_ID => Ok("c".to_owned()),
                _ => Err(VarError::NotPresent),
            };
            let (got, rule) = rule_of(ClientConfig::resolve_vars(ClientOptions::default(), env));
            assert_eq!(got, field, "{variable}");
            assert!(rule.contains("not UTF-8") && rule.ends_with(&format!("(read from {variable})")), "{rule}");
            assert!(!rule.contains("k3y"), "{rule}");
        }
        // A variable left unread, for an option given as an argument, is no error.
        let env = |name: &str| match name {
            ENV_API_KEY => Err(VarError::NotUnicode(std::ffi::OsString::from("k"))),
            _ => Err(VarError::NotPresent),
        };
        let given = ClientOptions { api_key: Some(Secret::new("ak")), ..options("https://x.example", "c") };
        assert!(ClientConfig::resolve_vars(given, env).is_ok());
    }

    #[test]
    fn a_proxy_variable_is_checked_for_the_hosts_of_the_client_only() {
        let env = |name: &str| (name == "ALL_PROXY").then(|| "socks5://proxy.corp:1080".to_owned());
        assert!(ClientConfig::resolve(options("http://127.0.0.1:9", "c"), env).is_ok());
        let (field, rule) = rule_of(ClientConfig::resolve(options("https://x.example", "c"), env));
        assert_eq!(field, "proxy");
        assert!(rule.ends_with("(read from ALL_PROXY)"), "{rule}");
        // An explicit proxy is checked whatever the hosts.
        let explicit = ClientOptions {
            proxy: ProxyOption::Url(Secret::new("socks5://u:hunter2@p:1")),
            ..options("http://127.0.0.1:9", "c")
        };
        let (field, rule) = rule_of(ClientConfig::resolve(explicit, |_| None));
        assert_eq!(field, "proxy");
        assert!(!rule.contains("hunter2"), "{rule}");
    }

    #[test]
    fn a_bad_value_from_a_variable_names_the_variable() {
        let rule_of = |variable: &'static str, value: &'static str| {
            let env = move |name: &str| match name {
                name if name == variable => Some(value.to_owned()),
                ENV_BASE_URL => Some("https://x.example".to_owned()),
                ENV_CUSTOMER_ID => Some("c".to_owned()),
                _ => None,
            };
            match ClientConfig::resolve(ClientOptions::default(), env) {
                Err(Error::Config { rule, .. }) => rule,
                other => panic!("{variable}: {:?}", other.map(|_| ())),
            }
        };
        for (variable, value) in [
            (ENV_API_KEY, "bad key"),
            (ENV_SECRET_KEY, "bad\nkey"),
            (ENV_CUSTOMER_ID, "43387ca6-0391-4c82-857d-70d95f087ecb\n"),
            (ENV_BASE_URL, "ftp://x.example"),
            (ENV_INVESTMENTS_BASE_URL, "https://x.example/v3"),
        ] {
            let rule = rule_of(variable, value);
            assert!(rule.ends_with(&format!("(read from {variable})")), "{rule}");
            if variable == ENV_API_KEY || variable == ENV_SECRET_KEY {
                assert!(!rule.contains("key\n") && !rule.contains("bad key"), "a key in {rule}");
            }
        }
        // Given as an argument, the same value's error names no variable.
        let given = ClientOptions { api_key: Some(Secret::new("bad key")), ..options("https://x.example", "c") };
        match ClientConfig::resolve(given, |_| None) {
            Err(Error::Config { rule, .. }) => assert!(!rule.contains("read from"), "{rule}"),
            other => panic!("{:?}", other.map(|_| ())),
        }
    }

    #[test]
    fn a_url_with_the_version_or_a_hidden_part_says_so() {
        for url in ["https://x.example/v3", "https://x.example/V3/", "https://x.example/proxy/v3"] {
            let rule = match ClientConfig::resolve(options(url, "c"), |_| None) {
                Err(Error::Config { rule, .. }) => rule,
                other => panic!("{url}: {:?}", other.map(|_| ())),
            };
            assert!(rule.contains("without the /v3 version"), "{rule}");
        }
        assert!(ClientConfig::resolve(options("https://x.example/proxy", "c"), |_| None).is_ok());
        for url in ["https://x.example/#xyzzy", "https://x.example/?token=t0ps3cret"] {
            let rule = match ClientConfig::resolve(options(url, "c"), |_| None) {
                Err(Error::Config { rule, .. }) => rule,
                other => panic!("{url}: {:?}", other.map(|_| ())),
            };
            assert!(rule.ends_with("and a query or fragment (not shown)"), "{rule}");
            assert!(!rule.contains("t0ps3cret") && !rule.contains("xyzzy"), "{rule}");
        }
    }

    #[test]
    fn missing_or_bad_values_name_their_field() {
        assert_eq!(field_of(ClientConfig::resolve(ClientOptions::default(), |_| None)), "base_url");
        let no_customer = ClientOptions { base_url: Some("http://127.0.0.1:9".into()), ..ClientOptions::default() };
        assert_eq!(field_of(ClientConfig::resolve(no_customer, |_| None)), "customer_id");
        assert_eq!(field_of(ClientConfig::resolve(options("ftp://x", "c"), |_| None)), "base_url");
        assert_eq!(field_of(ClientConfig::resolve(options("http://127.0.0.1:9", "a/b"), |_| None)), "customer_id");
        let bad_timeout = ClientOptions { timeout: 0.0, ..options("http://127.0.0.1:9", "c") };
        assert_eq!(field_of(ClientConfig::resolve(bad_timeout, |_| None)), "timeout");
        let bad_interval = ClientOptions { poll_interval: f64::NAN, ..options("http://127.0.0.1:9", "c") };
        assert_eq!(field_of(ClientConfig::resolve(bad_interval, |_| None)), "poll_interval");
        let no_body = ClientOptions { max_body_bytes: 0, ..options("http://127.0.0.1:9", "c") };
        assert_eq!(field_of(ClientConfig::resolve(no_body, |_| None)), "max_body_bytes");
        for bad in [0, MAX_CONNECTIONS + 1] {
            let options = ClientOptions { max_connections: bad, ..options("http://127.0.0.1:9", "c") };
            assert_eq!(field_of(ClientConfig::resolve(options, |_| None)), "max_connections");
        }
    }

    fn rule_of(result: Result<ClientConfig, Error>) -> (&'static str, String) {
        match result {
            Err(Error::Config { field, rule }) => (field, rule),
            other => panic!("expected a config error, got {other:?}"),
        }
    }

    #[test]
    fn plain_http_reaches_only_loopback_hosts() {
        for url in ["http://127.0.0.1:9", "http://127.8.9.10", "http://127.1", "http://[::1]:80", "http://localhost:9"]
        {
            assert!(ClientConfig::new(url, "c").is_ok(), "{url}");
        }
        for url in
            ["http://10.0.0.1", "http://example.com", "http://[::2]", "http://0.0.0.0:9", "http://localhost.evil.com"]
        {
            let (field, rule) = rule_of(ClientConfig::new(url, "c"));
            assert_eq!(field, "base_url");
            assert!(
                rule.contains("http://") && rule.contains("https") && rule.contains("allow_insecure_http"),
                "{rule}"
            );
        }
        let insecure = ClientOptions { allow_insecure_http: true, ..options("http://example.com", "c") };
        assert!(ClientConfig::resolve(insecure, |_| None).unwrap().allow_insecure_http);
        let other_host = ClientOptions {
            investments_base_url: Some("http://wealth.example.com".into()),
            ..options("https://example.com", "c")
        };
        assert_eq!(field_of(ClientConfig::resolve(other_host, |_| None)), "investments_base_url");
    }

    #[test]
    fn other_schemes_are_refused_even_when_insecure_http_is_allowed() {
        for url in ["ftp://example.com", "file:///etc/passwd", "ws://127.0.0.1", "example.com", "https://", ""] {
            let options = ClientOptions { allow_insecure_http: true, ..options(url, "c") };
            assert_eq!(field_of(ClientConfig::resolve(options, |_| None)), "base_url", "{url}");
        }
        let (_, rule) = rule_of(ClientConfig::new("ftp://example.com", "c"));
        assert!(rule.contains("ftp://"), "{rule}");
        let (_, rule) = rule_of(ClientConfig::new("admin:hunter2@example.com", "c"));
        assert!(!rule.contains("admin") && !rule.contains("hunter2"), "{rule}");
    }

    #[test]
    fn a_refused_url_is_shown_without_user_info_query_or_fragment() {
        for (url, shown) in [
            ("127.0.0.1:8080", "got \"127.0.0.1:8080\""),
            ("https://", "got \"https://\""),
            ("localhost:8080", "got \"localhost:8080\""),
            ("https://example.com?token=hunter2", "got \"https://example.com\""),
            ("https://example.com/#hunter2", "got \"https://example.com/\""),
            ("admin:hunter2@exa mple.com", "got \"…@exa mple.com\""),
            ("https://admin:hunter2@exa mple.com?x", "got \"https://…@exa mple.com\""),
        ] {
            let (field, rule) = rule_of(ClientConfig::new(url, "c"));
            assert_eq!(field, "base_url", "{url}");
            assert!(rule.contains(shown), "{url}: {rule}");
            assert!(!rule.contains("hunter2") && !rule.contains("admin"), "{rule}");
        }
    }

    #[test]
    fn userinfo_in_a_url_is_refused_without_being_repeated() {
        for url in ["https://user:hunter2@example.com", "https://hunter2@example.com", "http://u:hunter2@127.0.0.1:9"] {
            let (field, rule) = rule_of(ClientConfig::new(url, "c"));
            assert_eq!(field, "base_url");
            assert!(!rule.contains("hunter2") && rule.contains("user name or password"), "{rule}");
        }
        let options = ClientOptions {
            investments_base_url: Some("https://a:hunter2@wealth.example.com".into()),
            ..options("https://example.com", "c")
        };
        let (field, rule) = rule_of(ClientConfig::resolve(options, |_| None));
        assert_eq!(field, "investments_base_url");
        assert!(!rule.contains("hunter2"));
    }

    #[test]
    fn urls_with_queries_fragments_or_line_breaks_are_refused() {
        for url in ["https://example.com?a=1", "https://example.com#x", "https://exa\nmple.com", "https://ex ample.com"]
        {
            assert_eq!(field_of(ClientConfig::new(url, "c")), "base_url", "{url:?}");
        }
    }

    #[test]
    fn the_customer_id_is_a_safe_path_segment() {
        for good in ["43387ca6-0391-4c82-857d-70d95f087ecb", "cust_1", "A-b"] {
            assert_eq!(ClientConfig::new("https://example.com", good).unwrap().customer_id, good);
        }
        let long = "a".repeat(129);
        for bad in ["..", "%2e%2e", "a\\b", "a\r\nb", "a/b", "", " c", "c\n", "a.b", "é", "a?b", long.as_str()] {
            let (field, rule) = rule_of(ClientConfig::new("https://example.com", bad));
            assert_eq!(field, "customer_id", "{bad:?}");
            assert!(rule.contains("GUID"), "{rule}");
        }
    }

    #[test]
    fn keys_must_be_sendable_headers_and_never_appear_in_the_error() {
        for (bad, what) in [("", "empty"), ("ab\r\ncd", "carry"), ("a b", "carry"), ("clé", "carry"), ("a\tb", "carry")]
        {
            for field in ["api_key", "secret_key"] {
                let mut options = options("https://example.com", "c");
                if field == "api_key" {
                    options.api_key = Some(Secret::new(bad));
                } else {
                    options.secret_key = Some(Secret::new(bad));
                }
                let (got, rule) = rule_of(ClientConfig::resolve(options, |_| None));
                assert_eq!(got, field);
                assert!(rule.contains(what), "{rule}");
                assert!(bad.is_empty() || !rule.contains(bad), "{rule}");
            }
        }
        let env = |name: &str| (name == ENV_SECRET_KEY).then(|| "bad key".to_owned());
        assert_eq!(field_of(ClientConfig::resolve(options("https://example.com", "c"), env)), "secret_key");
    }

    #[test]
    fn a_poll_interval_below_the_floor_is_raised_to_it() {
        for value in [0.0, 0.001, 0.009] {
            let options = ClientOptions { poll_interval: value, ..options("https://example.com", "c") };
            assert_eq!(ClientConfig::resolve(options, |_| None).unwrap().poll.interval, MIN_POLL_INTERVAL);
        }
        let slower = ClientOptions { poll_interval: 0.25, ..options("https://example.com", "c") };
        assert_eq!(ClientConfig::resolve(slower, |_| None).unwrap().poll.interval, Duration::from_millis(250));
        let negative = ClientOptions { poll_interval: -0.001, ..options("https://example.com", "c") };
        assert_eq!(field_of(ClientConfig::resolve(negative, |_| None)), "poll_interval");
    }

    #[test]
    fn a_deadline_is_optional_and_positive() {
        assert_eq!(ClientConfig::new("https://example.com", "c").unwrap().deadline, None);
        let set = ClientOptions { deadline: Some(2.5), ..options("https://example.com", "c") };
        assert_eq!(ClientConfig::resolve(set, |_| None).unwrap().deadline, Some(Duration::from_millis(2500)));
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, 1e300] {
            let options = ClientOptions { deadline: Some(bad), ..options("https://example.com", "c") };
            assert_eq!(field_of(ClientConfig::resolve(options, |_| None)), "deadline");
        }
    }

    #[test]
    fn a_configuration_comes_back_whole_from_its_options_without_the_environment() {
        let options = ClientOptions {
            investments_base_url: Some("https://wealth.example.com".into()),
            api_key: Some(Secret::new("ak")),
            timeout: 12.5,
            poll_interval: 0.001,
            poll_timeout: 3.25,
            max_retries: 7,
            max_challenge_rounds: 4,
            max_body_bytes: 1000,
            allow_insecure_http: true,
            deadline: Some(9.75),
            proxy: ProxyOption::Url(Secret::new("http://u:pw@proxy.example:3128")),
            ..options("http://example.com", "c")
        };
        let config = ClientConfig::resolve(options, |_| None).unwrap();
        let again = ClientConfig::resolve(config.to_options(), |_| None).unwrap();
        assert_eq!(format!("{again:?}"), format!("{config:?}"));
        assert_eq!(again.api_key.unwrap().expose(), "ak");
        assert!(again.secret_key.is_none());
        assert_eq!(again.proxy.option(), config.proxy.option());
        assert_eq!(again.poll.interval, MIN_POLL_INTERVAL);
    }

    #[test]
    fn a_refused_number_is_echoed_with_its_rule() {
        let refused = |options: ClientOptions| rule_of(ClientConfig::resolve(options, |_| None));
        let base = || options("https://example.com", "c");
        let cases = [
            (ClientOptions { timeout: 0.0, ..base() }, "timeout", "seconds > 0 and below 1e9, got 0"),
            (ClientOptions { timeout: -1.0, ..base() }, "timeout", "got -1"),
            (ClientOptions { timeout: -0.5, ..base() }, "timeout", "got -0.5"),
            (ClientOptions { deadline: Some(f64::NAN), ..base() }, "deadline", "got nan"),
            (ClientOptions { deadline: Some(f64::INFINITY), ..base() }, "deadline", "got inf"),
            (ClientOptions { deadline: Some(1e300), ..base() }, "deadline", "got 1e+300"),
            (
                ClientOptions { poll_interval: -1e-5, ..base() },
                "poll_interval",
                "seconds >= 0 and below 1e9, got -1e-5",
            ),
            (ClientOptions { poll_timeout: f64::NEG_INFINITY, ..base() }, "poll_timeout", "got -inf"),
            (ClientOptions { max_retries: 11, ..base() }, "max_retries", "between 0 and 10, got 11"),
            (ClientOptions { max_challenge_rounds: 0, ..base() }, "max_challenge_rounds", "at least 1, got 0"),
            (ClientOptions { max_body_bytes: 0, ..base() }, "max_body_bytes", "bytes > 0, got 0"),
        ];
        for (options, field, says) in cases {
            let (got, rule) = refused(options);
            assert_eq!(got, field);
            assert!(rule.ends_with(says), "{field}: {rule}");
        }
    }

    #[test]
    fn a_refused_customer_id_is_echoed_escaped_and_bounded() {
        let (_, rule) = rule_of(ClientConfig::new("https://example.com", "a/b"));
        assert!(rule.ends_with(r#"got "a/b""#), "{rule}");
        let (_, rule) = rule_of(ClientConfig::new("https://example.com", "a\r\nb"));
        assert!(rule.ends_with(r#"got "a\r\nb""#) && !rule.contains('\n'), "{rule}");
        let long = "x".repeat(500);
        let (_, rule) = rule_of(ClientConfig::new("https://example.com", &long));
        assert!(rule.ends_with(&format!("got \"{}\"…", "x".repeat(crate::shown::SHOWN_CHARS))), "{rule}");
    }

    #[test]
    fn safe_segments() {
        assert!(is_safe_segment("5e0e5f83-6e9b-4a2c-a6a3-0d8f4b1c9e21"));
        assert!(is_safe_segment("GetAccountsDetailAsync"));
        for bad in ["", "..", ".", "%2e%2e", "a\\b", "a/b", "a\rb", "a\nb", "a b", "a:b", "a@b"] {
            assert!(!is_safe_segment(bad), "{bad:?}");
        }
    }
}

//! Client configuration: what the caller passed, completed from `BANKFEED_*` variables and
//! validated once, at construction, so that a bad option fails before the first call.

use std::time::Duration;

use crate::error::Error;
use crate::secret::Secret;

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

/// How failed requests that are safe to repeat are retried.
#[derive(Clone, Debug, PartialEq)]
pub struct RetryPolicy {
    pub max_retries: u32,
    /// First back-off; doubled on each retry, capped at `max_backoff`. A `Retry-After` wins.
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
}

/// What the caller passed; every field is optional and completed from the environment.
#[derive(Clone, Debug, Default)]
pub struct ClientOptions {
    pub base_url: Option<String>,
    pub investments_base_url: Option<String>,
    pub customer_id: Option<String>,
    pub api_key: Option<Secret>,
    pub secret_key: Option<Secret>,
    pub timeout: Option<f64>,
    pub poll_interval: Option<f64>,
    pub poll_timeout: Option<f64>,
    pub max_retries: Option<u32>,
    pub max_challenge_rounds: Option<u32>,
}

pub const ENV_BASE_URL: &str = "BANKFEED_BASE_URL";
pub const ENV_CUSTOMER_ID: &str = "BANKFEED_CUSTOMER_ID";
pub const ENV_API_KEY: &str = "BANKFEED_API_KEY";
pub const ENV_SECRET_KEY: &str = "BANKFEED_SECRET_KEY";

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

    /// Completes `options` from the process environment, then validates.
    pub fn from_options(options: ClientOptions) -> Result<Self, Error> {
        Self::resolve(options, |name| std::env::var(name).ok().filter(|v| !v.is_empty()))
    }

    /// Completes `options` from `env` (a lookup of `BANKFEED_*` names), then validates.
    pub fn resolve(options: ClientOptions, env: impl Fn(&str) -> Option<String>) -> Result<Self, Error> {
        let base_url = options
            .base_url
            .or_else(|| env(ENV_BASE_URL))
            .ok_or_else(|| Error::config("base_url", format!("is required: pass base_url= or set {ENV_BASE_URL}")))?;
        let base_url = checked_url("base_url", &base_url)?;
        let investments_base_url = match options.investments_base_url {
            Some(url) => checked_url("investments_base_url", &url)?,
            None => base_url.clone(),
        };
        let customer_id = options.customer_id.or_else(|| env(ENV_CUSTOMER_ID)).ok_or_else(|| {
            Error::config("customer_id", format!("is required: pass customer_id= or set {ENV_CUSTOMER_ID}"))
        })?;
        let customer_id = customer_id.trim().to_owned();
        if customer_id.is_empty() || customer_id.contains(['/', '?', '#']) {
            return Err(Error::config("customer_id", "must be a non-empty identifier without '/', '?' or '#'"));
        }
        let api_key = options.api_key.or_else(|| env(ENV_API_KEY).map(Secret::new));
        let secret_key = options.secret_key.or_else(|| env(ENV_SECRET_KEY).map(Secret::new));

        let timeout = seconds("timeout", options.timeout.unwrap_or(240.0), false)?;
        let poll = PollPolicy {
            interval: seconds("poll_interval", options.poll_interval.unwrap_or(10.0), true)?,
            timeout: seconds("poll_timeout", options.poll_timeout.unwrap_or(1800.0), true)?,
        };
        let max_retries = options.max_retries.unwrap_or(2);
        if max_retries > 10 {
            return Err(Error::config("max_retries", "must be between 0 and 10"));
        }
        let max_challenge_rounds = options.max_challenge_rounds.unwrap_or(10);
        if max_challenge_rounds == 0 {
            return Err(Error::config("max_challenge_rounds", "must be at least 1"));
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
        })
    }
}

fn checked_url(field: &'static str, url: &str) -> Result<String, Error> {
    let url = url.trim().trim_end_matches('/');
    let rest = url.strip_prefix("https://").or_else(|| url.strip_prefix("http://"));
    match rest {
        Some(host) if !host.is_empty() && !host.contains(['?', '#']) => Ok(url.to_owned()),
        _ => Err(Error::config(field, "must be an http:// or https:// URL such as https://toolbox-api.private.fin.ag")),
    }
}

fn seconds(field: &'static str, value: f64, zero_allowed: bool) -> Result<Duration, Error> {
    let ok = value.is_finite() && (value > 0.0 || (zero_allowed && value == 0.0)) && value < 1e9;
    if !ok {
        let rule = if zero_allowed { "must be a number of seconds >= 0" } else { "must be a number of seconds > 0" };
        return Err(Error::config(field, rule));
    }
    Ok(Duration::from_secs_f64(value))
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
    fn missing_or_bad_values_name_their_field() {
        assert_eq!(field_of(ClientConfig::resolve(ClientOptions::default(), |_| None)), "base_url");
        let no_customer = ClientOptions { base_url: Some("http://x".into()), ..ClientOptions::default() };
        assert_eq!(field_of(ClientConfig::resolve(no_customer, |_| None)), "customer_id");
        assert_eq!(field_of(ClientConfig::resolve(options("ftp://x", "c"), |_| None)), "base_url");
        assert_eq!(field_of(ClientConfig::resolve(options("http://x", "a/b"), |_| None)), "customer_id");
        let bad_timeout = ClientOptions { timeout: Some(0.0), ..options("http://x", "c") };
        assert_eq!(field_of(ClientConfig::resolve(bad_timeout, |_| None)), "timeout");
        let bad_interval = ClientOptions { poll_interval: Some(f64::NAN), ..options("http://x", "c") };
        assert_eq!(field_of(ClientConfig::resolve(bad_interval, |_| None)), "poll_interval");
    }
}

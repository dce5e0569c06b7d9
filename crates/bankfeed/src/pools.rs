//! The connection pools of a process: one per configuration, shared by every client of that
//! configuration in the process (docs/architecture.md#one-pool-per-configuration).
//!
//! A Dask or Spark worker unpickles a copy of the client in every task it runs. Were each copy its
//! own pool, a worker would hold `max_connections` per task it keeps alive, and a cluster ran past
//! the service's (and the sandbox's) limit of connections. So a copy, or a client built anew with
//! the same options, takes the pool and the bound on requests in flight (`Http`'s `slots`) that
//! the process already has for that configuration, and `max_connections` bounds the process.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, Weak};

use crate::config::ClientConfig;
use crate::error::Error;
use crate::fork::PerProcess;
use crate::http::Http;
use crate::sync::lock;

/// The whole configuration, keys included, as one text: clients share a pool only when every
/// option is the same, so a pool never carries the requests of another account, host or bound.
/// Held in this process's memory only, and never shown.
#[derive(Clone, PartialEq, Eq, Hash)]
struct PoolKey(String);

impl fmt::Debug for PoolKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PoolKey(***)")
    }
}

impl PoolKey {
    fn of(config: &ClientConfig) -> Self {
        let nanos = |duration: std::time::Duration| duration.as_nanos().to_string();
        let secret =
            |key: &Option<crate::Secret>| key.as_ref().map_or("-".to_owned(), |key| format!("+{}", key.expose()));
        // The proxy each of the client's two hosts goes through, user:password included, as the
        // pool routes them: `proxy="environment"` read under other variables is another pool.
        let route = |url: &str| {
            reqwest::Url::parse(url)
                .ok()
                .and_then(|url| config.proxy.route(&url).map(|proxy| format!("+{}", proxy.url())))
                .unwrap_or_else(|| "-".to_owned())
        };
        let parts = [
            config.base_url.clone(),
            config.investments_base_url.clone(),
            config.customer_id.clone(),
            secret(&config.api_key),
            secret(&config.secret_key),
            nanos(config.timeout),
            nanos(config.poll.interval),
            nanos(config.poll.timeout),
            config.retry.max_retries.to_string(),
            nanos(config.retry.backoff),
            nanos(config.retry.max_backoff),
            config.max_challenge_rounds.to_string(),
            config.max_body_bytes.to_string(),
            config.allow_insecure_http.to_string(),
            config.deadline.map_or("-".to_owned(), nanos),
            config.max_connections.to_string(),
            route(&config.base_url),
            route(&config.investments_base_url),
        ];
        // Each part prefixed by its length, so that no two configurations make the same text.
        let mut key = String::new();
        for part in parts {
            key.push_str(&format!("{}:", part.len()));
            key.push_str(&part);
        }
        PoolKey(key)
    }
}

/// The pools of this process by configuration. Weak: a pool lives as long as a client holds it
/// (a closed client lets go of its own), not as long as the process.
type Registry = Arc<Mutex<HashMap<PoolKey, Weak<Http>>>>;

/// Per process: a forked child's pools are the parent's, driven by threads the child does not
/// have (docs/architecture.md#fork-and-child-processes), so the child starts a registry of its own.
static POOLS: PerProcess<Registry> = PerProcess::new();

/// The pool of `config` in this process: the one its clients hold already, or a new one.
pub(crate) fn shared(config: &ClientConfig) -> Result<Arc<Http>, Error> {
    let registry = POOLS.get_or_try_init(|| Ok::<_, Error>(Registry::default()))?;
    let key = PoolKey::of(config);
    let mut pools = lock(&registry);
    if let Some(http) = pools.get(&key).and_then(Weak::upgrade) {
        return Ok(http);
    }
    let http = Arc::new(Http::new(config)?);
    // The pools no client holds any more, gone with their last client: a process that makes
    // clients of many configurations (a sandbox per test) does not keep a growing map.
    pools.retain(|_, pool| pool.strong_count() > 0);
    pools.insert(key, Arc::downgrade(&http));
    Ok(http)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::Secret;

    fn config(base: &str) -> ClientConfig {
        ClientConfig::new(base, "cust").unwrap()
    }

    #[test]
    fn clients_of_one_configuration_share_its_pool() {
        let one = shared(&config("http://127.0.0.1:1")).unwrap();
        let two = shared(&config("http://127.0.0.1:1")).unwrap();
        assert!(Arc::ptr_eq(&one, &two));
        let other = shared(&config("http://127.0.0.1:2")).unwrap();
        assert!(!Arc::ptr_eq(&one, &other));
    }

    #[test]
    fn every_option_keys_included_tells_pools_apart() {
        let base = config("http://127.0.0.1:3");
        let held = shared(&base).unwrap();
        let changes: [fn(&mut ClientConfig); 6] = [
            |c| c.api_key = Some(Secret::new("a")),
            |c| c.secret_key = Some(Secret::new("s")),
            |c| c.max_connections = 7,
            |c| c.timeout = Duration::from_secs(1),
            |c| c.deadline = Some(Duration::from_secs(1)),
            |c| c.customer_id = "other".to_owned(),
        ];
        for change in changes {
            let mut changed = base.clone();
            change(&mut changed);
            assert!(!Arc::ptr_eq(&held, &shared(&changed).unwrap()));
        }
        let mut keyed = base.clone();
        keyed.api_key = Some(Secret::new("a"));
        let mut other_key = base.clone();
        other_key.api_key = Some(Secret::new("b"));
        assert!(!Arc::ptr_eq(&shared(&keyed).unwrap(), &shared(&other_key).unwrap()));
    }

    #[test]
    fn a_pool_no_client_holds_is_gone() {
        let first = shared(&config("http://127.0.0.1:4")).unwrap();
        let weak = Arc::downgrade(&first);
        drop(first);
        assert!(weak.upgrade().is_none(), "the registry must not keep a pool alive");
        assert!(shared(&config("http://127.0.0.1:4")).is_ok(), "a new client of it gets a new pool");
    }

    #[test]
    fn the_key_never_shows_a_secret() {
        let mut keyed = config("http://127.0.0.1:5");
        keyed.api_key = Some(Secret::new("hunter2-key"));
        assert!(!format!("{:?}", PoolKey::of(&keyed)).contains("hunter2"));
    }
}

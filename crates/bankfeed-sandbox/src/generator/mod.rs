//! The deterministic data generator: every login's banking accounts and investment portfolio,
//! derived from `SandboxConfig.seed`, the LoginId and the sandbox's clock alone, so a test can
//! compare payloads byte for byte across runs and across sandboxes (docs/sandbox.md#the-clock).

mod banking;

mod names;
pub(crate) mod portfolio;
mod random;

pub use crate::world::calendar::AsOf;
pub(crate) use crate::world::calendar::{dash_date, month_name, months_before, offset_of, slash_date, DAYS};
pub(crate) use banking::{BankAccount, BankTransaction, Banking, Description};
pub(crate) use names::Isin;
pub(crate) use portfolio::Portfolio;
pub(crate) use random::{hash, Rng};

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, OnceLock};

use axum::body::Bytes;

use serde::{Serialize, Serializer};

use crate::config::SandboxConfig;
// A panic while generating leaves nothing half-inserted in the map, so poisoning is harmless.
use bankfeed::sync::lock;

/// The LoginId of a user: a GUID derived from the seed and the lower-cased username, so a user
/// has the same LoginId in every sandbox with the same seed; in the shape the service mints
/// LoginIds ([`Guid::sequential`]).
pub(crate) fn login_id_for(seed: u64, username: &str) -> String {
    login_guid_for(seed, username).to_text()
}

/// [`login_id_for`] as a number, the key of the saved logins.
pub(crate) fn login_guid_for(seed: u64, username: &str) -> Guid {
    Guid::sequential(&[&seed.to_le_bytes(), b"login", username.trim().to_lowercase().as_bytes()])
}

/// The .NET ticks (100 ns since 0001-01-01) of 2025-11-20, a year before the data's as-of day:
/// the sequential tails of LoginIds fall in that year.
const SEQUENTIAL_FROM: u64 = 638_991_936_000_000_000;

/// A year of ticks.
const SEQUENTIAL_SPAN: u64 = 315_360_000_000_000;

/// The stream every piece of a login's data is forked from.
fn login_rng(seed: u64, login_id: &str) -> Rng {
    Rng::new(hash(&[&seed.to_le_bytes(), b"data", login_id.trim().to_ascii_lowercase().as_bytes()]))
}

/// How many generated rows (accounts, transactions, trades, positions) each kind of data keeps
/// in all: a benchmark over 100,000 logins must not keep every login's data, and one login of
/// 100,000 transactions must stay cached. A row costs a few hundred bytes, with its JSON.
const CACHE_ROWS: usize = 250_000;

/// How many logins' data the cache keeps, whatever their size.
const CACHE_ENTRIES: usize = 20_000;

/// Generated data, per LoginId and clock, made on first use and kept while the cache has room
/// (oldest made, first dropped): a poll loop asks for the same data many times, and 100,000
/// transactions are worth making once. Dropped data is made again the same on its next use.
pub(crate) struct DataCache {
    banking: Mutex<Bounded<Banking>>,
    portfolios: Mutex<Bounded<CachedPortfolio>>,
}

/// A portfolio and its Investments answer, which is the same for every session of the login
/// but for the RequestId at its end: serialising 20 KB of JSON per session would make the
/// sandbox, not the client, the bottleneck of a benchmark.
pub(crate) struct CachedPortfolio {
    pub portfolio: Portfolio,
    /// The 200's bytes up to the RequestId's value; made on first use (None: not cacheable).
    pub answer: OnceLock<Option<Bytes>>,
}

impl Default for DataCache {
    fn default() -> Self {
        DataCache::with_limits(CACHE_ROWS, CACHE_ENTRIES)
    }
}

impl DataCache {
    fn with_limits(max_rows: usize, max_entries: usize) -> DataCache {
        DataCache {
            banking: Mutex::new(Bounded::new(max_rows, max_entries)),
            portfolios: Mutex::new(Bounded::new(max_rows, max_entries)),
        }
    }

    pub(super) fn banking(&self, config: &SandboxConfig, login_id: &str, clock: AsOf) -> Arc<Banking> {
        cached(&self.banking, login_id, clock, Banking::rows, || {
            Banking::generate(&login_rng(config.seed, login_id), config.banking_transactions, clock)
        })
    }

    pub(super) fn portfolio(&self, config: &SandboxConfig, login_id: &str, clock: AsOf) -> Arc<CachedPortfolio> {
        let make = || CachedPortfolio {
            portfolio: Portfolio::generate(
                config.seed,
                &login_rng(config.seed, login_id),
                config.investment_transactions,
                clock,
            ),
            answer: OnceLock::new(),
        };
        cached(&self.portfolios, login_id, clock, |cached| cached.portfolio.rows(), make)
    }

    /// Drops a deleted login's data; it would be generated the same again anyway.
    pub(super) fn forget(&self, login_id: &str) {
        let prefix = format!("{}@", login_id.trim().to_ascii_lowercase());
        lock(&self.banking).remove_starting(&prefix);
        lock(&self.portfolios).remove_starting(&prefix);
    }

    /// Drops every login's data: the clock moved, and data of another day is of no more use.
    pub(super) fn clear(&self) {
        lock(&self.banking).remove_starting("");
        lock(&self.portfolios).remove_starting("");
    }

    #[cfg(test)]
    fn sizes(&self) -> (usize, usize) {
        (lock(&self.banking).map.len(), lock(&self.portfolios).map.len())
    }
}

/// The data of `login_id`, made outside the lock: making 100,000 transactions must not hold up
/// the requests of other logins. Two first requests at once may both make it; they make the same.
fn cached<T>(
    cache: &Mutex<Bounded<T>>,
    login_id: &str,
    clock: AsOf,
    rows: impl FnOnce(&T) -> usize,
    make: impl FnOnce() -> T,
) -> Arc<T> {
    // The clock is in the key: a request that read the clock before it moved must not leave
    // the old day's data under the new day.
    let key = format!("{}@{}", login_id.trim().to_ascii_lowercase(), clock.days_after_first());
    if let Some((hit, _)) = lock(cache).map.get(&key) {
        return Arc::clone(hit);
    }
    let made = Arc::new(make());
    let mut cache = lock(cache);
    if let Some((hit, _)) = cache.map.get(&key) {
        return Arc::clone(hit);
    }
    cache.insert(key, Arc::clone(&made), rows(&made));
    made
}

/// A map bounded in rows and in entries, dropping the oldest entries first.
struct Bounded<T> {
    map: HashMap<String, (Arc<T>, usize)>,
    /// Keys in the order they were inserted; a key removed by `remove` stays until it comes up.
    order: VecDeque<String>,
    rows: usize,
    max_rows: usize,
    max_entries: usize,
}

impl<T> Bounded<T> {
    fn new(max_rows: usize, max_entries: usize) -> Bounded<T> {
        Bounded { map: HashMap::new(), order: VecDeque::new(), rows: 0, max_rows, max_entries }
    }

    fn insert(&mut self, key: String, value: Arc<T>, rows: usize) {
        // The newest entry is always kept, however large.
        while !self.order.is_empty()
            && (self.rows.saturating_add(rows) > self.max_rows || self.order.len() >= self.max_entries)
        {
            if let Some(oldest) = self.order.pop_front() {
                self.remove(&oldest);
            }
        }
        self.order.push_back(key.clone());
        self.rows = self.rows.saturating_add(rows);
        if let Some((_, replaced)) = self.map.insert(key, (value, rows)) {
            self.rows = self.rows.saturating_sub(replaced);
        }
    }

    fn remove(&mut self, key: &str) {
        if let Some((_, rows)) = self.map.remove(key) {
            self.rows = self.rows.saturating_sub(rows);
        }
    }

    /// Removes every key that starts with `prefix` ("" removes all).
    fn remove_starting(&mut self, prefix: &str) {
        let keys: Vec<String> = self.map.keys().filter(|key| key.starts_with(prefix)).cloned().collect();
        for key in keys {
            self.remove(&key);
        }
        if self.map.is_empty() {
            self.order.clear();
        }
    }
}

impl Banking {
    fn rows(&self) -> usize {
        self.accounts.iter().map(|account| 1 + account.transactions.len()).sum()
    }
}

impl Portfolio {
    fn rows(&self) -> usize {
        self.accounts.iter().map(|account| 1 + account.transactions.len() + account.positions.len()).sum()
    }
}

/// A GUID kept as a number, so 100,000 of them cost no allocation until they are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Guid(pub u128);

impl Guid {
    /// A version-4 GUID from the stream, so clients that validate the version accept it.
    pub(super) fn draw(rng: &mut Rng) -> Guid {
        let bytes = ((u128::from(rng.next()) << 64) | u128::from(rng.next())).to_be_bytes();
        Guid(uuid::Builder::from_random_bytes(bytes).into_uuid().as_u128())
    }

    /// A GUID that depends only on `parts`: the same inputs give the same GUID in every sandbox.
    pub(super) fn derive(parts: &[&[u8]]) -> Guid {
        Guid::draw(&mut Rng::new(hash(parts)))
    }

    /// A GUID in the shape the service mints its LoginIds in (docs/sandbox.md#lastrefresh-loginids-and-languages),
    /// depending only on `parts`: a random version-4 head (the first three groups) and a .NET
    /// sequential tail, a tick count written as .NET's sequential GUIDs write it (its two low
    /// bytes swapped, then its six high bytes, high first: `...-7c44-08da172863b5`). The variant
    /// nibble that starts the fourth group is kept outside RFC 4122's (8 to b), as in most
    /// recorded LoginIds, so a check for a version-4 UUID refuses every one of them.
    pub(super) fn sequential(parts: &[&[u8]]) -> Guid {
        let mut rng = Rng::new(hash(parts));
        let head = Guid::draw(&mut rng).0 & !u128::from(u64::MAX);
        let ticks = (SEQUENTIAL_FROM + rng.next() % SEQUENTIAL_SPAN).to_le_bytes();
        let [t0, t1, t2, t3, t4, t5, t6, t7] = ticks;
        let mut tail = [t1, t0, t7, t6, t5, t4, t3, t2];
        let [variant, ..] = &mut tail;
        if *variant & 0xc0 == 0x80 {
            // 10xx (RFC 4122) becomes 11xx, the variant reserved to Microsoft.
            *variant ^= 0x40;
        }
        Guid(head | u128::from(u64::from_be_bytes(tail)))
    }

    pub(super) fn to_text(self) -> String {
        uuid::Uuid::from_u128(self.0).to_string()
    }
}

impl std::fmt::Display for Guid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut buffer = uuid::Uuid::encode_buffer();
        f.write_str(uuid::Uuid::from_u128(self.0).hyphenated().encode_lower(&mut buffer))
    }
}

impl Serialize for Guid {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut buffer = uuid::Uuid::encode_buffer();
        serializer.serialize_str(uuid::Uuid::from_u128(self.0).hyphenated().encode_lower(&mut buffer))
    }
}

/// An amount in cents; money is summed in cents so totals add up exactly, and becomes a
/// number with at most 2 decimals only on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub(crate) struct Cents(pub i64);

impl Cents {
    pub(super) fn dollars(self) -> f64 {
        self.0 as f64 / 100.0
    }
}

impl Serialize for Cents {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_f64(self.dollars())
    }
}

/// `numerator / denominator`, rounded half away from zero, as every average of the service is.
pub(crate) fn divide_rounded(numerator: i64, denominator: i64) -> i64 {
    let magnitude = (numerator.unsigned_abs() * 2 + denominator.unsigned_abs()) / (denominator.unsigned_abs() * 2);
    let magnitude = magnitude as i64;
    if (numerator < 0) == (denominator < 0) {
        magnitude
    } else {
        -magnitude
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(count: Option<usize>) -> SandboxConfig {
        SandboxConfig { banking_transactions: count, investment_transactions: count, ..SandboxConfig::default() }
    }

    #[test]
    fn login_ids_have_a_sequential_tail_outside_rfc_4122() {
        for seed in 0..50 {
            let id = uuid::Uuid::parse_str(&login_id_for(seed, "Greatday")).unwrap();
            assert_eq!(id.get_version_num(), 4, "{id}: the head is a version-4 GUID's");
            assert!(!matches!(id.get_variant(), uuid::Variant::RFC4122), "{id}: the variant is not RFC 4122's");
            let tail = u64::try_from(id.as_u128() & u128::from(u64::MAX)).unwrap().to_be_bytes();
            let ticks = u64::from_le_bytes([tail[1], tail[0], tail[7], tail[6], tail[5], tail[4], tail[3], tail[2]]);
            // Within the year before the as-of day, give or take the variant bit that may have moved.
            assert!((SEQUENTIAL_FROM - 0x4000..SEQUENTIAL_FROM + SEQUENTIAL_SPAN + 0x4000).contains(&ticks), "{id}");
        }
        // The RequestIds and every other identifier stay random version-4 GUIDs.
        let drawn = uuid::Uuid::from_u128(Guid::derive(&[b"any"]).0);
        assert_eq!((drawn.get_version_num(), drawn.get_variant()), (4, uuid::Variant::RFC4122));
    }

    #[test]
    fn generation_is_deterministic_and_sized() {
        let login = login_id_for(0, "Greatday");
        assert_eq!(login, login_id_for(0, " greatday "));
        assert_ne!(login, login_id_for(1, "Greatday"));
        let (a, b) = (DataCache::default(), DataCache::default());
        let config = config(None);
        let now = AsOf::default();
        let (x, y) = (a.banking(&config, &login, now), b.banking(&config, &login, now));
        let ids = |banking: &Banking| -> Vec<Guid> {
            banking.accounts.iter().flat_map(|account| account.transactions.iter().map(|t| t.id)).collect()
        };
        assert_eq!(ids(&x), ids(&y));
        assert_eq!(
            a.portfolio(&config, &login, now).portfolio.value(),
            b.portfolio(&config, &login, now).portfolio.value()
        );
    }

    #[test]
    fn a_hundred_thousand_transactions_and_trades_are_generated_exactly() {
        // How fast is for benchmarks; this checks the counts.
        let config = config(Some(100_000));
        let login = login_id_for(0, "greatday_nomfa");
        let now = AsOf::default();
        let banking = Banking::generate(&login_rng(0, &login), config.banking_transactions, now);
        let portfolio = Portfolio::generate(0, &login_rng(0, &login), config.investment_transactions, now);
        let count: usize = banking.accounts.iter().map(|a| a.transactions.len()).sum();
        assert_eq!(count, 100_000);
        let trades: usize = portfolio.accounts.iter().map(|a| a.transactions.len()).sum();
        assert_eq!(trades, 100_000);
    }

    #[test]
    fn the_cache_keeps_a_bounded_number_of_logins() {
        let cache = DataCache::with_limits(1_000, 50);
        let config = config(Some(1));
        let first = login_id_for(0, "bulk_00000");
        let now = AsOf::default();
        let made = cache.portfolio(&config, &first, now);
        for index in 0..60 {
            cache.portfolio(&config, &login_id_for(0, &format!("bulk_{index:05}")), now);
        }
        assert_eq!(cache.sizes().1, 50);
        // Dropped and made again: the same data.
        assert_eq!(cache.portfolio(&config, &first, now).portfolio.value(), made.portfolio.value());
        let big = SandboxConfig { banking_transactions: Some(2_000), ..SandboxConfig::default() };
        cache.banking(&big, &first, now);
        assert_eq!(cache.sizes().0, 1, "the newest entry is kept however large");
        cache.banking(&big, &login_id_for(0, "Greatday"), now);
        assert_eq!(cache.sizes().0, 1, "and pushes out the older ones past the row budget");
    }
}

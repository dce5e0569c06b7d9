//! The deterministic data generator: every login's banking accounts and investment portfolio,
//! derived from `SandboxConfig.seed` and the LoginId alone, as of a fixed date, so a test can
//! compare payloads byte for byte across runs and across sandboxes.

mod banking;
mod calendar;
mod names;
pub(crate) mod portfolio;
mod random;

pub(crate) use banking::{BankAccount, BankTransaction, Banking, Description};
pub(crate) use calendar::{dash_date, month_name, months_before, slash_date, DAYS};
pub(crate) use names::Isin;
pub(crate) use portfolio::{Portfolio, PRICE_DATE};
pub(crate) use random::{hash, Rng};

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde::{Serialize, Serializer};

use super::SandboxConfig;
// A panic while generating leaves nothing half-inserted in the map, so poisoning is harmless.
use crate::sync::lock;

/// The LoginId of a user: a GUID derived from the seed and the lower-cased username, so a user
/// has the same LoginId in every sandbox with the same seed.
pub(crate) fn login_id_for(seed: u64, username: &str) -> String {
    Guid::derive(&[&seed.to_le_bytes(), b"login", username.trim().to_lowercase().as_bytes()]).to_text()
}

/// The stream every piece of a login's data is forked from.
fn login_rng(seed: u64, login_id: &str) -> Rng {
    Rng::new(hash(&[&seed.to_le_bytes(), b"data", login_id.trim().to_ascii_lowercase().as_bytes()]))
}

/// Generated data, per LoginId, made on first use and kept: a poll loop asks for the same data
/// many times, and 100,000 transactions are worth making once.
#[derive(Default)]
pub(crate) struct DataCache {
    banking: Mutex<HashMap<String, Arc<Banking>>>,
    portfolios: Mutex<HashMap<String, Arc<Portfolio>>>,
}

impl DataCache {
    pub fn banking(&self, config: &SandboxConfig, login_id: &str) -> Arc<Banking> {
        let mut cache = lock(&self.banking);
        let key = login_id.trim().to_ascii_lowercase();
        Arc::clone(cache.entry(key).or_insert_with(|| {
            Arc::new(Banking::generate(&login_rng(config.seed, login_id), config.banking_transactions))
        }))
    }

    pub fn portfolio(&self, config: &SandboxConfig, login_id: &str) -> Arc<Portfolio> {
        let mut cache = lock(&self.portfolios);
        let key = login_id.trim().to_ascii_lowercase();
        Arc::clone(cache.entry(key).or_insert_with(|| {
            Arc::new(Portfolio::generate(
                config.seed,
                &login_rng(config.seed, login_id),
                config.investment_transactions,
            ))
        }))
    }

    /// Drops a deleted login's data; it would be generated the same again anyway.
    pub fn forget(&self, login_id: &str) {
        let key = login_id.trim().to_ascii_lowercase();
        lock(&self.banking).remove(&key);
        lock(&self.portfolios).remove(&key);
    }
}

/// A GUID kept as a number, so 100,000 of them cost no allocation until they are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Guid(pub u128);

impl Guid {
    /// A version-4 GUID from the stream, so clients that validate the version accept it.
    pub fn draw(rng: &mut Rng) -> Guid {
        let bytes = ((u128::from(rng.next()) << 64) | u128::from(rng.next())).to_be_bytes();
        Guid(uuid::Builder::from_random_bytes(bytes).into_uuid().as_u128())
    }

    /// A GUID that depends only on `parts`: the same inputs give the same GUID in every sandbox.
    pub fn derive(parts: &[&[u8]]) -> Guid {
        Guid::draw(&mut Rng::new(hash(parts)))
    }

    pub fn to_text(self) -> String {
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
    pub fn dollars(self) -> f64 {
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
    if (numerator < 0) != (denominator < 0) {
        -magnitude
    } else {
        magnitude
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(count: Option<usize>) -> SandboxConfig {
        SandboxConfig { banking_transactions: count, investment_transactions: count, ..SandboxConfig::default() }
    }

    #[test]
    fn generation_is_deterministic_and_sized() {
        let login = login_id_for(0, "Greatday");
        assert_eq!(login, login_id_for(0, " greatday "));
        assert_ne!(login, login_id_for(1, "Greatday"));
        let (a, b) = (DataCache::default(), DataCache::default());
        let config = config(None);
        let (x, y) = (a.banking(&config, &login), b.banking(&config, &login));
        let ids = |banking: &Banking| -> Vec<Guid> {
            banking.accounts.iter().flat_map(|account| account.transactions.iter().map(|t| t.id)).collect()
        };
        assert_eq!(ids(&x), ids(&y));
        assert_eq!(a.portfolio(&config, &login).value(), b.portfolio(&config, &login).value());
    }

    #[test]
    fn a_hundred_thousand_transactions_and_trades_are_generated_exactly() {
        // How fast is for benchmarks; this checks the counts.
        let config = config(Some(100_000));
        let login = login_id_for(0, "greatday_nomfa");
        let banking = Banking::generate(&login_rng(0, &login), config.banking_transactions);
        let portfolio = Portfolio::generate(0, &login_rng(0, &login), config.investment_transactions);
        let count: usize = banking.accounts.iter().map(|a| a.transactions.len()).sum();
        assert_eq!(count, 100_000);
        let trades: usize = portfolio.accounts.iter().map(|a| a.transactions.len()).sum();
        assert_eq!(trades, 100_000);
    }
}

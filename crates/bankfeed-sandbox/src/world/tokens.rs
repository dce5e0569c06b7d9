//! The Authorize tokens a sandbox with a secret key has handed out and not yet seen used
//! (docs/sandbox.md#limits).
//!
//! The service's tokens are single-use and short-lived (docs/protocol.md#authentication). The
//! sandbox used to keep every token it issued until it was presented, so a client that asked for
//! tokens and never used them (or a flood of token calls) grew the sandbox without end. Here a
//! token lives for `SandboxConfig::token_ttl` and at most [`MAX_TOKENS`] are kept: a flood leaves
//! memory flat, and a token presented after its lifetime is refused as the service refuses it.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

/// The most unused tokens a sandbox keeps; past it the oldest is forgotten. A client asks for a
/// token just before each Authorize, so even thousands of logins at once need far fewer.
pub(crate) const MAX_TOKENS: usize = 10_000;

/// Tokens issued and not used yet, each with the moment it expires.
pub(crate) struct Tokens {
    lifetime: Duration,
    cap: usize,
    /// Token (a UUID, as a number: 16 bytes instead of a 36-character string) to its expiry.
    live: HashMap<u128, Instant>,
    /// Every token in `live`, oldest first, and tokens used since, dropped when they reach the
    /// front or when [`Tokens::compact`] runs; so expiry and the cap cost O(1) amortised.
    order: VecDeque<u128>,
}

impl Tokens {
    pub(crate) fn new(lifetime: Duration) -> Tokens {
        Tokens::with_cap(lifetime, MAX_TOKENS)
    }

    fn with_cap(lifetime: Duration, cap: usize) -> Tokens {
        Tokens { lifetime, cap: cap.max(1), live: HashMap::new(), order: VecDeque::new() }
    }

    /// Keeps `token`, issued at `now`, for its lifetime.
    pub(crate) fn add(&mut self, token: u128, now: Instant) {
        self.drop_expired(now);
        while self.live.len() >= self.cap {
            let Some(oldest) = self.order.pop_front() else { break };
            self.live.remove(&oldest);
        }
        // Tokens used out of order stay in `order` until they reach its front; past twice the cap,
        // the used ones are swept, after at least `cap` additions since the last sweep.
        if self.order.len() >= self.cap.saturating_mul(2) {
            self.compact();
        }
        let expires = now.checked_add(self.lifetime).unwrap_or(now);
        self.live.insert(token, expires);
        self.order.push_back(token);
    }

    /// Uses `token` up: its expiry if it was issued, not used yet and not expired at `now`. The
    /// session it opens keeps that expiry for its challenge answers (docs/sandbox.md#keys).
    pub(crate) fn take(&mut self, token: u128, now: Instant) -> Option<Instant> {
        self.live.remove(&token).filter(|expires| now < *expires)
    }

    /// When `token` expires, if it is kept (issued, not used, not yet forgotten), without using
    /// it up: what tells a widget page an expired token from one never issued.
    pub(crate) fn expiry(&self, token: u128) -> Option<Instant> {
        self.live.get(&token).copied()
    }

    /// How many tokens are kept.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.live.len()
    }

    /// Forgets, from the oldest, the tokens expired by `now` and those already used.
    fn drop_expired(&mut self, now: Instant) {
        while let Some(&oldest) = self.order.front() {
            match self.live.get(&oldest) {
                Some(expires) if now < *expires => return,
                Some(_) => {
                    self.live.remove(&oldest);
                }
                None => {}
            }
            self.order.pop_front();
        }
    }

    fn compact(&mut self) {
        let live = &self.live;
        self.order.retain(|token| live.contains_key(token));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINUTE: Duration = Duration::from_secs(60);

    #[test]
    fn a_token_is_good_once_within_its_lifetime() {
        let start = Instant::now();
        let mut tokens = Tokens::new(5 * MINUTE);
        tokens.add(1, start);
        tokens.add(2, start);
        assert_eq!(tokens.take(1, start + 4 * MINUTE), Some(start + 5 * MINUTE));
        assert!(tokens.take(1, start + 4 * MINUTE).is_none(), "single use");
        assert!(tokens.take(3, start).is_none(), "never issued");
        assert!(tokens.take(2, start + 5 * MINUTE).is_none(), "expired");
        assert_eq!(tokens.len(), 0);
    }

    #[test]
    fn expired_tokens_are_dropped_as_new_ones_come() {
        let start = Instant::now();
        let mut tokens = Tokens::new(MINUTE);
        for token in 0..1000 {
            tokens.add(token, start);
        }
        assert_eq!(tokens.len(), 1000);
        tokens.add(1000, start + MINUTE);
        assert_eq!(tokens.len(), 1, "only the new token is left");
        assert_eq!(tokens.order.len(), 1);
        assert!(tokens.take(1000, start + MINUTE).is_some());
    }

    #[test]
    fn past_the_cap_the_oldest_token_is_forgotten() {
        let start = Instant::now();
        let mut tokens = Tokens::new(MINUTE);
        for token in 0..(MAX_TOKENS as u128 + 5) {
            tokens.add(token, start);
        }
        assert_eq!(tokens.len(), MAX_TOKENS);
        for forgotten in 0..5 {
            assert!(tokens.take(forgotten, start).is_none());
        }
        assert!(tokens.take(5, start).is_some());
        assert!(tokens.take(MAX_TOKENS as u128 + 4, start).is_some());
    }

    #[test]
    fn tokens_used_out_of_order_do_not_grow_the_store() {
        let start = Instant::now();
        let mut tokens = Tokens::with_cap(MINUTE, 100);
        // One token kept unused at the front, then a flood of tokens each used at once: the
        // front never expires within the flood, so only the sweep keeps `order` short.
        tokens.add(0, start);
        for token in 1..100_000 {
            tokens.add(token, start);
            assert!(tokens.take(token, start).is_some());
            assert!(tokens.order.len() <= 200, "{} after {token}", tokens.order.len());
        }
        assert_eq!(tokens.len(), 1);
        assert!(tokens.take(0, start).is_some(), "the unused token was kept");
    }

    #[test]
    fn a_flood_of_unused_tokens_keeps_at_most_the_cap() {
        let start = Instant::now();
        let mut tokens = Tokens::with_cap(MINUTE, 100);
        for token in 0..100_000u128 {
            // A token a millisecond: the cap acts long before the first expires.
            let now = start + Duration::from_millis(u64::try_from(token).unwrap());
            tokens.add(token, now);
            assert!(tokens.len() <= 100 && tokens.order.len() <= 200);
        }
        assert!(tokens.take(99_999, start + Duration::from_secs(100)).is_some());
    }
}

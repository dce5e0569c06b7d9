//! Seeds and random streams, written by hand: splitmix64 is tiny, fast in debug builds, and its
//! output is fixed forever, which a crate's generator would not promise across versions.

/// FNV-1a over the parts, with a separator so ("ab", "c") and ("a", "bc") differ.
pub(crate) fn hash(parts: &[&[u8]]) -> u64 {
    let mut state: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for byte in part.iter().chain(std::iter::once(&0xff)) {
            state ^= u64::from(*byte);
            state = state.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    state
}

/// A splitmix64 stream.
#[derive(Debug, Clone)]
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// An independent stream for one concern (`label`), so adding draws to one part of the
    /// generator does not reshuffle the others.
    pub(crate) fn fork(&self, label: &str) -> Rng {
        Rng::new(hash(&[&self.0.to_le_bytes(), label.as_bytes()]))
    }

    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `low..=high`.
    pub(crate) fn range(&mut self, low: i64, high: i64) -> i64 {
        debug_assert!(low <= high);
        let span = (high - low) as u64 + 1;
        low + (self.next() % span) as i64
    }

    /// Uniform in `0..len`.
    pub(crate) fn index(&mut self, len: usize) -> usize {
        (self.next() % len as u64) as usize
    }

    /// True with probability `percent` / 100.
    pub(crate) fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    #[expect(clippy::indexing_slicing, reason = "index() draws below items.len(); callers pass non-empty tables")]
    pub(crate) fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.index(items.len())]
    }

    pub(crate) fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.index(i + 1);
            items.swap(i, j);
        }
    }

    /// `count` decimal digits.
    pub(crate) fn digits(&mut self, count: usize) -> String {
        (0..count).map(|_| char::from(b'0' + self.index(10) as u8)).collect()
    }
}

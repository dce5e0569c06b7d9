//! The sandbox as a replay server (docs/cassettes.md#replay-for-any-client): a cassette served
//! over loopback, so that a client in any language replays it by changing its base URL. The
//! matching, the order of play and the errors are the client crate's player
//! (crates/bankfeed/src/cassette/), the one an in-process replay uses: both behave the same.
//!
//! - `served`: the cassette a sandbox serves;
//! - `answer`: one HTTP request answered from it.

pub(crate) mod answer;
mod served;

pub use served::ServedCassette;

//! The sandbox as a replay server (docs/cassettes.md#replay-for-any-client): a cassette served
//! over loopback, so that a client in any language replays it by changing its base URL. The
//! matching, the order of play and the errors are the client crate's player
//! (crates/bankfeed/src/cassette/), the one an in-process replay uses: both behave the same.
//!
//! With an upstream, it records instead: each request is forwarded, and the traffic recorded
//! through the client crate's redactor (docs/cassettes.md#recording-any-client).
//!
//! - `served`: the cassette a sandbox serves;
//! - `answer`: one HTTP request answered from it;
//! - `forward`: a request sent on to the server recorded.

pub(crate) mod answer;
mod forward;
mod served;

pub use served::ServedCassette;

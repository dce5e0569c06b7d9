//! bankfeed: a client for the v3 bank-data aggregation API.
//!
//! It knows nothing of Python (the binding at the top of the repository converts its types and
//! nothing more) and serves nothing but the widget's redirect catcher (feature `connect`); the
//! sandbox server is the bankfeed-sandbox crate, which shares this crate's protocol table.

pub mod authorize;
pub mod bulk;
pub mod call;
pub mod cassette;
pub mod client;
pub mod config;
pub mod connect;
pub mod data;
pub mod error;
mod error_masking;
pub mod events;
pub mod fork;
// Entry points into the decoders for the fuzz tests (crates/bankfeed/tests/it/fuzz_decoders.rs); not an API.
#[doc(hidden)]
pub mod fuzzing;
mod http;
mod linking;
pub mod masking;
pub mod ops;
mod poll;
mod pools;
pub mod protocol;
pub mod proxy;
pub mod secret;
pub mod shown;
pub mod sync;
pub mod tables;

pub use authorize::{Answers, Challenge, ChallengeHandler, ChallengeType, SecurityChallenge, Session, Step};
pub use call::Call;
pub use client::Client;
pub use config::{ClientConfig, PollPolicy, RetryPolicy};
pub use error::{ApiError, Body, Error};
pub use ops::{DataOperation, Target};
pub use secret::Secret;

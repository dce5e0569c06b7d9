//! bankfeed: a client for the v3 bank-data aggregation API, and a sandbox server that speaks it.
//!
//! The core knows nothing of Python; `python` converts its types and nothing more.

pub mod authorize;
pub mod bulk;
pub mod call;
pub mod client;
pub mod config;
pub mod connect;
pub mod data;
pub mod error;
mod error_masking;
mod events;
mod fork;
// Entry points and a mutator for the fuzz tests (tests/fuzz_*.rs); not an API, not in the wheel.
#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzzing;
mod http;
mod linking;
mod masking;
pub mod ops;
mod poll;
mod pools;
pub mod protocol;
pub mod proxy;
mod secret;
mod shown;
// Only the sandbox and the Python layer (which needs the sandbox) hold locks today.
#[cfg(any(feature = "sandbox", feature = "connect"))]
mod sync;
pub mod tables;

#[cfg(feature = "sandbox")]
pub mod sandbox;

#[cfg(feature = "python")]
mod python;

pub use authorize::{Answers, Challenge, ChallengeHandler, ChallengeType, SecurityChallenge, Session, Step};
pub use call::Call;
pub use client::Client;
pub use config::{ClientConfig, PollPolicy, RetryPolicy};
pub use error::{ApiError, Body, Error};
pub use ops::{DataOp, Target};
pub use secret::Secret;

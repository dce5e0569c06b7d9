//! The client's integration tests, against the embedded sandbox (a dev-dependency: the client
//! crate itself never depends on it): one test binary, a module per subject, so the crates and
//! the shared harness (`common`) are compiled and linked once. The sandbox's own tests are its
//! crate's (`crates/bankfeed-sandbox/tests/it/`).
//!
//! `cargo test -p bankfeed --test it` runs them all; `cargo test -p bankfeed --test it bulk::` one
//! module (test names are paths: `bulk::...`).

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "clippy.toml lets a #[test] fn unwrap, expect, panic and index, not the helpers it calls, \
              which fail that test the same way, with the line that failed"
)]

// First, so that its `within!` and `data!` macros are in scope in every module below.
#[macro_use]
mod common;

mod bulk;
mod cassette;
mod client;
mod client_data;
// The widget's redirect catcher, built with the `connect` feature only.
#[cfg(feature = "connect")]
mod connect;
mod fuzz_decoders;
mod linking;

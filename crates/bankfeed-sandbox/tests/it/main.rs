//! The sandbox's integration tests, over HTTP: one test binary, a module per subject, so the crate
//! and the shared harness (`common`) are compiled and linked once, not once per file. The client's
//! tests against the sandbox are the client crate's (`crates/bankfeed/tests/it/`).
//!
//! `cargo test -p bankfeed-sandbox --test it` runs them all; `cargo test -p bankfeed-sandbox --test it
//! sandbox_faults` one module (test names are paths: `sandbox_faults::...`).

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "clippy.toml lets a #[test] fn unwrap, expect, panic and index, not the helpers it calls, \
              which fail that test the same way, with the line that failed"
)]

mod common;

mod fuzz_sandbox_requests;
mod sandbox;
mod sandbox_clock;
mod sandbox_data;
mod sandbox_faults;
mod sandbox_linking;
mod sandbox_recorded;
mod sandbox_replay;
mod sandbox_request_log;
mod sandbox_scale;
mod sandbox_values;
mod sandbox_widget;

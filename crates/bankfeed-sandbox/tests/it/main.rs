//! The Rust integration tests: one test binary, a module per subject, so the crate and the shared
//! harness (`common`) are compiled and linked once, not once per file.
//!
//! `cargo test --test it` runs them all; `cargo test --test it sandbox_faults` one module (test
//! names are paths: `sandbox_faults::...`).

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "clippy.toml lets a #[test] fn unwrap, expect, panic and index, not the helpers it calls, \
              which fail that test the same way, with the line that failed"
)]

// First, so that its `within!` macro is in scope in every module below.
#[macro_use]
mod common;

mod bulk;
mod cassette;
mod client;
mod client_data;
mod connect;
mod fuzz_decoders;
mod fuzz_sandbox_requests;
mod sandbox;
mod sandbox_clock;
mod sandbox_data;
mod sandbox_faults;
mod sandbox_linking;
mod sandbox_recorded;
mod sandbox_request_log;
mod sandbox_scale;
mod sandbox_values;
mod sandbox_widget;

//! Cassettes: a session recorded once against a server, replayed forever without one
//! (docs/cassettes.md). The sender's transport seam (crates/bankfeed/src/http.rs) asks a
//! [`CassetteSession`] for each request, below retries, classification and polling, so that a
//! replayed session runs the same code paths as a live one.
//!
//! - `format`: the YAML file;
//! - `exchange`: a request and an answer as the send path hands them over;
//! - `body_secrets`: the secrets of a request body, for a sender that was not given them;
//! - `mode`: the record modes;
//! - `matcher`: which recorded interaction answers a request, and how a request differs;
//! - `pseudonym`: the stable fake ids and disguised values;
//! - `redactor`: what becomes a placeholder, a pseudonym or a disguise when written;
//! - `scan`: the fail-closed search of a cassette's text for what must not be in it;
//! - `sidecar`: the large binaries of bodies, in files of their own beside the cassette;
//! - `recording`: one cassette in use, and its writing;
//! - `check`: the check of a committed cassette, without the session's values.

mod body_secrets;
mod check;
mod exchange;
mod format;
mod matcher;
mod mode;
mod pseudonym;
mod recording;
mod redactor;
mod scan;
mod sidecar;

pub use body_secrets::body_secrets;
pub use check::{check_cassette, check_text};
pub use exchange::{Exchange, WireAnswer};
pub use format::{Cassette, Interaction, Origin, RecordedRequest, RecordedResponse, StoredBody, FORMAT_VERSION};
pub use mode::RecordMode;
pub use recording::{CassetteOptions, CassetteSession, Decision, Upstream, TEST_INSTANCE_HOSTS};
pub use redactor::REDACTED;
pub use scan::check_file;
pub use sidecar::{dir_of as sidecar_dir, LARGE_BINARY_BYTES};

/// The pseudonym a cassette gives the id `real` (a LoginId, a RequestId): what a test compares
/// a replayed session's ids with.
pub fn pseudonym(real: &str) -> String {
    pseudonym::guid(real)
}

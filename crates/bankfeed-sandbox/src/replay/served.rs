//! The cassette a sandbox serves instead of its imitation: replayed
//! (docs/cassettes.md#replay-for-any-client), or recorded from the traffic it forwards
//! (docs/cassettes.md#recording-any-client).

use std::path::Path;

use bankfeed::cassette::{CassetteOptions, CassetteSession, RecordMode, Upstream};
use bankfeed::error::Error;

use super::forward::Forward;

/// A cassette a sandbox answers from (a replay: every request is answered from it, in recorded
/// order, and nothing is sent anywhere) or records into (every request is forwarded to the
/// server recorded, and the file written again after each answer). Shared by the sandbox's
/// workers.
#[derive(Debug)]
pub struct ServedCassette {
    session: CassetteSession,
    /// Where the requests go when it records; None when it replays.
    forward: Option<Forward>,
}

impl ServedCassette {
    /// Opens the cassette at `path` to replay it; `customer_id` is the one the sandbox's own
    /// clients use (the matcher ignores the customer's segment of a path, so any other works
    /// too). The error names the file and what is wrong with it.
    pub fn replay(path: &Path, customer_id: &str) -> Result<ServedCassette, Error> {
        // Replay only: no upstream, so nothing to refuse or to record against.
        let upstream = Upstream { base_urls: Vec::new(), customer_id };
        let session = CassetteSession::open_for(path, RecordMode::None, &upstream, &CassetteOptions::default())?;
        Ok(ServedCassette { session, forward: None })
    }

    /// Records into the cassette at `path`, written anew, every request the sandbox receives,
    /// forwarded to `upstream` (a server's root, as a client's `base_url`), through the redactor
    /// an in-process recording uses. `customer_id` is the customer of the paths, pseudonymized
    /// unless `upstream` is the public test instance. A host that is neither loopback nor the
    /// public test instance needs `allow_live_record`, as for a client.
    pub fn record(
        path: &Path,
        upstream: &str,
        customer_id: &str,
        allow_live_record: bool,
    ) -> Result<ServedCassette, Error> {
        let forward = Forward::new(upstream)?;
        let options = CassetteOptions { allow_live_record, ..CassetteOptions::default() };
        let hosts = Upstream { base_urls: vec![upstream], customer_id };
        let session = CassetteSession::open_for(path, RecordMode::Rewrite, &hosts, &options)?;
        Ok(ServedCassette { session, forward: Some(forward) })
    }

    /// The cassette's file.
    pub fn path(&self) -> &Path {
        self.session.path()
    }

    /// Whether it records (rather than replays).
    pub fn records(&self) -> bool {
        self.forward.is_some()
    }

    /// How many of the cassette's interactions were played, and how many it has (a recording
    /// plays none).
    pub fn play_count(&self) -> (usize, usize) {
        self.session.play_count()
    }

    /// Plays the cassette again from its start (the sandbox's reset).
    pub fn rewind(&self) {
        self.session.rewind();
    }

    pub(crate) fn session(&self) -> &CassetteSession {
        &self.session
    }

    pub(crate) fn forward(&self) -> Option<&Forward> {
        self.forward.as_ref()
    }
}

//! The cassette a sandbox serves instead of its imitation (docs/cassettes.md#replay-for-any-client).

use std::path::Path;

use bankfeed::cassette::{CassetteOptions, CassetteSession, RecordMode, Upstream};
use bankfeed::error::Error;

/// A cassette opened for replay by a sandbox: every request is answered from it, in recorded
/// order, and nothing is sent anywhere. Shared by the sandbox's workers.
#[derive(Debug)]
pub struct ServedCassette {
    session: CassetteSession,
}

impl ServedCassette {
    /// Opens the cassette at `path` to replay it; `customer_id` is the one the sandbox's own
    /// clients use (the matcher ignores the customer's segment of a path, so any other works
    /// too). The error names the file and what is wrong with it.
    pub fn replay(path: &Path, customer_id: &str) -> Result<ServedCassette, Error> {
        // Replay only: no upstream, so nothing to refuse or to record against.
        let upstream = Upstream { base_urls: Vec::new(), customer_id };
        let session = CassetteSession::open_for(path, RecordMode::None, &upstream, &CassetteOptions::default())?;
        Ok(ServedCassette { session })
    }

    /// The cassette's file.
    pub fn path(&self) -> &Path {
        self.session.path()
    }

    /// How many of the cassette's interactions were played, and how many it has.
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
}

//! The record modes, named and meant as vcrpy and pytest-recording name them
//! (docs/cassettes.md#modes).

use std::fmt;
use std::str::FromStr;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordMode {
    /// Replay only, never the network: an unmatched request is an error. The default in tests.
    None,
    /// Record when the file does not exist; replay only when it does.
    Once,
    /// Replay what matches; send and record what does not, added to the file.
    NewEpisodes,
    /// Send and record every request, never replay; the new interactions are added to the file.
    All,
    /// Send and record every request, never replay; the file is written anew with them alone.
    Rewrite,
}

impl RecordMode {
    pub const NAMES: [&'static str; 5] = ["none", "once", "new_episodes", "all", "rewrite"];

    pub fn name(self) -> &'static str {
        match self {
            RecordMode::None => "none",
            RecordMode::Once => "once",
            RecordMode::NewEpisodes => "new_episodes",
            RecordMode::All => "all",
            RecordMode::Rewrite => "rewrite",
        }
    }
}

impl fmt::Display for RecordMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for RecordMode {
    type Err = crate::error::Error;

    /// A mode's name; the error names the argument and the names it takes.
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Ok(match name {
            "none" => RecordMode::None,
            "once" => RecordMode::Once,
            "new_episodes" => RecordMode::NewEpisodes,
            "all" => RecordMode::All,
            "rewrite" => RecordMode::Rewrite,
            _ => {
                return Err(crate::error::Error::config(
                    "record_mode",
                    format!("must be one of {}, got {:?}", Self::NAMES.join(", "), crate::shown::snippet(name, 40)),
                ))
            }
        })
    }
}

//! One cassette in use by a client: what it replays, what it records, and writing it. The sender
//! asks it for each request ([`CassetteSession::replay`]); when it has no answer to give, the
//! request goes out and its answer is handed back ([`CassetteSession::record`]).

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::exchange::{Exchange, WireAnswer};
use super::format::{Cassette, Interaction, Origin};
use super::matcher::{find, Found, MatchKey};
use super::mode::RecordMode;
use super::redactor::Redactor;
use super::scan::{first_found, found_in_sidecar};
use super::sidecar;
use crate::config::ClientConfig;
use crate::error::Error;
use crate::proxy::is_loopback;
use crate::sync;

/// The hosts of the service's public test instance, whose data is public test data: its API's,
/// then its investments API's (docs/protocol.md#hosts-paths-and-versions). The binding hands them
/// to the pytest plugin's live tier, so that both name one instance.
pub const TEST_INSTANCE_HOSTS: [&str; 2] = ["toolbox-api.private.fin.ag", "toolbox-wealth-api.private.fin.ag"];

/// How a cassette is used beside its path and mode.
#[derive(Clone, Debug, Default)]
pub struct CassetteOptions {
    /// Records against a host that is neither loopback nor the public test instance: a live
    /// Authorize can count against a bank's lockout, so it must be asked for.
    pub allow_live_record: bool,
    /// Where the recording is from; by default the public test instance's hosts are
    /// `test-instance` and every other host `live` (personal data disguised).
    pub origin: Option<Origin>,
    /// Test support only: fields the redactor leaves as they are, to prove the fail-closed scan
    /// refuses to write such a file.
    #[doc(hidden)]
    pub unredacted: Vec<String>,
}

/// What a cassette is recorded against: the hosts its requests go to, and the customer whose id
/// the paths carry. A client's configuration gives them ([`CassetteSession::open`]); a server
/// that records or replays for other clients gives its own ([`CassetteSession::open_for`]).
#[derive(Clone, Debug)]
pub struct Upstream<'a> {
    /// The base URLs requests are sent to (the banking and the investments hosts).
    pub base_urls: Vec<&'a str>,
    pub customer_id: &'a str,
}

/// A cassette in use: opened once, shared by the clients built on it, written by [`Self::save`].
#[derive(Debug)]
pub struct CassetteSession {
    path: PathBuf,
    mode: RecordMode,
    /// Whether the file existed when it was opened (`once` replays only then).
    existed: bool,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    /// The interactions read from the file, and their keys, in order.
    cassette: Cassette,
    keys: Vec<MatchKey>,
    played: Vec<bool>,
    /// The interactions recorded by this session, in the order they were sent.
    recorded: Vec<Interaction>,
    redactor: Redactor,
}

/// What the send path does with one request.
#[derive(Debug)]
pub enum Decision {
    /// Answer with this, sending nothing.
    Replay(WireAnswer),
    /// Send it, then hand the answer to [`CassetteSession::record`].
    Record,
}

impl CassetteSession {
    /// Opens the cassette at `path` for a client of `config`. In `none` mode (and `once` with
    /// the file there) the file must exist and parse; a mode that may record refuses a host
    /// that is neither loopback nor the test instance unless `allow_live_record` is set.
    pub fn open(
        path: &Path,
        mode: RecordMode,
        config: &ClientConfig,
        options: &CassetteOptions,
    ) -> Result<Self, Error> {
        let upstream = Upstream {
            base_urls: vec![&config.base_url, &config.investments_base_url],
            customer_id: &config.customer_id,
        };
        Self::open_for(path, mode, &upstream, options)
    }

    /// As [`Self::open`], for requests to `upstream`.
    pub fn open_for(
        path: &Path,
        mode: RecordMode,
        upstream: &Upstream<'_>,
        options: &CassetteOptions,
    ) -> Result<Self, Error> {
        let shown = path.display().to_string();
        let existed = path.exists();
        let replay_only = mode == RecordMode::None || (mode == RecordMode::Once && existed);
        if !replay_only && !options.allow_live_record {
            for url in &upstream.base_urls {
                if !recordable(url) {
                    return Err(Error::config(
                        "allow_live_record",
                        format!(
                            "must be set to record the cassette {shown} against {}: it is neither loopback nor \
                             the public test instance, and a live Authorize can count against a bank's lockout",
                            crate::shown::snippet(url, 120)
                        ),
                    ));
                }
            }
        }
        let origin = options.origin.unwrap_or_else(|| match upstream.base_urls.first() {
            Some(url) => origin_of(url),
            None => Origin::Live,
        });
        let cassette = if existed && mode != RecordMode::Rewrite {
            Cassette::load(path).map_err(|message| Error::Cassette { path: shown.clone(), message })?
        } else if mode == RecordMode::None {
            return Err(Error::Cassette {
                path: shown,
                message: "does not exist, and record_mode none only replays: record it with record_mode once"
                    .to_owned(),
            });
        } else {
            Cassette::new(origin)
        };
        let keys = cassette.interactions.iter().map(|interaction| MatchKey::of(&interaction.request)).collect();
        let played = vec![false; cassette.interactions.len()];
        let redactor = Redactor::new(cassette.origin, upstream.customer_id).skipping(&options.unredacted);
        Ok(CassetteSession {
            path: path.to_owned(),
            mode,
            existed,
            state: Mutex::new(State { cassette, keys, played, recorded: Vec::new(), redactor }),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn mode(&self) -> RecordMode {
        self.mode
    }

    /// Whether every request is answered from the file: no request goes out, and no wait (a
    /// poll interval, a `Retry-After`) is slept.
    pub fn replays_only(&self) -> bool {
        self.mode == RecordMode::None || (self.mode == RecordMode::Once && self.existed)
    }

    /// How many of the file's interactions were played, and how many it has.
    pub fn play_count(&self) -> (usize, usize) {
        let state = sync::lock(&self.state);
        (state.played.iter().filter(|played| **played).count(), state.played.len())
    }

    /// Plays the file again from its start: every interaction unplayed (a replay server's reset).
    pub fn rewind(&self) {
        let mut state = sync::lock(&self.state);
        state.played.iter_mut().for_each(|played| *played = false);
    }

    /// What to do with `request`: answer it from the file, or send and record it. An error when
    /// the mode only replays and nothing in the file answers it.
    pub fn replay(&self, request: &Exchange<'_>) -> Result<Decision, Error> {
        if matches!(self.mode, RecordMode::All | RecordMode::Rewrite)
            || (self.mode == RecordMode::Once && !self.existed)
        {
            return Ok(Decision::Record);
        }
        let mut state = sync::lock(&self.state);
        let State { keys, played, redactor, cassette, .. } = &mut *state;
        let sent = MatchKey::of(&redactor.request(request));
        let found = find(&sent, keys, played);
        match found {
            Found::Answer(at) => {
                if let Some(slot) = played.get_mut(at) {
                    *slot = true;
                }
                let interaction = cassette.interactions.get(at).ok_or_else(|| self.error("no such interaction"))?;
                let response = &interaction.response;
                let body = match &response.body {
                    Some(body) => body.bytes().map_err(|message| self.error(&message))?,
                    None => Vec::new(),
                };
                Ok(Decision::Replay(WireAnswer {
                    status: response.status,
                    content_type: response.headers.get("content-type").cloned(),
                    location: response.headers.get("location").cloned(),
                    retry_after: response.headers.get("retry-after").cloned(),
                    body,
                }))
            }
            _ if self.mode == RecordMode::NewEpisodes => Ok(Decision::Record),
            Found::RunOut { played } => Err(Error::CassetteRunOut {
                path: self.path.display().to_string(),
                request: format!("{} ({})", sent.shown(), request.operation),
                played,
            }),
            Found::Unmatched { closest } => Err(Error::CassetteUnmatched {
                path: self.path.display().to_string(),
                request: format!("{} ({})", sent.shown(), request.operation),
                closest: closest.and_then(|(at, differences)| {
                    let shown = keys.get(at)?.shown();
                    Some((format!("interaction {at}: {shown}"), differences))
                }),
            }),
        }
    }

    /// Records `request` and the `answer` it got, redacted.
    pub fn record(&self, request: &Exchange<'_>, answer: &WireAnswer) {
        let mut state = sync::lock(&self.state);
        let request = state.redactor.request(request);
        let response = state.redactor.response(answer);
        let recorded_at = chrono::DateTime::<chrono::Utc>::from(std::time::SystemTime::now())
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        state.recorded.push(Interaction { request, response, recorded_at });
    }

    /// Writes the cassette when this session recorded something (or `rewrite` was asked): the
    /// interactions read from it first (but with `rewrite`), then those recorded. Nothing is
    /// written when a redacted value or a secret is found in the text (the error names its
    /// field). Returns whether the file was written.
    pub fn save(&self) -> Result<bool, Error> {
        let state = sync::lock(&self.state);
        if self.replays_only() || (state.recorded.is_empty() && self.mode != RecordMode::Rewrite) {
            return Ok(false);
        }
        let mut cassette = state.cassette.clone();
        if self.mode == RecordMode::Rewrite {
            cassette.interactions.clear();
        }
        cassette.interactions.extend(state.recorded.iter().cloned());
        let mut redactions = cassette.redactions.clone();
        redactions.extend(state.redactor.redactions());
        redactions.sort();
        redactions.dedup();
        cassette.redactions = redactions;
        let sidecars = sidecar::extract(&mut cassette);
        let text = cassette.to_yaml().map_err(|message| self.error(&format!("could not be written: {message}")))?;
        if let Some(field) = first_found(&text, state.redactor.targets()) {
            return Err(Error::CassetteSecret { path: self.path.display().to_string(), field: field.to_owned() });
        }
        let dir = sidecar::dir_of(&self.path);
        for file in &sidecars {
            if let Some(field) = found_in_sidecar(file, cassette.origin, state.redactor.targets()) {
                return Err(Error::CassetteSecret {
                    path: self.path.display().to_string(),
                    field: format!("{field} (in the sidecar file {})", dir.join(&file.name).display()),
                });
            }
        }
        let failed = |error: std::io::Error| self.error(&format!("could not be written: {error}"));
        // The sidecar files first: a cassette is never written that refers to a file not there.
        sidecar::write(&dir, &sidecars).map_err(failed)?;
        self.write(&text)?;
        let kept = sidecars.into_iter().map(|file| file.name).collect();
        sidecar::prune(&dir, &kept).map_err(failed)?;
        Ok(true)
    }

    /// Writes `text` through a temporary file beside the cassette, so that a failure leaves the
    /// old file whole.
    fn write(&self, text: &str) -> Result<(), Error> {
        let failed = |error: std::io::Error| self.error(&format!("could not be written: {error}"));
        if let Some(parent) = self.path.parent().filter(|parent| !parent.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(failed)?;
        }
        let mut temporary = self.path.clone().into_os_string();
        temporary.push(".partial");
        let temporary = PathBuf::from(temporary);
        std::fs::write(&temporary, text).map_err(failed)?;
        std::fs::rename(&temporary, &self.path).map_err(failed)
    }

    fn error(&self, message: &str) -> Error {
        Error::Cassette { path: self.path.display().to_string(), message: message.to_owned() }
    }
}

/// Whether recording against `url` needs no `allow_live_record`: loopback, or the test instance.
fn recordable(url: &str) -> bool {
    reqwest::Url::parse(url).is_ok_and(|parsed| {
        is_loopback(&parsed) || parsed.host_str().is_some_and(|host| TEST_INSTANCE_HOSTS.contains(&host))
    })
}

/// The origin of a recording against `base_url`.
fn origin_of(base_url: &str) -> Origin {
    let test_instance = reqwest::Url::parse(base_url)
        .is_ok_and(|parsed| parsed.host_str().is_some_and(|host| TEST_INSTANCE_HOSTS.contains(&host)));
    if test_instance {
        Origin::TestInstance
    } else {
        Origin::Live
    }
}

#[cfg(test)]
mod tests {
    use base64::Engine as _;

    use super::*;
    use crate::secret::Secret;

    /// Records one request sending `key`, answered by a JSON body holding `report` base64, into a
    /// new cassette of `origin`; what its saving gives.
    fn save_answer(name: &str, origin: Origin, key: &str, report: &[u8]) -> (PathBuf, Result<bool, Error>) {
        let dir = std::env::temp_dir().join(format!("bankfeed-recording-{}", std::process::id()));
        let path = dir.join(format!("{name}.yaml"));
        let _ = std::fs::remove_file(&path);
        let upstream = Upstream { base_urls: vec!["http://127.0.0.1:1"], customer_id: "cid" };
        let options = CassetteOptions { origin: Some(origin), ..CassetteOptions::default() };
        let session = CassetteSession::open_for(&path, RecordMode::Once, &upstream, &options).unwrap();
        let key = Secret::new(key);
        let request = Exchange {
            operation: "GetReport",
            method: "GET",
            url: "http://127.0.0.1:1/v3/cid/BankingServices/GetReport",
            headers: vec![("flinks-auth-key", &key)],
            content_type: None,
            body: None,
            body_secrets: &[],
        };
        let encoded = base64::engine::general_purpose::STANDARD.encode(report);
        let answer = WireAnswer {
            status: 200,
            content_type: Some("application/json".into()),
            location: None,
            retry_after: None,
            body: serde_json::to_vec(&serde_json::json!({ "Report": encoded })).unwrap(),
        };
        session.record(&request, &answer);
        let saved = session.save();
        (path, saved)
    }

    #[test]
    fn a_secret_wrapped_in_a_large_binary_of_a_live_recording_is_found_in_its_sidecar_file() {
        let key = "k-3f9a77c2d1e0";
        let report = format!("{}\"echo\": \"{key}\"{}", " ".repeat(3000), " ".repeat(3000)).into_bytes();
        let (path, saved) = save_answer("wrapped", Origin::Live, key, &report);
        match saved {
            Err(Error::CassetteSecret { field, .. }) => {
                assert!(field.starts_with("flinks-auth-key (in the sidecar file "), "{field}");
                assert!(!field.contains(key), "{field}");
            }
            other => panic!("{other:?}"),
        }
        assert!(!path.exists() && !sidecar::dir_of(&path).exists(), "nothing written");
        // A recording of the test instance keeps its binaries as they came (public test data).
        let (path, saved) = save_answer("public", Origin::TestInstance, key, &report);
        assert!(saved.unwrap());
        assert_eq!(std::fs::read_dir(sidecar::dir_of(&path)).unwrap().count(), 1);
        std::fs::remove_dir_all(sidecar::dir_of(&path)).unwrap();
        std::fs::remove_file(&path).unwrap();
    }
}

//! The file: YAML in the VCR family (docs/cassettes.md#the-format). JSON bodies are kept as
//! structured YAML in the order their keys came in (serde_json's `preserve_order`), so a
//! cassette reads well in a pull request; other bodies as text, or base64 when they are not text.

use std::collections::BTreeMap;
use std::path::Path;

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The version of the format this crate writes and reads.
pub const FORMAT_VERSION: u32 = 1;

/// A whole cassette.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cassette {
    pub version: u32,
    /// `bankfeed/{version}`: what wrote the file.
    pub recorded_with: String,
    pub origin: Origin,
    /// The names of the fields whose values were replaced, never the values.
    #[serde(default)]
    pub redactions: Vec<String>,
    #[serde(default)]
    pub interactions: Vec<Interaction>,
}

/// Where a recording was made, which decides whether the personal data of its answers is kept
/// (docs/cassettes.md#redaction).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Origin {
    /// The service's public test instance, whose data is public test data: kept as it came.
    TestInstance,
    /// Anything else, loopback included (a sandbox, or a proxy to the real service): personal
    /// data is pseudonymized.
    Live,
}

/// One request and the answer it got.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Interaction {
    pub request: RecordedRequest,
    pub response: RecordedResponse,
    /// RFC 3339, UTC.
    pub recorded_at: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedRequest {
    pub method: String,
    /// The whole URL, after redaction (the customer id and the ids in the path are pseudonyms).
    pub uri: String,
    /// Lower-case names. Only `content-type` is matched; the key headers are kept as placeholders.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<StoredBody>,
}

impl RecordedRequest {
    /// Whether this is a `GenerateAuthorizeToken` call: its method, and its path after the
    /// customer id (a pseudonym in the file).
    fn is_token_call(&self) -> bool {
        let token = &crate::protocol::GENERATE_AUTHORIZE_TOKEN;
        let Some((_, tail)) = token.path.split_once("{customer_id}") else { return false };
        self.method.eq_ignore_ascii_case(token.method.as_str())
            && reqwest::Url::parse(&self.uri).is_ok_and(|url| url.path().ends_with(tail))
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedResponse {
    pub status: u16,
    /// Lower-case names: `content-type`, `location`, `retry-after` (kept as information: a
    /// replay never waits for it).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<StoredBody>,
}

/// A body, in exactly one of its forms, written as a mapping of one key (`json:`, `text:`,
/// `base64:` or `sidecar:`) rather than a YAML tag, so that any YAML reader's safe mode reads it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum StoredBody {
    Json {
        json: Value,
    },
    Text {
        text: String,
    },
    Base64 {
        base64: String,
    },
    /// Only in the file: a body of binary bytes large enough to be kept in a sidecar file, by its
    /// name (docs/cassettes.md#sidecar-files). Read back as [`StoredBody::Base64`].
    Sidecar {
        sidecar: String,
    },
}

impl StoredBody {
    /// The form a body is kept in: JSON when it parses, text when it is UTF-8, base64 otherwise.
    pub(crate) fn of(bytes: &[u8]) -> Option<Self> {
        if bytes.is_empty() {
            return None;
        }
        if let Ok(value) = serde_json::from_slice::<Value>(bytes) {
            return Some(StoredBody::Json { json: value });
        }
        Some(match std::str::from_utf8(bytes) {
            Ok(text) => StoredBody::Text { text: text.to_owned() },
            Err(_) => StoredBody::Base64 { base64: base64::engine::general_purpose::STANDARD.encode(bytes) },
        })
    }

    /// The bytes a replay answers with. A JSON body is written compact, as the service sends it;
    /// its numbers are JSON numbers (`12.10` comes back as `12.1`: docs/cassettes.md#the-format).
    pub(crate) fn bytes(&self) -> Result<Vec<u8>, String> {
        match self {
            StoredBody::Json { json } => serde_json::to_vec(json).map_err(|e| e.to_string()),
            StoredBody::Text { text } => Ok(text.clone().into_bytes()),
            StoredBody::Base64 { base64: text } => base64::engine::general_purpose::STANDARD
                .decode(text.trim())
                .map_err(|e| format!("a base64 body does not decode: {e}")),
            StoredBody::Sidecar { sidecar } => Err(format!("the body's sidecar file {sidecar} was not read")),
        }
    }
}

impl Cassette {
    /// An empty cassette of `origin`, written by this version of bankfeed.
    pub(crate) fn new(origin: Origin) -> Self {
        Cassette {
            version: FORMAT_VERSION,
            recorded_with: concat!("bankfeed/", env!("CARGO_PKG_VERSION")).to_owned(),
            origin,
            redactions: Vec::new(),
            interactions: Vec::new(),
        }
    }

    /// Parses a cassette; the message says what is wrong, with its line.
    pub fn parse(text: &str) -> Result<Self, String> {
        let cassette: Cassette = serde_norway::from_str(text).map_err(|e| e.to_string())?;
        if cassette.version != FORMAT_VERSION {
            return Err(format!(
                "version is {}, and this bankfeed reads version {FORMAT_VERSION}: record it again",
                cassette.version
            ));
        }
        for (at, interaction) in cassette.interactions.iter().enumerate() {
            for body in [&interaction.request.body, &interaction.response.body].into_iter().flatten() {
                // A sidecar file is read, and checked, by `load`.
                if !matches!(body, StoredBody::Sidecar { .. }) {
                    body.bytes().map_err(|e| format!("interaction {at}: {e}"))?;
                }
            }
        }
        Ok(cassette)
    }

    /// Reads the cassette at `path` with its sidecar files (docs/cassettes.md#sidecar-files): its
    /// bodies as they came on the wire. The message says what is wrong: the file could not be
    /// read, is not a cassette, or a sidecar file is missing or changed (named, with its
    /// interaction).
    pub fn load(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path).map_err(|error| format!("could not be read: {error}"))?;
        let mut cassette = Cassette::parse(&text).map_err(|message| format!("is not a cassette: {message}"))?;
        super::sidecar::restore(&mut cassette, &super::sidecar::dir_of(path))
            .map_err(|message| format!("cannot be replayed: {message}"))?;
        Ok(cassette)
    }

    /// Whether the recorded client asked for a single-use token (`GenerateAuthorizeToken`) before
    /// its Authorize: it had a secret key, and a client that replays the file must have one too,
    /// or not, to send what was recorded (docs/cassettes.md#one-suite-three-tiers).
    pub fn has_token_call(&self) -> bool {
        self.interactions.iter().any(|interaction| interaction.request.is_token_call())
    }

    /// When its oldest interaction was recorded: the earliest `recorded_at` that reads as a time
    /// (RFC 3339, or without a zone, taken as UTC); None when none does. Asked of the parsed
    /// file, so a body's text that looks like the field is never taken for it.
    pub fn oldest_recording(&self) -> Option<chrono::DateTime<chrono::Utc>> {
        self.interactions.iter().filter_map(|interaction| recorded_time(&interaction.recorded_at)).min()
    }

    /// The YAML text of the cassette, as the file holds it: the caller has moved its large
    /// binaries to sidecar files first, if it writes them.
    pub fn to_yaml(&self) -> Result<String, String> {
        serde_norway::to_string(self).map_err(|e| e.to_string())
    }
}

/// `text` as a time: RFC 3339 as the recorder writes it, or a time without a zone (a file edited
/// by hand), taken as UTC.
fn recorded_time(text: &str) -> Option<chrono::DateTime<chrono::Utc>> {
    let text = text.trim();
    chrono::DateTime::parse_from_rfc3339(text)
        .map(|time| time.to_utc())
        .ok()
        .or_else(|| chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f").ok().map(|time| time.and_utc()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_json_body_is_structured_yaml_in_the_wires_key_order() {
        let mut cassette = Cassette::new(Origin::Live);
        let body = br#"{"Zeta":1,"Alpha":{"b":[1,"two"],"a":null},"Mid":"x"}"#;
        cassette.interactions.push(Interaction {
            request: RecordedRequest {
                method: "GET".into(),
                uri: "http://h/p".into(),
                headers: BTreeMap::new(),
                body: None,
            },
            response: RecordedResponse { status: 200, headers: BTreeMap::new(), body: StoredBody::of(body) },
            recorded_at: "2026-01-01T00:00:00Z".into(),
        });
        let text = cassette.to_yaml().unwrap();
        let zeta = text.find("Zeta").unwrap();
        assert!(zeta < text.find("Alpha").unwrap() && text.find("Alpha").unwrap() < text.find("Mid").unwrap());
        assert!(text.contains("body:\n      json:\n") && !text.contains('!') && !text.contains("\\\""), "{text}");
        let back = Cassette::parse(&text).unwrap();
        assert_eq!(back, cassette);
        let replayed = back.interactions[0].response.body.as_ref().unwrap().bytes().unwrap();
        assert_eq!(replayed, body.to_vec(), "the same bytes, the same order");
    }

    fn posted(uri: &str, body: &[u8]) -> Interaction {
        Interaction {
            request: RecordedRequest {
                method: "POST".into(),
                uri: uri.into(),
                headers: BTreeMap::new(),
                body: StoredBody::of(body),
            },
            response: RecordedResponse { status: 200, headers: BTreeMap::new(), body: None },
            recorded_at: "2026-01-01T00:00:00Z".into(),
        }
    }

    #[test]
    fn a_token_call_is_a_post_to_its_path_whatever_else_names_it() {
        let mut cassette = Cassette::new(Origin::Live);
        // The word in a body, in another operation's path or in a query is no token call.
        cassette
            .interactions
            .push(posted("http://h/v3/cid/BankingServices/Authorize", br#"{"Note":"GenerateAuthorizeToken"}"#));
        cassette.interactions.push(posted("http://h/v3/cid/BankingServices/Authorize?x=GenerateAuthorizeToken", b""));
        cassette.interactions.push(posted("http://h/v3/cid/BankingServices/GenerateAuthorizeTokens", b""));
        assert!(!cassette.has_token_call());
        let mut got = posted("http://h/v3/cid/BankingServices/GenerateAuthorizeToken", b"");
        got.request.method = "GET".into();
        cassette.interactions.push(got);
        assert!(!cassette.has_token_call(), "a GET is not the call");
        cassette.interactions.push(posted("http://h/v3/ca55e77e-0000/BankingServices/GenerateAuthorizeToken", b""));
        assert!(cassette.has_token_call());
        assert!(Cassette::parse(&cassette.to_yaml().unwrap()).unwrap().has_token_call(), "read back from its file");
    }

    #[test]
    fn the_oldest_recording_is_read_from_the_interactions_never_from_a_body() {
        let mut cassette = Cassette::new(Origin::Live);
        assert_eq!(cassette.oldest_recording(), None);
        let mut newer = posted("http://h/v3/cid/BankingServices/Authorize", b"");
        newer.recorded_at = "2026-11-02T10:00:00Z".into();
        // A text body whose line looks like the field, as the YAML shows it on a line of its own.
        newer.response.body = StoredBody::of(b"busy\nrecorded_at: 2001-01-01T00:00:00Z\n");
        let mut older = posted("http://h/v3/cid/BankingServices/Authorize", b"");
        older.recorded_at = "2026-11-01T09:30:00".into(); // no zone: UTC
        let mut unreadable = posted("http://h/v3/cid/BankingServices/Authorize", b"");
        unreadable.recorded_at = "yesterday".into();
        cassette.interactions.extend([newer, older, unreadable]);
        let text = cassette.to_yaml().unwrap();
        assert!(text.lines().any(|line| line.trim_start() == "recorded_at: 2001-01-01T00:00:00Z"), "{text}");
        let oldest = Cassette::parse(&text).unwrap().oldest_recording().unwrap();
        assert_eq!(oldest.to_rfc3339(), "2026-11-01T09:30:00+00:00");
    }

    #[test]
    fn other_bodies_are_text_or_base64() {
        assert_eq!(StoredBody::of(b"<html>busy</html>"), Some(StoredBody::Text { text: "<html>busy</html>".into() }));
        let pdf = [0x25, 0x50, 0xff, 0x00];
        let stored = StoredBody::of(&pdf).unwrap();
        assert!(matches!(stored, StoredBody::Base64 { .. }));
        assert_eq!(stored.bytes().unwrap(), pdf.to_vec());
        assert_eq!(StoredBody::of(b""), None);
    }

    #[test]
    fn a_cassette_of_another_version_or_shape_is_refused_with_the_reason() {
        let other = "version: 2\nrecorded_with: x\norigin: live\n";
        assert!(Cassette::parse(other).unwrap_err().contains("version is 2"));
        let unknown = "version: 1\nrecorded_with: x\norigin: elsewhere\n";
        assert!(Cassette::parse(unknown).unwrap_err().contains("origin"), "{}", Cassette::parse(unknown).unwrap_err());
    }
}

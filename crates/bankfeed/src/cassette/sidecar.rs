//! Sidecar files (docs/cassettes.md#sidecar-files): the large binaries of bodies (statement PDFs,
//! any base64 string of a JSON body of 4 KiB or more once decoded, a binary body of that size)
//! kept decoded in files of their own beside the cassette, `{stem}.files/{sha256}.{ext}`, so that
//! the YAML stays small enough to read in a pull request. In the YAML a JSON body's string is
//! replaced by a reference, `{$sidecar: NAME}`, and a binary body by `sidecar: NAME`.
//!
//! So that a reference cannot be mistaken for what came on the wire, every key of a JSON body
//! that begins with `$` is written with one `$` more (`$$x` for `$x`) and read back without it:
//! an object whose only key is `$sidecar` can only be a reference.
//!
//! A cassette's in-memory form holds the bodies as they came; [`extract`] turns them into the
//! file's form when it is written, and [`restore`] back when it is read, checking each file's
//! SHA-256 against its name.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use ring::digest::{digest, SHA256};
use serde_json::{Map, Value};

use super::format::{Cassette, StoredBody};
use super::redactor::STATEMENT_FILE;

/// A base64 string that decodes to this many bytes or more goes to a sidecar file, whatever its
/// field; a statement's file (`Base64Bytes`) goes whatever its size.
pub const LARGE_BINARY_BYTES: usize = 4096;

/// The key of a reference to a sidecar file.
const REFERENCE_KEY: &str = "$sidecar";

/// What begins a key that is written with one more of it, so that no key of a body can be
/// [`REFERENCE_KEY`] in the file.
const ESCAPE: char = '$';

/// The endings a sidecar file's name may have: what its content starts with says which.
const EXTENSIONS: [&str; 3] = ["pdf", "png", "bin"];

/// One binary moved out of the YAML.
#[derive(Clone, Debug)]
pub(crate) struct SidecarFile {
    /// `{sha256}.{ext}`.
    pub(crate) name: String,
    pub(crate) bytes: Vec<u8>,
    /// The base64 text the body held: what the fail-closed scan looked at when it was inline.
    pub(crate) base64: String,
}

/// The directory of the sidecar files of the cassette at `cassette`: `{stem}.files` beside it.
pub fn dir_of(cassette: &Path) -> PathBuf {
    let stem = cassette.file_stem().map(|stem| stem.to_string_lossy().into_owned()).unwrap_or_default();
    cassette.with_file_name(format!("{stem}.files"))
}

/// Turns every JSON body of `cassette` into its file's form: its large binaries replaced by
/// references, its keys escaped. Returns the files to write, each once (the same content is one
/// file, however many times it stands in the cassette).
pub(crate) fn extract(cassette: &mut Cassette) -> Vec<SidecarFile> {
    let mut files: Vec<SidecarFile> = Vec::new();
    for interaction in &mut cassette.interactions {
        for body in [&mut interaction.request.body, &mut interaction.response.body].into_iter().flatten() {
            match body {
                StoredBody::Json { json } => to_file(json, None, &mut files),
                StoredBody::Base64 { base64 } => {
                    if let Some(bytes) = large_binary(base64, false) {
                        let name = name_of(&bytes);
                        let file = SidecarFile { name: name.clone(), bytes, base64: base64.clone() };
                        add(&mut files, file);
                        *body = StoredBody::Sidecar { sidecar: name };
                    }
                }
                _ => {}
            }
        }
    }
    files
}

fn to_file(value: &mut Value, key: Option<&str>, files: &mut Vec<SidecarFile>) {
    match value {
        Value::String(text) => {
            let statement = key.is_some_and(|key| key.eq_ignore_ascii_case(STATEMENT_FILE));
            if let Some(bytes) = large_binary(text, statement) {
                let name = name_of(&bytes);
                add(files, SidecarFile { name: name.clone(), bytes, base64: text.clone() });
                let mut reference = Map::new();
                reference.insert(REFERENCE_KEY.to_owned(), Value::String(name));
                *value = Value::Object(reference);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| to_file(item, key, files)),
        Value::Object(map) => {
            let entries = std::mem::take(map);
            for (name, mut item) in entries {
                to_file(&mut item, Some(&name), files);
                let name = if name.starts_with(ESCAPE) { format!("{ESCAPE}{name}") } else { name };
                map.insert(name, item);
            }
        }
        _ => {}
    }
}

/// Adds `file` to `files` unless a file of the same content is there.
fn add(files: &mut Vec<SidecarFile>, file: SidecarFile) {
    if !files.iter().any(|known| known.name == file.name) {
        files.push(file);
    }
}

/// The bytes of `text` when it goes to a sidecar file: standard base64 with its padding, which
/// encodes back to exactly `text` (so that a replay gives the wire's text, byte for byte), of a
/// statement's file or of [`LARGE_BINARY_BYTES`] or more.
fn large_binary(text: &str, statement: bool) -> Option<Vec<u8>> {
    let large = text.len() / 4 * 3 >= LARGE_BINARY_BYTES;
    if text.is_empty() || !(statement || large) || !text.len().is_multiple_of(4) {
        return None;
    }
    let alphabet = |byte: &u8| byte.is_ascii_alphanumeric() || matches!(byte, b'+' | b'/' | b'=');
    if !text.as_bytes().iter().all(alphabet) {
        return None;
    }
    let engine = base64::engine::general_purpose::STANDARD;
    let bytes = engine.decode(text).ok()?;
    (engine.encode(&bytes) == text && (statement || bytes.len() >= LARGE_BINARY_BYTES)).then_some(bytes)
}

/// `{sha256}.{ext}`: the ending from what the content starts with.
fn name_of(bytes: &[u8]) -> String {
    let ext = if bytes.starts_with(b"%PDF") {
        "pdf"
    } else if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        "png"
    } else {
        "bin"
    };
    format!("{}.{ext}", sha256_hex(bytes))
}

fn sha256_hex(bytes: &[u8]) -> String {
    digest(&SHA256, bytes).as_ref().iter().fold(String::with_capacity(64), |mut hex, byte| {
        hex.push(char::from_digit(u32::from(byte >> 4), 16).unwrap_or('0'));
        hex.push(char::from_digit(u32::from(byte & 0xf), 16).unwrap_or('0'));
        hex
    })
}

/// Turns every body of `cassette`, in its file's form, back into what came on the wire, reading
/// its sidecar files from `dir`. The message names the interaction and the file.
pub(crate) fn restore(cassette: &mut Cassette, dir: &Path) -> Result<(), String> {
    for (at, interaction) in cassette.interactions.iter_mut().enumerate() {
        for body in [&mut interaction.request.body, &mut interaction.response.body].into_iter().flatten() {
            restore_body(body, dir).map_err(|message| format!("interaction {at}: {message}"))?;
        }
    }
    Ok(())
}

/// As [`restore`], for one body.
pub(crate) fn restore_body(body: &mut StoredBody, dir: &Path) -> Result<(), String> {
    match body {
        StoredBody::Json { json } => from_file(json, dir),
        StoredBody::Sidecar { sidecar } => {
            let bytes = read(dir, sidecar)?;
            *body = StoredBody::Base64 { base64: base64::engine::general_purpose::STANDARD.encode(bytes) };
            Ok(())
        }
        _ => Ok(()),
    }
}

fn from_file(value: &mut Value, dir: &Path) -> Result<(), String> {
    match value {
        Value::Array(items) => items.iter_mut().try_for_each(|item| from_file(item, dir)),
        Value::Object(map) => {
            if let Some(name) = reference(map) {
                let bytes = read(dir, name)?;
                *value = Value::String(base64::engine::general_purpose::STANDARD.encode(bytes));
                return Ok(());
            }
            let entries = std::mem::take(map);
            for (name, mut item) in entries {
                from_file(&mut item, dir)?;
                let name = match name.strip_prefix(ESCAPE) {
                    Some(rest) if rest.starts_with(ESCAPE) => rest.to_owned(),
                    _ => name,
                };
                map.insert(name, item);
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// The file name `map` refers to, when it is a reference: its only key is [`REFERENCE_KEY`].
fn reference(map: &Map<String, Value>) -> Option<&str> {
    if map.len() != 1 {
        return None;
    }
    map.get(REFERENCE_KEY)?.as_str()
}

/// The content of the sidecar file `name` in `dir`, once its name is proved one this module
/// writes (no path can lead out of `dir`) and its content has the SHA-256 the name says.
pub(crate) fn read(dir: &Path, name: &str) -> Result<Vec<u8>, String> {
    let Some(hash) = hash_of(name) else {
        return Err(format!(
            "the sidecar reference {:?} is not a sidecar file's name (64 lower-case hex digits of its SHA-256, \
             then .pdf, .png or .bin)",
            crate::shown::snippet(name, 80)
        ));
    };
    let path = dir.join(name);
    let bytes = std::fs::read(&path)
        .map_err(|error| format!("the sidecar file {} could not be read: {error}", path.display()))?;
    if sha256_hex(&bytes) != hash {
        return Err(format!(
            "the sidecar file {} does not have the SHA-256 its name says: it was changed after it was recorded; \
             record the cassette again",
            path.display()
        ));
    }
    Ok(bytes)
}

/// The hash `name` says, when it is the name of a sidecar file: `{sha256}.{ext}`, the hash in
/// lower-case hex.
fn hash_of(name: &str) -> Option<&str> {
    let (hash, ext) = name.split_once('.')?;
    let hex = hash.len() == 64 && hash.bytes().all(|byte| byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte));
    (hex && EXTENSIONS.contains(&ext)).then_some(hash)
}

/// Writes `files` into `dir`; a file already there with the same content is left as it is. Each
/// is written through a temporary file, so that a failure never leaves half a file under a name
/// that says its hash.
pub(crate) fn write(dir: &Path, files: &[SidecarFile]) -> std::io::Result<()> {
    if files.is_empty() {
        return Ok(());
    }
    std::fs::create_dir_all(dir)?;
    for file in files {
        let path = dir.join(&file.name);
        if std::fs::read(&path).is_ok_and(|there| there == file.bytes) {
            continue;
        }
        let temporary = dir.join(format!("{}.partial", file.name));
        std::fs::write(&temporary, &file.bytes)?;
        std::fs::rename(&temporary, &path)?;
    }
    Ok(())
}

/// Removes from `dir` the sidecar files the cassette no longer refers to (those named as this
/// module names them, and only those), and `dir` itself when it is left empty.
pub(crate) fn prune(dir: &Path, kept: &BTreeSet<String>) -> std::io::Result<()> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(error) => return Err(error),
    };
    for entry in entries {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if hash_of(&name).is_some() && !kept.contains(&name) {
            std::fs::remove_file(entry.path())?;
        }
    }
    if std::fs::read_dir(dir)?.next().is_none() {
        std::fs::remove_dir(dir)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::*;
    use crate::cassette::format::{Interaction, Origin, RecordedRequest, RecordedResponse};

    fn cassette_answering(body: &Value) -> Cassette {
        let mut cassette = Cassette::new(Origin::TestInstance);
        cassette.interactions.push(Interaction {
            request: RecordedRequest {
                method: "POST".into(),
                uri: "http://h/v3/c/BankingServices/GetStatements".into(),
                headers: BTreeMap::new(),
                body: None,
            },
            response: RecordedResponse {
                status: 200,
                headers: BTreeMap::new(),
                body: StoredBody::of(&serde_json::to_vec(body).unwrap()),
            },
            recorded_at: "2026-01-01T00:00:00Z".into(),
        });
        cassette
    }

    fn encode(bytes: &[u8]) -> String {
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    fn temporary_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("bankfeed-sidecar-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn a_statement_and_a_large_binary_go_to_files_named_by_their_hash_and_come_back_as_they_came() {
        let pdf = b"%PDF-1.4 a statement".to_vec();
        let png = [b"\x89PNG\r\n\x1a\n".as_slice(), &[7u8; LARGE_BINARY_BYTES]].concat();
        let small = encode(&[1u8; LARGE_BINARY_BYTES - 1]);
        let body = json!({
            "Statements": [{"Base64Bytes": encode(&pdf)}, {"base64bytes": encode(&pdf)}],
            "Image": encode(&png),
            "Small": small,
            "Base64Bytes": "not base64!",
            "$sidecar": "a key of the wire",
            "Nested": {"$sidecar": "0000000000000000000000000000000000000000000000000000000000000000.bin"},
        });
        let mut cassette = cassette_answering(&body);
        let wire = cassette.clone();
        let files = extract(&mut cassette);
        let names: Vec<&str> = files.iter().map(|file| file.name.as_str()).collect();
        assert_eq!(names, [format!("{}.pdf", sha256_hex(&pdf)), format!("{}.png", sha256_hex(&png))]);
        let text = cassette.to_yaml().unwrap();
        assert!(text.len() < small.len() + 1500, "the YAML keeps references: {} bytes", text.len());
        assert!(text.contains(&format!("$sidecar: {}.pdf", sha256_hex(&pdf))), "{text}");
        assert!(text.contains("$$sidecar: a key of the wire"), "a key of the wire is escaped: {text}");

        let dir = temporary_dir("round-trip");
        write(&dir, &files).unwrap();
        let mut back = Cassette::parse(&text).unwrap();
        restore(&mut back, &dir).unwrap();
        assert_eq!(back, wire, "the bodies as they came, the wire's keys included");
        let replayed = back.interactions[0].response.body.as_ref().unwrap().bytes().unwrap();
        assert_eq!(replayed, serde_json::to_vec(&body).unwrap(), "the same bytes");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_large_binary_body_goes_to_a_file_and_a_small_one_stays_base64() {
        let mut cassette = cassette_answering(&json!({}));
        let large = [b"%PDF-1.7".as_slice(), &[0xff; LARGE_BINARY_BYTES]].concat();
        let small = [0xffu8, 0, 1];
        cassette.interactions[0].response.body = StoredBody::of(&large);
        cassette.interactions[0].request.body = StoredBody::of(&small);
        let wire = cassette.clone();
        let files = extract(&mut cassette);
        let name = format!("{}.pdf", sha256_hex(&large));
        assert_eq!(cassette.interactions[0].response.body, Some(StoredBody::Sidecar { sidecar: name.clone() }));
        assert!(matches!(cassette.interactions[0].request.body, Some(StoredBody::Base64 { .. })));
        let text = cassette.to_yaml().unwrap();
        assert!(text.contains(&format!("body:\n      sidecar: {name}\n")), "{text}");
        let dir = temporary_dir("binary-body");
        write(&dir, &files).unwrap();
        let mut back = Cassette::parse(&text).unwrap();
        restore(&mut back, &dir).unwrap();
        assert_eq!(back, wire);
        assert_eq!(back.interactions[0].response.body.as_ref().unwrap().bytes().unwrap(), large);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_changed_missing_or_outside_sidecar_is_refused_naming_it() {
        let pdf = b"%PDF-1.4 a statement".to_vec();
        let mut cassette = cassette_answering(&json!({"Base64Bytes": encode(&pdf)}));
        let files = extract(&mut cassette);
        let text = cassette.to_yaml().unwrap();
        let name = format!("{}.pdf", sha256_hex(&pdf));
        let dir = temporary_dir("tampered");

        let missing = restore(&mut Cassette::parse(&text).unwrap(), &dir).unwrap_err();
        assert!(missing.starts_with("interaction 0: the sidecar file ") && missing.contains(&name), "{missing}");
        write(&dir, &files).unwrap();
        std::fs::write(dir.join(&name), b"%PDF-1.4 another statement").unwrap();
        let changed = restore(&mut Cassette::parse(&text).unwrap(), &dir).unwrap_err();
        assert!(changed.contains(&name) && changed.contains("SHA-256"), "{changed}");
        let outside = text.replace(&name, "../../etc/passwd");
        let refused = restore(&mut Cassette::parse(&outside).unwrap(), &dir).unwrap_err();
        assert!(refused.contains("not a sidecar file's name"), "{refused}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn files_no_longer_referred_to_are_removed_and_others_are_left() {
        let dir = temporary_dir("prune");
        let kept = SidecarFile { name: name_of(b"%PDF kept"), bytes: b"%PDF kept".to_vec(), base64: String::new() };
        let gone = SidecarFile { name: name_of(b"gone"), bytes: b"gone".to_vec(), base64: String::new() };
        write(&dir, &[kept.clone(), gone.clone()]).unwrap();
        std::fs::write(dir.join("notes.txt"), "a file of the user's").unwrap();
        prune(&dir, &BTreeSet::from([kept.name.clone()])).unwrap();
        assert!(dir.join(&kept.name).exists() && !dir.join(&gone.name).exists());
        assert!(dir.join("notes.txt").exists(), "a file this module did not name is not its to remove");
        std::fs::remove_file(dir.join("notes.txt")).unwrap();
        prune(&dir, &BTreeSet::new()).unwrap();
        assert!(!dir.exists(), "an empty directory is removed");
        assert_eq!(dir_of(Path::new("tests/cassettes/x/test_a.yaml")), Path::new("tests/cassettes/x/test_a.files"));
    }
}

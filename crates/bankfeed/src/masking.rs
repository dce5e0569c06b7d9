//! The one place that masks what a call sent in what a server said back
//! (docs/errors.md#secrets-a-server-repeats). A call records each secret it sends (the keys, the
//! tokens it mints, the username and password, the answers) in its [`SentSecrets`]; every error
//! leaves the call through `SentSecrets::error` (crates/bankfeed/src/error_masking.rs), and every log line that shows a value the
//! server chose through [`SentSecrets::text`] or [`SentSecrets::id`]. A server may repeat a secret
//! as it came, or escaped the way JSON, a URL or HTML escapes it, in any letter case: each of those
//! forms is found and replaced by [`MASK`].

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;

use crate::secret::Secret;
use crate::sync;

/// What a masked secret reads as: the mask `Secret` shows, and the connect URL's token.
pub const MASK: &str = "***";

/// Secrets shorter than this (in characters) are not masked: a one- or two-letter answer would
/// mask most of any text, and shows next to nothing of itself.
const SHORTEST_MASKED: usize = 3;

/// How many steps the search of one text may take. Escapes that read several ways (runs of
/// backslashes) can make the search branch; past this, the whole text is masked instead.
const STEPS: u32 = 4_000_000;

/// The cut mark [`crate::shown::snippet`] ends a cut text with: a secret cut there is masked.
const CUT: char = '…';

/// A set of secrets, kept by where they may start.
#[derive(Clone, Default)]
struct Secrets {
    /// Each secret as characters, by the lower case of its first character, longest first in
    /// each list, so that a secret holding another is masked whole. A place of a text is searched
    /// only for the secrets that can start there: a bulk call's calls share thousands of tokens,
    /// and searching each at every place would run out of [`STEPS`] (masking whole texts).
    by_start: HashMap<char, Vec<Arc<[char]>>>,
    /// Each secret in lower case: whether a text is a secret, and whether one is known already,
    /// told at once.
    known: HashSet<Arc<str>>,
}

/// How many, never which.
impl fmt::Debug for Secrets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} values, ***", self.known.len())
    }
}

impl Secrets {
    /// Records `chars`, unless it is too short to mask or already known.
    fn add(&mut self, chars: &Arc<[char]>) {
        let Some(&first) = chars.first() else { return };
        let folded = folded(chars);
        if chars.len() < SHORTEST_MASKED || self.known.contains(folded.as_str()) {
            return;
        }
        let starting = self.by_start.entry(start_key(first)).or_default();
        let at = starting.iter().position(|known| known.len() < chars.len()).unwrap_or(starting.len());
        starting.insert(at, Arc::clone(chars));
        self.known.insert(Arc::from(folded));
    }

    fn all(&self) -> impl Iterator<Item = &Arc<[char]>> {
        self.by_start.values().flatten()
    }

    fn len(&self) -> usize {
        self.known.len()
    }

    /// The secrets that start with a character of lower case `start`, longest first.
    fn starting(&self, start: char) -> &[Arc<[char]>] {
        self.by_start.get(&start).map_or(&[], Vec::as_slice)
    }
}

/// The secrets a call sent, and the masking of a server's text with them: its own (those it
/// sent, and those it carries from its login's earlier calls), and, in a bulk call, those every
/// login's call sent ([`SharedSecrets`]), read where they are rather than copied.
#[derive(Clone, Default)]
pub struct SentSecrets {
    own: Secrets,
    shared: Option<SharedSecrets>,
}

/// How many, never which.
impl fmt::Debug for SentSecrets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shared = self.shared.as_ref().map_or(0, |shared| shared.read().len());
        write!(f, "SentSecrets({} values, ***)", self.own.len() + shared)
    }
}

impl SentSecrets {
    /// Records `secret`, unless it is too short to mask or already known.
    pub(crate) fn add(&mut self, secret: &Secret) {
        self.own.add(&chars_of(secret));
    }

    /// Records every secret of `earlier` too: what the earlier calls of the same login sent
    /// (docs/errors.md#secrets-a-server-repeats).
    pub(crate) fn extend(&mut self, earlier: &SentSecrets) {
        for secret in earlier.own.all() {
            self.own.add(secret);
        }
        if let Some(shared) = &earlier.shared {
            for secret in shared.read().all() {
                self.own.add(secret);
            }
        }
    }

    /// These secrets, and those of `shared` (a bulk call's), read as each text is masked.
    pub fn sharing(mut self, shared: Option<SharedSecrets>) -> Self {
        self.shared = shared;
        self
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.own.len() == 0 && self.shared.as_ref().is_none_or(|shared| shared.read().len() == 0)
    }

    /// Runs `with` on every secret: the shared ones under their lock, held for one text.
    fn layers<R>(&self, with: impl FnOnce(&Layers<'_>) -> R) -> R {
        let shared = self.shared.as_ref().map(SharedSecrets::read);
        with(&Layers { own: &self.own, shared: shared.as_deref() })
    }

    /// `text` with every secret masked, in any of its forms; a text cut short (ending with `…`)
    /// also loses a secret cut there.
    pub fn text(&self, text: &str) -> String {
        self.layers(|layers| layers.text(text))
    }

    /// An identifier the server chose (a RequestId, a code it does not know): masked whole when
    /// it is a secret, kept when it is a GUID, and otherwise masked as text is.
    pub fn id(&self, id: &str) -> String {
        if self.is_secret(id) {
            MASK.to_owned()
        } else if is_guid(id) {
            id.to_owned()
        } else {
            self.text(id)
        }
    }

    /// A JSON value the server sent, masked in place: each key and string as text is (a GUID
    /// string as an identifier), and a number that is a secret written as a number.
    pub(crate) fn value(&self, value: &mut Value) {
        if self.is_empty() {
            return;
        }
        match value {
            Value::String(text) => *text = self.id(text),
            Value::Number(number) => {
                if self.is_secret(&number.to_string()) {
                    *value = Value::String(MASK.to_owned());
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|item| self.value(item)),
            Value::Object(map) => {
                *map = std::mem::take(map)
                    .into_iter()
                    .map(|(key, mut item)| {
                        self.value(&mut item);
                        (self.text(&key), item)
                    })
                    .collect();
            }
            Value::Null | Value::Bool(_) => {}
        }
    }

    /// Whether `text` is one of the secrets, as a whole (letter case aside).
    fn is_secret(&self, text: &str) -> bool {
        self.layers(|layers| layers.is_secret(text))
    }
}

/// Every secret of a [`SentSecrets`], the shared ones read under their lock.
struct Layers<'a> {
    own: &'a Secrets,
    shared: Option<&'a Secrets>,
}

impl Layers<'_> {
    fn each(&self) -> impl Iterator<Item = &Secrets> {
        std::iter::once(self.own).chain(self.shared)
    }

    /// `text` with every secret masked (see [`SentSecrets::text`]).
    fn text(&self, text: &str) -> String {
        if self.each().all(|secrets| secrets.len() == 0) {
            return text.to_owned();
        }
        let (body, cut) = match text.strip_suffix(CUT) {
            Some(body) => (body, true),
            None => (text, false),
        };
        let mut search = Search { steps: STEPS };
        let mut masked = String::with_capacity(text.len());
        let mut at = 0;
        while let Some(rest) = body.get(at..).filter(|rest| !rest.is_empty()) {
            // A GUID (a RequestId, a LoginId) is kept whole unless it is a secret itself (a token):
            // a short answer that happens to be some of its hex digits must not break it.
            if let Some(guid) = guid_at(body, at) {
                masked.push_str(if self.is_secret(guid) { MASK } else { guid });
                at += guid.len();
                continue;
            }
            match self.found_at(rest, &mut search) {
                Found::Whole(length) => {
                    masked.push_str(MASK);
                    at += length;
                }
                Found::CutShort if cut => {
                    masked.push_str(MASK);
                    at = body.len();
                }
                Found::CutShort | Found::No => {
                    let Some(c) = rest.chars().next() else { break };
                    masked.push(c);
                    at += c.len_utf8();
                }
            }
            if search.steps == 0 {
                MASK.clone_into(&mut masked);
                break;
            }
        }
        if cut {
            masked.push(CUT);
        }
        masked
    }

    /// Whether `text` is one of the secrets, as a whole (letter case aside).
    fn is_secret(&self, text: &str) -> bool {
        let chars: Vec<char> = text.chars().collect();
        let folded = folded(&chars);
        self.each().any(|secrets| secrets.known.contains(folded.as_str()))
    }

    /// The longest secret found at the start of `rest`: among those whose first character is one
    /// that the start of `rest` may stand for ([`forms`]).
    fn found_at(&self, rest: &str, search: &mut Search) -> Found {
        // An escape cut at the end of the text may stand for the start of any secret.
        let mut cut_short = unfinished_escape(rest);
        let mut starts: Vec<char> = forms(rest).into_iter().map(|(c, _)| start_key(c)).collect();
        starts.sort_unstable();
        starts.dedup();
        // The longest found: its length in characters, and in bytes of `rest`.
        let mut longest: Option<(usize, usize)> = None;
        for starting in starts.iter().flat_map(|&start| self.each().map(move |secrets| secrets.starting(start))) {
            for secret in starting {
                if longest.is_some_and(|(length, _)| length >= secret.len()) {
                    break; // the rest of the list is shorter still
                }
                match search.found(rest, 0, secret) {
                    Found::Whole(bytes) => {
                        longest = Some((secret.len(), bytes));
                        break;
                    }
                    Found::CutShort => cut_short = true,
                    Found::No => {}
                }
            }
        }
        match longest {
            Some((_, bytes)) => Found::Whole(bytes),
            None if cut_short => Found::CutShort,
            None => Found::No,
        }
    }
}

/// The secrets every call of one bulk call sent, shared by those calls: a server that mixes up
/// two logins may repeat in one login's error the token minted for another
/// (docs/errors.md#secrets-a-server-repeats). Its Debug, as [`SentSecrets`]'s, shows a count.
#[derive(Clone, Debug, Default)]
pub struct SharedSecrets(Arc<Mutex<Secrets>>);

impl SharedSecrets {
    pub(crate) fn add(&self, secret: &Secret) {
        self.read().add(&chars_of(secret));
    }

    fn read(&self) -> MutexGuard<'_, Secrets> {
        sync::lock(&self.0)
    }
}

fn chars_of(secret: &Secret) -> Arc<[char]> {
    secret.expose().chars().collect()
}

/// What the search of a secret at a place of a text found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Found {
    /// The whole secret, in this many bytes of the text.
    Whole(usize),
    /// The start of the secret, up to the end of the text.
    CutShort,
    No,
}

/// One search through a text, with the steps it has left.
struct Search {
    steps: u32,
}

impl Search {
    /// Whether `secret` is written at byte `at` of `text`, each of its characters as it is or in
    /// one of its escaped forms ([`forms`]).
    fn found(&mut self, text: &str, at: usize, secret: &[char]) -> Found {
        let Some((&wanted, after)) = secret.split_first() else { return Found::Whole(at) };
        let Some(rest) = text.get(at..).filter(|rest| !rest.is_empty()) else { return Found::CutShort };
        if self.steps == 0 {
            return Found::No;
        }
        self.steps -= 1;
        let mut cut_short = unfinished_escape(rest);
        for (c, length) in forms(rest) {
            if !same(c, wanted) {
                continue;
            }
            match self.found(text, at + length, after) {
                whole @ Found::Whole(_) => return whole,
                Found::CutShort => cut_short = true,
                Found::No => {}
            }
        }
        if cut_short {
            Found::CutShort
        } else {
            Found::No
        }
    }
}

/// Whether two characters are the same letter case aside.
fn same(a: char, b: char) -> bool {
    a == b || a.to_lowercase().eq(b.to_lowercase())
}

/// `chars` in lower case, as [`same`] compares them: what tells one secret from another.
fn folded(chars: &[char]) -> String {
    chars.iter().flat_map(|c| c.to_lowercase()).collect()
}

/// The key of the secrets a character may start: the first of its lower case.
fn start_key(c: char) -> char {
    c.to_lowercase().next().unwrap_or(c)
}

/// Each character the start of `rest` may stand for, and its length in bytes: the character
/// itself; `+` as a space and `%XX` as the bytes of one (a URL's escapes); `\"`, `\n`, `\u00e9`
/// and a pair of `\u` surrogates, with any number of backslashes before them for an escape
/// escaped again (JSON's); `&amp;`, `&#233;` and `&#xe9;` (HTML's).
fn forms(rest: &str) -> Vec<(char, usize)> {
    let mut forms = Vec::with_capacity(2);
    let Some(first) = rest.chars().next() else { return forms };
    forms.push((first, first.len_utf8()));
    match first {
        '+' => forms.push((' ', 1)),
        '%' => forms.extend(percent(rest)),
        '&' => forms.extend(entity(rest)),
        '\\' => json_escapes(rest, &mut forms),
        _ => {}
    }
    forms
}

/// A character written as `%XX`, one escape per byte of its UTF-8.
fn percent(rest: &str) -> Option<(char, usize)> {
    let byte_at = |index: usize| {
        let digits = rest.get(index * 3..index * 3 + 3)?.strip_prefix('%')?;
        digits.chars().all(|c| c.is_ascii_hexdigit()).then(|| u8::from_str_radix(digits, 16).ok()).flatten()
    };
    let first = byte_at(0)?;
    let width = match first {
        0x00..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf7 => 4,
        _ => return None,
    };
    let bytes = (0..width).map(byte_at).collect::<Option<Vec<u8>>>()?;
    let c = std::str::from_utf8(&bytes).ok()?.chars().next()?;
    Some((c, width * 3))
}

/// A character written as an HTML entity: the five named ones, or by its number.
fn entity(rest: &str) -> Option<(char, usize)> {
    let (end, _) = rest.char_indices().take(12).find(|&(_, c)| c == ';')?;
    let name = rest.get(1..end)?;
    let c = match name.to_ascii_lowercase().as_str() {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        number => {
            let digits = number.strip_prefix('#')?;
            let code = match digits.strip_prefix('x') {
                Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                None => digits.parse().ok()?,
            };
            char::from_u32(code)?
        }
    };
    Some((c, end + 1))
}

/// The characters a run of backslashes at the start of `rest` may stand for: the escape it
/// ends in (`\"`, `\\\"`, `\u00e9`, `\\u00e9`), or a backslash escaped once, twice or three times.
fn json_escapes(rest: &str, forms: &mut Vec<(char, usize)>) {
    let run = rest.len() - rest.trim_start_matches('\\').len();
    for escaped in [2, 4, 8] {
        if run >= escaped {
            forms.push(('\\', escaped));
        }
    }
    let Some(after) = rest.get(run..) else { return };
    let simple = match after.chars().next() {
        Some('"') => Some('"'),
        Some('/') => Some('/'),
        Some('\'') => Some('\''),
        Some('b') => Some('\u{8}'),
        Some('f') => Some('\u{c}'),
        Some('n') => Some('\n'),
        Some('r') => Some('\r'),
        Some('t') => Some('\t'),
        _ => None,
    };
    if let Some(c) = simple {
        forms.push((c, run + 1));
    }
    let Some(high) = hex4(after.strip_prefix('u')) else { return };
    if (0xd800..0xdc00).contains(&high) {
        // A surrogate pair: the low half follows with as many backslashes.
        let slashes = "\\".repeat(run);
        let low = after.get(5..).and_then(|next| next.strip_prefix(slashes.as_str()));
        let low = hex4(low.and_then(|next| next.strip_prefix('u')));
        if let Some(low @ 0xdc00..=0xdfff) = low {
            if let Some(c) = char::from_u32(0x10000 + ((high - 0xd800) << 10) + (low - 0xdc00)) {
                forms.push((c, run + 5 + run + 5));
            }
        }
    } else if let Some(c) = char::from_u32(high) {
        forms.push((c, run + 5));
    }
}

/// Four hexadecimal digits at the start of `text`.
fn hex4(text: Option<&str>) -> Option<u32> {
    let digits = text?.get(..4)?;
    digits.chars().all(|c| c.is_ascii_hexdigit()).then(|| u32::from_str_radix(digits, 16).ok()).flatten()
}

/// Whether `rest`, the end of a text, may be the start of an escape cut short (`\u00`, `%C3`,
/// `&#23`): a secret cut there is masked with what is left of it.
fn unfinished_escape(rest: &str) -> bool {
    rest.len() < 12 && rest.starts_with(['\\', '%', '&'])
}

/// The GUID (8-4-4-4-12 hexadecimal digits) that starts at byte `at` of `text`, as a word of its
/// own: no letter, digit or hyphen just before or after it.
fn guid_at(text: &str, at: usize) -> Option<&str> {
    let joined = |c: char| c.is_alphanumeric() || c == '-';
    if !text.get(at..)?.starts_with(|c: char| c.is_ascii_hexdigit())
        || text.get(..at)?.chars().next_back().is_some_and(joined)
    {
        return None;
    }
    let guid = text.get(at..at + 36)?;
    if !is_guid(guid) || text.get(at + 36..)?.chars().next().is_some_and(joined) {
        return None;
    }
    Some(guid)
}

fn is_guid(text: &str) -> bool {
    let groups: Vec<&str> = text.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(group, length)| group.len() == length && group.chars().all(|c| c.is_ascii_hexdigit()))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    /// The secrets of a call that sent `secrets` (also for crates/bankfeed/src/error_masking.rs's tests).
    pub(crate) fn sent(secrets: &[&str]) -> SentSecrets {
        let mut sent = SentSecrets::default();
        for secret in secrets {
            sent.add(&Secret::new(*secret));
        }
        sent
    }

    #[test]
    fn a_secret_is_masked_as_it_came_and_in_any_letter_case() {
        let sent = sent(&["hunter2-pw"]);
        assert_eq!(sent.text("bad password hunter2-pw for you"), "bad password *** for you");
        assert_eq!(sent.text("HUNTER2-PW!"), "***!");
        assert_eq!(sent.text("hunter2-pwhunter2-pw"), "******");
        assert_eq!(sent.text("nothing here"), "nothing here");
    }

    #[test]
    fn json_url_and_html_escapes_are_masked_too() {
        let sent = sent(&["pä\"ss w/rd"]);
        for form in [
            r#"pä\"ss w\/rd"#,
            r"p\u00e4\u0022ss\u0020w\u002Frd",
            r#"pä\\\"ss w/rd"#,
            r"p\\u00e4\\u0022ss w/rd",
            "p%C3%A4%22ss+w%2Frd",
            "p%c3%a4%22ss%20w/rd",
            "p&#228;&quot;ss w&#x2f;rd",
        ] {
            assert_eq!(sent.text(&format!("[{form}]")), "[***]", "{form}");
        }
        let astral = sent_astral();
        assert_eq!(astral.text(r"key \ud83d\udd11ab end"), "key *** end");
    }

    fn sent_astral() -> SentSecrets {
        sent(&["🔑ab"])
    }

    #[test]
    fn a_secret_cut_at_the_end_of_a_cut_text_is_masked() {
        let sent = sent(&["sk-live-0123456789"]);
        assert_eq!(sent.text("the key was sk-live-01…"), "the key was ***…");
        assert_eq!(sent.text(r"the key was sk\u002d…"), "the key was ***…");
        // Not cut: the same start is only text.
        assert_eq!(sent.text("the key was sk-live-01"), "the key was sk-live-01");
    }

    #[test]
    fn a_guid_is_kept_unless_it_is_a_secret() {
        let request_id = "0b9a3c1d-2e4f-4a5b-8c6d-7e8f9a0b1c2d";
        let token = "5b1e0c2d-9a4f-4e7b-5d21-08dc3f6a91e7";
        let sent = sent(&["1c2d", token]);
        assert_eq!(sent.text(&format!("RequestId {request_id}, PIN 1c2d")), format!("RequestId {request_id}, PIN ***"));
        assert_eq!(sent.text(&format!("token {}", token.to_uppercase())), "token ***");
        assert_eq!(sent.id(request_id), request_id);
        assert_eq!(sent.id(token), MASK);
        assert_eq!(sent.id("r-1c2d"), "r-***");
    }

    #[test]
    fn short_values_are_not_masked() {
        let sent = sent(&["ab", "a"]);
        assert!(sent.is_empty());
        assert_eq!(sent.text("a cab"), "a cab");
    }

    #[test]
    fn the_longest_secret_is_masked_whole() {
        let sent = sent(&["Every", "Everyday"]);
        assert_eq!(sent.text("Everyday and Every"), "*** and ***");
    }

    #[test]
    fn a_json_value_is_masked_in_its_keys_strings_and_numbers() {
        let sent = sent(&["4321", "hunter2"]);
        let mut value = json!({"Password": "hunter2", "hunter2": [4321, 14321, "pin 4321"], "n": null});
        sent.value(&mut value);
        assert_eq!(value, json!({"Password": MASK, MASK: [MASK, 14321, "pin ***"], "n": null}));
    }

    #[test]
    fn a_search_that_branches_too_much_masks_the_whole_text() {
        let sent = sent(&[&format!("{}x", "\\".repeat(40))]);
        let text = "\\".repeat(2000);
        assert_eq!(sent.text(&text), MASK);
    }

    #[test]
    fn debug_shows_how_many_never_which() {
        assert_eq!(format!("{:?}", sent(&["hunter2"])), "SentSecrets(1 values, ***)");
        let shared = SharedSecrets::default();
        shared.add(&Secret::new("hunter2"));
        let shown = format!("{shared:?}");
        assert!(shown.contains("1 values, ***") && !shown.contains("hunter2"), "{shown}");
        let both = sent(&["answer-42"]).sharing(Some(shared));
        assert_eq!(format!("{both:?}"), "SentSecrets(2 values, ***)");
        assert_eq!(both.text("hunter2 answer-42"), "*** ***");
    }

    #[test]
    fn thousands_of_tokens_mask_only_themselves() {
        // A bulk call of 20,000 logins shares a token of each: a long text is searched for them
        // within the steps a search may take, and only what is a secret is masked.
        let mut tokens = SentSecrets::default();
        let minted: Vec<String> =
            (0..20_000_u32).map(|n| format!("{n:08x}-9a4f-4e7b-5d21-{:012x}", u64::from(n) * 7919)).collect();
        for token in &minted {
            tokens.add(&Secret::new(token.clone()));
        }
        let prose = "refused: the service could not read the request, check its fields 0123 abcdef. ".repeat(12);
        let text = format!("{prose}token {} ({}) {prose}", minted[12_345], minted[7].to_uppercase());
        let started = std::time::Instant::now();
        assert_eq!(tokens.text(&text), format!("{prose}token *** (***) {prose}"));
        assert!(started.elapsed() < std::time::Duration::from_secs(10), "{:?}", started.elapsed());
        assert_eq!(format!("{tokens:?}"), "SentSecrets(20000 values, ***)");
    }

    #[test]
    fn earlier_secrets_are_added_once_and_masked_whole() {
        let mut later = sent(&["answer-42"]);
        later.extend(&sent(&["hunter2", "ANSWER-42", "hunter2-pw"]));
        assert_eq!(format!("{later:?}"), "SentSecrets(3 values, ***)");
        assert_eq!(later.text("hunter2-pw, answer-42, hunter2"), "***, ***, ***");
    }
}

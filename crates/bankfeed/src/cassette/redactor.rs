//! Redaction at record time (docs/cassettes.md#redaction): secrets become a placeholder, the ids
//! of logins and sessions consistent pseudonyms, and, unless the recording is of the public test
//! instance, personal data in answers a disguise of the same shape. The same redaction is applied
//! to a request before it is matched, so that a replayed session matches what was recorded.
//!
//! Every real value replaced is kept (in memory only) as a target of the fail-closed scan
//! (crates/bankfeed/src/cassette/scan.rs), named by its field.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use serde_json::{Map, Value};

use super::exchange::{Exchange, WireAnswer};
use super::format::{Origin, RecordedRequest, RecordedResponse, StoredBody};
use super::pseudonym::{disguise, guid, is_guid, is_pseudonym};
use crate::masking::SentSecrets;
use crate::secret::Secret;

/// What a secret reads as in a cassette.
pub const REDACTED: &str = "REDACTED";

/// A 1x1 PNG: what a challenge image becomes in a cassette of a live recording.
const PLACEHOLDER_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

/// A one-page blank PDF of 308 bytes, valid to the letter (its cross-reference table included):
/// what a statement file becomes in a cassette of a live recording.
const PLACEHOLDER_PDF: &str = concat!(
    "JVBERi0xLjQKMSAwIG9iago8PC9UeXBlL0NhdGFsb2cvUGFnZXMgMiAwIFI+PgplbmRvYmoKMiAwIG9iago8PC9UeXBlL1BhZ2VzL0tp",
    "ZHNbMyAwIFJdL0NvdW50IDE+PgplbmRvYmoKMyAwIG9iago8PC9UeXBlL1BhZ2UvUGFyZW50IDIgMCBSL01lZGlhQm94WzAgMCA3MiA3",
    "Ml0+PgplbmRvYmoKeHJlZgowIDQKMDAwMDAwMDAwMCA2NTUzNSBmIAowMDAwMDAwMDA5IDAwMDAwIG4gCjAwMDAwMDAwNTQgMDAwMDAg",
    "biAKMDAwMDAwMDEwNSAwMDAwMCBuIAp0cmFpbGVyCjw8L1NpemUgNC9Sb290IDEgMCBSPj4Kc3RhcnR4cmVmCjE2OAolJUVPRgo="
);

/// The field of a statement's file, base64 (docs/protocol.md#account-detail-summary-and-statements): replaced by [`PLACEHOLDER_PDF`].
pub(crate) const STATEMENT_FILE: &str = "Base64Bytes";

/// The body fields that are secrets wherever they are (any letter case): their values become
/// [`REDACTED`]. The username is one: a live login's username is the bank's.
const SECRET_FIELDS: [&str; 3] = ["Password", "Username", "Token"];

/// The field of a request whose every value is a secret (the answers); its keys, the prompts,
/// stay.
pub(crate) const ANSWERS_FIELD: &str = "SecurityResponses";

/// The request headers a cassette keeps as they came: every other one is a placeholder.
pub(crate) const KEPT_REQUEST_HEADERS: [&str; 1] = ["content-type"];

/// The answer headers a cassette keeps: nothing else of an answer's headers is written.
pub(crate) const KEPT_RESPONSE_HEADERS: [&str; 3] = ["content-type", "location", "retry-after"];

/// Whether a body field named `key` (any letter case) holds a secret wherever it is, when its
/// value is neither an object, a list nor null: what [`REDACTED`] replaces, and what
/// `bankfeed cassette check` expects to find replaced (crates/bankfeed/src/cassette/check.rs).
pub(crate) fn secret_field(key: &str, value: &Value) -> bool {
    SECRET_FIELDS.iter().any(|name| key.eq_ignore_ascii_case(name))
        && !value.is_object()
        && !value.is_array()
        && !value.is_null()
}

/// The fields holding a login's or a session's id: pseudonyms.
const ID_FIELDS: [&str; 2] = ["LoginId", "RequestId"];

/// The fields of answers that are personal data (disguised unless the origin is the test
/// instance). Everything under `Holder` and `Address` is too (the holder's name among it). An
/// account's `Title` is free text a bank or its customer writes, which can name the person
/// ("Jane's savings", a joint account's two names): disguised as the holder's name is
/// (docs/cassettes.md#redaction).
const PERSONAL_FIELDS: [&str; 8] =
    ["AccountNumber", "TransitNumber", "InstitutionNumber", "Description", "Memo", "Email", "PhoneNumber", "Title"];

/// The objects whose every value is personal data.
const PERSONAL_OBJECTS: [&str; 2] = ["Holder", "Address"];
/// The answers that are words of the protocol, the same for every user: how a `TextOrCall` code
/// is sent, and a trusted device's confirmation (docs/protocol.md).
const ANSWER_WORDS: [&str; 3] = ["Text", "Call", "VERIFIED"];
/// The field whose disguise a phone number gets, wherever it stands.
const PHONE_FIELD: &str = "PhoneNumber";

/// The redaction of one cassette: the same real id always gets the same pseudonym in it.
#[derive(Debug)]
pub(crate) struct Redactor {
    origin: Origin,
    customer_id: String,
    /// Every real id met so far and its pseudonym: replaced wherever it shows up again (a link,
    /// a path, a text body).
    ids: HashMap<String, String>,
    /// The names of the fields replaced: the cassette's `redactions`.
    redactions: BTreeSet<String>,
    /// The real values replaced, by field: what the scan looks for before anything is written.
    targets: Vec<(String, Secret)>,
    /// The secrets sent or received so far (keys, tokens, credentials, answers): masked wherever
    /// an answer repeats them, as errors mask them (docs/errors.md#secrets-a-server-repeats). A
    /// sandbox user's password is a word of its account titles, and a server may echo a secret.
    said: SentSecrets,
    /// The phone numbers a `TextOrCall` challenge offered, and their disguises: the next request
    /// names the chosen one as the key of its answer, which matching keeps, so it is disguised
    /// there the same way (docs/cassettes.md#redaction).
    phones: HashMap<String, String>,
    /// The choices challenges offered (`Iterables`: multiple choice, images, phone numbers, the
    /// questions of a security-question reset): an answer that is
    /// one of them is replaced as every answer is, but not looked for by the scan nor masked in
    /// later answers, since the challenge that offered it holds it as well (which one was
    /// picked is what the placeholder hides).
    offered: HashSet<String>,
    /// Test support: fields left as they are, to prove that the scan catches a broken redactor.
    skipped: Vec<String>,
}

impl Redactor {
    pub(crate) fn new(origin: Origin, customer_id: &str) -> Self {
        Redactor {
            origin,
            customer_id: customer_id.to_owned(),
            ids: HashMap::new(),
            redactions: BTreeSet::new(),
            targets: Vec::new(),
            said: SentSecrets::default(),
            phones: HashMap::new(),
            offered: HashSet::new(),
            skipped: Vec::new(),
        }
    }

    /// Leaves `fields` unredacted: only for the test that proves the scan refuses such a file.
    pub(crate) fn skipping(mut self, fields: &[String]) -> Self {
        self.skipped = fields.to_vec();
        self
    }

    pub(crate) fn redactions(&self) -> Vec<String> {
        self.redactions.iter().cloned().collect()
    }

    pub(crate) fn targets(&self) -> &[(String, Secret)] {
        &self.targets
    }

    fn skips(&self, field: &str) -> bool {
        self.skipped.iter().any(|skipped| skipped.eq_ignore_ascii_case(field))
    }

    /// Notes that `field`'s value `real` was replaced: named in `redactions`, looked for by the scan.
    /// A placeholder or a pseudonym is no real value (a replayed token sent back as a header): it
    /// is not looked for.
    fn replaced(&mut self, field: &str, real: &str) {
        self.redactions.insert(field.to_owned());
        if real.is_empty() || real == REDACTED || is_pseudonym(real) {
            return;
        }
        if !self.targets.iter().any(|(_, known)| known.expose() == real) {
            self.targets.push((field.to_owned(), Secret::new(real)));
        }
    }

    /// The pseudonym of the id `real` of `field`; a pseudonym stays as it is.
    fn id(&mut self, field: &str, real: &str) -> String {
        if is_pseudonym(real) || real.is_empty() {
            return real.to_owned();
        }
        let fake = guid(real);
        self.ids.insert(real.to_owned(), fake.clone());
        self.replaced(field, real);
        fake
    }

    /// `request` as a cassette keeps it.
    pub(crate) fn request(&mut self, request: &Exchange<'_>) -> RecordedRequest {
        let mut headers = BTreeMap::new();
        for (name, value) in &request.headers {
            let name = name.to_ascii_lowercase();
            // Looked for by the scan whatever the redaction below does: it was sent.
            self.replaced(&name, value.expose());
            if self.skips(&name) {
                headers.insert(name.clone(), value.expose().to_owned());
            } else {
                headers.insert(name.clone(), REDACTED.to_owned());
                if value.expose() != REDACTED {
                    self.said.add(value);
                }
            }
        }
        if let Some(content_type) = request.content_type {
            headers.insert("content-type".to_owned(), content_type.to_owned());
        }
        let mut body = request.body.and_then(StoredBody::of);
        if let Some(StoredBody::Json { json: value }) = &mut body {
            self.request_value(value, None);
            self.known_ids(value);
        }
        // What the client knows to be secret and no field above replaced is still looked for.
        for secret in request.body_secrets {
            if secret.expose() == REDACTED || self.offered_choice(secret.expose()) {
                continue;
            }
            self.said.add(secret);
            if !self.targets.iter().any(|(_, known)| known == secret) {
                self.targets.push((format!("a secret of the {} request's body", request.operation), secret.clone()));
            }
        }
        let uri = self.uri(request.url);
        RecordedRequest { method: request.method.to_owned(), uri, headers, body }
    }

    /// `answer` as a cassette keeps it.
    pub(crate) fn response(&mut self, answer: &WireAnswer) -> RecordedResponse {
        let mut headers = BTreeMap::new();
        if let Some(content_type) = &answer.content_type {
            headers.insert("content-type".to_owned(), content_type.clone());
        }
        if let Some(location) = &answer.location {
            headers.insert("location".to_owned(), self.uri(location));
        }
        if let Some(retry_after) = &answer.retry_after {
            headers.insert("retry-after".to_owned(), retry_after.clone());
        }
        let mut body = StoredBody::of(&answer.body);
        match &mut body {
            Some(StoredBody::Json { json: value }) => {
                self.answer_value(value, None);
                self.known_ids(value);
                self.said.value(value);
            }
            Some(StoredBody::Text { text }) => *text = self.said.text(&self.text(text)),
            _ => {}
        }
        RecordedResponse { status: answer.status, headers, body }
    }

    /// A URL with the customer id (but the test instance's) and every id in its path and query
    /// replaced by pseudonyms.
    fn uri(&mut self, url: &str) -> String {
        let Ok(mut parsed) = reqwest::Url::parse(url) else { return self.text(url) };
        let segments: Vec<String> =
            parsed.path_segments().map(|segments| segments.map(str::to_owned).collect()).unwrap_or_default();
        let mut path = String::new();
        for (at, segment) in segments.iter().enumerate() {
            path.push('/');
            let customer = at == 1 && segments.first().is_some_and(|first| first == "v3");
            if customer && segment == &self.customer_id {
                if self.origin == Origin::Live && !self.skips("customer_id") {
                    let fake = guid(segment);
                    self.replaced("customer_id", segment);
                    path.push_str(&fake);
                } else {
                    path.push_str(segment);
                }
            } else if is_guid(segment) || self.ids.contains_key(segment.as_str()) {
                path.push_str(&self.id("an id in a path", segment));
            } else {
                path.push_str(segment);
            }
        }
        parsed.set_path(&path);
        let pairs: Vec<(String, String)> = parsed
            .query_pairs()
            .map(|(name, value)| {
                let value = if is_guid(&value) { self.id(&name, &value) } else { value.into_owned() };
                (name.into_owned(), value)
            })
            .collect();
        if !pairs.is_empty() {
            parsed.query_pairs_mut().clear().extend_pairs(pairs);
        }
        parsed.to_string()
    }

    /// `text` with every known real id replaced by its pseudonym.
    fn text(&self, text: &str) -> String {
        let mut text = text.to_owned();
        for (real, fake) in &self.ids {
            if text.contains(real.as_str()) {
                text = text.replace(real.as_str(), fake);
            }
        }
        text
    }

    /// Every string of `value` with the known ids replaced (links, messages naming a RequestId).
    fn known_ids(&self, value: &mut Value) {
        match value {
            Value::String(text) => *text = self.text(text),
            Value::Array(items) => items.iter_mut().for_each(|item| self.known_ids(item)),
            Value::Object(map) => map.values_mut().for_each(|item| self.known_ids(item)),
            _ => {}
        }
    }

    /// A request body: secrets, answers and ids. `parent` is the key the value is under.
    fn request_value(&mut self, value: &mut Value, parent: Option<&str>) {
        match value {
            Value::Object(map) => {
                for (key, item) in map.iter_mut() {
                    if key.eq_ignore_ascii_case(ANSWERS_FIELD) && !self.skips(key) {
                        self.answers(item);
                    } else {
                        self.common(key, item, parent, Self::request_value);
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|item| self.request_value(item, parent)),
            _ => {}
        }
    }

    /// Every value of `SecurityResponses` (its keys, the prompts, stay: matching needs them; a
    /// phone number a `TextOrCall` challenge offered, the key of its answer, in its disguise).
    fn answers(&mut self, responses: &mut Value) {
        let Value::Object(map) = responses else { return };
        for answers in map.values_mut() {
            match answers {
                Value::Array(items) => items.iter_mut().for_each(|item| self.secret("SecurityResponses", item)),
                other => self.secret("SecurityResponses", other),
            }
        }
        if map.keys().any(|key| self.phones.contains_key(key)) {
            // Rebuilt in order: the file keeps the wire's key order.
            let entries = std::mem::take(map);
            for (key, answers) in entries {
                let key = self.phones.get(&key).cloned().unwrap_or(key);
                map.insert(key, answers);
            }
        }
    }

    /// Whether `value` is a choice a challenge offered, or a word every user answers a
    /// challenge type with (not a secret to look for: see `offered`).
    fn offered_choice(&self, value: &str) -> bool {
        self.offered.contains(value) || ANSWER_WORDS.contains(&value)
    }

    /// `value`, a secret of `field`, replaced by [`REDACTED`].
    fn secret(&mut self, field: &str, value: &mut Value) {
        if self.skips(field) {
            return;
        }
        if let Value::String(real) = value {
            if field == ANSWERS_FIELD && self.offered_choice(real) {
                self.redactions.insert(field.to_owned());
            } else if real != REDACTED {
                self.replaced(field, real);
                self.said.add(&Secret::new(real.as_str()));
            }
        }
        *value = Value::String(REDACTED.to_owned());
    }

    /// What requests and answers share: secrets, ids, and the login object. `walk` goes on into
    /// any other value.
    fn common(
        &mut self,
        key: &str,
        item: &mut Value,
        parent: Option<&str>,
        walk: fn(&mut Self, &mut Value, Option<&str>),
    ) {
        let named = |names: &[&str]| names.iter().any(|name| key.eq_ignore_ascii_case(name));
        if secret_field(key, item) {
            self.secret(key, item);
        } else if (named(&ID_FIELDS) || (key.eq_ignore_ascii_case("Id") && parent == Some("Login"))) && !self.skips(key)
        {
            if let Value::String(real) = item {
                let field = if key.eq_ignore_ascii_case("Id") { "LoginId" } else { key };
                *real = self.id(field, real);
            }
        } else {
            walk(self, item, Some(key));
        }
    }

    /// An answer's body: secrets, ids, and personal data unless the origin is the test instance.
    fn answer_value(&mut self, value: &mut Value, parent: Option<&str>) {
        match value {
            Value::Object(map) => {
                let images = challenge_of_type(map, "ImageSelection");
                let phones = challenge_of_type(map, "TextOrCall");
                if map.keys().any(|key| key.eq_ignore_ascii_case("Type")) {
                    self.note_choices(map);
                }
                for (key, item) in map.iter_mut() {
                    if images && key.eq_ignore_ascii_case("Iterables") {
                        self.images(item);
                    } else if phones && key.eq_ignore_ascii_case("Iterables") {
                        self.phone_choices(item);
                    } else if key.eq_ignore_ascii_case(STATEMENT_FILE) && item.is_string() {
                        self.statement(item);
                    } else if self.personal(key, parent) {
                        self.disguised(key, item);
                    } else {
                        self.common(key, item, parent, Self::answer_value);
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|item| self.answer_value(item, parent)),
            _ => {}
        }
    }

    /// Whether `key` (under `parent`) holds personal data to disguise.
    fn personal(&self, key: &str, parent: Option<&str>) -> bool {
        if self.origin == Origin::TestInstance || self.skips(key) {
            return false;
        }
        let named = |names: &[&str], name: &str| names.iter().any(|known| name.eq_ignore_ascii_case(known));
        named(&PERSONAL_FIELDS, key)
            || named(&PERSONAL_OBJECTS, key)
            || parent.is_some_and(|parent| named(&PERSONAL_OBJECTS, parent))
    }

    /// Every string and number under `value` disguised as personal data of `field`.
    fn disguised(&mut self, field: &str, value: &mut Value) {
        match value {
            // Named in `redactions`, not looked for by the scan: the words of a description
            // ("Payroll") stand in fields that are not personal too (a category).
            Value::String(real) if !is_pseudonym(real) => {
                *real = disguise(field, real);
                self.redactions.insert(field.to_owned());
            }
            Value::Number(number) => {
                if let Ok(fake) = serde_json::from_str::<serde_json::Number>(&disguise(field, &number.to_string())) {
                    *number = fake;
                    self.redactions.insert(field.to_owned());
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|item| self.disguised(field, item)),
            Value::Object(map) => {
                for (key, item) in map.iter_mut() {
                    self.disguised(key, item);
                }
            }
            _ => {}
        }
    }

    /// The images of an image challenge, in a live recording: a placeholder each.
    fn images(&mut self, iterables: &mut Value) {
        if self.origin == Origin::TestInstance {
            return;
        }
        if let Value::Array(items) = iterables {
            for item in items {
                if item.is_string() {
                    self.redactions.insert("SecurityChallenges.Iterables (images)".to_owned());
                    *item = Value::String(PLACEHOLDER_PNG.to_owned());
                }
            }
        }
    }

    /// Notes the choices the challenge `challenge` offers (`offered`), before any is replaced.
    fn note_choices(&mut self, challenge: &Map<String, Value>) {
        let iterables = challenge.iter().find(|(key, _)| key.eq_ignore_ascii_case("Iterables"));
        if let Some((_, Value::Array(items))) = iterables {
            self.offered.extend(items.iter().filter_map(Value::as_str).map(str::to_owned));
        }
    }

    /// The phone numbers of a `TextOrCall` challenge, in a live recording: disguised as every
    /// phone number is, and remembered for the request that answers with one of them.
    fn phone_choices(&mut self, iterables: &mut Value) {
        if self.origin == Origin::TestInstance || self.skips(PHONE_FIELD) {
            return;
        }
        if let Value::Array(items) = iterables {
            for item in items {
                if let Value::String(real) = item {
                    let fake = disguise(PHONE_FIELD, real);
                    self.phones.insert(std::mem::replace(real, fake.clone()), fake);
                    self.redactions.insert("SecurityChallenges.Iterables (phone numbers)".to_owned());
                }
            }
        }
    }

    /// A statement's file, in a live recording: the placeholder PDF.
    fn statement(&mut self, file: &mut Value) {
        if self.origin == Origin::Live && !self.skips(STATEMENT_FILE) {
            self.redactions.insert(format!("{STATEMENT_FILE} (statement files)"));
            *file = Value::String(PLACEHOLDER_PDF.to_owned());
        }
    }
}

/// Whether `challenge` is of the type `kind`: an image selection's choices are images, a
/// `TextOrCall`'s phone numbers.
fn challenge_of_type(challenge: &Map<String, Value>, kind: &str) -> bool {
    challenge.iter().any(|(key, value)| {
        key.eq_ignore_ascii_case("Type") && value.as_str().is_some_and(|found| found.eq_ignore_ascii_case(kind))
    })
}

#[cfg(test)]
mod tests {
    use base64::Engine as _;
    use serde_json::json;

    use super::*;

    fn answer(redactor: &mut Redactor, body: &Value) -> Value {
        let answer = WireAnswer {
            status: 200,
            content_type: None,
            location: None,
            retry_after: None,
            body: serde_json::to_vec(body).unwrap(),
        };
        match redactor.response(&answer).body {
            Some(StoredBody::Json { json }) => json,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn secrets_ids_and_answers_of_a_request_are_replaced_and_the_prompts_stay() {
        let mut redactor = Redactor::new(Origin::TestInstance, "cid");
        let key = Secret::new("k-123");
        let body = json!({"Username": "jane", "Password": "hunter2", "LoginId": "5e1e8d5a-3f2b-4c8e-9b1a-0d2c3b4a5f60",
                          "SecurityResponses": {"What city?": ["Paris"]}});
        let bytes = serde_json::to_vec(&body).unwrap();
        let exchange = Exchange {
            operation: "Authorize",
            method: "POST",
            url: "https://toolbox-api.private.fin.ag/v3/cid/BankingServices/GetAccountsDetailAsync/5e1e8d5a-3f2b-4c8e-9b1a-0d2c3b4a5f60",
            headers: vec![("flinks-auth-key", &key)],
            content_type: Some("application/json"),
            body: Some(&bytes),
            body_secrets: &[],
        };
        let recorded = redactor.request(&exchange);
        let text = serde_json::to_string(&recorded.body).unwrap() + &recorded.uri + &format!("{:?}", recorded.headers);
        for gone in ["jane", "hunter2", "Paris", "k-123", "5e1e8d5a"] {
            assert!(!text.contains(gone), "{gone}: {text}");
        }
        let fake = guid("5e1e8d5a-3f2b-4c8e-9b1a-0d2c3b4a5f60");
        assert!(text.contains("What city?") && text.contains(&fake), "{text}");
        assert!(
            recorded.uri.ends_with(&format!("/v3/cid/BankingServices/GetAccountsDetailAsync/{fake}")),
            "the test instance's customer id stays"
        );
        let found: Vec<&str> = redactor.targets().iter().map(|(field, _)| field.as_str()).collect();
        assert_eq!(found, ["flinks-auth-key", "Username", "Password", "LoginId", "SecurityResponses"]);
    }

    #[test]
    fn an_answer_loses_its_statement_images_personal_data_and_repeated_secrets_when_live() {
        let body = json!({
            "RequestId": "r-1-long",
            "Links": [{"href": "/GetAccountsDetailAsync/r-1-long"}],
            "Message": "login hunter2 refused",
            "SecurityChallenges": [{"Type": "ImageSelection", "Iterables": ["aW1hZ2U="]}],
            "Accounts": [{"Title": "Jane's Chequing", "Holder": {"Name": "Jane Doe", "Address": {"City": "Laval"}},
                          "Statements": [{"FileType": "PDF", "Base64Bytes": "JVBERi0xLjcgcmVhbA=="}]}]
        });
        let mut live = Redactor::new(Origin::Live, "cid");
        live.said.add(&Secret::new("hunter2"));
        let redacted = answer(&mut live, &body);
        let text = redacted.to_string();
        for gone in ["r-1-long", "hunter2", "aW1hZ2U=", "Jane Doe", "Laval", "JVBERi0xLjcgcmVhbA=="] {
            assert!(!text.contains(gone), "{gone}: {text}");
        }
        // A title is disguised as the holder's name is: its shape kept, its words gone.
        let title = redacted["Accounts"][0]["Title"].as_str().unwrap();
        assert_eq!(title, disguise("Title", "Jane's Chequing"));
        assert!(!title.contains("Jane") && !title.contains("Chequing"), "{title}");
        assert_eq!((title.len(), title.find('\''), title.find(' ')), (15, Some(4), Some(6)), "{title}");
        let pdf = base64::engine::general_purpose::STANDARD.decode(PLACEHOLDER_PDF).unwrap();
        assert!(pdf.starts_with(b"%PDF-1.4") && pdf.ends_with(b"%%EOF\n") && pdf.len() == 308);
        assert_eq!(redacted["Accounts"][0]["Statements"][0]["Base64Bytes"], PLACEHOLDER_PDF);
        assert_eq!(redacted["Links"][0]["href"], format!("/GetAccountsDetailAsync/{}", guid("r-1-long")));
        // The public test instance's data is public test data: kept, but the ids and secrets.
        let mut public = Redactor::new(Origin::TestInstance, "cid");
        let kept = answer(&mut public, &body);
        assert_eq!(kept["Accounts"], body["Accounts"]);
        assert_eq!(kept["SecurityChallenges"], body["SecurityChallenges"]);
        assert_ne!(kept["RequestId"], body["RequestId"]);
    }

    #[test]
    fn an_answer_the_challenge_offered_is_replaced_but_not_looked_for_and_a_typed_one_is() {
        // A security-question reset offers questions; the answer names one and types its answer.
        let challenge = json!({"SecurityChallenges": [{"Type": "QuestionAndAnswer", "Prompt": "New question 1",
                               "Iterables": ["What was the name of your first pet?", "What was your first car?"]}]});
        let mut live = Redactor::new(Origin::Live, "cid");
        answer(&mut live, &challenge);
        let mut body =
            json!({"SecurityResponses": {"New question 1": ["What was the name of your first pet?", "Rexford"]}});
        live.request_value(&mut body, None);
        assert_eq!(body["SecurityResponses"]["New question 1"], json!([REDACTED, REDACTED]));
        let looked_for: Vec<&str> = live.targets().iter().map(|(_, value)| value.expose()).collect();
        assert_eq!(looked_for, ["Rexford"], "the typed answer only: the question is in the challenge too");
    }

    #[test]
    fn a_text_or_call_phone_is_disguised_in_the_challenge_and_in_the_answer_that_names_it() {
        let challenge = json!({"SecurityChallenges": [{"Type": "TextOrCall", "Prompt": "Where to send the code?",
                               "Iterables": ["514-555-0199", "438-555-0123"]}]});
        let mut live = Redactor::new(Origin::Live, "cid");
        let offered = answer(&mut live, &challenge);
        let choices = offered["SecurityChallenges"][0]["Iterables"].as_array().unwrap().clone();
        assert_eq!(choices.len(), 2);
        for (fake, real) in choices.iter().zip(["514-555-0199", "438-555-0123"]) {
            let fake = fake.as_str().unwrap();
            assert!(fake != real && fake.len() == real.len() && fake.chars().nth(3) == Some('-'), "{fake}");
        }
        // The next request answers with the chosen number as its key: disguised the same way,
        // so that a replaying client, which was offered the disguise, sends what was recorded.
        let mut body = json!({"RequestId": "r-1-long", "SecurityResponses": {"514-555-0199": ["Text"]}});
        live.request_value(&mut body, None);
        let responses = body["SecurityResponses"].as_object().unwrap();
        assert_eq!(responses.keys().collect::<Vec<_>>(), [choices[0].as_str().unwrap()]);
        assert_eq!(responses[choices[0].as_str().unwrap()], json!([REDACTED]));
        assert!(live.redactions().iter().any(|field| field.contains("phone numbers")));
        // The public test instance's numbers are public test data.
        let mut public = Redactor::new(Origin::TestInstance, "cid");
        assert_eq!(answer(&mut public, &challenge)["SecurityChallenges"], challenge["SecurityChallenges"]);
    }
}

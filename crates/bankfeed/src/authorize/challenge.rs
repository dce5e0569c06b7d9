//! The multi-factor challenge model: a 203 answer holds one or more security challenges, all
//! answered in one call under the 203's RequestId.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use crate::data::fields::field;
use crate::data::institution::{Institution, NamedInstitution};
use crate::masking::SentSecrets;

/// The type of a security challenge (docs/protocol.md#challenges-and-answer-rules); an unknown
/// type is kept as sent and answered as free text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChallengeType {
    QuestionAndAnswer,
    ImageSelection,
    MultipleChoice,
    MultipleChoiceMultipleAnswers,
    TextOrCall,
    WaitUntilEUAccept,
    Other(String),
}

impl ChallengeType {
    pub fn parse(name: &str) -> Self {
        match name {
            "QuestionAndAnswer" => ChallengeType::QuestionAndAnswer,
            "ImageSelection" => ChallengeType::ImageSelection,
            "MultipleChoice" => ChallengeType::MultipleChoice,
            "MultipleChoiceMultipleAnswers" => ChallengeType::MultipleChoiceMultipleAnswers,
            "TextOrCall" => ChallengeType::TextOrCall,
            "WaitUntilEUAccept" => ChallengeType::WaitUntilEUAccept,
            other => ChallengeType::Other(other.to_owned()),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            ChallengeType::QuestionAndAnswer => "QuestionAndAnswer",
            ChallengeType::ImageSelection => "ImageSelection",
            ChallengeType::MultipleChoice => "MultipleChoice",
            ChallengeType::MultipleChoiceMultipleAnswers => "MultipleChoiceMultipleAnswers",
            ChallengeType::TextOrCall => "TextOrCall",
            ChallengeType::WaitUntilEUAccept => "WaitUntilEUAccept",
            ChallengeType::Other(name) => name,
        }
    }
}

/// One element of `SecurityChallenges`.
#[derive(Clone, PartialEq)]
pub struct SecurityChallenge {
    pub kind: ChallengeType,
    /// The question, verbatim: also the key of its answer.
    pub prompt: String,
    /// `Iterables`: the choices of choice-type challenges.
    pub choices: Option<Vec<String>>,
    /// The element as sent.
    pub raw: Value,
}

impl SecurityChallenge {
    /// One element of `SecurityChallenges`; what is wrong with it, when it is not a challenge.
    pub(super) fn from_value(raw: Value) -> Result<Self, String> {
        if !raw.is_object() {
            return Err("a security challenge is not an object".into());
        }
        let get = |name: &str| field(&raw, name);
        let kind = get("Type").and_then(Value::as_str).ok_or("a security challenge has no Type")?;
        let prompt = get("Prompt").and_then(Value::as_str).ok_or("a security challenge has no Prompt")?;
        let choices = match get("Iterables") {
            None | Some(Value::Null) => None,
            Some(Value::Array(items)) => Some(
                items
                    .iter()
                    .map(|item| item.as_str().map(str::to_owned).ok_or("an Iterables item is not a string"))
                    .collect::<Result<Vec<_>, _>>()?,
            ),
            Some(_) => return Err("Iterables is not an array".into()),
        };
        Ok(SecurityChallenge { kind: ChallengeType::parse(kind), prompt: prompt.to_owned(), choices, raw })
    }

    /// Whether the prompt asks for a SecurID-type code, which must be six digits.
    pub fn is_security_code(&self) -> bool {
        let prompt = self.prompt.to_ascii_lowercase();
        self.kind == ChallengeType::QuestionAndAnswer
            && self.choices.is_none()
            && (prompt.contains("securid") || prompt.contains("security code") || prompt.contains("6-digit code"))
    }
}

impl fmt::Debug for SecurityChallenge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Image choices are ~4,000 characters each: show their count, not their text.
        let mut debug = f.debug_struct("SecurityChallenge");
        debug.field("type", &self.kind.as_str()).field("prompt", &self.prompt);
        match (&self.kind, &self.choices) {
            (ChallengeType::ImageSelection, Some(choices)) => debug.field("images", &choices.len()),
            (_, Some(choices)) => debug.field("choices", choices),
            (_, None) => &mut debug,
        };
        debug.finish()
    }
}

/// The most challenges one 203 may carry. The service asks three at once at most in the flows
/// seen; a step of thousands is a server's fault, and each challenge costs the caller a prompt, a
/// Python object and a check, so a step past this is refused rather than handed to a handler
/// (docs/protocol.md#challenges-and-answer-rules).
pub const MAX_CHALLENGES: usize = 100;

/// A 203 answer: the challenges to answer before the session opens.
#[derive(Clone)]
pub struct Challenge {
    pub request_id: String,
    pub challenges: Vec<SecurityChallenge>,
    pub institution: Option<Institution>,
    /// `InstitutionName` and `InstitutionId`, or what `Institution` gives.
    pub named_institution: NamedInstitution,
    /// The LoginId the request named (saved-connection flows), carried to the session.
    pub login_id: Option<String>,
    /// The body as sent.
    pub raw: Arc<[u8]>,
    /// The secrets the calls of this login sent up to this challenge (the username and password,
    /// the tokens, earlier answers): its answer's call masks them too
    /// (docs/errors.md#secrets-a-server-repeats). Never shown: its Debug is a count.
    pub(crate) sent: SentSecrets,
}

impl Challenge {
    pub fn prompts(&self) -> impl Iterator<Item = &str> {
        self.challenges.iter().map(|c| c.prompt.as_str())
    }
}

impl fmt::Debug for Challenge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Challenge").field("request_id", &self.request_id).field("challenges", &self.challenges).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use serde_json::json;

    fn parse(body: Value) -> Result<Challenge, Error> {
        Challenge::parse(serde_json::to_vec(&body).unwrap(), None)
    }

    #[test]
    fn a_203_parses_into_typed_challenges() {
        let challenge = parse(json!({"RequestId": "11111111-2222-3333-4444-555555555555", "Institution": "FlinksCapital", "HttpStatusCode": 203,
            "SecurityChallenges": [
                {"Type": "QuestionAndAnswer", "Prompt": "What city were you born in?"},
                {"Type": "MultipleChoice", "Prompt": "Pick", "Iterables": ["a", "b"]},
                {"Type": "SomethingNew", "Prompt": "?"}]}))
        .unwrap();
        assert_eq!(challenge.request_id, "11111111-2222-3333-4444-555555555555");
        assert_eq!(challenge.institution, Some(Institution::Name("FlinksCapital".into())));
        let kinds: Vec<_> = challenge.challenges.iter().map(|c| c.kind.clone()).collect();
        assert_eq!(
            kinds,
            [
                ChallengeType::QuestionAndAnswer,
                ChallengeType::MultipleChoice,
                ChallengeType::Other("SomethingNew".into())
            ]
        );
        assert_eq!(challenge.challenges[1].choices.as_deref(), Some(&["a".to_owned(), "b".to_owned()][..]));
        assert_eq!(challenge.challenges[2].raw, json!({"Type": "SomethingNew", "Prompt": "?"}));
    }

    #[test]
    fn a_recorded_203_names_its_institution() {
        let challenge = parse(json!({"HttpStatusCode": 203,
            "Links": [{"rel": "Authorization", "href": "/Authorize", "example": null}],
            "SecurityChallenges": [{"Type": "QuestionAndAnswer", "Prompt": "Which river runs past the mill?"}],
            "InstitutionName": "Made Up Bank", "InstitutionId": 31, "Institution": "MadeUpBank",
            "RequestId": "c0ffee00-1111-4222-8333-444455556666"}))
        .unwrap();
        assert_eq!(challenge.named_institution.name.as_deref(), Some("Made Up Bank"));
        assert_eq!(challenge.named_institution.id.as_deref(), Some("31"));
        assert_eq!(challenge.institution, Some(Institution::Name("MadeUpBank".into())));
    }

    #[test]
    fn a_203_whose_request_id_is_not_a_guid_is_the_servers_surprise() {
        for id in ["r", "../Authorize", "11111111-2222-3333-4444-55555555555g"] {
            match parse(json!({"RequestId": id, "SecurityChallenges": [{"Type": "QuestionAndAnswer", "Prompt": "p"}]}))
            {
                Err(Error::Protocol { operation, status, message, .. }) => {
                    assert_eq!((operation.as_str(), status), ("Authorize", 203));
                    assert!(message.contains("not a GUID"), "{message}");
                }
                other => panic!("{id}: {other:?}"),
            }
        }
    }

    #[test]
    fn a_203_with_more_challenges_than_a_step_may_carry_is_refused() {
        let step = |count: usize| {
            let items: Vec<Value> =
                (0..count).map(|i| json!({"Type": "QuestionAndAnswer", "Prompt": format!("Q{i}?")})).collect();
            parse(json!({"RequestId": "11111111-2222-3333-4444-555555555555", "SecurityChallenges": items}))
        };
        assert_eq!(step(MAX_CHALLENGES).unwrap().challenges.len(), MAX_CHALLENGES);
        match step(MAX_CHALLENGES + 1) {
            Err(Error::Protocol { status: 203, message, .. }) => {
                assert!(message.contains(&format!("{} security challenges", MAX_CHALLENGES + 1)), "{message}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_203_without_challenges_is_refused() {
        assert!(parse(json!({"RequestId": "11111111-2222-3333-4444-555555555555", "SecurityChallenges": []})).is_err());
        assert!(parse(json!({"SecurityChallenges": [{"Type": "QuestionAndAnswer", "Prompt": "p"}]})).is_err());
    }

    #[test]
    fn images_decode_from_base64_and_data_urls() {
        let challenge = parse(json!({"RequestId": "11111111-2222-3333-4444-555555555555", "SecurityChallenges": [
            {"Type": "ImageSelection", "Prompt": "Pick yours", "Iterables": ["iVBORw==", "data:image/png;base64,iVBORw=="]}]}))
        .unwrap();
        let images = challenge.challenges[0].images().unwrap().unwrap();
        assert_eq!(images, vec![vec![0x89, b'P', b'N', b'G'], vec![0x89, b'P', b'N', b'G']]);
        assert!(!format!("{challenge:?}").contains("iVBOR"));
    }

    #[test]
    fn security_code_prompts_are_recognised() {
        let make = |prompt: &str| {
            SecurityChallenge::from_value(json!({"Type": "QuestionAndAnswer", "Prompt": prompt})).unwrap()
        };
        assert!(make("Enter the 6-digit security code from your SecurID token").is_security_code());
        assert!(make("Enter the security code we sent you").is_security_code());
        assert!(!make("What city were you born in?").is_security_code());
    }
}

//! Reading a 203 of Authorize into a [`Challenge`], and an image challenge's images: what can
//! fail with an [`Error`], kept apart from the challenge model, which errors carry.

use base64::Engine;
use serde_json::Value;

use super::challenge::{Challenge, ChallengeType, SecurityChallenge, MAX_CHALLENGES};
use crate::data::fields::field;
use crate::data::institution::{Institution, NamedInstitution};
use crate::data::json;
use crate::data::login::is_guid;
use crate::error::Error;
use crate::masking::SentSecrets;

impl SecurityChallenge {
    /// The decoded images of an `ImageSelection` challenge, in the order of `choices`.
    pub fn images(&self) -> Option<Result<Vec<Vec<u8>>, Error>> {
        if self.kind != ChallengeType::ImageSelection {
            return None;
        }
        let choices = self.choices.as_deref().unwrap_or_default();
        Some(choices.iter().enumerate().map(|(index, choice)| decode_image(index, choice)).collect())
    }
}

impl Challenge {
    /// Reads a 203 of Authorize. A body that is not JSON is a decode error; JSON that is not a
    /// challenge (no RequestId, no SecurityChallenges) is a protocol surprise.
    pub(crate) fn parse(bytes: Vec<u8>, login_id: Option<&str>) -> Result<Self, Error> {
        let body: Value = json::decode("Authorize", 203, &bytes)?;
        let read = || -> Result<(String, Vec<SecurityChallenge>, Option<Institution>), String> {
            if !body.is_object() {
                return Err("the 203 body is not a JSON object".into());
            }
            let get = |name: &str| field(&body, name);
            let request_id = get("RequestId").and_then(Value::as_str).ok_or("the 203 has no RequestId")?;
            // The answers go back under this RequestId, which must be a GUID: the server sent
            // another shape, so it is the server's surprise, not the caller's ConfigError later.
            if !is_guid(request_id) {
                return Err("the 203's RequestId is not a GUID, so no answer could be sent under it".into());
            }
            let items =
                get("SecurityChallenges").and_then(Value::as_array).ok_or("the 203 has no SecurityChallenges")?;
            if items.is_empty() {
                return Err("the 203 has an empty SecurityChallenges list".into());
            }
            if items.len() > MAX_CHALLENGES {
                return Err(format!(
                    "the 203 has {} security challenges, more than the {MAX_CHALLENGES} a step may carry \
                     (docs/protocol.md#challenges-and-answer-rules)",
                    items.len()
                ));
            }
            let challenges = items.iter().cloned().map(SecurityChallenge::from_value).collect::<Result<_, _>>()?;
            let institution = get("Institution").cloned().and_then(|v| serde_json::from_value(v).ok());
            Ok((request_id.to_owned(), challenges, institution))
        };
        let (request_id, challenges, institution) =
            read().map_err(|message| Error::protocol("Authorize", 203, message, &bytes))?;
        let named_institution = NamedInstitution::of(&body, institution.as_ref());
        Ok(Challenge {
            request_id,
            challenges,
            institution,
            named_institution,
            login_id: login_id.map(str::to_owned),
            raw: bytes.into(),
            sent: SentSecrets::default(),
        })
    }
}

fn decode_image(index: usize, choice: &str) -> Result<Vec<u8>, Error> {
    // Some services send data URLs; the bytes follow the comma.
    let data = choice.split_once("base64,").map_or(choice, |(_, data)| data).trim();
    base64::engine::general_purpose::STANDARD.decode(data).map_err(|e| Error::Decode {
        operation: "ImageSelection".to_owned(),
        status: 203,
        message: format!("image {index} is not valid base64: {e}"),
        snippet: crate::shown::snippet(choice, 40),
        resumable: None,
    })
}

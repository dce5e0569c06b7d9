//! An error with what a call sent masked in what the server said (docs/errors.md#secrets-a-server-repeats).
//!
//! Apart from `masking.rs`, which knows only texts and JSON values: an error can hold a
//! challenge, and a challenge keeps the secrets of the calls before it, so masking that needed
//! the error type would import itself in a circle.

use crate::error::{known_code, ApiError, Body, Error, Resumable};
use crate::masking::SentSecrets;

impl SentSecrets {
    /// `error` with every secret masked in what the server said: an `ApiError`'s code (one the
    /// client does not know), message, RequestId and body; a protocol surprise's or a decode
    /// error's message and snippet. A challenge is left as it came: its prompts are what the
    /// person answers, and an answer is matched to its prompt word for word.
    pub fn error(&self, error: Error) -> Error {
        if self.is_empty() {
            return error;
        }
        match error {
            Error::Api(api) => Error::Api(Box::new(self.api(*api))),
            Error::AnswerRefused { error, challenge } => {
                Error::AnswerRefused { error: Box::new(self.api(*error)), challenge }
            }
            Error::TooManyChallenges { rounds, request_id } => {
                Error::TooManyChallenges { rounds, request_id: self.id(&request_id) }
            }
            Error::PendingTimeout { operation, request_id, waited, partial } => {
                Error::PendingTimeout { operation, request_id: request_id.map(|id| self.id(&id)), waited, partial }
            }
            Error::Transport { operation, message, timed_out, attempts, deadline, resumable, proxy, cached } => {
                Error::Transport {
                    operation,
                    message,
                    timed_out,
                    attempts,
                    deadline,
                    resumable: resumable.map(|resumable| Box::new(self.resumable(&resumable))),
                    proxy,
                    cached,
                }
            }
            Error::Protocol { operation, status, message, request_id, snippet } => Error::Protocol {
                operation,
                status,
                message: self.text(&message),
                request_id: request_id.map(|id| self.id(&id)),
                snippet: self.text(&snippet),
            },
            Error::OtherLogin { operation, message, request_id, snippet } => Error::OtherLogin {
                operation,
                message: self.text(&message),
                request_id: self.id(&request_id),
                snippet: self.text(&snippet),
            },
            Error::Decode { operation, status, message, snippet, resumable } => Error::Decode {
                operation,
                status,
                message: self.text(&message),
                snippet: self.text(&snippet),
                resumable: resumable.map(|resumable| Box::new(self.resumable(&resumable))),
            },
            other => other,
        }
    }

    fn api(&self, mut api: ApiError) -> ApiError {
        api.code = api.code.map(|code| self.code(&code));
        api.message = api.message.map(|message| self.text(&message));
        api.request_id = api.request_id.map(|id| self.id(&id));
        api.body = match api.body {
            Body::Json(mut value) => {
                self.value(&mut value);
                Body::Json(value)
            }
            Body::Text(text) => Body::Text(self.text(&text)),
        };
        api
    }

    /// A code the server sent: kept when the client knows it (it decides the error's class),
    /// otherwise masked as an identifier.
    pub(crate) fn code(&self, code: &str) -> String {
        if known_code(code) {
            code.to_owned()
        } else {
            self.id(code)
        }
    }

    fn resumable(&self, resumable: &Resumable) -> Resumable {
        Resumable { request_id: self.id(&resumable.request_id) }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::masking::tests::sent;
    use crate::secret::Secret;

    #[test]
    fn the_servers_words_in_every_error_are_masked() {
        let sent = sent(&["hunter2"]);
        let api = ApiError {
            status: 401,
            code: Some("HUNTER2".to_owned()),
            message: Some("no hunter2".to_owned()),
            request_id: Some("r-hunter2".to_owned()),
            body: Body::Json(json!({"Message": "no hunter2"})),
            retry_after: None,
            attempts: 1,
            operation: None,
        };
        let shown = format!("{:?}", sent.error(Error::Api(Box::new(api))));
        assert!(!shown.to_lowercase().contains("hunter2"), "{shown}");
        let protocol = Error::protocol("Investments", 200, "odd hunter2", br#"{"x": "hunter2"}"#);
        let shown = format!("{:?}", sent.error(protocol));
        assert!(!shown.contains("hunter2"), "{shown}");
        // A known code is kept, so that the error keeps its class.
        let mut known = sent.clone();
        known.add(&Secret::new("PASS"));
        let refused = ApiError { code: Some("INVALID_PASSWORD".to_owned()), ..api_error() };
        match known.error(Error::Api(Box::new(refused))) {
            Error::Api(api) => assert_eq!(api.code.as_deref(), Some("INVALID_PASSWORD")),
            other => panic!("{other:?}"),
        }
    }

    fn api_error() -> ApiError {
        ApiError {
            status: 401,
            code: None,
            message: None,
            request_id: None,
            body: Body::Text(String::new()),
            retry_after: None,
            attempts: 1,
            operation: None,
        }
    }
}

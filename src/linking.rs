//! The client's calls of the account-linking operations outside any session: the nightly
//! refresh and its status, the stored answers to security questions, and the institutions
//! (docs/protocol.md#operations-beyond-the-interface). None is polled: each is one request sent
//! through `Http::send`, as DeleteCard is.

use serde_json::{json, Value};

use crate::call::Call;
use crate::client::Client;
use crate::data::answer::Reply;
use crate::data::json;
use crate::data::login::guid;
use crate::error::Error;
use crate::http::ApiRequest;
use crate::ops;
use crate::protocol::{self, PathValues, WireOp};
use crate::secret::Secret;

/// The most institutions a page of Institutions holds (its `take`), and the most pages read: a
/// service whose `Count` never ends the paging cannot keep a call going for ever.
const INSTITUTIONS_PAGE: usize = 1000;
const MAX_INSTITUTION_PAGES: usize = 100;

impl Client {
    /// SetScheduledRefresh: turns the nightly refresh of a saved login on (`on`) or off. Returns
    /// the state set, which later answers show as `Login.IsScheduledRefresh`.
    pub async fn set_scheduled_refresh(&self, call: &Call, login_id: &str, on: bool) -> Result<bool, Error> {
        let wire = &protocol::SET_SCHEDULED_REFRESH;
        call.doing(wire.name);
        guid("login_id", login_id)?;
        let request = self.linking(wire, None)?.json(&json!({"LoginId": login_id, "IsActivated": on}))?;
        self.send_linking(call, wire, &request).await?;
        Ok(on)
    }

    /// GetMFAQuestions: the security questions of a saved login, in the order the service lists
    /// them.
    pub async fn mfa_questions(&self, call: &Call, login_id: &str) -> Result<Vec<String>, Error> {
        let wire = &protocol::GET_MFA_QUESTIONS;
        call.doing(wire.name);
        guid("login_id", login_id)?;
        let request = self.linking(wire, Some(login_id))?;
        let (status, bytes) = self.send_linking(call, wire, &request).await?;
        questions_of(wire.name, status, &bytes)
    }

    /// AnswerMFAQuestions: stores `answers` (question, answer) for a saved login, which the
    /// service gives for itself when a refresh asks those questions. Each question and answer must
    /// be non-blank; the error names the question, never an answer (answers are secrets).
    pub async fn answer_mfa_questions(
        &self,
        call: &Call,
        login_id: &str,
        answers: &[(String, String)],
    ) -> Result<(), Error> {
        let wire = &protocol::ANSWER_MFA_QUESTIONS;
        call.doing(wire.name);
        guid("login_id", login_id)?;
        let questions = answer_list(answers)?;
        let request = self.linking(wire, None)?.json(&json!({"LoginId": login_id, "Questions": questions}))?;
        self.send_linking(call, wire, &request).await?;
        Ok(())
    }

    /// GetNightlyRefreshStatus: the saved logins whose nightly refresh is on but cannot run,
    /// each as the service describes it (`LoginId`, `LastRefreshDate`, `LastRefreshState`,
    /// `LastRefreshErrorCode`). It asks for the secret key, sent as `Authorization: Bearer`.
    pub async fn nightly_refresh_status(&self, call: &Call) -> Result<Vec<Value>, Error> {
        let wire = &protocol::GET_NIGHTLY_REFRESH_STATUS;
        call.doing(wire.name);
        let mut request = self.linking(wire, None)?;
        if let Some(secret) = &self.config().secret_key {
            request = request.header("authorization", Secret::new(format!("Bearer {}", secret.expose())));
        }
        let (status, bytes) = self.send_linking(call, wire, &request).await?;
        list_of(wire.name, status, &bytes, "IneligibleCards")
    }

    /// Institutions: every institution the service supports, read page by page (`skip` and
    /// `take`) until `Count` of them have come.
    pub async fn institutions(&self, call: &Call) -> Result<Vec<Value>, Error> {
        let wire = &protocol::INSTITUTIONS;
        call.doing(wire.name);
        let base = ops::url(wire, self.config(), &PathValues::new(&self.config().customer_id))?;
        let mut institutions: Vec<Value> = Vec::new();
        for _ in 0..MAX_INSTITUTION_PAGES {
            let url = format!("{base}?skip={}&take={INSTITUTIONS_PAGE}", institutions.len());
            let request = self.with_api_key(ApiRequest::new(wire.name, wire.method.into(), url));
            let (status, bytes) = self.send_linking(call, wire, &request).await?;
            let page = list_of(wire.name, status, &bytes, "Data")?;
            let count = serde_json::from_slice::<Value>(&bytes)
                .ok()
                .and_then(|body| json::field(&body, "Count").and_then(Value::as_u64));
            let empty = page.is_empty();
            institutions.extend(page);
            let total = count.and_then(|count| usize::try_from(count).ok()).unwrap_or(institutions.len());
            if empty || institutions.len() >= total {
                return Ok(institutions);
            }
        }
        Ok(institutions)
    }

    /// The request of `wire`, with the API key: its path names `login_id` when it has one.
    fn linking(&self, wire: &'static WireOp, login_id: Option<&str>) -> Result<ApiRequest, Error> {
        let customer = PathValues::new(&self.config().customer_id);
        let values = match login_id {
            Some(login_id) => customer.login_id(login_id),
            None => customer,
        };
        Ok(self.with_api_key(self.request(wire, values)?))
    }

    /// Sends `request`; its 2xx answer's status and body, unless its envelope says error.
    async fn send_linking(&self, call: &Call, wire: &WireOp, request: &ApiRequest) -> Result<(u16, Vec<u8>), Error> {
        match self.http()?.send(request, call).await? {
            Reply::Data { status, bytes } => {
                json::check_error_envelope(wire.name, status, &bytes)?;
                Ok((status, bytes))
            }
            reply => Err(reply.unexpected(wire.name, "expected a final answer: this operation is not polled")),
        }
    }
}

/// `answers` as the body's `Questions`, each checked (docs/protocol.md#operations-beyond-the-interface).
fn answer_list(answers: &[(String, String)]) -> Result<Vec<Value>, Error> {
    if answers.is_empty() {
        return Err(Error::config("answers", "must hold at least one question and its answer"));
    }
    answers
        .iter()
        .map(|(question, answer)| {
            if question.trim().is_empty() {
                return Err(Error::config(
                    "answers",
                    "has a blank question: each key is a question GetMFAQuestions lists",
                ));
            }
            if answer.trim().is_empty() {
                return Err(Error::config("answers", format!("has a blank answer to {question:?}")));
            }
            Ok(json!({"Question": question, "Answer": answer}))
        })
        .collect()
}

/// The list `key` of an answer of `operation`, its entries as they came.
fn list_of(operation: &str, status: u16, bytes: &[u8], key: &str) -> Result<Vec<Value>, Error> {
    let body: Value = serde_json::from_slice(bytes)
        .map_err(|_| Error::protocol(operation, status, "the answer is not JSON", bytes))?;
    match json::field(&body, key) {
        Some(Value::Array(items)) => Ok(items.clone()),
        _ => Err(Error::protocol(operation, status, format!("the answer holds no list of {key}"), bytes)),
    }
}

/// The `Question` of each entry of a GetMFAQuestions answer's `Questions`.
fn questions_of(operation: &str, status: u16, bytes: &[u8]) -> Result<Vec<String>, Error> {
    let body: Value = serde_json::from_slice(bytes)
        .map_err(|_| Error::protocol(operation, status, "the answer is not JSON", bytes))?;
    let Some(Value::Array(items)) = json::field(&body, "Questions") else {
        return Err(Error::protocol(operation, status, "the answer holds no list of Questions", bytes));
    };
    items
        .iter()
        .map(|item| match json::field(item, "Question") {
            Some(Value::String(question)) => Ok(question.clone()),
            _ => Err(Error::protocol(operation, status, "an entry of Questions has no Question text", bytes)),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_checked_without_showing_them() {
        assert!(answer_list(&[]).is_err());
        let blank = answer_list(&[("Q?".to_owned(), " ".to_owned())]).unwrap_err().to_string();
        assert!(blank.contains("answers") && blank.contains("Q?"), "{blank}");
        let body = answer_list(&[("Q?".to_owned(), "secret answer".to_owned())]).unwrap();
        assert_eq!(body, [json!({"Question": "Q?", "Answer": "secret answer"})]);
    }

    #[test]
    fn questions_are_read_in_order_and_a_body_without_them_is_a_protocol_surprise() {
        let body = br#"{"Message": "SUCCESS", "Questions": [{"Question": "A?"}, {"question": "B?"}]}"#;
        assert_eq!(questions_of("GetMFAQuestions", 200, body).unwrap(), ["A?", "B?"]);
        assert!(matches!(questions_of("GetMFAQuestions", 200, b"{}"), Err(Error::Protocol { .. })));
    }
}

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
/// The most institutions `institutions()` reads, whatever `Count` says
/// (docs/protocol.md#operations-beyond-the-interface).
const MAX_INSTITUTIONS: usize = INSTITUTIONS_PAGE * MAX_INSTITUTION_PAGES;

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
        let answered = answers.iter().map(|(_, answer)| Secret::new(answer.clone()));
        let request =
            self.linking(wire, None)?.json(&json!({"LoginId": login_id, "Questions": questions}))?.carrying(answered);
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
    /// `take`) until `Count` of them have come. What a server can make the client hold is
    /// bounded: a page of more than the `take` asked for, an entry that is not an object, a
    /// `Count` past 100,000 (100 pages of 1,000), pages past `max_body_bytes` in all, or a `Count`
    /// not reached in 100 pages is a protocol surprise, never a list cut short
    /// (docs/protocol.md#operations-beyond-the-interface).
    pub async fn institutions(&self, call: &Call) -> Result<Vec<Value>, Error> {
        let wire = &protocol::INSTITUTIONS;
        call.doing(wire.name);
        let base = ops::url(wire, self.config(), &PathValues::new(&self.config().customer_id))?;
        let limit = self.config().max_body_bytes;
        let mut institutions: Vec<Value> = Vec::new();
        let mut read: usize = 0;
        let mut last_status = 200;
        for _ in 0..MAX_INSTITUTION_PAGES {
            let url = format!("{base}?skip={}&take={INSTITUTIONS_PAGE}", institutions.len());
            let request = self.with_api_key(ApiRequest::new(wire.name, wire.method.into(), url));
            let (status, bytes) = self.send_linking(call, wire, &request).await?;
            last_status = status;
            read = read.saturating_add(bytes.len());
            if read > limit {
                let message = format!(
                    "its pages hold more than max_body_bytes ({limit} bytes) in all; raise max_body_bytes if that \
                     many institutions are expected"
                );
                return Err(Error::protocol(wire.name, status, message, &[]));
            }
            let (page, count) = institution_page(wire.name, status, &bytes)?;
            let empty = page.is_empty();
            institutions.extend(page);
            let total = count.unwrap_or(institutions.len());
            if empty || institutions.len() >= total {
                return Ok(institutions);
            }
        }
        let message = format!(
            "{} institutions came in {MAX_INSTITUTION_PAGES} pages, short of its Count: the client reads at most \
             {MAX_INSTITUTION_PAGES} pages",
            institutions.len()
        );
        Err(Error::protocol(wire.name, last_status, message, &[]))
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

/// A page of Institutions: its institutions (`Data`, at most the `take` asked for, each an
/// object) and its `Count`, which may not pass [`MAX_INSTITUTIONS`].
fn institution_page(operation: &str, status: u16, bytes: &[u8]) -> Result<(Vec<Value>, Option<usize>), Error> {
    let surprise = |message: String| Error::protocol(operation, status, message, bytes);
    let body: Value = serde_json::from_slice(bytes).map_err(|_| surprise("the answer is not JSON".to_owned()))?;
    let count = match json::field(&body, "Count") {
        None | Some(Value::Null) => None,
        // As a number, or a number in a string (the service is lenient with types elsewhere too).
        Some(count) => match count
            .as_u64()
            .or_else(|| count.as_str().and_then(|text| text.trim().parse().ok()))
            .and_then(|count| usize::try_from(count).ok())
        {
            Some(count) if count <= MAX_INSTITUTIONS => Some(count),
            _ => {
                return Err(surprise(format!(
                    "its Count is {}, not a number of institutions up to {MAX_INSTITUTIONS}, the most the client \
                     reads ({MAX_INSTITUTION_PAGES} pages of {INSTITUTIONS_PAGE})",
                    crate::shown::shown(&count.to_string())
                )))
            }
        },
    };
    let Value::Object(mut fields) = body else { return Err(surprise("the answer holds no list of Data".to_owned())) };
    let key = fields.keys().find(|key| key.eq_ignore_ascii_case("Data")).cloned();
    let Some(Value::Array(page)) = key.and_then(|key| fields.remove(&key)) else {
        return Err(surprise("the answer holds no list of Data".to_owned()));
    };
    if page.len() > INSTITUTIONS_PAGE {
        return Err(surprise(format!(
            "a page holds {} institutions, more than the {INSTITUTIONS_PAGE} asked for (take)",
            page.len()
        )));
    }
    if let Some(at) = page.iter().position(|institution| !institution.is_object()) {
        return Err(surprise(format!("Data[{at}] is not an institution (a JSON object)")));
    }
    Ok((page, count))
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
    use std::time::Duration;

    use super::*;
    use crate::config::ClientConfig;
    use crate::http::stub;

    fn client(base: &str, tweak: impl FnOnce(&mut ClientConfig)) -> Client {
        let mut config = ClientConfig::new(base, "cust").unwrap();
        config.retry.max_retries = 0;
        config.timeout = Duration::from_secs(10);
        tweak(&mut config);
        Client::new(config).unwrap()
    }

    /// A page of Institutions with `entries` institutions (`{"Id": n}`) and `count`.
    fn page(entries: usize, count: impl std::fmt::Display) -> stub::Answer {
        let data: Vec<Value> = (0..entries).map(|id| json!({"Id": id})).collect();
        stub::Answer::new(200, format!(r#"{{"Data": {}, "Count": {count}}}"#, Value::Array(data)))
    }

    async fn institutions(client: &Client) -> Result<Vec<Value>, Error> {
        let call = client.call("Institutions");
        call.run(client.institutions(&call)).await
    }

    fn surprise(result: Result<Vec<Value>, Error>) -> String {
        match result {
            Err(error @ Error::Protocol { .. }) => error.to_string(),
            other => panic!("expected a protocol surprise, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn institutions_are_read_page_by_page_until_count() {
        let stub = stub::serve_answers(vec![page(1000, 1500), page(500, 1500)]);
        let read = institutions(&client(&stub.url, |_| {})).await.unwrap();
        assert_eq!(read.len(), 1500);
        let requests = stub.requests();
        assert!(requests[0].contains("?skip=0&take=1000 "), "{}", requests[0]);
        assert!(requests[1].contains("?skip=1000&take=1000 "), "{}", requests[1]);
    }

    #[tokio::test]
    async fn a_page_longer_than_the_take_asked_for_is_a_protocol_surprise() {
        let stub = stub::serve_answers(vec![page(1001, 5000), page(1000, 5000)]);
        let message = surprise(institutions(&client(&stub.url, |_| {})).await);
        assert!(message.contains("a page holds 1001 institutions, more than the 1000 asked for (take)"), "{message}");
        assert_eq!(stub.requests().len(), 1);
    }

    #[tokio::test]
    async fn a_count_past_the_most_the_client_reads_is_refused_at_once() {
        for count in ["100001", "1e12", "-1", r#""lots""#] {
            let stub = stub::serve_answers(vec![page(1000, count)]);
            let message = surprise(institutions(&client(&stub.url, |_| {})).await);
            assert!(message.contains("not a number of institutions up to 100000"), "{message}");
        }
        // The most it reads is still read, as is a Count written as text.
        let stub = stub::serve_answers(vec![page(3, r#""3""#)]);
        assert_eq!(institutions(&client(&stub.url, |_| {})).await.unwrap().len(), 3);
    }

    #[tokio::test]
    async fn an_entry_that_is_not_an_institution_is_a_protocol_surprise() {
        let stub = stub::serve_answers(vec![stub::Answer::new(200, r#"{"Data": [{"Id": 1}, 0, 0], "Count": 3}"#)]);
        let message = surprise(institutions(&client(&stub.url, |_| {})).await);
        assert!(message.contains("Data[1] is not an institution"), "{message}");
    }

    #[tokio::test]
    async fn pages_past_max_body_bytes_in_all_are_a_protocol_surprise() {
        // Each page fits the limit; the three together do not.
        let stub = stub::serve_answers(vec![page(1000, 3000), page(1000, 3000), page(1000, 3000)]);
        let one = page(1000, 3000).body.len();
        let client = client(&stub.url, |config| config.max_body_bytes = one * 2 + one / 2);
        let message = surprise(institutions(&client).await);
        assert!(message.contains("its pages hold more than max_body_bytes"), "{message}");
        assert_eq!(stub.requests().len(), 3);
    }

    #[tokio::test]
    async fn a_count_never_reached_ends_after_the_most_pages_with_an_error() {
        let stub = stub::serve_answers(vec![page(1, 100_000); MAX_INSTITUTION_PAGES + 1]);
        let message = surprise(institutions(&client(&stub.url, |_| {})).await);
        assert!(message.contains("100 institutions came in 100 pages, short of its Count"), "{message}");
        assert_eq!(stub.requests().len(), MAX_INSTITUTION_PAGES);
    }

    #[tokio::test]
    async fn an_error_repeating_the_answers_and_the_key_masks_them() {
        let body = r#"{"HttpStatusCode": 400, "FlinksCode": "INVALID_REQUEST",
            "Message": "refused {\"Answer\":\"Mont\u00e9al 1987\"} with key ak-9f3e2d1c", "RequestId": "ak-9f3e2d1c"}"#;
        let stub = stub::serve_answers(vec![stub::Answer::new(400, body)]);
        let client = client(&stub.url, |config| config.api_key = Some(Secret::new("ak-9f3e2d1c")));
        let call = client.call("AnswerMFAQuestions");
        let answers = [("City?".to_owned(), "Montéal 1987".to_owned())];
        let login = "5e0e5f83-6e9b-4a2c-a6a3-0d8f4b1c9e21";
        let error = call.run(client.answer_mfa_questions(&call, login, &answers)).await.unwrap_err();
        let shown = format!("{error} {error:?}");
        for secret in ["ak-9f3e2d1c", "Montéal 1987", "Mont\\u00e9al"] {
            assert!(!shown.contains(secret), "{secret} in {shown}");
        }
        assert!(shown.contains(r#"refused {\"Answer\":\"***\"} with key ***"#), "{shown}");
        // The request did carry both.
        assert!(stub.requests()[0].contains("Montéal 1987") && stub.requests()[0].contains("ak-9f3e2d1c"));
    }

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

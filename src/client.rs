//! The client: one per configuration, cheap to clone, sharing one HTTP connection pool.

use std::sync::Arc;

use reqwest::Method;
use serde_json::{json, Value};

use crate::authorize::{
    parse_step, Answers, AuthorizeRequest, Challenge, ChallengeHandler, Credentials, Session, Step,
};
use crate::config::ClientConfig;
use crate::data::accounts::{Accounts, Statements};
use crate::data::attributes::{Attributes, AttributesQuery};
use crate::data::investments::Investments;
use crate::data::json;
use crate::data::login::guid;
use crate::data::requests::{AccountsDetailOptions, AccountsSummaryOptions, StatementsOptions};
use crate::data::{Payload, Raw};
use crate::error::Error;
use crate::http::{ApiRequest, Http, Reply};
use crate::poll::poll;
use crate::secret::Secret;

#[derive(Clone, Debug)]
pub struct Client {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    config: ClientConfig,
    http: Http,
}

impl Client {
    pub fn new(config: ClientConfig) -> Result<Self, Error> {
        let http = Http::new(&config)?;
        Ok(Client { inner: Arc::new(Inner { config, http }) })
    }

    pub fn config(&self) -> &ClientConfig {
        &self.inner.config
    }

    fn banking_url(&self, operation: &str) -> String {
        let config = &self.inner.config;
        format!("{}/v3/{}/BankingServices/{operation}", config.base_url, config.customer_id)
    }

    /// Data operations carry the api key, when one is configured.
    fn with_api_key(&self, request: ApiRequest) -> ApiRequest {
        match &self.inner.config.api_key {
            Some(key) => request.header("x-api-key", key.clone()),
            None => request,
        }
    }

    /// One Authorize call, in any of its four shapes.
    pub async fn authorize(&self, request: AuthorizeRequest) -> Result<Step, Error> {
        request.validate()?;
        let mut http_request =
            ApiRequest::new("Authorize", Method::POST, self.banking_url("Authorize")).json(&request.body())?;
        if !request.idempotent() {
            http_request = http_request.not_idempotent();
        }
        if let Some(token) = self.authorize_token().await? {
            http_request = http_request.header("flinks-auth-key", token);
        }
        let reply = self.inner.http.send(&http_request).await?;
        parse_step(reply, request.login_id())
    }

    /// With a secret key, every Authorize needs a fresh single-use token.
    async fn authorize_token(&self) -> Result<Option<Secret>, Error> {
        let Some(secret) = &self.inner.config.secret_key else { return Ok(None) };
        let request =
            ApiRequest::new(TOKEN, Method::POST, self.banking_url(TOKEN)).header("flinks-auth-key", secret.clone());
        parse_token(self.inner.http.send(&request).await?).map(Some)
    }

    /// Answers the challenges of `challenge`, after checking every answer rule.
    pub async fn answer(&self, challenge: &Challenge, answers: Answers) -> Result<Step, Error> {
        challenge.validate(&answers)?;
        let request = AuthorizeRequest::Answer { request_id: challenge.request_id.clone(), responses: answers };
        let step = self.authorize(request).await?;
        // The answer call names no LoginId; a saved-connection flow's is carried over.
        Ok(match step {
            Step::Session(mut session) if session.login_id.is_none() => {
                session.login_id = challenge.login_id.clone();
                Step::Session(session)
            }
            Step::Challenge(mut next) => {
                next.login_id = challenge.login_id.clone();
                Step::Challenge(next)
            }
            step => step,
        })
    }

    /// Hands each challenge to `handler` and sends its answers, until a session opens, an error
    /// comes, or the bound of rounds is reached.
    pub async fn complete(&self, mut step: Step, handler: &mut dyn ChallengeHandler) -> Result<Session, Error> {
        let mut rounds = 0;
        loop {
            let challenge = match step {
                Step::Session(session) => return Ok(session),
                Step::Challenge(challenge) => challenge,
            };
            if rounds >= self.inner.config.max_challenge_rounds {
                return Err(Error::TooManyChallenges { rounds, request_id: challenge.request_id });
            }
            rounds += 1;
            let answers = handler.answer(&challenge).await?;
            step = self.answer(&challenge, answers).await?;
        }
    }

    /// A live login with credentials, every challenge answered by `handler`.
    pub async fn login(&self, credentials: Credentials, handler: &mut dyn ChallengeHandler) -> Result<Session, Error> {
        let step = self.authorize(AuthorizeRequest::Credentials(credentials)).await?;
        self.complete(step, handler).await
    }

    /// A cached read of a saved connection: a new RequestId for already processed data.
    pub async fn authorize_cached(&self, login_id: &str) -> Result<Session, Error> {
        match self.authorize(AuthorizeRequest::Cached { login_id: login_id.to_owned() }).await? {
            Step::Session(session) => Ok(session),
            Step::Challenge(challenge) => Err(Error::ChallengeRequired(Box::new(challenge))),
        }
    }

    /// Sends a data operation with the api key, polling 202 answers until 200.
    async fn fetch(
        &self,
        operation: &'static str,
        method: Method,
        url: String,
        body: Option<Value>,
        request_id: &str,
    ) -> Result<Raw, Error> {
        let mut request = self.with_api_key(ApiRequest::new(operation, method, url));
        if let Some(body) = body {
            request = request.json(&body)?;
        }
        let bytes = poll(&self.inner.http, &request, &self.inner.config.poll, Some(request_id)).await?;
        Ok(Raw(bytes.into()))
    }

    /// The Investments payload of an open session, 202 polled.
    pub async fn investments(&self, session: &Session) -> Result<Payload<Investments>, Error> {
        let config = &self.inner.config;
        let login_id = session_login_id(session)?;
        let url = format!("{}/v3/{}/Investments", config.investments_base_url, config.customer_id);
        let body = json!({"LoginId": login_id, "RequestId": session.request_id, "MostRecentCached": true});
        let raw = self.fetch("Investments", Method::POST, url, Some(body), &session.request_id).await?;
        typed("Investments", raw)
    }

    /// Cached Authorize of `login_id`, then its Investments.
    pub async fn investments_for_login(&self, login_id: &str) -> Result<Payload<Investments>, Error> {
        let session = self.authorize_cached(login_id).await?;
        self.investments(&session).await
    }

    /// GetAccountsDetail, 202 polled (on its `...Async` link when the 202 names one).
    pub async fn accounts_detail(
        &self,
        session: &Session,
        options: &AccountsDetailOptions,
    ) -> Result<Payload<Accounts>, Error> {
        options.validate()?;
        let body = options.body(&session.request_id);
        let raw = self
            .fetch(
                "GetAccountsDetail",
                Method::POST,
                self.banking_url("GetAccountsDetail"),
                Some(body),
                &session.request_id,
            )
            .await?;
        typed("GetAccountsDetail", raw)
    }

    /// GetAccountsSummary, 202 polled.
    pub async fn accounts_summary(
        &self,
        session: &Session,
        options: &AccountsSummaryOptions,
    ) -> Result<Payload<Accounts>, Error> {
        let body = options.body(&session.request_id);
        let raw = self
            .fetch(
                "GetAccountsSummary",
                Method::POST,
                self.banking_url("GetAccountsSummary"),
                Some(body),
                &session.request_id,
            )
            .await?;
        typed("GetAccountsSummary", raw)
    }

    /// GetStatements, 202 polled.
    pub async fn statements(
        &self,
        session: &Session,
        options: &StatementsOptions,
    ) -> Result<Payload<Statements>, Error> {
        options.validate()?;
        let body = options.body(&session.request_id);
        let raw = self
            .fetch("GetStatements", Method::POST, self.banking_url("GetStatements"), Some(body), &session.request_id)
            .await?;
        typed("GetStatements", raw)
    }

    /// Attributes of an open session, with the preparation of docs/protocol.md#attributes: account
    /// detail polled to 200 first, then the attributes call, itself polled (attributes answer 202
    /// while account detail is still being processed).
    pub async fn attributes(&self, session: &Session, query: &AttributesQuery) -> Result<Payload<Attributes>, Error> {
        if let AttributesQuery::Custom(custom) = query {
            custom.validate()?;
        }
        let login_id = session_login_id(session)?;
        self.accounts_detail(session, &AccountsDetailOptions::default()).await?;
        let config = &self.inner.config;
        let base = format!(
            "{}/v3/{}/insight/login/{login_id}/attributes/{}",
            config.base_url, config.customer_id, session.request_id
        );
        let raw = match query {
            AttributesQuery::Package(package) => {
                let url = format!("{base}/{}", package.operation());
                self.fetch(package.operation(), Method::GET, url, None, &session.request_id).await?
            }
            AttributesQuery::Custom(custom) => {
                self.fetch("Attributes", Method::POST, base, Some(custom.body()), &session.request_id).await?
            }
        };
        let data = Attributes::parse(raw.bytes())?;
        Ok(Payload { data, raw })
    }

    /// Cached Authorize of `login_id`, then [`Client::attributes`].
    pub async fn attributes_for_login(
        &self,
        login_id: &str,
        query: &AttributesQuery,
    ) -> Result<Payload<Attributes>, Error> {
        if let AttributesQuery::Custom(custom) = query {
            custom.validate()?;
        }
        let session = self.authorize_cached(login_id).await?;
        self.attributes(&session, query).await
    }

    /// DeleteCard: removes the retained data of a saved connection. Returns the answer: a JSON body
    /// as it came, a plain-text one as `{"Message": text}` (docs/protocol.md#deletecard).
    pub async fn delete_login(&self, login_id: &str) -> Result<Value, Error> {
        guid("login_id", login_id)?;
        let url = self.banking_url(&format!("DeleteCard/{login_id}"));
        let request = self.with_api_key(ApiRequest::new("DeleteCard", Method::DELETE, url));
        match self.inner.http.send(&request).await? {
            Reply::Data { bytes, .. } => Ok(delete_answer(&bytes)),
            reply => Err(reply.unexpected("DeleteCard", "expected a final answer: this operation is not polled")),
        }
    }
}

const TOKEN: &str = "GenerateAuthorizeToken";

/// The token of a GenerateAuthorizeToken answer. Any answer but a JSON object holding a non-empty
/// `Token` is a protocol surprise; the body is left out of the error whenever it might hold a
/// token (secrets never reach an error message).
fn parse_token(reply: Reply) -> Result<Secret, Error> {
    let (status, bytes) = match reply {
        Reply::Data { status, bytes } => (status, bytes),
        reply => return Err(reply.unexpected(TOKEN, "expected a 200 with a Token")),
    };
    // serde_json's syntax errors name a position, never the text, so the message is safe.
    let body: Value = serde_json::from_slice(&bytes).map_err(|e| Error::Decode {
        operation: TOKEN.to_owned(),
        status,
        message: format!("{e} (body withheld: it may hold a token)"),
        snippet: String::new(),
    })?;
    match json::field(&body, "Token") {
        Some(Value::String(token)) if !token.trim().is_empty() => Ok(Secret::new(token.clone())),
        None => Err(Error::protocol(TOKEN, status, "the answer holds no Token", &bytes)),
        Some(_) => Err(Error::Protocol {
            operation: TOKEN.to_owned(),
            status,
            message: "the Token is not a non-empty string (body withheld: it may hold a token)".to_owned(),
            request_id: json::text_field(&body, &["RequestId"]),
            snippet: String::new(),
        }),
    }
}

/// DeleteCard's success body is not documented and has been plain text: a JSON body is kept as
/// it came, any other as `{"Message": trimmed text}`, so that callers always get a JSON value.
fn delete_answer(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap_or_else(|_| json!({"Message": String::from_utf8_lossy(bytes).trim()}))
}

fn session_login_id(session: &Session) -> Result<&str, Error> {
    session
        .login_id
        .as_deref()
        .ok_or_else(|| Error::config("login_id", "is unknown for this session: open it with a login or a LoginId"))
}

fn typed<T: serde::de::DeserializeOwned>(operation: &'static str, raw: Raw) -> Result<Payload<T>, Error> {
    let data = json::decode(operation, 200, raw.bytes())?;
    Ok(Payload { data, raw })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::http::stub;

    const LOGIN: &str = "5e0e5f83-6e9b-4a2c-a6a3-0d8f4b1c9e21";

    fn client(base: &str, secret_key: bool) -> Client {
        let mut config = ClientConfig::new(base, "cust").unwrap();
        config.retry.max_retries = 0;
        config.poll.interval = Duration::from_millis(10);
        config.poll.timeout = Duration::from_secs(5);
        if secret_key {
            config.secret_key = Some(Secret::new("sk"));
        }
        Client::new(config).unwrap()
    }

    fn session() -> Session {
        Session {
            request_id: "11111111-2222-3333-4444-555555555555".into(),
            login_id: Some(LOGIN.into()),
            login: None,
            institution: None,
            links: Vec::new(),
            raw: Arc::from(&b"{}"[..]),
        }
    }

    fn protocol(result: Result<impl std::fmt::Debug, Error>) -> (String, u16, Option<String>, String) {
        match result {
            Err(Error::Protocol { operation, status, request_id, snippet, .. }) => {
                (operation, status, request_id, snippet)
            }
            other => panic!("expected a protocol error, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn a_data_call_answering_203_is_a_protocol_surprise_keeping_the_body() {
        let base = stub::serve(vec![(
            203,
            r#"{"RequestId": "r-203", "SecurityChallenges": [{"Type": "QuestionAndAnswer", "Prompt": "City?"}]}"#,
        )]);
        let result = client(&base, false).accounts_summary(&session(), &AccountsSummaryOptions::default()).await;
        let (operation, status, request_id, snippet) = protocol(result);
        assert_eq!((operation.as_str(), status, request_id.as_deref()), ("GetAccountsSummary", 203, Some("r-203")));
        assert!(snippet.contains("City?"), "{snippet}");
    }

    #[tokio::test]
    async fn a_token_call_without_a_token_is_a_protocol_surprise() {
        let base = stub::serve(vec![(200, r#"{"HttpStatusCode": 200, "RequestId": "r-t"}"#)]);
        let (operation, status, request_id, snippet) = protocol(client(&base, true).authorize_cached(LOGIN).await);
        assert_eq!((operation.as_str(), status, request_id.as_deref()), (TOKEN, 200, Some("r-t")));
        assert!(snippet.contains("HttpStatusCode"), "{snippet}");
    }

    #[tokio::test]
    async fn a_token_call_answering_202_or_203_is_a_protocol_surprise() {
        let base = stub::serve(vec![
            (202, r#"{"FlinksCode": "OPERATION_PENDING", "RequestId": "r-2"}"#),
            (203, r#"{"RequestId": "r-3", "SecurityChallenges": []}"#),
        ]);
        let client = client(&base, true);
        let (_, status, request_id, _) = protocol(client.authorize_cached(LOGIN).await);
        assert_eq!((status, request_id.as_deref()), (202, Some("r-2")));
        let (_, status, request_id, _) = protocol(client.authorize_cached(LOGIN).await);
        assert_eq!((status, request_id.as_deref()), (203, Some("r-3")));
    }

    #[tokio::test]
    async fn a_token_is_sent_with_authorize() {
        let base = stub::serve(vec![
            (200, r#"{"Token": "t-1"}"#),
            (200, r#"{"RequestId": "11111111-2222-3333-4444-555555555555", "Login": {"Id": "l"}}"#),
        ]);
        let session = client(&base, true).authorize_cached(LOGIN).await.unwrap();
        assert_eq!(session.login_id.as_deref(), Some("l"));
    }

    #[test]
    fn a_token_body_that_may_hold_a_token_stays_out_of_the_error() {
        let data = |bytes: &[u8]| Reply::Data { status: 200, bytes: bytes.to_vec() };
        match parse_token(data(br#"{"Token": "tok-secret"#)) {
            Err(error @ Error::Decode { .. }) => assert!(!format!("{error} {error:?}").contains("tok-secret")),
            other => panic!("{other:?}"),
        }
        match parse_token(data(br#"{"Token": ["tok-secret"], "RequestId": "r"}"#)) {
            Err(error @ Error::Protocol { .. }) => {
                assert!(!format!("{error} {error:?}").contains("tok-secret"));
                assert_eq!(error.request_id(), Some("r"));
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(parse_token(data(br#"{"token": " "}"#)), Err(Error::Protocol { .. })));
        assert_eq!(parse_token(data(br#"{"token": "t"}"#)).unwrap().expose(), "t");
    }

    #[tokio::test]
    async fn delete_card_answering_202_is_a_protocol_surprise() {
        let base = stub::serve(vec![(202, r#"{"FlinksCode": "OPERATION_PENDING", "RequestId": "r-d"}"#)]);
        let (operation, status, request_id, snippet) = protocol(client(&base, false).delete_login(LOGIN).await);
        assert_eq!((operation.as_str(), status, request_id.as_deref()), ("DeleteCard", 202, Some("r-d")));
        assert!(snippet.contains("OPERATION_PENDING"), "{snippet}");
    }

    #[tokio::test]
    async fn delete_card_answers_json_as_is_and_text_as_a_message() {
        let base = stub::serve(vec![(200, "  Card deleted.\n"), (200, r#"{"Message": "ok", "Extra": 1}"#)]);
        let client = client(&base, false);
        assert_eq!(client.delete_login(LOGIN).await.unwrap(), json!({"Message": "Card deleted."}));
        assert_eq!(client.delete_login(LOGIN).await.unwrap(), json!({"Message": "ok", "Extra": 1}));
        assert_eq!(delete_answer(b""), json!({"Message": ""}));
    }

    #[tokio::test]
    async fn authorize_answering_202_is_a_protocol_surprise() {
        let base = stub::serve(vec![(202, r#"{"FlinksCode": "OPERATION_PENDING", "RequestId": "r-a"}"#)]);
        let (operation, status, request_id, _) = protocol(client(&base, false).authorize_cached(LOGIN).await);
        assert_eq!((operation.as_str(), status, request_id.as_deref()), ("Authorize", 202, Some("r-a")));
    }
}

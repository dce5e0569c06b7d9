//! The client: one per configuration, cheap to clone, sharing one HTTP connection pool.

use std::sync::Arc;

use reqwest::Method;
use serde::Deserialize;
use serde_json::json;

use serde_json::Value;

use crate::authorize::{
    guid, parse_step, Answers, AuthorizeRequest, Challenge, ChallengeHandler, Credentials, Session, Step,
};
use crate::config::ClientConfig;
use crate::data::accounts::{Accounts, Statements};
use crate::data::attributes::{Attributes, AttributesQuery};
use crate::data::investments::Investments;
use crate::data::requests::{AccountsDetailOptions, AccountsSummaryOptions, StatementsOptions};
use crate::data::{Payload, Raw};
use crate::error::Error;
use crate::http::{self, ApiRequest, Http, Reply};
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
            ApiRequest::new("Authorize", Method::POST, self.banking_url("Authorize")).json(&request.body());
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
        #[derive(Deserialize)]
        struct TokenBody {
            #[serde(rename = "Token")]
            token: String,
        }
        let request =
            ApiRequest::new("GenerateAuthorizeToken", Method::POST, self.banking_url("GenerateAuthorizeToken"))
                .header("flinks-auth-key", secret.clone());
        match self.inner.http.send(&request).await? {
            Reply::Data(bytes) => {
                let body: TokenBody = http::decode("GenerateAuthorizeToken", 200, &bytes)?;
                Ok(Some(Secret::new(body.token)))
            }
            _ => Err(Error::Decode {
                operation: "GenerateAuthorizeToken".to_owned(),
                status: 0,
                message: "expected a 200 with a Token".to_owned(),
                snippet: String::new(),
            }),
        }
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
            request = request.json(&body);
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

    /// Attributes of an open session, with the preparation of interface-v3.md 4.5: account detail
    /// polled to 200 first, then the attributes call, itself polled (attributes answer 202 while
    /// account detail is still being processed).
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

    /// DeleteCard: removes the retained data of a saved connection. The success body is not
    /// documented (it has been plain text), so it is returned as received.
    pub async fn delete_login(&self, login_id: &str) -> Result<Raw, Error> {
        guid("login_id", login_id)?;
        let url = self.banking_url(&format!("DeleteCard/{login_id}"));
        let request = self.with_api_key(ApiRequest::new("DeleteCard", Method::DELETE, url));
        match self.inner.http.send(&request).await? {
            Reply::Data(bytes) => Ok(Raw(bytes.into())),
            _ => Err(Error::Decode {
                operation: "DeleteCard".to_owned(),
                status: 202,
                message: "DeleteCard did not answer with a final status".to_owned(),
                snippet: String::new(),
            }),
        }
    }
}

fn session_login_id(session: &Session) -> Result<&str, Error> {
    session
        .login_id
        .as_deref()
        .ok_or_else(|| Error::config("login_id", "is unknown for this session: open it with a login or a LoginId"))
}

fn typed<T: serde::de::DeserializeOwned>(operation: &'static str, raw: Raw) -> Result<Payload<T>, Error> {
    let data = http::decode(operation, 200, raw.bytes())?;
    Ok(Payload { data, raw })
}

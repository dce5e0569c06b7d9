//! The client: one per configuration, cheap to clone, sharing one HTTP connection pool.

use std::sync::Arc;

use reqwest::Method;
use serde::Deserialize;
use serde_json::json;

use crate::authorize::{parse_step, AuthorizeRequest, Answers, Challenge, ChallengeHandler, Credentials, Session, Step};
use crate::config::ClientConfig;
use crate::data::Raw;
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
        let mut http_request = ApiRequest::new("Authorize", Method::POST, self.banking_url("Authorize")).json(&request.body());
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
        let request = ApiRequest::new("GenerateAuthorizeToken", Method::POST, self.banking_url("GenerateAuthorizeToken"))
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

    /// The Investments payload of an open session, 202 polled.
    pub async fn investments(&self, session: &Session) -> Result<Raw, Error> {
        let config = &self.inner.config;
        let login_id = session.login_id.as_deref().ok_or_else(|| {
            Error::config("login_id", "is unknown for this session: open it with a login or a LoginId")
        })?;
        let url = format!("{}/v3/{}/Investments", config.investments_base_url, config.customer_id);
        let body = json!({"LoginId": login_id, "RequestId": session.request_id, "MostRecentCached": true});
        let request = self.with_api_key(ApiRequest::new("Investments", Method::POST, url).json(&body));
        let bytes = poll(&self.inner.http, &request, &config.poll, Some(&session.request_id)).await?;
        Ok(Raw(bytes.into()))
    }

    /// Cached Authorize of `login_id`, then its Investments.
    pub async fn investments_for_login(&self, login_id: &str) -> Result<Raw, Error> {
        let session = self.authorize_cached(login_id).await?;
        self.investments(&session).await
    }
}

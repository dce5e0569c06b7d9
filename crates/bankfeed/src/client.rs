//! The client: one per configuration, cheap to clone; every client of one configuration in a
//! process shares one HTTP connection pool (crates/bankfeed/src/pools.rs).

use std::sync::Arc;

use serde_json::{json, Value};

use crate::authorize::{
    parse_step, Answers, AuthorizeRequest, Challenge, ChallengeHandler, Credentials, Session, Step,
};
use crate::call::Call;
use crate::cassette::CassetteSession;
use crate::config::ClientConfig;
use crate::data::answer::Reply;
use crate::data::json;
use crate::data::login::{check_same_login, guid};
use crate::data::money::MoneyType;
use crate::data::requests::AccountsDetailOptions;
use crate::data::Raw;
use crate::error::Error;
use crate::fork::PerProcess;
use crate::http::{ApiRequest, Http, Transport};
use crate::masking::SharedSecrets;
use crate::ops::{self, DataOperation, Target};
use crate::poll::{poll, Pollable};
use crate::pools;
use crate::protocol::{self, PathValues, WireOp};
use crate::secret::Secret;
use crate::tables::{check_accounts, DataResult};

#[derive(Clone, Debug)]
pub struct Client {
    inner: Arc<Inner>,
    /// The secrets the calls of one bulk call share, for the copy a bulk call makes its calls
    /// with ([`Client::sharing_secrets`]); none for every other client.
    shared_secrets: Option<SharedSecrets>,
}

#[derive(Debug)]
struct Inner {
    config: ClientConfig,
    /// Made at random with the client and carried by its copies (pickles): what tells Dask that
    /// two copies are the same client, without anything derived from the keys.
    identity: uuid::Uuid,
    /// This client's hold on the pool of its configuration, which other clients of the same
    /// configuration in the process share (docs/architecture.md#one-pool-per-configuration).
    /// Taken again in a forked child: the pool's connections belong to the parent's runtime.
    http: PerProcess<Arc<Http>>,
    /// Where its requests go: live, or through a cassette (then on a pool of its own).
    transport: Transport,
    /// True once `close()` was called: every call in flight, in any thread, ends with
    /// `Error::Closed`, and new ones are refused.
    closed: tokio::sync::watch::Sender<bool>,
}

impl Client {
    /// A new client. It shares the connection pool, and the bound of `max_connections`, of the
    /// other clients of the same configuration in this process, if there are any.
    pub fn new(config: ClientConfig) -> Result<Self, Error> {
        Self::copy_of(config, uuid::Uuid::new_v4())
    }

    /// A copy of the client `identity` names (its [`Client::identity`]), made from its
    /// configuration: a client of its own, closed on its own, on the shared pool.
    pub fn copy_of(config: ClientConfig, identity: uuid::Uuid) -> Result<Self, Error> {
        let http = pools::shared(&config)?;
        let closed = tokio::sync::watch::Sender::new(false);
        let inner =
            Arc::new(Inner { config, identity, http: PerProcess::with(http), transport: Transport::Live, closed });
        Ok(Client { inner, shared_secrets: None })
    }

    /// A client whose requests go through `cassette` (docs/cassettes.md): answered from it, or
    /// sent and recorded, as its mode says. Its connections are its own, never a pool shared
    /// with live clients of the same configuration. Write what it recorded with
    /// [`CassetteSession::save`].
    pub fn with_cassette(config: ClientConfig, cassette: Arc<CassetteSession>) -> Result<Self, Error> {
        let transport = Transport::Cassette(cassette);
        let http = Arc::new(Http::new(&config)?.on(transport.clone()));
        let closed = tokio::sync::watch::Sender::new(false);
        let inner =
            Arc::new(Inner { config, identity: uuid::Uuid::new_v4(), http: PerProcess::with(http), transport, closed });
        Ok(Client { inner, shared_secrets: None })
    }

    /// The cassette this client's requests go through, if it is on one (its copies share it).
    pub fn cassette(&self) -> Option<&Arc<CassetteSession>> {
        match &self.inner.transport {
            Transport::Cassette(cassette) => Some(cassette),
            Transport::Live => None,
        }
    }

    /// The same for a client and its copies, random otherwise; never derived from the keys.
    pub fn identity(&self) -> uuid::Uuid {
        self.inner.identity
    }

    /// Cancels every call of this client in flight, in every thread, and refuses new ones: each
    /// ends with `Error::Closed`. Clones share it (they are the same client); idempotent. Other
    /// clients of the same configuration, copies included, go on.
    pub fn close(&self) {
        self.inner.closed.send_replace(true);
        // Lets go of this client's hold on the pool, never the pool itself, which other clients
        // of the configuration may be using (docs/architecture.md#one-pool-per-configuration).
        // When none is left, the pool's idle connections close once the calls cancelled above let
        // go of it: a closed client still referenced (a long-lived service's attribute) keeps no
        // sockets of its own.
        self.inner.http.clear();
    }

    pub fn is_closed(&self) -> bool {
        *self.inner.closed.borrow()
    }

    /// The connection pool of this process (docs/architecture.md#fork-and-child-processes).
    pub(crate) fn http(&self) -> Result<Arc<Http>, Error> {
        // Not taken again by a call that raced `close()`: its hold would outlive the client.
        if self.is_closed() {
            return Err(Error::Closed { operation: "a request".to_owned() });
        }
        self.inner.http.get_or_try_init(|| match &self.inner.transport {
            Transport::Live => pools::shared(&self.inner.config),
            cassette @ Transport::Cassette(_) => Ok(Arc::new(Http::new(&self.inner.config)?.on(cassette.clone()))),
        })
    }

    pub fn config(&self) -> &ClientConfig {
        &self.inner.config
    }

    /// A call named `name` of this client: bounded by its `deadline` option, counted from now,
    /// and ended by [`Client::close`]. Run the whole call in it ([`Call::run`]) and give it to
    /// every method the call makes (docs/protocol.md#timing-and-limits).
    /// The call knows the client's keys from the start: a server may repeat them in an error of
    /// any request (docs/errors.md#secrets-a-server-repeats).
    pub fn call(&self, name: &'static str) -> Call {
        let call = Call::new(name, self.inner.config.deadline, Some(self.inner.closed.subscribe()))
            .sharing(self.shared_secrets.clone());
        for key in [&self.inner.config.api_key, &self.inner.config.secret_key].into_iter().flatten() {
            call.sent(key);
        }
        call
    }

    /// This client, for the calls of one bulk call: each of its calls records what it sends in
    /// the returned [`SharedSecrets`] too, and masks in its errors what every other one sent so
    /// far, a token minted for another login included (docs/errors.md#secrets-a-server-repeats).
    pub fn sharing_secrets(&self) -> (Client, SharedSecrets) {
        let shared = SharedSecrets::default();
        (Client { inner: Arc::clone(&self.inner), shared_secrets: Some(shared.clone()) }, shared)
    }

    /// The request of the operation `wire` (crates/bankfeed/src/protocol.rs) at its path filled with `values`.
    pub(crate) fn request(&self, wire: &'static WireOp, values: PathValues<'_>) -> Result<ApiRequest, Error> {
        Ok(ApiRequest::new(wire.name, wire.method.into(), ops::url(wire, &self.inner.config, &values)?))
    }

    /// Data operations carry the api key, when one is configured.
    pub(crate) fn with_api_key(&self, request: ApiRequest) -> ApiRequest {
        match &self.inner.config.api_key {
            Some(key) => request.header("x-api-key", key.clone()),
            None => request,
        }
    }

    /// One Authorize call, in any of its four shapes.
    pub async fn authorize(&self, call: &Call, request: AuthorizeRequest) -> Result<Step, Error> {
        call.doing("Authorize");
        request.validate()?;
        let customer = PathValues::new(&self.inner.config.customer_id);
        let mut http_request =
            self.request(&protocol::AUTHORIZE, customer)?.json(&request.body())?.carrying(request.secrets());
        if !request.idempotent() {
            http_request = http_request.not_idempotent();
        }
        // With a secret key, every attempt needs its own single-use token, a retry included
        // (docs/protocol.md#authentication): the retry loop fetches one before each send.
        if let Some(secret) = &self.inner.config.secret_key {
            let token_request =
                self.request(&protocol::GENERATE_AUTHORIZE_TOKEN, customer)?.header("flinks-auth-key", secret.clone());
            http_request = http_request.fresh_header("flinks-auth-key", token_request, parse_token);
        }
        let cached = matches!(request, AuthorizeRequest::Cached { .. });
        let sent = self.http()?.send(&http_request, call).await;
        let reply = sent.map_err(|error| if cached { error.of_cached_read() } else { error })?;
        // The step keeps what the login's calls sent so far, for the call that answers it or
        // fetches through its session.
        Ok(parse_step(reply, request.login_id())?.sent_before(call.own_secrets()))
    }

    /// Answers the challenges of `challenge`, after checking every answer rule.
    pub async fn answer(&self, call: &Call, challenge: &Challenge, answers: Answers) -> Result<Step, Error> {
        challenge.validate(&answers)?;
        // A server may repeat in this call's errors what the login's earlier calls sent.
        call.carry(&challenge.sent);
        let request = AuthorizeRequest::Answer { request_id: challenge.request_id.clone(), responses: answers };
        let step = match self.authorize(call, request).await {
            Err(Error::Api(error)) if error.keeps_challenge_open() => {
                // The challenge handed back for another try keeps the refused answers too.
                let challenge = Challenge { sent: call.own_secrets(), ..challenge.clone() };
                return Err(Error::AnswerRefused { error, challenge: Box::new(challenge) });
            }
            step => step?,
        };
        // The answer call names no LoginId; a saved-connection flow's is carried over, and a
        // session of another login is refused as it is for the Authorize that named it.
        Ok(match step {
            Step::Session(session) => Step::Session(session.of_login(challenge.login_id.as_deref())?),
            Step::Challenge(mut next) => {
                next.login_id.clone_from(&challenge.login_id);
                Step::Challenge(next)
            }
        })
    }

    /// Hands each challenge to `handler` and sends its answers, until a session opens, an error
    /// comes, or the bound of rounds is reached.
    pub async fn complete(
        &self,
        call: &Call,
        mut step: Step,
        handler: &mut dyn ChallengeHandler,
    ) -> Result<Session, Error> {
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
            step = self.answer(call, &challenge, answers).await?;
        }
    }

    /// A live login with credentials, every challenge answered by `handler`.
    pub async fn login(
        &self,
        call: &Call,
        credentials: Credentials,
        handler: &mut dyn ChallengeHandler,
    ) -> Result<Session, Error> {
        let step = self.authorize(call, AuthorizeRequest::Credentials(credentials)).await?;
        self.complete(call, step, handler).await
    }

    /// A cached read of a saved connection: a new RequestId for already processed data.
    pub async fn authorize_cached(&self, call: &Call, login_id: &str) -> Result<Session, Error> {
        match self.authorize(call, AuthorizeRequest::Cached { login_id: login_id.to_owned() }).await? {
            Step::Session(session) => Ok(session),
            Step::Challenge(challenge) => Err(Error::ChallengeRequired(Box::new(challenge))),
        }
    }

    /// A cached read whose security challenges, when the service asks any (it may, as for a
    /// live login: docs/answering.md#cached-reads-that-ask-a-question), `handler` answers. The
    /// session keeps `login_id`, which the answer's 200 may not name.
    pub async fn authorize_cached_answered(
        &self,
        call: &Call,
        login_id: &str,
        handler: &mut dyn ChallengeHandler,
    ) -> Result<Session, Error> {
        let step = self.authorize(call, AuthorizeRequest::Cached { login_id: login_id.to_owned() }).await?;
        self.complete(call, step, handler).await
    }

    /// Runs the data operation `O` on `target` with `options`, as part of `call`: its session
    /// opened (a cached Authorize) or resumed, account detail made ready first when `O` needs it,
    /// its request sent and 202 polled, and its 200 read off the IO workers and checked to be the
    /// session's login (docs/protocol.md#polling).
    pub async fn data<O: DataOperation>(
        &self,
        call: &Call,
        target: Target<'_>,
        options: &O::Options,
    ) -> Result<O::Output, Error> {
        self.data_answered::<O>(call, target, options, None).await
    }

    /// [`Client::data`], where the challenges of the cached Authorize that opens a saved login's
    /// session are answered by `handler`; without one, they are [`Error::ChallengeRequired`] and
    /// nothing is answered (the bulk calls' `on_challenge`).
    pub async fn data_answered<O: DataOperation>(
        &self,
        call: &Call,
        target: Target<'_>,
        options: &O::Options,
        handler: Option<&mut dyn ChallengeHandler>,
    ) -> Result<O::Output, Error> {
        O::validate(options)?;
        let opened;
        let session = match target {
            Target::Session(session) => {
                // What the calls that opened the session sent, a server may repeat in this one's.
                call.carry(&session.sent);
                session
            }
            Target::Login { login_id, request_id } => {
                opened = self.session_for_login(call, login_id, request_id, handler).await?;
                &opened
            }
        };
        call.doing(O::WIRE.name);
        call.on_session(&session.request_id);
        let request = O::request(&self.inner.config, session, options)?;
        if O::WIRE.after_detail {
            self.account_detail_ready(call, session).await?;
        }
        let operation = request.operation;
        let raw = self.fetch(call, request, &session.request_id).await?;
        read_for::<O>(operation, session, raw, self.inner.config.money).await
    }

    /// Sends `request` with the api key, polling its 202 answers until 200.
    async fn fetch(&self, call: &Call, request: ops::Request, request_id: &str) -> Result<Raw, Error> {
        let ops::Request { operation, method, url, body, async_rel } = request;
        let mut request = self.with_api_key(ApiRequest::new(operation, method, url));
        if let Some(body) = body {
            request = request.json(&body)?;
        }
        let pollable = Pollable { request: &request, async_rel };
        let bytes = poll(&*self.http()?, pollable, call, &self.inner.config.poll, Some(request_id)).await?;
        Ok(Raw(bytes.into()))
    }

    /// The session of `login_id`: a cached Authorize (its challenges answered by `handler` when
    /// there is one), or, given the RequestId of one already opened (a `PendingTimeout` names
    /// it), that session again without a call (see [`Session::resume`]).
    async fn session_for_login(
        &self,
        call: &Call,
        login_id: &str,
        request_id: Option<&str>,
        handler: Option<&mut dyn ChallengeHandler>,
    ) -> Result<Session, Error> {
        match (request_id, handler) {
            (Some(request_id), _) => Session::resume(request_id, Some(login_id)),
            (None, Some(handler)) => self.authorize_cached_answered(call, login_id, handler).await,
            (None, None) => self.authorize_cached(call, login_id).await,
        }
    }

    /// docs/protocol.md#attributes: account detail polled to 200, and checked to be a detail
    /// payload of the session's login; it only has to be ready, so it is not kept.
    async fn account_detail_ready(&self, call: &Call, session: &Session) -> Result<(), Error> {
        let request = ops::AccountsDetail::request(&self.inner.config, session, &AccountsDetailOptions::default())?;
        let operation = request.operation;
        let detail = self.fetch(call, request, &session.request_id).await?;
        let named = off_io(detail.clone(), move |raw| check_accounts(operation, &raw)).await?;
        same_login(operation, session, named.as_deref(), &detail)
    }

    /// DeleteCard: removes the retained data of a saved connection. Returns the answer: a JSON body
    /// as it came, a plain-text one as `{"Message": text}` (docs/protocol.md#deletecard).
    pub async fn delete_login(&self, call: &Call, login_id: &str) -> Result<Value, Error> {
        call.doing("DeleteCard");
        guid("login_id", login_id)?;
        let values = PathValues::new(&self.inner.config.customer_id).login_id(login_id);
        let request = self.with_api_key(self.request(&protocol::DELETE_CARD, values)?);
        match self.http()?.send(&request, call).await? {
            Reply::Data { status, bytes } => {
                // Any body is an answer, except one whose envelope says error.
                json::check_error_envelope("DeleteCard", status, &bytes)?;
                Ok(delete_answer(&bytes))
            }
            reply => Err(reply.unexpected("DeleteCard", "expected a final answer: this operation is not polled")),
        }
    }
}

const TOKEN: &str = protocol::GENERATE_AUTHORIZE_TOKEN.name;

/// The token of a GenerateAuthorizeToken answer. Any answer but a JSON object holding a non-empty
/// `Token` is a protocol surprise; the body is left out of the error whenever it might hold a
/// token (secrets never reach an error message).
pub(crate) fn parse_token(reply: Reply) -> Result<Secret, Error> {
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
        resumable: None,
    })?;
    match json::field(&body, "Token") {
        Some(Value::String(token)) if !token.trim().is_empty() => Ok(Secret::new(token.clone())),
        // Without a Token the body holds none to keep out of the error: an envelope that says
        // error is that error, anything else a protocol surprise.
        None => Err(json::check_payload_value(TOKEN, status, &bytes, &body, json::Shape::AnyOf(&["Token"]))
            .err()
            .unwrap_or_else(|| Error::protocol(TOKEN, status, "the answer holds no Token", &bytes))),
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
pub(crate) fn delete_answer(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap_or_else(|_| json!({"Message": String::from_utf8_lossy(bytes).trim()}))
}

/// The answer of `operation` on `session` is refused when it names another login than the
/// session's (see [`check_same_login`]): a RequestId resumed with the LoginId of another login.
fn same_login(operation: &str, session: &Session, named: Option<&str>, raw: &Raw) -> Result<(), Error> {
    check_same_login(operation, session.login_id.as_deref(), named, &session.request_id, raw.bytes())
}

/// Every data answer is read this way: `read` off the IO workers ([`off_io`]), then refused when
/// it is the data of another login than the session's ([`same_login`]). An answer that cannot be
/// read keeps the session's RequestId, as a failure while polling does: the caller can fetch it
/// again without a new Authorize (docs/errors.md#an-error-while-polling).
async fn read_for<O: DataOperation>(
    operation: &'static str,
    session: &Session,
    raw: Raw,
    money: MoneyType,
) -> Result<O::Output, Error> {
    let value = off_io(raw, move |raw| O::read(operation, raw, money))
        .await
        .map_err(|error| error.resumable_at(Some(&session.request_id)))?;
    same_login(operation, session, value.login_id(), value.raw())?;
    Ok(value)
}

/// Bodies from this size on are read on tokio's blocking pool: decoding them and building their
/// tables (about 3 µs per KiB) takes long enough to stall the requests and polls of every other
/// flow sharing the IO worker. Below it the read takes under a quarter of a millisecond, less
/// than a poll round of another flow waits anyway, and the hand-off to another thread (a wake-up
/// and a switch each way) would cost a typical answer of a few accounts (about 20 KiB) more CPU
/// than it saves (BENCHMARKS.md, sessions).
const OFF_IO_BYTES: usize = 64 * 1024;

/// Runs `read` over `raw`, off the IO workers when the body is large (see [`OFF_IO_BYTES`]). A
/// panic in `read` goes on in the caller as it would inline.
async fn off_io<T: Send + 'static>(
    raw: Raw,
    read: impl FnOnce(Raw) -> Result<T, Error> + Send + 'static,
) -> Result<T, Error> {
    if raw.bytes().len() < OFF_IO_BYTES {
        return read(raw);
    }
    match tokio::task::spawn_blocking(move || read(raw)).await {
        Ok(result) => result,
        Err(error) => match error.try_into_panic() {
            Ok(panic) => std::panic::resume_unwind(panic),
            // Only a runtime shutting down cancels a blocking task; its callers are gone too.
            Err(_) => Err(Error::Internal { message: "the runtime shut down before the payload was read".to_owned() }),
        },
    }
}

/// Runs one call of `$client` named `$name`, as the binding runs each Python call: the call is
/// made once (`Client::call`), the body runs within it (`Call::run`: the `deadline`, a close), and
/// `$call` is the call it hands down; `$c` is the client.
#[cfg(test)]
macro_rules! within {
    ($client:expr, $name:expr, |$c:ident, $call:ident| $body:expr) => {{
        let $c = &$client;
        let $call = $c.call($name);
        $call.run($body).await
    }};
}

/// The data operation `$op` of `$client` on `$target` with `$options`, as one call of its own
/// (see `within!`).
#[cfg(test)]
macro_rules! data {
    ($client:expr, $op:ty, $target:expr, $options:expr) => {{
        let c = &$client;
        let call = c.call(<$op as crate::DataOperation>::WIRE.name);
        call.run(c.data::<$op>(&call, $target, $options)).await
    }};
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::data::attributes::AttributesQuery;
    use crate::data::requests::AccountsSummaryOptions;
    use crate::http::stub;

    pub(super) const LOGIN: &str = "5e0e5f83-6e9b-4a2c-a6a3-0d8f4b1c9e21";

    pub(super) fn client(base: &str, secret_key: bool) -> Client {
        let mut config = ClientConfig::new(base, "cust").unwrap();
        config.retry.max_retries = 0;
        config.poll.interval = Duration::from_millis(10);
        config.poll.timeout = Duration::from_secs(5);
        if secret_key {
            config.secret_key = Some(Secret::new("sk"));
        }
        Client::new(config).unwrap()
    }

    pub(super) fn session() -> Session {
        Session {
            request_id: "11111111-2222-3333-4444-555555555555".into(),
            login_id: Some(LOGIN.into()),
            login: None,
            institution: None,
            named_institution: crate::data::institution::NamedInstitution::default(),
            links: Vec::new(),
            raw: Arc::from(&b"{}"[..]),
            sent: crate::masking::SentSecrets::default(),
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
        let result =
            within!(client(&base, false), <ops::AccountsSummary as crate::DataOperation>::WIRE.name, |c, call| {
                c.data::<ops::AccountsSummary>(&call, Target::Session(&session()), &AccountsSummaryOptions::default())
            });
        let (operation, status, request_id, snippet) = protocol(result);
        assert_eq!((operation.as_str(), status, request_id.as_deref()), ("GetAccountsSummary", 203, Some("r-203")));
        assert!(snippet.contains("City?"), "{snippet}");
    }

    #[tokio::test]
    async fn a_token_call_without_a_token_is_a_protocol_surprise() {
        let base = stub::serve(vec![(200, r#"{"HttpStatusCode": 200, "RequestId": "r-t"}"#)]);
        let (operation, status, request_id, snippet) =
            protocol(within!(client(&base, true), "Authorize", |c, call| c.authorize_cached(&call, LOGIN)));
        assert_eq!((operation.as_str(), status, request_id.as_deref()), (TOKEN, 200, Some("r-t")));
        // Withheld, as every body of the token call: one holding the token under another key
        // would otherwise reach the error.
        assert_eq!(snippet, "");
    }

    #[tokio::test]
    async fn a_token_call_answering_202_or_203_is_a_protocol_surprise() {
        let base = stub::serve(vec![
            (202, r#"{"FlinksCode": "OPERATION_PENDING", "RequestId": "r-2"}"#),
            (203, r#"{"RequestId": "r-3", "SecurityChallenges": []}"#),
        ]);
        let client = client(&base, true);
        let (_, status, request_id, _) =
            protocol(within!(client, "Authorize", |c, call| c.authorize_cached(&call, LOGIN)));
        assert_eq!((status, request_id.as_deref()), (202, Some("r-2")));
        let (_, status, request_id, _) =
            protocol(within!(client, "Authorize", |c, call| c.authorize_cached(&call, LOGIN)));
        assert_eq!((status, request_id.as_deref()), (203, Some("r-3")));
    }

    #[tokio::test]
    async fn a_token_is_sent_with_authorize() {
        let base = stub::serve(vec![
            (200, r#"{"Token": "t-1"}"#),
            (
                200,
                r#"{"RequestId": "11111111-2222-3333-4444-555555555555", "Login": {"Id": "5E0E5F83-6E9B-4A2C-A6A3-0D8F4B1C9E21"}}"#,
            ),
        ]);
        let session = within!(client(&base, true), "Authorize", |c, call| c.authorize_cached(&call, LOGIN)).unwrap();
        assert_eq!(session.login_id.as_deref(), Some("5E0E5F83-6E9B-4A2C-A6A3-0D8F4B1C9E21"));
    }

    /// A session of another login than the one asked for: what a server or a caching proxy that
    /// mixed up two logins answers.
    const SESSION_OF_OTHER: &str = r#"{"RequestId": "11111111-2222-3333-4444-555555555555", "Login": {"Id": "0b9a3c1d-2e4f-4a5b-8c6d-7e8f9a0b1c2d"}}"#;

    #[tokio::test]
    async fn a_cached_authorize_answered_with_another_logins_session_fetches_nothing() {
        let investments =
            r#"{"Accounts": [], "Login": {"Id": "0b9a3c1d-2e4f-4a5b-8c6d-7e8f9a0b1c2d"}, "RequestId": "r"}"#;
        let stub =
            stub::serve_answers(vec![stub::Answer::new(200, SESSION_OF_OTHER), stub::Answer::new(200, investments)]);
        let client = client(&stub.url, false);
        match data!(client, ops::Investments, Target::login(LOGIN, None), &()) {
            Err(error @ Error::Protocol { .. }) => {
                let message = error.to_string();
                assert!(
                    message.contains(LOGIN) && message.contains("0b9a3c1d-2e4f-4a5b-8c6d-7e8f9a0b1c2d"),
                    "{message}"
                );
                let Error::Protocol { operation, request_id, .. } = error else { unreachable!() };
                assert_eq!(operation, "Authorize");
                assert_eq!(request_id.as_deref(), Some("11111111-2222-3333-4444-555555555555"));
            }
            other => panic!("{other:?}"),
        }
        // The Authorize only: nothing was asked for the other login.
        let requests = stub.requests();
        assert_eq!(requests.len(), 1, "{requests:?}");
        assert!(requests[0].contains("/Authorize"), "{requests:?}");
    }

    #[tokio::test]
    async fn every_authorize_that_names_a_login_refuses_a_session_of_another() {
        let stub = stub::serve_answers(vec![stub::Answer::new(200, SESSION_OF_OTHER); 2]);
        let named = client(&stub.url, false);
        assert!(matches!(
            within!(named, "Authorize", |c, call| c.authorize_cached(&call, LOGIN)),
            Err(Error::Protocol { status: 200, .. })
        ));
        let saved = AuthorizeRequest::SavedLive { login_id: LOGIN.into(), save: false };
        assert!(matches!(
            within!(named, "Authorize", |c, call| c.authorize(&call, saved)),
            Err(Error::Protocol { status: 200, .. })
        ));
        // A live login with credentials names no LoginId: its session's is the one it opened.
        let stub = stub::serve_answers(vec![stub::Answer::new(200, SESSION_OF_OTHER)]);
        let credentials = Credentials::new("FlinksCapital", "Greatday", Secret::new("Everyday"));
        match within!(client(&stub.url, false), "Authorize", |c, call| c
            .authorize(&call, AuthorizeRequest::Credentials(credentials)))
        {
            Ok(Step::Session(session)) => {
                assert_eq!(session.login_id.as_deref(), Some("0b9a3c1d-2e4f-4a5b-8c6d-7e8f9a0b1c2d"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn the_challenge_rounds_of_a_saved_connection_refuse_a_session_of_another_login() {
        let challenge = r#"{"RequestId": "11111111-2222-3333-4444-555555555555", "SecurityChallenges": [{"Type": "WaitUntilEUAccept", "Prompt": "Confirm"}]}"#;
        let stub =
            stub::serve_answers(vec![stub::Answer::new(203, challenge), stub::Answer::new(200, SESSION_OF_OTHER)]);
        let client = client(&stub.url, false);
        let saved = AuthorizeRequest::SavedLive { login_id: LOGIN.into(), save: false };
        let Ok(Step::Challenge(challenge)) = within!(client, "Authorize", |c, call| c.authorize(&call, saved)) else {
            panic!("no challenge")
        };
        let answers = Answers::from_pairs([("Confirm", vec!["VERIFIED"])]);
        match within!(client, "Authorize", |c, call| c.answer(&call, &challenge, answers)) {
            Err(Error::Protocol { message, .. }) => assert!(message.contains(LOGIN), "{message}"),
            other => panic!("{other:?}"),
        }
    }

    /// A cached Authorize asked a question, and its answer's 200 without `Login`, in the shapes
    /// recorded from the real service (docs/answering.md#cached-reads-that-ask-a-question).
    const CACHED_203: &str = r#"{"HttpStatusCode": 203, "Links": [{"rel": "Authorization", "href": "/Authorize", "example": null}], "SecurityChallenges": [{"Type": "QuestionAndAnswer", "Prompt": "Which lake did you first swim across?"}], "InstitutionName": "Harbour Savings", "InstitutionId": 27, "Institution": "HarbourSavings", "RequestId": "7d3c2b1a-0f9e-4d8c-b7a6-554433221100"}"#;
    const ANSWERED_200: &str = r#"{"HttpStatusCode": 200, "Links": [{"rel": "AccountsDetail", "href": "/GetAccountsDetail", "example": null}], "InstitutionName": "Harbour Savings", "InstitutionId": 27, "Institution": "HarbourSavings", "RequestId": "7d3c2b1a-0f9e-4d8c-b7a6-554433221100"}"#;

    #[tokio::test]
    async fn a_cached_read_asked_a_question_is_answered_only_by_a_handler() {
        // Without a handler: the challenge is the error, and nothing else is sent.
        let stub = stub::serve_answers(vec![stub::Answer::new(203, CACHED_203)]);
        let without = client(&stub.url, false);
        match data!(without, ops::Investments, Target::login(LOGIN, None), &()) {
            Err(Error::ChallengeRequired(challenge)) => assert_eq!(challenge.login_id.as_deref(), Some(LOGIN)),
            other => panic!("{other:?}"),
        }
        assert_eq!(stub.requests().len(), 1);
        // With one: answered, and the data fetched on the session of the LoginId asked for.
        let investments = format!(
            r#"{{"Accounts": [], "Login": {{"Id": "{LOGIN}"}}, "RequestId": "7d3c2b1a-0f9e-4d8c-b7a6-554433221100"}}"#
        );
        let stub = stub::serve_answers(vec![
            stub::Answer::new(203, CACHED_203),
            stub::Answer::new(200, ANSWERED_200),
            stub::Answer::new(200, investments),
        ]);
        let with = client(&stub.url, false);
        let mut asked = Vec::new();
        let mut handler = |challenge: &Challenge| {
            asked.push(challenge.login_id.clone());
            Ok(Answers::from_pairs(challenge.prompts().map(|prompt| (prompt.to_owned(), vec!["Memphremagog"]))))
        };
        let call = with.call("Investments");
        let target = Target::login(LOGIN, None);
        let fetched = call.run(with.data_answered::<ops::Investments>(&call, target, &(), Some(&mut handler))).await;
        assert_eq!(fetched.unwrap().tables.login_id.as_deref(), Some(LOGIN));
        assert_eq!(asked, [Some(LOGIN.to_owned())]);
        let requests = stub.requests();
        assert!(
            requests[1].contains(r#""SecurityResponses":{"Which lake did you first swim across?":["Memphremagog"]}"#)
        );
        assert!(requests[2].contains(&format!(r#""LoginId":"{LOGIN}""#)), "{requests:?}");
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
        let (operation, status, request_id, snippet) =
            protocol(within!(client(&base, false), "DeleteCard", |c, call| c.delete_login(&call, LOGIN)));
        assert_eq!((operation.as_str(), status, request_id.as_deref()), ("DeleteCard", 202, Some("r-d")));
        assert!(snippet.contains("OPERATION_PENDING"), "{snippet}");
    }

    #[tokio::test]
    async fn delete_card_answers_json_as_is_and_text_as_a_message() {
        let base = stub::serve(vec![(200, "  Card deleted.\n"), (200, r#"{"Message": "ok", "Extra": 1}"#)]);
        let client = client(&base, false);
        assert_eq!(
            within!(client, "DeleteCard", |c, call| c.delete_login(&call, LOGIN)).unwrap(),
            json!({"Message": "Card deleted."})
        );
        assert_eq!(
            within!(client, "DeleteCard", |c, call| c.delete_login(&call, LOGIN)).unwrap(),
            json!({"Message": "ok", "Extra": 1})
        );
        assert_eq!(delete_answer(b""), json!({"Message": ""}));
    }

    #[tokio::test]
    async fn authorize_answering_202_is_a_protocol_surprise() {
        let base = stub::serve(vec![(202, r#"{"FlinksCode": "OPERATION_PENDING", "RequestId": "r-a"}"#)]);
        let (operation, status, request_id, _) =
            protocol(within!(client(&base, false), "Authorize", |c, call| c.authorize_cached(&call, LOGIN)));
        assert_eq!((operation.as_str(), status, request_id.as_deref()), ("Authorize", 202, Some("r-a")));
    }

    /// A server that answers every request with `status` and `body` (`None`: takes the request and
    /// never answers).
    fn always(answer: Option<(u16, &'static str)>) -> String {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            let mut held = Vec::new();
            for socket in listener.incoming() {
                let mut socket = socket.unwrap();
                let mut buffer = [0u8; 8192];
                let _ = socket.read(&mut buffer);
                match answer {
                    Some((status, body)) => {
                        let _ = socket.write_all(
                            format!(
                                "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
                                 connection: close\r\n\r\n{body}",
                                body.len()
                            )
                            .as_bytes(),
                        );
                    }
                    None => held.push(socket),
                }
            }
        });
        base
    }

    fn with_deadline(base: &str, deadline: Duration) -> Client {
        let mut config = ClientConfig::new(base, "cust").unwrap();
        config.retry.max_retries = 0;
        config.timeout = Duration::from_secs(30);
        config.poll.interval = Duration::from_millis(10);
        config.poll.timeout = Duration::from_secs(30);
        config.deadline = Some(deadline);
        Client::new(config).unwrap()
    }

    #[tokio::test]
    async fn the_deadline_ends_a_call_whose_server_is_silent() {
        let client = with_deadline(&always(None), Duration::from_millis(300));
        let started = std::time::Instant::now();
        match data!(client, ops::Investments, Target::login(LOGIN, None), &()) {
            Err(Error::Transport { operation, timed_out: true, message, .. }) => {
                assert_eq!(operation, "Authorize");
                assert!(message.contains("deadline"), "{message}");
            }
            other => panic!("{other:?}"),
        }
        // The request timeout is 30 s: only the deadline can have ended the call this soon.
        assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
    }

    #[tokio::test]
    async fn the_deadline_ends_a_pending_operation_with_a_pending_timeout() {
        let base = always(Some((202, r#"{"FlinksCode": "OPERATION_PENDING", "RequestId": "r-p"}"#)));
        let client = with_deadline(&base, Duration::from_millis(300));
        let started = std::time::Instant::now();
        match data!(client, ops::AccountsSummary, Target::Session(&session()), &AccountsSummaryOptions::default()) {
            Err(Error::PendingTimeout { operation, request_id, waited, .. }) => {
                assert_eq!((operation.as_str(), request_id.as_deref()), ("GetAccountsSummary", Some("r-p")));
                assert!(waited >= Duration::from_millis(250), "{waited:?}");
            }
            other => panic!("{other:?}"),
        }
        assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
    }

    #[tokio::test]
    async fn without_a_deadline_a_call_is_not_cut() {
        let base = stub::serve(vec![(200, r#"{"Message": "ok"}"#)]);
        assert!(client(&base, false).config().deadline.is_none());
        assert_eq!(
            within!(client(&base, false), "DeleteCard", |c, call| c.delete_login(&call, LOGIN)).unwrap(),
            json!({"Message": "ok"})
        );
    }

    #[tokio::test]
    async fn session_ids_that_are_not_safe_path_segments_never_reach_a_url() {
        // Nothing listens: a request would be a TransportError, not the ProtocolError expected.
        let base = format!("http://{}", std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap());
        let client = client(&base, false);
        let query = AttributesQuery::Package(crate::data::attributes::Package::parse("income").unwrap());
        for bad in ["..", "%2e%2e", "a\\b", "a\r\nb", "a/b", "../../BankingServices/Authorize"] {
            let mut hostile_login = session();
            hostile_login.login_id = Some(bad.into());
            let (operation, status, request_id, _) =
                protocol(data!(client, ops::Attributes, Target::Session(&hostile_login), &query));
            assert_eq!((operation.as_str(), status), ("Authorize", 200));
            assert_eq!(request_id.as_deref(), Some("11111111-2222-3333-4444-555555555555"));
            let mut hostile_request = session();
            hostile_request.request_id = bad.into();
            match data!(client, ops::Attributes, Target::Session(&hostile_request), &query) {
                Err(Error::Protocol { message, request_id: None, .. }) => assert!(message.contains("RequestId")),
                other => panic!("{bad:?}: {other:?}"),
            }
        }
    }
}

/// A 200 that is not the operation's payload (docs/errors.md#protocol-surprises), for every
/// operation that reads one.
#[cfg(test)]
mod payload_tests {
    use super::tests::{session, LOGIN};
    use super::*;
    use crate::data::attributes::{AttributesQuery, Package};
    use crate::data::requests::{AccountsSummaryOptions, StatementsOptions};
    use crate::error::{ApiErrorKind, Body};
    use crate::http::stub;
    const ENVELOPE: &str = r#"{"HttpStatusCode": 500, "Message": "aggregation failed", "FlinksCode": "AGGREGATION_ERROR", "RequestId": "r-e"}"#;
    /// Not a payload of any operation; each keeps its RequestId, if it has one.
    const NOT_PAYLOADS: [(&str, Option<&str>); 5] = [
        ("{}", None),
        ("[]", None),
        ("null", None),
        (r#"{"HttpStatusCode": 200, "RequestId": "r-n"}"#, Some("r-n")),
        (r#"{"FlinksCode": "OPERATION_PENDING", "HttpStatusCode": 200, "RequestId": "r-p"}"#, Some("r-p")),
    ];
    const DETAIL: &str = r#"{"Accounts": [], "RequestId": "r-d"}"#;

    fn client(base: &str) -> Client {
        super::tests::client(base, false)
    }

    /// Runs the data operation `operation` against a stub that answers `body` (after a valid
    /// account detail, for attributes), and says what came of it; the same comes of its tables.
    async fn run(operation: &str, body: &'static str) -> Result<(), Error> {
        run_on(&session(), operation, body).await
    }

    /// [`run`] on `session`.
    async fn run_on(session: &Session, operation: &str, body: &'static str) -> Result<(), Error> {
        let client = client(&stub::serve(answers(operation, body)));
        let on = Target::Session(session);
        match operation {
            "Investments" => data!(client, ops::Investments, on, &()).map(drop),
            "GetAccountsDetail" => data!(client, ops::AccountsDetail, on, &AccountsDetailOptions::default()).map(drop),
            "GetAccountsSummary" => {
                data!(client, ops::AccountsSummary, on, &AccountsSummaryOptions::default()).map(drop)
            }
            "GetStatements" => data!(client, ops::Statements, on, &StatementsOptions::default()).map(drop),
            "GetIncomeAttributes" => {
                data!(client, ops::Attributes, on, &AttributesQuery::Package(Package::Income)).map(drop)
            }
            "Attributes" => data!(client, ops::Attributes, on, &AttributesQuery::Custom(custom())).map(drop),
            "Authorize" => within!(client, "Authorize", |c, call| c.authorize_cached(&call, LOGIN)).map(drop),
            other => panic!("no operation {other}"),
        }
    }

    fn answers(operation: &str, body: &'static str) -> Vec<(u16, &'static str)> {
        if operation.contains("Attributes") {
            vec![(200, DETAIL), (200, body)]
        } else {
            vec![(200, body)]
        }
    }

    fn custom() -> crate::data::attributes::CustomAttributes {
        crate::data::attributes::CustomAttributes {
            attributes: vec![("Card".into(), vec!["balance_min".into()])],
            ..Default::default()
        }
    }

    const OPERATIONS: [(&str, &str); 7] = [
        ("Investments", r#"{"Accounts": [], "Securities": [], "Value": 0, "Cash": 0, "RequestId": "r"}"#),
        ("GetAccountsDetail", r#"{"HttpStatusCode": 200, "Accounts": [], "RequestId": "r"}"#),
        ("GetAccountsSummary", r#"{"HttpStatusCode": 200, "Accounts": [], "RequestId": "r"}"#),
        ("GetStatements", r#"{"HttpStatusCode": 200, "StatementsByAccount": [], "RequestId": "r"}"#),
        ("GetIncomeAttributes", r#"{"HttpStatusCode": 200, "Income": {"Id": "g"}, "RequestId": "r"}"#),
        // The session's LoginId: a Login naming another is refused (see `check_same_login`).
        (
            "Attributes",
            r#"{"HttpStatusCode": 200, "Login": {"Id": "5e0e5f83-6e9b-4a2c-a6a3-0d8f4b1c9e21"}, "RequestId": "r"}"#,
        ),
        ("Authorize", r#"{"HttpStatusCode": 200, "RequestId": "r"}"#),
    ];

    #[tokio::test]
    async fn a_200_that_is_not_the_payload_is_a_protocol_surprise_keeping_its_start() {
        for (operation, _) in OPERATIONS {
            for (body, request_id) in NOT_PAYLOADS {
                // A RequestId is Authorize's payload, and an attributes answer's without a code.
                let bare = request_id == Some("r-n");
                if operation == "Authorize" && request_id.is_some() || operation.contains("Attributes") && bare {
                    continue;
                }
                // A data answer that names no RequestId keeps its session's.
                let session_id = (operation != "Authorize").then_some("11111111-2222-3333-4444-555555555555");
                let request_id = request_id.or(session_id);
                match run(operation, body).await {
                    Err(Error::Protocol { operation: named, status, request_id: id, snippet, .. }) => {
                        assert_eq!((named.as_str(), status, id.as_deref()), (operation, 200, request_id), "{body}");
                        assert_eq!(snippet, body);
                    }
                    other => panic!("{operation} answering {body}: {other:?}"),
                }
            }
        }
    }

    #[tokio::test]
    async fn a_200_whose_envelope_says_error_is_that_error() {
        for (operation, _) in OPERATIONS {
            match run(operation, ENVELOPE).await {
                Err(Error::Api(api)) => {
                    assert_eq!((api.status, api.kind()), (500, ApiErrorKind::Aggregation), "{operation}");
                    assert_eq!(api.code.as_deref(), Some("AGGREGATION_ERROR"));
                    assert_eq!(api.message.as_deref(), Some("aggregation failed"));
                    assert_eq!(api.request_id.as_deref(), Some("r-e"));
                    assert!(matches!(api.body, Body::Json(_)));
                }
                other => panic!("{operation}: {other:?}"),
            }
        }
    }

    /// A LoginId that is not the session's ([`LOGIN`]).
    const OTHER: &str = "0b9a3c1d-2e4f-4a5b-8c6d-7e8f9a0b1c2d";

    #[tokio::test]
    async fn an_answer_naming_another_login_than_the_sessions_is_refused_by_every_operation() {
        let other = r#"{"Login": {"Id": "0b9a3c1d-2e4f-4a5b-8c6d-7e8f9a0b1c2d"}"#;
        let leak = |text: String| -> &'static str { Box::leak(text.into_boxed_str()) };
        for (operation, body) in OPERATIONS.iter().filter(|(operation, _)| *operation != "Authorize") {
            // The operation's own empty payload, naming the other login.
            let named = if body.contains(LOGIN) {
                leak(body.replace(LOGIN, OTHER))
            } else {
                leak(format!("{other}, {}", body.trim_start_matches('{')))
            };
            match run(operation, named).await {
                Err(error @ Error::OtherLogin { .. }) => {
                    let message = error.to_string();
                    let Error::OtherLogin { operation: failed, request_id, snippet, .. } = error else {
                        unreachable!()
                    };
                    assert_eq!((failed.as_str(), request_id.as_str()), (*operation, "r"));
                    assert!(message.contains(OTHER) && message.contains(LOGIN), "{message}");
                    assert_eq!(snippet, named);
                }
                other => panic!("{operation} answering {named}: {other:?}"),
            }
            // The same login in another case, and a session whose login is unknown, pass.
            let same = leak(named.replace(OTHER, &LOGIN.to_ascii_uppercase()));
            run(operation, same).await.unwrap_or_else(|e| panic!("{operation}: {e}"));
            if operation.starts_with("GetAccounts") || *operation == "GetStatements" {
                // Investments and attributes send the session's LoginId; the banking operations
                // can go without one.
                let mut unknown = session();
                unknown.login_id = None;
                run_on(&unknown, operation, named).await.unwrap_or_else(|e| panic!("{operation}: {e}"));
            }
        }
    }

    #[tokio::test]
    async fn attributes_stop_at_an_account_detail_naming_another_login() {
        let detail = r#"{"Accounts": [], "Login": {"Id": "0b9a3c1d-2e4f-4a5b-8c6d-7e8f9a0b1c2d"}, "RequestId": "r-d"}"#;
        let attributes = r#"{"Income": {"Id": "g"}, "RequestId": "r-d"}"#;
        let client = client(&stub::serve(vec![(200, detail), (200, attributes)]));
        match data!(client, ops::Attributes, Target::Session(&session()), &AttributesQuery::Package(Package::Income)) {
            Err(error @ Error::OtherLogin { .. }) => {
                assert!(error.to_string().contains(OTHER), "{error}");
                let Error::OtherLogin { operation, request_id, .. } = error else { unreachable!() };
                assert_eq!((operation.as_str(), request_id.as_str()), ("GetAccountsDetail", "r-d"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn a_valid_empty_payload_is_an_empty_result() {
        for (operation, body) in OPERATIONS {
            run(operation, body).await.unwrap_or_else(|e| panic!("{operation}: {e}"));
        }
    }

    #[tokio::test]
    async fn a_200_that_is_not_json_stays_a_decode_error() {
        for (operation, _) in OPERATIONS {
            let error = run(operation, "<html>").await.unwrap_err();
            assert!(matches!(error, Error::Decode { status: 200, .. }), "{operation}");
            // A data answer's keeps its session's RequestId, to fetch it again; the Authorize's opened none.
            let kept = (operation != "Authorize").then_some("11111111-2222-3333-4444-555555555555");
            assert_eq!(error.request_id(), kept, "{operation}");
        }
    }

    #[tokio::test]
    async fn large_payloads_are_read_off_the_io_thread_and_small_ones_on_it() {
        let here = std::thread::current().id();
        let reader = |raw: Raw| Ok((std::thread::current().id(), raw.bytes().len()));
        let large = Raw(vec![b' '; OFF_IO_BYTES].into());
        let (there, len) = off_io(large, reader).await.unwrap();
        assert_ne!(there, here);
        assert_eq!(len, OFF_IO_BYTES);
        let small = Raw(vec![b' '; OFF_IO_BYTES - 1].into());
        assert_eq!(off_io(small, reader).await.unwrap().0, here);
    }

    #[tokio::test]
    async fn a_large_answer_read_off_the_io_workers_fails_as_a_small_one() {
        let pad = "x".repeat(2 * OFF_IO_BYTES);
        let leak = |text: String| -> &'static str { Box::leak(text.into_boxed_str()) };
        let envelope = leak(format!(r#"{{"HttpStatusCode": 500, "FlinksCode": "AGGREGATION_ERROR", "Pad": "{pad}"}}"#));
        let other = leak(format!(r#"{{"Pad": "{pad}"}}"#));
        let cut = leak(format!(r#"{{"Accounts": [], "Pad": "{pad}"#));
        for (operation, _) in OPERATIONS.iter().filter(|(operation, _)| *operation != "Authorize") {
            assert!(matches!(run(operation, envelope).await, Err(Error::Api(_))), "{operation}");
            assert!(matches!(run(operation, other).await, Err(Error::Protocol { status: 200, .. })), "{operation}");
            assert!(matches!(run(operation, cut).await, Err(Error::Decode { status: 200, .. })), "{operation}");
        }
    }

    #[tokio::test]
    async fn delete_card_answering_an_error_envelope_is_that_error_and_any_other_body_an_answer() {
        let base = stub::serve(vec![(200, ENVELOPE), (200, "{}"), (200, "[]"), (200, "Deleted.")]);
        let client = client(&base);
        match within!(client, "DeleteCard", |c, call| c.delete_login(&call, LOGIN)) {
            Err(Error::Api(api)) => assert_eq!((api.status, api.kind()), (500, ApiErrorKind::Aggregation)),
            other => panic!("{other:?}"),
        }
        assert_eq!(within!(client, "DeleteCard", |c, call| c.delete_login(&call, LOGIN)).unwrap(), json!({}));
        assert_eq!(within!(client, "DeleteCard", |c, call| c.delete_login(&call, LOGIN)).unwrap(), json!([]));
        assert_eq!(
            within!(client, "DeleteCard", |c, call| c.delete_login(&call, LOGIN)).unwrap(),
            json!({"Message": "Deleted."})
        );
    }

    #[test]
    fn a_token_answer_whose_envelope_says_error_is_that_error() {
        let data = |bytes: &[u8]| Reply::Data { status: 200, bytes: bytes.to_vec() };
        match parse_token(data(br#"{"HttpStatusCode": 401, "FlinksCode": "UNAUTHORIZED", "Message": "bad key"}"#)) {
            Err(Error::Api(api)) => assert_eq!((api.status, api.kind()), (401, ApiErrorKind::Unauthorized)),
            other => panic!("{other:?}"),
        }
        for body in [&b"{}"[..], b"[]", b"null"] {
            assert!(matches!(parse_token(data(body)), Err(Error::Protocol { status: 200, .. })), "{body:?}");
        }
    }
}

/// A server that repeats, in a later call's error, a secret an earlier call of the same login sent
/// (docs/errors.md#secrets-a-server-repeats).
#[cfg(test)]
mod later_call_tests {
    use super::tests::client;
    use super::*;
    use crate::data::requests::AccountsSummaryOptions;
    use crate::http::stub;

    const USERNAME: &str = "echo-user-5b2e";
    const PASSWORD: &str = "pw-earlier-7c1d";
    const FIRST_ANSWER: &str = "first-answer-9e";
    const CHALLENGE: &str = r#"{"HttpStatusCode": 203, "RequestId": "0b9a3c1d-2e4f-4a5b-8c6d-7e8f9a0b1c2d",
        "SecurityChallenges": [{"Type": "QuestionAndAnswer", "Prompt": "City?"}]}"#;
    const SESSION: &str = r#"{"HttpStatusCode": 200, "RequestId": "11111111-2222-3333-4444-555555555555"}"#;

    /// A JSON error of `status` and `code` repeating every secret the login sent so far.
    fn echo(status: u16, code: &str) -> stub::Answer {
        let message = format!("refused {USERNAME} {PASSWORD} {FIRST_ANSWER}");
        let body = serde_json::json!({"HttpStatusCode": status, "FlinksCode": code, "Message": message,
            "Echo": {"Username": USERNAME, "Password": PASSWORD}});
        stub::Answer::new(status, body.to_string())
    }

    fn credentials() -> AuthorizeRequest {
        AuthorizeRequest::Credentials(Credentials::new("FlinksCapital", USERNAME, Secret::new(PASSWORD)))
    }

    fn answers(answer: &str) -> Answers {
        Answers::from_pairs([("City?", vec![answer])])
    }

    /// Asserts that `error` shows none of `secrets`, and the mask.
    fn assert_masked(error: &Error, secrets: &[&str]) {
        let shown = format!("{error:?} {error}");
        for secret in secrets {
            assert!(!shown.contains(secret), "{secret} in {shown}");
        }
        assert!(shown.contains("***"), "{shown}");
    }

    #[tokio::test]
    async fn an_answer_masks_the_credentials_and_the_refused_answers_of_the_earlier_calls() {
        let stub = stub::serve_answers(vec![
            stub::Answer::new(203, CHALLENGE),
            echo(401, "INVALID_SECURITY_RESPONSE"),
            echo(401, "INVALID_LOGIN"),
        ]);
        let client = client(&stub.url, false);
        let Step::Challenge(challenge) =
            within!(client, "Authorize", |c, call| c.authorize(&call, credentials())).expect("a challenge")
        else {
            panic!("not a challenge")
        };
        assert!(!format!("{challenge:?}").contains(PASSWORD));
        // The answer is a call of its own: the password was sent by the Authorize before it.
        let refused =
            within!(client, "Authorize", |c, call| c.answer(&call, &challenge, answers(FIRST_ANSWER))).unwrap_err();
        assert_masked(&refused, &[USERNAME, PASSWORD, FIRST_ANSWER]);
        let Error::AnswerRefused { challenge: open, .. } = refused else { panic!("{refused:?}") };
        // The challenge handed back keeps the refused answer too, for the next try's errors.
        let again = within!(client, "Authorize", |c, call| c.answer(&call, &open, answers("Montreal"))).unwrap_err();
        assert_masked(&again, &[USERNAME, PASSWORD, FIRST_ANSWER]);
        assert_eq!(stub.requests().len(), 3);
    }

    #[tokio::test]
    async fn a_data_call_through_a_session_masks_what_opened_it() {
        let stub = stub::serve_answers(vec![stub::Answer::new(200, SESSION), echo(400, "SESSION_NONEXISTENT")]);
        let client = client(&stub.url, false);
        let Step::Session(session) =
            within!(client, "Authorize", |c, call| c.authorize(&call, credentials())).expect("a session")
        else {
            panic!("not a session")
        };
        let shown = format!("{session:?}");
        assert!(shown.contains("SentSecrets(2 values, ***)") && !shown.contains(PASSWORD), "{shown}");
        let on = Target::Session(&session);
        let error = data!(client, ops::AccountsSummary, on, &AccountsSummaryOptions::default()).unwrap_err();
        assert_masked(&error, &[USERNAME, PASSWORD]);
    }

    #[tokio::test]
    async fn each_call_of_a_bulk_call_masks_what_the_others_sent() {
        let client = client("http://127.0.0.1:9", false);
        let (bulk, shared) = client.sharing_secrets();
        let minted = Secret::new("5b1e0c2d-9a4f-4e7b-5d21-08dc3f6a91e7");
        bulk.call("Investments").sent(&minted);
        let repeated =
            || async { Err::<(), _>(Error::protocol("Investments", 200, format!("odd {}", minted.expose()), b"")) };
        let other = bulk.call("Investments");
        let shown = format!("{:?}", other.run(repeated()).await.unwrap_err());
        assert!(!shown.contains(minted.expose()) && shown.contains("***"), "{shown}");
        assert!(!format!("{bulk:?} {shared:?}").contains(minted.expose()));
        // A call outside the bulk call knows nothing of it.
        let outside = client.call("Investments");
        assert!(format!("{:?}", outside.run(repeated()).await.unwrap_err()).contains(minted.expose()));
    }
}

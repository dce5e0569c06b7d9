//! The settings of a sandbox server and what its request log keeps.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::time::Duration;

use crate::replay::ServedCassette;
use crate::server::faults::Fault;
use crate::server::reply::AsyncLinks;
use crate::world::calendar::AsOf;

/// The most bulk logins a sandbox saves at start (`SandboxConfig::logins`).
pub const MAX_LOGINS: u32 = 1_000_000;

/// The customer id of the public test instance, so clients configured for it need no change.
pub const DEFAULT_CUSTOMER_ID: &str = "43387ca6-0391-4c82-857d-70d95f087ecb";

/// The secret key the public test instance publishes for `GenerateAuthorizeToken` (public test
/// data, docs/sandbox.md#keys): a sandbox asks for it by default, so a client configured for that
/// instance needs no change.
pub const PUBLIC_SECRET_KEY: &str = "c4569c54-e167-4d34-8de6-f4113bc82414";

/// The `x-api-key` the public test instance publishes for its data operations (public test data,
/// docs/sandbox.md#keys).
pub const PUBLIC_API_KEY: &str = "3d5266a8-b697-48d4-8de6-52e2e2662acc";

/// How many bytes the request log keeps by default (`request_log_bytes`): thousands of ordinary
/// requests, and a flood of large bodies cannot grow the process (docs/sandbox.md#the-request-log).
pub const DEFAULT_REQUEST_LOG_BYTES: usize = 16 * 1024 * 1024;

/// A request body whose masked JSON text is longer than this is logged as its size and this
/// much of its start (docs/sandbox.md#the-request-log).
pub const LOGGED_BODY_BYTES: usize = 64 * 1024;

/// How long DeleteCard refuses a login just connected, by default: long enough that a call
/// made right after the login meets it, short enough that a test which waits is not slowed much.
pub const CARD_IN_USE: Duration = Duration::from_secs(3);

/// The data operations whose answers can wait behind 202s (`SandboxConfig::pending_operations`),
/// as the faults and the request log name them.
pub const DATA_OPERATIONS: [&str; 5] =
    ["GetAccountsDetail", "GetAccountsSummary", "GetStatements", "Investments", "Attributes"];

/// The data operations that answer 202 before their 200 (`SandboxConfig::pending_operations`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingOperations {
    /// Names of [`DATA_OPERATIONS`], each once, in that order.
    names: Vec<&'static str>,
}

impl Default for PendingOperations {
    /// As recorded at the service: account detail answers 202 first, the summary and statements
    /// 200 at once; Investments and the attributes calls wait as their documentation says.
    fn default() -> Self {
        PendingOperations { names: vec!["GetAccountsDetail", "Investments", "Attributes"] }
    }
}

impl PendingOperations {
    /// Every data operation.
    pub fn all() -> PendingOperations {
        PendingOperations { names: DATA_OPERATIONS.to_vec() }
    }

    /// The operations `names` names, in any case; the error says which name is none of
    /// [`DATA_OPERATIONS`].
    pub fn from_names<S: AsRef<str>>(names: &[S]) -> Result<PendingOperations, String> {
        let mut chosen = Vec::new();
        for name in names {
            let name = name.as_ref();
            let Some(known) = DATA_OPERATIONS.iter().find(|known| known.eq_ignore_ascii_case(name.trim())) else {
                return Err(format!(
                    "names {name:?}, which is no data operation; they are {}",
                    DATA_OPERATIONS.join(", ")
                ));
            };
            if !chosen.contains(known) {
                chosen.push(*known);
            }
        }
        Ok(PendingOperations { names: DATA_OPERATIONS.into_iter().filter(|name| chosen.contains(name)).collect() })
    }

    /// Whether the operation named `name` (a wire operation's name) waits.
    pub fn contains(&self, name: &str) -> bool {
        self.names.iter().any(|known| known.eq_ignore_ascii_case(name))
    }

    /// The names, in the order of [`DATA_OPERATIONS`].
    pub fn names(&self) -> &[&'static str] {
        &self.names
    }
}

/// Which cached Authorize calls are asked a question first (`SandboxConfig::cached_challenges`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CachedChallenges {
    /// None: a cached Authorize opens at once.
    Never,
    /// Every one.
    Always,
    /// Those of the users whose row in docs/sandbox.md#users says so.
    PerUser,
}

impl CachedChallenges {
    /// `never`, `always` or `per_user`, as the knob is spelled.
    pub fn as_str(self) -> &'static str {
        match self {
            CachedChallenges::Never => "never",
            CachedChallenges::Always => "always",
            CachedChallenges::PerUser => "per_user",
        }
    }

    /// The choice `text` names (any case), or the rule it breaks.
    pub fn parse(text: &str) -> Result<CachedChallenges, String> {
        match text.trim().to_ascii_lowercase().as_str() {
            "never" => Ok(CachedChallenges::Never),
            "always" => Ok(CachedChallenges::Always),
            "per_user" => Ok(CachedChallenges::PerUser),
            _ => Err(format!("must be \"never\", \"always\" or \"per_user\", got {text:?}")),
        }
    }
}

/// Settings of a sandbox server.
#[derive(Debug, Clone)]
pub struct SandboxConfig {
    /// The customer id expected in every path (`/v3/{customerId}/...`); others get 404.
    pub customer_id: String,
    /// Address to bind; loopback by default.
    pub host: IpAddr,
    /// Port to bind; 0 picks a free one.
    pub port: u16,
    /// How many times every data call of `pending_operations` answers 202 before 200, per
    /// RequestId and operation.
    pub pending_polls: u32,
    /// Additionally answer 202 until this many seconds have passed since the first call for a
    /// RequestId and operation.
    pub pending_seconds: f64,
    /// The pending count used instead of `pending_polls` for `test_pending` and `test_dispatched`.
    pub slow_pending_polls: u32,
    /// Before the pending phase, how many times every data call answers 400 `SESSION_LOADING`
    /// ("a data request sent while the session is loading may return an error").
    pub loading_polls: u32,
    /// The data operations that answer 202 before their 200 (the others answer 200 at once, as
    /// the service's summary and statements do): account detail, Investments and the attributes
    /// calls by default (docs/sandbox.md#knobs).
    pub pending_operations: PendingOperations,
    /// The link a 202 of a banking operation carries: the service's template by default, or
    /// the operation's own `...Async` path.
    pub async_links: AsyncLinks,
    /// Which cached Authorize calls (`LoginId`, `MostRecentCached` true) are asked a security
    /// question before they open, as the service may ask one (docs/sandbox.md#cached-reads-asked-a-question).
    pub cached_challenges: CachedChallenges,
    /// Whether the keys are asked for at all: false turns both off, whatever `secret_key` and
    /// `api_key` say, for old clients that send none (docs/sandbox.md#keys).
    pub auth: bool,
    /// When set (and `auth`), Authorize needs a token from `GenerateAuthorizeToken`, which in turn
    /// needs this key in the `flinks-auth-key` header; a token opens one session
    /// (docs/sandbox.md#keys). Without it a token is handed out and not kept, since Authorize asks
    /// for none. The public test instance's key by default.
    pub secret_key: Option<String>,
    /// When set (and `auth`), data operations and DeleteCard need the header `x-api-key` equal to
    /// it. The public test instance's key by default.
    pub api_key: Option<String>,
    /// A RequestId dies after this long without activity (`SESSION_EXPIRED`), unless its data
    /// is processing.
    pub session_ttl: Duration,
    /// A RequestId whose data is processing (a data operation answered 202 and has not answered
    /// 200 yet) dies after this long without activity instead (docs/sandbox.md#knobs).
    pub processing_ttl: Duration,
    /// DeleteCard answers 400 `CARD_IN_USE` this long after the Authorize that connected the login
    /// new (as well as while its data is processing), as the service's error reference says the
    /// code is reproduced; [`CARD_IN_USE`] by default, zero turns it off (docs/sandbox.md#knobs).
    pub card_in_use: Duration,
    /// The wrong answer to a challenge that reaches this count ends the session with 401
    /// `INVALID_SECURITY_RESPONSE_NO_RETRY`; the ones before it can be answered again.
    pub max_wrong_answers: u32,
    /// A token from `GenerateAuthorizeToken` is refused this long after it was issued (30 minutes,
    /// as the service documents), also by the challenge answers of the session it opened; at most
    /// 10,000 unused ones are kept, the oldest forgotten first (docs/sandbox.md#keys).
    pub token_ttl: Duration,
    /// Seeds LoginIds and all generated data: the same seed and username give the same LoginId,
    /// and the same LoginId the same accounts, in every sandbox.
    pub seed: u64,
    /// Investment trades over all of a login's investment accounts: None for about 60, Some(n)
    /// for exactly n (Some(0): accounts without positions or trades).
    pub investment_transactions: Option<usize>,
    /// Banking transactions over all of a login's accounts: None for a natural year of
    /// activity, Some(n) for exactly n (a sample of that year, or it plus card purchases).
    pub banking_transactions: Option<usize>,
    /// Whether the customer has a Tier 2 package, which `GetAllAttributes` needs.
    pub tier2: bool,
    /// Whether Investments is enabled for the customer: the widget's `productType=investment`
    /// shows the investment institutions only then, and the banking list otherwise
    /// (docs/sandbox.md#the-hosted-widget).
    pub investments: bool,
    /// A request's headers must be complete this long after its first byte (after the accept,
    /// for a connection's first request); otherwise the connection is closed
    /// (docs/sandbox.md#limits).
    pub header_read_timeout: Duration,
    /// A whole request, head and body, must arrive within this long of its first byte; otherwise
    /// it is answered 408 `REQUEST_TIMEOUT` and the connection is closed (docs/sandbox.md#limits).
    pub request_read_timeout: Duration,
    /// A connection with nothing to do (no request yet, between two requests, or a read or
    /// write that makes no progress) is closed after this long; a request whose body stops
    /// arriving for this long is answered 408 `REQUEST_TIMEOUT` first.
    pub idle_timeout: Duration,
    /// At most this many connections are open at once (0 counts as 1). When all are taken, a
    /// newcomer takes the place of the one longest idle or reading its request, for at least a
    /// second, or waits for one to close (docs/sandbox.md#making-room).
    pub max_connections: usize,
    /// Faults to inject, in order (docs/sandbox.md#faults); none by default.
    pub faults: Vec<Fault>,
    /// How many bulk logins (`bulk_00000`, `bulk_00001`, ...) are saved at start, at most
    /// [`MAX_LOGINS`] (docs/sandbox.md#many-logins); their LoginIds are [`login_ids`](crate::login_ids).
    pub logins: u32,
    /// When set, the admin API is served under `/_sandbox/` to requests that carry
    /// `Authorization: Bearer <admin_token>` (docs/sandbox.md#the-admin-api); without it, those
    /// paths are unknown routes, as at the real service.
    pub admin_token: Option<String>,
    /// The request log keeps at most about this many bytes (each entry counted by its fields'
    /// lengths); the oldest entries are dropped first (docs/sandbox.md#the-request-log).
    pub request_log_bytes: usize,
    /// The sandbox's "today" at start and after a reset: its data ends on it, and `advance`
    /// moves it on (docs/sandbox.md#the-clock).
    pub as_of: AsOf,
    /// When set, the sandbox is a replay server: every request is answered from this cassette,
    /// and none by the imitation, whose knobs then do nothing
    /// (docs/cassettes.md#replay-for-any-client). The request log still logs each request.
    pub cassette: Option<Arc<ServedCassette>>,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        SandboxConfig {
            customer_id: DEFAULT_CUSTOMER_ID.to_owned(),
            host: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: 0,
            pending_polls: 1,
            pending_seconds: 0.0,
            slow_pending_polls: 5,
            loading_polls: 0,
            pending_operations: PendingOperations::default(),
            async_links: AsyncLinks::Template,
            cached_challenges: CachedChallenges::Never,
            auth: true,
            secret_key: Some(PUBLIC_SECRET_KEY.to_owned()),
            api_key: Some(PUBLIC_API_KEY.to_owned()),
            session_ttl: Duration::from_secs(8 * 60),
            processing_ttl: Duration::from_secs(30 * 60),
            card_in_use: CARD_IN_USE,
            max_wrong_answers: 3,
            token_ttl: Duration::from_secs(30 * 60),
            seed: 0,
            investment_transactions: None,
            banking_transactions: None,
            tier2: false,
            investments: true,
            header_read_timeout: Duration::from_secs(10),
            request_read_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(30),
            max_connections: 1024,
            faults: Vec::new(),
            logins: 0,
            admin_token: None,
            request_log_bytes: DEFAULT_REQUEST_LOG_BYTES,
            as_of: AsOf::default(),
            cassette: None,
        }
    }
}

impl SandboxConfig {
    /// The secret key Authorize's tokens need, None when none is asked for (`auth` off or no key).
    pub fn required_secret_key(&self) -> Option<&str> {
        self.secret_key.as_deref().filter(|_| self.auth)
    }

    /// The API key data operations need, None when none is asked for (`auth` off or no key).
    pub fn required_api_key(&self) -> Option<&str> {
        self.api_key.as_deref().filter(|_| self.auth)
    }
}

/// One request the sandbox received, as a test reads it (docs/sandbox.md#the-request-log).
/// The body is kept with every secret masked (`recorded.rs`): passwords,
/// challenge answers, keys and tokens never reach the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedRequest {
    /// HTTP method, e.g. `POST`.
    pub method: String,
    /// The path without the query string.
    pub path: String,
    /// The HTTP status of the answer; 0 when none was sent (docs/sandbox.md#faults).
    pub status: u16,
    /// The wire operation the path serves (`bankfeed::protocol`, e.g. `GetAccountsDetail`; a
    /// banking operation's `...Async` GET counts as the operation); None for a path no operation
    /// serves.
    pub operation: Option<&'static str>,
    /// For Authorize, which of its shapes the body is.
    pub authorize: Option<AuthorizeKind>,
    /// The user the request concerns: the `Username` of a credentials login, or the user of the
    /// session or connection its RequestId or LoginId names.
    pub username: Option<String>,
    /// The LoginId the request names, or the one of its session; for an Authorize that opened a
    /// session, the LoginId its answer gave.
    pub login_id: Option<String>,
    /// The RequestId the request names; for an Authorize, the one its answer gave.
    pub request_id: Option<String>,
    /// The JSON body with every secret masked; None without a body, for one that is not JSON
    /// (which is never kept, since it could hold anything), or for one whose masked text is
    /// longer than [`LOGGED_BODY_BYTES`] (see `body_prefix`).
    pub body: Option<serde_json::Value>,
    /// The size in bytes of the body as received, for a request to an operation; None for
    /// others (whose body the sandbox does not read).
    pub body_size: Option<usize>,
    /// For a JSON body whose masked text is longer than [`LOGGED_BODY_BYTES`]: the first
    /// [`LOGGED_BODY_BYTES`] of that text (cut at a character), in place of `body`.
    pub body_prefix: Option<String>,
    /// When the request arrived.
    pub time: std::time::SystemTime,
}

impl RecordedRequest {
    /// The entry as `sb.requests` and the admin API give it: every field under its snake_case
    /// name, `authorize` spelled as [`AuthorizeKind::as_str`], `time` in seconds since the epoch.
    pub fn to_json(&self) -> serde_json::Value {
        // A clock before 1970 reads 0.
        let time = self.time.duration_since(std::time::UNIX_EPOCH).map_or(0.0, |since| since.as_secs_f64());
        serde_json::json!({
            "method": self.method,
            "path": self.path,
            "status": self.status,
            "operation": self.operation,
            "authorize": self.authorize.map(AuthorizeKind::as_str),
            "username": self.username,
            "login_id": self.login_id,
            "request_id": self.request_id,
            "body": self.body,
            "body_size": self.body_size,
            "body_prefix": self.body_prefix,
            "time": time,
        })
    }
}

/// The shapes of an Authorize request (docs/protocol.md#authorize).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthorizeKind {
    /// A live login with `Username` and `Password`.
    Credentials,
    /// A cached read of a saved connection (`LoginId`, `MostRecentCached` true).
    Cached,
    /// A live login by saved connection (`LoginId`, `MostRecentCached` false).
    Saved,
    /// Answers to the challenges of a `RequestId`.
    ChallengeAnswer,
}

impl AuthorizeKind {
    /// `credentials`, `cached`, `saved` or `challenge_answer`: how the log spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            AuthorizeKind::Credentials => "credentials",
            AuthorizeKind::Cached => "cached",
            AuthorizeKind::Saved => "saved",
            AuthorizeKind::ChallengeAnswer => "challenge_answer",
        }
    }
}

//! The data operations, each described once: the options it takes, the request it sends, and how
//! its 200 is read. [`crate::Client::data`] runs any of them the same way (a session opened or
//! resumed, the request sent and its 202s polled, the answer read off the IO workers and checked
//! to be the session's login), so adding an operation is one `impl` here and one method in the
//! binding (docs/architecture.md#adding-an-operation). The sandbox describes the same operations
//! from the other side (`crates/bankfeed-sandbox/src/operations/operation.rs`).

use reqwest::Method;
use serde_json::{json, Value};

use crate::authorize::Session;
use crate::config::{is_safe_segment, ClientConfig, SAFE_SEGMENT};
use crate::data::attributes::AttributesQuery;
use crate::data::money::MoneyType;
use crate::data::requests::{AccountsDetailOptions, AccountsSummaryOptions, StatementsOptions};
use crate::data::{json, Raw};
use crate::error::Error;
use crate::protocol::{self, PathValues, WireOp};
use crate::tables::{AccountsResult, AttributesResult, DataResult, InvestmentsResult, StatementsResult};

/// What a data call is made on.
#[derive(Clone, Copy, Debug)]
pub enum Target<'a> {
    /// An open session: its RequestId is polled.
    Session(&'a Session),
    /// A saved login: a cached Authorize opens its session; with `request_id` (the one a
    /// `PendingTimeout` named), that RequestId is polled again where it stood, without one.
    Login { login_id: &'a str, request_id: Option<&'a str> },
}

impl<'a> Target<'a> {
    /// A saved login, resumed at `request_id` when one is given.
    pub fn login(login_id: &'a str, request_id: Option<&'a str>) -> Self {
        Target::Login { login_id, request_id }
    }
}

/// One request of a data operation, built from a session and the call's options.
#[derive(Debug)]
pub struct Request {
    /// The wire operation's name: what its errors, logs and polling name. For an attributes
    /// package, the package's own operation (`GetIncomeAttributes`, ...).
    pub(crate) operation: &'static str,
    pub(crate) method: Method,
    pub(crate) url: String,
    pub(crate) body: Option<Value>,
    /// The `...Async` endpoint the operation is polled on when a 202 names none usable
    /// (`GetAccountsDetailAsync`); None for an operation that is repeated as it is
    /// (docs/protocol.md#polling).
    pub(crate) async_rel: Option<&'static str>,
}

impl Request {
    /// The request of `wire` named `operation`, at its path filled with `values`, on its host.
    /// Nothing is sent: [`crate::Client::data`] sends it and polls its 202s.
    fn new(
        wire: &'static WireOp,
        operation: &'static str,
        config: &ClientConfig,
        values: &PathValues<'_>,
        body: Option<Value>,
    ) -> Result<Request, Error> {
        Ok(Request {
            operation,
            method: wire.method.into(),
            url: url(wire, config, values)?,
            body,
            async_rel: wire.async_rel(),
        })
    }
}

/// A data operation as the client runs it; the client-side twin of the sandbox's trait of the
/// same name (`crates/bankfeed-sandbox/src/operations/operation.rs`), both named for one idea.
pub trait DataOperation: 'static {
    /// The operation on the wire (crates/bankfeed/src/protocol.rs): its method, path and host, and whether
    /// account detail must be polled to 200 first, and be the session's login, before it is sent
    /// (docs/protocol.md#attributes). Its name is the call's: what the deadline, a
    /// `ClientClosed` and the advice of a `PendingTimeout` name.
    const WIRE: &'static WireOp;
    type Options: Send + Sync;
    /// What a 200 is read into: it names the login the client checks it against.
    type Output: DataResult;

    /// Checks the options before anything is sent, a cached Authorize included.
    fn validate(_options: &Self::Options) -> Result<(), Error> {
        Ok(())
    }

    /// The request on `session`. Ids that go into a URL are checked here, before anything of
    /// the operation is sent.
    fn request(config: &ClientConfig, session: &Session, options: &Self::Options) -> Result<Request, Error>;

    /// Reads a 200 of `operation` (the [`Request`]'s), its money as the client's `money` option
    /// says (docs/tables.md#money).
    fn read(operation: &'static str, raw: Raw, money: MoneyType) -> Result<Self::Output, Error>;
}

/// The Investments of a login (on the Investments host).
pub struct Investments;

impl DataOperation for Investments {
    const WIRE: &'static WireOp = &protocol::INVESTMENTS;
    type Options = ();
    type Output = InvestmentsResult;

    fn request(config: &ClientConfig, session: &Session, _options: &()) -> Result<Request, Error> {
        let login_id = session_login_id(session)?;
        let body = json!({"LoginId": login_id, "RequestId": session.request_id, "MostRecentCached": true});
        Request::new(Self::WIRE, Self::WIRE.name, config, &PathValues::new(&config.customer_id), Some(body))
    }

    fn read(_operation: &'static str, raw: Raw, money: MoneyType) -> Result<InvestmentsResult, Error> {
        InvestmentsResult::read(raw, money)
    }
}

/// GetAccountsDetail: accounts with their transactions, identity and statements as asked.
pub struct AccountsDetail;

impl DataOperation for AccountsDetail {
    const WIRE: &'static WireOp = &protocol::GET_ACCOUNTS_DETAIL;
    type Options = AccountsDetailOptions;
    type Output = AccountsResult;

    fn validate(options: &AccountsDetailOptions) -> Result<(), Error> {
        options.validate()
    }

    fn request(config: &ClientConfig, session: &Session, options: &AccountsDetailOptions) -> Result<Request, Error> {
        banking(Self::WIRE, config, options.body(&session.request_id))
    }

    fn read(operation: &'static str, raw: Raw, money: MoneyType) -> Result<AccountsResult, Error> {
        AccountsResult::read(operation, raw, money)
    }
}

/// GetAccountsSummary: the accounts without their transactions.
pub struct AccountsSummary;

impl DataOperation for AccountsSummary {
    const WIRE: &'static WireOp = &protocol::GET_ACCOUNTS_SUMMARY;
    type Options = AccountsSummaryOptions;
    type Output = AccountsResult;

    fn request(config: &ClientConfig, session: &Session, options: &AccountsSummaryOptions) -> Result<Request, Error> {
        banking(Self::WIRE, config, options.body(&session.request_id))
    }

    fn read(operation: &'static str, raw: Raw, money: MoneyType) -> Result<AccountsResult, Error> {
        AccountsResult::read(operation, raw, money)
    }
}

/// GetStatements: the statement files of the login's accounts.
pub struct Statements;

impl DataOperation for Statements {
    const WIRE: &'static WireOp = &protocol::GET_STATEMENTS;
    type Options = StatementsOptions;
    type Output = StatementsResult;

    fn validate(options: &StatementsOptions) -> Result<(), Error> {
        options.validate()
    }

    fn request(config: &ClientConfig, session: &Session, options: &StatementsOptions) -> Result<Request, Error> {
        banking(Self::WIRE, config, options.body(&session.request_id))
    }

    fn read(_operation: &'static str, raw: Raw, _money: MoneyType) -> Result<StatementsResult, Error> {
        StatementsResult::read(raw)
    }
}

/// Attributes: a use-case package, or custom attributes, of a login whose account detail is
/// ready (docs/protocol.md#attributes).
pub struct Attributes;

impl DataOperation for Attributes {
    // The custom POST; a package is the use-case GET (`request`).
    const WIRE: &'static WireOp = &protocol::ATTRIBUTES;
    type Options = AttributesQuery;
    type Output = AttributesResult;

    fn validate(query: &AttributesQuery) -> Result<(), Error> {
        match query {
            AttributesQuery::Custom(custom) => custom.validate(),
            AttributesQuery::Package(_) => Ok(()),
        }
    }

    fn request(config: &ClientConfig, session: &Session, query: &AttributesQuery) -> Result<Request, Error> {
        let login_id = session_login_id(session)?;
        // Both ids came from the service and go into a URL that carries the api key.
        path_segment(session, "LoginId", login_id)?;
        path_segment(session, "RequestId", &session.request_id)?;
        let values = PathValues::new(&config.customer_id).login_id(login_id).request_id(&session.request_id);
        match query {
            // A use-case GET is named after its package (`GetIncomeAttributes`) in errors and logs.
            AttributesQuery::Package(package) => {
                let operation = package.operation();
                Request::new(&protocol::ATTRIBUTES_USE_CASE, operation, config, &values.operation(operation), None)
            }
            AttributesQuery::Custom(custom) => {
                Request::new(Self::WIRE, Self::WIRE.name, config, &values, Some(custom.body()))
            }
        }
    }

    fn read(operation: &'static str, raw: Raw, money: MoneyType) -> Result<AttributesResult, Error> {
        AttributesResult::read(operation, raw, money)
    }
}

/// A request of the banking operation `wire` with `body`.
fn banking(wire: &'static WireOp, config: &ClientConfig, body: Value) -> Result<Request, Error> {
    Request::new(wire, wire.name, config, &PathValues::new(&config.customer_id), Some(body))
}

/// The URL of `wire` with its path filled with `values`, on its host. A value the template
/// names and the caller did not give is bankfeed's own failure, not the service's.
pub(crate) fn url(wire: &WireOp, config: &ClientConfig, values: &PathValues<'_>) -> Result<String, Error> {
    wire.url(&config.base_url, &config.investments_base_url, values)
        .map_err(|missing| Error::Internal { message: format!("bankfeed could not build a URL: {missing}") })
}

/// The LoginId of `session`, which an operation naming the login needs.
fn session_login_id(session: &Session) -> Result<&str, Error> {
    session
        .login_id
        .as_deref()
        .ok_or_else(|| Error::config("login_id", "is unknown for this session: open it with a login or a LoginId"))
}

/// An id of `session` that goes into a URL must be one safe path segment
/// (docs/protocol.md#hosts-paths-and-versions): else the Authorize answer that named it was a
/// protocol surprise. The error keeps the answer's snippet, not the offending value (it may hold
/// line breaks).
fn path_segment(session: &Session, field: &str, value: &str) -> Result<(), Error> {
    if is_safe_segment(value) {
        return Ok(());
    }
    Err(Error::Protocol {
        operation: "Authorize".to_owned(),
        status: 200,
        message: format!("the session's {field} is not {SAFE_SEGMENT}, so it cannot go into a URL"),
        request_id: Some(session.request_id.clone()).filter(|id| is_safe_segment(id)),
        snippet: json::body_snippet(&session.raw),
    })
}

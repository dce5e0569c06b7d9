//! `GetAccountsDetail` and `GetAccountsSummary` (POST, and their `...Async/{requestId}` GETs):
//! the generated banking accounts of the session's login.

use axum::response::{IntoResponse, Response};
use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::generator::{
    dash_date, offset_of, AsOf, BankAccount, BankTransaction, Banking, Cents, Description, Guid, DAYS,
};
use crate::operations::operation::{DataOperation, Ready};
use crate::server::body::{field, Body};
use crate::server::reply::{Envelope, ErrorReply, InstitutionFields, Link};
use crate::world::state::{Session, Shared};
use bankfeed::protocol::{self, WireOp};

/// The statement counts `NumberOfBankingStatements` and `NumberOfStatements` take.
pub(crate) const STATEMENT_COUNTS: [&str; 3] = ["MostRecent", "Months3", "Months12"];

/// What a GetAccountsDetail request asks for (docs/protocol.md#account-detail-options).
pub(crate) struct DetailOptions {
    /// `WithAccountIdentity` (default false): the transit, institution and account numbers.
    identity: bool,
    /// `WithKYC` (default true): the `Holder`.
    kyc: bool,
    transactions: bool,
    window: Window,
    /// `RefreshDelta`: (AccountId, TransactionId) pairs, checked against the login's data.
    delta: Vec<(String, String)>,
    filter: Option<Vec<String>>,
}

/// The transactions a request asks for, by their dates: `DateFrom` and `DateTo` as days after
/// the clock's first day (so a request remembered while pending means the same after the clock
/// moves), and the horizon in days back from the clock.
#[derive(Clone, Copy)]
struct Window {
    from: Option<i64>,
    to: Option<i64>,
    horizon: i64,
}

impl Window {
    /// As day offsets before `clock`: `newest` (inclusive) to `oldest` (exclusive).
    fn offsets(self, clock: AsOf) -> (u16, u16) {
        let today = i64::from(clock.days_after_first());
        let clamp = |offset: i64| u16::try_from(offset.clamp(0, i64::from(DAYS))).unwrap_or(DAYS);
        let newest = clamp(self.to.map_or(0, |to| today - to));
        let oldest = clamp(self.from.map_or(self.horizon, |from| (today - from + 1).min(self.horizon)));
        (newest, oldest)
    }
}

fn detail_options(body: &Body) -> Result<DetailOptions, ErrorReply> {
    body.flag("WithDetailsAndBankingStatements")?;
    body.choice("NumberOfBankingStatements", &STATEMENT_COUNTS)?;
    Ok(DetailOptions {
        identity: body.flag("WithAccountIdentity")?.unwrap_or(false),
        kyc: body.flag("WithKYC")?.unwrap_or(true),
        transactions: body.flag("WithTransactions")?.unwrap_or(true),
        window: window(body)?,
        delta: refresh_delta(body)?,
        filter: body.strings("AccountsFilter")?,
    })
}

/// `DaysOfTransactions` (or `DaysOfTransaction`, as older clients spell it) and `DateFrom` /
/// `DateTo`: the days are the horizon when they are given, or when no date is; dates narrow it.
/// The horizon counts back from the sandbox's clock (docs/sandbox.md#the-clock).
fn window(body: &Body) -> Result<Window, ErrorReply> {
    const DAYS_CHOICES: [&str; 2] = ["Days90", "Days365"];
    let days = match body.choice("DaysOfTransactions", &DAYS_CHOICES)? {
        Some(days) => Some(days),
        None => body.choice("DaysOfTransaction", &DAYS_CHOICES)?,
    };
    let date = |key: &str| -> Result<Option<i64>, ErrorReply> {
        let Some(text) = body.string(key)? else { return Ok(None) };
        // Days after the clock's first day: the offset before that day, negated.
        offset_of(AsOf::default(), text).map(|offset| Some(-offset)).ok_or_else(|| {
            ErrorReply::invalid_request(format!("{key} must be a date written YYYY-MM-DD, not {text:?}"))
        })
    };
    let (from, to) = (date("DateFrom")?, date("DateTo")?);
    if let (Some(from), Some(to)) = (from, to) {
        if from > to {
            return Err(ErrorReply::invalid_request("DateFrom must not be later than DateTo"));
        }
    }
    let horizon: i64 = match days {
        Some("Days365") => 365,
        Some(_) => 90,
        None if from.is_some() || to.is_some() => i64::from(DAYS),
        None => 90,
    };
    Ok(Window { from, to, horizon })
}

/// `RefreshDelta`: `[{"AccountId": ..., "TransactionId": ...}]`, the last transaction the caller
/// holds of each account; that account then answers only the transactions after it.
fn refresh_delta(body: &Body) -> Result<Vec<(String, String)>, ErrorReply> {
    const KEY: &str = "RefreshDelta";
    let Some(value) = body.get(KEY) else { return Ok(Vec::new()) };
    let shape = || {
        ErrorReply::invalid_request(format!(
            "{KEY} must be an array of objects with AccountId and TransactionId (strings)"
        ))
    };
    let items = value.as_array().ok_or_else(shape)?;
    items
        .iter()
        .map(|item| {
            let map = item.as_object().ok_or_else(shape)?;
            let text = |key: &str| field(map, key).and_then(Value::as_str).map(str::to_owned).ok_or_else(shape);
            Ok((text("AccountId")?, text("TransactionId")?))
        })
        .collect()
}

/// `GetAccountsDetail`.
pub(crate) struct Detail;

impl DataOperation for Detail {
    const WIRE: &'static WireOp = &protocol::GET_ACCOUNTS_DETAIL;
    type Options = DetailOptions;

    fn options(body: &Body) -> Result<DetailOptions, ErrorReply> {
        detail_options(body)
    }

    /// Attributes are computed from account detail, so they wait until it has been delivered.
    fn on_ready(session: &mut Session) {
        session.detail_ready = true;
    }

    fn answer(shared: &Shared, ready: &Ready, options: DetailOptions) -> Response {
        let banking = shared.data.banking(&shared.config, &ready.login_id, shared.clock());
        if let Err(reply) = known_accounts(&banking, options.filter.as_deref(), "AccountsFilter") {
            return reply.with_request_id(&ready.request_id).into_response();
        }
        let starts = match delta_starts(&banking, &options.delta) {
            Ok(starts) => starts,
            Err(reply) => return reply.with_request_id(&ready.request_id).into_response(),
        };
        let identity = options.identity;
        let accounts: Vec<DetailAccount> = selected(&banking, options.filter.as_deref())
            .map(|account| {
                let start = starts.iter().find(|(id, _)| *id == account.id).map_or(0, |(_, start)| *start);
                DetailAccount {
                    transactions: options.transactions.then_some(Transactions {
                        list: account.transactions.get(start..).unwrap_or_default(),
                        window: options.window,
                        clock: banking.clock,
                    }),
                    transit_number: identity.then_some(account.transit_number.as_str()),
                    institution_number: identity.then_some(account.institution_number),
                    overdraft_limit: account.overdraft_limit,
                    title: account.title,
                    account_number: identity.then_some(account.account_number.as_str()),
                    last_four_digits: account.last_four_digits(),
                    balance: balance(account),
                    category: account.category,
                    kind: account.kind,
                    currency: "CAD",
                    holder: options.kyc.then(|| holder(&banking)),
                    account_type: "Personal",
                    id: account.id,
                }
            })
            .collect();
        Envelope::new(
            AccountsBody { accounts, links: None, tag: None },
            Some(InstitutionFields::BANKING),
            Some(ready.login(Some("Personal"))),
            &ready.request_id,
        )
        .ok()
    }
}

/// The accounts `filter` names (by Id, any case), or all of them.
pub(crate) fn selected<'a>(
    banking: &'a Banking,
    filter: Option<&'a [String]>,
) -> impl Iterator<Item = &'a BankAccount> {
    banking.accounts.iter().filter(move |account| match filter {
        None => true,
        Some(ids) => {
            let id = account.id.to_string();
            ids.iter().any(|wanted| wanted.trim().eq_ignore_ascii_case(&id))
        }
    })
}

pub(crate) struct SummaryOptions {
    balance: bool,
    identity: bool,
}

const SUMMARY_LINKS: [Link; 2] =
    [Link::new("AccountsDetail", "/GetAccountsDetail"), Link::new("Statements", "/GetStatements")];

/// Refuses a filter naming an account the login does not have: an answer without it would look
/// like an account that vanished (docs/protocol.md#account-detail-options).
pub(crate) fn known_accounts(banking: &Banking, filter: Option<&[String]>, key: &str) -> Result<(), ErrorReply> {
    for wanted in filter.unwrap_or_default() {
        if !banking.accounts.iter().any(|account| wanted.trim().eq_ignore_ascii_case(&account.id.to_string())) {
            return Err(ErrorReply::invalid_request(format!(
                "{key} names {wanted:?}, which is no account of this login"
            )));
        }
    }
    Ok(())
}

/// For each `RefreshDelta` pair, the account and the index of its first transaction after the
/// named one.
fn delta_starts(banking: &Banking, delta: &[(String, String)]) -> Result<Vec<(Guid, usize)>, ErrorReply> {
    delta
        .iter()
        .map(|(account_id, transaction_id)| {
            let account = banking
                .accounts
                .iter()
                .find(|account| account_id.trim().eq_ignore_ascii_case(&account.id.to_string()))
                .ok_or_else(|| {
                    ErrorReply::invalid_request(format!(
                        "RefreshDelta names the AccountId {account_id:?}, which is no account of this login"
                    ))
                })?;
            let index = account
                .transactions
                .iter()
                .position(|transaction| transaction_id.trim().eq_ignore_ascii_case(&transaction.id.to_string()))
                .ok_or_else(|| {
                    ErrorReply::invalid_request(format!(
                        "RefreshDelta names the TransactionId {transaction_id:?}, which is no transaction of account {account_id}"
                    ))
                })?;
            Ok((account.id, index + 1))
        })
        .collect()
}

/// `GetAccountsSummary`.
pub(crate) struct Summary;

impl DataOperation for Summary {
    const WIRE: &'static WireOp = &protocol::GET_ACCOUNTS_SUMMARY;
    type Options = SummaryOptions;

    fn options(body: &Body) -> Result<SummaryOptions, ErrorReply> {
        Ok(SummaryOptions {
            balance: body.flag("WithBalance")?.unwrap_or(true),
            identity: body.flag("WithAccountIdentity")?.unwrap_or(true),
        })
    }

    fn answer(shared: &Shared, ready: &Ready, options: SummaryOptions) -> Response {
        let banking = shared.data.banking(&shared.config, &ready.login_id, shared.clock());
        let accounts: Vec<SummaryAccount> = banking
            .accounts
            .iter()
            .map(|account| SummaryAccount {
                eft_eligible_ratio: account.eft_eligible_ratio,
                e_transfer_eligible_ratio: account.etransfer_eligible_ratio,
                title: account.title,
                account_number: &account.account_number,
                last_four_digits: account.last_four_digits(),
                balance: options.balance.then(|| balance(account)),
                category: account.category,
                kind: account.kind,
                currency: "CAD",
                holder: options.identity.then_some(NameOnly { name: &banking.holder.name }),
                account_type: "Personal",
                id: account.id,
            })
            .collect();
        Envelope::new(
            AccountsBody { accounts, links: Some(&SUMMARY_LINKS), tag: ready.tag.as_ref() },
            Some(InstitutionFields::BANKING),
            Some(ready.login(Some("Personal"))),
            &ready.request_id,
        )
        .ok()
    }
}

fn balance(account: &BankAccount) -> BalanceBody {
    BalanceBody { available: account.available, current: account.current, limit: account.limit }
}

fn holder(banking: &Banking) -> HolderBody<'_> {
    let holder = &banking.holder;
    HolderBody {
        name: &holder.name,
        address: AddressBody {
            civic_address: &holder.civic_address,
            city: holder.city,
            province: holder.province,
            postal_code: &holder.postal_code,
            po_box: None,
            country: "CA",
        },
        email: &holder.email,
        phone_number: &holder.phone_number,
    }
}

// ---- the wire shapes -----------------------------------------------------------------------

/// `Accounts` (and the summary's `Links`), inside the [`Envelope`].
#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct AccountsBody<'a, A> {
    accounts: Vec<A>,
    #[serde(skip_serializing_if = "Option::is_none")]
    links: Option<&'a [Link]>,
    /// The session's `Tag`, echoed by the summary as its documented example shows
    /// (docs/protocol.md#account-detail-summary-and-statements).
    #[serde(skip_serializing_if = "Option::is_none")]
    tag: Option<&'a serde_json::Value>,
}

/// Fields in the order the service sends them.
#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct DetailAccount<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    transactions: Option<Transactions<'a>>,
    transit_number: Option<&'a str>,
    institution_number: Option<&'static str>,
    overdraft_limit: Cents,
    title: &'static str,
    account_number: Option<&'a str>,
    last_four_digits: &'a str,
    balance: BalanceBody,
    category: &'static str,
    #[serde(rename = "Type")]
    kind: &'static str,
    currency: &'static str,
    holder: Option<HolderBody<'a>>,
    account_type: &'static str,
    id: Guid,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct BalanceBody {
    available: Option<Cents>,
    current: Cents,
    limit: Option<Cents>,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct HolderBody<'a> {
    name: &'a str,
    address: AddressBody<'a>,
    email: &'a str,
    phone_number: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct AddressBody<'a> {
    civic_address: &'a str,
    city: &'a str,
    province: &'a str,
    postal_code: &'a str,
    #[serde(rename = "POBox")]
    po_box: Option<&'a str>,
    country: &'a str,
}

/// An account's transactions dated within a [`Window`], the last posted first, written straight
/// from the generated list (no intermediate copies of 100,000 rows). A late transaction's date
/// is older than those posted before it, so the window is a filter, not a cut.
struct Transactions<'a> {
    /// In the order they posted, oldest first.
    list: &'a [BankTransaction],
    window: Window,
    clock: AsOf,
}

impl Serialize for Transactions<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (newest, oldest) = self.window.offsets(self.clock);
        serializer.collect_seq(
            self.list
                .iter()
                .rev()
                .filter(|transaction| (newest..oldest).contains(&transaction.day))
                .map(|transaction| TransactionBody::new(transaction, self.clock)),
        )
    }
}

/// Fields in the order the service was recorded sending them, `Id` last
/// (docs/sandbox.md#where-the-sandbox-differs-from-the-real-service).
#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct TransactionBody<'a> {
    date: &'static str,
    /// Deprecated; the service sends it null (docs/protocol.md#account-detail-summary-and-statements).
    code: Option<&'static str>,
    description: Description<'a>,
    debit: Option<Cents>,
    credit: Option<Cents>,
    balance: Cents,
    id: Guid,
}

impl<'a> TransactionBody<'a> {
    fn new(transaction: &'a BankTransaction, clock: AsOf) -> TransactionBody<'a> {
        TransactionBody {
            date: dash_date(clock, transaction.day),
            code: None,
            description: transaction.description(),
            debit: transaction.debit(),
            credit: transaction.credit(),
            balance: transaction.balance,
            id: transaction.id,
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct SummaryAccount<'a> {
    eft_eligible_ratio: f64,
    #[serde(rename = "ETransferEligibleRatio")]
    e_transfer_eligible_ratio: f64,
    title: &'static str,
    account_number: &'a str,
    last_four_digits: &'a str,
    balance: Option<BalanceBody>,
    category: &'static str,
    #[serde(rename = "Type")]
    kind: &'static str,
    currency: &'static str,
    holder: Option<NameOnly<'a>>,
    account_type: &'static str,
    id: Guid,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct NameOnly<'a> {
    name: &'a str,
}

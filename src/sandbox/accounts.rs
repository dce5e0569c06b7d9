//! `GetAccountsDetail` and `GetAccountsSummary` (POST, and their `...Async/{requestId}` GETs):
//! the generated banking accounts of the session's login.

use axum::response::Response;
use serde::{Serialize, Serializer};

use super::body::Body;
use super::generator::{dash_date, BankAccount, BankTransaction, Banking, Cents, Description, Guid};
use super::operation::{DataOperation, Ready};
use super::reply::{Envelope, ErrorReply, InstitutionFields, Link};
use super::state::{Session, Shared};
use crate::protocol::{self, WireOp};

/// The statement counts `NumberOfBankingStatements` and `NumberOfStatements` take.
pub(crate) const STATEMENT_COUNTS: [&str; 3] = ["MostRecent", "Months3", "Months12"];

/// What a GetAccountsDetail request asks for.
pub(crate) struct DetailOptions {
    identity: bool,
    transactions: bool,
    /// The newest day offset not included: 90 for `Days90`, 365 for `Days365`.
    days: u16,
    filter: Option<Vec<String>>,
}

fn detail_options(body: &Body) -> Result<DetailOptions, ErrorReply> {
    body.flag("WithKYC")?;
    body.flag("WithDetailsAndBankingStatements")?;
    body.choice("NumberOfBankingStatements", &STATEMENT_COUNTS)?;
    let days = match body.choice("DaysOfTransactions", &["Days90", "Days365"])? {
        Some("Days365") => 365,
        _ => 90,
    };
    Ok(DetailOptions {
        identity: body.flag("WithAccountIdentity")?.unwrap_or(false),
        transactions: body.flag("WithTransactions")?.unwrap_or(true),
        days,
        filter: body.strings("AccountsFilter")?,
    })
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
        let banking = shared.data.banking(&shared.config, &ready.login_id);
        let accounts: Vec<DetailAccount> = selected(&banking, options.filter.as_deref())
            .map(|account| DetailAccount {
                transactions: options
                    .transactions
                    .then_some(Transactions { list: &account.transactions, days: options.days }),
                transit_number: &account.transit_number,
                institution_number: account.institution_number,
                overdraft_limit: account.overdraft_limit,
                title: account.title,
                account_number: &account.account_number,
                last_four_digits: account.last_four_digits(),
                balance: balance(account),
                category: account.category,
                kind: account.kind,
                currency: "CAD",
                holder: options.identity.then(|| holder(&banking)),
                account_type: "Personal",
                id: account.id,
            })
            .collect();
        Envelope::new(
            AccountsBody { accounts, links: None },
            Some(InstitutionFields::BANKING),
            ready.login(Some("Personal")),
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
        let banking = shared.data.banking(&shared.config, &ready.login_id);
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
            AccountsBody { accounts, links: Some(&SUMMARY_LINKS) },
            Some(InstitutionFields::BANKING),
            ready.login(Some("Personal")),
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
}

/// Fields in the order the service sends them.
#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct DetailAccount<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    transactions: Option<Transactions<'a>>,
    transit_number: &'a str,
    institution_number: &'static str,
    overdraft_limit: Cents,
    title: &'static str,
    account_number: &'a str,
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

/// An account's transactions newer than `days`, newest first, written straight from the
/// generated list (no intermediate copies of 100,000 rows).
struct Transactions<'a> {
    /// Oldest first.
    list: &'a [BankTransaction],
    days: u16,
}

impl Serialize for Transactions<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let days = self.days;
        serializer.collect_seq(
            self.list.iter().rev().take_while(|transaction| transaction.day < days).map(TransactionBody::from),
        )
    }
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct TransactionBody<'a> {
    id: Guid,
    date: &'static str,
    code: Option<&'static str>,
    description: Description<'a>,
    debit: Option<Cents>,
    credit: Option<Cents>,
    balance: Cents,
}

impl<'a> From<&'a BankTransaction> for TransactionBody<'a> {
    fn from(transaction: &'a BankTransaction) -> TransactionBody<'a> {
        TransactionBody {
            id: transaction.id,
            date: dash_date(transaction.day),
            code: transaction.code,
            description: transaction.description(),
            debit: transaction.debit(),
            credit: transaction.credit(),
            balance: transaction.balance,
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

//! What a data operation gives the Python layer: its tables, built in Rust, with the payload's
//! bytes as they came (for `.raw` and pickling) and what else a result reads from the payload.
//!
//! Each is read from bytes with borrowed text where the payload allows it, the same way for a
//! live answer ([`crate::Client::data`]) and a saved one (`from_json`).

use std::borrow::Cow;

use super::{
    attribute_detail_table, attribute_values_table, statements_table, AccountsTables, InvestmentsTables, Table,
};
use crate::data::accounts::{Accounts, Statements};
use crate::data::attributes::Attributes;
use crate::data::investments::Investments;
use crate::data::login::NamesLogin;
use crate::data::money::MoneyType;
use crate::data::{json, Payload, Raw};
use crate::error::Error;

/// The result of a data operation, as [`crate::Client::data`] checks it before handing it out:
/// an answer that names another login than the session's is refused
/// (crates/bankfeed/src/data/login.rs, `check_same_login`).
pub trait DataResult: Send + 'static {
    /// The LoginId the payload names (its `Login.Id`), when it names one.
    fn login_id(&self) -> Option<&str>;
    /// The payload's bytes as they came.
    fn raw(&self) -> &Raw;
}

/// An Investments payload as tables, with its totals and RequestId (in `tables`) and its bytes.
#[derive(Clone, Debug)]
pub struct InvestmentsResult {
    pub tables: InvestmentsTables,
    pub raw: Raw,
}

impl InvestmentsResult {
    /// Reads a 200 of Investments, checked as a live answer is (docs/errors.md#protocol-surprises),
    /// money as `money` says.
    pub fn read(raw: Raw, money: MoneyType) -> Result<Self, Error> {
        Ok(InvestmentsResult { tables: InvestmentsTables::read(raw.bytes(), money)?, raw })
    }
}

impl DataResult for InvestmentsResult {
    fn login_id(&self) -> Option<&str> {
        self.tables.login_id.as_deref()
    }
    fn raw(&self) -> &Raw {
        &self.raw
    }
}

impl TryFrom<Payload<Investments>> for InvestmentsResult {
    type Error = Error;

    fn try_from(payload: Payload<Investments>) -> Result<Self, Error> {
        Ok(InvestmentsResult { tables: InvestmentsTables::new(&payload.data)?, raw: payload.raw })
    }
}

/// A GetAccountsDetail or GetAccountsSummary payload as tables, with its bytes.
#[derive(Clone, Debug)]
pub struct AccountsResult {
    pub tables: AccountsTables,
    pub raw: Raw,
}

impl AccountsResult {
    /// Reads a 200 of `operation` (`GetAccountsDetail` or `GetAccountsSummary`), whose name the
    /// errors carry, money as `money` says.
    pub fn read(operation: &str, raw: Raw, money: MoneyType) -> Result<Self, Error> {
        Ok(AccountsResult { tables: AccountsTables::read(operation, raw.bytes(), money)?, raw })
    }
}

impl DataResult for AccountsResult {
    fn login_id(&self) -> Option<&str> {
        self.tables.login_id.as_deref()
    }
    fn raw(&self) -> &Raw {
        &self.raw
    }
}

impl TryFrom<Payload<Accounts>> for AccountsResult {
    type Error = Error;

    fn try_from(payload: Payload<Accounts>) -> Result<Self, Error> {
        Ok(AccountsResult { tables: AccountsTables::new(&payload.data)?, raw: payload.raw })
    }
}

/// A GetStatements payload with its table. The model is owned: the files are decoded from it
/// when asked for.
#[derive(Clone, Debug)]
pub struct StatementsResult {
    pub payload: Payload<Statements>,
    pub statements: Table,
}

impl StatementsResult {
    /// Reads a 200 of GetStatements, checked as a live answer is.
    pub fn read(raw: Raw) -> Result<Self, Error> {
        Ok(StatementsResult::from(Payload { data: Statements::parse(raw.bytes())?, raw }))
    }
}

impl DataResult for StatementsResult {
    fn login_id(&self) -> Option<&str> {
        self.payload.data.login_id()
    }
    fn raw(&self) -> &Raw {
        &self.payload.raw
    }
}

impl From<Payload<Statements>> for StatementsResult {
    fn from(payload: Payload<Statements>) -> Self {
        let statements = statements_table(&payload.data);
        StatementsResult { payload, statements }
    }
}

/// An attributes payload with its tables. The model is kept: its values are read by name.
#[derive(Clone, Debug)]
pub struct AttributesResult {
    pub payload: Payload<Attributes>,
    pub values: Table,
    pub detail: Table,
}

impl AttributesResult {
    /// Reads a 200 of the attributes operation `operation`, whose name the errors carry, the
    /// detail's money as `money` says; an amount that does not fit its decimal column is the
    /// payload's error, naming `operation` and the column (docs/tables.md#money).
    pub fn read(operation: &str, raw: Raw, money: MoneyType) -> Result<Self, Error> {
        let data = Attributes::read_with_money(operation, raw.bytes(), money)?;
        let values = attribute_values_table(&data);
        let detail = attribute_detail_table(operation, &data)?;
        Ok(AttributesResult { payload: Payload { data, raw }, values, detail })
    }
}

impl DataResult for AttributesResult {
    fn login_id(&self) -> Option<&str> {
        self.payload.data.login_id()
    }
    fn raw(&self) -> &Raw {
        &self.payload.raw
    }
}

/// Checks that a 200 of GetAccountsDetail is its payload, as reading it would, keeping only the
/// `Login.Id` it names: the attributes preparation only needs the detail to be ready, and for
/// the login it was asked for.
pub(crate) fn check_accounts(operation: &str, raw: &Raw) -> Result<Option<String>, Error> {
    let accounts = json::decode_payload::<Accounts<Cow<str>>>(operation, 200, raw.bytes())?;
    Ok(accounts.login_id().map(str::to_owned))
}

//! Banking payloads as tables: accounts, transactions (account joined), statements.

use super::money::{cell, Amount, Unfit};
use super::{build, build_plain, Read, Table, Text};
use crate::data::accounts::{AccountStatements, Accounts, BankAccount, BankTransaction, Statement, Statements};
use crate::data::login::NamesLogin;
use crate::data::money::{JsonNumber, MoneyType, Written, AMOUNT};

pub fn accounts_table<S: Text, N: Amount>(accounts: &Accounts<S, N>) -> Result<Table, Unfit> {
    let rows: Vec<&BankAccount<S, N>> = accounts.accounts.iter().collect();
    build(
        &rows,
        &[
            ("account_id", Read::Text(|a| a.id.as_deref())),
            ("title", Read::Text(|a| a.title.as_deref())),
            ("account_number", Read::Text(|a| a.account_number.as_deref())),
            ("last_four_digits", Read::Text(|a| a.last_four_digits.as_deref())),
            ("transit_number", Read::Text(|a| a.transit_number.as_deref())),
            ("institution_number", Read::Text(|a| a.institution_number.as_deref())),
            ("category", Read::Text(|a| a.category.as_deref())),
            ("type", Read::Text(|a| a.kind.as_deref())),
            ("account_type", Read::Text(|a| a.account_type.as_deref())),
            ("currency", Read::Text(|a| a.currency.as_deref())),
            (
                "balance_available",
                Read::Money(N::decimal(AMOUNT), |a| a.balance.as_ref().and_then(|b| cell(b.available.as_ref()))),
            ),
            (
                "balance_current",
                Read::Money(N::decimal(AMOUNT), |a| a.balance.as_ref().and_then(|b| cell(b.current.as_ref()))),
            ),
            (
                "balance_limit",
                Read::Money(N::decimal(AMOUNT), |a| a.balance.as_ref().and_then(|b| cell(b.limit.as_ref()))),
            ),
            ("overdraft_limit", Read::Money(N::decimal(AMOUNT), |a| cell(a.overdraft_limit.as_ref()))),
            ("eft_eligible_ratio", Read::Float(|a| a.eft_eligible_ratio)),
            ("e_transfer_eligible_ratio", Read::Float(|a| a.e_transfer_eligible_ratio)),
            ("holder_name", Read::Text(|a| a.holder.as_ref().and_then(|h| h.name.as_deref()))),
            ("holder_email", Read::Text(|a| a.holder.as_ref().and_then(|h| h.email.as_deref()))),
            ("holder_phone_number", Read::Text(|a| a.holder.as_ref().and_then(|h| h.phone_number.as_deref()))),
            ("holder_city", Read::Text(|a| a.holder.as_ref().and_then(|h| h.address.as_ref()?.city.as_deref()))),
            (
                "holder_province",
                Read::Text(|a| a.holder.as_ref().and_then(|h| h.address.as_ref()?.province.as_deref())),
            ),
            (
                "holder_postal_code",
                Read::Text(|a| a.holder.as_ref().and_then(|h| h.address.as_ref()?.postal_code.as_deref())),
            ),
        ],
    )
}

struct TransactionRow<'a, S, N> {
    account: &'a BankAccount<S, N>,
    transaction: &'a BankTransaction<S, N>,
}

pub fn bank_transactions_table<S: Text, N: Amount>(accounts: &Accounts<S, N>) -> Result<Table, Unfit> {
    let rows: Vec<TransactionRow<S, N>> = accounts
        .accounts
        .iter()
        .flat_map(|account| account.transactions.iter().map(move |transaction| TransactionRow { account, transaction }))
        .collect();
    build(
        &rows,
        &[
            ("account_id", Read::Text(|r| r.account.id.as_deref())),
            ("account_number", Read::Text(|r| r.account.account_number.as_deref())),
            ("account_title", Read::Text(|r| r.account.title.as_deref())),
            ("account_category", Read::Text(|r| r.account.category.as_deref())),
            ("account_type", Read::Text(|r| r.account.kind.as_deref())),
            ("currency", Read::Text(|r| r.account.currency.as_deref())),
            ("transaction_id", Read::Text(|r| r.transaction.id.as_deref())),
            ("date", Read::Date(|r| r.transaction.date.as_deref())),
            ("code", Read::Text(|r| r.transaction.code.as_deref())),
            ("description", Read::Text(|r| r.transaction.description.as_deref())),
            ("debit", Read::Money(N::decimal(AMOUNT), |r| cell(r.transaction.debit.as_ref()))),
            ("credit", Read::Money(N::decimal(AMOUNT), |r| cell(r.transaction.credit.as_ref()))),
            ("balance", Read::Money(N::decimal(AMOUNT), |r| cell(r.transaction.balance.as_ref()))),
        ],
    )
}

/// The tables of a GetAccountsDetail or GetAccountsSummary payload.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AccountsTables {
    pub request_id: Option<String>,
    /// `Login.Id`: the login the data belongs to.
    pub login_id: Option<String>,
    /// Summary only, when sent at the top level: the share of EFT-eligible accounts (0..1).
    pub eft_eligible_ratio: Option<f64>,
    /// Summary only, when sent at the top level: the share of e-transfer-eligible accounts.
    pub e_transfer_eligible_ratio: Option<f64>,
    pub accounts: Table,
    pub transactions: Table,
    /// How the tables hold money (docs/tables.md#money).
    pub money: MoneyType,
}

impl AccountsTables {
    /// The tables of a GetAccountsDetail payload (see [`AccountsTables::of`]).
    pub fn new<S: Text, N: Amount>(accounts: &Accounts<S, N>) -> Result<Self, crate::Error> {
        Self::of("GetAccountsDetail", accounts)
    }

    /// The tables of a payload of `operation`; a decimal money value that does not fit its
    /// column is the payload's error, naming `operation` and the column (docs/tables.md#money).
    pub fn of<S: Text, N: Amount>(operation: &str, accounts: &Accounts<S, N>) -> Result<Self, crate::Error> {
        let unfit = |table: &'static str| move |unfit: Unfit| super::unfit_error(operation, table, &unfit);
        Ok(AccountsTables {
            request_id: accounts.request_id.as_deref().map(str::to_owned),
            login_id: accounts.login_id().map(str::to_owned),
            eft_eligible_ratio: accounts.eft_eligible_ratio,
            e_transfer_eligible_ratio: accounts.e_transfer_eligible_ratio,
            accounts: accounts_table(accounts).map_err(unfit("accounts"))?,
            transactions: bank_transactions_table(accounts).map_err(unfit("transactions"))?,
            money: super::money::money_type::<N>(),
        })
    }

    /// Reads a payload straight into its tables, its text borrowed from `json` while they are
    /// built (as [`super::InvestmentsTables::from_json`]).
    pub fn from_json(json: &[u8]) -> Result<Self, crate::Error> {
        Self::read("GetAccountsDetail", json, MoneyType::Float)
    }

    /// [`AccountsTables::from_json`] of a 200 of `operation`, whose name the errors carry, money
    /// as `money` says.
    pub fn read(operation: &str, json: &[u8], money: MoneyType) -> Result<Self, crate::Error> {
        fn tables<'a, N: Amount + JsonNumber<'a> + Default>(
            operation: &str,
            json: &'a [u8],
        ) -> Result<AccountsTables, crate::Error> {
            let accounts: Accounts<std::borrow::Cow<'a, str>, N> =
                crate::data::json::decode_payload(operation, 200, json)?;
            AccountsTables::of(operation, &accounts)
        }
        match money {
            MoneyType::Float => tables::<f64>(operation, json),
            MoneyType::Decimal => tables::<Written>(operation, json),
        }
    }
}

struct StatementRow<'a> {
    account: &'a AccountStatements,
    statement: &'a Statement,
}

/// One row per statement; the PDF itself stays in the payload (`Statements.files`).
pub fn statements_table(statements: &Statements) -> Table {
    let rows: Vec<StatementRow> = statements
        .statements_by_account
        .iter()
        .flat_map(|account| account.statements.iter().map(move |statement| StatementRow { account, statement }))
        .collect();
    build_plain(
        &rows,
        &[
            ("account_number", Read::Text(|r| r.account.account_number.as_deref())),
            ("unique_id", Read::Text(|r| r.statement.unique_id.as_deref())),
            ("file_type", Read::Text(|r| r.statement.file_type.as_deref())),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tables::ColumnData;
    use arrow_array::Array;
    use serde_json::json;

    #[test]
    fn transactions_carry_their_account() {
        let accounts: Accounts = serde_json::from_value(json!({"Accounts": [
            {"Id": "a1", "AccountNumber": "1111", "Category": "Operations", "Balance": {"Current": 5.5, "Available": null},
             "Transactions": [{"Id": "t1", "Date": "2026-11-20", "Description": "PAYROLL DEPOSIT ACME", "Debit": null, "Credit": 100.0, "Balance": 105.5}]},
            {"Id": "a2", "Transactions": null}]}))
        .unwrap();
        let table = bank_transactions_table(&accounts).unwrap();
        assert_eq!(table.rows, 1);
        assert_eq!(table.column("account_number"), Some(&ColumnData::Text(vec![Some("1111")].into())));
        assert_eq!(table.column("debit"), Some(&ColumnData::Float(vec![None].into())));
        let accounts_table = accounts_table(&accounts).unwrap();
        assert_eq!(accounts_table.rows, 2);
        assert_eq!(accounts_table.column("balance_current"), Some(&ColumnData::Float(vec![Some(5.5), None].into())));
        let read = AccountsTables::from_json(
            &serde_json::to_vec(&json!({"Accounts": [{"Id": "a1", "Transactions": null}], "RequestId": "r"})).unwrap(),
        )
        .unwrap();
        assert_eq!((read.accounts.rows, read.transactions.rows, read.request_id.as_deref()), (1, 0, Some("r")));
    }

    #[test]
    fn a_saved_answer_that_is_not_a_payload_is_not_an_empty_result() {
        for body in [&b"{}"[..], b"[]", b"null", br#"{"Accounts": null, "RequestId": "r"}"#] {
            assert!(matches!(AccountsTables::from_json(body), Err(crate::Error::Protocol { .. })), "{body:?}");
        }
        let envelope = br#"{"HttpStatusCode": 500, "FlinksCode": "AGGREGATION_ERROR", "Accounts": []}"#;
        assert!(matches!(AccountsTables::from_json(envelope), Err(crate::Error::Api(_))));
        assert_eq!(AccountsTables::from_json(br#"{"accounts": []}"#).unwrap().accounts.rows, 0);
    }

    #[test]
    fn decimal_balances_and_transactions_are_the_payloads_digits() {
        let body = br#"{"Accounts": [{"Id": "a", "OverdraftLimit": 500, "Balance": {"Available": 0.1, "Current": -0.2, "Limit": null},
            "EftEligibleRatio": 0.5,
            "Transactions": [{"Id": "t1", "Debit": 0.1}, {"Id": "t2", "Credit": 0.2, "Balance": "1234567.89"}]}]}"#;
        let tables = AccountsTables::read("GetAccountsSummary", body, MoneyType::Decimal).unwrap();
        let digits = |table: &Table, column: &str| match table.column(column) {
            Some(ColumnData::Decimal(values)) => (0..values.len())
                .map(|row| values.is_valid(row).then(|| values.value_as_string(row)))
                .collect::<Vec<_>>(),
            other => panic!("{column}: {other:?}"),
        };
        assert_eq!(digits(&tables.accounts, "balance_available"), [Some("0.1000".to_owned())]);
        assert_eq!(digits(&tables.accounts, "balance_current"), [Some("-0.2000".to_owned())]);
        assert_eq!(digits(&tables.accounts, "balance_limit"), [None]);
        assert_eq!(digits(&tables.accounts, "overdraft_limit"), [Some("500.0000".to_owned())]);
        assert_eq!(digits(&tables.transactions, "debit"), [Some("0.1000".to_owned()), None]);
        assert_eq!(digits(&tables.transactions, "credit"), [None, Some("0.2000".to_owned())]);
        assert_eq!(digits(&tables.transactions, "balance"), [None, Some("1234567.8900".to_owned())]);
        assert!(matches!(tables.accounts.column("eft_eligible_ratio"), Some(ColumnData::Float(_))));
        let unfit = br#"{"Accounts": [{"Id": "a", "Transactions": [{"Id": "t1", "Debit": 0.00001}]}]}"#;
        match AccountsTables::read("GetAccountsSummary", unfit, MoneyType::Decimal) {
            Err(crate::Error::Decode { operation, message, .. }) => {
                assert_eq!(operation, "GetAccountsSummary");
                assert!(message.starts_with("transactions.debit: 0.00001 has more than 4 decimal places"), "{message}");
            }
            other => panic!("{other:?}"),
        }
    }
}

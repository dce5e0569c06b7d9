//! Banking payloads as tables: accounts, transactions (account joined), statements.

use super::{build, Read, Table, Text};
use crate::data::accounts::{AccountStatements, Accounts, BankAccount, BankTransaction, Statement, Statements};
use crate::data::login::NamesLogin;

pub fn accounts_table<S: Text>(accounts: &Accounts<S>) -> Table {
    let rows: Vec<&BankAccount<S>> = accounts.accounts.iter().collect();
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
            ("balance_available", Read::Float(|a| a.balance.as_ref().and_then(|b| b.available))),
            ("balance_current", Read::Float(|a| a.balance.as_ref().and_then(|b| b.current))),
            ("balance_limit", Read::Float(|a| a.balance.as_ref().and_then(|b| b.limit))),
            ("overdraft_limit", Read::Float(|a| a.overdraft_limit)),
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

struct TransactionRow<'a, S> {
    account: &'a BankAccount<S>,
    transaction: &'a BankTransaction<S>,
}

pub fn bank_transactions_table<S: Text>(accounts: &Accounts<S>) -> Table {
    let rows: Vec<TransactionRow<S>> = accounts
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
            ("debit", Read::Float(|r| r.transaction.debit)),
            ("credit", Read::Float(|r| r.transaction.credit)),
            ("balance", Read::Float(|r| r.transaction.balance)),
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
}

impl AccountsTables {
    pub fn new<S: Text>(accounts: &Accounts<S>) -> Self {
        AccountsTables {
            request_id: accounts.request_id.as_deref().map(str::to_owned),
            login_id: accounts.login_id().map(str::to_owned),
            eft_eligible_ratio: accounts.eft_eligible_ratio,
            e_transfer_eligible_ratio: accounts.e_transfer_eligible_ratio,
            accounts: accounts_table(accounts),
            transactions: bank_transactions_table(accounts),
        }
    }

    /// Reads a payload straight into its tables, its text borrowed from `json` while they are
    /// built (as [`super::InvestmentsTables::from_json`]).
    pub fn from_json(json: &[u8]) -> Result<Self, crate::Error> {
        Self::read("GetAccountsDetail", json)
    }

    /// [`AccountsTables::from_json`] of a 200 of `operation`, whose name the errors carry.
    pub fn read(operation: &str, json: &[u8]) -> Result<Self, crate::Error> {
        let accounts: Accounts<std::borrow::Cow<str>> = crate::data::json::decode_payload(operation, 200, json)?;
        Ok(AccountsTables::new(&accounts))
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
    build(
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
    use serde_json::json;

    #[test]
    fn transactions_carry_their_account() {
        let accounts: Accounts = serde_json::from_value(json!({"Accounts": [
            {"Id": "a1", "AccountNumber": "1111", "Category": "Operations", "Balance": {"Current": 5.5, "Available": null},
             "Transactions": [{"Id": "t1", "Date": "2026-11-20", "Description": "PAYROLL DEPOSIT ACME", "Debit": null, "Credit": 100.0, "Balance": 105.5}]},
            {"Id": "a2", "Transactions": null}]}))
        .unwrap();
        let table = bank_transactions_table(&accounts);
        assert_eq!(table.rows, 1);
        assert_eq!(table.column("account_number"), Some(&ColumnData::Text(vec![Some("1111")].into())));
        assert_eq!(table.column("debit"), Some(&ColumnData::Float(vec![None].into())));
        let accounts_table = accounts_table(&accounts);
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
}

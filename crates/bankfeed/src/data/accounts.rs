//! Banking payloads: GetAccountsDetail, GetAccountsSummary and GetStatements
//! (docs/protocol.md#account-detail-summary-and-statements).
//!
//! The account types are generic over their text, `String` by default, as the Investments ones
//! are (see there): a year of transactions is read into tables borrowing from the bytes.

use base64::Engine;
use serde::Deserialize;

use super::de;
use super::json::{Expected, Shape};
use super::login::{Institution, Login, NamesLogin};
use super::money::JsonNumber;
use crate::error::Error;
use crate::shown::snippet;

/// GetAccountsDetail and GetAccountsSummary share their account shape.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(
    rename_all = "PascalCase",
    default,
    bound(deserialize = "S: de::JsonText<'de> + Default, N: JsonNumber<'de> + Default")
)]
pub struct Accounts<S = String, N = f64> {
    #[serde(deserialize_with = "de::list")]
    pub accounts: Vec<BankAccount<S, N>>,
    #[serde(deserialize_with = "de::lenient")]
    pub login: Option<Login>,
    #[serde(deserialize_with = "de::lenient")]
    pub institution: Option<Institution>,
    #[serde(deserialize_with = "de::text")]
    pub institution_name: Option<S>,
    #[serde(deserialize_with = "de::text")]
    pub institution_id: Option<S>,
    #[serde(deserialize_with = "de::text")]
    pub request_id: Option<S>,
    /// Summary only; some versions send the ratios per account instead.
    #[serde(deserialize_with = "de::number")]
    pub eft_eligible_ratio: Option<f64>,
    #[serde(rename = "ETransferEligibleRatio", deserialize_with = "de::number")]
    pub e_transfer_eligible_ratio: Option<f64>,
}

/// A 200 without `Accounts` is not an accounts payload; `"Accounts": []` is one, with no account
/// (docs/errors.md#protocol-surprises).
impl<S, N> Expected for Accounts<S, N> {
    const SHAPE: Shape = Shape::AnyOf(&["Accounts"]);
}

impl<S, N> NamesLogin for Accounts<S, N> {
    fn login_id(&self) -> Option<&str> {
        self.login.as_ref()?.id.as_deref()
    }
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(
    rename_all = "PascalCase",
    default,
    bound(deserialize = "S: de::JsonText<'de> + Default, N: JsonNumber<'de> + Default")
)]
pub struct BankAccount<S = String, N = f64> {
    #[serde(deserialize_with = "de::text")]
    pub id: Option<S>,
    #[serde(deserialize_with = "de::text")]
    pub title: Option<S>,
    #[serde(deserialize_with = "de::text")]
    pub account_number: Option<S>,
    #[serde(deserialize_with = "de::text")]
    pub last_four_digits: Option<S>,
    #[serde(deserialize_with = "de::text")]
    pub transit_number: Option<S>,
    #[serde(deserialize_with = "de::text")]
    pub institution_number: Option<S>,
    #[serde(deserialize_with = "JsonNumber::read")]
    pub overdraft_limit: Option<N>,
    pub balance: Option<Balance<N>>,
    #[serde(deserialize_with = "de::text")]
    pub category: Option<S>,
    #[serde(rename = "Type", deserialize_with = "de::text")]
    pub kind: Option<S>,
    #[serde(deserialize_with = "de::text")]
    pub currency: Option<S>,
    #[serde(deserialize_with = "de::text")]
    pub account_type: Option<S>,
    pub holder: Option<Holder<S>>,
    #[serde(deserialize_with = "de::list")]
    pub transactions: Vec<BankTransaction<S, N>>,
    #[serde(deserialize_with = "de::number")]
    pub eft_eligible_ratio: Option<f64>,
    #[serde(rename = "ETransferEligibleRatio", deserialize_with = "de::number")]
    pub e_transfer_eligible_ratio: Option<f64>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default, bound(deserialize = "N: JsonNumber<'de> + Default"))]
pub struct Balance<N = f64> {
    #[serde(deserialize_with = "JsonNumber::read")]
    pub available: Option<N>,
    #[serde(deserialize_with = "JsonNumber::read")]
    pub current: Option<N>,
    #[serde(deserialize_with = "JsonNumber::read")]
    pub limit: Option<N>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default, bound(deserialize = "S: de::JsonText<'de> + Default"))]
pub struct Holder<S = String> {
    #[serde(deserialize_with = "de::text")]
    pub name: Option<S>,
    pub address: Option<Address<S>>,
    #[serde(deserialize_with = "de::text")]
    pub email: Option<S>,
    #[serde(deserialize_with = "de::text")]
    pub phone_number: Option<S>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default, bound(deserialize = "S: de::JsonText<'de> + Default"))]
pub struct Address<S = String> {
    #[serde(deserialize_with = "de::text")]
    pub civic_address: Option<S>,
    #[serde(deserialize_with = "de::text")]
    pub city: Option<S>,
    #[serde(deserialize_with = "de::text")]
    pub province: Option<S>,
    #[serde(deserialize_with = "de::text")]
    pub postal_code: Option<S>,
    #[serde(rename = "POBox", deserialize_with = "de::text")]
    pub po_box: Option<S>,
    #[serde(deserialize_with = "de::text")]
    pub country: Option<S>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(
    rename_all = "PascalCase",
    default,
    bound(deserialize = "S: de::JsonText<'de> + Default, N: JsonNumber<'de> + Default")
)]
pub struct BankTransaction<S = String, N = f64> {
    #[serde(deserialize_with = "de::text")]
    pub id: Option<S>,
    #[serde(deserialize_with = "de::text")]
    pub date: Option<S>,
    #[serde(deserialize_with = "de::text")]
    pub code: Option<S>,
    #[serde(deserialize_with = "de::text")]
    pub description: Option<S>,
    #[serde(deserialize_with = "JsonNumber::read")]
    pub debit: Option<N>,
    #[serde(deserialize_with = "JsonNumber::read")]
    pub credit: Option<N>,
    #[serde(deserialize_with = "JsonNumber::read")]
    pub balance: Option<N>,
}

/// GetStatements.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct Statements {
    #[serde(deserialize_with = "de::list")]
    pub statements_by_account: Vec<AccountStatements>,
    /// Not in every answer; when there, it names the login the statements belong to.
    #[serde(deserialize_with = "de::lenient")]
    pub login: Option<Login>,
    #[serde(deserialize_with = "de::text")]
    pub request_id: Option<String>,
}

impl Expected for Statements {
    const SHAPE: Shape = Shape::AnyOf(&["StatementsByAccount"]);
}

impl NamesLogin for Statements {
    fn login_id(&self) -> Option<&str> {
        self.login.as_ref()?.id.as_deref()
    }
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct AccountStatements {
    #[serde(deserialize_with = "de::text")]
    pub account_number: Option<String>,
    #[serde(deserialize_with = "de::list")]
    pub statements: Vec<Statement>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct Statement {
    #[serde(deserialize_with = "de::text")]
    pub unique_id: Option<String>,
    #[serde(deserialize_with = "de::text")]
    pub file_type: Option<String>,
    #[serde(deserialize_with = "de::text")]
    pub base64_bytes: Option<String>,
}

/// A statement's file, decoded from its `Base64Bytes`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatementFile {
    pub account_number: Option<String>,
    pub unique_id: Option<String>,
    /// As sent, e.g. `PDF`.
    pub file_type: Option<String>,
    pub content: Vec<u8>,
}

impl Accounts {
    /// Reads a 200 of `operation` (`GetAccountsDetail` or `GetAccountsSummary`), such as a saved
    /// one, checked as a live answer is.
    pub fn parse(operation: &str, bytes: &[u8]) -> Result<Self, Error> {
        super::json::decode_payload(operation, 200, bytes)
    }
}

impl Statements {
    /// Reads a GetStatements 200, such as a saved one, checked as a live answer is.
    pub fn parse(bytes: &[u8]) -> Result<Self, Error> {
        super::json::decode_payload("GetStatements", 200, bytes)
    }

    /// Every statement's file, in the order of the payload. A statement whose `Base64Bytes` is not
    /// base64 fails the whole call with a decode error naming its `UniqueId`.
    pub fn files(&self) -> Result<Vec<StatementFile>, Error> {
        let mut files = Vec::new();
        for account in &self.statements_by_account {
            for statement in &account.statements {
                files.push(StatementFile {
                    account_number: account.account_number.clone(),
                    unique_id: statement.unique_id.clone(),
                    file_type: statement.file_type.clone(),
                    content: statement.content()?,
                });
            }
        }
        Ok(files)
    }
}

impl Statement {
    /// The decoded `Base64Bytes`; empty when the statement carries none.
    pub fn content(&self) -> Result<Vec<u8>, Error> {
        let encoded = self.base64_bytes.as_deref().unwrap_or_default().trim();
        base64::engine::general_purpose::STANDARD.decode(encoded).map_err(|e| Error::Decode {
            operation: "GetStatements".to_owned(),
            status: 200,
            message: format!("statement {:?} is not valid base64: {e}", self.unique_id.as_deref().unwrap_or("?")),
            snippet: snippet(encoded, 40),
            resumable: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn statements(encoded: &[&str]) -> Statements {
        let statements = encoded
            .iter()
            .enumerate()
            .map(|(index, bytes)| Statement {
                unique_id: Some(format!("s{index}")),
                file_type: Some("PDF".into()),
                base64_bytes: Some((*bytes).to_owned()),
            })
            .collect();
        Statements {
            statements_by_account: vec![AccountStatements { account_number: Some("1111".into()), statements }],
            login: None,
            request_id: None,
        }
    }

    #[test]
    fn statement_files_are_decoded_in_order() {
        let files = statements(&["JVBERi0=", " JVBERi0xLjQ=\n"]).files().unwrap();
        assert_eq!(files.len(), 2);
        assert_eq!(files[0].content, b"%PDF-");
        assert_eq!(files[1].content, b"%PDF-1.4");
        assert_eq!(files[1].unique_id.as_deref(), Some("s1"));
        assert_eq!(files[1].account_number.as_deref(), Some("1111"));
        assert_eq!(files[1].file_type.as_deref(), Some("PDF"));
    }

    #[test]
    fn a_statement_that_is_not_base64_is_named_in_the_error() {
        match statements(&["JVBERi0=", "not base64!"]).files() {
            Err(Error::Decode { operation, message, .. }) => {
                assert_eq!(operation, "GetStatements");
                assert!(message.contains("\"s1\""), "{message}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_saved_answer_reads_as_the_live_one_and_other_bodies_are_refused() {
        let body = br#"{"StatementsByAccount": [{"AccountNumber": "1111", "Statements": [{"UniqueId": "s0", "FileType": "PDF", "Base64Bytes": "JVBERi0="}]}], "RequestId": "r"}"#;
        let statements = Statements::parse(body).unwrap();
        assert_eq!(statements.request_id.as_deref(), Some("r"));
        assert_eq!(statements.files().unwrap()[0].content, b"%PDF-");
        assert!(matches!(Statements::parse(b"{}"), Err(Error::Protocol { .. })));
        assert!(matches!(Statements::parse(b"not json"), Err(Error::Decode { .. })));
    }

    #[test]
    fn a_statement_without_bytes_is_empty() {
        let statement = Statement { unique_id: None, file_type: None, base64_bytes: None };
        assert_eq!(statement.content().unwrap(), Vec::<u8>::new());
    }
}

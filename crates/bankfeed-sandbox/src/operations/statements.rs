//! `GetStatements` (POST, and `GetStatementsAsync/{requestId}`): every account of the login, with
//! monthly statements of the operations accounts, as small real PDFs, and none (`[]`) for the
//! others, as the service lists them.

use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use serde::Serialize;

use crate::generator::{month_name, months_before, BankAccount, Guid};
use crate::operations::accounts::{known_accounts, selected, STATEMENT_COUNTS};
use crate::operations::operation::{DataOperation, Ready};
use crate::operations::pdf;
use crate::server::body::Body;
use crate::server::reply::{Envelope, ErrorReply, InstitutionFields, INSTITUTION};
use crate::world::state::Shared;
use bankfeed::protocol::{self, WireOp};

/// `GetStatements`.
pub(crate) struct Statements;

pub(crate) struct StatementOptions {
    months: usize,
    filter: Option<Vec<String>>,
}

impl DataOperation for Statements {
    const WIRE: &'static WireOp = &protocol::GET_STATEMENTS;
    type Options = StatementOptions;

    fn options(body: &Body) -> Result<StatementOptions, ErrorReply> {
        let months = match body.choice("NumberOfStatements", &STATEMENT_COUNTS)? {
            Some("Months12") => 12,
            Some("Months3") => 3,
            _ => 1,
        };
        Ok(StatementOptions { months, filter: body.strings("AccountsFilter")? })
    }

    fn answer(shared: &Shared, ready: &Ready, options: StatementOptions) -> Response {
        let banking = shared.data.banking(&shared.config, &ready.login_id, shared.clock());
        if let Err(reply) = known_accounts(&banking, options.filter.as_deref(), "AccountsFilter") {
            return reply.with_request_id(&ready.request_id).into_response();
        }
        let months = months_before(banking.clock, options.months);
        let statements_by_account = selected(&banking, options.filter.as_deref())
            .map(|account| AccountStatements {
                account_number: &account.account_number,
                // Banks issue statements for deposit accounts; cards and loans are listed with none.
                statements: if account.category == "Operations" {
                    months.iter().map(|(year, month)| statement(shared.config.seed, account, *year, *month)).collect()
                } else {
                    Vec::new()
                },
            })
            .collect();
        Envelope::new(
            StatementsBody { statements_by_account },
            Some(InstitutionFields::BANKING),
            Some(ready.login(Some("Personal"))),
            &ready.request_id,
        )
        .ok()
    }
}

fn statement(seed: u64, account: &BankAccount, year: i32, month: u32) -> Statement {
    let period = format!("{} {year}", month_name(month));
    let lines = [
        format!("{INSTITUTION} - account statement"),
        format!("Account {} ({})", account.account_number, account.title),
        format!("Period: {period}"),
    ];
    Statement {
        // 32 upper-case hex digits, no dashes, as the GetStatements reference shows it
        // (docs/protocol.md#account-detail-summary-and-statements).
        unique_id: format!(
            "{:032X}",
            Guid::derive(&[&seed.to_le_bytes(), b"statement", account.id.to_string().as_bytes(), period.as_bytes()]).0
        ),
        // As the GetStatements reference writes it (docs/protocol.md#account-detail-summary-and-statements).
        file_type: "PDF",
        base64_bytes: base64::engine::general_purpose::STANDARD.encode(pdf::one_page(&lines)),
    }
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct StatementsBody<'a> {
    statements_by_account: Vec<AccountStatements<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct AccountStatements<'a> {
    account_number: &'a str,
    statements: Vec<Statement>,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct Statement {
    unique_id: String,
    file_type: &'static str,
    base64_bytes: String,
}

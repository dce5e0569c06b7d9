//! `GetStatements` (POST, and `GetStatementsAsync/{requestId}`): monthly statements of the
//! operations accounts, as small real PDFs.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use base64::Engine as _;
use serde::Serialize;

use super::accounts::{selected, STATEMENT_COUNTS};
use super::body::Body;
use super::generator::{month_name, months_before, BankAccount, Guid};
use super::operation::{Operation, Step};
use super::pdf;
use super::reply::{self, ApiError, LoginBody};
use super::state::Shared;
use super::users::{INSTITUTION, INSTITUTION_ID};

const STATEMENTS: Operation = Operation { name: "GetStatements", async_rel: "GetStatementsAsync" };

struct StatementOptions {
    months: usize,
    filter: Option<Vec<String>>,
}

fn options(body: &Body) -> Result<StatementOptions, ApiError> {
    let months = match body.choice("NumberOfStatements", &STATEMENT_COUNTS)? {
        Some("Months12") => 12,
        Some("Months3") => 3,
        _ => 1,
    };
    Ok(StatementOptions { months, filter: body.strings("AccountsFilter")? })
}

pub(crate) async fn statements(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    bytes: Bytes,
) -> Result<Response, ApiError> {
    let step = STATEMENTS.start(&shared, &headers, bytes, options, |_| ())?;
    Ok(answer(&shared, step))
}

pub(crate) async fn statements_async(
    State(shared): State<Arc<Shared>>,
    Path((_, request_id)): Path<(String, String)>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let step = STATEMENTS.resume(&shared, &headers, &request_id, options, |_| ())?;
    Ok(answer(&shared, step))
}

fn answer(shared: &Shared, step: Step<StatementOptions>) -> Response {
    let (ready, options) = match step {
        Step::Wait(response) => return response,
        Step::Go(ready, options) => (ready, options),
    };
    let banking = shared.data.banking(&shared.config, &ready.login_id);
    let months = months_before(options.months);
    let statements_by_account = selected(&banking, options.filter.as_deref())
        // Banks issue statements for deposit accounts; cards and loans have their own.
        .filter(|account| account.category == "Operations")
        .map(|account| AccountStatements {
            account_number: &account.account_number,
            statements: months
                .iter()
                .map(|(year, month)| statement(shared.config.seed, account, *year, *month))
                .collect(),
        })
        .collect();
    let body = StatementsBody {
        http_status_code: 200,
        statements_by_account,
        institution_name: INSTITUTION,
        institution_id: INSTITUTION_ID,
        institution: INSTITUTION,
        login: ready.login(),
        request_id: &ready.request_id,
    };
    reply::json(StatusCode::OK, &body)
}

fn statement(seed: u64, account: &BankAccount, year: i32, month: u32) -> Statement {
    let period = format!("{} {year}", month_name(month));
    let lines = [
        format!("{INSTITUTION} - account statement"),
        format!("Account {} ({})", account.account_number, account.title),
        format!("Period: {period}"),
    ];
    Statement {
        unique_id: Guid::derive(&[
            &seed.to_le_bytes(),
            b"statement",
            account.id.to_string().as_bytes(),
            period.as_bytes(),
        ]),
        file_type: "pdf",
        base64_bytes: base64::engine::general_purpose::STANDARD.encode(pdf::one_page(&lines)),
    }
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct StatementsBody<'a> {
    http_status_code: u16,
    statements_by_account: Vec<AccountStatements<'a>>,
    institution_name: &'static str,
    institution_id: u32,
    institution: &'static str,
    login: LoginBody<'a>,
    request_id: &'a str,
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
    unique_id: Guid,
    file_type: &'static str,
    base64_bytes: String,
}

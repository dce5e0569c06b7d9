//! The Rust client's data operations against the sandbox: polling on Async links, the attributes
//! preparation sequence, tables against the payloads, and DeleteCard.

use std::time::Duration;

use arrow_array::Array;
use bankfeed::data::accounts::Accounts;
use bankfeed::data::attributes::{AttributesQuery, CustomAttributes, Package};
use bankfeed::data::investments::Investments;
use bankfeed::data::requests::{AccountsDetailOptions, AccountsSummaryOptions, StatementsOptions};
use bankfeed::error::ApiErrorKind;
use bankfeed::ops::{self, Target};
use bankfeed::tables::{self, ColumnData};
use bankfeed::{Client, Error, Session};
use bankfeed_sandbox::{Sandbox, SandboxConfig};
use base64::Engine;

use crate::common::{client_of as start, saved_session};

fn floats(table: &tables::Table, name: &str) -> Vec<f64> {
    match table.column(name) {
        Some(ColumnData::Float(values)) => values.iter().map(|v| v.unwrap_or(0.0)).collect(),
        other => panic!("{name}: {other:?}"),
    }
}

#[tokio::test]
async fn account_detail_is_polled_on_its_async_link() {
    let (sandbox, client) = start(SandboxConfig { pending_polls: 2, ..SandboxConfig::default() });
    let session = saved_session(&client).await;
    let options =
        AccountsDetailOptions { with_transactions: Some(true), days: Some("Days365".into()), ..Default::default() };
    let detail = data!(client, ops::AccountsDetail, Target::Session(&session), &options).unwrap();
    let paths: Vec<String> =
        sandbox.requests().iter().map(|r| format!("{} {} {}", r.method, r.path, r.status)).collect();
    let polled = paths.iter().filter(|p| p.contains("GetAccountsDetail")).cloned().collect::<Vec<_>>();
    assert!(polled[0].starts_with("POST ") && polled[0].ends_with(" 202"), "{polled:?}");
    assert!(
        polled[1..]
            .iter()
            .all(|p| p.starts_with("GET ") && p.contains(&format!("GetAccountsDetailAsync/{}", session.request_id))),
        "{polled:?}"
    );
    assert!(polled.last().unwrap().ends_with(" 200"));
    // The transactions table has one row per transaction of the payload, debits summing alike.
    let payload = Accounts::parse("GetAccountsDetail", detail.raw.bytes()).unwrap();
    let table = tables::bank_transactions_table(&payload).unwrap();
    let count: usize = payload.accounts.iter().map(|a| a.transactions.len()).sum();
    assert_eq!(table.rows, count);
    assert!(count > 100, "365 days of activity");
    let debits: f64 = payload.accounts.iter().flat_map(|a| &a.transactions).filter_map(|t| t.debit).sum();
    assert!((floats(&table, "debit").iter().sum::<f64>() - debits).abs() < 1e-6);
}

#[tokio::test]
async fn investments_tables_match_the_payload() {
    let (_sandbox, client) = start(SandboxConfig { investment_transactions: Some(500), ..SandboxConfig::default() });
    let session = saved_session(&client).await;
    let investments = data!(client, ops::Investments, Target::Session(&session), &()).unwrap();
    let data = &Investments::parse(investments.raw.bytes()).unwrap();
    let transactions = tables::investment_transactions_table(data).unwrap();
    assert_eq!(transactions.rows, 500);
    let amounts: f64 = data.accounts.iter().flat_map(|a| &a.transactions).filter_map(|t| t.amount).sum();
    assert!((floats(&transactions, "amount").iter().sum::<f64>() - amounts).abs() < 1e-6);
    let positions = tables::positions_table(data).unwrap();
    match positions.column("symbol") {
        Some(ColumnData::Text(symbols)) => assert_eq!(symbols.null_count(), 0, "every position's security is listed"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn attributes_run_the_preparation_sequence() {
    let (sandbox, client) = start(SandboxConfig { pending_polls: 1, ..SandboxConfig::default() });
    let session = saved_session(&client).await;
    let login_id = session.login_id.clone().unwrap();
    let attributes =
        data!(client, ops::Attributes, Target::login(&login_id, None), &AttributesQuery::Package(Package::Income))
            .unwrap();
    let names: Vec<&str> = attributes.payload.data.groups[0].values.iter().map(|(name, _)| name.as_str()).collect();
    assert!(names.contains(&"sum_employer_income"), "{names:?}");
    // Order: cached Authorize, account detail to 200, then the attributes call.
    let log: Vec<String> = sandbox.requests().iter().map(|r| r.path.clone()).collect();
    let authorize = log.iter().rposition(|p| p.ends_with("/Authorize")).unwrap();
    let detail = log.iter().position(|p| p.contains("GetAccountsDetail")).unwrap();
    let insight = log.iter().position(|p| p.contains("/insight/")).unwrap();
    assert!(authorize < detail && detail < insight, "{log:?}");
}

#[tokio::test]
async fn unknown_attributes_and_tier_limits_are_service_errors() {
    let custom =
        CustomAttributes { attributes: vec![("Card".into(), vec!["count_unicorns".into()])], ..Default::default() };
    let query = AttributesQuery::Custom(custom);
    let (_sandbox, client) = start(SandboxConfig { tier2: true, ..SandboxConfig::default() });
    let session = saved_session(&client).await;
    match data!(client, ops::Attributes, Target::Session(&session), &query) {
        Err(Error::Api(api)) => {
            assert_eq!(api.code.as_deref(), Some("INVALID_REQUEST"));
            assert!(api.message.unwrap_or_default().contains("count_unicorns"));
        }
        other => panic!("{other:?}"),
    }
    // A customer with use-case packages only: neither GetAllAttributes nor the custom set.
    let (_sandbox, client) = start(SandboxConfig::default());
    let session = saved_session(&client).await;
    for query in [AttributesQuery::Package(Package::All), query] {
        match data!(client, ops::Attributes, Target::Session(&session), &query) {
            Err(Error::Api(api)) => assert_eq!(api.kind(), ApiErrorKind::Unauthorized, "{query:?}"),
            other => panic!("{other:?}"),
        }
    }
}

#[tokio::test]
async fn statements_are_pdfs() {
    let (_sandbox, client) = start(SandboxConfig::default());
    let session = saved_session(&client).await;
    let options = StatementsOptions { number_of_statements: Some("Months3".into()), ..Default::default() };
    let statements = data!(client, ops::Statements, Target::Session(&session), &options).unwrap();
    let table = tables::statements_table(&statements.payload.data);
    assert!(table.rows >= 3);
    for account in &statements.payload.data.statements_by_account {
        for statement in &account.statements {
            let pdf =
                base64::engine::general_purpose::STANDARD.decode(statement.base64_bytes.as_deref().unwrap()).unwrap();
            assert!(pdf.starts_with(b"%PDF-"));
        }
    }
}

#[tokio::test]
async fn a_deleted_login_cannot_be_read_again() {
    // Deleted right after it connected: CARD_IN_USE (sandbox_recorded.rs) turned off.
    let (_sandbox, client) = start(SandboxConfig { card_in_use: Duration::ZERO, ..SandboxConfig::default() });
    let session = saved_session(&client).await;
    let login_id = session.login_id.unwrap();
    within!(client, "DeleteCard", |c, call| c.delete_login(&call, &login_id)).unwrap();
    match within!(client, "Authorize", |c, call| c.authorize_cached(&call, &login_id)) {
        Err(Error::Api(api)) => assert_eq!(api.code.as_deref(), Some("INVALID_LOGIN")),
        other => panic!("{other:?}"),
    }
}

/// A client of the same sandbox that gives up polling after `poll_timeout`.
fn impatient(client: &Client, poll_timeout: Duration) -> Client {
    let mut config = client.config().clone();
    config.poll.timeout = poll_timeout;
    Client::new(config).unwrap()
}

/// How many requests of the sandbox's log went to a path ending in `path`, answered `status`.
fn answered(sandbox: &Sandbox, path: &str, status: u16) -> usize {
    sandbox.requests().iter().filter(|r| r.path.ends_with(path) && r.status == status).count()
}

#[tokio::test]
async fn a_pending_timeout_is_resumed_on_its_request_id_without_a_new_authorize() {
    let (sandbox, client) = start(SandboxConfig { pending_polls: 5, ..SandboxConfig::default() });
    let login_id = saved_session(&client).await.login_id.unwrap();
    let error =
        data!(impatient(&client, Duration::from_millis(25)), ops::Investments, Target::login(&login_id, None), &());
    let (request_id, message) = match error {
        Err(error @ Error::PendingTimeout { .. }) => (error.request_id().unwrap().to_owned(), error.to_string()),
        other => panic!("{other:?}"),
    };
    // The message names the RequestId and the call that resumes it, and no LoginId.
    let resume = format!("Target::login(login_id, Some(\"{request_id}\"))");
    assert!(message.contains(&resume) && !message.contains(&login_id), "{message}");
    let pending_before = answered(&sandbox, "/Investments", 202);
    assert!((1..5).contains(&pending_before), "{pending_before}");
    let authorizes = answered(&sandbox, "/Authorize", 200);

    let resumed = data!(client, ops::Investments, Target::login(&login_id, Some(&request_id)), &()).unwrap();
    assert_eq!(answered(&sandbox, "/Authorize", 200), authorizes, "no new Authorize");
    // The sandbox's pending count went on from where it was: five 202s in all, then the 200.
    assert_eq!(answered(&sandbox, "/Investments", 202), 5);
    assert_eq!(answered(&sandbox, "/Investments", 200), 1);
    assert_eq!(resumed.tables.request_id.as_deref(), Some(request_id.as_str()));
    assert!(resumed.tables.accounts.rows > 0);
}

#[tokio::test]
async fn attributes_resume_on_their_request_id_too() {
    let (sandbox, client) = start(SandboxConfig { pending_polls: 5, ..SandboxConfig::default() });
    let login_id = saved_session(&client).await.login_id.unwrap();
    let query = AttributesQuery::Package(Package::Income);
    let error =
        data!(impatient(&client, Duration::from_millis(25)), ops::Attributes, Target::login(&login_id, None), &query);
    let request_id = match error {
        Err(error @ Error::PendingTimeout { .. }) => error.request_id().unwrap().to_owned(),
        other => panic!("{other:?}"),
    };
    let authorizes = answered(&sandbox, "/Authorize", 200);
    let resumed = data!(client, ops::Attributes, Target::login(&login_id, Some(&request_id)), &query).unwrap();
    assert_eq!(answered(&sandbox, "/Authorize", 200), authorizes, "no new Authorize");
    assert!(resumed.values.rows > 0);
    let detail_pending: usize =
        sandbox.requests().iter().filter(|r| r.path.contains("GetAccountsDetail") && r.status == 202).count();
    assert_eq!(detail_pending, 5, "the detail's pending count went on too");
}

#[tokio::test]
async fn a_resumed_session_checks_its_ids_before_any_call() {
    let (sandbox, client) = start(SandboxConfig::default());
    let login = "5e0e5f83-6e9b-4a2c-a6a3-0d8f4b1c9e21";
    for bad in ["", "..", "a/b", "a\r\nb", "%2e"] {
        match data!(client, ops::Investments, Target::login(login, Some(bad)), &()) {
            Err(Error::Config { field: "request_id", .. }) => {}
            other => panic!("{bad:?}: {other:?}"),
        }
    }
    match data!(client, ops::Investments, Target::login("not-a-guid", Some(login)), &()) {
        Err(Error::Config { field: "login_id", .. }) => {}
        other => panic!("{other:?}"),
    }
    assert!(sandbox.requests().is_empty(), "nothing is sent");
    let session = Session::resume(login, None).unwrap();
    assert_eq!((session.request_id.as_str(), session.login_id), (login, None));
    // Kept and read back as a session that came from Authorize.
    let again = Session::from_body(&Session::resume(login, Some(login)).unwrap().raw, None).unwrap();
    assert_eq!((again.request_id.as_str(), again.login_id.as_deref()), (login, Some(login)));
}

/// The RequestId of one login resumed as another's: the banking operations send the RequestId
/// alone, so the sandbox answers with the data of the RequestId's own login, as the service does
/// (docs/protocol.md#authorize); the client refuses to label it with the other LoginId.
#[tokio::test]
async fn a_request_id_resumed_with_the_login_id_of_another_login_is_refused() {
    let (sandbox, client) = start(SandboxConfig { logins: 2, ..SandboxConfig::default() });
    let ids = sandbox.login_ids();
    let theirs = within!(client, "Authorize", |c, call| c.authorize_cached(&call, &ids[1])).unwrap();
    let mismatched = Session::resume(&theirs.request_id, Some(&ids[0])).unwrap();
    let refused = |operation: &str, result: Result<(), Error>| match result {
        Err(error @ Error::OtherLogin { .. }) => {
            let message = error.to_string();
            let Error::OtherLogin { operation: named, request_id, snippet, .. } = error else { unreachable!() };
            assert_eq!(named, operation);
            assert_eq!(request_id, theirs.request_id, "{operation}");
            assert!(message.contains(&ids[0]) && message.contains(&ids[1]), "{operation}: {message}");
            assert!(message.contains("resume each login with its own RequestId"), "{operation}: {message}");
            assert!(snippet.starts_with('{'), "{operation}: {snippet}");
        }
        other => panic!("{operation}: {other:?}"),
    };
    let detail = AccountsDetailOptions::default();
    refused("GetAccountsDetail", data!(client, ops::AccountsDetail, Target::Session(&mismatched), &detail).map(drop));
    refused("GetAccountsDetail", data!(client, ops::AccountsDetail, Target::Session(&mismatched), &detail).map(drop));
    refused(
        "GetAccountsDetail",
        data!(client, ops::AccountsDetail, Target::login(&ids[0], Some(&theirs.request_id)), &detail).map(drop),
    );
    let summary = AccountsSummaryOptions::default();
    refused(
        "GetAccountsSummary",
        data!(client, ops::AccountsSummary, Target::Session(&mismatched), &summary).map(drop),
    );
    refused(
        "GetAccountsSummary",
        data!(client, ops::AccountsSummary, Target::Session(&mismatched), &summary).map(drop),
    );
    let statements = StatementsOptions::default();
    refused("GetStatements", data!(client, ops::Statements, Target::Session(&mismatched), &statements).map(drop));
    refused("GetStatements", data!(client, ops::Statements, Target::Session(&mismatched), &statements).map(drop));
    // Attributes stop at the account detail they wait for, before their own call is sent.
    let income = AttributesQuery::Package(Package::Income);
    refused("GetAccountsDetail", data!(client, ops::Attributes, Target::Session(&mismatched), &income).map(drop));
    assert!(!sandbox.requests().iter().any(|r| r.path.contains("/attributes/")), "no attributes call was sent");
    // Investments name the LoginId in the request: the sandbox refuses the pair itself.
    match data!(client, ops::Investments, Target::Session(&mismatched), &()) {
        Err(Error::Api(api)) => assert_eq!(api.kind(), ApiErrorKind::InvalidRequest),
        other => panic!("{other:?}"),
    }
    // The RequestId with its own login, or with no LoginId given, reads that login's data.
    let own = Session::resume(&theirs.request_id, Some(&ids[1].to_ascii_uppercase())).unwrap();
    assert!(data!(client, ops::AccountsDetail, Target::Session(&own), &detail).unwrap().tables.accounts.rows > 0);
    let unknown = Session::resume(&theirs.request_id, None).unwrap();
    let read = data!(client, ops::AccountsDetail, Target::Session(&unknown), &detail).unwrap();
    assert_eq!(read.tables.login_id.as_deref(), Some(ids[1].as_str()));
}

#[tokio::test]
async fn the_live_tables_are_those_of_the_payload_read_again() {
    let (_sandbox, client) = start(SandboxConfig { investment_transactions: Some(2_000), ..SandboxConfig::default() });
    let session = saved_session(&client).await;
    let live = data!(client, ops::Investments, Target::Session(&session), &()).unwrap();
    assert!(live.raw.bytes().len() > 64 * 1024, "read off the IO workers");
    assert_eq!(live.tables, tables::InvestmentsTables::from_json(live.raw.bytes()).unwrap());
    assert_eq!(live.tables.transactions.rows, 2_000);
    // The tables built from the typed model of the same bytes are the same.
    assert_eq!(tables::InvestmentsTables::new(&Investments::parse(live.raw.bytes()).unwrap()).unwrap(), live.tables);

    let options = AccountsDetailOptions { with_transactions: Some(true), ..Default::default() };
    let detail = data!(client, ops::AccountsDetail, Target::Session(&session), &options).unwrap();
    assert_eq!(detail.tables, tables::AccountsTables::from_json(detail.raw.bytes()).unwrap());
    let summary =
        data!(client, ops::AccountsSummary, Target::Session(&session), &AccountsSummaryOptions::default()).unwrap();
    assert_eq!(summary.tables.transactions.rows, 0);
    let statements = data!(client, ops::Statements, Target::Session(&session), &StatementsOptions::default()).unwrap();
    assert_eq!(statements.statements.rows, tables::statements_table(&statements.payload.data).rows);
}

//! Entry points into the crate's decoders that are not public, for the fuzz tests only
//! (`crates/bankfeed/tests/it/fuzz_decoders.rs`; the inputs come from the bankfeed-testing crate). Hidden from the
//! documentation; not an API.
//!
//! Every decoder must answer any input with `Ok` or a documented error, and never panic or hang
//! (docs/bad-input.md).

use std::time::SystemTime;

use crate::authorize::{parse_step, Answers, Step};
use crate::data::accounts::{Accounts, Statements};
use crate::data::answer::Reply;
use crate::data::attributes::{value_as_f64, value_as_text, Attributes};
use crate::data::dates::{parse_date, parse_timestamp};
use crate::data::investments::Investments;
use crate::data::json;
use crate::data::money::{MoneyType, Written};
use crate::error::{ApiError, Body, Error};
use crate::tables::{
    attribute_detail_table, attribute_values_table, statements_table, AccountsTables, InvestmentsTables,
};

/// A decoder of one kind of answer: its name, and a function that reads a body the way the
/// client reads it, through to the tables built from it.
pub type Decoder = (&'static str, fn(&[u8]) -> Result<(), Error>);

/// Every decoder of an answer of the service, as the client runs it on a body.
pub const DECODERS: &[Decoder] = &[
    ("Investments", investments),
    ("Investments tables", |bytes| InvestmentsTables::from_json(bytes).map(drop)),
    ("GetAccountsDetail", accounts),
    ("Accounts tables", |bytes| AccountsTables::from_json(bytes).map(drop)),
    // Exact money: read from the digits, never a panic whatever they are.
    ("Investments decimal tables", |bytes| InvestmentsTables::read(bytes, MoneyType::Decimal).map(drop)),
    ("Accounts decimal tables", |bytes| AccountsTables::read("GetAccountsDetail", bytes, MoneyType::Decimal).map(drop)),
    ("GetStatements", statements),
    ("Attributes", attributes),
    ("Authorize 200", |bytes| authorize(Reply::Data { status: 200, bytes: bytes.to_vec() })),
    ("Authorize 203", |bytes| authorize(Reply::Challenge(bytes.to_vec()))),
    ("GenerateAuthorizeToken", |bytes| {
        crate::client::parse_token(Reply::Data { status: 200, bytes: bytes.to_vec() }).map(drop)
    }),
    ("DeleteCard", |bytes| {
        json::check_error_envelope("DeleteCard", 200, bytes)?;
        crate::client::delete_answer(bytes);
        Ok(())
    }),
    ("error answer", error_answers),
    ("payload check", |bytes| {
        json::observed_top_agrees::<Investments<std::borrow::Cow<str>>>(bytes)?;
        json::observed_top_agrees::<Accounts<std::borrow::Cow<str>>>(bytes)?;
        // Money read as its digits goes through the probe as a RawValue.
        json::observed_top_agrees::<Investments<std::borrow::Cow<str>, Written>>(bytes)?;
        json::observed_top_agrees::<Accounts<std::borrow::Cow<str>, Written>>(bytes)?;
        json::observed_top_agrees::<Statements>(bytes)
    }),
];

fn investments(bytes: &[u8]) -> Result<(), Error> {
    let data: Investments = json::decode_payload("Investments", 200, bytes)?;
    InvestmentsTables::new(&data).map(drop)
}

fn accounts(bytes: &[u8]) -> Result<(), Error> {
    let data: Accounts = json::decode_payload("GetAccountsDetail", 200, bytes)?;
    AccountsTables::new(&data).map(drop)
}

fn statements(bytes: &[u8]) -> Result<(), Error> {
    let data: Statements = json::decode_payload("GetStatements", 200, bytes)?;
    statements_table(&data);
    // A statement that is not base64 is a decode error of its own, when its files are asked for.
    data.files().map(drop)
}

fn attributes(bytes: &[u8]) -> Result<(), Error> {
    let data = Attributes::read("GetIncomeAttributes", bytes)?;
    attribute_values_table(&data);
    // Floats always fit their column; the decimal reading of the same bytes may not fit, an
    // error, never a panic.
    drop(attribute_detail_table("GetIncomeAttributes", &data));
    if let Ok(decimal) = Attributes::read_with_money("GetIncomeAttributes", bytes, MoneyType::Decimal) {
        drop(attribute_detail_table("GetIncomeAttributes", &decimal));
    }
    for (_, value) in data.groups.iter().flat_map(|group| &group.values) {
        value_as_f64(value);
        value_as_text(value);
    }
    Ok(())
}

/// An Authorize answer: the step, then what the caller does with a challenge (its images, its
/// rules with a plausible answer to each prompt).
fn authorize(reply: Reply) -> Result<(), Error> {
    match parse_step(reply, Some("5e0e5f83-6e9b-4a2c-a6a3-0d8f4b1c9e21"))? {
        Step::Session(session) => {
            if let Some(login) = &session.login {
                login.last_refresh.as_deref().map(parse_timestamp);
            }
        }
        Step::Challenge(challenge) => {
            let mut answers = Answers::new();
            for item in &challenge.challenges {
                if let Some(Err(error)) = item.images() {
                    check(&error, &["ImageSelection"])?;
                }
                item.is_security_code();
                let answer = item.choices.as_ref().and_then(|c| c.first().cloned()).unwrap_or_else(|| "123456".into());
                answers.push(item.prompt.clone(), vec![answer]);
            }
            // A rule the plausible answer breaks is the caller's error, not the decoder's.
            let _ = challenge.validate(&answers);
            let _debug = format!("{challenge:?}");
        }
    }
    Ok(())
}

/// An error answer, for every error status and for a 202 (which must be a JSON object).
fn error_answers(bytes: &[u8]) -> Result<(), Error> {
    for status in [202, 400, 401, 403, 404, 408, 418, 429, 500, 503] {
        if let Some(api) = crate::data::answer::api_error(status, bytes.to_vec()) {
            api.kind();
            api.is_session_loading();
            api.to_string();
            bounded(&api)?;
        }
    }
    Ok(())
}

/// An error keeps what it is documented to keep, bounded (docs/errors.md#what-every-error-keeps).
fn bounded(api: &ApiError) -> Result<(), Error> {
    let text_ok = match &api.body {
        Body::Text(text) => text.chars().count() <= 64 * 1024,
        Body::Json(_) => true,
    };
    let fields_ok = api.message.as_deref().map_or(0, |m| m.chars().count()) <= 1_001
        && api.code.as_deref().map_or(0, |c| c.chars().count()) <= 201
        && api.request_id.as_deref().map_or(0, |r| r.chars().count()) <= 201;
    if text_ok && fields_ok {
        Ok(())
    } else {
        Err(Error::Config { field: "fuzzing", rule: format!("an ApiError is not bounded: {api:?}") })
    }
}

/// Header values a server sends: `Retry-After` in every form must give a delay or nothing.
pub fn retry_after(value: &str) {
    crate::http::parse_retry_after(value, SystemTime::now());
}

/// The date readers of the tables, on any text.
pub fn dates(text: &str) {
    parse_date(text);
    parse_timestamp(text);
}

/// Whether `error` is one a decoder may answer with: a documented variant naming one of
/// `operations`, keeping a snippet of at most 200 characters (and an ellipsis). The `Err` says what is wrong.
pub fn check(error: &Error, operations: &[&str]) -> Result<(), Error> {
    let (operation, snippet) = match error {
        Error::Decode { operation, snippet, .. } | Error::Protocol { operation, snippet, .. } => (operation, snippet),
        Error::Api(api) => return bounded(api),
        other => {
            return Err(Error::Config {
                field: "fuzzing",
                rule: format!("an undocumented error for a body: {other:?}"),
            })
        }
    };
    if !operations.iter().any(|name| name == operation) || snippet.chars().count() > 201 {
        return Err(Error::Config { field: "fuzzing", rule: format!("a badly built error: {error:?}") });
    }
    error.to_string();
    Ok(())
}

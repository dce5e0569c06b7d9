//! `GET BankingServices/Institutions`: the institutions the sandbox supports, in the documented
//! shape, paged with `skip` and `take` (docs/protocol.md#operations-beyond-the-interface). The
//! sandbox knows one institution, FlinksCapital.

use std::sync::Arc;

use axum::extract::{RawQuery, State};
use axum::http::HeaderMap;
use axum::response::Response;
use serde::Serialize;

use crate::server::reply::{self, ErrorReply, INSTITUTION, INSTITUTION_ID};
use crate::world::keys;
use crate::world::state::Shared;

/// The most a page holds, as the reference says of `take`.
const MAX_TAKE: usize = 1000;

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct InstitutionsBody {
    data: Vec<Institution>,
    /// Every institution, whatever the page shows: a caller pages until it has this many.
    count: usize,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct Institution {
    id: u32,
    localizations: Vec<Localization>,
    status: &'static str,
    country: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct Localization {
    language: &'static str,
    name: &'static str,
    urls: Vec<Url>,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct Url {
    #[serde(rename = "Type")]
    kind: &'static str,
    url: &'static str,
}

fn all() -> Vec<Institution> {
    let localized = |language| Localization {
        language,
        name: INSTITUTION,
        urls: vec![Url { kind: "Main", url: "https://www.flinks.com/" }],
    };
    vec![Institution {
        id: INSTITUTION_ID,
        localizations: vec![localized("en"), localized("fr")],
        status: "Enabled",
        country: "CA",
    }]
}

/// The page `skip` and `take` name, behind the API key.
pub(crate) async fn institutions(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Result<Response, ErrorReply> {
    keys::check_api_key(&shared, &headers)?;
    let skip = parameter(query.as_deref(), "skip")?.unwrap_or(0);
    let take = parameter(query.as_deref(), "take")?.unwrap_or(MAX_TAKE);
    if take > MAX_TAKE {
        return Err(ErrorReply::invalid_request(format!("take must be at most {MAX_TAKE}, not {take}")));
    }
    let institutions = all();
    let count = institutions.len();
    let data = institutions.into_iter().skip(skip).take(take).collect();
    Ok(reply::json(axum::http::StatusCode::OK, &InstitutionsBody { data, count }))
}

/// A whole number `name` of the query, matched without regard to case.
fn parameter(query: Option<&str>, name: &str) -> Result<Option<usize>, ErrorReply> {
    let Some(query) = query else { return Ok(None) };
    let Some((_, value)) =
        query.split('&').filter_map(|pair| pair.split_once('=')).find(|(key, _)| key.eq_ignore_ascii_case(name))
    else {
        return Ok(None);
    };
    value
        .trim()
        .parse::<usize>()
        .map(Some)
        .map_err(|_| ErrorReply::invalid_request(format!("{name} must be a whole number of 0 or more, not {value:?}")))
}

//! Attributes (docs/protocol.md#attributes): the use-case GETs and the custom POST, computed
//! from the login's generated accounts with the catalogue of [`super::catalogue`].
//!
//! As on the real service they come after account detail: until GetAccountsDetail has
//! answered 200 for the RequestId, every attributes call answers 202 `OPERATION_PENDING`
//! (the caller repeats it); after that an attributes call has a pending phase of its own. Both
//! are the pending machinery of every data operation ([`Operation`]); the paths name the
//! RequestId and LoginId, so the handlers here are written out rather than generated.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use serde_json::{Map, Value as Json};

use super::body::{field, string_list, Body, BodyBytes, Segments};
use super::catalogue::{self, Attribute, Row, Scope, Value, ALL_ATTRIBUTES, BUSINESS_OPERATIONS, CATALOGUE, PACKAGES};
use super::generator::{slash_date, Banking, Cents, Description, Guid};
use super::keys;
use super::operation::{Operation, Step};
use super::reply::{Envelope, ErrorReply};
use super::state::Shared;
use crate::protocol;

/// The group the use-case operations answer in.
const USE_CASE_GROUP: &str = "Card";

/// What to compute: groups of attributes, over which accounts, with which details.
struct Request {
    groups: Vec<(String, Vec<&'static Attribute>)>,
    categories: Option<Vec<String>>,
    accounts: Option<Vec<String>>,
    detail: Vec<&'static str>,
}

pub(crate) async fn use_case(
    State(shared): State<Arc<Shared>>,
    segments: Result<Segments<(String, String, String, String)>, ErrorReply>,
    headers: HeaderMap,
) -> Result<Response, ErrorReply> {
    keys::check_api_key(&shared, &headers)?;
    let Segments((_, login_id, request_id, operation)) = segments.map_err(ErrorReply::of_attributes)?;
    let (name, names) = package(&shared, &operation).map_err(ErrorReply::of_attributes)?;
    let request = Request {
        groups: vec![(USE_CASE_GROUP.to_owned(), names.into_iter().filter_map(catalogue::find).collect())],
        categories: None,
        accounts: None,
        detail: Vec::new(),
    };
    // Each package has a pending phase of its own, keyed by its operation's name.
    let operation = Operation { wire: &protocol::ATTRIBUTES_USE_CASE, name };
    answer(&shared, &login_id, &request_id, &operation, request).map_err(ErrorReply::of_attributes)
}

pub(crate) async fn custom(
    State(shared): State<Arc<Shared>>,
    segments: Result<Segments<(String, String, String)>, ErrorReply>,
    headers: HeaderMap,
    bytes: Result<BodyBytes, ErrorReply>,
) -> Result<Response, ErrorReply> {
    keys::check_api_key(&shared, &headers)?;
    let Segments((_, login_id, request_id)) = segments.map_err(ErrorReply::of_attributes)?;
    let read = |bytes: Result<BodyBytes, ErrorReply>| parse(&Body::parse(&bytes?.0)?);
    let request = read(bytes).map_err(ErrorReply::of_attributes)?;
    answer(&shared, &login_id, &request_id, &Operation::of(&protocol::ATTRIBUTES), request)
        .map_err(ErrorReply::of_attributes)
}

/// The operation's pending key and attribute names, or why the customer cannot call it.
fn package(shared: &Shared, operation: &str) -> Result<(&'static str, Vec<&'static str>), ErrorReply> {
    if let Some((name, names)) = PACKAGES.iter().find(|(name, _)| name.eq_ignore_ascii_case(operation)) {
        return Ok((name, names.to_vec()));
    }
    if ALL_ATTRIBUTES.eq_ignore_ascii_case(operation) {
        if !shared.config.tier2 {
            return Err(ErrorReply::unauthorized(
                "ACCESS_DENIED",
                "GetAllAttributes needs a Tier 2 package (or above); this customer has use-case packages only",
            ));
        }
        return Ok((ALL_ATTRIBUTES, CATALOGUE.iter().map(|a| a.name).collect()));
    }
    if let Some(name) = BUSINESS_OPERATIONS.iter().find(|name| name.eq_ignore_ascii_case(operation)) {
        return Err(ErrorReply::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "METHOD_NOT_AVAILABLE",
            format!("{name} needs a business attributes package, which the sandbox does not offer"),
        ));
    }
    Err(ErrorReply::new(
        StatusCode::NOT_FOUND,
        "INVALID_REQUEST",
        format!("{operation:?} is not an attributes operation"),
    ))
}

fn parse(body: &Body) -> Result<Request, ErrorReply> {
    if body.flag("MostRecentCached")?.is_none() {
        return Err(ErrorReply::invalid_request("MostRecentCached is required"));
    }
    let groups = match body.get("Attributes") {
        Some(Json::Object(map)) if !map.is_empty() => map,
        Some(_) => {
            return Err(ErrorReply::invalid_request(
                "Attributes must be an object of group name to an array of attribute names",
            ))
        }
        None => return Err(ErrorReply::invalid_request("Attributes is required")),
    };
    let groups = groups
        .iter()
        .map(|(group, names)| {
            let key = format!("Attributes.{group}");
            let names = string_list(&key, names)?.unwrap_or_default();
            Ok((group.clone(), attributes(&names)?))
        })
        .collect::<Result<Vec<_>, ErrorReply>>()?;
    let filters = object(body, "Filters")?;
    let options = object(body, "Options")?;
    let list = |map: Option<&Map<String, Json>>, key: &str, name: &str| match map.and_then(|map| field(map, key)) {
        Some(value) => string_list(name, value),
        None => Ok(None),
    };
    let detail = list(options, "AttributesDetail", "Options.AttributesDetail")?.unwrap_or_default();
    Ok(Request {
        groups,
        categories: list(filters, "AccountCategory", "Filters.AccountCategory")?,
        accounts: list(options, "AccountFilter", "Options.AccountFilter")?,
        detail: attributes(&detail)?.iter().map(|a| a.name).collect(),
    })
}

/// Names are data, matched exactly (never re-cased); the first unknown one is named.
fn attributes(names: &[String]) -> Result<Vec<&'static Attribute>, ErrorReply> {
    names
        .iter()
        .map(|name| {
            catalogue::find(name).ok_or_else(|| ErrorReply::invalid_request(format!("Unknown attribute name {name:?}")))
        })
        .collect()
}

fn object<'a>(body: &'a Body, key: &str) -> Result<Option<&'a Map<String, Json>>, ErrorReply> {
    match body.get(key) {
        None => Ok(None),
        Some(Json::Object(map)) => Ok(Some(map)),
        Some(_) => Err(ErrorReply::invalid_request(format!("{key} must be an object"))),
    }
}

fn answer(
    shared: &Shared,
    login_id: &str,
    request_id: &str,
    operation: &Operation,
    request: Request,
) -> Result<Response, ErrorReply> {
    let ready = match operation.enter(shared, request_id, Some(login_id), None, |_| ())? {
        Step::Wait(response) => return Ok(response),
        Step::Go(ready) => ready,
    };
    let banking = shared.data.banking(&shared.config, &ready.login_id);
    let scope = Scope::new(included(&banking, &request));
    let groups = request
        .groups
        .iter()
        .map(|(name, attributes)| {
            let detail: Vec<DetailBody> = attributes
                .iter()
                .filter(|attribute| request.detail.contains(&attribute.name))
                .map(|attribute| DetailBody {
                    attribute: attribute.name,
                    transactions: attribute.behind(&scope).iter().map(DetailTransaction::from).collect(),
                })
                .collect();
            GroupBody {
                name,
                id: Guid::derive(&[
                    &shared.config.seed.to_le_bytes(),
                    b"attributes",
                    ready.login_id.as_bytes(),
                    name.as_bytes(),
                ]),
                values: attributes.iter().map(|attribute| (attribute.name, attribute.value(&scope))).collect(),
                detail: (!detail.is_empty()).then_some(detail),
            }
        })
        .collect();
    Ok(Envelope::new(Groups(groups), None, ready.login(Some("Personal")), &ready.request_id).ok())
}

/// The accounts whose category `Filters.AccountCategory` names and whose Id
/// `Options.AccountFilter` names (any case), each filter applying only when given.
fn included<'a>(banking: &'a Banking, request: &Request) -> Vec<&'a super::generator::BankAccount> {
    let named = |list: &Option<Vec<String>>, value: &str| match list {
        None => true,
        Some(list) => list.iter().any(|item| item.trim().eq_ignore_ascii_case(value)),
    };
    banking
        .accounts
        .iter()
        .filter(|account| {
            named(&request.categories, account.category) && named(&request.accounts, &account.id.to_string())
        })
        .collect()
}

// ---- the wire shapes -----------------------------------------------------------------------

/// One object per group, named by the group, inside the [`Envelope`].
struct Groups<'a>(Vec<GroupBody<'a>>);

impl Serialize for Groups<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for group in &self.0 {
            map.serialize_entry(group.name, group)?;
        }
        map.end()
    }
}

/// `Id`, one field per attribute, and `AttributesDetail` when any was asked for.
struct GroupBody<'a> {
    name: &'a str,
    id: Guid,
    values: Vec<(&'static str, Value)>,
    detail: Option<Vec<DetailBody<'a>>>,
}

impl Serialize for GroupBody<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("Id", &self.id)?;
        for (name, value) in &self.values {
            map.serialize_entry(name, value)?;
        }
        if let Some(detail) = &self.detail {
            map.serialize_entry("AttributesDetail", detail)?;
        }
        map.end()
    }
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct DetailBody<'a> {
    attribute: &'static str,
    transactions: Vec<DetailTransaction<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct DetailTransaction<'a> {
    transaction_id: Guid,
    account_id: Guid,
    date: &'static str,
    description: Description<'a>,
    debit: Option<Cents>,
    credit: Option<Cents>,
}

impl<'a> From<&Row<'a>> for DetailTransaction<'a> {
    fn from(row: &Row<'a>) -> DetailTransaction<'a> {
        let transaction = row.transaction;
        DetailTransaction {
            transaction_id: transaction.id,
            account_id: row.account.id,
            date: slash_date(transaction.day),
            description: transaction.description(),
            debit: transaction.debit(),
            credit: transaction.credit(),
        }
    }
}

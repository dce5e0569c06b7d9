//! Attributes (docs/protocol.md#attributes): the use-case GETs and the custom POST, computed
//! from the login's generated accounts with the catalogue of [`crate::operations::catalogue`].
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

use crate::generator::{slash_date, AsOf, Banking, Cents, Description, Guid, DAYS};
use crate::operations::catalogue::{
    self, Attribute, Row, Scope, Value, ALL_ATTRIBUTES, BUSINESS_OPERATIONS, CATALOGUE, PACKAGES,
};
use crate::operations::operation::{Operation, Step};
use crate::server::body::{field, string_list, Body, BodyBytes, Segments};
use crate::server::reply::{Envelope, ErrorReply};
use crate::world::keys;
use crate::world::state::Shared;
use bankfeed::protocol;

/// The group the use-case operations answer in.
const USE_CASE_GROUP: &str = "Card";

/// The one account category the service computes attributes over (docs/protocol.md#attributes).
const SUPPORTED_CATEGORY: &str = "Operations";

/// The header that limits the days of transactions attributes are computed from.
const LIMIT_DAYS: &str = "limitDays";

/// What to compute: groups of attributes, over which accounts and days, with which details.
struct Request {
    groups: Vec<(String, Vec<&'static Attribute>)>,
    categories: Option<Vec<String>>,
    accounts: Option<Vec<String>>,
    detail: Vec<&'static str>,
    /// `limitDays`: only transactions of the last this many days count.
    limit_days: Option<u16>,
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
        limit_days: limit_days(&headers).map_err(ErrorReply::of_attributes)?,
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
    // As GetAllAttributes: the custom set is for Tier 2 packages, not use-case ones.
    tier2(&shared, "The custom Attributes operation")?;
    let read = |bytes: Result<BodyBytes, ErrorReply>| parse(&Body::parse(&bytes?.0)?);
    let mut request = read(bytes).map_err(ErrorReply::of_attributes)?;
    request.limit_days = limit_days(&headers).map_err(ErrorReply::of_attributes)?;
    answer(&shared, &login_id, &request_id, &Operation::of(&protocol::ATTRIBUTES), request)
        .map_err(ErrorReply::of_attributes)
}

/// Refuses `what` to a customer with use-case packages only (docs/protocol.md#attributes).
fn tier2(shared: &Shared, what: &str) -> Result<(), ErrorReply> {
    if shared.config.tier2 {
        return Ok(());
    }
    Err(ErrorReply::unauthorized(
        "ACCESS_DENIED",
        format!("{what} needs a Tier 2 package (or above); this customer has use-case packages only"),
    ))
}

/// The `limitDays` header: a whole number of days from 1 to 365.
fn limit_days(headers: &HeaderMap) -> Result<Option<u16>, ErrorReply> {
    let Some(value) = headers.get(LIMIT_DAYS) else { return Ok(None) };
    let text = value.to_str().unwrap_or_default().trim();
    match text.parse::<u16>() {
        Ok(days) if (1..=DAYS).contains(&days) => Ok(Some(days)),
        _ => Err(ErrorReply::invalid_request(format!(
            "The {LIMIT_DAYS} header must be a whole number of days from 1 to {DAYS}, not {text:?}"
        ))),
    }
}

/// The operation's pending key and attribute names, or why the customer cannot call it.
fn package(shared: &Shared, operation: &str) -> Result<(&'static str, Vec<&'static str>), ErrorReply> {
    if let Some((name, names)) = PACKAGES.iter().find(|(name, _)| name.eq_ignore_ascii_case(operation)) {
        return Ok((name, names.to_vec()));
    }
    if ALL_ATTRIBUTES.eq_ignore_ascii_case(operation) {
        tier2(shared, ALL_ATTRIBUTES)?;
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

/// The custom body, in the documented shape (`Attributes`, `Filters.AccountCategory`, a top-level
/// `AccountFilter` of `{"AccountID": [...]}` and `AttributesDetail`) or the interface's
/// (`Options.AttributesDetail`, `Options.AccountFilter`); `MostRecentCached` may be left out.
/// Refusals word the reasons the service's error table gives (docs/protocol.md#attributes).
fn parse(body: &Body) -> Result<Request, ErrorReply> {
    body.flag("MostRecentCached")?;
    let groups = match body.get("Attributes") {
        Some(Json::Object(map)) => map,
        Some(_) => {
            return Err(ErrorReply::invalid_request(
                "Attributes must be an object of group name to an array of attribute names",
            ))
        }
        None => return Err(no_attributes()),
    };
    let mut asked = Vec::new();
    for (group, names) in groups {
        if !group.trim().eq_ignore_ascii_case(USE_CASE_GROUP) {
            return Err(ErrorReply::invalid_request(format!(
                "Attributes names the group {group:?}: {USE_CASE_GROUP} is the only supported attribute level"
            )));
        }
        let names = string_list(&format!("Attributes.{group}"), names)?.unwrap_or_default();
        asked.extend(attributes(&names)?);
    }
    if asked.is_empty() {
        return Err(no_attributes());
    }
    let options = object(body, "Options")?;
    let detail = detail_names(body, options)?;
    if let Some(name) = detail.iter().find(|name| !asked.iter().any(|a| a.name == **name)) {
        return Err(ErrorReply::invalid_request(format!(
            "AttributesDetail names {name:?}, which Attributes does not ask for: detail comes only for attributes asked"
        )));
    }
    Ok(Request {
        groups: vec![(USE_CASE_GROUP.to_owned(), asked)],
        categories: categories(body)?,
        accounts: account_filter(body, options)?,
        detail,
        limit_days: None,
    })
}

fn no_attributes() -> ErrorReply {
    ErrorReply::invalid_request("At least a single attribute must be provided in Attributes")
}

/// `Filters.AccountCategory`: only the supported category; any other filter is refused.
fn categories(body: &Body) -> Result<Option<Vec<String>>, ErrorReply> {
    let Some(filters) = object(body, "Filters")? else { return Ok(None) };
    let invalid = |what: String| ErrorReply::invalid_request(format!("One or more filters are invalid: {what}"));
    if let Some((key, _)) = filters.iter().find(|(key, _)| !key.eq_ignore_ascii_case("AccountCategory")) {
        return Err(invalid(format!("Filters.{key} is not a filter; Filters.AccountCategory is")));
    }
    let Some(value) = field(filters, "AccountCategory") else { return Ok(None) };
    let categories = string_list("Filters.AccountCategory", value)?;
    if let Some(other) = categories.iter().flatten().find(|c| !c.trim().eq_ignore_ascii_case(SUPPORTED_CATEGORY)) {
        return Err(invalid(format!(
            "Filters.AccountCategory holds {other:?}; {SUPPORTED_CATEGORY} is the only supported category"
        )));
    }
    Ok(categories)
}

/// `AccountFilter` (top level, `{"AccountID": [...]}` or a bare list) or `Options.AccountFilter`
/// (a list). Present, it must name at least one account.
fn account_filter(body: &Body, options: Option<&Map<String, Json>>) -> Result<Option<Vec<String>>, ErrorReply> {
    let (key, value) = match (body.get("AccountFilter"), options.and_then(|map| field(map, "AccountFilter"))) {
        (Some(value), _) => ("AccountFilter", value),
        (None, Some(value)) => ("Options.AccountFilter", value),
        (None, None) => return Ok(None),
    };
    let list = match value {
        Json::Object(map) => field(map, "AccountID").or_else(|| field(map, "AccountIds")).unwrap_or(&Json::Null),
        other => other,
    };
    let ids = match list {
        Json::Null => None,
        list => string_list(&format!("{key}.AccountID"), list)?,
    };
    match ids {
        Some(ids) if ids.iter().all(|id| !id.trim().is_empty()) => Ok(Some(ids)),
        _ => Err(ErrorReply::invalid_request(format!("At least one accountId must be provided when {key} is present"))),
    }
}

/// `AttributesDetail` (top level: a list, or group name to a list) or `Options.AttributesDetail`.
fn detail_names(body: &Body, options: Option<&Map<String, Json>>) -> Result<Vec<&'static str>, ErrorReply> {
    let (key, value) = match (body.get("AttributesDetail"), options.and_then(|map| field(map, "AttributesDetail"))) {
        (Some(value), _) => ("AttributesDetail", value),
        (None, Some(value)) => ("Options.AttributesDetail", value),
        (None, None) => return Ok(Vec::new()),
    };
    let mut names = Vec::new();
    match value {
        Json::Object(groups) => {
            for (group, list) in groups {
                names.extend(string_list(&format!("{key}.{group}"), list)?.unwrap_or_default());
            }
        }
        list => names.extend(string_list(key, list)?.unwrap_or_default()),
    }
    Ok(attributes(&names)?.iter().map(|attribute| attribute.name).collect())
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
        Step::Wait(response) | Step::Partial { wait: response, .. } => return Ok(response),
        Step::Go(ready) => ready,
    };
    let banking = shared.data.banking(&shared.config, &ready.login_id, shared.clock());
    if let Some(unknown) = request
        .accounts
        .iter()
        .flatten()
        .find(|id| !banking.accounts.iter().any(|account| id.trim().eq_ignore_ascii_case(&account.id.to_string())))
    {
        return Err(ErrorReply::invalid_request(format!("The AccountId: {unknown} in AccountFilter is not valid"))
            .with_request_id(&ready.request_id));
    }
    let mut scope = Scope::new(included(&banking, &request));
    if let Some(days) = request.limit_days {
        scope.rows.retain(|row| row.transaction.day < days);
    }
    let groups = request
        .groups
        .iter()
        .map(|(name, attributes)| {
            let detail: Vec<DetailBody> = attributes
                .iter()
                .filter(|attribute| request.detail.contains(&attribute.name))
                .map(|attribute| DetailBody {
                    attribute: attribute.name,
                    transactions: attribute
                        .behind(&scope)
                        .iter()
                        .map(|row| DetailTransaction::new(row, banking.clock))
                        .collect(),
                })
                .collect();
            GroupBody {
                name,
                // The documented Id of the group is the LoginId.
                id: &ready.login_id,
                values: attributes.iter().map(|attribute| (attribute.name, attribute.value(&scope))).collect(),
                detail: (!detail.is_empty()).then_some(detail),
            }
        })
        .collect();
    Ok(Envelope::new(Groups(groups), None, Some(ready.login(Some("Personal"))), &ready.request_id).ok())
}

/// The accounts whose category `Filters.AccountCategory` names and whose Id
/// `Options.AccountFilter` names (any case), each filter applying only when given.
fn included<'a>(banking: &'a Banking, request: &Request) -> Vec<&'a crate::generator::BankAccount> {
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

/// The detail list's key, spelled as the newest documentation spells it (docs/protocol.md#attributes).
const DETAIL_KEY: &str = "AttributeDetails";

/// `Id`, one field per attribute, and the detail list when any was asked for.
struct GroupBody<'a> {
    name: &'a str,
    id: &'a str,
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
            map.serialize_entry(DETAIL_KEY, detail)?;
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
    balance: Cents,
}

impl<'a> DetailTransaction<'a> {
    fn new(row: &Row<'a>, clock: AsOf) -> DetailTransaction<'a> {
        let transaction = row.transaction;
        DetailTransaction {
            transaction_id: transaction.id,
            account_id: row.account.id,
            date: slash_date(clock, transaction.day),
            description: transaction.description(),
            debit: transaction.debit(),
            credit: transaction.credit(),
            balance: transaction.balance,
        }
    }
}

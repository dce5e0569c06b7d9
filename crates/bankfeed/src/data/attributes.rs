//! Attributes: the request (a use-case package or a custom set) and the payload
//! (docs/protocol.md#attributes), whose groups are named by the caller and so are read dynamically.

use std::collections::HashMap;
use std::fmt;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

use super::de;
use super::json::{check_payload_value, Shape};
use super::login::{guid, Login, NamesLogin};
use super::money::{JsonNumber, MoneyType, Written};
use crate::config::shown;
use crate::error::Error;

/// The use-case operations of docs/protocol.md#attributes, business ones included.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Package {
    Income,
    CreditRisk,
    UserAnalysis,
    Lending,
    All,
    BusinessAnalysis,
    AllBusiness,
}

impl Package {
    const ALL: [(Package, &'static str); 7] = [
        (Package::Income, "income"),
        (Package::CreditRisk, "credit_risk"),
        (Package::UserAnalysis, "user_analysis"),
        (Package::Lending, "lending"),
        (Package::All, "all"),
        (Package::BusinessAnalysis, "business_analysis"),
        (Package::AllBusiness, "all_business"),
    ];

    /// A short name (`income`, `credit_risk`, ...) or the operation's own name.
    pub fn parse(name: &str) -> Result<Self, Error> {
        let wanted = name.trim().to_ascii_lowercase().replace(['-', ' '], "_");
        Self::ALL
            .iter()
            .find(|(package, short)| *short == wanted || package.operation().eq_ignore_ascii_case(name.trim()))
            .map(|(package, _)| *package)
            .ok_or_else(|| Error::config("package", format!("must be one of {}, got {}", Self::names(), shown(name))))
    }

    /// Every short name, quoted, for messages: `"income", "credit_risk", ... or "all_business"`.
    pub fn names() -> String {
        let quoted: Vec<String> = Self::ALL.iter().map(|(_, short)| format!("{short:?}")).collect();
        match quoted.split_last() {
            Some((last, [])) => last.clone(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => String::new(),
        }
    }

    pub fn operation(self) -> &'static str {
        match self {
            Package::Income => "GetIncomeAttributes",
            Package::CreditRisk => "GetCreditRiskAttributes",
            Package::UserAnalysis => "GetUserAnalysisAttributes",
            Package::Lending => "GetLendingAttributes",
            Package::All => "GetAllAttributes",
            Package::BusinessAnalysis => "GetBusinessAnalysisAttributes",
            Package::AllBusiness => "GetAllBusinessAttributes",
        }
    }
}

/// What an attributes call asks for.
#[derive(Clone, Debug, PartialEq)]
pub enum AttributesQuery {
    /// A use-case operation: its attributes cannot be customised.
    Package(Package),
    /// The custom operation of docs/protocol.md#attributes.
    Custom(CustomAttributes),
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct CustomAttributes {
    /// Group name to attribute names, both sent verbatim (attribute names are snake_case data).
    pub attributes: Vec<(String, Vec<String>)>,
    /// `Filters`, as given (e.g. `{"AccountCategory": ["Operations"]}`).
    pub filters: Option<Value>,
    /// `Options.AttributesDetail`.
    pub detail: Vec<String>,
    /// `Options.AccountFilter`.
    pub account_filter: Vec<String>,
}

impl CustomAttributes {
    pub fn validate(&self) -> Result<(), Error> {
        if self.attributes.is_empty() {
            return Err(Error::config("attributes", "must name at least one group of attributes"));
        }
        for (group, names) in &self.attributes {
            if group.trim().is_empty() {
                return Err(Error::config("attributes", "group names must not be empty"));
            }
            if names.is_empty() || names.iter().any(|n| n.trim().is_empty()) {
                return Err(Error::config(
                    "attributes",
                    format!("group {group:?} must list one or more attribute names"),
                ));
            }
        }
        if self.filters.as_ref().is_some_and(|f| !f.is_object()) {
            return Err(Error::config("filters", "must be a mapping such as {\"AccountCategory\": [\"Operations\"]}"));
        }
        if self.detail.iter().any(|n| n.trim().is_empty()) {
            return Err(Error::config("detail", "must list attribute names"));
        }
        for account in &self.account_filter {
            guid("account_filter", account)?;
        }
        Ok(())
    }

    pub(crate) fn body(&self) -> Value {
        let attributes: Map<String, Value> =
            self.attributes.iter().map(|(group, names)| (group.clone(), json!(names))).collect();
        let mut body = Map::new();
        body.insert("MostRecentCached".into(), json!(true));
        body.insert("Attributes".into(), Value::Object(attributes));
        if let Some(filters) = &self.filters {
            body.insert("Filters".into(), filters.clone());
        }
        let mut options = Map::new();
        if !self.detail.is_empty() {
            options.insert("AttributesDetail".into(), json!(self.detail));
        }
        if !self.account_filter.is_empty() {
            options.insert("AccountFilter".into(), json!(self.account_filter));
        }
        if !options.is_empty() {
            body.insert("Options".into(), Value::Object(options));
        }
        Value::Object(body)
    }
}

/// The attributes payload.
#[derive(Clone, Debug, Default)]
pub struct Attributes {
    pub groups: Vec<AttributeGroup>,
    pub login: Option<Login>,
    pub request_id: Option<String>,
    /// How the detail's amounts were read, and so how its table holds them (docs/tables.md#money).
    pub money: MoneyType,
}

impl NamesLogin for Attributes {
    fn login_id(&self) -> Option<&str> {
        self.login.as_ref()?.id.as_deref()
    }
}

#[derive(Clone, Debug, Default)]
pub struct AttributeGroup {
    pub name: String,
    pub id: Option<String>,
    /// Attribute name (verbatim) to its value as sent: a number, or a string such as `NONE_DETECTED`.
    pub values: Vec<(String, Value)>,
    pub detail: Vec<AttributeDetail>,
}

#[derive(Clone, Debug, Default)]
pub struct AttributeDetail {
    pub attribute: Option<String>,
    pub transactions: Vec<AttributeTransaction>,
}

#[derive(Clone, Debug, Default)]
pub struct AttributeTransaction {
    pub transaction_id: Option<String>,
    pub account_id: Option<String>,
    /// `YYYY/MM/DD`.
    pub date: Option<String>,
    pub description: Option<String>,
    pub debit: Option<DetailAmount>,
    pub credit: Option<DetailAmount>,
}

/// An amount of a detail transaction (`Debit`, `Credit`): a float, or, read with
/// `money="decimal"`, the digits the payload wrote (docs/tables.md#money). Owned: the model
/// outlives the bytes it was read from.
#[derive(Clone, Debug, PartialEq)]
pub enum DetailAmount {
    Float(f64),
    Written(String),
}

/// A number type of the payload's amounts, as the model keeps it.
trait Kept {
    fn kept(self) -> DetailAmount;
}

impl Kept for f64 {
    fn kept(self) -> DetailAmount {
        DetailAmount::Float(self)
    }
}

impl Kept for Written<'_> {
    fn kept(self) -> DetailAmount {
        DetailAmount::Written(self.0.into_owned())
    }
}

/// A detail entry as the payload spells it, its amounts read as `N` (`f64`, or [`Written`]).
#[derive(Default, Deserialize)]
#[serde(rename_all = "PascalCase", default, bound(deserialize = "N: JsonNumber<'de> + Default"))]
struct WireDetail<N> {
    #[serde(deserialize_with = "de::text")]
    attribute: Option<String>,
    #[serde(deserialize_with = "de::list")]
    transactions: Vec<WireTransaction<N>>,
}

/// A detail transaction as the payload spells it, its amounts read as `N`.
#[derive(Default, Deserialize)]
#[serde(rename_all = "PascalCase", default, bound(deserialize = "N: JsonNumber<'de> + Default"))]
struct WireTransaction<N> {
    #[serde(deserialize_with = "de::text")]
    transaction_id: Option<String>,
    #[serde(deserialize_with = "de::text")]
    account_id: Option<String>,
    #[serde(deserialize_with = "de::text")]
    date: Option<String>,
    #[serde(deserialize_with = "de::text")]
    description: Option<String>,
    #[serde(deserialize_with = "JsonNumber::read")]
    debit: Option<N>,
    #[serde(deserialize_with = "JsonNumber::read")]
    credit: Option<N>,
}

/// The transactions of the model, from those the payload spells.
fn kept<N: Kept>(transactions: Vec<WireTransaction<N>>) -> Vec<AttributeTransaction> {
    transactions
        .into_iter()
        .map(|wire| AttributeTransaction {
            transaction_id: wire.transaction_id,
            account_id: wire.account_id,
            date: wire.date,
            description: wire.description,
            debit: wire.debit.map(Kept::kept),
            credit: wire.credit.map(Kept::kept),
        })
        .collect()
}

/// The detail entries of the model, from those the payload spells.
fn kept_details<N: Kept>(details: Vec<WireDetail<N>>) -> Vec<AttributeDetail> {
    details
        .into_iter()
        .map(|wire| AttributeDetail { attribute: wire.attribute, transactions: kept(wire.transactions) })
        .collect()
}

/// The members of a JSON object of the payload, each as the slice of the payload that holds it,
/// in order; a key sent twice keeps its first place and its last value, as the `Value` the
/// payload's structure is read from keeps it. What `money="decimal"` reads the detail's amounts
/// from: a `Value` has read every number through a float already.
#[derive(Default)]
struct RawMembers<'a>(Vec<(String, &'a RawValue)>);

impl<'a> RawMembers<'a> {
    /// The members of `raw`; none when it is not an object.
    fn of(raw: Option<&'a RawValue>) -> Self {
        raw.and_then(|raw| serde_json::from_str(raw.get()).ok()).unwrap_or_default()
    }

    fn get(&self, key: &str) -> Option<&'a RawValue> {
        self.0.iter().find(|(name, _)| name == key).map(|(_, value)| *value)
    }
}

impl<'de> Deserialize<'de> for RawMembers<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Members;
        impl<'de> Visitor<'de> for Members {
            type Value = RawMembers<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut members: Vec<(String, &'de RawValue)> = Vec::new();
                let mut places: HashMap<String, usize> = HashMap::new();
                while let Some((key, value)) = map.next_entry::<String, &'de RawValue>()? {
                    if let Some(member) = places.get(&key).and_then(|&place| members.get_mut(place)) {
                        member.1 = value;
                    } else {
                        places.insert(key.clone(), members.len());
                        members.push((key, value));
                    }
                }
                Ok(RawMembers(members))
            }
        }
        deserializer.deserialize_map(Members)
    }
}

/// Where a detail list is read from: its `Value`, and, with `money="decimal"`, the slice of the
/// payload that holds it, whose numbers keep their digits.
struct DetailSource<'a> {
    value: Value,
    raw: Option<&'a RawValue>,
}

impl DetailSource<'_> {
    /// The transactions it lists (none when it is no list of transactions).
    fn transactions(self, money: MoneyType) -> Vec<AttributeTransaction> {
        match (money, self.raw) {
            (MoneyType::Decimal, Some(raw)) => {
                serde_json::from_str::<Vec<WireTransaction<Written>>>(raw.get()).map(kept).unwrap_or_default()
            }
            _ => serde_json::from_value::<Vec<WireTransaction<f64>>>(self.value).map(kept).unwrap_or_default(),
        }
    }

    /// A detail list: `[{"Attribute", "Transactions"}]`, or `{attribute: [transactions]}`.
    fn details(self, money: MoneyType) -> Vec<AttributeDetail> {
        let members = RawMembers::of(self.raw);
        match self.value {
            Value::Object(map) => map
                .into_iter()
                .map(|(attribute, transactions)| {
                    let raw = members.get(&attribute);
                    let transactions = DetailSource { value: transactions, raw }.transactions(money);
                    AttributeDetail { attribute: Some(attribute), transactions }
                })
                .collect(),
            other => match (money, self.raw) {
                (MoneyType::Decimal, Some(raw)) => {
                    serde_json::from_str::<Vec<WireDetail<Written>>>(raw.get()).map(kept_details).unwrap_or_default()
                }
                _ => serde_json::from_value::<Vec<WireDetail<f64>>>(other).map(kept_details).unwrap_or_default(),
            },
        }
    }
}

/// Top-level keys that are not attribute groups: those of the answer's envelope, which every
/// payload may carry (its status, its login and institution), and which `unknown` knows too.
pub(crate) const NOT_GROUPS: [&str; 11] = [
    "Login",
    "RequestId",
    "HttpStatusCode",
    "Links",
    "Institution",
    "InstitutionName",
    "InstitutionId",
    "Message",
    "FlinksCode",
    "ServiceCode",
    "Tag",
];

/// The detail list is spelled three ways in different places, and sits in its group or beside
/// the groups (docs/protocol.md#attributes).
const DETAIL_KEYS: [&str; 3] = ["AttributesDetail", "AttributesDetails", "AttributeDetails"];

/// What makes a 200 an attributes payload (docs/errors.md#protocol-surprises).
const SHAPE: Shape = Shape::Attributes { not_groups: &NOT_GROUPS };

impl Attributes {
    /// Reads an attributes answer, such as a saved one (see `Attributes::read`).
    pub fn parse(bytes: &[u8]) -> Result<Self, Error> {
        Self::read("Attributes", bytes)
    }

    /// [`Attributes::read_with_money`] with the detail's amounts as floats.
    pub(crate) fn read(operation: &str, bytes: &[u8]) -> Result<Self, Error> {
        Self::read_with_money(operation, bytes, MoneyType::Float)
    }

    /// Reads the 200 of the attributes operation `operation`: groups are its keys, so it is read
    /// from a JSON object rather than derived. A body that is not JSON is a decode error; one
    /// whose envelope says error is that error; one that is not an object, or holds no group,
    /// `Login` or `RequestId`, is a protocol surprise. Each keeps the start of the body. With
    /// `money="decimal"` the detail's amounts keep the digits the payload wrote.
    pub(crate) fn read_with_money(operation: &str, bytes: &[u8], money: MoneyType) -> Result<Self, Error> {
        let body: Value = serde_json::from_slice(bytes)
            .map_err(|e| super::json::decode_error(operation, 200, bytes, e.to_string()))?;
        check_payload_value(operation, 200, bytes, &body, SHAPE)?;
        let Value::Object(object) = body else {
            return Err(Error::protocol(operation, 200, "expected a JSON object", bytes));
        };
        let mut attributes = Attributes { money, ..Attributes::default() };
        // The payload's own slices, where the decimal amounts are read from (`RawMembers`).
        let members = match money {
            MoneyType::Decimal => serde_json::from_slice::<RawMembers>(bytes).unwrap_or_default(),
            MoneyType::Float => RawMembers::default(),
        };
        let mut loose_detail = Vec::new();
        for (key, value) in object {
            let raw = members.get(&key);
            if key.eq_ignore_ascii_case("Login") {
                attributes.login = serde_json::from_value(value).ok();
            } else if key.eq_ignore_ascii_case("RequestId") {
                attributes.request_id = value.as_str().map(str::to_owned);
            } else if is_detail_key(&key) {
                loose_detail.push(DetailSource { value, raw });
            } else if let (false, Value::Object(group)) =
                (NOT_GROUPS.iter().any(|n| n.eq_ignore_ascii_case(&key)), value)
            {
                attributes.groups.push(AttributeGroup::parse(key, group, raw, money));
            }
        }
        for source in loose_detail {
            attributes.attach_top_level_detail(source);
        }
        Ok(attributes)
    }

    /// A detail list beside the groups rather than in one, as the service's response tables show
    /// it (docs/protocol.md#attributes): keyed by group, keyed by attribute, or a bare list. Each
    /// entry joins the group it names, or the group holding its attribute, or the first group.
    fn attach_top_level_detail(&mut self, source: DetailSource<'_>) {
        let money = self.money;
        let by_group =
            |groups: &[AttributeGroup], name: &str| groups.iter().position(|g| g.name.eq_ignore_ascii_case(name));
        let holding = |groups: &[AttributeGroup], attribute: &str| {
            groups.iter().position(|g| g.values.iter().any(|(name, _)| name == attribute))
        };
        let mut placed: Vec<(Option<usize>, AttributeDetail)> = Vec::new();
        match source.value {
            Value::Object(map) => {
                let members = RawMembers::of(source.raw);
                for (key, value) in map {
                    let entry = DetailSource { value, raw: members.get(&key) };
                    if let Some(index) = by_group(&self.groups, &key) {
                        placed.extend(entry.details(money).into_iter().map(|detail| (Some(index), detail)));
                    } else {
                        let transactions = entry.transactions(money);
                        let index = holding(&self.groups, &key);
                        placed.push((index, AttributeDetail { attribute: Some(key), transactions }));
                    }
                }
            }
            other => {
                for detail in (DetailSource { value: other, raw: source.raw }).details(money) {
                    let index = detail.attribute.as_deref().and_then(|name| holding(&self.groups, name));
                    placed.push((index, detail));
                }
            }
        }
        for (index, detail) in placed {
            if self.groups.is_empty() {
                // Detail with no group to join: keep it under the use-case group's name.
                self.groups.push(AttributeGroup { name: "Card".to_owned(), ..AttributeGroup::default() });
            }
            let index = index.unwrap_or(0);
            if let Some(group) = self.groups.get_mut(index) {
                group.detail.push(detail);
            }
        }
    }
}

fn is_detail_key(key: &str) -> bool {
    DETAIL_KEYS.iter().any(|k| k.eq_ignore_ascii_case(key))
}

impl AttributeGroup {
    /// The group `name`, read from its `object`; `raw`, its slice of the payload, with
    /// `money="decimal"`.
    fn parse(name: String, object: Map<String, Value>, raw: Option<&RawValue>, money: MoneyType) -> Self {
        let mut group = AttributeGroup { name, ..AttributeGroup::default() };
        let members = RawMembers::of(raw);
        for (key, value) in object {
            if key.eq_ignore_ascii_case("Id") {
                group.id = value.as_str().map(str::to_owned);
            } else if is_detail_key(&key) {
                let raw = members.get(&key);
                group.detail.extend(DetailSource { value, raw }.details(money));
            } else {
                group.values.push((key, value));
            }
        }
        group
    }
}

/// A value as a float: numbers as they are, numeric strings parsed, anything else
/// (`NONE_DETECTED`) missing. Missing rather than NaN, so that a table holds a null there: Arrow
/// and polars count a null as missing and leave it out of a mean, while a NaN is a value that
/// poisons it (pandas shows either as NaN). A string that parses to no finite number (`"NaN"`,
/// `"inf"`) is no measurement either.
pub fn value_as_f64(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok().filter(|v: &f64| v.is_finite()),
        _ => None,
    }
}

/// A value as text: strings as they are, anything else as its JSON.
pub fn value_as_text(value: &Value) -> Option<String> {
    match value {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_values_and_all_three_detail_spellings_parse() {
        let body = json!({
            "Card": {"Id": "g1", "balance_min": -12.5, "count_nsf": 2, "sum_government_income": "NONE_DETECTED",
                     "AttributesDetail": [{"Attribute": "count_nsf", "Transactions": [
                        {"TransactionId": "t1", "AccountId": "a1", "Date": "2026/10/01", "Description": "NSF FEE", "Debit": 48.0, "Credit": null}]}]},
            "Other": {"Id": "g2", "count_nsf": 1, "AttributeDetails": [{"Attribute": "count_nsf", "Transactions": []}]},
            "Third": {"AttributesDetails": [{"Attribute": "x", "Transactions": null}]},
            "Login": {"Id": "l"}, "RequestId": "r", "HttpStatusCode": 200});
        let parsed = Attributes::parse(&serde_json::to_vec(&body).unwrap()).unwrap();
        let names: Vec<&str> = parsed.groups.iter().map(|g| g.name.as_str()).collect();
        assert_eq!(names, ["Card", "Other", "Third"]);
        let card = &parsed.groups[0];
        assert_eq!(
            card.values.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(),
            ["balance_min", "count_nsf", "sum_government_income"]
        );
        assert_eq!(card.detail[0].transactions[0].debit, Some(DetailAmount::Float(48.0)));
        assert_eq!(parsed.groups[1].detail.len(), 1);
        assert_eq!(parsed.groups[2].detail[0].attribute.as_deref(), Some("x"));
        assert_eq!(parsed.request_id.as_deref(), Some("r"));
        assert_eq!(value_as_f64(&json!("NONE_DETECTED")), None);
        assert_eq!(value_as_f64(&json!("3.5")), Some(3.5));
        assert_eq!(value_as_f64(&json!(-2)), Some(-2.0));
        for missing in [json!(null), json!("NaN"), json!("inf"), json!(true), json!([1])] {
            assert_eq!(value_as_f64(&missing), None, "{missing}");
        }
        assert_eq!(value_as_text(&json!(2)).as_deref(), Some("2"));
    }

    #[test]
    fn detail_beside_the_groups_joins_the_group_it_belongs_to() {
        let tx =
            json!({"TransactionId": "t1", "AccountId": "a1", "Date": "2026/10/01", "Debit": 48.0, "Balance": 10.0});
        let by_attribute = json!({"Card": {"Id": "l", "count_nsf": 1}, "AttributeDetails": {"count_nsf": [tx]},
                                  "Login": {"Id": "l"}, "RequestId": "r"});
        let by_group = json!({"Card": {"Id": "l", "count_nsf": 1},
                              "AttributesDetail": {"Card": [{"Attribute": "count_nsf", "Transactions": [tx]}]},
                              "Login": {"Id": "l"}, "RequestId": "r"});
        let bare = json!({"Card": {"Id": "l", "count_nsf": 1},
                          "AttributesDetails": [{"Attribute": "count_nsf", "Transactions": [tx]}],
                          "Login": {"Id": "l"}, "RequestId": "r"});
        let in_group_by_attribute = json!({"Card": {"Id": "l", "count_nsf": 1, "AttributeDetails": {"count_nsf": [tx]}},
                                           "Login": {"Id": "l"}, "RequestId": "r"});
        for body in [by_attribute, by_group, bare, in_group_by_attribute] {
            let parsed = Attributes::parse(&serde_json::to_vec(&body).unwrap()).unwrap();
            assert_eq!(parsed.groups.len(), 1, "{body}: the detail is no group");
            let card = &parsed.groups[0];
            assert_eq!(card.values.len(), 1, "{body}");
            assert_eq!(card.detail.len(), 1, "{body}");
            assert_eq!(card.detail[0].attribute.as_deref(), Some("count_nsf"));
            assert_eq!(card.detail[0].transactions[0].debit, Some(DetailAmount::Float(48.0)));
        }
    }

    #[test]
    fn decimal_amounts_keep_the_digits_the_payload_wrote_in_every_spelling() {
        // Digits no float holds: 0.1 + 0.2 in floats is 0.30000000000000004; these are read as written.
        let tx = r#"{"TransactionId": "t1", "Date": "2026/10/01", "Debit": 0.1, "Credit": "1234567890123.4567"}"#;
        let bodies = [
            format!(
                r#"{{"Card": {{"Id": "g", "count_nsf": 1, "AttributesDetail": [{{"Attribute": "count_nsf", "Transactions": [{tx}]}}]}}, "Login": {{"Id": "l"}}}}"#
            ),
            format!(
                r#"{{"Card": {{"Id": "g", "count_nsf": 1, "AttributeDetails": {{"count_nsf": [{tx}]}}}}, "Login": {{"Id": "l"}}}}"#
            ),
            format!(
                r#"{{"Card": {{"Id": "g", "count_nsf": 1}}, "AttributeDetails": {{"count_nsf": [{tx}]}}, "Login": {{"Id": "l"}}}}"#
            ),
            format!(
                r#"{{"Card": {{"Id": "g", "count_nsf": 1}}, "AttributesDetail": {{"Card": [{{"Attribute": "count_nsf", "Transactions": [{tx}]}}]}}, "Login": {{"Id": "l"}}}}"#
            ),
            format!(
                r#"{{"Card": {{"Id": "g", "count_nsf": 1}}, "AttributesDetails": [{{"Attribute": "count_nsf", "Transactions": [{tx}]}}], "Login": {{"Id": "l"}}}}"#
            ),
        ];
        for body in &bodies {
            let parsed =
                Attributes::read_with_money("GetIncomeAttributes", body.as_bytes(), MoneyType::Decimal).unwrap();
            let transaction = &parsed.groups[0].detail[0].transactions[0];
            assert_eq!(transaction.debit, Some(DetailAmount::Written("0.1".to_owned())), "{body}");
            assert_eq!(transaction.credit, Some(DetailAmount::Written("1234567890123.4567".to_owned())), "{body}");
            assert_eq!(transaction.transaction_id.as_deref(), Some("t1"));
            // The same payload read with floats: the same rows, the amounts as floats.
            let floats = Attributes::read("GetIncomeAttributes", body.as_bytes()).unwrap();
            assert_eq!(floats.groups[0].detail[0].transactions[0].debit, Some(DetailAmount::Float(0.1)));
        }
        // A key sent twice: its last value, as the float reading takes it.
        let twice = format!(
            r#"{{"Card": {{"Id": "g", "AttributesDetail": [], "AttributesDetail": [{{"Attribute": "x", "Transactions": [{tx}]}}]}}}}"#
        );
        let parsed = Attributes::read_with_money("GetIncomeAttributes", twice.as_bytes(), MoneyType::Decimal).unwrap();
        assert_eq!(parsed.groups[0].detail[0].transactions[0].debit, Some(DetailAmount::Written("0.1".to_owned())));
    }

    #[test]
    fn an_answer_that_is_not_an_attributes_payload_is_not_an_empty_result() {
        for body in [&b"{}"[..], b"[]", b"null", br#"{"FlinksCode": "OPERATION_PENDING", "RequestId": "r"}"#] {
            match Attributes::read("GetIncomeAttributes", body) {
                Err(Error::Protocol { operation, status, .. }) => {
                    assert_eq!((operation.as_str(), status), ("GetIncomeAttributes", 200));
                }
                other => panic!("{body:?}: {other:?}"),
            }
        }
        let envelope = br#"{"HttpStatusCode": 500, "FlinksCode": "AGGREGATION_ERROR", "RequestId": "r"}"#;
        assert!(matches!(Attributes::parse(envelope), Err(Error::Api(api)) if api.status == 500));
        assert!(matches!(Attributes::parse(b"<html>"), Err(Error::Decode { .. })));
        assert!(Attributes::parse(br#"{"Login": {"Id": "l"}, "RequestId": "r"}"#).unwrap().groups.is_empty());
    }

    #[test]
    fn packages_parse_by_short_or_operation_name() {
        assert_eq!(Package::parse("income").unwrap(), Package::Income);
        assert_eq!(Package::parse("Credit-Risk").unwrap(), Package::CreditRisk);
        assert_eq!(Package::parse("GetLendingAttributes").unwrap().operation(), "GetLendingAttributes");
        assert!(matches!(Package::parse("gold"), Err(Error::Config { field: "package", .. })));
    }

    #[test]
    fn an_unknown_package_is_echoed_with_every_package_named() {
        let Err(Error::Config { rule, .. }) = Package::parse("gold\n") else { panic!("gold is no package") };
        for (_, short) in Package::ALL {
            assert!(rule.contains(&format!("{short:?}")), "{short}: {rule}");
        }
        assert!(rule.ends_with(r#"or "all_business", got "gold\n""#), "{rule}");
    }

    #[test]
    fn the_custom_body_keeps_names_verbatim() {
        let custom = CustomAttributes {
            attributes: vec![("Card".into(), vec!["balance_min".into(), "count_nsf".into()])],
            filters: Some(json!({"AccountCategory": ["Operations"]})),
            detail: vec!["count_nsf".into()],
            account_filter: vec![],
        };
        custom.validate().unwrap();
        assert_eq!(
            custom.body(),
            json!({"MostRecentCached": true, "Attributes": {"Card": ["balance_min", "count_nsf"]},
                   "Filters": {"AccountCategory": ["Operations"]}, "Options": {"AttributesDetail": ["count_nsf"]}})
        );
        let empty = CustomAttributes { attributes: vec![("Card".into(), vec![])], ..CustomAttributes::default() };
        assert!(matches!(empty.validate(), Err(Error::Config { field: "attributes", .. })));
    }
}

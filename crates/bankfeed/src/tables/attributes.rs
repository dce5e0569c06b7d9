//! Attributes as tables: one row per group and attribute, and one per detail transaction.

use super::{build_plain, Read, Table};
use crate::data::attributes::{value_as_f64, value_as_text, AttributeGroup, AttributeTransaction, Attributes};

struct ValueRow<'a> {
    group: &'a AttributeGroup,
    login_id: Option<&'a str>,
    name: &'a str,
    value: Option<f64>,
    raw: Option<String>,
}

/// `value` is a float, null where the service says `NONE_DETECTED` (pandas shows it as NaN);
/// `raw_value` keeps what it sent.
pub fn attribute_values_table(attributes: &Attributes) -> Table {
    let login_id = attributes.login.as_ref().and_then(|l| l.id.as_deref());
    let rows: Vec<ValueRow> = attributes
        .groups
        .iter()
        .flat_map(|group| {
            group.values.iter().map(move |(name, value)| ValueRow {
                group,
                login_id,
                name,
                value: value_as_f64(value),
                raw: value_as_text(value),
            })
        })
        .collect();
    build_plain(
        &rows,
        &[
            ("group", Read::Text(|r| Some(r.group.name.as_str()))),
            ("group_id", Read::Text(|r| r.group.id.as_deref())),
            ("login_id", Read::Text(|r| r.login_id)),
            ("attribute", Read::Text(|r| Some(r.name))),
            ("value", Read::Float(|r| r.value)),
            ("raw_value", Read::Text(|r| r.raw.as_deref())),
        ],
    )
}

struct DetailRow<'a> {
    group: &'a str,
    attribute: Option<&'a str>,
    transaction: &'a AttributeTransaction,
}

pub fn attribute_detail_table(attributes: &Attributes) -> Table {
    let rows: Vec<DetailRow> = attributes
        .groups
        .iter()
        .flat_map(|group| {
            group.detail.iter().flat_map(move |detail| {
                detail.transactions.iter().map(move |transaction| DetailRow {
                    group: &group.name,
                    attribute: detail.attribute.as_deref(),
                    transaction,
                })
            })
        })
        .collect();
    build_plain(
        &rows,
        &[
            ("group", Read::Text(|r| Some(r.group))),
            ("attribute", Read::Text(|r| r.attribute)),
            ("transaction_id", Read::Text(|r| r.transaction.transaction_id.as_deref())),
            ("account_id", Read::Text(|r| r.transaction.account_id.as_deref())),
            ("date", Read::Date(|r| r.transaction.date.as_deref())),
            ("description", Read::Text(|r| r.transaction.description.as_deref())),
            ("debit", Read::Float(|r| r.transaction.debit)),
            ("credit", Read::Float(|r| r.transaction.credit)),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tables::ColumnData;
    use arrow_array::Array;
    use serde_json::json;

    #[test]
    fn none_detected_is_null_and_kept_raw() {
        let body = json!({"Card": {"Id": "g", "count_nsf": 2, "sum_government_income": "NONE_DETECTED",
            "AttributesDetail": [{"Attribute": "count_nsf", "Transactions": [
                {"TransactionId": "t", "AccountId": "a", "Date": "2026/11/01", "Description": "NSF FEE", "Debit": 48.0, "Credit": null}]}]},
            "Login": {"Id": "l"}});
        let attributes = Attributes::parse(&serde_json::to_vec(&body).unwrap()).unwrap();
        let values = attribute_values_table(&attributes);
        assert_eq!(values.rows, 2);
        match values.column("value") {
            Some(ColumnData::Float(v)) => {
                assert!((v.value(0) - 2.0).abs() < f64::EPSILON);
                // A null, not a NaN: Arrow and polars count it as missing.
                assert!(v.is_null(1) && v.is_valid(0));
                assert_eq!(v.null_count(), 1);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(values.column("raw_value"), Some(&ColumnData::Text(vec![Some("2"), Some("NONE_DETECTED")].into())));
        assert_eq!(values.column("login_id"), Some(&ColumnData::Text(vec![Some("l"), Some("l")].into())));
        let detail = attribute_detail_table(&attributes);
        assert_eq!(detail.rows, 1);
        assert_eq!(
            detail.column("date"),
            Some(&ColumnData::Date(vec![crate::data::dates::parse_date("2026-11-01")].into()))
        );
    }
}

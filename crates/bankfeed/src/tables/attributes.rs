//! Attributes as tables: one row per group and attribute, and one per detail transaction.

use super::money::{Cell, Unfit};
use super::{build, build_plain, Read, Table};
use crate::data::attributes::{
    value_as_f64, value_as_text, AttributeGroup, AttributeTransaction, Attributes, DetailAmount,
};
use crate::data::money::{MoneyType, AMOUNT};

struct ValueRow<'a> {
    group: &'a AttributeGroup,
    login_id: Option<&'a str>,
    name: &'a str,
    value: Option<f64>,
    raw: Option<String>,
}

/// `value` is a float, null where the service says `NONE_DETECTED` (pandas shows it as NaN);
/// `raw_value` keeps what it sent. Not a money column whatever the money type: the values are
/// counts, ratios, days and amounts alike (docs/tables.md#money), and `raw_value` has their digits.
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

/// The amount of a detail transaction as a cell of its money column.
fn amount(value: Option<&DetailAmount>) -> Option<Cell<'_>> {
    value.map(|amount| match amount {
        DetailAmount::Float(value) => Cell::Float(*value),
        DetailAmount::Written(text) => Cell::Written(text),
    })
}

/// One row per detail transaction; `debit` and `credit` are money, `decimal128(18, 4)` when the
/// payload was read with `money="decimal"` (docs/tables.md#money): an amount that does not fit
/// is then the error of the payload of `operation`, naming it and the column.
pub fn attribute_detail_table(operation: &str, attributes: &Attributes) -> Result<Table, crate::Error> {
    let size = match attributes.money {
        MoneyType::Decimal => Some(AMOUNT),
        MoneyType::Float => None,
    };
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
    let table = build(
        &rows,
        &[
            ("group", Read::Text(|r| Some(r.group))),
            ("attribute", Read::Text(|r| r.attribute)),
            ("transaction_id", Read::Text(|r| r.transaction.transaction_id.as_deref())),
            ("account_id", Read::Text(|r| r.transaction.account_id.as_deref())),
            ("date", Read::Date(|r| r.transaction.date.as_deref())),
            ("description", Read::Text(|r| r.transaction.description.as_deref())),
            ("debit", Read::Money(size, |r| amount(r.transaction.debit.as_ref()))),
            ("credit", Read::Money(size, |r| amount(r.transaction.credit.as_ref()))),
        ],
    );
    table.map_err(|unfit: Unfit| super::unfit_error(operation, "detail", &unfit))
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
        let detail = attribute_detail_table("Attributes", &attributes).unwrap();
        assert_eq!(detail.rows, 1);
        assert_eq!(
            detail.column("date"),
            Some(&ColumnData::Date(vec![crate::data::dates::parse_date("2026-11-01")].into()))
        );
    }

    #[test]
    fn decimal_detail_amounts_are_exact_and_one_that_does_not_fit_is_refused() {
        let body =
            br#"{"Card": {"Id": "g", "count_nsf": 2, "AttributesDetail": [{"Attribute": "count_nsf", "Transactions": [
            {"TransactionId": "t1", "Date": "2026/11/01", "Debit": 0.1, "Credit": null},
            {"TransactionId": "t2", "Date": "2026/11/02", "Debit": 0.2, "Credit": 99999999999999.9999}]}]},
            "Login": {"Id": "l"}}"#;
        let decimal = Attributes::read_with_money("GetIncomeAttributes", body, MoneyType::Decimal).unwrap();
        let detail = attribute_detail_table("GetIncomeAttributes", &decimal).unwrap();
        match (detail.column("debit"), detail.column("credit")) {
            (Some(ColumnData::Decimal(debit)), Some(ColumnData::Decimal(credit))) => {
                assert_eq!((debit.precision(), debit.scale()), (18, 4));
                // 0.1 + 0.2 is 0.3 exactly: 1000 + 2000 ten-thousandths.
                assert_eq!(debit.values().iter().sum::<i128>(), 3000);
                assert!(credit.is_null(0));
                assert_eq!(credit.value_as_string(1), "99999999999999.9999");
            }
            other => panic!("{other:?}"),
        }
        // The same payload with floats: float64, as before.
        let floats = attribute_detail_table("Attributes", &Attributes::parse(body).unwrap()).unwrap();
        assert!(matches!(floats.column("debit"), Some(ColumnData::Float(_))));
        let unfit = br#"{"Card": {"Id": "g", "AttributesDetail": [{"Attribute": "x", "Transactions": [
            {"TransactionId": "t1", "Debit": 1.00001}]}]}, "Login": {"Id": "l"}}"#;
        let read = Attributes::read_with_money("GetIncomeAttributes", unfit, MoneyType::Decimal).unwrap();
        match attribute_detail_table("GetIncomeAttributes", &read) {
            Err(crate::Error::Decode { operation, message, .. }) => {
                assert_eq!(operation, "GetIncomeAttributes");
                assert!(message.starts_with("detail.debit: 1.00001 has more than 4 decimal places"), "{message}");
            }
            other => panic!("{other:?}"),
        }
    }
}

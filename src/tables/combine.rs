//! Several logins' tables of one kind as one table, with the LoginId of each row in a first
//! `login_id` column (what `bf.combine` gives for the results of a bulk call).

use arrow_array::builder::{
    BooleanBuilder, Date32Builder, Float64Builder, ListBuilder, StringBuilder, TimestampMicrosecondBuilder,
};
use arrow_array::cast::AsArray;
use arrow_array::Array;

use super::{Column, ColumnData, Table};
use crate::error::Error;

/// The name of the column [`combine`] puts first.
pub const LOGIN_ID: &str = "login_id";

/// One table holding the rows of every `(login_id, table)` of `parts`, in order, with `login_id`
/// as its first column.
///
/// - The columns are the union of the parts' columns, in the order they are first seen; a part
///   without a column has nulls there (tables of one kind have the same columns, but, say, the
///   attribute tables of two different queries need not).
/// - A part's own `login_id` column (the attributes' values table has one) is left out: the
///   LoginId given with the part fills the first column of its rows.
/// - No parts: a table with the `login_id` column only and no rows.
///
/// Fails with [`Error::Config`] (field `tables`) when two parts have a column of the same name
/// but of different types, or a part's column is not as long as its table.
pub fn combine(parts: &[(&str, &Table)]) -> Result<Table, Error> {
    let mut shape: Vec<(&'static str, &ColumnData)> = Vec::new();
    for (login_id, table) in parts {
        for column in &table.columns {
            if column.data.len() != table.rows {
                return Err(Error::config(
                    "tables",
                    format!(
                        "of {login_id:?}: column {:?} has {} values for {} rows",
                        column.name,
                        column.data.len(),
                        table.rows
                    ),
                ));
            }
            if column.name == LOGIN_ID {
                continue;
            }
            match shape.iter().find(|(name, _)| *name == column.name) {
                Some((_, first)) if first.array().data_type() != column.data.array().data_type() => {
                    return Err(Error::config(
                        "tables",
                        format!(
                            "column {:?} is {} in one table and {} in the one of {login_id:?}",
                            column.name,
                            first.array().data_type(),
                            column.data.array().data_type()
                        ),
                    ))
                }
                Some(_) => {}
                None => shape.push((column.name, &column.data)),
            }
        }
    }
    let rows = parts.iter().map(|(_, table)| table.rows).sum();
    let mut columns = Vec::with_capacity(shape.len() + 1);
    columns.push(Column { name: LOGIN_ID, data: login_ids(parts, rows) });
    for (name, first) in shape {
        let pieces: Vec<(usize, Option<&ColumnData>)> =
            parts.iter().map(|(_, table)| (table.rows, table.column(name))).collect();
        columns.push(Column { name, data: concat(first, &pieces, rows) });
    }
    Ok(Table { columns, rows })
}

fn login_ids(parts: &[(&str, &Table)], rows: usize) -> ColumnData {
    let bytes = parts.iter().map(|(login_id, table)| login_id.len() * table.rows).sum();
    let mut b = StringBuilder::with_capacity(rows, bytes);
    for (login_id, table) in parts {
        (0..table.rows).for_each(|_| b.append_value(login_id));
    }
    ColumnData::Text(b.finish())
}

/// The pieces (a part's row count and its column, if it has one) one after the other; `first` is
/// the first piece that has the column, which gives the variant and its Arrow type.
fn concat(first: &ColumnData, pieces: &[(usize, Option<&ColumnData>)], rows: usize) -> ColumnData {
    // Every piece of a column has the variant of `first`: combine checked their Arrow types.
    macro_rules! each {
        ($b:ident, $variant:ident, |$a:ident| $append:expr) => {
            for (n, piece) in pieces {
                match piece {
                    Some(ColumnData::$variant($a)) => $append,
                    _ => (0..*n).for_each(|_| $b.append_null()),
                }
            }
        };
    }
    match first {
        ColumnData::Float(_) => {
            let mut b = Float64Builder::with_capacity(rows);
            each!(b, Float, |a| b.extend(a.iter()));
            ColumnData::Float(b.finish())
        }
        ColumnData::Bool(_) => {
            let mut b = BooleanBuilder::with_capacity(rows);
            each!(b, Bool, |a| b.extend(a.iter()));
            ColumnData::Bool(b.finish())
        }
        ColumnData::Text(_) => {
            let bytes = pieces
                .iter()
                .map(|(_, piece)| match piece {
                    Some(ColumnData::Text(a)) => a.value_data().len(),
                    _ => 0,
                })
                .sum();
            let mut b = StringBuilder::with_capacity(rows, bytes);
            each!(b, Text, |a| b.extend(a.iter()));
            ColumnData::Text(b.finish())
        }
        ColumnData::Date(_) => {
            let mut b = Date32Builder::with_capacity(rows);
            each!(b, Date, |a| b.extend(a.iter()));
            ColumnData::Date(b.finish())
        }
        ColumnData::Timestamp(first) => {
            // The zone of the parts (UTC for every table the core builds) is kept.
            let mut b = TimestampMicrosecondBuilder::with_capacity(rows).with_data_type(first.data_type().clone());
            each!(b, Timestamp, |a| b.extend(a.iter()));
            ColumnData::Timestamp(b.finish())
        }
        ColumnData::TextList(_) => {
            let mut b = ListBuilder::with_capacity(StringBuilder::new(), rows);
            each!(b, TextList, |a| {
                for row in 0..a.len() {
                    if a.is_null(row) {
                        b.append_null();
                    } else {
                        let items = a.value(row);
                        b.values().extend(items.as_string::<i32>().iter());
                        b.append(true);
                    }
                }
            });
            ColumnData::TextList(b.finish())
        }
    }
}

#[cfg(test)]
mod tests {
    use arrow_array::{Float64Array, StringArray};

    use super::*;
    use crate::tables::arrow::tests::{sample, Row};

    fn rows(n: usize, tag: &'static str) -> Vec<Row> {
        (0..n)
            .map(|i| Row {
                x: if i % 2 == 0 { Some(i as f64) } else { None },
                s: Some(tag),
                d: Some("2024-02-29"),
                t: if i == 0 { None } else { Some("2024-01-01T00:00:01Z") },
                l: vec![tag, "z"],
                b: Some(i == 1),
            })
            .collect()
    }

    fn text(table: &Table, name: &str) -> Vec<Option<String>> {
        match table.column(name).unwrap() {
            ColumnData::Text(a) => a.iter().map(|v| v.map(str::to_owned)).collect(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn rows_follow_each_other_with_their_login_id_first() {
        let a = sample(&rows(2, "a"));
        let b = sample(&rows(3, "b"));
        let combined = combine(&[("L1", &a), ("L2", &b)]).unwrap();
        assert_eq!(combined.rows, 5);
        assert_eq!(combined.names(), ["login_id", "x", "s", "d", "t", "l", "b"]);
        assert_eq!(text(&combined, "login_id"), ["L1", "L1", "L2", "L2", "L2"].map(|s| Some(s.to_owned())));
        assert_eq!(text(&combined, "s"), ["a", "a", "b", "b", "b"].map(|s| Some(s.to_owned())));
        // Every other variant keeps its values and its nulls: each column of the result is the
        // parts' columns one after the other.
        for name in ["x", "d", "t", "l", "b"] {
            let column = combined.column(name).unwrap().array();
            let (first, second) = (a.column(name).unwrap().array(), b.column(name).unwrap().array());
            assert_eq!(column.data_type(), first.data_type(), "{name}");
            assert_eq!(column.slice(0, 2).to_data(), first.to_data(), "{name}");
            assert_eq!(column.slice(2, 3).to_data(), second.to_data(), "{name}");
        }
        assert_eq!(combined.to_record_batch().unwrap().num_rows(), 5);
    }

    #[test]
    fn an_empty_part_adds_no_rows_and_no_parts_give_the_login_id_column_only() {
        let a = sample(&rows(2, "a"));
        let empty = sample(&[]);
        let combined = combine(&[("E", &empty), ("L1", &a), ("E2", &empty)]).unwrap();
        assert_eq!(combined.rows, 2);
        assert_eq!(text(&combined, "login_id"), [Some("L1".to_owned()), Some("L1".to_owned())]);
        assert_eq!(combined.names().len(), 7);
        let nothing = combine(&[]).unwrap();
        assert_eq!((nothing.rows, nothing.names()), (0, vec!["login_id"]));
        assert_eq!(nothing.to_record_batch().unwrap().num_columns(), 1);
    }

    fn table(columns: Vec<(&'static str, ColumnData)>) -> Table {
        let rows = columns.first().map_or(0, |(_, data)| data.len());
        Table { columns: columns.into_iter().map(|(name, data)| Column { name, data }).collect(), rows }
    }

    fn floats(values: &[Option<f64>]) -> ColumnData {
        ColumnData::Float(Float64Array::from(values.to_vec()))
    }

    fn texts(values: &[Option<&str>]) -> ColumnData {
        ColumnData::Text(StringArray::from(values.to_vec()))
    }

    #[test]
    fn differing_columns_are_united_in_first_seen_order_with_nulls() {
        let a = table(vec![("k", texts(&[Some("a")])), ("x", floats(&[Some(1.0)]))]);
        let b = table(vec![("y", floats(&[Some(2.0), None])), ("k", texts(&[Some("b"), Some("c")]))]);
        let combined = combine(&[("L1", &a), ("L2", &b)]).unwrap();
        assert_eq!(combined.names(), ["login_id", "k", "x", "y"]);
        assert_eq!(combined.column("x"), Some(&floats(&[Some(1.0), None, None])));
        assert_eq!(combined.column("y"), Some(&floats(&[None, Some(2.0), None])));
        assert_eq!(combined.column("k"), Some(&texts(&[Some("a"), Some("b"), Some("c")])));
    }

    #[test]
    fn a_login_id_column_of_a_part_gives_way_to_the_given_one() {
        let a = table(vec![("login_id", texts(&[Some("inner"), None])), ("x", floats(&[Some(1.0), Some(2.0)]))]);
        let combined = combine(&[("outer", &a)]).unwrap();
        assert_eq!(combined.names(), ["login_id", "x"]);
        assert_eq!(combined.column("login_id"), Some(&texts(&[Some("outer"), Some("outer")])));
    }

    #[test]
    fn a_column_of_two_types_or_of_the_wrong_length_is_refused() {
        let a = table(vec![("x", floats(&[Some(1.0)]))]);
        let b = table(vec![("x", texts(&[Some("1")]))]);
        let error = combine(&[("L1", &a), ("L2", &b)]).unwrap_err();
        assert!(matches!(error, Error::Config { field: "tables", .. }), "{error:?}");
        assert!(error.to_string().contains("\"x\" is Float64 in one table and Utf8"), "{error}");
        let short = Table { rows: 2, ..a.clone() };
        let error = combine(&[("L1", &short)]).unwrap_err();
        assert!(error.to_string().contains("1 values for 2 rows"), "{error}");
    }
}

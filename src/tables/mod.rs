//! Flat tables built as columns from the typed payloads, ready for Arrow and pandas.
//!
//! Each table is declared as a list of columns, each a name and a function that reads one value
//! of a row; a column is filled in one pass over the rows.

mod accounts;
pub mod arrow;
mod attributes;
mod investments;

pub use accounts::{accounts_table, statements_table, bank_transactions_table};
pub use attributes::{attribute_detail_table, attribute_values_table};
pub use investments::{investment_accounts_table, positions_table, securities_table, investment_transactions_table};

use crate::data::dates::{parse_date, parse_timestamp};

/// The values of one column; every cell may be missing.
#[derive(Clone, Debug, PartialEq)]
pub enum ColumnData {
    Float(Vec<Option<f64>>),
    Bool(Vec<Option<bool>>),
    Text(Vec<Option<String>>),
    /// Days since 1970-01-01.
    Date(Vec<Option<i32>>),
    /// Microseconds since the epoch, UTC.
    Timestamp(Vec<Option<i64>>),
    TextList(Vec<Option<Vec<String>>>),
}

impl ColumnData {
    pub fn len(&self) -> usize {
        match self {
            ColumnData::Float(v) => v.len(),
            ColumnData::Bool(v) => v.len(),
            ColumnData::Text(v) => v.len(),
            ColumnData::Date(v) => v.len(),
            ColumnData::Timestamp(v) => v.len(),
            ColumnData::TextList(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    /// snake_case.
    pub name: &'static str,
    pub data: ColumnData,
}

/// A table: named columns of equal length.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    pub columns: Vec<Column>,
    pub rows: usize,
}

impl Table {
    pub fn column(&self, name: &str) -> Option<&ColumnData> {
        self.columns.iter().find(|c| c.name == name).map(|c| &c.data)
    }

    pub fn names(&self) -> Vec<&'static str> {
        self.columns.iter().map(|c| c.name).collect()
    }
}

/// How one column reads its value from a row.
pub(crate) enum Read<R> {
    Float(fn(&R) -> Option<f64>),
    Bool(fn(&R) -> Option<bool>),
    Text(fn(&R) -> Option<&str>),
    /// Parsed leniently from the text (both `YYYY-MM-DD` and `YYYY/MM/DD`).
    Date(fn(&R) -> Option<&str>),
    /// Parsed leniently from the text; a timestamp without a zone is UTC.
    Timestamp(fn(&R) -> Option<&str>),
    TextList(fn(&R) -> &[String]),
}

/// Builds a table from `rows`, one column per spec.
pub(crate) fn build<R>(rows: &[R], specs: &[(&'static str, Read<R>)]) -> Table {
    let columns = specs
        .iter()
        .map(|(name, read)| {
            let data = match read {
                Read::Float(f) => ColumnData::Float(rows.iter().map(f).collect()),
                Read::Bool(f) => ColumnData::Bool(rows.iter().map(f).collect()),
                Read::Text(f) => ColumnData::Text(rows.iter().map(|r| f(r).map(str::to_owned)).collect()),
                Read::Date(f) => ColumnData::Date(rows.iter().map(|r| f(r).and_then(parse_date)).collect()),
                Read::Timestamp(f) => ColumnData::Timestamp(rows.iter().map(|r| f(r).and_then(parse_timestamp)).collect()),
                Read::TextList(f) => ColumnData::TextList(rows.iter().map(|r| Some(f(r).to_vec())).collect()),
            };
            Column { name, data }
        })
        .collect();
    Table { columns, rows: rows.len() }
}

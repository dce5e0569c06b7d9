//! Flat tables built as columns from the typed payloads, ready for Arrow and pandas.
//!
//! Each table is declared as a list of columns, each a name and a function that reads one value
//! of a row; a column is filled in one pass over the rows.

mod accounts;
pub mod arrow;
mod attributes;
mod combine;
mod investments;
pub mod money;
mod results;
mod wire;

pub use accounts::{accounts_table, bank_transactions_table, statements_table, AccountsTables};
pub use attributes::{attribute_detail_table, attribute_values_table};
pub use combine::{CombinedSize, Combiner, FETCHED_AT, LOGIN_ID, REQUEST_ID};
pub use investments::{
    investment_accounts_table, investment_transactions_table, positions_table, securities_table, InvestmentsTables,
};
pub(crate) use results::check_accounts;
pub use results::{AccountsResult, AttributesResult, DataResult, InvestmentsResult, StatementsResult};

use std::sync::Arc;

use arrow_array::builder::{BooleanBuilder, Date32Builder, ListBuilder, StringBuilder, TimestampMicrosecondBuilder};
use arrow_array::{
    Array, BooleanArray, Date32Array, Decimal128Array, Float64Array, ListArray, StringArray, TimestampMicrosecondArray,
};
use arrow_buffer::{NullBuffer, OffsetBuffer};

use crate::data::dates::{parse_date, parse_timestamp};
use crate::data::money::DecimalSize;
use money::{Cell, Unfit};

/// The text of a model tables are built from: `String` (an owned model), or `Cow<str>`
/// borrowing from the payload's bytes (see [`InvestmentsTables::from_json`]).
pub trait Text: std::ops::Deref<Target = str> + Sync {}

impl<T: std::ops::Deref<Target = str> + Sync> Text for T {}

/// The values of one column, as Arrow arrays (so handing a table to pyarrow, polars or pandas
/// copies nothing); every cell may be missing.
#[derive(Clone, Debug, PartialEq)]
pub enum ColumnData {
    Float(Float64Array),
    /// Exact money (docs/tables.md#money).
    Decimal(Decimal128Array),
    Bool(BooleanArray),
    Text(StringArray),
    /// Days since 1970-01-01.
    Date(Date32Array),
    /// Microseconds since the epoch, UTC.
    Timestamp(TimestampMicrosecondArray),
    /// A list of strings per row.
    TextList(ListArray),
}

impl ColumnData {
    pub fn array(&self) -> &dyn Array {
        match self {
            ColumnData::Float(a) => a,
            ColumnData::Decimal(a) => a,
            ColumnData::Bool(a) => a,
            ColumnData::Text(a) => a,
            ColumnData::Date(a) => a,
            ColumnData::Timestamp(a) => a,
            ColumnData::TextList(a) => a,
        }
    }

    pub fn len(&self) -> usize {
        self.array().len()
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
    /// Money: `float64`, or `decimal128` of the size given (see [`money::Amount::decimal`]).
    Money(Option<DecimalSize>, fn(&R) -> Option<Cell<'_>>),
    Bool(fn(&R) -> Option<bool>),
    Text(fn(&R) -> Option<&str>),
    /// Parsed leniently from the text (both `YYYY-MM-DD` and `YYYY/MM/DD`).
    Date(fn(&R) -> Option<&str>),
    /// Parsed leniently from the text; a timestamp without a zone is UTC.
    Timestamp(fn(&R) -> Option<&str>),
    /// Every item of the list, in order.
    TextList(fn(&R) -> Vec<&str>),
}

/// The error of a payload of `operation` whose decimal money value does not fit `table`'s column:
/// the login's error, as a body that cannot be read is (docs/tables.md#money).
pub(crate) fn unfit_error(operation: &str, table: &str, unfit: &Unfit) -> crate::Error {
    crate::Error::Decode {
        operation: operation.to_owned(),
        status: 200,
        message: unfit.message(table),
        snippet: String::new(),
        resumable: None,
    }
}

/// Rows from which a table's columns are built on two threads: each column is independent,
/// and below this a thread costs more than it saves.
const PARALLEL_ROWS: usize = 4096;

/// Builds a table from `rows`, one column per spec; a decimal money value that does not fit its
/// column is an error.
pub(crate) fn build<R: Sync>(rows: &[R], specs: &[(&'static str, Read<R>)]) -> Result<Table, Unfit> {
    let column = |(name, read): &(&'static str, Read<R>)| Ok(Column { name, data: read.column(name, rows)? });
    let columns = if rows.len() < PARALLEL_ROWS || specs.len() < 2 {
        specs.iter().map(column).collect::<Result<Vec<_>, Unfit>>()?
    } else {
        // Alternate columns between the threads so that each gets its share of the text ones.
        std::thread::scope(|scope| {
            let odd = scope.spawn(|| specs.iter().skip(1).step_by(2).map(column).collect::<Result<Vec<_>, Unfit>>());
            let even = specs.iter().step_by(2).map(column).collect::<Result<Vec<Column>, Unfit>>();
            let odd = odd.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
            let mut columns = Vec::with_capacity(specs.len());
            let mut odd = odd.into_iter();
            for column in even? {
                columns.push(column);
                columns.extend(odd.next());
            }
            Ok::<_, Unfit>(columns)
        })?
    };
    Ok(Table { columns, rows: rows.len() })
}

/// [`build`] of a table without a money column, which cannot fail: only a decimal money value
/// can be unfit.
pub(crate) fn build_plain<R: Sync>(rows: &[R], specs: &[(&'static str, Read<R>)]) -> Table {
    build(rows, specs).unwrap_or_default()
}

/// The text of `rows` as one Arrow array; `None` when it does not fit in 32-bit offsets.
fn text_array<R>(rows: &[R], read: fn(&R) -> Option<&str>, bytes: usize) -> Option<StringArray> {
    let mut values = Vec::with_capacity(bytes);
    let mut offsets = Vec::with_capacity(rows.len() + 1);
    let mut validity = Validity::default();
    offsets.push(0_i32);
    for row in rows {
        let text = read(row);
        if let Some(text) = text {
            values.extend_from_slice(text.as_bytes());
        }
        validity.push(text.is_some());
        offsets.push(i32::try_from(values.len()).ok()?);
    }
    StringArray::try_new(OffsetBuffer::new(offsets.into()), values.into(), validity.nulls()).ok()
}

/// Whether each cell of a column has a value, kept only from the first cell that has none: a
/// column with every value has no null buffer, as Arrow's builders leave it, and most columns
/// of a payload are such.
#[derive(Default)]
struct Validity {
    cells: usize,
    valid: Option<Vec<bool>>,
}

impl Validity {
    // Once per cell: a call each cost as much as the rest of the cell's work.
    #[expect(clippy::inline_always, reason = "measured: a call per cell cost as much as the cell's work")]
    #[inline(always)]
    fn push(&mut self, present: bool) {
        match &mut self.valid {
            Some(valid) => valid.push(present),
            None if !present => {
                let mut valid = vec![true; self.cells];
                valid.push(false);
                self.valid = Some(valid);
            }
            None => {}
        }
        self.cells += 1;
    }

    fn nulls(self) -> Option<NullBuffer> {
        self.valid.map(NullBuffer::from)
    }
}

impl<R> Read<R> {
    /// This column of `rows`. Text and numbers, most of a table, are built from their parts: for
    /// the few rows of a typical payload, a builder's setting up and finishing cost more than
    /// filling it.
    fn column(&self, name: &'static str, rows: &[R]) -> Result<ColumnData, Unfit> {
        let n = rows.len();
        Ok(match self {
            Read::Money(size, f) => money::column(name, *size, rows.iter().map(f))?,
            Read::Float(f) => {
                let mut validity = Validity::default();
                let values: Vec<f64> = rows
                    .iter()
                    .map(|r| {
                        let value = f(r);
                        validity.push(value.is_some());
                        value.unwrap_or_default()
                    })
                    .collect();
                ColumnData::Float(Float64Array::new(values.into(), validity.nulls()))
            }
            Read::Bool(f) => {
                let mut b = BooleanBuilder::with_capacity(n);
                for r in rows {
                    b.append_option(f(r));
                }
                ColumnData::Bool(b.finish())
            }
            Read::Text(f) => {
                let bytes = rows.iter().map(|r| f(r).map_or(0, str::len)).sum();
                ColumnData::Text(text_array(rows, *f, bytes).unwrap_or_else(|| {
                    // Past 2 GiB of text: the builder says so.
                    let mut b = StringBuilder::with_capacity(n, bytes);
                    for r in rows {
                        b.append_option(f(r));
                    }
                    b.finish()
                }))
            }
            Read::Date(f) => {
                let mut b = Date32Builder::with_capacity(n);
                for r in rows {
                    b.append_option(f(r).and_then(parse_date));
                }
                ColumnData::Date(b.finish())
            }
            Read::Timestamp(f) => {
                let mut b = TimestampMicrosecondBuilder::with_capacity(n).with_timezone(Arc::from("UTC"));
                for r in rows {
                    b.append_option(f(r).and_then(parse_timestamp));
                }
                ColumnData::Timestamp(b.finish())
            }
            Read::TextList(f) => {
                let mut b = ListBuilder::with_capacity(StringBuilder::new(), n);
                for r in rows {
                    for item in f(r) {
                        b.values().append_value(item);
                    }
                    b.append(true);
                }
                ColumnData::TextList(b.finish())
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(rows: &[Option<&'static str>]) -> StringArray {
        #[expect(clippy::ref_option_ref, reason = "a reader takes its row by reference, whatever the row")]
        fn cell(row: &Option<&'static str>) -> Option<&'static str> {
            *row
        }
        match Read::Text(cell).column("t", rows).unwrap() {
            ColumnData::Text(array) => array,
            other => panic!("{other:?}"),
        }
    }

    fn float(rows: &[Option<f64>]) -> Float64Array {
        match Read::Float(|r: &Option<f64>| *r).column("f", rows).unwrap() {
            ColumnData::Float(array) => array,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn columns_built_from_their_parts_keep_every_value_and_every_gap() {
        let cases: [&[Option<&str>]; 6] = [
            &[Some("a"), None, Some("bc"), None],
            &[None, Some("é"), Some("")],
            &[Some("x"), Some("y")],
            &[None, None],
            &[],
            &[Some(""), None],
        ];
        for rows in cases {
            let array = text(rows);
            assert_eq!(array, StringArray::from(rows.to_vec()), "{rows:?}");
            assert_eq!(array.iter().collect::<Vec<_>>(), rows.to_vec());
            // No gap, no null buffer: what Arrow's builders give, and what pandas reads fastest.
            assert_eq!(array.nulls().is_some(), rows.contains(&None), "{rows:?}");
        }
        for rows in [&[Some(1.5), None, Some(-2.0)][..], &[None], &[Some(0.0), Some(3.0)], &[]] {
            let array = float(rows);
            assert_eq!(array.iter().collect::<Vec<_>>(), rows.to_vec());
            assert_eq!(array.nulls().is_some(), rows.contains(&None), "{rows:?}");
        }
    }
}

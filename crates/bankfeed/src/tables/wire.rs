//! A table as bytes and back, for pickling a Python `Table` on its own (docs/architecture.md#pickling).
//!
//! Not Arrow IPC: that needs the `arrow-ipc` crate (and flatbuffers) for six column types whose
//! values this file writes in a few lines. Cells are written one by one and read back through the
//! same builders the tables are made with, so a table read here has exactly the types of a fresh
//! one, and bytes that are not such a table are an error, never a panic.
//!
//! Layout, little-endian: the magic, the row count (u64), the column count (u32), then per column
//! its name, its kind (u8) and one cell per row: a byte 0 for a missing value, or 1 followed by
//! the value (f64, a byte for a bool, i32 days, i64 microseconds, a string as a u32 length and
//! its UTF-8, a list as a u32 count and its items, each a presence byte and a string, a decimal
//! as its unscaled i128). A timestamp column also names its time zone after its kind, a decimal
//! column its precision and scale (a byte each).

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use arrow_array::builder::{
    BooleanBuilder, Date32Builder, Decimal128Builder, Float64Builder, ListBuilder, StringBuilder,
    TimestampMicrosecondBuilder,
};
use arrow_array::cast::AsArray;
use arrow_array::Array;
use arrow_schema::{DataType, TimeUnit};

use super::{Column, ColumnData, Table};
use crate::sync::lock;

const MAGIC: &[u8] = b"bankfeed-table-1";

const FLOAT: u8 = 0;
const BOOL: u8 = 1;
const TEXT: u8 = 2;
const DATE: u8 = 3;
const TIMESTAMP: u8 = 4;
const TEXT_LIST: u8 = 5;
const DECIMAL: u8 = 6;

impl Table {
    /// The table as bytes that [`Table::from_bytes`] reads back into an equal table.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out =
            Vec::with_capacity(64 + self.columns.iter().map(|c| c.data.array().get_array_memory_size()).sum::<usize>());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(self.rows as u64).to_le_bytes());
        out.extend_from_slice(&(self.columns.len() as u32).to_le_bytes());
        for column in &self.columns {
            put_text(&mut out, column.name);
            write_column(&mut out, &column.data);
        }
        out
    }

    /// Reads bytes written by [`Table::to_bytes`]; anything else is an error that says what is wrong.
    pub fn from_bytes(bytes: &[u8]) -> Result<Table, String> {
        let mut reader = Reader { bytes };
        if reader.take(MAGIC.len())? != MAGIC {
            return Err("not a bankfeed table".to_owned());
        }
        let rows = usize::try_from(reader.u64()?).map_err(|_| "too many rows".to_owned())?;
        let count = reader.u32()?;
        let mut columns = Vec::new();
        for _ in 0..count {
            let name = intern(reader.text()?);
            let data = read_column(&mut reader, rows)?;
            columns.push(Column { name, data });
        }
        if !reader.bytes.is_empty() {
            return Err("bytes left after the last column".to_owned());
        }
        Ok(Table { columns, rows })
    }
}

/// Column names are `&'static str` (tables are declared with literal names). A name read back is
/// leaked once per distinct name for the life of the process: the names are the few dozen of the
/// declared tables, so this is a small fixed cost, not a leak per table.
fn intern(name: &str) -> &'static str {
    static NAMES: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());
    let mut names = lock(&NAMES);
    if let Some(known) = names.get(name) {
        return known;
    }
    let leaked: &'static str = Box::leak(name.to_owned().into_boxed_str());
    names.insert(leaked);
    leaked
}

fn put_text(out: &mut Vec<u8>, text: &str) {
    // A column name or a cell never reaches 4 GiB: the body it came from is bounded far below.
    out.extend_from_slice(&u32::try_from(text.len()).unwrap_or(u32::MAX).to_le_bytes());
    out.extend_from_slice(text.as_bytes());
}

/// Writes a presence byte per row of `array`, and `put`'s value after each present one.
fn cells(out: &mut Vec<u8>, array: &dyn Array, mut put: impl FnMut(&mut Vec<u8>, usize)) {
    for row in 0..array.len() {
        let valid = array.is_valid(row);
        out.push(u8::from(valid));
        if valid {
            put(out, row);
        }
    }
}

fn write_column(out: &mut Vec<u8>, data: &ColumnData) {
    let array = data.array();
    match data {
        ColumnData::Float(values) => {
            out.push(FLOAT);
            cells(out, array, |out, row| out.extend_from_slice(&values.value(row).to_le_bytes()));
        }
        ColumnData::Decimal(values) => {
            out.push(DECIMAL);
            out.push(values.precision());
            out.extend_from_slice(&values.scale().to_le_bytes());
            cells(out, array, |out, row| out.extend_from_slice(&values.value(row).to_le_bytes()));
        }
        ColumnData::Bool(values) => {
            out.push(BOOL);
            cells(out, array, |out, row| out.push(u8::from(values.value(row))));
        }
        ColumnData::Text(values) => {
            out.push(TEXT);
            cells(out, array, |out, row| put_text(out, values.value(row)));
        }
        ColumnData::Date(values) => {
            out.push(DATE);
            cells(out, array, |out, row| out.extend_from_slice(&values.value(row).to_le_bytes()));
        }
        ColumnData::Timestamp(values) => {
            out.push(TIMESTAMP);
            let zone = match values.data_type() {
                DataType::Timestamp(TimeUnit::Microsecond, Some(zone)) => zone.to_string(),
                _ => String::new(),
            };
            put_text(out, &zone);
            cells(out, array, |out, row| out.extend_from_slice(&values.value(row).to_le_bytes()));
        }
        ColumnData::TextList(values) => {
            out.push(TEXT_LIST);
            cells(out, array, |out, row| {
                let items = values.value(row);
                let items = items.as_string::<i32>();
                out.extend_from_slice(&u32::try_from(items.len()).unwrap_or(u32::MAX).to_le_bytes());
                cells(out, items, |out, item| put_text(out, items.value(item)));
            });
        }
    }
}

/// Reads `rows` cells written by [`cells`], each present one with `read`.
fn read_cells<'a, T>(
    reader: &mut Reader<'a>,
    rows: usize,
    mut read: impl FnMut(&mut Reader<'a>) -> Result<T, String>,
    mut append: impl FnMut(Option<T>),
) -> Result<(), String> {
    for _ in 0..rows {
        let value = if reader.present()? { Some(read(reader)?) } else { None };
        append(value);
    }
    Ok(())
}

fn read_column(reader: &mut Reader<'_>, rows: usize) -> Result<ColumnData, String> {
    // Capacities are not taken from `rows`: a damaged count must not reserve memory it never fills.
    Ok(match reader.u8()? {
        FLOAT => {
            let mut b = Float64Builder::new();
            read_cells(reader, rows, |r| Ok(f64::from_le_bytes(r.array()?)), |v| b.append_option(v))?;
            ColumnData::Float(b.finish())
        }
        DECIMAL => {
            let precision = reader.u8()?;
            let scale = i8::from_le_bytes(reader.array()?);
            let mut b = Decimal128Builder::new()
                .with_precision_and_scale(precision, scale)
                .map_err(|e| format!("a decimal column of a size Arrow refuses: {e}"))?;
            read_cells(reader, rows, |r| Ok(i128::from_le_bytes(r.array()?)), |v| b.append_option(v))?;
            ColumnData::Decimal(b.finish())
        }
        BOOL => {
            let mut b = BooleanBuilder::new();
            read_cells(reader, rows, |r| Ok(r.u8()? != 0), |v| b.append_option(v))?;
            ColumnData::Bool(b.finish())
        }
        TEXT => {
            let mut b = StringBuilder::new();
            read_cells(reader, rows, Reader::text, |v| b.append_option(v))?;
            ColumnData::Text(b.finish())
        }
        DATE => {
            let mut b = Date32Builder::new();
            read_cells(reader, rows, |r| Ok(i32::from_le_bytes(r.array()?)), |v| b.append_option(v))?;
            ColumnData::Date(b.finish())
        }
        TIMESTAMP => {
            let zone = reader.text()?;
            let mut b = TimestampMicrosecondBuilder::new();
            if !zone.is_empty() {
                b = b.with_timezone(Arc::from(zone));
            }
            read_cells(reader, rows, |r| Ok(i64::from_le_bytes(r.array()?)), |v| b.append_option(v))?;
            ColumnData::Timestamp(b.finish())
        }
        TEXT_LIST => {
            let mut b = ListBuilder::new(StringBuilder::new());
            for _ in 0..rows {
                if reader.present()? {
                    let count = usize::try_from(reader.u32()?).map_err(|_| "a list too long".to_owned())?;
                    read_cells(reader, count, Reader::text, |item| b.values().append_option(item))?;
                    b.append(true);
                } else {
                    b.append(false);
                }
            }
            ColumnData::TextList(b.finish())
        }
        kind => return Err(format!("unknown column kind {kind}")),
    })
}

struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if n > self.bytes.len() {
            return Err("the table's bytes end too early".to_owned());
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], String> {
        let mut out = [0; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    fn u8(&mut self) -> Result<u8, String> {
        Ok(u8::from_le_bytes(self.array()?))
    }

    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    fn present(&mut self) -> Result<bool, String> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            other => Err(format!("a cell marked {other}, neither missing (0) nor present (1)")),
        }
    }

    fn text(&mut self) -> Result<&'a str, String> {
        let len = usize::try_from(self.u32()?).map_err(|_| "a string too long".to_owned())?;
        std::str::from_utf8(self.take(len)?).map_err(|_| "a string that is not UTF-8".to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tables::arrow::tests::{sample, Row};

    fn rows() -> Vec<Row> {
        vec![
            Row {
                x: Some(1.5),
                s: None,
                d: Some("1970-01-02"),
                t: Some("2026-11-20T08:15:42.123456"),
                l: vec!["a", "é"],
                b: Some(true),
            },
            Row { x: None, s: Some("b\u{0}c"), d: None, t: None, l: vec![], b: None },
            Row {
                x: Some(f64::NEG_INFINITY),
                s: Some(""),
                d: Some("2026/11/20"),
                t: None,
                l: vec![""],
                b: Some(false),
            },
        ]
    }

    #[test]
    fn a_table_comes_back_equal() {
        for table in [sample(&rows()), sample(&[]), Table::default(), Table { columns: vec![], rows: 3 }] {
            let again = Table::from_bytes(&table.to_bytes()).unwrap();
            assert_eq!(again, table);
            assert_eq!(again.schema(), table.schema());
        }
    }

    #[test]
    fn names_are_interned_once() {
        let a = Table::from_bytes(&sample(&rows()).to_bytes()).unwrap();
        let b = Table::from_bytes(&sample(&rows()).to_bytes()).unwrap();
        assert!(std::ptr::eq(a.columns[0].name, b.columns[0].name));
    }

    #[test]
    fn damaged_bytes_are_errors_not_panics() {
        let bytes = sample(&rows()).to_bytes();
        for end in 0..bytes.len() {
            assert!(Table::from_bytes(&bytes[..end]).is_err(), "cut at {end}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(Table::from_bytes(&longer).unwrap_err().contains("left"));
        let mut bad_kind = bytes.clone();
        let kind_at = MAGIC.len() + 8 + 4 + 4 + 1;
        bad_kind[kind_at] = 9;
        assert!(Table::from_bytes(&bad_kind).unwrap_err().contains("kind"));
        let mut huge = MAGIC.to_vec();
        huge.extend_from_slice(&u64::MAX.to_le_bytes());
        huge.extend_from_slice(&1u32.to_le_bytes());
        huge.extend_from_slice(&1u32.to_le_bytes());
        huge.extend_from_slice(b"x");
        huge.push(FLOAT);
        assert!(Table::from_bytes(&huge).is_err());
        assert!(Table::from_bytes(b"something else entirely").is_err());
    }
}

//! `Table`: a flat table built in Rust, handed to Python as columns or as an Arrow C stream.

use std::sync::Arc;

use pyo3::exceptions::PyKeyError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyCapsule, PyDate, PyDict, PyList, PyString};

use crate::args;
use crate::convert;
use crate::views;

use arrow_array::cast::AsArray;

use bankfeed::data::dates::ymd;
use bankfeed::tables::{ColumnData, Table};

#[doc = stub_doc!("Table")]
#[pyclass(name = "Table", module = "bankfeed", frozen)]
pub(crate) struct PyTable {
    table: Arc<Table>,
}

impl PyTable {
    pub(crate) fn new(table: Table) -> Self {
        PyTable { table: Arc::new(table) }
    }

    pub(crate) fn len(&self) -> usize {
        self.table.rows
    }

    /// The table itself, shared (`bf.combine` reads many tables off the GIL).
    pub(crate) fn shared(&self) -> Arc<Table> {
        Arc::clone(&self.table)
    }
}

fn frames(py: Python<'_>) -> PyResult<Bound<'_, PyModule>> {
    py.import("bankfeed._frames")
}

/// The Arrow type of a column as pyarrow names it (`pa.float64()` prints as `double`), the
/// column types a notebook view shows (docs/notebooks.md).
fn arrow_type(data: &ColumnData) -> std::borrow::Cow<'static, str> {
    std::borrow::Cow::Borrowed(match data {
        ColumnData::Float(_) => "double",
        ColumnData::Decimal(a) => return format!("decimal128({}, {})", a.precision(), a.scale()).into(),
        ColumnData::Bool(_) => "bool",
        ColumnData::Text(_) => "string",
        ColumnData::Date(_) => "date32[day]",
        ColumnData::Timestamp(_) => "timestamp[us, tz=UTC]",
        ColumnData::TextList(_) => "list<string>",
    })
}

/// The value of row `row` of `data` as a Python object.
fn cell<'py>(py: Python<'py>, data: &ColumnData, row: usize) -> PyResult<Bound<'py, PyAny>> {
    if data.array().is_null(row) {
        return Ok(py.None().into_bound(py));
    }
    Ok(match data {
        ColumnData::Float(v) => v.value(row).into_pyobject(py)?.into_any(),
        // A `decimal.Decimal` of the exact digits.
        ColumnData::Decimal(v) => py.import("decimal")?.getattr("Decimal")?.call1((v.value_as_string(row),))?,
        ColumnData::Bool(v) => v.value(row).into_pyobject(py)?.to_owned().into_any(),
        ColumnData::Text(v) => PyString::new(py, v.value(row)).into_any(),
        ColumnData::Date(v) => {
            let (y, m, d) = ymd(v.value(row));
            PyDate::new(py, y, m as u8, d as u8)?.into_any()
        }
        ColumnData::Timestamp(v) => convert::utc_datetime(py, v.value(row))?.into_any(),
        ColumnData::TextList(v) => {
            let items = v.value(row);
            let items = items.as_string::<i32>();
            PyList::new(py, items.iter().map(std::option::Option::unwrap_or_default))?.into_any()
        }
    })
}

/// Rows `offset..offset + length` of `data` (the caller clamps them to the table): Arrow slices
/// share the buffers, so a slice copies no value.
fn sliced(data: &ColumnData, offset: usize, length: usize) -> ColumnData {
    match data {
        ColumnData::Float(v) => ColumnData::Float(v.slice(offset, length)),
        ColumnData::Decimal(v) => ColumnData::Decimal(v.slice(offset, length)),
        ColumnData::Bool(v) => ColumnData::Bool(v.slice(offset, length)),
        ColumnData::Text(v) => ColumnData::Text(v.slice(offset, length)),
        ColumnData::Date(v) => ColumnData::Date(v.slice(offset, length)),
        ColumnData::Timestamp(v) => ColumnData::Timestamp(v.slice(offset, length)),
        ColumnData::TextList(v) => ColumnData::TextList(v.slice(offset, length)),
    }
}

/// A count argument as a row number: a negative one is refused with its name and value.
fn rows_of(name: &str, value: i64) -> PyResult<usize> {
    usize::try_from(value).map_err(|_| {
        pyo3::exceptions::PyValueError::new_err(format!("{name} must be 0 or more (a number of rows); got {value}"))
    })
}

#[pymethods]
impl PyTable {
    #[doc = stub_doc!("Table.columns")]
    #[getter]
    fn columns(&self) -> Vec<&'static str> {
        self.table.names()
    }

    #[doc = stub_doc!("Table.column_names")]
    #[getter]
    fn column_names(&self) -> Vec<&'static str> {
        self.table.names()
    }

    #[doc = stub_doc!("Table.num_rows")]
    #[getter]
    fn num_rows(&self) -> usize {
        self.table.rows
    }

    #[doc = stub_doc!("Table.shape")]
    #[getter]
    fn shape(&self) -> (usize, usize) {
        (self.table.rows, self.table.columns.len())
    }

    #[doc = stub_doc!("Table.__getitem__")]
    fn __getitem__<'py>(slf: &Bound<'py, Self>, name: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        frames(slf.py())?.call_method1("column", (slf, name))
    }

    #[doc = stub_doc!("Table.slice")]
    #[pyo3(signature = (offset=0, length=None))]
    fn slice(&self, offset: i64, length: Option<i64>) -> PyResult<Self> {
        let offset = rows_of("offset", offset)?.min(self.table.rows);
        let left = self.table.rows - offset;
        let length = length.map(|length| rows_of("length", length)).transpose()?.map_or(left, |n| n.min(left));
        let columns = self
            .table
            .columns
            .iter()
            .map(|column| bankfeed::tables::Column { name: column.name, data: sliced(&column.data, offset, length) })
            .collect();
        Ok(PyTable::new(Table { columns, rows: length }))
    }

    #[doc = stub_doc!("Table.head")]
    #[pyo3(signature = (n=5))]
    fn head(&self, n: i64) -> PyResult<Self> {
        rows_of("n", n)?;
        self.slice(0, Some(n))
    }

    fn __len__(&self) -> usize {
        self.len()
    }

    #[doc = stub_doc!("Table.to_records")]
    fn to_records<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let names: Vec<Bound<'py, PyString>> = self.table.columns.iter().map(|c| PyString::new(py, c.name)).collect();
        let records = PyList::empty(py);
        for row in 0..self.table.rows {
            let record = PyDict::new(py);
            for (name, column) in names.iter().zip(&self.table.columns) {
                record.set_item(name, cell(py, &column.data, row)?)?;
            }
            records.append(record)?;
        }
        Ok(records)
    }

    #[doc = stub_doc!("Table.column")]
    fn column<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = args::name)] name: String,
    ) -> PyResult<Bound<'py, PyList>> {
        let data = self
            .table
            .column(&name)
            .ok_or_else(|| PyKeyError::new_err(format!("no column {name:?}; columns: {:?}", self.table.names())))?;
        let values: Vec<Bound<'py, PyAny>> =
            (0..self.table.rows).map(|row| cell(py, data, row)).collect::<PyResult<_>>()?;
        PyList::new(py, values)
    }

    #[doc = stub_doc!("Table.to_arrow")]
    fn to_arrow<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        frames(slf.py())?.call_method1("to_arrow", (slf,))
    }

    #[doc = stub_doc!("Table.to_pandas")]
    fn to_pandas<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        frames(slf.py())?.call_method1("to_pandas", (slf,))
    }

    #[doc = stub_doc!("Table.to_polars")]
    fn to_polars<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        frames(slf.py())?.call_method1("to_polars", (slf,))
    }

    #[doc = stub_doc!("Table.__arrow_c_stream__")]
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let table = Arc::clone(&self.table);
        let stream = py
            .detach(move || table.to_c_stream())
            .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
        // The consumer moves the stream out; if none does, dropping it releases it.
        PyCapsule::new_with_value(py, stream, c"arrow_array_stream")
    }

    // Its columns, written by the core (`Table::to_bytes`, docs/architecture.md#pickling).
    #[doc = stub_doc!("Table.__reduce__")]
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyBytes>,))> {
        let table = Arc::clone(&self.table);
        let bytes = py.detach(move || table.to_bytes());
        Ok((py.get_type::<Self>().getattr("_from_bytes")?, (PyBytes::new(py, &bytes),)))
    }

    // The table `__reduce__` wrote; bytes that are not one raise ValueError.
    #[staticmethod]
    fn _from_bytes(py: Python<'_>, data: &Bound<'_, PyBytes>) -> PyResult<Self> {
        let bytes = data.as_bytes();
        let table = py.detach(|| Table::from_bytes(bytes)).map_err(pyo3::exceptions::PyValueError::new_err)?;
        Ok(PyTable::new(table))
    }

    #[doc = stub_doc!("Table._types")]
    fn _types(&self) -> Vec<std::borrow::Cow<'static, str>> {
        self.table.columns.iter().map(|column| arrow_type(&column.data)).collect()
    }

    #[doc = stub_doc!("Table._rows")]
    fn _rows<'py>(&self, py: Python<'py>, start: usize, stop: usize) -> PyResult<Bound<'py, PyList>> {
        let stop = stop.min(self.table.rows);
        let rows = PyList::empty(py);
        for row in start.min(stop)..stop {
            let cells: Vec<Bound<'py, PyAny>> =
                self.table.columns.iter().map(|column| cell(py, &column.data, row)).collect::<PyResult<_>>()?;
            rows.append(pyo3::types::PyTuple::new(py, cells)?)?;
        }
        Ok(rows)
    }

    #[doc = stub_doc!("Table._repr_html_")]
    fn _repr_html_(slf: &Bound<'_, Self>) -> PyResult<String> {
        views::html(slf.as_any(), "table_html")
    }

    // The columns a person reads first, the ids apart, as the notebook view orders them
    // (docs/notebooks.md#table); `columns` keeps the table's own order.
    fn __repr__(&self) -> String {
        let is_id = |name: &&str| *name == "id" || name.ends_with("_id") || name.ends_with("_ids");
        let (ids, read): (Vec<&str>, Vec<&str>) = self.table.names().into_iter().partition(is_id);
        format!("Table(rows={}, columns={read:?}, ids={ids:?})", self.table.rows)
    }
}

//! `Table`: a flat table built in Rust, handed to Python as columns or as an Arrow C stream.

use std::sync::Arc;

use pyo3::exceptions::PyKeyError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyCapsule, PyDate, PyDict, PyList, PyString};

use super::args;
use super::convert;

use arrow_array::cast::AsArray;

use crate::data::dates::ymd;
use crate::tables::{ColumnData, Table};

/// A table of results, built in Rust as columns.
///
/// ``to_pandas()``, ``to_polars()`` and ``to_arrow()`` hand it over without copying the numbers
/// (it implements ``__arrow_c_stream__``, so ``pyarrow.table(t)`` and ``polars.DataFrame(t)``
/// take it directly); ``to_records()`` gives plain dicts::
///
///     df = inv.transactions.to_pandas()
///     rows = inv.positions.to_records()   # [{"account_id": ..., "symbol": ..., ...}, ...]
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

/// The value of row `row` of `data` as a Python object.
fn cell<'py>(py: Python<'py>, data: &ColumnData, row: usize) -> PyResult<Bound<'py, PyAny>> {
    if data.array().is_null(row) {
        return Ok(py.None().into_bound(py));
    }
    Ok(match data {
        ColumnData::Float(v) => v.value(row).into_pyobject(py)?.into_any(),
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
            PyList::new(py, items.iter().map(|item| item.unwrap_or_default()))?.into_any()
        }
    })
}

#[pymethods]
impl PyTable {
    /// The column names, snake_case.
    #[getter]
    fn columns(&self) -> Vec<&'static str> {
        self.table.names()
    }

    fn __len__(&self) -> usize {
        self.len()
    }

    /// The rows as flat dicts: dates as ``datetime.date``, timestamps as aware ``datetime``,
    /// missing values as None.
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

    /// One column as a list (values as in ``to_records``).
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

    /// A ``pyarrow.Table`` (needs ``pip install 'bankfeed[arrow]'``).
    fn to_arrow<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        frames(slf.py())?.call_method1("to_arrow", (slf,))
    }

    /// A ``pandas.DataFrame``: dates as datetime64, numbers as float64 (needs ``bankfeed[pandas]``).
    fn to_pandas<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        frames(slf.py())?.call_method1("to_pandas", (slf,))
    }

    /// A ``polars.DataFrame`` (needs ``pip install 'bankfeed[polars]'``).
    fn to_polars<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        frames(slf.py())?.call_method1("to_polars", (slf,))
    }

    /// The Arrow PyCapsule stream interface. The requested schema is not honoured: the table
    /// always comes in its own types.
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

    /// Pickles as its columns, written by the core (`Table::to_bytes`, docs/architecture.md#pickling).
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyBytes>,))> {
        let table = Arc::clone(&self.table);
        let bytes = py.detach(move || table.to_bytes());
        Ok((py.get_type::<Self>().getattr("_from_bytes")?, (PyBytes::new(py, &bytes),)))
    }

    /// The table `__reduce__` wrote; bytes that are not one raise ValueError.
    #[staticmethod]
    fn _from_bytes(py: Python<'_>, data: &Bound<'_, PyBytes>) -> PyResult<Self> {
        let bytes = data.as_bytes();
        let table = py.detach(|| Table::from_bytes(bytes)).map_err(pyo3::exceptions::PyValueError::new_err)?;
        Ok(PyTable::new(table))
    }

    fn __repr__(&self) -> String {
        format!("Table(rows={}, columns={:?})", self.table.rows, self.table.names())
    }
}

//! `bf.combine`: the `(login_id, result_or_exception)` pairs of a bulk call as one table per kind,
//! each with a `login_id` column first (the core's `tables::combine`), and the failures apart.

use std::sync::Arc;

use pyo3::exceptions::{PyAttributeError, PyBaseException, PyKeyError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple, PyType};

use super::args;
use super::results::{NamedTables, PyAccounts, PyAttributes, PyInvestments, PyStatements};
use super::table::PyTable;
use crate::tables::{self, Table};

/// The results of a bulk call gathered by :func:`combine`: one :class:`Table` per kind of table,
/// each with the LoginId of its rows as its first column ``login_id``, and the failures apart.
///
/// Tables are reached by name as items or attributes (``combined["positions"]``,
/// ``combined.positions``); ``tables`` has them all, ``errors`` the exception of each failed
/// LoginId::
///
///     combined = bf.combine(client.investments_many(login_ids))
///     combined.positions.to_pandas()      # login_id, account_id, symbol, ...
///     for login_id, error in combined.errors.items():
///         print(login_id, error)
///
/// When no result succeeded, the kind is None and there are no tables.
#[pyclass(name = "Combined", module = "bankfeed", frozen)]
pub(crate) struct PyCombined {
    kind: Option<String>,
    tables: Vec<(String, Py<PyTable>)>,
    errors: Vec<(String, Py<PyAny>)>,
}

/// What `Combined._restore` takes: the kind, `[(name, table)]` and `[(login_id, exception)]`.
type CombinedState<'py> = (Option<String>, Bound<'py, PyList>, Bound<'py, PyList>);

impl PyCombined {
    fn table(&self, py: Python<'_>, name: &str) -> Option<Py<PyTable>> {
        self.tables.iter().find(|(n, _)| n == name).map(|(_, table)| table.clone_ref(py))
    }

    /// The table names as Python writes a list of them, for messages.
    fn names(&self) -> String {
        let names: Vec<String> = self.tables.iter().map(|(name, _)| format!("'{name}'")).collect();
        format!("[{}]", names.join(", "))
    }
}

#[pymethods]
impl PyCombined {
    /// The class of the combined results (``"Investments"``, ``"Accounts"``, ``"Attributes"`` or
    /// ``"Statements"``); None when no result succeeded.
    #[getter]
    fn kind(&self) -> Option<&str> {
        self.kind.as_deref()
    }

    /// ``{name: Table}``, in the order of the result class's own tables.
    #[getter]
    fn tables<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let tables = PyDict::new(py);
        for (name, table) in &self.tables {
            tables.set_item(name, table.clone_ref(py))?;
        }
        Ok(tables)
    }

    /// ``{login_id: exception}`` for every LoginId whose call failed (a LoginId given twice keeps
    /// its last exception).
    #[getter]
    fn errors<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let errors = PyDict::new(py);
        for (login_id, error) in &self.errors {
            errors.set_item(login_id, error.clone_ref(py))?;
        }
        Ok(errors)
    }

    fn __getitem__(&self, py: Python<'_>, name: &str) -> PyResult<Py<PyTable>> {
        self.table(py, name).ok_or_else(|| PyKeyError::new_err(format!("no table '{name}'; tables: {}", self.names())))
    }

    fn __getattr__(&self, py: Python<'_>, name: &str) -> PyResult<Py<PyTable>> {
        self.table(py, name).ok_or_else(|| {
            PyAttributeError::new_err(format!(
                "'Combined' object has no attribute or table '{name}'; tables: {}",
                self.names()
            ))
        })
    }

    /// Pickles as its kind, its tables (each pickling as its columns) and its exceptions (each
    /// pickling as itself), so a gathered bulk call crosses process pools like its results do.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, CombinedState<'py>)> {
        let tables = PyList::new(py, self.tables.iter().map(|(name, table)| (name, table.clone_ref(py))))?;
        let errors = PyList::new(py, self.errors.iter().map(|(login_id, error)| (login_id, error.clone_ref(py))))?;
        Ok((py.get_type::<Self>().getattr("_restore")?, (self.kind.clone(), tables, errors)))
    }

    /// The `Combined` that `__reduce__` described.
    #[classmethod]
    fn _restore(
        _cls: &Bound<'_, PyType>,
        kind: Option<String>,
        tables: Vec<(String, Py<PyTable>)>,
        errors: Vec<(String, Py<PyAny>)>,
    ) -> Self {
        PyCombined { kind, tables, errors }
    }

    fn __repr__(&self) -> String {
        let kind = self.kind.as_ref().map_or("None".to_owned(), |kind| format!("'{kind}'"));
        let tables: Vec<String> =
            self.tables.iter().map(|(name, table)| format!("{name}={}", table.get().len())).collect();
        let mut text = format!("Combined(kind={kind}");
        for table in tables {
            text.push_str(", ");
            text.push_str(&table);
        }
        format!("{text}, errors={})", self.errors.len())
    }
}

/// A result's class name and its tables by name.
type Kind = (&'static str, Vec<(&'static str, Arc<Table>)>);

/// The kind and the named tables of `result`, when it is one of the result classes.
fn result_tables(result: &Bound<'_, PyAny>) -> Option<Kind> {
    fn of<T: NamedTables>(result: &T) -> Kind {
        (T::KIND, result.named_tables().into_iter().map(|(name, table)| (name, table.get().shared())).collect())
    }
    if let Ok(r) = result.cast::<PyInvestments>() {
        Some(of(r.get()))
    } else if let Ok(r) = result.cast::<PyAccounts>() {
        Some(of(r.get()))
    } else if let Ok(r) = result.cast::<PyAttributes>() {
        Some(of(r.get()))
    } else if let Ok(r) = result.cast::<PyStatements>() {
        Some(of(r.get()))
    } else {
        None
    }
}

/// Gathers the ``(login_id, result_or_exception)`` pairs of a bulk call (``investments_many``,
/// ``accounts_detail_many``, ``attributes_many``, or a list of such pairs) into a :class:`Combined`.
///
/// Each table of the results' class is concatenated over the logins, in the order of the pairs,
/// with a first column ``login_id`` (a table's own ``login_id`` column, as Attributes' ``values``
/// has, gives way to it); columns missing from some results are null there. Exceptions go to
/// ``errors``. Results of two classes in one call raise TypeError::
///
///     combined = bf.combine(client.investments_many(login_ids, concurrency=32))
///     positions = combined.positions.to_pandas()
///     failed = combined.errors            # {login_id: exception}
#[pyfunction]
pub(crate) fn combine(py: Python<'_>, pairs: &Bound<'_, PyAny>) -> PyResult<PyCombined> {
    let mut kind: Option<(&'static str, Vec<&'static str>)> = None;
    let mut parts: Vec<(String, Vec<Arc<Table>>)> = Vec::new();
    let mut errors: Vec<(String, Py<PyAny>)> = Vec::new();
    for pair in pairs.try_iter()? {
        let pair = pair?;
        let pair = match pair.cast::<PyTuple>() {
            Ok(tuple) if tuple.len() == 2 => tuple.clone(),
            _ => {
                return Err(PyTypeError::new_err(format!(
                    "combine takes (login_id, result) pairs, not {}",
                    args::type_name(&pair)
                )))
            }
        };
        let login_id = args::text("login_id", &pair.get_item(0)?)?;
        let result = pair.get_item(1)?;
        if result.is_instance_of::<PyBaseException>() {
            errors.push((login_id, result.unbind()));
            continue;
        }
        let Some((this, named)) = result_tables(&result) else {
            return Err(PyTypeError::new_err(format!(
                "combine takes results of Investments, Accounts, Attributes or Statements, or exceptions; \
                 the result of {login_id:?} is {}",
                args::type_name(&result)
            )));
        };
        match &kind {
            None => kind = Some((this, named.iter().map(|(name, _)| *name).collect())),
            Some((first, _)) if *first != this => {
                return Err(PyTypeError::new_err(format!(
                    "combine takes results of one kind, got {first} and {this} (the result of {login_id:?})"
                )))
            }
            Some(_) => {}
        }
        parts.push((login_id, named.into_iter().map(|(_, table)| table).collect()));
    }
    let Some((kind, names)) = kind else {
        return Ok(PyCombined { kind: None, tables: Vec::new(), errors });
    };
    // Concatenating tens of thousands of rows is Rust work: done without the GIL.
    let combined = py.detach(|| {
        names
            .iter()
            .enumerate()
            .map(|(index, name)| {
                let of_name: Vec<(&str, &Table)> = parts
                    .iter()
                    .filter_map(|(login_id, tables)| tables.get(index).map(|table| (login_id.as_str(), &**table)))
                    .collect();
                tables::combine(&of_name).map(|table| (*name, table))
            })
            .collect::<Result<Vec<_>, _>>()
    })?;
    let tables = combined
        .into_iter()
        .map(|(name, table)| Ok((name.to_owned(), Py::new(py, PyTable::new(table))?)))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(PyCombined { kind: Some(kind.to_owned()), tables, errors })
}

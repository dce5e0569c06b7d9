//! `bf.combine` (and the gathering `bf.acombine` feeds): the `(login_id, result_or_exception)`
//! pairs of a bulk call as one table per kind, each with a `login_id` column first (the core's
//! `tables::Combiner`), and the failures apart.

use std::sync::Arc;

use pyo3::exceptions::{PyAttributeError, PyBaseException, PyKeyError, PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyGenericAlias, PyList, PyString, PyTuple, PyType};

use crate::args;
use crate::error::OrRaise;
use crate::results::{NamedTables, PyAccounts, PyAttributes, PyInvestments, PyStatements};
use crate::table::PyTable;
use crate::views;
use bankfeed::tables::{CombinedSize, Combiner, Table};

#[doc = stub_doc!("Combined")]
#[pyclass(name = "Combined", module = "bankfeed", frozen)]
pub(crate) struct PyCombined {
    kind: Option<String>,
    tables: Vec<(String, Py<PyTable>)>,
    /// `(login_id, exception)`, the LoginId as the `str` that came (it may hold no text: a lone
    /// surrogate is its own login's failure, see `args::LoginIds`).
    errors: Vec<(Py<PyAny>, Py<PyAny>)>,
}

/// What `Combined._restore` takes: the kind, `[(name, table)]` and `[(login_id, exception)]`.
type CombinedState<'py> = (Option<String>, Bound<'py, PyList>, Bound<'py, PyList>);

impl PyCombined {
    fn table(&self, py: Python<'_>, name: &str) -> Option<Py<PyTable>> {
        self.tables.iter().find(|(n, _)| n == name).map(|(_, table)| table.clone_ref(py))
    }

    /// What a message about a missing table adds: the tables there are, or, when there are none,
    /// why (an unattended job meets this when every login failed, say on wrong keys).
    fn tables_there_are(&self) -> String {
        if self.kind.is_none() {
            let errors = self.errors.len();
            return format!("there are no tables: no result succeeded ({errors} error(s) in .errors)");
        }
        let names: Vec<String> = self.tables.iter().map(|(name, _)| format!("'{name}'")).collect();
        format!("tables: [{}]", names.join(", "))
    }
}

#[pymethods]
impl PyCombined {
    #[doc = stub_doc!("Combined.kind")]
    #[getter]
    fn kind(&self) -> Option<&str> {
        self.kind.as_deref()
    }

    #[doc = stub_doc!("Combined.tables")]
    #[getter]
    fn tables<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let tables = PyDict::new(py);
        for (name, table) in &self.tables {
            tables.set_item(name, table.clone_ref(py))?;
        }
        Ok(tables)
    }

    #[doc = stub_doc!("Combined.errors")]
    #[getter]
    fn errors<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let errors = PyDict::new(py);
        for (login_id, error) in &self.errors {
            errors.set_item(login_id, error.clone_ref(py))?;
        }
        Ok(errors)
    }

    #[doc = stub_doc!("Combined.__class_getitem__")]
    #[classmethod]
    #[pyo3(signature = (item, /))]
    fn __class_getitem__<'py>(cls: &Bound<'py, PyType>, item: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        Ok(PyGenericAlias::new(cls.py(), cls.as_any(), item)?.into_any())
    }

    fn __getitem__(&self, py: Python<'_>, name: &str) -> PyResult<Py<PyTable>> {
        self.table(py, name)
            .ok_or_else(|| PyKeyError::new_err(format!("no table '{name}'; {}", self.tables_there_are())))
    }

    fn __getattr__(&self, py: Python<'_>, name: &str) -> PyResult<Py<PyTable>> {
        self.table(py, name).ok_or_else(|| {
            PyAttributeError::new_err(format!(
                "'Combined' object has no attribute or table '{name}'; {}",
                self.tables_there_are()
            ))
        })
    }

    #[doc = stub_doc!("Combined._repr_html_")]
    fn _repr_html_(slf: &Bound<'_, Self>) -> PyResult<String> {
        views::html(slf.as_any(), "combined_html")
    }

    #[doc = stub_doc!("Combined.__reduce__")]
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, CombinedState<'py>)> {
        let tables = PyList::new(py, self.tables.iter().map(|(name, table)| (name, table.clone_ref(py))))?;
        let errors =
            PyList::new(py, self.errors.iter().map(|(login_id, error)| (login_id.clone_ref(py), error.clone_ref(py))))?;
        Ok((py.get_type::<Self>().getattr("_restore")?, (self.kind.clone(), tables, errors)))
    }

    // The `Combined` that `__reduce__` described.
    #[classmethod]
    fn _restore(
        _cls: &Bound<'_, PyType>,
        kind: Option<String>,
        tables: Vec<(String, Py<PyTable>)>,
        errors: Vec<(Py<PyAny>, Py<PyAny>)>,
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

/// A result's class name, its tables by name, and its RequestId.
type Kind = (&'static str, Vec<(&'static str, Arc<Table>)>, Option<String>);

/// The kind, the named tables and the RequestId of `result`, when it is one of the result classes.
fn result_tables(result: &Bound<'_, PyAny>) -> Option<Kind> {
    fn of<T: NamedTables>(result: &T) -> Kind {
        let tables = result.named_tables().into_iter().map(|(name, table)| (name, table.get().shared())).collect();
        (T::KIND, tables, result.request_id().map(str::to_owned))
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

#[doc = stub_doc!("combine")]
#[pyfunction]
pub(crate) fn combine(py: Python<'_>, pairs: &Bound<'_, PyAny>) -> PyResult<PyCombined> {
    if !pairs.hasattr("__iter__")? && pairs.hasattr("__aiter__")? {
        // An AsyncClient's bulk call (with or without progress) is stopped, so that its logins
        // do not run on behind the refusal while the caller keeps the iterator.
        let ours = pairs.hasattr(intern!(py, "_stop_now"))?;
        let what = if ours {
            pairs.call_method0(intern!(py, "_stop_now"))?;
            "bf.AsyncBulkResults (its logins were stopped)".to_owned()
        } else {
            args::type_name(pairs)
        };
        return Err(PyTypeError::new_err(format!(
            "combine takes an iterable of (login_id, result) pairs, not the async iterable {what}; \
             await bf.acombine(...) gathers an AsyncClient's bulk call"
        )));
    }
    let pairs = pairs.try_iter().map_err(|error| {
        // Python's own "object is not iterable" names no argument; an error of the object's own
        // __iter__ is its news and goes through.
        if error.is_instance_of::<PyTypeError>(py) {
            PyTypeError::new_err(format!(
                "combine takes an iterable of (login_id, result) pairs, not {}",
                args::type_name(pairs)
            ))
        } else {
            error
        }
    })?;
    let mut gathering = Gathering::default();
    for pair in pairs {
        gathering.add(py, &pair?, None)?;
    }
    gathering.finish(py)
}

// What `bf.acombine` (python/bankfeed/_combine.py) feeds each pair of an async bulk call into:
// `combine`'s work, one pair at a time.
#[doc = stub_doc!("_Gathering")]
#[pyclass(name = "_Gathering", module = "bankfeed._native")]
pub(crate) struct PyGathering {
    gathering: Option<Gathering>,
    /// Once finished, how large each table grew: what a gathering made `like` this one reserves.
    sizes: Sizes,
}

#[pymethods]
impl PyGathering {
    #[new]
    #[pyo3(signature = (like = None, /, *, provenance = false))]
    fn new(like: Option<PyRef<'_, Self>>, provenance: bool) -> Self {
        let sizes = like.map(|like| like.sizes.clone()).unwrap_or_default();
        let gathering = Gathering { like: sizes, provenance, ..Gathering::default() };
        PyGathering { gathering: Some(gathering), sizes: Vec::new() }
    }

    #[doc = stub_doc!("_Gathering.add")]
    #[pyo3(signature = (pair, /, fetched_at_us = None))]
    fn add(&mut self, py: Python<'_>, pair: &Bound<'_, PyAny>, fetched_at_us: Option<i64>) -> PyResult<usize> {
        self.gathering.as_mut().ok_or_else(finished)?.add(py, pair, fetched_at_us)
    }

    #[doc = stub_doc!("_Gathering.finish")]
    fn finish(&mut self, py: Python<'_>) -> PyResult<PyCombined> {
        let gathering = self.gathering.take().ok_or_else(finished)?;
        self.sizes = gathering.sizes();
        gathering.finish(py)
    }
}

fn finished() -> PyErr {
    PyValueError::new_err("this gathering has finished")
}

/// The pairs seen so far: each result's tables added to the combined ones as it comes and then
/// dropped, so that combining a bulk iterator holds one result at a time, not all of them.
#[derive(Default)]
pub(crate) struct Gathering {
    kind: Option<(&'static str, Vec<(&'static str, Combiner)>)>,
    errors: Vec<(Py<PyAny>, Py<PyAny>)>,
    /// The sizes a gathering of the same kind reached, which each table reserves.
    like: Sizes,
    /// Whether each table has `request_id` and `fetched_at` after `login_id` (an export's rows).
    provenance: bool,
}

/// Each table's [`CombinedSize`], by name.
type Sizes = Vec<(&'static str, CombinedSize)>;

impl Gathering {
    /// Adds `pair`; the rows it added to the tables (0 for an exception). `fetched_at_us` is
    /// when the result was fetched, for a gathering with provenance.
    fn add(&mut self, py: Python<'_>, pair: &Bound<'_, PyAny>, fetched_at_us: Option<i64>) -> PyResult<usize> {
        let pair = match pair.cast::<PyTuple>() {
            Ok(tuple) if tuple.len() == 2 => tuple,
            Ok(tuple) => {
                return Err(PyTypeError::new_err(format!(
                    "combine takes (login_id, result) pairs, not a tuple of {} items",
                    tuple.len()
                )))
            }
            Err(_) => {
                return Err(PyTypeError::new_err(format!(
                    "combine takes (login_id, result) pairs, not {}",
                    args::type_name(pair)
                )))
            }
        };
        let (login_id, result) = (pair.get_item(0)?, pair.get_item(1)?);
        if !login_id.is_instance_of::<PyString>() {
            return Err(args::wrong_type("login_id", "a str", &login_id));
        }
        if result.is_instance_of::<PyBaseException>() {
            self.errors.push((login_id.unbind(), result.unbind()));
            return Ok(0);
        }
        // A result's LoginId goes into the login_id column: it must be text.
        let login_id = args::text("login_id", &login_id)?;
        let Some((this, named, request_id)) = result_tables(&result) else {
            return Err(PyTypeError::new_err(format!(
                "combine takes results of Investments, Accounts, Attributes or Statements, or exceptions; \
                 the result of {login_id:?} is {}",
                args::type_name(&result)
            )));
        };
        let fetched_at = match (self.provenance, fetched_at_us) {
            (true, Some(at)) => Some(at),
            (true, None) => return Err(PyTypeError::new_err("a gathering with provenance needs fetched_at_us")),
            (false, _) => None,
        };
        let (like, provenance) = (&self.like, self.provenance);
        let (first, combiners) = self.kind.get_or_insert_with(|| {
            let combiner = |name: &str| {
                let combiner = like
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map_or_else(Combiner::default, |(_, size)| Combiner::sized_like(size));
                if provenance {
                    combiner.with_provenance()
                } else {
                    combiner
                }
            };
            (this, named.iter().map(|(name, _)| (*name, combiner(name))).collect())
        });
        if *first != this {
            return Err(PyTypeError::new_err(format!(
                "combine takes results of one kind, got {first} and {this} (the result of {login_id:?})"
            )));
        }
        // Copying a result's rows is Rust work: done without the GIL.
        py.detach(|| {
            combiners.iter_mut().zip(&named).try_for_each(|((_, combiner), (_, table))| match fetched_at {
                Some(at) => combiner.add_fetched(&login_id, request_id.as_deref(), at, table),
                None => combiner.add(&login_id, table),
            })
        })
        .or_raise()?;
        Ok(named.iter().map(|(_, table)| table.rows).sum())
    }

    fn sizes(&self) -> Sizes {
        self.kind.iter().flat_map(|(_, combiners)| combiners.iter().map(|(name, c)| (*name, c.size()))).collect()
    }

    fn finish(self, py: Python<'_>) -> PyResult<PyCombined> {
        let Some((kind, combiners)) = self.kind else {
            return Ok(PyCombined { kind: None, tables: Vec::new(), errors: self.errors });
        };
        let tables = combiners
            .into_iter()
            .map(|(name, combiner)| Ok((name.to_owned(), Py::new(py, PyTable::new(combiner.finish()))?)))
            .collect::<PyResult<Vec<_>>>()?;
        Ok(PyCombined { kind: Some(kind.to_owned()), tables, errors: self.errors })
    }
}

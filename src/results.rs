//! Result objects of the data operations: typed tables plus the payload as sent (`.raw`).
//! Tables are built in Rust, off the GIL, before the result crosses into Python.

use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyList, PyString};

use crate::args;
use crate::convert::{self, Parsed};
use crate::error::OrRaise;
use crate::table::PyTable;
use crate::views;
use bankfeed::data::accounts::Statements;
use bankfeed::data::attributes::Attributes;
use bankfeed::data::money::MoneyType;
use bankfeed::data::unknown::{self, PayloadKind, UnknownFields};
use bankfeed::data::{Payload, Raw};
use bankfeed::ops::{self, DataOperation};
use bankfeed::tables::{AccountsResult, AttributesResult, InvestmentsResult, StatementsResult, Table};

fn table(py: Python<'_>, table: Table) -> PyResult<Py<PyTable>> {
    Py::new(py, PyTable::new(table))
}

/// The `unknown_fields` of a result: counted off the GIL on first access, then kept
/// (docs/export.md#fields-the-service-adds).
fn unknown_fields<'py>(
    py: Python<'py>,
    kept: &std::sync::OnceLock<UnknownFields>,
    kind: PayloadKind,
    raw: &Raw,
) -> PyResult<Bound<'py, PyDict>> {
    let counts = if let Some(counts) = kept.get() {
        counts
    } else {
        let counted = py.detach(|| unknown::unknown_fields(kind, raw.bytes()));
        kept.get_or_init(|| counted)
    };
    let dict = PyDict::new(py);
    for (path, count) in counts {
        dict.set_item(path, count)?;
    }
    Ok(dict)
}

/// The bytes of a payload given as `bytes`, `bytearray` or `str`, copied once.
///
/// Not extracted as a `Vec<u8>`: that walks the payload as a Python sequence, one int object
/// per byte, which costs more than parsing it.
fn payload_raw(data: &Bound<'_, PyAny>) -> PyResult<Raw> {
    let bytes: std::sync::Arc<[u8]> = if let Ok(bytes) = data.cast::<PyBytes>() {
        bytes.as_bytes().into()
    } else if let Ok(text) = data.cast::<PyString>() {
        crate::args::str_of("data", None, text)?.as_bytes().into()
    } else if let Ok(array) = data.cast::<PyByteArray>() {
        array.to_vec().into()
    } else {
        return Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "data must be the payload as bytes, bytearray or str, not {}",
            data.get_type().name()?
        )));
    };
    Ok(Raw(bytes))
}

/// A saved payload of the data operation `O` (a `from_json`) read off the GIL into the result a
/// live answer is read into, by the same `read`, money as `money` says.
fn read_saved<O: DataOperation>(py: Python<'_>, data: &Bound<'_, PyAny>, money: MoneyType) -> PyResult<O::Output> {
    let raw = payload_raw(data)?;
    py.detach(move || O::read(O::WIRE.name, raw, money)).or_raise()
}

/// What the result classes pickle as: their own `from_json` and the payload's bytes, so that a
/// copy is the same result, read again (docs/architecture.md#pickling).
type Reduced<'py> = (Bound<'py, PyAny>, (Bound<'py, PyBytes>,));

fn reduce_to_json<'py, T: pyo3::PyTypeInfo>(py: Python<'py>, raw: &Raw) -> PyResult<Reduced<'py>> {
    Ok((py.get_type::<T>().getattr("from_json")?, (PyBytes::new(py, raw.bytes()),)))
}

/// [`reduce_to_json`] of a result with money columns, read again with the same money type.
type ReducedWithMoney<'py> = (Bound<'py, PyAny>, (Bound<'py, PyBytes>, &'static str));

fn reduce_with_money<'py, T: pyo3::PyTypeInfo>(
    py: Python<'py>,
    raw: &Raw,
    money: MoneyType,
) -> PyResult<ReducedWithMoney<'py>> {
    Ok((py.get_type::<T>().getattr("from_json")?, (PyBytes::new(py, raw.bytes()), money.name())))
}

// The Investments payload (docs/protocol.md#investments).
#[doc = stub_doc!("Investments")]
#[pyclass(name = "Investments", module = "bankfeed", frozen)]
pub(crate) struct PyInvestments {
    value: Option<f64>,
    cash: Option<f64>,
    request_id: Option<String>,
    raw: Raw,
    parsed: Parsed,
    unknown: std::sync::OnceLock<UnknownFields>,
    accounts: Py<PyTable>,
    positions: Py<PyTable>,
    transactions: Py<PyTable>,
    securities: Py<PyTable>,
    money: MoneyType,
}

impl PyInvestments {
    pub(crate) fn new(py: Python<'_>, parts: InvestmentsResult) -> PyResult<Self> {
        let t = parts.tables;
        Ok(PyInvestments {
            value: t.value,
            cash: t.cash,
            request_id: t.request_id,
            raw: parts.raw,
            parsed: Parsed::default(),
            unknown: std::sync::OnceLock::new(),
            accounts: table(py, t.accounts)?,
            positions: table(py, t.positions)?,
            transactions: table(py, t.transactions)?,
            securities: table(py, t.securities)?,
            money: t.money,
        })
    }
}

#[pymethods]
impl PyInvestments {
    #[doc = stub_doc!("Investments.from_json")]
    #[staticmethod]
    #[pyo3(signature = (data, money="float"))]
    fn from_json(
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
        #[pyo3(from_py_with = args::money)] money: &str,
    ) -> PyResult<Self> {
        let money = MoneyType::parse(money).or_raise()?;
        PyInvestments::new(py, read_saved::<ops::Investments>(py, data, money)?)
    }

    #[doc = stub_doc!("Investments.value")]
    #[getter]
    fn value(&self) -> Option<f64> {
        self.value
    }

    #[doc = stub_doc!("Investments.cash")]
    #[getter]
    fn cash(&self) -> Option<f64> {
        self.cash
    }

    #[doc = stub_doc!("Investments.request_id")]
    #[getter]
    fn request_id(&self) -> Option<&str> {
        self.request_id.as_deref()
    }

    #[doc = stub_doc!("Investments.accounts")]
    #[getter]
    fn accounts(&self, py: Python<'_>) -> Py<PyTable> {
        self.accounts.clone_ref(py)
    }

    #[doc = stub_doc!("Investments.positions")]
    #[getter]
    fn positions(&self, py: Python<'_>) -> Py<PyTable> {
        self.positions.clone_ref(py)
    }

    #[doc = stub_doc!("Investments.transactions")]
    #[getter]
    fn transactions(&self, py: Python<'_>) -> Py<PyTable> {
        self.transactions.clone_ref(py)
    }

    #[doc = stub_doc!("Investments.securities")]
    #[getter]
    fn securities(&self, py: Python<'_>) -> Py<PyTable> {
        self.securities.clone_ref(py)
    }

    #[doc = stub_doc!("Investments.unknown_fields")]
    #[getter]
    fn unknown_fields<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        unknown_fields(py, &self.unknown, PayloadKind::Investments, &self.raw)
    }

    #[doc = stub_doc!("Investments.raw")]
    #[getter]
    fn raw<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.parsed.json(py, self.raw.bytes())
    }

    #[doc = stub_doc!("Investments._repr_html_")]
    fn _repr_html_(slf: &Bound<'_, Self>) -> PyResult<String> {
        views::html(slf.as_any(), "investments_html")
    }

    #[doc = stub_doc!("Investments.__reduce__")]
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<ReducedWithMoney<'py>> {
        reduce_with_money::<Self>(py, &self.raw, self.money)
    }

    fn __repr__(&self) -> String {
        let rows = |table: &Py<PyTable>| table.get().len();
        let number = |x: Option<f64>| x.map_or("None".to_owned(), |x| x.to_string());
        format!(
            "Investments(value={}, cash={}, accounts={}, positions={}, transactions={}, securities={})",
            number(self.value),
            number(self.cash),
            rows(&self.accounts),
            rows(&self.positions),
            rows(&self.transactions),
            rows(&self.securities)
        )
    }
}

// The attributes payload (docs/protocol.md#attributes).
#[doc = stub_doc!("Attributes")]
#[pyclass(name = "Attributes", module = "bankfeed", frozen)]
pub(crate) struct PyAttributes {
    payload: Payload<Attributes>,
    parsed: Parsed,
    values: Py<PyTable>,
    detail: Py<PyTable>,
}

impl PyAttributes {
    pub(crate) fn new(py: Python<'_>, parts: AttributesResult) -> PyResult<Self> {
        Ok(PyAttributes {
            values: table(py, parts.values)?,
            detail: table(py, parts.detail)?,
            payload: parts.payload,
            parsed: Parsed::default(),
        })
    }
}

#[pymethods]
impl PyAttributes {
    #[doc = stub_doc!("Attributes.from_json")]
    #[staticmethod]
    #[pyo3(signature = (data, money="float"))]
    fn from_json(
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
        #[pyo3(from_py_with = args::money)] money: &str,
    ) -> PyResult<Self> {
        let money = MoneyType::parse(money).or_raise()?;
        PyAttributes::new(py, read_saved::<ops::Attributes>(py, data, money)?)
    }

    #[doc = stub_doc!("Attributes.values")]
    #[getter]
    fn values(&self, py: Python<'_>) -> Py<PyTable> {
        self.values.clone_ref(py)
    }

    #[doc = stub_doc!("Attributes.detail")]
    #[getter]
    fn detail(&self, py: Python<'_>) -> Py<PyTable> {
        self.detail.clone_ref(py)
    }

    #[doc = stub_doc!("Attributes.groups")]
    #[getter]
    fn groups(&self) -> Vec<String> {
        self.payload.data.groups.iter().map(|g| g.name.clone()).collect()
    }

    #[doc = stub_doc!("Attributes.request_id")]
    #[getter]
    fn request_id(&self) -> Option<&str> {
        self.payload.data.request_id.as_deref()
    }

    #[doc = stub_doc!("Attributes.to_dict")]
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let result = PyDict::new(py);
        for group in &self.payload.data.groups {
            let values = PyDict::new(py);
            for (name, value) in &group.values {
                values.set_item(name, convert::to_python(py, value)?)?;
            }
            result.set_item(&group.name, values)?;
        }
        Ok(result)
    }

    #[doc = stub_doc!("Attributes.__getitem__")]
    fn __getitem__<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = args::name)] name: String,
    ) -> PyResult<Bound<'py, PyAny>> {
        let found = self.payload.data.groups.iter().flat_map(|g| &g.values).find(|(n, _)| *n == name);
        match found {
            Some((_, value)) => convert::to_python(py, value),
            None => Err(pyo3::exceptions::PyKeyError::new_err(name)),
        }
    }

    #[doc = stub_doc!("Attributes.unknown_fields")]
    #[getter]
    #[expect(clippy::unused_self, reason = "a property of each result, as the other results' is")]
    fn unknown_fields<'py>(&self, py: Python<'py>) -> Bound<'py, PyDict> {
        PyDict::new(py)
    }

    #[doc = stub_doc!("Attributes.raw")]
    #[getter]
    fn raw<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.parsed.json(py, self.payload.raw.bytes())
    }

    #[doc = stub_doc!("Attributes._repr_html_")]
    fn _repr_html_(slf: &Bound<'_, Self>) -> PyResult<String> {
        views::html(slf.as_any(), "attributes_html")
    }

    #[doc = stub_doc!("Attributes.__reduce__")]
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<ReducedWithMoney<'py>> {
        reduce_with_money::<Self>(py, &self.payload.raw, self.payload.data.money)
    }

    fn __repr__(&self) -> String {
        let count: usize = self.payload.data.groups.iter().map(|g| g.values.len()).sum();
        format!("Attributes(groups={:?}, values={count})", self.groups())
    }
}

#[doc = stub_doc!("Accounts")]
#[pyclass(name = "Accounts", module = "bankfeed", frozen)]
pub(crate) struct PyAccounts {
    request_id: Option<String>,
    eft_eligible_ratio: Option<f64>,
    e_transfer_eligible_ratio: Option<f64>,
    raw: Raw,
    parsed: Parsed,
    unknown: std::sync::OnceLock<UnknownFields>,
    accounts: Py<PyTable>,
    transactions: Py<PyTable>,
    money: MoneyType,
}

impl PyAccounts {
    pub(crate) fn new(py: Python<'_>, parts: AccountsResult) -> PyResult<Self> {
        let t = parts.tables;
        Ok(PyAccounts {
            request_id: t.request_id,
            eft_eligible_ratio: t.eft_eligible_ratio,
            e_transfer_eligible_ratio: t.e_transfer_eligible_ratio,
            raw: parts.raw,
            parsed: Parsed::default(),
            unknown: std::sync::OnceLock::new(),
            accounts: table(py, t.accounts)?,
            transactions: table(py, t.transactions)?,
            money: t.money,
        })
    }
}

#[pymethods]
impl PyAccounts {
    #[doc = stub_doc!("Accounts.from_json")]
    #[staticmethod]
    #[pyo3(signature = (data, money="float"))]
    fn from_json(
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
        #[pyo3(from_py_with = args::money)] money: &str,
    ) -> PyResult<Self> {
        let money = MoneyType::parse(money).or_raise()?;
        PyAccounts::new(py, read_saved::<ops::AccountsDetail>(py, data, money)?)
    }

    #[doc = stub_doc!("Accounts.accounts")]
    #[getter]
    fn accounts(&self, py: Python<'_>) -> Py<PyTable> {
        self.accounts.clone_ref(py)
    }

    #[doc = stub_doc!("Accounts.transactions")]
    #[getter]
    fn transactions(&self, py: Python<'_>) -> Py<PyTable> {
        self.transactions.clone_ref(py)
    }

    #[doc = stub_doc!("Accounts.request_id")]
    #[getter]
    fn request_id(&self) -> Option<&str> {
        self.request_id.as_deref()
    }

    #[doc = stub_doc!("Accounts.eft_eligible_ratio")]
    #[getter]
    fn eft_eligible_ratio(&self) -> Option<f64> {
        self.eft_eligible_ratio
    }

    #[doc = stub_doc!("Accounts.e_transfer_eligible_ratio")]
    #[getter]
    fn e_transfer_eligible_ratio(&self) -> Option<f64> {
        self.e_transfer_eligible_ratio
    }

    #[doc = stub_doc!("Accounts.unknown_fields")]
    #[getter]
    fn unknown_fields<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        unknown_fields(py, &self.unknown, PayloadKind::Accounts, &self.raw)
    }

    #[doc = stub_doc!("Accounts.raw")]
    #[getter]
    fn raw<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.parsed.json(py, self.raw.bytes())
    }

    #[doc = stub_doc!("Accounts._repr_html_")]
    fn _repr_html_(slf: &Bound<'_, Self>) -> PyResult<String> {
        views::html(slf.as_any(), "accounts_html")
    }

    #[doc = stub_doc!("Accounts.__reduce__")]
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<ReducedWithMoney<'py>> {
        reduce_with_money::<Self>(py, &self.raw, self.money)
    }

    fn __repr__(&self) -> String {
        format!("Accounts(accounts={}, transactions={})", self.accounts.get().len(), self.transactions.get().len())
    }
}

#[doc = stub_doc!("Statements")]
#[pyclass(name = "Statements", module = "bankfeed", frozen)]
pub(crate) struct PyStatements {
    payload: Payload<Statements>,
    parsed: Parsed,
    unknown: std::sync::OnceLock<UnknownFields>,
    statements: Py<PyTable>,
}

impl PyStatements {
    pub(crate) fn new(py: Python<'_>, parts: StatementsResult) -> PyResult<Self> {
        Ok(PyStatements {
            statements: table(py, parts.statements)?,
            payload: parts.payload,
            parsed: Parsed::default(),
            unknown: std::sync::OnceLock::new(),
        })
    }
}

#[pymethods]
impl PyStatements {
    #[doc = stub_doc!("Statements.from_json")]
    #[staticmethod]
    fn from_json(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<Self> {
        // Statements hold no money.
        PyStatements::new(py, read_saved::<ops::Statements>(py, data, MoneyType::default())?)
    }

    #[doc = stub_doc!("Statements.statements")]
    #[getter]
    fn statements(&self, py: Python<'_>) -> Py<PyTable> {
        self.statements.clone_ref(py)
    }

    #[doc = stub_doc!("Statements.files")]
    #[getter]
    fn files<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let files = PyList::empty(py);
        for statement in self.payload.data.files().or_raise()? {
            let file = PyDict::new(py);
            file.set_item("account_number", statement.account_number)?;
            file.set_item("unique_id", statement.unique_id)?;
            file.set_item("file_type", statement.file_type)?;
            file.set_item("content", PyBytes::new(py, &statement.content))?;
            files.append(file)?;
        }
        Ok(files)
    }

    #[doc = stub_doc!("Statements.unknown_fields")]
    #[getter]
    fn unknown_fields<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        unknown_fields(py, &self.unknown, PayloadKind::Statements, &self.payload.raw)
    }

    #[doc = stub_doc!("Statements.raw")]
    #[getter]
    fn raw<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.parsed.json(py, self.payload.raw.bytes())
    }

    #[doc = stub_doc!("Statements._repr_html_")]
    fn _repr_html_(slf: &Bound<'_, Self>) -> PyResult<String> {
        views::html(slf.as_any(), "statements_html")
    }

    #[doc = stub_doc!("Statements.__reduce__")]
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Reduced<'py>> {
        reduce_to_json::<Self>(py, &self.payload.raw)
    }

    fn __repr__(&self) -> String {
        let count: usize = self.payload.data.statements_by_account.iter().map(|a| a.statements.len()).sum();
        format!("Statements(statements={count})")
    }
}

/// The conversions the data operations end with ([`crate::invocation::Convert`]): the same result
/// classes for both runners.
macro_rules! convert_parts {
    ($($class:ident from $parts:ident),* $(,)?) => {$(
        impl $class {
            pub(crate) fn to_py(
                py: Python<'_>,
                _client: &bankfeed::Client,
                _flavor: crate::invocation::Flavor,
                parts: $parts,
            ) -> PyResult<Py<PyAny>> {
                Ok(Py::new(py, $class::new(py, parts)?)?.into_any())
            }
        }

        impl ResultClass for $parts {
            const CONVERT: crate::invocation::Convert<$parts> = $class::to_py;
        }
    )*};
}

convert_parts!(
    PyInvestments from InvestmentsResult,
    PyAccounts from AccountsResult,
    PyAttributes from AttributesResult,
    PyStatements from StatementsResult,
);

/// The result class a core result becomes, for both runners.
pub(crate) trait ResultClass: Sized + Send + 'static {
    const CONVERT: crate::invocation::Convert<Self>;
}

/// A data operation of the core (crates/bankfeed/src/ops.rs) as the binding runs it: every one whose result has
/// a class. With it, a data method of a client or a session is one line
/// (docs/architecture.md#adding-an-operation).
pub(crate) trait PyDataOperation: DataOperation<Options: Send + 'static, Output: ResultClass> {
    const CONVERT: crate::invocation::Convert<Self::Output> = <Self::Output as ResultClass>::CONVERT;
}

impl<O: DataOperation<Options: Send + 'static, Output: ResultClass>> PyDataOperation for O {}

/// The tables of a result class by the name of their getter, in the order `bf.combine` gives
/// them (src/combine.rs); `KIND` is the class's Python name.
pub(crate) trait NamedTables {
    const KIND: &'static str;
    fn named_tables(&self) -> Vec<(&'static str, &Py<PyTable>)>;
    /// The RequestId the result came from: an export's `request_id` column.
    fn request_id(&self) -> Option<&str>;
}

impl NamedTables for PyInvestments {
    const KIND: &'static str = "Investments";
    fn named_tables(&self) -> Vec<(&'static str, &Py<PyTable>)> {
        vec![
            ("accounts", &self.accounts),
            ("positions", &self.positions),
            ("transactions", &self.transactions),
            ("securities", &self.securities),
        ]
    }
    fn request_id(&self) -> Option<&str> {
        self.request_id.as_deref()
    }
}

impl NamedTables for PyAccounts {
    const KIND: &'static str = "Accounts";
    fn named_tables(&self) -> Vec<(&'static str, &Py<PyTable>)> {
        vec![("accounts", &self.accounts), ("transactions", &self.transactions)]
    }
    fn request_id(&self) -> Option<&str> {
        self.request_id.as_deref()
    }
}

impl NamedTables for PyAttributes {
    const KIND: &'static str = "Attributes";
    fn named_tables(&self) -> Vec<(&'static str, &Py<PyTable>)> {
        vec![("values", &self.values), ("detail", &self.detail)]
    }
    fn request_id(&self) -> Option<&str> {
        self.payload.data.request_id.as_deref()
    }
}

impl NamedTables for PyStatements {
    const KIND: &'static str = "Statements";
    fn named_tables(&self) -> Vec<(&'static str, &Py<PyTable>)> {
        vec![("statements", &self.statements)]
    }
    fn request_id(&self) -> Option<&str> {
        self.payload.data.request_id.as_deref()
    }
}

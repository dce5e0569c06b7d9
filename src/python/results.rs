//! Result objects of the data operations: typed tables plus the payload as sent (`.raw`).
//! Tables are built in Rust, off the GIL, before the result crosses into Python.

use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyList, PyString};

use super::args;
use super::convert::{self, Parsed};
use super::table::PyTable;
use crate::data::accounts::Statements;
use crate::data::attributes::Attributes;
use crate::data::{Payload, Raw};
use crate::tables::{AccountsResult, AttributesResult, InvestmentsResult, StatementsResult, Table};

/// What each result class is built from: the core's results, tables built off the GIL.
pub(crate) type InvestmentsParts = InvestmentsResult;
pub(crate) type AccountsParts = AccountsResult;
pub(crate) type StatementsParts = StatementsResult;
pub(crate) type AttributesParts = AttributesResult;

fn table(py: Python<'_>, table: Table) -> PyResult<Py<PyTable>> {
    Py::new(py, PyTable::new(table))
}

/// The bytes of a payload given as `bytes`, `bytearray` or `str`, copied once.
///
/// Not extracted as a `Vec<u8>`: that walks the payload as a Python sequence, one int object
/// per byte, which costs more than parsing it.
fn payload_raw(data: &Bound<'_, PyAny>) -> PyResult<Raw> {
    let bytes: std::sync::Arc<[u8]> = if let Ok(bytes) = data.cast::<PyBytes>() {
        bytes.as_bytes().into()
    } else if let Ok(text) = data.cast::<PyString>() {
        super::args::str_of("data", None, text)?.as_bytes().into()
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

/// Reads a saved payload into its parts off the GIL.
fn read_json<P: Send>(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    read: fn(Raw) -> Result<P, crate::Error>,
) -> PyResult<P> {
    let raw = payload_raw(data)?;
    Ok(py.detach(move || read(raw))?)
}

/// What the result classes pickle as: their own `from_json` and the payload's bytes, so that a
/// copy is the same result, read again (docs/architecture.md#pickling).
type Reduced<'py> = (Bound<'py, PyAny>, (Bound<'py, PyBytes>,));

fn reduce_to_json<'py, T: pyo3::PyTypeInfo>(py: Python<'py>, raw: &Raw) -> PyResult<Reduced<'py>> {
    Ok((py.get_type::<T>().getattr("from_json")?, (PyBytes::new(py, raw.bytes()),)))
}

/// The Investments payload (docs/protocol.md#investments) as tables.
///
///     inv = client.investments(login_id)
///     inv.value, inv.cash
///     inv.positions.to_pandas()      # account and security joined
#[pyclass(name = "Investments", module = "bankfeed", frozen)]
pub(crate) struct PyInvestments {
    value: Option<f64>,
    cash: Option<f64>,
    request_id: Option<String>,
    raw: Raw,
    parsed: Parsed,
    accounts: Py<PyTable>,
    positions: Py<PyTable>,
    transactions: Py<PyTable>,
    securities: Py<PyTable>,
}

impl PyInvestments {
    pub(crate) fn new(py: Python<'_>, parts: InvestmentsParts) -> PyResult<Self> {
        let t = parts.tables;
        Ok(PyInvestments {
            value: t.value,
            cash: t.cash,
            request_id: t.request_id,
            raw: parts.raw,
            parsed: Parsed::default(),
            accounts: table(py, t.accounts)?,
            positions: table(py, t.positions)?,
            transactions: table(py, t.transactions)?,
            securities: table(py, t.securities)?,
        })
    }
}

#[pymethods]
impl PyInvestments {
    /// Reads an Investments payload from its JSON (``bytes``, ``bytearray`` or ``str``), e.g. a saved answer.
    #[staticmethod]
    fn from_json(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<Self> {
        let parts = read_json(py, data, InvestmentsParts::read)?;
        PyInvestments::new(py, parts)
    }

    /// `Value`: the total value of the accounts.
    #[getter]
    fn value(&self) -> Option<f64> {
        self.value
    }

    /// `Cash`: the total cash of the accounts.
    #[getter]
    fn cash(&self) -> Option<f64> {
        self.cash
    }

    /// The RequestId of the answer, when it had one.
    #[getter]
    fn request_id(&self) -> Option<&str> {
        self.request_id.as_deref()
    }

    /// One row per account.
    #[getter]
    fn accounts(&self, py: Python<'_>) -> Py<PyTable> {
        self.accounts.clone_ref(py)
    }

    /// One row per position, with its account and its security joined.
    #[getter]
    fn positions(&self, py: Python<'_>) -> Py<PyTable> {
        self.positions.clone_ref(py)
    }

    /// One row per transaction, with its account and its security joined.
    #[getter]
    fn transactions(&self, py: Python<'_>) -> Py<PyTable> {
        self.transactions.clone_ref(py)
    }

    /// One row per security.
    #[getter]
    fn securities(&self, py: Python<'_>) -> Py<PyTable> {
        self.securities.clone_ref(py)
    }

    /// The payload exactly as the server sent it (built on first access, then kept).
    #[getter]
    fn raw<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.parsed.json(py, self.raw.bytes())
    }

    /// Pickles as the payload's bytes; the copy is read again with ``from_json``.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Reduced<'py>> {
        reduce_to_json::<Self>(py, &self.raw)
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

/// Attributes (docs/protocol.md#attributes) as tables.
///
///     attrs = client.attributes(login_id, package="income")
///     attrs.values.to_pandas()   # group, login_id, attribute, value (null for NONE_DETECTED), raw_value
///     attrs["count_nsf"]         # the value of an attribute (first group that has it)
#[pyclass(name = "Attributes", module = "bankfeed", frozen)]
pub(crate) struct PyAttributes {
    payload: Payload<Attributes>,
    parsed: Parsed,
    values: Py<PyTable>,
    detail: Py<PyTable>,
}

impl PyAttributes {
    pub(crate) fn new(py: Python<'_>, parts: AttributesParts) -> PyResult<Self> {
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
    /// Reads an attributes payload from its JSON (``bytes``, ``bytearray`` or ``str``).
    #[staticmethod]
    fn from_json(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<Self> {
        let parts = read_json(py, data, |raw| AttributesParts::read("Attributes", raw))?;
        PyAttributes::new(py, parts)
    }

    /// One row per group and attribute.
    #[getter]
    fn values(&self, py: Python<'_>) -> Py<PyTable> {
        self.values.clone_ref(py)
    }

    /// One row per transaction behind an attribute (when `detail=` asked for it).
    #[getter]
    fn detail(&self, py: Python<'_>) -> Py<PyTable> {
        self.detail.clone_ref(py)
    }

    /// The group names, as the server sent them.
    #[getter]
    fn groups(&self) -> Vec<String> {
        self.payload.data.groups.iter().map(|g| g.name.clone()).collect()
    }

    /// The RequestId of the answer, when it had one.
    #[getter]
    fn request_id(&self) -> Option<&str> {
        self.payload.data.request_id.as_deref()
    }

    /// `{group: {attribute: value}}` with values as sent (numbers, or strings such as NONE_DETECTED).
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

    /// The value of `name` as sent, from the first group that has it.
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

    /// The payload exactly as the server sent it.
    #[getter]
    fn raw<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.parsed.json(py, self.payload.raw.bytes())
    }

    /// Pickles as the payload's bytes; the copy is read again with ``from_json``.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Reduced<'py>> {
        reduce_to_json::<Self>(py, &self.payload.raw)
    }

    fn __repr__(&self) -> String {
        let count: usize = self.payload.data.groups.iter().map(|g| g.values.len()).sum();
        format!("Attributes(groups={:?}, values={count})", self.groups())
    }
}

/// GetAccountsDetail or GetAccountsSummary as tables.
///
///     detail = session.accounts_detail(with_transactions=True, days="Days365")
///     detail.transactions.to_pandas()   # one row per transaction, its account joined
#[pyclass(name = "Accounts", module = "bankfeed", frozen)]
pub(crate) struct PyAccounts {
    request_id: Option<String>,
    eft_eligible_ratio: Option<f64>,
    e_transfer_eligible_ratio: Option<f64>,
    raw: Raw,
    parsed: Parsed,
    accounts: Py<PyTable>,
    transactions: Py<PyTable>,
}

impl PyAccounts {
    pub(crate) fn new(py: Python<'_>, parts: AccountsParts) -> PyResult<Self> {
        let t = parts.tables;
        Ok(PyAccounts {
            request_id: t.request_id,
            eft_eligible_ratio: t.eft_eligible_ratio,
            e_transfer_eligible_ratio: t.e_transfer_eligible_ratio,
            raw: parts.raw,
            parsed: Parsed::default(),
            accounts: table(py, t.accounts)?,
            transactions: table(py, t.transactions)?,
        })
    }
}

#[pymethods]
impl PyAccounts {
    /// Reads a GetAccountsDetail or GetAccountsSummary payload from its JSON (``bytes``, ``bytearray`` or ``str``).
    #[staticmethod]
    fn from_json(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<Self> {
        let parts = read_json(py, data, |raw| AccountsParts::read("GetAccountsDetail", raw))?;
        PyAccounts::new(py, parts)
    }

    /// One row per account.
    #[getter]
    fn accounts(&self, py: Python<'_>) -> Py<PyTable> {
        self.accounts.clone_ref(py)
    }

    /// One row per transaction, with its account joined (empty for a summary).
    #[getter]
    fn transactions(&self, py: Python<'_>) -> Py<PyTable> {
        self.transactions.clone_ref(py)
    }

    /// The RequestId of the answer, when it had one.
    #[getter]
    fn request_id(&self) -> Option<&str> {
        self.request_id.as_deref()
    }

    /// Summary only: the share of EFT-eligible accounts (0..1), when sent at the top level.
    #[getter]
    fn eft_eligible_ratio(&self) -> Option<f64> {
        self.eft_eligible_ratio
    }

    /// Summary only: the share of e-transfer-eligible accounts (0..1), when sent at the top level.
    #[getter]
    fn e_transfer_eligible_ratio(&self) -> Option<f64> {
        self.e_transfer_eligible_ratio
    }

    /// The payload exactly as the server sent it.
    #[getter]
    fn raw<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.parsed.json(py, self.raw.bytes())
    }

    /// Pickles as the payload's bytes; the copy is read again with ``from_json``.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Reduced<'py>> {
        reduce_to_json::<Self>(py, &self.raw)
    }

    fn __repr__(&self) -> String {
        format!("Accounts(accounts={}, transactions={})", self.accounts.get().len(), self.transactions.get().len())
    }
}

/// GetStatements: a table of statements, and the PDF files.
#[pyclass(name = "Statements", module = "bankfeed", frozen)]
pub(crate) struct PyStatements {
    payload: Payload<Statements>,
    parsed: Parsed,
    statements: Py<PyTable>,
}

impl PyStatements {
    pub(crate) fn new(py: Python<'_>, parts: StatementsParts) -> PyResult<Self> {
        Ok(PyStatements { statements: table(py, parts.statements)?, payload: parts.payload, parsed: Parsed::default() })
    }
}

#[pymethods]
impl PyStatements {
    /// Reads a GetStatements payload from its JSON (``bytes``, ``bytearray`` or ``str``).
    #[staticmethod]
    fn from_json(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<Self> {
        let parts = read_json(py, data, StatementsParts::read)?;
        PyStatements::new(py, parts)
    }

    /// One row per statement: account_number, unique_id, file_type.
    #[getter]
    fn statements(&self, py: Python<'_>) -> Py<PyTable> {
        self.statements.clone_ref(py)
    }

    /// Every statement as a dict with `account_number`, `unique_id`, `file_type` and the decoded
    /// `content` (bytes).
    #[getter]
    fn files<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let files = PyList::empty(py);
        for statement in self.payload.data.files()? {
            let file = PyDict::new(py);
            file.set_item("account_number", statement.account_number)?;
            file.set_item("unique_id", statement.unique_id)?;
            file.set_item("file_type", statement.file_type)?;
            file.set_item("content", PyBytes::new(py, &statement.content))?;
            files.append(file)?;
        }
        Ok(files)
    }

    /// The payload exactly as the server sent it.
    #[getter]
    fn raw<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.parsed.json(py, self.payload.raw.bytes())
    }

    /// Pickles as the payload's bytes; the copy is read again with ``from_json``.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Reduced<'py>> {
        reduce_to_json::<Self>(py, &self.payload.raw)
    }

    fn __repr__(&self) -> String {
        let count: usize = self.payload.data.statements_by_account.iter().map(|a| a.statements.len()).sum();
        format!("Statements(statements={count})")
    }
}

/// The conversions the data operations end with ([`super::operation::Convert`]): the same result
/// classes for both runners.
macro_rules! convert_parts {
    ($($class:ident from $parts:ident),* $(,)?) => {$(
        impl $class {
            pub(crate) fn to_py(
                py: Python<'_>,
                _client: &crate::Client,
                _flavor: super::operation::Flavor,
                parts: $parts,
            ) -> PyResult<Py<PyAny>> {
                Ok(Py::new(py, $class::new(py, parts)?)?.into_any())
            }
        }

        impl ResultClass for $parts {
            const CONVERT: super::operation::Convert<$parts> = $class::to_py;
        }
    )*};
}

convert_parts!(
    PyInvestments from InvestmentsParts,
    PyAccounts from AccountsParts,
    PyAttributes from AttributesParts,
    PyStatements from StatementsParts,
);

/// The result class a core result becomes, for both runners.
pub(crate) trait ResultClass: Sized + Send + 'static {
    const CONVERT: super::operation::Convert<Self>;
}

/// A data operation of the core (src/ops.rs) as the binding runs it: every one whose result has
/// a class. With it, a data method of a client or a session is one line
/// (docs/architecture.md#adding-an-operation).
pub(crate) trait PyDataOp: crate::ops::DataOp<Options: Send + 'static, Output: ResultClass> {
    const CONVERT: super::operation::Convert<Self::Output> = <Self::Output as ResultClass>::CONVERT;
}

impl<O: crate::ops::DataOp<Options: Send + 'static, Output: ResultClass>> PyDataOp for O {}

/// The tables of a result class by the name of their getter, in the order `bf.combine` gives
/// them (src/python/bulk.rs); `KIND` is the class's Python name.
pub(crate) trait NamedTables {
    const KIND: &'static str;
    fn named_tables(&self) -> Vec<(&'static str, &Py<PyTable>)>;
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
}

impl NamedTables for PyAccounts {
    const KIND: &'static str = "Accounts";
    fn named_tables(&self) -> Vec<(&'static str, &Py<PyTable>)> {
        vec![("accounts", &self.accounts), ("transactions", &self.transactions)]
    }
}

impl NamedTables for PyAttributes {
    const KIND: &'static str = "Attributes";
    fn named_tables(&self) -> Vec<(&'static str, &Py<PyTable>)> {
        vec![("values", &self.values), ("detail", &self.detail)]
    }
}

impl NamedTables for PyStatements {
    const KIND: &'static str = "Statements";
    fn named_tables(&self) -> Vec<(&'static str, &Py<PyTable>)> {
        vec![("statements", &self.statements)]
    }
}

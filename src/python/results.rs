//! Result objects of the data operations: typed tables plus the payload as sent (`.raw`).
//! Tables are built in Rust, off the GIL, before the result crosses into Python.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use super::convert;
use super::table::PyTable;
use crate::data::accounts::{Accounts, Statements};
use crate::data::attributes::Attributes;
use crate::data::investments::Investments;
use crate::data::Payload;
use crate::tables::{self, Table};

fn table(py: Python<'_>, table: Table) -> PyResult<Py<PyTable>> {
    Py::new(py, PyTable::new(table))
}

/// The bytes of a payload given as `bytes` or `str`.
fn payload_bytes(data: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if let Ok(text) = data.extract::<String>() {
        return Ok(text.into_bytes());
    }
    data.extract::<Vec<u8>>()
        .map_err(|_| pyo3::exceptions::PyTypeError::new_err("data must be the payload as bytes or str"))
}

/// Parses `bytes` as `operation`'s payload off the GIL, then builds its parts.
fn parse_parts<T: serde::de::DeserializeOwned, P: From<Payload<T>> + Send>(
    py: Python<'_>,
    operation: &'static str,
    bytes: Vec<u8>,
) -> PyResult<P> {
    py.detach(move || {
        let data = crate::http::decode::<T>(operation, 200, &bytes)?;
        Ok(P::from(Payload { data, raw: crate::data::Raw(bytes.into()) }))
    })
    .map_err(|e: crate::Error| super::errors::to_py(py, e, None))
}

/// Investments with its tables built (done before the GIL is taken).
pub(crate) struct InvestmentsParts {
    payload: Payload<Investments>,
    tables: [Table; 4],
}

impl From<Payload<Investments>> for InvestmentsParts {
    fn from(payload: Payload<Investments>) -> Self {
        let data = &payload.data;
        let tables = [
            tables::investment_accounts_table(data),
            tables::positions_table(data),
            tables::investment_transactions_table(data),
            tables::securities_table(data),
        ];
        InvestmentsParts { payload, tables }
    }
}

/// The Investments payload (interface-v3.md 2.7) as tables.
///
///     inv = client.investments(login_id)
///     inv.value, inv.cash
///     inv.positions.to_pandas()      # account and security joined
#[pyclass(name = "Investments", module = "bankfeed", frozen)]
pub(crate) struct PyInvestments {
    value: Option<f64>,
    cash: Option<f64>,
    request_id: Option<String>,
    raw: crate::data::Raw,
    /// accounts, positions, transactions, securities
    tables: [Py<PyTable>; 4],
}

impl PyInvestments {
    pub(crate) fn new(py: Python<'_>, parts: InvestmentsParts) -> PyResult<Self> {
        let [a, p, t, s] = parts.tables;
        let data = parts.payload.data;
        Ok(PyInvestments {
            value: data.value,
            cash: data.cash,
            request_id: data.request_id,
            raw: parts.payload.raw,
            tables: [table(py, a)?, table(py, p)?, table(py, t)?, table(py, s)?],
        })
    }
}

#[pymethods]
impl PyInvestments {
    /// Reads an Investments payload from its JSON (``bytes`` or ``str``), e.g. a saved answer.
    #[staticmethod]
    fn from_json(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<Self> {
        let parts: InvestmentsParts = parse_parts::<Investments, _>(py, "Investments", payload_bytes(data)?)?;
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

    #[getter]
    fn request_id(&self) -> Option<&str> {
        self.request_id.as_deref()
    }

    /// One row per account.
    #[getter]
    fn accounts(&self, py: Python<'_>) -> Py<PyTable> {
        self.tables[0].clone_ref(py)
    }

    /// One row per position, with its account and its security joined.
    #[getter]
    fn positions(&self, py: Python<'_>) -> Py<PyTable> {
        self.tables[1].clone_ref(py)
    }

    /// One row per transaction, with its account and its security joined.
    #[getter]
    fn transactions(&self, py: Python<'_>) -> Py<PyTable> {
        self.tables[2].clone_ref(py)
    }

    /// One row per security.
    #[getter]
    fn securities(&self, py: Python<'_>) -> Py<PyTable> {
        self.tables[3].clone_ref(py)
    }

    /// The payload exactly as the server sent it (built when asked for).
    #[getter]
    fn raw<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::raw_field(py, self.raw.bytes(), None)
    }

    fn __repr__(&self) -> String {
        let rows = |i: usize| self.tables[i].get().len();
        let number = |x: Option<f64>| x.map_or("None".to_owned(), |x| x.to_string());
        format!(
            "Investments(value={}, cash={}, accounts={}, positions={}, transactions={}, securities={})",
            number(self.value), number(self.cash), rows(0), rows(1), rows(2), rows(3)
        )
    }
}

/// Attributes with their tables built.
pub(crate) struct AttributesParts {
    payload: Payload<Attributes>,
    values: Table,
    detail: Table,
}

impl From<Payload<Attributes>> for AttributesParts {
    fn from(payload: Payload<Attributes>) -> Self {
        let values = tables::attribute_values_table(&payload.data);
        let detail = tables::attribute_detail_table(&payload.data);
        AttributesParts { payload, values, detail }
    }
}

/// Attributes (interface-v3.md 2.8) as tables.
///
///     attrs = client.attributes(login_id, package="income")
///     attrs.values.to_pandas()   # group, login_id, attribute, value (NaN for NONE_DETECTED), raw_value
///     attrs["count_nsf"]         # the value of an attribute (first group that has it)
#[pyclass(name = "Attributes", module = "bankfeed", frozen)]
pub(crate) struct PyAttributes {
    payload: Payload<Attributes>,
    values: Py<PyTable>,
    detail: Py<PyTable>,
}

impl PyAttributes {
    pub(crate) fn new(py: Python<'_>, parts: AttributesParts) -> PyResult<Self> {
        Ok(PyAttributes { values: table(py, parts.values)?, detail: table(py, parts.detail)?, payload: parts.payload })
    }
}

#[pymethods]
impl PyAttributes {
    /// Reads an attributes payload from its JSON (``bytes`` or ``str``).
    #[staticmethod]
    fn from_json(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<Self> {
        let bytes = payload_bytes(data)?;
        let parsed = py.detach(move || {
            let data = Attributes::parse(&bytes)?;
            Ok::<_, String>(AttributesParts::from(Payload { data, raw: crate::data::Raw(bytes.into()) }))
        });
        let parts = parsed.map_err(|message| {
            super::errors::to_py(py, crate::Error::Decode { operation: "Attributes".into(), status: 200, message, snippet: String::new() }, None)
        })?;
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
    fn __getitem__<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        let found = self.payload.data.groups.iter().flat_map(|g| &g.values).find(|(n, _)| n == name);
        match found {
            Some((_, value)) => convert::to_python(py, value),
            None => Err(pyo3::exceptions::PyKeyError::new_err(name.to_owned())),
        }
    }

    /// The payload exactly as the server sent it.
    #[getter]
    fn raw<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::raw_field(py, self.payload.raw.bytes(), None)
    }

    fn __repr__(&self) -> String {
        let count: usize = self.payload.data.groups.iter().map(|g| g.values.len()).sum();
        format!("Attributes(groups={:?}, values={count})", self.groups())
    }
}

/// Accounts with their tables built.
pub(crate) struct AccountsParts {
    payload: Payload<Accounts>,
    accounts: Table,
    transactions: Table,
}

impl From<Payload<Accounts>> for AccountsParts {
    fn from(payload: Payload<Accounts>) -> Self {
        let accounts = tables::accounts_table(&payload.data);
        let transactions = tables::bank_transactions_table(&payload.data);
        AccountsParts { payload, accounts, transactions }
    }
}

/// GetAccountsDetail or GetAccountsSummary as tables.
///
///     detail = session.accounts_detail(with_transactions=True, days="Days365")
///     detail.transactions.to_pandas()   # one row per transaction, its account joined
#[pyclass(name = "Accounts", module = "bankfeed", frozen)]
pub(crate) struct PyAccounts {
    payload: Payload<Accounts>,
    accounts: Py<PyTable>,
    transactions: Py<PyTable>,
}

impl PyAccounts {
    pub(crate) fn new(py: Python<'_>, parts: AccountsParts) -> PyResult<Self> {
        Ok(PyAccounts {
            accounts: table(py, parts.accounts)?,
            transactions: table(py, parts.transactions)?,
            payload: parts.payload,
        })
    }
}

#[pymethods]
impl PyAccounts {
    /// Reads a GetAccountsDetail or GetAccountsSummary payload from its JSON (``bytes`` or ``str``).
    #[staticmethod]
    fn from_json(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<Self> {
        let parts: AccountsParts = parse_parts::<Accounts, _>(py, "GetAccountsDetail", payload_bytes(data)?)?;
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

    #[getter]
    fn request_id(&self) -> Option<&str> {
        self.payload.data.request_id.as_deref()
    }

    /// Summary only: the share of EFT-eligible accounts (0..1), when sent at the top level.
    #[getter]
    fn eft_eligible_ratio(&self) -> Option<f64> {
        self.payload.data.eft_eligible_ratio
    }

    /// Summary only: the share of e-transfer-eligible accounts (0..1), when sent at the top level.
    #[getter]
    fn e_transfer_eligible_ratio(&self) -> Option<f64> {
        self.payload.data.e_transfer_eligible_ratio
    }

    /// The payload exactly as the server sent it.
    #[getter]
    fn raw<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::raw_field(py, self.payload.raw.bytes(), None)
    }

    fn __repr__(&self) -> String {
        let transactions: usize = self.payload.data.accounts.iter().map(|a| a.transactions.len()).sum();
        format!("Accounts(accounts={}, transactions={transactions})", self.payload.data.accounts.len())
    }
}

/// GetStatements: a table of statements, and the PDF files.
#[pyclass(name = "Statements", module = "bankfeed", frozen)]
pub(crate) struct PyStatements {
    payload: Payload<Statements>,
    statements: Py<PyTable>,
}

pub(crate) struct StatementsParts {
    payload: Payload<Statements>,
    statements: Table,
}

impl From<Payload<Statements>> for StatementsParts {
    fn from(payload: Payload<Statements>) -> Self {
        let statements = tables::statements_table(&payload.data);
        StatementsParts { payload, statements }
    }
}

impl PyStatements {
    pub(crate) fn new(py: Python<'_>, parts: StatementsParts) -> PyResult<Self> {
        Ok(PyStatements { statements: table(py, parts.statements)?, payload: parts.payload })
    }
}

#[pymethods]
impl PyStatements {
    /// One row per statement: account_number, unique_id, file_type.
    #[getter]
    fn statements(&self, py: Python<'_>) -> Py<PyTable> {
        self.statements.clone_ref(py)
    }

    /// Every statement as a dict with `account_number`, `unique_id`, `file_type` and the decoded
    /// `content` (bytes).
    #[getter]
    fn files<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        use base64::Engine;
        let files = PyList::empty(py);
        for account in &self.payload.data.statements_by_account {
            for statement in &account.statements {
                let encoded = statement.base64_bytes.as_deref().unwrap_or_default();
                let content = base64::engine::general_purpose::STANDARD.decode(encoded.trim()).map_err(|e| {
                    pyo3::exceptions::PyValueError::new_err(format!(
                        "statement {:?} is not valid base64: {e}",
                        statement.unique_id.as_deref().unwrap_or("?")
                    ))
                })?;
                let file = PyDict::new(py);
                file.set_item("account_number", &account.account_number)?;
                file.set_item("unique_id", &statement.unique_id)?;
                file.set_item("file_type", &statement.file_type)?;
                file.set_item("content", PyBytes::new(py, &content))?;
                files.append(file)?;
            }
        }
        Ok(files)
    }

    /// The payload exactly as the server sent it.
    #[getter]
    fn raw<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::raw_field(py, self.payload.raw.bytes(), None)
    }

    fn __repr__(&self) -> String {
        let count: usize = self.payload.data.statements_by_account.iter().map(|a| a.statements.len()).sum();
        format!("Statements(statements={count})")
    }
}

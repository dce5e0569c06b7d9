//! `Session`: an open session and the data operations it serves.

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use super::args;
use super::blocking;
use super::challenge::PyChallenge;
use super::client::PyClient;
use super::convert::{self, Parsed};
use super::errors::PyBankfeedError;
use super::results::{
    AccountsParts, AttributesParts, InvestmentsParts, PyAccounts, PyAttributes, PyInvestments, PyStatements,
    StatementsParts,
};
use crate::authorize::{Session, Step};
use crate::data::requests::{AccountsDetailOptions, AccountsSummaryOptions, StatementsOptions};
use crate::Client;

/// An open session: its `request_id` serves the data operations.
///
///     session = client.authorize_cached(login_id)
///     inv = session.investments()
///     detail = session.accounts_detail(days="Days365")
#[pyclass(name = "Session", module = "bankfeed", frozen)]
pub(crate) struct PySession {
    client: Client,
    session: Session,
    raw: Parsed,
}

/// What `Session._restore` takes: the client, the 200 body, the RequestId and the LoginId.
type SessionState<'py> = (Py<PyClient>, Bound<'py, PyBytes>, String, Option<String>);

#[pymethods]
impl PySession {
    /// The RequestId of the session.
    #[getter]
    fn request_id(&self) -> &str {
        &self.session.request_id
    }

    /// The LoginId of the saved connection.
    #[getter]
    fn login_id(&self) -> Option<&str> {
        self.session.login_id.as_deref()
    }

    /// `Login` as sent (`Id`, `Username`, `IsScheduledRefresh`, `LastRefresh`, `Type`), or None.
    #[getter]
    fn login<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.raw.field(py, &self.session.raw, "Login")
    }

    /// `Login.LastRefresh` as an aware UTC datetime (the service omits the zone: it is UTC), or None.
    #[getter]
    fn last_refresh<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, pyo3::types::PyDateTime>>> {
        let text = self.session.login.as_ref().and_then(|l| l.last_refresh.as_deref());
        text.and_then(crate::data::dates::parse_timestamp).map(|micros| convert::utc_datetime(py, micros)).transpose()
    }

    /// `Institution` as sent: a name, or a dict with `Id` and `Name`.
    #[getter]
    fn institution<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.raw.field(py, &self.session.raw, "Institution")
    }

    /// `Links` as sent: dicts with `rel`, `href` and `example` (empty when none came).
    #[getter]
    fn links<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let links = self.raw.field(py, &self.session.raw, "Links")?;
        if links.is_none() {
            return Ok(pyo3::types::PyList::empty(py).into_any());
        }
        Ok(links)
    }

    /// The 200 body exactly as the server sent it.
    #[getter]
    fn raw<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.raw.json(py, &self.session.raw)
    }

    /// Investments of this session (202 answers polled until 200), as tables.
    fn investments(&self, py: Python<'_>) -> PyResult<PyInvestments> {
        let (client, session) = (self.client.clone(), self.session.clone());
        let parts = self.run(py, async move { client.investments(&session).await.map(InvestmentsParts::from) })?;
        PyInvestments::new(py, parts)
    }

    /// GetAccountsDetail (202 polled): accounts and transactions as tables.
    /// ``days`` is ``"Days90"`` (the service's default) or ``"Days365"``.
    #[pyo3(signature = (*, with_transactions=None, days=None, with_account_identity=None, with_kyc=None,
                        accounts_filter=None, with_details_and_banking_statements=None,
                        number_of_banking_statements=None))]
    #[allow(clippy::too_many_arguments)]
    fn accounts_detail(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::with_transactions)] with_transactions: Option<bool>,
        #[pyo3(from_py_with = args::days)] days: Option<String>,
        #[pyo3(from_py_with = args::with_account_identity)] with_account_identity: Option<bool>,
        #[pyo3(from_py_with = args::with_kyc)] with_kyc: Option<bool>,
        #[pyo3(from_py_with = args::accounts_filter)] accounts_filter: Option<Vec<String>>,
        #[pyo3(from_py_with = args::with_details_and_banking_statements)] with_details_and_banking_statements: Option<
            bool,
        >,
        #[pyo3(from_py_with = args::number_of_banking_statements)] number_of_banking_statements: Option<String>,
    ) -> PyResult<PyAccounts> {
        let options = AccountsDetailOptions {
            with_transactions,
            days,
            with_account_identity,
            with_kyc,
            accounts_filter: accounts_filter.unwrap_or_default(),
            with_details_and_banking_statements,
            number_of_banking_statements,
        };
        let (client, session) = (self.client.clone(), self.session.clone());
        let parts =
            self.run(py, async move { client.accounts_detail(&session, &options).await.map(AccountsParts::from) })?;
        PyAccounts::new(py, parts)
    }

    /// GetAccountsSummary (202 polled): accounts as a table.
    #[pyo3(signature = (*, with_balance=None, with_account_identity=None))]
    fn accounts_summary(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::with_balance)] with_balance: Option<bool>,
        #[pyo3(from_py_with = args::with_account_identity)] with_account_identity: Option<bool>,
    ) -> PyResult<PyAccounts> {
        let options = AccountsSummaryOptions { with_balance, with_account_identity };
        let (client, session) = (self.client.clone(), self.session.clone());
        let parts =
            self.run(py, async move { client.accounts_summary(&session, &options).await.map(AccountsParts::from) })?;
        PyAccounts::new(py, parts)
    }

    /// GetStatements (202 polled). ``number_of_statements``: ``"MostRecent"``, ``"Months3"`` or ``"Months12"``.
    #[pyo3(signature = (*, number_of_statements=None, accounts_filter=None))]
    fn statements(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::number_of_statements)] number_of_statements: Option<String>,
        #[pyo3(from_py_with = args::accounts_filter)] accounts_filter: Option<Vec<String>>,
    ) -> PyResult<PyStatements> {
        let options = StatementsOptions { number_of_statements, accounts_filter: accounts_filter.unwrap_or_default() };
        let (client, session) = (self.client.clone(), self.session.clone());
        let parts =
            self.run(py, async move { client.statements(&session, &options).await.map(StatementsParts::from) })?;
        PyStatements::new(py, parts)
    }

    /// Attributes of this session: account detail polled first, then the attributes call
    /// (see ``Client.attributes`` for the arguments).
    #[pyo3(signature = (attributes=None, *, package=None, filters=None, detail=None, account_filter=None))]
    fn attributes(
        &self,
        py: Python<'_>,
        attributes: Option<Bound<'_, PyAny>>,
        #[pyo3(from_py_with = args::package)] package: Option<String>,
        filters: Option<Bound<'_, PyAny>>,
        #[pyo3(from_py_with = args::detail)] detail: Option<Vec<String>>,
        #[pyo3(from_py_with = args::account_filter)] account_filter: Option<Vec<String>>,
    ) -> PyResult<PyAttributes> {
        let query = convert::attributes_query(attributes, package, filters, detail, account_filter)?;
        let (client, session) = (self.client.clone(), self.session.clone());
        let parts =
            self.run(py, async move { client.attributes(&session, &query).await.map(AttributesParts::from) })?;
        PyAttributes::new(py, parts)
    }

    /// Pickles as its client (keys included, see ``Client``), its ids and the 200 body, so that
    /// the copy serves the data operations and gives the same ``raw`` (docs/architecture.md#pickling).
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, SessionState<'py>)> {
        let client = Py::new(py, PyClient { client: self.client.clone() })?;
        let body = PyBytes::new(py, &self.session.raw);
        let restore = py.get_type::<Self>().getattr("_restore")?;
        Ok((restore, (client, body, self.session.request_id.clone(), self.session.login_id.clone())))
    }

    /// The session `__reduce__` described; the body is read again as a live answer is.
    #[staticmethod]
    fn _restore(
        client: &Bound<'_, PyClient>,
        body: &Bound<'_, PyBytes>,
        request_id: String,
        login_id: Option<String>,
    ) -> PyResult<Self> {
        let mut session = Session::from_body(body.as_bytes(), login_id.as_deref())?;
        session.request_id = request_id;
        session.login_id = login_id;
        Ok(PySession { client: client.get().client.clone(), session, raw: Parsed::default() })
    }

    fn __repr__(&self) -> String {
        format!(
            "Session(request_id={:?}, login_id={:?})",
            self.session.request_id,
            self.session.login_id.as_deref().unwrap_or("None")
        )
    }
}

impl PySession {
    fn run<T: Send + 'static>(
        &self,
        py: Python<'_>,
        future: impl std::future::Future<Output = Result<T, crate::Error>> + Send + 'static,
    ) -> Result<T, PyBankfeedError> {
        blocking::run_plain(py, Some(&self.client), future)
    }
}

/// A step as Python sees it: a `Session` or a `Challenge`.
pub(crate) fn step_to_py(py: Python<'_>, client: &Client, step: Step) -> PyResult<Py<PyAny>> {
    Ok(match step {
        Step::Session(session) => session_to_py(py, client, session)?.into_any(),
        Step::Challenge(challenge) => Py::new(py, PyChallenge::new(client.clone(), challenge))?.into_any(),
    })
}

pub(crate) fn session_to_py(py: Python<'_>, client: &Client, session: Session) -> PyResult<Py<PySession>> {
    Py::new(py, PySession { client: client.clone(), session, raw: Parsed::default() })
}

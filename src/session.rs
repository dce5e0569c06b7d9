//! `Session` and `AsyncSession`: an open session and the data operations it serves.

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::args;
use crate::classes::{session_to_py, PyBaseClient, PyBaseSession};
use crate::convert;
use crate::error::OrRaise;
use crate::invocation::Invocation;
use crate::results::PyDataOperation;
use crate::run::Run;
use crate::views;
use bankfeed::authorize::Session;
use bankfeed::data::requests::{AccountsSummaryOptions, StatementsOptions};
use bankfeed::ops::{self, Target};

/// What `_restore` takes: the client, the 200 body, the RequestId and the LoginId.
type SessionState<'py> = (Bound<'py, PyAny>, Bound<'py, PyBytes>, String, Option<String>);

#[pymethods]
impl PyBaseSession {
    #[doc = stub_doc!("_BaseSession.request_id")]
    #[getter]
    fn request_id(&self) -> &str {
        &self.session.request_id
    }

    #[doc = stub_doc!("_BaseSession.login_id")]
    #[getter]
    fn login_id(&self) -> Option<&str> {
        self.session.login_id.as_deref()
    }

    #[doc = stub_doc!("_BaseSession.login")]
    #[getter]
    fn login<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.raw.field(py, &self.session.raw, "Login")
    }

    #[doc = stub_doc!("_BaseSession.last_refresh")]
    #[getter]
    fn last_refresh<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, pyo3::types::PyDateTime>>> {
        let text = self.session.login.as_ref().and_then(|l| l.last_refresh.as_deref());
        text.and_then(bankfeed::data::dates::parse_timestamp)
            .map(|micros| convert::utc_datetime(py, micros))
            .transpose()
    }

    #[doc = stub_doc!("_BaseSession.institution")]
    #[getter]
    fn institution<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.raw.field(py, &self.session.raw, "Institution")
    }

    #[doc = stub_doc!("_BaseSession.institution_name")]
    #[getter]
    fn institution_name(&self) -> Option<&str> {
        self.session.named_institution.name.as_deref()
    }

    #[doc = stub_doc!("_BaseSession.institution_id")]
    #[getter]
    fn institution_id(&self) -> Option<&str> {
        self.session.named_institution.id.as_deref()
    }

    #[doc = stub_doc!("_BaseSession.links")]
    #[getter]
    fn links<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let links = self.raw.field(py, &self.session.raw, "Links")?;
        if links.is_none() {
            return Ok(pyo3::types::PyList::empty(py).into_any());
        }
        Ok(links)
    }

    #[doc = stub_doc!("_BaseSession.raw")]
    #[getter]
    fn raw<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.raw.json(py, &self.session.raw)
    }

    #[doc = stub_doc!("Session.investments")]
    fn investments(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.data::<ops::Investments>(py, "investments", ())
    }

    #[doc = stub_doc!("Session.accounts_detail")]
    #[pyo3(signature = (*, with_transactions=None, days=None, with_account_identity=None, with_kyc=None,
                        accounts_filter=None, with_details_and_banking_statements=None,
                        number_of_banking_statements=None, date_from=None, date_to=None, refresh_delta=None))]
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
        #[pyo3(from_py_with = args::date_from)] date_from: Option<String>,
        #[pyo3(from_py_with = args::date_to)] date_to: Option<String>,
        #[pyo3(from_py_with = args::refresh_delta)] refresh_delta: Option<Vec<(String, String)>>,
    ) -> PyResult<Py<PyAny>> {
        let options = convert::accounts_detail_options(
            with_transactions,
            days,
            with_account_identity,
            with_kyc,
            accounts_filter,
            with_details_and_banking_statements,
            number_of_banking_statements,
            date_from,
            date_to,
            refresh_delta,
        );
        self.data::<ops::AccountsDetail>(py, "accounts_detail", options)
    }

    #[doc = stub_doc!("Session.accounts_summary")]
    #[pyo3(signature = (*, with_balance=None, with_account_identity=None))]
    fn accounts_summary(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::with_balance)] with_balance: Option<bool>,
        #[pyo3(from_py_with = args::with_account_identity)] with_account_identity: Option<bool>,
    ) -> PyResult<Py<PyAny>> {
        let options = AccountsSummaryOptions { with_balance, with_account_identity };
        self.data::<ops::AccountsSummary>(py, "accounts_summary", options)
    }

    #[doc = stub_doc!("Session.statements")]
    #[pyo3(signature = (*, number_of_statements=None, accounts_filter=None))]
    fn statements(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::number_of_statements)] number_of_statements: Option<String>,
        #[pyo3(from_py_with = args::accounts_filter)] accounts_filter: Option<Vec<String>>,
    ) -> PyResult<Py<PyAny>> {
        let options = StatementsOptions { number_of_statements, accounts_filter: accounts_filter.unwrap_or_default() };
        self.data::<ops::Statements>(py, "statements", options)
    }

    #[doc = stub_doc!("Session.attributes")]
    #[pyo3(signature = (attributes=None, *, package=None, filters=None, detail=None, account_filter=None))]
    fn attributes(
        &self,
        py: Python<'_>,
        attributes: Option<Bound<'_, PyAny>>,
        #[pyo3(from_py_with = args::package)] package: Option<String>,
        filters: Option<Bound<'_, PyAny>>,
        #[pyo3(from_py_with = args::detail)] detail: Option<Vec<String>>,
        #[pyo3(from_py_with = args::account_filter)] account_filter: Option<Vec<String>>,
    ) -> PyResult<Py<PyAny>> {
        let query = convert::attributes_query(attributes, package, filters, detail, account_filter)?;
        self.data::<ops::Attributes>(py, "attributes", query)
    }

    #[doc = stub_doc!("_BaseSession._repr_html_")]
    fn _repr_html_(slf: &Bound<'_, Self>) -> PyResult<String> {
        views::html(slf.as_any(), "session_html")
    }

    // docs/architecture.md#pickling
    #[doc = stub_doc!("_BaseSession.__reduce__")]
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, SessionState<'py>)> {
        let (py, this) = (slf.py(), slf.get());
        let client = crate::classes::client_to_py(py, &this.client, this.flavor)?.into_bound(py);
        let body = PyBytes::new(py, &this.session.raw);
        let restore = slf.get_type().getattr("_restore")?;
        Ok((restore, (client, body, this.session.request_id.clone(), this.session.login_id.clone())))
    }

    // The session `__reduce__` described; the body is read again as a live answer is. A class
    // method so that it pickles by its public class (`Session._restore`), not the private base.
    #[classmethod]
    fn _restore(
        cls: &Bound<'_, pyo3::types::PyType>,
        client: &Bound<'_, PyBaseClient>,
        body: &Bound<'_, PyBytes>,
        request_id: String,
        login_id: Option<String>,
    ) -> PyResult<Py<PyAny>> {
        let mut session = Session::from_body(body.as_bytes(), login_id.as_deref()).or_raise()?;
        session.request_id = request_id;
        session.login_id = login_id;
        let client = client.get();
        session_to_py(cls.py(), &client.client, client.flavor, session)
    }

    // Nothing of the keys its pickle carries (docs/architecture.md#pickling).
    #[doc = stub_doc!("_BaseSession.__dask_tokenize__")]
    fn __dask_tokenize__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, pyo3::types::PyTuple>> {
        let (py, this) = (slf.py(), slf.get());
        let parts: Vec<Bound<'py, PyAny>> = vec![
            "bankfeed".into_pyobject(py)?.into_any(),
            slf.get_type().name()?.into_any(),
            this.client.identity().to_string().into_pyobject(py)?.into_any(),
            this.session.request_id.as_str().into_pyobject(py)?.into_any(),
            this.session.login_id.as_deref().into_pyobject(py)?.into_any(),
        ];
        pyo3::types::PyTuple::new(py, parts)
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let session = &slf.get().session;
        // As Python shows the attribute: a quoted LoginId, or None unquoted when there is none.
        let login_id = session.login_id.as_deref().map_or_else(|| "None".to_owned(), |id| format!("{id:?}"));
        Ok(format!("{}(request_id={:?}, login_id={login_id})", slf.get_type().name()?, session.request_id))
    }
}

impl PyBaseSession {
    /// Runs the operation named `method` (its Python name, shown by an async call's coroutine).
    fn run<T: Send + 'static>(
        &self,
        py: Python<'_>,
        method: &'static str,
        future: impl std::future::Future<Output = Result<T, bankfeed::Error>> + Send + 'static,
        convert: crate::invocation::Convert<T>,
    ) -> PyResult<Py<PyAny>> {
        Invocation::new(&self.client, future, convert).named("AsyncSession", method).run(py, self.flavor)
    }

    /// Runs the data operation `O` on this session, as its method `method`.
    fn data<O: PyDataOperation>(
        &self,
        py: Python<'_>,
        method: &'static str,
        options: O::Options,
    ) -> PyResult<Py<PyAny>> {
        let (client, session) = (self.client.clone(), self.session.clone());
        let future = async move {
            let call = client.call(O::WIRE.name);
            call.run(client.data::<O>(&call, Target::Session(&session), &options)).await
        };
        self.run(py, method, future, O::CONVERT)
    }
}

//! `Client` and `AsyncClient`: one per configuration. They share one base class, which holds the
//! configuration and defines every operation once; the two differ only in how a call runs
//! (docs/architecture.md#one-call-two-runners).

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple, PyType};

use crate::args;
use crate::bulk;
use crate::classes::{session_to_py, step_to_py, PyAsyncClient, PyBaseClient, PyClient};
use crate::convert;
use crate::error::OrRaise;
use crate::error::PyBankfeedError;
use crate::invocation::{Flavor, Invocation};
use crate::results::PyDataOperation;
use crate::run::asyncio;
use crate::run::Run;
use bankfeed::authorize::{AuthorizeRequest, Credentials};
use bankfeed::cassette::RecordMode;
use bankfeed::config::{ClientConfig, ClientOptions, Variables, DEFAULT_MAX_CONNECTIONS};
use bankfeed::data::money::MoneyType;
use bankfeed::error::Error;
use bankfeed::ops::{self, Target};
use bankfeed::protocol::{self, WireOp};
use bankfeed::proxy::{ProxyOption, ENVIRONMENT};
use bankfeed::{Call, Client, Secret};

/// What the body of a [`PyBaseClient::operation`] gives back: its [`Client`] method's future, which
/// borrows the client and the call it runs in.
type CallBody<'c, T> = std::pin::Pin<Box<dyn std::future::Future<Output = Result<T, Error>> + Send + 'c>>;

/// The key of a pickled client's identity, beside its options.
const IDENTITY: &str = "identity";

impl PyBaseClient {
    /// Runs the operation named `method` (its Python name, shown by an async call's coroutine).
    fn run<T: Send + 'static>(
        &self,
        py: Python<'_>,
        method: &'static str,
        future: impl std::future::Future<Output = Result<T, Error>> + Send + 'static,
        convert: crate::invocation::Convert<T>,
    ) -> PyResult<Py<PyAny>> {
        Invocation::new(&self.client, future, convert).named("AsyncClient", method).run(py, self.flavor)
    }

    /// Runs the client's operation `wire` as the method `method`: one call named after `wire`,
    /// whose whole body is `body` (the [`Client`] method of that operation, given the client and
    /// the call), its answer converted by `convert`. Every method that is one operation of the
    /// client, the service's operations beyond the interface among them, is this.
    fn operation<T: Send + 'static>(
        &self,
        py: Python<'_>,
        method: &'static str,
        wire: &'static WireOp,
        body: impl for<'c> FnOnce(&'c Client, &'c Call) -> CallBody<'c, T> + Send + 'static,
        convert: crate::invocation::Convert<T>,
    ) -> PyResult<Py<PyAny>> {
        let client = self.client.clone();
        let future = async move {
            let call = client.call(wire.name);
            call.run(body(&client, &call)).await
        };
        self.run(py, method, future, convert)
    }

    /// Runs the data operation `O` on the saved login `login_id`, resumed at `request_id` when
    /// one is given, as the method `method`.
    fn for_login<O: PyDataOperation>(
        &self,
        py: Python<'_>,
        method: &'static str,
        login_id: String,
        request_id: Option<String>,
        options: O::Options,
    ) -> PyResult<Py<PyAny>> {
        let client = self.client.clone();
        let future = async move {
            let call = client.call(O::WIRE.name).for_login(&login_id);
            call.run(client.data::<O>(&call, Target::login(&login_id, request_id.as_deref()), &options)).await
        };
        self.run(py, method, future, O::CONVERT)
    }

    /// Runs the challenge loop from `request`, calling `on_challenge` for each challenge.
    fn sequence(
        &self,
        py: Python<'_>,
        method: &'static str,
        request: AuthorizeRequest,
        on_challenge: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let client = self.client.clone();
        // One call under one deadline: the Authorize and every challenge round after it.
        let start = move |mut answerer: crate::invocation::Answerer| async move {
            let call = client.call(protocol::AUTHORIZE.name);
            let login = async {
                let step = client.authorize(&call, request).await?;
                client.complete(&call, step, answerer.as_mut()).await
            };
            call.run(login).await
        };
        let handler = on_challenge.map(Bound::unbind);
        let invocation = Invocation::answered(&self.client, handler, start, session_to_py);
        invocation.named("AsyncClient", method).run(py, self.flavor)
    }

    fn step(&self, py: Python<'_>, method: &'static str, request: AuthorizeRequest) -> PyResult<Py<PyAny>> {
        self.operation(
            py,
            method,
            &protocol::AUTHORIZE,
            move |client, call| Box::pin(client.authorize(call, request)),
            step_to_py,
        )
    }
}

fn credentials(
    institution: &str,
    username: &str,
    password: String,
    save: bool,
    language: Option<String>,
    tag: Option<String>,
    schedule_refresh: Option<bool>,
) -> AuthorizeRequest {
    let mut credentials = Credentials::new(institution, username, Secret::new(password));
    credentials.save = save;
    credentials.language = language;
    credentials.tag = tag;
    credentials.schedule_refresh = schedule_refresh;
    AuthorizeRequest::Credentials(credentials)
}

/// The constructor of both clients: one signature, written once. Its defaults are literals so that
/// Python sees their values (`help()`, stubtest); `tests/python/tooling/test_defaults.py` checks them
/// against `ClientOptions::default()`.
macro_rules! client_class {
    ($class:ident, $flavor:expr, { $($methods:tt)* }) => {
        #[pymethods]
        impl $class {
            #[new]
            #[pyo3(signature = (base_url=None, customer_id=None, *, api_key=None, secret_key=None,
                                investments_base_url=None, timeout=240.0, poll_interval=10.0,
                                poll_timeout=1800.0, max_retries=2, max_challenge_rounds=10,
                                allow_insecure_http=false, deadline=None, max_body_bytes=134217728,
                                max_connections=100, proxy="environment", money="float", cassette=None,
                                record_mode=None, allow_live_record=false, _environment=true))]
            #[expect(clippy::too_many_arguments, reason = "one argument per option of the Python constructor")]
            fn new(
                py: Python<'_>,
                #[pyo3(from_py_with = args::base_url)] base_url: Option<String>,
                #[pyo3(from_py_with = args::customer_id)] customer_id: Option<String>,
                #[pyo3(from_py_with = args::api_key)] api_key: Option<String>,
                #[pyo3(from_py_with = args::secret_key)] secret_key: Option<String>,
                #[pyo3(from_py_with = args::investments_base_url)] investments_base_url: Option<String>,
                #[pyo3(from_py_with = args::timeout)] timeout: f64,
                #[pyo3(from_py_with = args::poll_interval)] poll_interval: f64,
                #[pyo3(from_py_with = args::poll_timeout)] poll_timeout: f64,
                #[pyo3(from_py_with = args::max_retries)] max_retries: u32,
                #[pyo3(from_py_with = args::max_challenge_rounds)] max_challenge_rounds: u32,
                #[pyo3(from_py_with = args::allow_insecure_http)] allow_insecure_http: bool,
                #[pyo3(from_py_with = args::deadline)] deadline: Option<f64>,
                #[pyo3(from_py_with = args::max_body_bytes)] max_body_bytes: usize,
                #[pyo3(from_py_with = args::max_connections)] max_connections: usize,
                #[pyo3(from_py_with = args::proxy)] proxy: Option<&str>,
                #[pyo3(from_py_with = args::money)] money: &str,
                #[pyo3(from_py_with = crate::cassette::cassette)] cassette: Option<crate::cassette::Given>,
                #[pyo3(from_py_with = crate::cassette::record_mode)] record_mode: Option<RecordMode>,
                #[pyo3(from_py_with = args::allow_live_record)] allow_live_record: bool,
                // Private: False for `sb.client()`, whose clients must never take a key or a URL
                // from the `BANKFEED_*` variables of a machine set up for the real service.
                _environment: bool,
            ) -> PyResult<PyClassInitializer<Self>> {
                let options = ClientOptions {
                    base_url,
                    investments_base_url,
                    customer_id,
                    api_key: api_key.map(Secret::new),
                    secret_key: secret_key.map(Secret::new),
                    timeout,
                    poll_interval,
                    poll_timeout,
                    max_retries,
                    max_challenge_rounds,
                    max_body_bytes,
                    allow_insecure_http,
                    deadline,
                    max_connections,
                    proxy: ProxyOption::from_given(proxy),
                    money: MoneyType::parse(money).or_raise()?,
                };
                // The proxy variables are read either way: they belong to the machine's network
                // (docs/protocol.md#proxies), and a sandbox's loopback host never uses them.
                let variables = if _environment { Variables::All } else { Variables::ProxiesOnly };
                let config = ClientConfig::from_environment(options, variables).or_raise()?;
                // docs/cassettes.md#in-python: on a cassette given, or on that of the block it is built in.
                let client = crate::cassette::client_of(py, config, cassette, record_mode, allow_live_record)?;
                Ok(PyClassInitializer::from(PyBaseClient { client, flavor: $flavor }).add_subclass($class))
            }

            $($methods)*
        }
    };
}

client_class!(PyClient, Flavor::Blocking, {
    #[doc = stub_doc!("Client.__enter__")]
    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[doc = stub_doc!("Client.__exit__")]
    fn __exit__(
        slf: &Bound<'_, Self>,
        _kind: Option<Bound<'_, PyAny>>,
        _value: Option<Bound<'_, PyAny>>,
        _traceback: Option<Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        slf.as_super().get().close(slf.py())
    }
});

client_class!(PyAsyncClient, Flavor::Async, {
    #[doc = stub_doc!("AsyncClient.__aenter__")]
    fn __aenter__(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        asyncio::ready(slf.py(), slf.clone().into_any().unbind())
    }

    #[doc = stub_doc!("AsyncClient.__aexit__")]
    fn __aexit__(
        slf: &Bound<'_, Self>,
        _kind: Option<Bound<'_, PyAny>>,
        _value: Option<Bound<'_, PyAny>>,
        _traceback: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        slf.as_super().get().close(slf.py())?;
        asyncio::ready(slf.py(), slf.py().None())
    }
});

#[pymethods]
impl PyBaseClient {
    #[doc = stub_doc!("_BaseClient.base_url")]
    #[getter]
    fn base_url(&self) -> &str {
        &self.client.config().base_url
    }

    #[doc = stub_doc!("_BaseClient.investments_base_url")]
    #[getter]
    fn investments_base_url(&self) -> &str {
        &self.client.config().investments_base_url
    }

    #[doc = stub_doc!("_BaseClient.proxy")]
    #[getter]
    fn proxy(&self) -> Option<String> {
        let proxies = &self.client.config().proxy;
        match proxies.option() {
            ProxyOption::Environment => Some(ENVIRONMENT.to_owned()),
            ProxyOption::Off => None,
            ProxyOption::Url(_) => proxies.explicit().map(|proxy| proxy.shown().to_owned()),
        }
    }

    #[doc = stub_doc!("_BaseClient.customer_id")]
    #[getter]
    fn customer_id(&self) -> &str {
        &self.client.config().customer_id
    }

    #[doc = stub_doc!("_BaseClient.timeout")]
    #[getter]
    fn timeout(&self) -> f64 {
        self.client.config().timeout.as_secs_f64()
    }

    #[doc = stub_doc!("_BaseClient.poll_interval")]
    #[getter]
    fn poll_interval(&self) -> f64 {
        self.client.config().poll.interval.as_secs_f64()
    }

    #[doc = stub_doc!("_BaseClient.poll_timeout")]
    #[getter]
    fn poll_timeout(&self) -> f64 {
        self.client.config().poll.timeout.as_secs_f64()
    }

    #[doc = stub_doc!("_BaseClient.max_retries")]
    #[getter]
    fn max_retries(&self) -> u32 {
        self.client.config().retry.max_retries
    }

    #[doc = stub_doc!("_BaseClient.max_body_bytes")]
    #[getter]
    fn max_body_bytes(&self) -> usize {
        self.client.config().max_body_bytes
    }

    #[doc = stub_doc!("_BaseClient.max_challenge_rounds")]
    #[getter]
    fn max_challenge_rounds(&self) -> u32 {
        self.client.config().max_challenge_rounds
    }

    #[doc = stub_doc!("_BaseClient.allow_insecure_http")]
    #[getter]
    fn allow_insecure_http(&self) -> bool {
        self.client.config().allow_insecure_http
    }

    #[doc = stub_doc!("_BaseClient.deadline")]
    #[getter]
    fn deadline(&self) -> Option<f64> {
        self.client.config().deadline.map(|deadline| deadline.as_secs_f64())
    }

    #[doc = stub_doc!("_BaseClient.max_connections")]
    #[getter]
    fn max_connections(&self) -> usize {
        self.client.config().max_connections
    }

    #[doc = stub_doc!("_BaseClient.money")]
    #[getter]
    fn money(&self) -> &'static str {
        self.client.config().money.name()
    }

    #[doc = stub_doc!("Client.authorize")]
    #[pyo3(signature = (institution, username, password, *, save=false, language=None, tag=None,
                        schedule_refresh=None))]
    fn authorize(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::institution)] institution: String,
        #[pyo3(from_py_with = args::username)] username: String,
        #[pyo3(from_py_with = args::password)] password: String,
        #[pyo3(from_py_with = args::save)] save: bool,
        #[pyo3(from_py_with = args::language)] language: Option<String>,
        #[pyo3(from_py_with = args::tag)] tag: Option<String>,
        #[pyo3(from_py_with = args::schedule_refresh)] schedule_refresh: Option<bool>,
    ) -> PyResult<Py<PyAny>> {
        self.step(
            py,
            "authorize",
            credentials(&institution, &username, password, save, language, tag, schedule_refresh),
        )
    }

    #[doc = stub_doc!("Client.login")]
    #[pyo3(signature = (institution, username, password, *, on_challenge=None, save=false, language=None,
                        tag=None, schedule_refresh=None))]
    fn login(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::institution)] institution: String,
        #[pyo3(from_py_with = args::username)] username: String,
        #[pyo3(from_py_with = args::password)] password: String,
        #[pyo3(from_py_with = args::on_challenge)] on_challenge: Option<Bound<'_, PyAny>>,
        #[pyo3(from_py_with = args::save)] save: bool,
        #[pyo3(from_py_with = args::language)] language: Option<String>,
        #[pyo3(from_py_with = args::tag)] tag: Option<String>,
        #[pyo3(from_py_with = args::schedule_refresh)] schedule_refresh: Option<bool>,
    ) -> PyResult<Py<PyAny>> {
        let request = credentials(&institution, &username, password, save, language, tag, schedule_refresh);
        self.sequence(py, "login", request, on_challenge)
    }

    #[doc = stub_doc!("Client.authorize_cached")]
    fn authorize_cached(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::login_id)] login_id: String,
    ) -> PyResult<Py<PyAny>> {
        self.operation(
            py,
            "authorize_cached",
            &protocol::AUTHORIZE,
            move |client, call| Box::pin(async move { client.authorize_cached(call, &login_id).await }),
            session_to_py,
        )
    }

    #[doc = stub_doc!("Client.authorize_saved")]
    #[pyo3(signature = (login_id, *, save=false))]
    fn authorize_saved(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::login_id)] login_id: String,
        #[pyo3(from_py_with = args::save)] save: bool,
    ) -> PyResult<Py<PyAny>> {
        self.step(py, "authorize_saved", AuthorizeRequest::SavedLive { login_id, save })
    }

    #[doc = stub_doc!("Client.login_saved")]
    #[pyo3(signature = (login_id, *, on_challenge=None, save=false))]
    fn login_saved(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::login_id)] login_id: String,
        #[pyo3(from_py_with = args::on_challenge)] on_challenge: Option<Bound<'_, PyAny>>,
        #[pyo3(from_py_with = args::save)] save: bool,
    ) -> PyResult<Py<PyAny>> {
        self.sequence(py, "login_saved", AuthorizeRequest::SavedLive { login_id, save }, on_challenge)
    }

    #[doc = stub_doc!("Client.investments")]
    #[pyo3(signature = (login_id, *, request_id=None))]
    fn investments(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::login_id)] login_id: String,
        #[pyo3(from_py_with = args::request_id)] request_id: Option<String>,
    ) -> PyResult<Py<PyAny>> {
        self.for_login::<ops::Investments>(py, "investments", login_id, request_id, ())
    }

    #[doc = stub_doc!("Client.session")]
    #[pyo3(signature = (request_id, *, login_id=None))]
    fn session(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::required_request_id)] request_id: String,
        #[pyo3(from_py_with = args::optional_login_id)] login_id: Option<String>,
    ) -> PyResult<Py<PyAny>> {
        let session = bankfeed::authorize::Session::resume(&request_id, login_id.as_deref()).or_raise()?;
        session_to_py(py, &self.client, self.flavor, session)
    }

    #[doc = stub_doc!("Client.investments_many")]
    #[pyo3(signature = (login_ids, *, concurrency=32, progress=false, request_ids=None, on_challenge=None))]
    fn investments_many(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::login_ids)] login_ids: args::LoginIds,
        #[pyo3(from_py_with = args::concurrency)] concurrency: usize,
        #[pyo3(from_py_with = args::progress)] progress: bool,
        request_ids: Option<Bound<'_, PyAny>>,
        #[pyo3(from_py_with = args::on_challenge)] on_challenge: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let (flavor, resumes) = (self.flavor, request_ids.as_ref());
        bulk::start_data::<ops::Investments>(
            py,
            &self.client,
            flavor,
            login_ids,
            concurrency,
            progress,
            "investments_many",
            resumes,
            on_challenge,
            (),
        )
    }

    #[doc = stub_doc!("Client.attributes_many")]
    #[pyo3(signature = (login_ids, attributes=None, *, package=None, filters=None, detail=None, account_filter=None,
                        concurrency=32, progress=false, request_ids=None, on_challenge=None))]
    fn attributes_many(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::login_ids)] login_ids: args::LoginIds,
        attributes: Option<Bound<'_, PyAny>>,
        #[pyo3(from_py_with = args::package)] package: Option<String>,
        filters: Option<Bound<'_, PyAny>>,
        #[pyo3(from_py_with = args::detail)] detail: Option<Vec<String>>,
        #[pyo3(from_py_with = args::account_filter)] account_filter: Option<Vec<String>>,
        #[pyo3(from_py_with = args::concurrency)] concurrency: usize,
        #[pyo3(from_py_with = args::progress)] progress: bool,
        request_ids: Option<Bound<'_, PyAny>>,
        #[pyo3(from_py_with = args::on_challenge)] on_challenge: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let query = convert::attributes_query(attributes, package, filters, detail, account_filter)?;
        let (flavor, resumes) = (self.flavor, request_ids.as_ref());
        bulk::start_data::<ops::Attributes>(
            py,
            &self.client,
            flavor,
            login_ids,
            concurrency,
            progress,
            "attributes_many",
            resumes,
            on_challenge,
            query,
        )
    }

    #[doc = stub_doc!("Client.accounts_detail_many")]
    #[pyo3(signature = (login_ids, *, with_transactions=None, days=None, with_account_identity=None, with_kyc=None,
                        accounts_filter=None, with_details_and_banking_statements=None,
                        number_of_banking_statements=None, date_from=None, date_to=None, refresh_delta=None, concurrency=32, progress=false, request_ids=None,
                        on_challenge=None))]
    #[expect(clippy::too_many_arguments, reason = "one argument per option of the Python method")]
    fn accounts_detail_many(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::login_ids)] login_ids: args::LoginIds,
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
        #[pyo3(from_py_with = args::concurrency)] concurrency: usize,
        #[pyo3(from_py_with = args::progress)] progress: bool,
        request_ids: Option<Bound<'_, PyAny>>,
        #[pyo3(from_py_with = args::on_challenge)] on_challenge: Option<Bound<'_, PyAny>>,
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
        let (flavor, resumes) = (self.flavor, request_ids.as_ref());
        bulk::start_data::<ops::AccountsDetail>(
            py,
            &self.client,
            flavor,
            login_ids,
            concurrency,
            progress,
            "accounts_detail_many",
            resumes,
            on_challenge,
            options,
        )
    }

    #[doc = stub_doc!("Client.attributes")]
    #[pyo3(signature = (login_id, attributes=None, *, package=None, filters=None, detail=None, account_filter=None,
                        request_id=None))]
    fn attributes(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::login_id)] login_id: String,
        attributes: Option<Bound<'_, PyAny>>,
        #[pyo3(from_py_with = args::package)] package: Option<String>,
        filters: Option<Bound<'_, PyAny>>,
        #[pyo3(from_py_with = args::detail)] detail: Option<Vec<String>>,
        #[pyo3(from_py_with = args::account_filter)] account_filter: Option<Vec<String>>,
        #[pyo3(from_py_with = args::request_id)] request_id: Option<String>,
    ) -> PyResult<Py<PyAny>> {
        let query = convert::attributes_query(attributes, package, filters, detail, account_filter)?;
        self.for_login::<ops::Attributes>(py, "attributes", login_id, request_id, query)
    }

    #[doc = stub_doc!("Client.delete_login")]
    fn delete_login(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::login_id)] login_id: String,
    ) -> PyResult<Py<PyAny>> {
        self.operation(
            py,
            "delete_login",
            &protocol::DELETE_CARD,
            move |client, call| Box::pin(async move { client.delete_login(call, &login_id).await }),
            |py, _, _, answer| Ok(convert::to_python(py, &answer)?.unbind()),
        )
    }

    #[doc = stub_doc!("Client.set_scheduled_refresh")]
    fn set_scheduled_refresh(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::login_id)] login_id: String,
        #[pyo3(from_py_with = args::active)] active: bool,
    ) -> PyResult<Py<PyAny>> {
        self.operation(
            py,
            "set_scheduled_refresh",
            &protocol::SET_SCHEDULED_REFRESH,
            move |client, call| Box::pin(async move { client.set_scheduled_refresh(call, &login_id, active).await }),
            |py, _, _, on| Ok(pyo3::types::PyBool::new(py, on).to_owned().into_any().unbind()),
        )
    }

    #[doc = stub_doc!("Client.mfa_questions")]
    fn mfa_questions(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::login_id)] login_id: String,
    ) -> PyResult<Py<PyAny>> {
        self.operation(
            py,
            "mfa_questions",
            &protocol::GET_MFA_QUESTIONS,
            move |client, call| Box::pin(async move { client.mfa_questions(call, &login_id).await }),
            |py, _, _, questions| Ok(pyo3::types::PyList::new(py, questions)?.into_any().unbind()),
        )
    }

    #[doc = stub_doc!("Client.answer_mfa_questions")]
    fn answer_mfa_questions(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::login_id)] login_id: String,
        #[pyo3(from_py_with = args::answers)] answers: Vec<(String, String)>,
    ) -> PyResult<Py<PyAny>> {
        self.operation(
            py,
            "answer_mfa_questions",
            &protocol::ANSWER_MFA_QUESTIONS,
            move |client, call| Box::pin(async move { client.answer_mfa_questions(call, &login_id, &answers).await }),
            |py, _, _, ()| Ok(py.None()),
        )
    }

    #[doc = stub_doc!("Client.nightly_refresh_status")]
    fn nightly_refresh_status(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.operation(
            py,
            "nightly_refresh_status",
            &protocol::GET_NIGHTLY_REFRESH_STATUS,
            |client, call| Box::pin(client.nightly_refresh_status(call)),
            |py, _, _, cards| Ok(convert::to_python(py, &serde_json::Value::Array(cards))?.unbind()),
        )
    }

    #[doc = stub_doc!("Client.institutions")]
    fn institutions(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.operation(
            py,
            "institutions",
            &protocol::INSTITUTIONS,
            |client, call| Box::pin(client.institutions(call)),
            |py, _, _, institutions| Ok(convert::to_python(py, &serde_json::Value::Array(institutions))?.unbind()),
        )
    }

    #[doc = stub_doc!("Client.connect_url")]
    #[pyo3(signature = (**options))]
    fn connect_url(&self, py: Python<'_>, options: Option<&Bound<'_, PyDict>>) -> PyResult<Py<PyAny>> {
        let options = crate::connect::options("connect_url", options)?;
        self.operation(
            py,
            "connect_url",
            &protocol::GENERATE_AUTHORIZE_TOKEN,
            move |client, call| Box::pin(async move { client.connect_url(call, &options).await }),
            crate::connect::connect_url_to_py,
        )
    }

    // Only the arguments are checked here; python/bankfeed/_connect.py then runs the first step
    // (the token minted, then the catcher bound: crates/bankfeed/src/connect/start.rs), opens the widget and
    // waits, each step a call of this client, and closes the catcher on every way out
    // (docs/connect.md#from-a-script).
    #[doc = stub_doc!("Client.connect")]
    #[pyo3(signature = (*, timeout=300.0, open_browser=true, on_url=None, **options))]
    fn connect(
        slf: &Bound<'_, Self>,
        #[pyo3(from_py_with = args::timeout)] timeout: f64,
        #[pyo3(from_py_with = args::open_browser)] open_browser: bool,
        on_url: Option<Bound<'_, PyAny>>,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let this = slf.get();
        crate::connect::connect_timeout(timeout)?;
        if let Some(on_url) = &on_url {
            if !on_url.is_none() && !on_url.is_callable() {
                return Err(args::wrong_type("on_url", "a callable or None", on_url));
            }
        }
        let checked = crate::connect::options("connect", options)?;
        if checked.redirect_url.is_some() {
            return Err(PyBankfeedError::from(Error::config(
                "redirect_url",
                "is the loopback catcher's in connect(): to redirect elsewhere, build the URL with connect_url()",
            ))
            .into());
        }
        let start = crate::connect::starter(py, &this.client, this.flavor, checked)?;
        let runner = py.import("bankfeed._connect")?.getattr("run")?;
        let on_url = on_url.map_or_else(|| py.None(), Bound::unbind);
        Ok(runner.call1((start, timeout, open_browser, on_url, this.flavor == Flavor::Async))?.unbind())
    }

    #[doc = stub_doc!("_BaseClient.close")]
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        self.client.close();
        // Then the cassette is written: no call of this client can record into it any more.
        crate::cassette::save_on_close(py, &self.client)
    }

    #[doc = stub_doc!("_BaseClient.closed")]
    #[getter]
    fn closed(&self) -> bool {
        self.client.is_closed()
    }

    // docs/architecture.md#pickling
    #[doc = stub_doc!("_BaseClient.__reduce__")]
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyDict>,))> {
        let py = slf.py();
        let client = &slf.get().client;
        if let Some(cassette) = client.cassette() {
            // A copy in another process would be live, or write the same file as this one.
            return Err(PyTypeError::new_err(format!(
                "a client on a cassette ({}) cannot be pickled: the cassette belongs to this process; build the \
                 client in the other process with cassette= of a file of its own",
                cassette.path().display()
            )));
        }
        let state = pythonize::pythonize(py, &client.config().to_options())?.cast_into::<PyDict>()?;
        state.set_item(IDENTITY, client.identity().to_string())?;
        Ok((slf.get_type().getattr("_restore")?, (state,)))
    }

    // The client `__reduce__` described. The `BANKFEED_*` variables are not read: a key the
    // pickled client did not have must not come from the variables of the process that unpickles
    // it. `proxy="environment"` reads the proxy variables of that process, whose network it is.
    #[classmethod]
    fn _restore(cls: &Bound<'_, PyType>, state: &Bound<'_, PyDict>) -> PyResult<Py<PyAny>> {
        let options = state.copy()?;
        // Absent: a client of its own identity.
        let identity = match options.get_item(IDENTITY)? {
            None => uuid::Uuid::new_v4(),
            Some(identity) => {
                options.del_item(IDENTITY)?;
                identity
                    .extract::<String>()
                    .ok()
                    .and_then(|identity| uuid::Uuid::try_parse(&identity).ok())
                    .ok_or_else(|| PyValueError::new_err("a pickled client's identity must be a UUID"))?
            }
        };
        // The reader's error is not passed on: it may quote a value, and the values include keys.
        let options: ClientOptions = pythonize::depythonize(&options).map_err(|_| {
            PyValueError::new_err(
                "a pickled client's options cannot be read (altered, or pickled by another version of bankfeed)",
            )
        })?;
        let config = ClientConfig::from_environment(options, Variables::ProxiesOnly).or_raise()?;
        let client = Client::copy_of(config, identity).or_raise()?;
        let flavor = if cls.is_subclass_of::<PyAsyncClient>()? { Flavor::Async } else { Flavor::Blocking };
        crate::classes::client_to_py(cls.py(), &client, flavor)
    }

    // Without it, Dask would hash the pickle, keys and all (docs/architecture.md#pickling).
    #[doc = stub_doc!("_BaseClient.__dask_tokenize__")]
    fn __dask_tokenize__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let client = &slf.get().client;
        let config = client.config();
        let proxy = Self::proxy(slf.get());
        let parts: Vec<Bound<'py, PyAny>> = vec![
            "bankfeed".into_pyobject(py)?.into_any(),
            slf.get_type().name()?.into_any(),
            client.identity().to_string().into_pyobject(py)?.into_any(),
            config.base_url.as_str().into_pyobject(py)?.into_any(),
            config.investments_base_url.as_str().into_pyobject(py)?.into_any(),
            config.customer_id.as_str().into_pyobject(py)?.into_any(),
            config.max_connections.into_pyobject(py)?.into_any(),
            proxy.into_pyobject(py)?.into_any(),
            // A copy of another money type (`bankfeed._export.kinds.with_money`) keeps the
            // identity, and its tables are not the same.
            config.money.name().into_pyobject(py)?.into_any(),
        ];
        PyTuple::new(py, parts)
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let config = slf.get().client.config();
        let set = |key: &Option<Secret>| if key.is_some() { "'***'" } else { "None" };
        // The new options show only when they differ from their defaults, so the usual repr stays.
        let mut extra = String::new();
        if let Some(deadline) = config.deadline {
            extra.push_str(&format!(", deadline={}", deadline.as_secs_f64()));
        }
        if config.allow_insecure_http {
            extra.push_str(", allow_insecure_http=True");
        }
        if config.max_connections != DEFAULT_MAX_CONNECTIONS {
            extra.push_str(&format!(", max_connections={}", config.max_connections));
        }
        if config.money != MoneyType::Float {
            extra.push_str(&format!(", money={:?}", config.money.name()));
        }
        match (config.proxy.option(), config.proxy.explicit()) {
            (ProxyOption::Off, _) => extra.push_str(", proxy=None"),
            // Without its user name and password (docs/protocol.md#proxies).
            (ProxyOption::Url(_), Some(proxy)) => extra.push_str(&format!(", proxy={:?}", proxy.shown())),
            _ => {}
        }
        extra.push_str(&crate::cassette::shown(&slf.get().client));
        // Not an option: the state `closed` reads, so that a closed client does not look usable.
        if slf.get().client.is_closed() {
            extra.push_str(", closed=True");
        }
        // Both hosts, always: which host Investments go to, and their key with them, is the
        // first thing to check of a client (docs/protocol.md#hosts-paths-and-versions).
        Ok(format!(
            "{}(base_url={:?}, investments_base_url={:?}, customer_id={:?}, api_key={}, secret_key={}, timeout={}, \
             poll_interval={}, poll_timeout={}{extra})",
            slf.get_type().name()?,
            config.base_url,
            config.investments_base_url,
            config.customer_id,
            set(&config.api_key),
            set(&config.secret_key),
            config.timeout.as_secs_f64(),
            config.poll.interval.as_secs_f64(),
            config.poll.timeout.as_secs_f64()
        ))
    }
}

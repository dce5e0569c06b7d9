//! `Client`: one per configuration; every call blocks with the GIL released.

use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::args;
use super::blocking;
use super::challenge::call_handler;
use super::convert;
use super::results::{AttributesParts, InvestmentsParts, PyAttributes, PyInvestments};
use super::session::{session_to_py, step_to_py, PySession};
use crate::authorize::{AuthorizeRequest, Credentials};
use crate::config::{ClientConfig, ClientOptions, DEFAULT_MAX_BODY_BYTES};
use crate::error::Error;
use crate::{Client, Secret};

/// A client of the bank-data aggregation API.
///
/// Arguments left out fall back to ``BANKFEED_BASE_URL``, ``BANKFEED_CUSTOMER_ID``,
/// ``BANKFEED_API_KEY`` and ``BANKFEED_SECRET_KEY``::
///
///     client = bf.Client(base_url="https://toolbox-api.private.fin.ag",
///                        customer_id="43387ca6-0391-4c82-857d-70d95f087ecb")
///     session = client.login("FlinksCapital", "Greatday", "Everyday",
///                            on_challenge=bf.answers({"What city were you born in?": "Montreal"}))
#[pyclass(name = "Client", module = "bankfeed", frozen)]
pub(crate) struct PyClient {
    pub(crate) client: Client,
}

fn count(field: &'static str, value: i64) -> Result<u32, Error> {
    u32::try_from(value).map_err(|_| Error::config(field, format!("must be a whole number >= 0, got {value}")))
}

impl PyClient {
    pub(crate) fn from_options(options: ClientOptions) -> PyResult<Self> {
        let client = ClientConfig::from_options(options).and_then(Client::new)?;
        Ok(PyClient { client })
    }

    /// Runs the challenge loop from `request`, calling `on_challenge` for each challenge.
    fn sequence(
        &self,
        py: Python<'_>,
        request: AuthorizeRequest,
        on_challenge: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Py<PySession>> {
        let client = self.client.clone();
        let session = blocking::run(
            py,
            Some(&self.client),
            // One call under one deadline: the Authorize and every challenge round after it.
            move |mut asker| async move {
                let login = async {
                    let step = client.authorize(request).await?;
                    client.complete(step, &mut asker).await
                };
                client.within_deadline("Authorize", login).await
            },
            |py, challenge| match &on_challenge {
                Some(handler) => call_handler(py, handler, &self.client, challenge),
                None => Err(Error::ChallengeRequired(Box::new(challenge))),
            },
        )?;
        session_to_py(py, &self.client, session)
    }

    fn step(&self, py: Python<'_>, request: AuthorizeRequest) -> PyResult<Py<PyAny>> {
        let client = self.client.clone();
        let step = blocking::run_plain(py, Some(&self.client), async move { client.authorize(request).await })?;
        step_to_py(py, &self.client, step)
    }
}

#[allow(clippy::too_many_arguments)]
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

// The signature's default is a literal so that Python sees its value (stubtest compares it).
const _: () = assert!(DEFAULT_MAX_BODY_BYTES == 134217728, "update max_body_bytes= in Client's signature");

#[pymethods]
impl PyClient {
    #[new]
    #[pyo3(signature = (base_url=None, customer_id=None, *, api_key=None, secret_key=None,
                        investments_base_url=None, timeout=240.0, poll_interval=10.0,
                        poll_timeout=1800.0, max_retries=2, max_challenge_rounds=10, allow_insecure_http=false,
                        deadline=None, max_body_bytes=134217728))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        #[pyo3(from_py_with = args::base_url)] base_url: Option<String>,
        #[pyo3(from_py_with = args::customer_id)] customer_id: Option<String>,
        #[pyo3(from_py_with = args::api_key)] api_key: Option<String>,
        #[pyo3(from_py_with = args::secret_key)] secret_key: Option<String>,
        #[pyo3(from_py_with = args::investments_base_url)] investments_base_url: Option<String>,
        #[pyo3(from_py_with = args::timeout)] timeout: f64,
        #[pyo3(from_py_with = args::poll_interval)] poll_interval: f64,
        #[pyo3(from_py_with = args::poll_timeout)] poll_timeout: f64,
        #[pyo3(from_py_with = args::max_retries)] max_retries: i64,
        #[pyo3(from_py_with = args::max_challenge_rounds)] max_challenge_rounds: i64,
        #[pyo3(from_py_with = args::allow_insecure_http)] allow_insecure_http: bool,
        #[pyo3(from_py_with = args::deadline)] deadline: Option<f64>,
        #[pyo3(from_py_with = args::max_body_bytes)] max_body_bytes: usize,
    ) -> PyResult<Self> {
        let max_retries = count("max_retries", max_retries)?;
        let max_challenge_rounds = count("max_challenge_rounds", max_challenge_rounds)?;
        let options = ClientOptions {
            base_url,
            investments_base_url,
            customer_id,
            api_key: api_key.map(Secret::new),
            secret_key: secret_key.map(Secret::new),
            timeout: Some(timeout),
            poll_interval: Some(poll_interval),
            poll_timeout: Some(poll_timeout),
            max_retries: Some(max_retries),
            max_challenge_rounds: Some(max_challenge_rounds),
            max_body_bytes: Some(max_body_bytes),
            allow_insecure_http: Some(allow_insecure_http),
            deadline,
        };
        Self::from_options(options)
    }

    /// The service's base URL (``/v3/...`` is added per operation).
    #[getter]
    fn base_url(&self) -> &str {
        &self.client.config().base_url
    }

    /// The base URL of the Investments operation (the real service has a separate host).
    #[getter]
    fn investments_base_url(&self) -> &str {
        &self.client.config().investments_base_url
    }

    /// The customer id the calls are made for.
    #[getter]
    fn customer_id(&self) -> &str {
        &self.client.config().customer_id
    }

    /// Per-request timeout, in seconds.
    #[getter]
    fn timeout(&self) -> f64 {
        self.client.config().timeout.as_secs_f64()
    }

    /// Seconds between two polls of a 202 answer.
    #[getter]
    fn poll_interval(&self) -> f64 {
        self.client.config().poll.interval.as_secs_f64()
    }

    /// Seconds an operation may stay pending before PendingTimeout.
    #[getter]
    fn poll_timeout(&self) -> f64 {
        self.client.config().poll.timeout.as_secs_f64()
    }

    /// How many times a request safe to repeat is retried after a failed connection, a timeout,
    /// or a 408, 429 or 5xx answer.
    #[getter]
    fn max_retries(&self) -> u32 {
        self.client.config().retry.max_retries
    }

    /// The largest answer body read, in bytes; a larger one is refused.
    #[getter]
    fn max_body_bytes(&self) -> usize {
        self.client.config().max_body_bytes
    }

    /// How many challenge rounds a login answers before TooManyChallenges.
    #[getter]
    fn max_challenge_rounds(&self) -> u32 {
        self.client.config().max_challenge_rounds
    }

    /// Whether ``http://`` may reach a host that is not loopback (credentials in clear text).
    #[getter]
    fn allow_insecure_http(&self) -> bool {
        self.client.config().allow_insecure_http
    }

    /// Seconds one whole call may take (authorize, challenges, polling, retries), or None.
    #[getter]
    fn deadline(&self) -> Option<f64> {
        self.client.config().deadline.map(|deadline| deadline.as_secs_f64())
    }

    /// A live login with credentials (``MostRecentCached`` false). Returns a Session, or a
    /// Challenge to answer with ``challenge.answer(...)``.
    #[pyo3(signature = (institution, username, password, *, save=false, language=None, tag=None,
                        schedule_refresh=None))]
    #[allow(clippy::too_many_arguments)]
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
        self.step(py, credentials(&institution, &username, password, save, language, tag, schedule_refresh))
    }

    /// A live login whose challenges are answered by ``on_challenge(challenge) -> answers``
    /// (see ``bf.answers``). Without a handler, a challenge raises ChallengeRequired.
    #[pyo3(signature = (institution, username, password, *, on_challenge=None, save=false, language=None,
                        tag=None, schedule_refresh=None))]
    #[allow(clippy::too_many_arguments)]
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
    ) -> PyResult<Py<PySession>> {
        let request = credentials(&institution, &username, password, save, language, tag, schedule_refresh);
        self.sequence(py, request, on_challenge)
    }

    /// A cached read of a saved connection (``MostRecentCached`` true): a new session on the
    /// already processed data.
    fn authorize_cached(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::login_id)] login_id: String,
    ) -> PyResult<Py<PySession>> {
        let client = self.client.clone();
        let session =
            blocking::run_plain(py, Some(&self.client), async move { client.authorize_cached(&login_id).await })?;
        session_to_py(py, &self.client, session)
    }

    /// A live login by a saved connection (``MostRecentCached`` false), e.g. the trusted-device
    /// flow. Returns a Session or a Challenge.
    #[pyo3(signature = (login_id, *, save=false))]
    fn authorize_saved(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::login_id)] login_id: String,
        #[pyo3(from_py_with = args::save)] save: bool,
    ) -> PyResult<Py<PyAny>> {
        self.step(py, AuthorizeRequest::SavedLive { login_id, save })
    }

    /// ``authorize_saved`` with its challenges answered by ``on_challenge``.
    #[pyo3(signature = (login_id, *, on_challenge=None, save=false))]
    fn login_saved(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::login_id)] login_id: String,
        #[pyo3(from_py_with = args::on_challenge)] on_challenge: Option<Bound<'_, PyAny>>,
        #[pyo3(from_py_with = args::save)] save: bool,
    ) -> PyResult<Py<PySession>> {
        self.sequence(py, AuthorizeRequest::SavedLive { login_id, save }, on_challenge)
    }

    /// A cached session of ``login_id``, then its Investments (202 polled), as tables.
    fn investments(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::login_id)] login_id: String,
    ) -> PyResult<PyInvestments> {
        let client = self.client.clone();
        let parts = blocking::run_plain(py, Some(&self.client), async move {
            client.investments_for_login(&login_id).await.map(InvestmentsParts::from)
        })?;
        PyInvestments::new(py, parts)
    }

    /// Attributes of a saved connection. Runs the preparation of the service inside: a cached
    /// session, account detail polled to 200, then the attributes call (itself polled).
    ///
    /// Either a use-case ``package`` (``"income"``, ``"credit_risk"``, ``"user_analysis"``,
    /// ``"lending"``, ``"all"``), or custom ``attributes`` (``{group: [names]}``, names verbatim)
    /// with optional ``filters`` (e.g. ``{"AccountCategory": ["Operations"]}``), ``detail`` (names
    /// whose transactions to return) and ``account_filter`` (account ids)::
    ///
    ///     attrs = client.attributes(login_id, package="income")
    ///     attrs = client.attributes(login_id, {"Card": ["balance_min", "count_nsf"]}, detail=["count_nsf"])
    #[pyo3(signature = (login_id, attributes=None, *, package=None, filters=None, detail=None, account_filter=None))]
    #[allow(clippy::too_many_arguments)]
    fn attributes(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::login_id)] login_id: String,
        attributes: Option<Bound<'_, PyAny>>,
        #[pyo3(from_py_with = args::package)] package: Option<String>,
        filters: Option<Bound<'_, PyAny>>,
        #[pyo3(from_py_with = args::detail)] detail: Option<Vec<String>>,
        #[pyo3(from_py_with = args::account_filter)] account_filter: Option<Vec<String>>,
    ) -> PyResult<PyAttributes> {
        let query = convert::attributes_query(attributes, package, filters, detail, account_filter)?;
        let client = self.client.clone();
        let parts = blocking::run_plain(py, Some(&self.client), async move {
            client.attributes_for_login(&login_id, &query).await.map(AttributesParts::from)
        })?;
        PyAttributes::new(py, parts)
    }

    /// Deletes the retained data of a saved connection (DeleteCard). Returns the server's answer:
    /// a dict, or ``{"Message": text}`` when it answered in plain text.
    fn delete_login<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = args::login_id)] login_id: String,
    ) -> PyResult<Bound<'py, PyAny>> {
        let client = self.client.clone();
        let answer = blocking::run_plain(py, Some(&self.client), async move { client.delete_login(&login_id).await })?;
        convert::to_python(py, &answer)
    }

    /// Pickles as the client's configuration, keys included (docs/architecture.md#pickling): the
    /// copy is a new client with the same options, and its own connections.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyDict>,))> {
        let py = slf.py();
        let options = slf.get().client.config().to_options();
        let state = PyDict::new(py);
        state.set_item("base_url", options.base_url)?;
        state.set_item("investments_base_url", options.investments_base_url)?;
        state.set_item("customer_id", options.customer_id)?;
        state.set_item("api_key", options.api_key.as_ref().map(Secret::expose))?;
        state.set_item("secret_key", options.secret_key.as_ref().map(Secret::expose))?;
        state.set_item("timeout", options.timeout)?;
        state.set_item("poll_interval", options.poll_interval)?;
        state.set_item("poll_timeout", options.poll_timeout)?;
        state.set_item("max_retries", options.max_retries)?;
        state.set_item("max_challenge_rounds", options.max_challenge_rounds)?;
        state.set_item("max_body_bytes", options.max_body_bytes)?;
        state.set_item("allow_insecure_http", options.allow_insecure_http)?;
        state.set_item("deadline", options.deadline)?;
        Ok((py.get_type::<Self>().getattr("_restore")?, (state,)))
    }

    /// The client `__reduce__` described. The environment is not read: a key the pickled client
    /// did not have must not come from the `BANKFEED_*` variables of the process that unpickles it.
    #[staticmethod]
    fn _restore(state: &Bound<'_, PyDict>) -> PyResult<Self> {
        let item = |key: &str| -> PyResult<Option<Bound<'_, PyAny>>> {
            Ok(state.get_item(key)?.filter(|value| !value.is_none()))
        };
        let text = |key: &str| item(key)?.map(|v| v.extract::<String>()).transpose();
        let number = |key: &str| item(key)?.map(|v| v.extract::<f64>()).transpose();
        let count = |key: &str| item(key)?.map(|v| v.extract::<u32>()).transpose();
        let options = ClientOptions {
            base_url: text("base_url")?,
            investments_base_url: text("investments_base_url")?,
            customer_id: text("customer_id")?,
            api_key: text("api_key")?.map(Secret::new),
            secret_key: text("secret_key")?.map(Secret::new),
            timeout: number("timeout")?,
            poll_interval: number("poll_interval")?,
            poll_timeout: number("poll_timeout")?,
            max_retries: count("max_retries")?,
            max_challenge_rounds: count("max_challenge_rounds")?,
            max_body_bytes: item("max_body_bytes")?.map(|v| v.extract::<usize>()).transpose()?,
            allow_insecure_http: item("allow_insecure_http")?.map(|v| v.extract::<bool>()).transpose()?,
            deadline: number("deadline")?,
        };
        let client = ClientConfig::resolve(options, |_| None).and_then(Client::new)?;
        Ok(PyClient { client })
    }

    fn __repr__(&self) -> String {
        let config = self.client.config();
        let set = |key: &Option<Secret>| if key.is_some() { "'***'" } else { "None" };
        // The new options show only when they differ from their defaults, so the usual repr stays.
        let mut extra = String::new();
        if let Some(deadline) = config.deadline {
            extra.push_str(&format!(", deadline={}", deadline.as_secs_f64()));
        }
        if config.allow_insecure_http {
            extra.push_str(", allow_insecure_http=True");
        }
        format!(
            "Client(base_url={:?}, customer_id={:?}, api_key={}, secret_key={}, timeout={}, \
             poll_interval={}, poll_timeout={}{extra})",
            config.base_url,
            config.customer_id,
            set(&config.api_key),
            set(&config.secret_key),
            config.timeout.as_secs_f64(),
            config.poll.interval.as_secs_f64(),
            config.poll.timeout.as_secs_f64()
        )
    }
}

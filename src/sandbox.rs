//! `Sandbox`: the embedded server, for tests, demos and notebooks.

use std::sync::{Arc, Mutex};

use pyo3::exceptions::{PyOSError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyList, PyTuple};
use serde_json::Value;

use crate::args;
use crate::classes::{PyAsyncClient, PyClient};
use crate::convert;
use crate::error::{IntoException, OrRaise};
use crate::run::blocking;
use bankfeed::config::{ClientConfig, ClientOptions};
use bankfeed::error::Error;
use bankfeed::secret::Secret;
use bankfeed::sync::lock;
use bankfeed_sandbox::{
    attribute_catalogue, attribute_packages, login_ids, users, AsOf, AsyncLinks, CachedChallenges, Fault, ListenError,
    PendingOperations, RecordedRequest, Sandbox, SandboxConfig, ServedCassette, MAX_LOGINS, PUBLIC_API_KEY,
    PUBLIC_SECRET_KEY,
};

#[doc = stub_doc!("Sandbox")]
#[pyclass(name = "Sandbox", module = "bankfeed", frozen)]
pub(crate) struct PySandbox {
    server: Mutex<Option<Sandbox>>,
    url: String,
    customer_id: String,
    secret_key: Option<String>,
    api_key: Option<String>,
    seed: u64,
    logins: u32,
    /// `login_ids`, made on its first read: a million LoginIds take seconds to compute, and
    /// `client.investments(sb.login_ids[0])` reads them once per call.
    login_ids: PyOnceLock<Py<PyList>>,
    /// The `pending_seconds` knob, for the poll interval of the clients it makes.
    pending_seconds: f64,
    /// The admin API's token, with `admin=True` (docs/sandbox.md#the-admin-api).
    admin_token: Option<String>,
    /// The cassette's path, with `replay=` (docs/cassettes.md#replay-for-any-client).
    replay: Option<String>,
    /// The cassette's path and the server recorded, with `record=` and `upstream=`
    /// (docs/cassettes.md#recording-any-client).
    record: Option<(String, String)>,
}

/// A session lifetime knob: a positive number of seconds, at most a day (a longer one is no
/// test's need, and `Duration` must hold it).
fn lifetime(name: &'static str, seconds: f64) -> PyResult<std::time::Duration> {
    if !(seconds.is_finite() && seconds > 0.0 && seconds <= 86_400.0) {
        let rule = format!("must be a number of seconds above 0 and at most 86400, got {seconds}");
        return Err(Error::config(name, rule).into_exception());
    }
    Ok(std::time::Duration::from_secs_f64(seconds))
}

/// `logins`: a count from 0 to [`MAX_LOGINS`], which its messages state (rather than the range of
/// the integer type it is read into).
fn logins(value: &Bound<'_, PyAny>) -> PyResult<u32> {
    args::whole_in("logins", value, 0, MAX_LOGINS)
}

/// `request_log_bytes`: a whole number of bytes, 0 or more (0 keeps no entry).
fn request_log_bytes(value: &Bound<'_, PyAny>) -> PyResult<usize> {
    let bytes: u64 = args::whole_at_least("request_log_bytes", value, 0_u64)?;
    // Past the address space is no bound at all.
    Ok(usize::try_from(bytes).unwrap_or(usize::MAX))
}

/// `as_of`: the sandbox's "today", a `datetime.date` or text `YYYY-MM-DD` (docs/sandbox.md#the-clock),
/// or None for its first day.
fn clock_at(value: &Bound<'_, PyAny>) -> PyResult<AsOf> {
    const NAME: &str = "as_of";
    let Some(text) = args::optional_date(NAME, value)? else { return Ok(AsOf::default()) };
    AsOf::parse(&text).map_err(|rule| Error::config(NAME, rule).into_exception())
}

/// `days` of `advance`: a whole number, 1 or more.
fn days(value: &Bound<'_, PyAny>) -> PyResult<i64> {
    args::whole_at_least("days", value, 1_i64)
}

/// `clock` as a `datetime.date`.
fn python_date(py: Python<'_>, clock: AsOf) -> PyResult<Bound<'_, PyAny>> {
    py.import("datetime")?.getattr("date")?.call_method1("fromisoformat", (clock.date(),))
}

/// `pending_operations`: the data operations that answer 202 first, or None for the default ones.
fn pending_operations(value: &Bound<'_, PyAny>) -> PyResult<Option<PendingOperations>> {
    const NAME: &str = "pending_operations";
    let Some(names) = args::optional_texts(NAME, value)? else { return Ok(None) };
    PendingOperations::from_names(&names).map(Some).map_err(|rule| Error::config(NAME, rule).into_exception())
}

/// `async_links`: text, `"template"` or `"concrete"` (read as text, so that the signature's default
/// is a literal the stub and `help()` show; checked by [`AsyncLinks::parse`]).
fn async_links<'a>(value: &'a Bound<'_, PyAny>) -> PyResult<&'a str> {
    args::borrowed_text("async_links", value)
}

/// `cached_challenges`: text, `"never"`, `"always"` or `"per_user"`, as [`async_links`].
fn cached_challenges<'a>(value: &'a Bound<'_, PyAny>) -> PyResult<&'a str> {
    args::borrowed_text("cached_challenges", value)
}

/// `secret_key`: text or None (no token asked for), borrowed, so that the signature's default can
/// be the public test instance's key written as a literal (the stub and `help()` show it).
fn secret_key<'a>(value: &'a Bound<'_, PyAny>) -> PyResult<Option<&'a str>> {
    optional_key("secret_key", value)
}

/// `api_key`: as [`secret_key`].
fn api_key<'a>(value: &'a Bound<'_, PyAny>) -> PyResult<Option<&'a str>> {
    optional_key("api_key", value)
}

fn optional_key<'a>(name: &'static str, value: &'a Bound<'_, PyAny>) -> PyResult<Option<&'a str>> {
    if value.is_none() {
        return Ok(None);
    }
    args::borrowed_text(name, value).map(Some)
}

/// Refuses a customer id or key that `sb.client()` would refuse, with the Client's own
/// `ConfigError` (docs/errors.md#the-classes): otherwise the sandbox starts, and the mistake
/// surfaces later as a failure to make its client. The checks are the Client's, run on a
/// loopback URL of no consequence, so the two cannot drift apart; like the Client's, the
/// messages never repeat a key.
fn check_client_settings(customer_id: &str, api_key: Option<&str>, secret_key: Option<&str>) -> Result<(), Error> {
    let options = ClientOptions {
        base_url: Some("http://127.0.0.1".to_owned()),
        customer_id: Some(customer_id.to_owned()),
        api_key: api_key.map(Secret::new),
        secret_key: secret_key.map(Secret::new),
        ..ClientOptions::default()
    };
    // No environment: a key left out is no key, as for the sandbox itself.
    ClientConfig::resolve(options, |_| None).map(drop)
}

/// The `OSError` of a sandbox that did not start; one that could not listen names the address
/// (a taken port is the usual cause, and with several sandboxes the port is the clue).
fn start_error(error: &std::io::Error) -> PyErr {
    match error.get_ref().and_then(|inner| inner.downcast_ref::<ListenError>()) {
        Some(listen) => {
            PyOSError::new_err(format!("the sandbox could not listen on {}: {}", listen.addr, listen.source))
        }
        None => PyOSError::new_err(format!("the sandbox could not start: {error}")),
    }
}

/// The defaults of `Sandbox`'s options in the core, named as its signature names them: what
/// `tests/python/tooling/test_defaults.py` compares with the signature's literals. The settings Python
/// cannot set (the timeouts, `max_connections`) are left out.
pub(crate) fn defaults(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let SandboxConfig {
        customer_id,
        host,
        port,
        pending_polls,
        pending_seconds,
        slow_pending_polls,
        loading_polls,
        pending_operations,
        async_links,
        cached_challenges,
        auth,
        secret_key,
        api_key,
        token_ttl,
        seed,
        investment_transactions,
        banking_transactions,
        tier2,
        investments,
        faults,
        logins,
        session_ttl,
        processing_ttl,
        card_in_use,
        max_wrong_answers,
        admin_token,
        request_log_bytes,
        as_of,
        cassette,
        ..
    } = SandboxConfig::default();
    let defaults = PyDict::new(py);
    defaults.set_item("customer_id", customer_id)?;
    defaults.set_item("host", host.to_string())?;
    defaults.set_item("port", port)?;
    defaults.set_item("pending_polls", pending_polls)?;
    defaults.set_item("pending_seconds", pending_seconds)?;
    defaults.set_item("slow_pending_polls", slow_pending_polls)?;
    defaults.set_item("loading_polls", loading_polls)?;
    defaults.set_item("pending_operations", pending_operations.names())?;
    defaults.set_item("async_links", async_links.as_str())?;
    defaults.set_item("cached_challenges", cached_challenges.as_str())?;
    defaults.set_item("auth", auth)?;
    defaults.set_item("secret_key", secret_key)?;
    defaults.set_item("api_key", api_key)?;
    defaults.set_item("token_ttl", token_ttl.as_secs_f64())?;
    defaults.set_item("seed", seed)?;
    defaults.set_item("investment_transactions", investment_transactions)?;
    defaults.set_item("banking_transactions", banking_transactions)?;
    defaults.set_item("tier2", tier2)?;
    defaults.set_item("investments", investments)?;
    let faults = faults.iter().map(|fault| convert::to_python(py, &fault.to_json())).collect::<PyResult<Vec<_>>>()?;
    defaults.set_item("faults", faults)?;
    defaults.set_item("logins", logins)?;
    defaults.set_item("session_idle_seconds", session_ttl.as_secs_f64())?;
    defaults.set_item("session_processing_seconds", processing_ttl.as_secs_f64())?;
    defaults.set_item("card_in_use_seconds", card_in_use.as_secs_f64())?;
    defaults.set_item("max_wrong_answers", max_wrong_answers)?;
    defaults.set_item("admin", admin_token.is_some())?;
    defaults.set_item("request_log_bytes", request_log_bytes)?;
    defaults.set_item("as_of", as_of.date())?;
    // None: no cassette; a recording sandbox is none by default either.
    defaults.set_item("replay", cassette.map(|cassette| cassette.path().display().to_string()))?;
    defaults.set_item("record", py.None())?;
    defaults.set_item("upstream", py.None())?;
    defaults.set_item("allow_live_record", false)?;
    Ok(defaults)
}

/// `upstream=`: None, or the URL of a server, as text.
fn optional_upstream(value: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
    if value.is_none() {
        return Ok(None);
    }
    let Ok(text) = value.cast::<pyo3::types::PyString>() else {
        return Err(args::wrong_type("upstream", "a str (a URL) or None", value));
    };
    Ok(Some(args::str_of("upstream", None, text)?.to_owned()))
}

/// The cassette a sandbox serves instead of its imitation, as its arguments ask.
enum Served {
    /// `replay=PATH` (docs/cassettes.md#replay-for-any-client).
    Replay(std::path::PathBuf),
    /// `record=PATH, upstream=URL` (docs/cassettes.md#recording-any-client).
    Record { path: std::path::PathBuf, upstream: String, allow_live_record: bool },
}

impl Served {
    /// What `replay`, `record`, `upstream` and `allow_live_record` ask for; an option that
    /// needs another, or that excludes one given, is refused naming it.
    fn of(
        replay: Option<std::path::PathBuf>,
        record: Option<std::path::PathBuf>,
        upstream: Option<String>,
        allow_live_record: bool,
    ) -> Result<Option<Served>, Error> {
        let recording_only =
            || Error::config("allow_live_record", "is an option of a recording: give record=PATH and upstream=URL too");
        match (replay, record, upstream) {
            (Some(_), Some(_), _) => Err(Error::config(
                "record",
                "cannot be given with replay: a sandbox replays a cassette or records one, not both",
            )),
            (Some(_), None, Some(_)) => Err(Error::config(
                "upstream",
                "is where record= forwards requests to; a replay sends none: leave it out, or record instead",
            )),
            (Some(_) | None, None, None) if allow_live_record => Err(recording_only()),
            (Some(path), None, None) => Ok(Some(Served::Replay(path))),
            (None, Some(path), Some(upstream)) => Ok(Some(Served::Record { path, upstream, allow_live_record })),
            (None, Some(_), None) => Err(Error::config(
                "upstream",
                "must be given with record: the URL of the server whose answers are recorded, as a client's base_url",
            )),
            (None, None, Some(_)) => {
                Err(Error::config("upstream", "is where record= forwards requests to: give record=PATH too"))
            }
            (None, None, None) => Ok(None),
        }
    }

    /// The option whose cassette it serves: what a refusal of the imitation's options names.
    fn field(&self) -> &'static str {
        match self {
            Served::Replay(_) => "replay",
            Served::Record { .. } => "record",
        }
    }

    fn replayed(&self) -> Option<String> {
        match self {
            Served::Replay(path) => Some(path.display().to_string()),
            Served::Record { .. } => None,
        }
    }

    fn recorded(&self) -> Option<(String, String)> {
        match self {
            Served::Record { path, upstream, .. } => Some((path.display().to_string(), upstream.clone())),
            Served::Replay(_) => None,
        }
    }
}

/// `config` made a replay server of a cassette (docs/cassettes.md#replay-for-any-client), or a
/// recorder of the traffic it forwards (docs/cassettes.md#recording-any-client). The options that
/// shape the imitation do nothing then: given (other than their defaults), they are refused by
/// name rather than ignored. The keys and the customer id stay: they are what `sb.client()` sends
/// (a replay checks no key, and matches any customer; a recording forwards what it is sent).
fn serving(py: Python<'_>, served: &Served, config: SandboxConfig) -> PyResult<SandboxConfig> {
    let given = imitation_options(&config);
    if !given.is_empty() {
        let rule = format!(
            "serves a cassette, which the options of the imitation do not change: leave out {}",
            given.join(", ")
        );
        return Err(Error::config(served.field(), rule).into_exception());
    }
    let customer_id = config.customer_id.clone();
    let cassette = py
        .detach(|| match served {
            Served::Replay(path) => ServedCassette::replay(path, &customer_id),
            Served::Record { path, upstream, allow_live_record } => {
                ServedCassette::record(path, upstream, &customer_id, *allow_live_record)
            }
        })
        .or_raise()?;
    Ok(SandboxConfig { cassette: Some(Arc::new(cassette)), ..config })
}

/// The options of the imitation `config` sets to other than their defaults, by their Python names.
fn imitation_options(config: &SandboxConfig) -> Vec<&'static str> {
    let defaults = SandboxConfig::default();
    let differs = [
        ("pending_polls", config.pending_polls != defaults.pending_polls),
        ("pending_seconds", config.pending_seconds.to_bits() != defaults.pending_seconds.to_bits()),
        ("slow_pending_polls", config.slow_pending_polls != defaults.slow_pending_polls),
        ("loading_polls", config.loading_polls != defaults.loading_polls),
        ("pending_operations", config.pending_operations != defaults.pending_operations),
        ("async_links", config.async_links != defaults.async_links),
        ("cached_challenges", config.cached_challenges != defaults.cached_challenges),
        ("seed", config.seed != defaults.seed),
        ("investment_transactions", config.investment_transactions != defaults.investment_transactions),
        ("banking_transactions", config.banking_transactions != defaults.banking_transactions),
        ("tier2", config.tier2 != defaults.tier2),
        ("investments", config.investments != defaults.investments),
        ("token_ttl", config.token_ttl != defaults.token_ttl),
        ("faults", config.faults != defaults.faults),
        ("logins", config.logins != defaults.logins),
        ("session_idle_seconds", config.session_ttl != defaults.session_ttl),
        ("session_processing_seconds", config.processing_ttl != defaults.processing_ttl),
        ("card_in_use_seconds", config.card_in_use != defaults.card_in_use),
        ("max_wrong_answers", config.max_wrong_answers != defaults.max_wrong_answers),
        ("admin", config.admin_token.is_some()),
        ("as_of", config.as_of != defaults.as_of),
    ];
    differs.into_iter().filter(|(_, differs)| *differs).map(|(name, _)| name).collect()
}

/// The error of a method of the imitation called on a replay server.
fn not_replayed(method: &str) -> PyErr {
    PyValueError::new_err(format!(
        "sb.{method}() acts on the imitation, and this sandbox serves a cassette (replay= or record=): its \
         answers are the recorded ones, or the upstream's (docs/cassettes.md#replay-for-any-client)"
    ))
}

/// The longest `token_ttl`, in seconds: a day, far past the service's 30 minutes, and a value
/// every clock can add to the present.
const MAX_TOKEN_TTL: f64 = 86_400.0;

/// How often the clients `sb.client()` and `sb.async_client()` poll by default, in seconds.
const SANDBOX_POLL_INTERVAL: f64 = 0.05;

impl PySandbox {
    fn with_server<T>(&self, f: impl FnOnce(&Sandbox) -> T) -> PyResult<T> {
        let server = lock(&self.server);
        server.as_ref().map(f).ok_or_else(|| PyValueError::new_err("the sandbox is closed"))
    }
}

#[pymethods]
impl PySandbox {
    #[new]
    #[pyo3(signature = (*, customer_id=None, host="127.0.0.1", port=0, pending_polls=1, pending_seconds=0.0,
                        slow_pending_polls=5, loading_polls=0, pending_operations=None, async_links="template",
                        cached_challenges="never", seed=0, investment_transactions=None,
                        banking_transactions=None, tier2=false, investments=true, auth=true,
                        secret_key="c4569c54-e167-4d34-8de6-f4113bc82414",
                        api_key="3d5266a8-b697-48d4-8de6-52e2e2662acc", token_ttl=1800.0, faults=None,
                        logins=0, session_idle_seconds=480.0, session_processing_seconds=1800.0,
                        card_in_use_seconds=3.0, max_wrong_answers=3, admin=false,
                        request_log_bytes=16_777_216, as_of=None, replay=None, record=None,
                        upstream=None, allow_live_record=false))]
    #[expect(clippy::too_many_arguments, reason = "one argument per option of the Python constructor")]
    #[expect(
        clippy::fn_params_excessive_bools,
        reason = "each flag is a knob of its own (tier2, investments, auth, admin)"
    )]
    fn new(
        py: Python<'_>,
        #[pyo3(from_py_with = args::customer_id)] customer_id: Option<String>,
        #[pyo3(from_py_with = args::host)] host: &str,
        #[pyo3(from_py_with = args::port)] port: u16,
        #[pyo3(from_py_with = args::pending_polls)] pending_polls: u32,
        #[pyo3(from_py_with = args::pending_seconds)] pending_seconds: f64,
        #[pyo3(from_py_with = args::slow_pending_polls)] slow_pending_polls: u32,
        #[pyo3(from_py_with = args::loading_polls)] loading_polls: u32,
        #[pyo3(from_py_with = pending_operations)] pending_operations: Option<PendingOperations>,
        #[pyo3(from_py_with = async_links)] async_links: &str,
        #[pyo3(from_py_with = cached_challenges)] cached_challenges: &str,
        #[pyo3(from_py_with = args::seed)] seed: u64,
        #[pyo3(from_py_with = args::investment_transactions)] investment_transactions: Option<usize>,
        #[pyo3(from_py_with = args::banking_transactions)] banking_transactions: Option<usize>,
        #[pyo3(from_py_with = args::tier2)] tier2: bool,
        #[pyo3(from_py_with = args::investments)] investments: bool,
        #[pyo3(from_py_with = args::auth)] auth: bool,
        #[pyo3(from_py_with = secret_key)] secret_key: Option<&str>,
        #[pyo3(from_py_with = api_key)] api_key: Option<&str>,
        #[pyo3(from_py_with = args::token_ttl)] token_ttl: f64,
        faults: Option<Bound<'_, PyAny>>,
        #[pyo3(from_py_with = logins)] logins: u32,
        #[pyo3(from_py_with = args::session_idle_seconds)] session_idle_seconds: f64,
        #[pyo3(from_py_with = args::session_processing_seconds)] session_processing_seconds: f64,
        #[pyo3(from_py_with = args::card_in_use_seconds)] card_in_use_seconds: f64,
        #[pyo3(from_py_with = args::max_wrong_answers)] max_wrong_answers: u32,
        #[pyo3(from_py_with = args::admin)] admin: bool,
        #[pyo3(from_py_with = request_log_bytes)] request_log_bytes: usize,
        as_of: Option<Bound<'_, PyAny>>,
        replay: Option<Bound<'_, PyAny>>,
        record: Option<Bound<'_, PyAny>>,
        #[pyo3(from_py_with = optional_upstream)] upstream: Option<String>,
        #[pyo3(from_py_with = args::allow_live_record)] allow_live_record: bool,
    ) -> PyResult<Self> {
        let cassette_path = |field: &'static str, value: Option<Bound<'_, PyAny>>| match value {
            Some(value) if !value.is_none() => {
                crate::cassette::path_of(field, "a str, an os.PathLike or None", &value).map(Some)
            }
            _ => Ok(None),
        };
        let replay = cassette_path("replay", replay)?;
        let record = cassette_path("record", record)?;
        let served = Served::of(replay, record, upstream, allow_live_record).or_raise()?;
        let as_of = match as_of {
            Some(value) => clock_at(&value)?,
            None => AsOf::default(),
        };
        let faults = match faults {
            Some(faults) if !faults.is_none() => faults_from(&faults)?,
            _ => Vec::new(),
        };
        if !(pending_seconds.is_finite() && pending_seconds >= 0.0) {
            let rule = format!("must be a number of seconds >= 0, got {pending_seconds}");
            return Err(Error::config("pending_seconds", rule).into_exception());
        }
        if !(token_ttl.is_finite() && token_ttl > 0.0 && token_ttl <= MAX_TOKEN_TTL) {
            let rule = format!("must be a number of seconds > 0 and at most {MAX_TOKEN_TTL}, got {token_ttl}");
            return Err(Error::config("token_ttl", rule).into_exception());
        }
        let session_ttl = lifetime("session_idle_seconds", session_idle_seconds)?;
        let processing_ttl = lifetime("session_processing_seconds", session_processing_seconds)?;
        let card_in_use = if card_in_use_seconds == 0.0 {
            std::time::Duration::ZERO
        } else {
            lifetime("card_in_use_seconds", card_in_use_seconds)?
        };
        let async_links =
            AsyncLinks::parse(async_links).map_err(|rule| Error::config("async_links", rule)).or_raise()?;
        let cached_challenges = CachedChallenges::parse(cached_challenges)
            .map_err(|rule| Error::config("cached_challenges", rule))
            .or_raise()?;
        if max_wrong_answers == 0 {
            return Err(Error::config("max_wrong_answers", "must be at least 1, got 0").into_exception());
        }
        // Unguessable, and new at every start: whoever started the sandbox reads it from
        // `admin_token` (or the line `serve_sandbox` prints), no one else can.
        let admin_token = admin.then(|| uuid::Uuid::new_v4().simple().to_string());
        let defaults = SandboxConfig::default();
        let customer_id = customer_id.unwrap_or(defaults.customer_id);
        // With `auth` off no key is asked for, and `sb.client()` sends none.
        let (secret_key, api_key) =
            if auth { (secret_key.map(str::to_owned), api_key.map(str::to_owned)) } else { (None, None) };
        check_client_settings(&customer_id, api_key.as_deref(), secret_key.as_deref()).or_raise()?;
        let config = SandboxConfig {
            customer_id,
            host: host
                .parse()
                .map_err(|_| Error::config("host", format!("must be an IP address, not {host:?}")))
                .or_raise()?,
            port,
            pending_polls,
            pending_seconds,
            slow_pending_polls,
            loading_polls,
            pending_operations: pending_operations.unwrap_or_default(),
            async_links,
            cached_challenges,
            seed,
            investment_transactions,
            banking_transactions,
            tier2,
            investments,
            auth,
            secret_key: secret_key.clone(),
            api_key: api_key.clone(),
            token_ttl: std::time::Duration::from_secs_f64(token_ttl),
            faults,
            logins,
            session_ttl,
            processing_ttl,
            card_in_use,
            max_wrong_answers,
            admin_token: admin_token.clone(),
            request_log_bytes,
            as_of,
            ..defaults
        };
        let config = match &served {
            Some(served) => serving(py, served, config)?,
            None => config,
        };
        // Saving a million bulk logins takes a moment: other threads may run meanwhile.
        let server = py.detach(move || Sandbox::start(config)).map_err(|error| start_error(&error))?;
        Ok(PySandbox {
            url: server.url(),
            customer_id: server.customer_id().to_owned(),
            server: Mutex::new(Some(server)),
            secret_key,
            api_key,
            seed,
            logins,
            login_ids: PyOnceLock::new(),
            pending_seconds,
            admin_token,
            replay: served.as_ref().and_then(Served::replayed),
            record: served.as_ref().and_then(Served::recorded),
        })
    }

    #[doc = stub_doc!("Sandbox.url")]
    #[getter]
    fn url(&self) -> &str {
        &self.url
    }

    #[doc = stub_doc!("Sandbox.widget_url")]
    #[getter]
    fn widget_url(&self) -> String {
        format!("{}/v2/", self.url)
    }

    #[doc = stub_doc!("Sandbox.customer_id")]
    #[getter]
    fn customer_id(&self) -> &str {
        &self.customer_id
    }

    #[doc = stub_doc!("Sandbox.secret_key")]
    #[getter]
    fn secret_key(&self) -> Option<&str> {
        self.secret_key.as_deref()
    }

    #[doc = stub_doc!("Sandbox.api_key")]
    #[getter]
    fn api_key(&self) -> Option<&str> {
        self.api_key.as_deref()
    }

    #[doc = stub_doc!("Sandbox.login_ids")]
    #[getter]
    fn login_ids<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let cached = self.login_ids.get_or_try_init(py, || {
            let (seed, logins) = (self.seed, self.logins);
            // Other threads run while the ids are computed; a second reader waits for this list.
            let ids = py.detach(move || login_ids(seed, logins));
            PyList::new(py, ids).map(Bound::unbind)
        })?;
        let cached = cached.bind(py);
        // A copy of the pointers only (the strings are shared and immutable): milliseconds for a
        // million, and a caller that sorts or clears its list leaves the next read intact.
        Ok(cached.get_slice(0, cached.len()))
    }

    #[doc = stub_doc!("Sandbox.login_ids_for")]
    #[staticmethod]
    #[pyo3(signature = (logins, seed=0))]
    fn login_ids_for(
        py: Python<'_>,
        #[pyo3(from_py_with = logins)] logins: u32,
        #[pyo3(from_py_with = args::seed)] seed: u64,
    ) -> Vec<String> {
        py.detach(move || login_ids(seed, logins))
    }

    #[doc = stub_doc!("Sandbox.users")]
    #[getter]
    #[expect(clippy::unused_self, reason = "a getter of the instance, whose users are the sandbox's")]
    fn users<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        users_list(py)
    }

    #[doc = stub_doc!("Sandbox.attribute_catalogue")]
    #[staticmethod]
    fn attribute_catalogue(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
        let list = PyList::empty(py);
        for (name, description) in attribute_catalogue() {
            let item = PyDict::new(py);
            item.set_item("name", name)?;
            item.set_item("description", description)?;
            list.append(item)?;
        }
        Ok(list)
    }

    #[doc = stub_doc!("Sandbox.attribute_packages")]
    #[staticmethod]
    fn attribute_packages(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
        let packages = PyDict::new(py);
        for (operation, names) in attribute_packages() {
            packages.set_item(operation, names)?;
        }
        Ok(packages)
    }

    #[doc = stub_doc!("Sandbox.closed")]
    #[getter]
    fn closed(&self) -> bool {
        lock(&self.server).is_none()
    }

    #[doc = stub_doc!("Sandbox.request_count")]
    #[getter]
    fn request_count(&self) -> PyResult<u64> {
        self.with_server(Sandbox::request_count)
    }

    #[doc = stub_doc!("Sandbox.requests")]
    #[getter]
    fn requests<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let requests = self.with_server(Sandbox::requests)?;
        let list = PyList::empty(py);
        for request in &requests {
            list.append(recorded_request(py, request)?)?;
        }
        Ok(list)
    }

    #[doc = stub_doc!("Sandbox.requests_dropped")]
    #[getter]
    fn requests_dropped(&self) -> PyResult<u64> {
        self.with_server(Sandbox::requests_dropped)
    }

    #[doc = stub_doc!("Sandbox.inject")]
    #[pyo3(signature = (*faults))]
    fn inject(&self, faults: &Bound<'_, PyTuple>) -> PyResult<()> {
        // `faults=` takes a list, so a list is what a user passes here first.
        if let Ok(first) = faults.get_item(0) {
            if first.cast::<PyList>().is_ok() || first.cast::<PyTuple>().is_ok() {
                let came = args::type_name(&first);
                let message = format!("inject takes the faults one by one, sb.inject(*faults), not a {came}");
                return Err(PyTypeError::new_err(message));
            }
        }
        if self.replay.is_some() || self.record.is_some() {
            return Err(not_replayed("inject"));
        }
        let faults = faults_from(faults.as_any())?;
        self.with_server(|server| server.inject(faults))
    }

    #[doc = stub_doc!("Sandbox.clear_faults")]
    fn clear_faults(&self) -> PyResult<()> {
        self.with_server(Sandbox::clear_faults)
    }

    #[doc = stub_doc!("Sandbox.reset")]
    fn reset(&self, py: Python<'_>) -> PyResult<()> {
        // Saving a million bulk logins again takes a moment: other threads may run meanwhile.
        py.detach(|| self.with_server(Sandbox::reset))
    }

    #[doc = stub_doc!("Sandbox.as_of")]
    #[getter]
    fn as_of<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let clock = self.with_server(Sandbox::as_of)?;
        python_date(py, clock)
    }

    #[doc = stub_doc!("Sandbox.advance")]
    #[pyo3(signature = (days=1))]
    fn advance<'py>(&self, py: Python<'py>, #[pyo3(from_py_with = days)] days: i64) -> PyResult<Bound<'py, PyAny>> {
        if self.replay.is_some() || self.record.is_some() {
            return Err(not_replayed("advance"));
        }
        let moved = self.with_server(|server| server.advance(days))?;
        let clock = moved.map_err(|rule| Error::config("days", rule)).or_raise()?;
        python_date(py, clock)
    }

    #[doc = stub_doc!("Sandbox.admin_token")]
    #[getter]
    fn admin_token(&self) -> Option<&str> {
        self.admin_token.as_deref()
    }

    #[doc = stub_doc!("Sandbox.faults")]
    #[getter]
    fn faults<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let faults = self.with_server(Sandbox::faults)?;
        let list = PyList::empty(py);
        for fault in faults {
            list.append(convert::to_python(py, &fault.to_json())?)?;
        }
        Ok(list)
    }

    #[doc = stub_doc!("Sandbox.replay")]
    #[getter]
    fn replay(&self) -> Option<&str> {
        self.replay.as_deref()
    }

    #[doc = stub_doc!("Sandbox.record")]
    #[getter]
    fn record(&self) -> Option<&str> {
        self.record.as_ref().map(|(path, _)| path.as_str())
    }

    #[doc = stub_doc!("Sandbox.play_count")]
    fn play_count(&self) -> PyResult<Option<(usize, usize)>> {
        self.with_server(|server| server.cassette().map(ServedCassette::play_count))
    }

    #[doc = stub_doc!("Sandbox.client")]
    #[pyo3(signature = (**options))]
    fn client(&self, py: Python<'_>, options: Option<Bound<'_, PyDict>>) -> PyResult<Py<PyAny>> {
        self.make_client::<PyClient>(py, options)
    }

    #[doc = stub_doc!("Sandbox.async_client")]
    #[pyo3(signature = (**options))]
    fn async_client(&self, py: Python<'_>, options: Option<Bound<'_, PyDict>>) -> PyResult<Py<PyAny>> {
        self.make_client::<PyAsyncClient>(py, options)
    }

    #[doc = stub_doc!("Sandbox.close")]
    fn close(&self, py: Python<'_>) {
        let server = lock(&self.server).take();
        if let Some(server) = server {
            py.detach(move || server.stop());
        }
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, pyo3::types::PyTuple>) {
        self.close(py);
    }

    fn __repr__(&self) -> String {
        let state = if lock(&self.server).is_some() { "running" } else { "closed" };
        let replay = self.replay.as_ref().map(|path| format!(", replay={path:?}")).unwrap_or_default();
        format!("Sandbox(url={:?}, customer_id={:?}{replay}, {state})", self.url, self.customer_id)
    }
}

impl PySandbox {
    /// A client of class `C` with this sandbox's URL, customer id and keys, unless `options` say;
    /// never anything from the environment (docs/sandbox.md#starting-it).
    fn make_client<C: pyo3::PyTypeInfo>(
        &self,
        py: Python<'_>,
        options: Option<Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        let kwargs = options.unwrap_or_else(|| PyDict::new(py));
        for (name, value) in [
            ("base_url", Some(&self.url)),
            ("customer_id", Some(&self.customer_id)),
            ("api_key", self.api_key.as_ref()),
            ("secret_key", self.secret_key.as_ref()),
        ] {
            if !kwargs.contains(name)? {
                kwargs.set_item(name, value)?;
            }
        }
        // The sandbox answers the poll after a 202 at once (docs/sandbox.md#starting-it): its clients
        // need not wait the real service's 10 seconds, which made a test of 1,000 logins take
        // minutes. A tenth of `pending_seconds` when that is longer, so that a slow knob is not
        // polled a hundred times over.
        if !kwargs.contains("poll_interval")? {
            kwargs.set_item("poll_interval", SANDBOX_POLL_INTERVAL.max(self.pending_seconds / 10.0))?;
        }
        kwargs.set_item("_environment", false)?;
        Ok(py.get_type::<C>().call((), Some(&kwargs))?.unbind())
    }
}

/// Faults from a list of dicts (docs/sandbox.md#faults); a `ConfigError` names the item and the key.
fn faults_from(value: &Bound<'_, PyAny>) -> PyResult<Vec<Fault>> {
    let Value::Array(items) = convert::from_python("faults", value).or_raise()? else {
        return Err(Error::config("faults", "must be a list of dicts").into_exception());
    };
    let mut faults = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let fault = Fault::from_json(item)
            .map_err(|rule| Error::config("faults", format!("item {index}: {rule}")))
            .or_raise()?;
        faults.push(fault);
    }
    Ok(faults)
}

/// One entry of `sb.requests`, with the keys of `bankfeed.RecordedRequest`
/// (docs/sandbox.md#the-request-log).
fn recorded_request<'py>(py: Python<'py>, request: &RecordedRequest) -> PyResult<Bound<'py, PyAny>> {
    convert::to_python(py, &request.to_json())
}

fn users_list(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let list = PyList::empty(py);
    for user in users() {
        let item = PyDict::new(py);
        item.set_item("username", user.username)?;
        item.set_item("password", user.password)?;
        item.set_item("description", user.description)?;
        item.set_item("challenge_types", user.challenge_types)?;
        let answers = PyDict::new(py);
        for (prompt, values) in user.answers {
            answers.set_item(prompt, values)?;
        }
        item.set_item("answers", answers)?;
        list.append(item)?;
    }
    Ok(list)
}

#[doc = stub_doc!("serve_sandbox")]
#[pyfunction]
#[pyo3(signature = (port, host="127.0.0.1", login_ids_file=None, **options))]
pub(crate) fn serve_sandbox(
    py: Python<'_>,
    #[pyo3(from_py_with = args::port)] port: u16,
    #[pyo3(from_py_with = args::host)] host: &str,
    login_ids_file: Option<std::path::PathBuf>,
    options: Option<Bound<'_, PyDict>>,
) -> PyResult<()> {
    let kwargs = options.unwrap_or_else(|| PyDict::new(py));
    kwargs.set_item("port", port)?;
    kwargs.set_item("host", host)?;
    let sandbox = py.get_type::<PySandbox>().call((), Some(&kwargs))?.cast_into::<PySandbox>()?;
    let sandbox = sandbox.get();
    if let Some(path) = &login_ids_file {
        let ids = py.detach(|| login_ids(sandbox.seed, sandbox.logins));
        if let Err(error) = write_login_ids(path, &ids) {
            sandbox.close(py);
            let message = format!("the LoginIds could not be written to {}: {error}", path.display());
            return Err(PyOSError::new_err(message));
        }
    }
    announce(sandbox, login_ids_file.as_deref());
    // The server runs on its own thread; this only waits for Ctrl-C, which ends the wait with
    // KeyboardInterrupt after the server is closed.
    let waited: Result<(), _> = blocking::run_plain(py, std::future::pending());
    sandbox.close(py);
    Ok(waited?)
}

/// The banner of ``serve_sandbox``: the URL line first, then where the saved logins' LoginIds are.
fn announce(sandbox: &PySandbox, login_ids_file: Option<&std::path::Path>) {
    use std::io::Write as _;

    let mut out = std::io::stdout().lock();
    // Nowhere to report a closed stdout: the server serves all the same.
    let _ = writeln!(out, "bankfeed sandbox on {} (customer id {})", sandbox.url, sandbox.customer_id);
    match (&sandbox.replay, &sandbox.record) {
        (Some(path), _) => {
            let _ = writeln!(
                out,
                "replaying {path}: every request is answered from it in recorded order; no key is checked"
            );
        }
        (None, Some((path, upstream))) => {
            let _ = writeln!(
                out,
                "recording into {path}: every request is forwarded to {upstream}, and the file written after each \
                 answer"
            );
        }
        (None, None) => {
            let _ = writeln!(out, "{}", keys_line(sandbox));
        }
    }
    if let Some(token) = &sandbox.admin_token {
        // The one place the token is shown: the person or harness that started the process
        // reads it here (docs/sandbox.md#the-admin-api).
        let _ = writeln!(out, "admin API on {}/_sandbox/ with token {token}", sandbox.url);
    }
    if sandbox.logins > 0 {
        let (count, seed) = (sandbox.logins, sandbox.seed);
        let last = bankfeed_sandbox::bulk_username(count - 1);
        let source = match login_ids_file {
            Some(path) => format!("in {}", path.display()),
            None => format!("from bankfeed.Sandbox.login_ids_for({count}, seed={seed})"),
        };
        let _ = writeln!(out, "{count} saved logins bulk_00000 to {last}; LoginIds {source}");
    }
    let _ = out.flush();
}

/// The banner's second line: which keys the sandbox asks for, and how to turn them off. The
/// public test instance's keys are public test data and are shown; any other key is not (it came
/// from the environment or the caller, and secrets never reach a log).
fn keys_line(sandbox: &PySandbox) -> String {
    let shown = |key: &str, public: &str, name: &str| {
        if key == public {
            format!("{name} {key} (the public test instance's)")
        } else {
            format!("the {name} given (not shown)")
        }
    };
    let mut asked = Vec::new();
    if let Some(key) = &sandbox.secret_key {
        asked.push(format!(
            "{} in flinks-auth-key of GenerateAuthorizeToken",
            shown(key, PUBLIC_SECRET_KEY, "secret key")
        ));
    }
    if let Some(key) = &sandbox.api_key {
        asked.push(format!("{} in x-api-key of the data operations", shown(key, PUBLIC_API_KEY, "API key")));
    }
    if asked.is_empty() {
        return "keys: none asked for (authentication is off)".to_owned();
    }
    format!(
        "keys: {}; sb.client() sends them; --no-auth (bf.Sandbox(auth=False)) turns them off for clients that send none",
        asked.join(", ")
    )
}

/// Writes the LoginIds one a line to a file next to `path`, then renames it, so a reader never
/// sees half a list.
fn write_login_ids(path: &std::path::Path, ids: &[String]) -> std::io::Result<()> {
    let mut text = String::with_capacity(ids.len() * 37);
    for id in ids {
        text.push_str(id);
        text.push('\n');
    }
    let mut partial = path.as_os_str().to_owned();
    partial.push(".partial");
    std::fs::write(&partial, text)?;
    std::fs::rename(&partial, path)
}

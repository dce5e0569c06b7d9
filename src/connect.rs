//! The hosted widget in Python (docs/connect.md): `bf.connect_url`, `bf.ConnectUrl`,
//! `bf.Connection`, and the loopback catcher behind `client.connect(...)`.

use std::sync::Mutex;
use std::time::Duration;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyCFunction, PyDict, PyInt, PyMapping, PyString, PyType};

use crate::args;
use crate::convert;
use crate::error::PyBankfeedError;
use crate::invocation::{Flavor, Invocation};
use crate::run::Run;
use bankfeed::connect::url::PARAMETERS;
use bankfeed::connect::{widget_base, Catcher, ConnectOptions, ConnectUrl, Connection, Limits, Started};
use bankfeed::error::Error;
use bankfeed::protocol;
use bankfeed::sync::lock;
use bankfeed::{Client, Secret};

/// The options of the widget read from keyword arguments, each checked for its type and named
/// in the error (docs/bad-input.md#arguments); `call` is the function, for an unknown keyword.
pub(crate) fn options(call: &str, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<ConnectOptions> {
    let mut options = ConnectOptions::default();
    let Some(kwargs) = kwargs else { return Ok(options) };
    for (key, value) in kwargs.iter() {
        let key: String = key.extract()?;
        let Some(&(name, _)) = PARAMETERS.iter().find(|(name, _)| *name == key).or(match key.as_str() {
            "extra" => Some(&("extra", "")),
            _ => None,
        }) else {
            return Err(PyTypeError::new_err(format!(
                "{call}() got an unexpected keyword argument {key:?}: the widget's other parameters go in extra={{name: value}}"
            )));
        };
        let flag = |value: &Bound<'_, PyAny>| args::optional_flag(name, value);
        let text = |value: &Bound<'_, PyAny>| args::optional_text(name, value);
        match name {
            "demo" => options.demo = flag(&value)?,
            "product_type" => options.product_type = text(&value)?,
            "redirect_url" => options.redirect_url = text(&value)?,
            "inner_redirect" => options.inner_redirect = flag(&value)?,
            "language" => options.language = text(&value)?,
            "consent" => options.consent = flag(&value)?,
            "customer_name" => options.customer_name = text(&value)?,
            "account_selector" => options.account_selector = flag(&value)?,
            "account_selector_multiple" => options.account_selector_multiple = flag(&value)?,
            "account_selector_currency" => options.account_selector_currency = text(&value)?,
            "show_all_accounts" => options.show_all_accounts = flag(&value)?,
            "tag" => options.tag = text(&value)?,
            "institution" => options.institution = text(&value)?,
            "maximum_retry" => {
                options.maximum_retry = if value.is_none() {
                    None
                } else if value.is_instance_of::<PyInt>() && !value.is_instance_of::<PyBool>() {
                    Some(value.extract::<i64>().map_err(|_| {
                        PyBankfeedError::from(Error::config("maximum_retry", "must be a whole number from 1 to 100"))
                    })?)
                } else {
                    return Err(args::wrong_type(name, "an int or None", &value));
                };
            }
            "institution_filter" => options.institution_filter = flag(&value)?,
            "close_enable" => options.close_enable = flag(&value)?,
            "header_enable" => options.header_enable = flag(&value)?,
            "back_enable" => options.back_enable = flag(&value)?,
            "extra" => options.extra = extra(&value)?,
            _ => {
                return Err(PyTypeError::new_err(format!(
                    "{call}() takes no {key:?}: the client mints the authorize token itself"
                )))
            }
        }
    }
    Ok(options)
}

/// `extra=`: a mapping of parameter names to str, bool (written true/false) or int.
fn extra(value: &Bound<'_, PyAny>) -> PyResult<Vec<(String, String)>> {
    if value.is_none() {
        return Ok(Vec::new());
    }
    let mapping = value.cast::<PyMapping>().map_err(|_| args::wrong_type("extra", "a mapping or None", value))?;
    let mut pairs = Vec::new();
    for item in mapping.items()?.iter() {
        let (key, value): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item.extract()?;
        let key = match key.cast::<PyString>() {
            Ok(key) => args::str_of("extra", None, key)?.to_owned(),
            Err(_) => return Err(args::wrong_type("extra's keys", "str", &key)),
        };
        let written = if let Ok(flag) = value.cast::<PyBool>() {
            if flag.is_true() { "true" } else { "false" }.to_owned()
        } else if value.is_instance_of::<PyInt>() {
            value.str()?.to_str()?.to_owned()
        } else if let Ok(text) = value.cast::<PyString>() {
            args::str_of("extra", None, text)?.to_owned()
        } else {
            return Err(PyTypeError::new_err(format!(
                "extra[{key:?}] must be a str, bool or int, not {}",
                args::type_name(&value)
            )));
        };
        pairs.push((key, written));
    }
    Ok(pairs)
}

#[doc = stub_doc!("connect_url")]
#[pyfunction]
#[pyo3(signature = (instance="toolbox", *, authorize_token=None, **options))]
pub(crate) fn connect_url(
    #[pyo3(from_py_with = args::instance)] instance: &str,
    authorize_token: Option<&Bound<'_, PyAny>>,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<PyConnectUrl> {
    let token = match authorize_token {
        Some(token) => args::optional_text("authorize_token", token)?.map(Secret::new),
        None => None,
    };
    let options = self::options("connect_url", options)?;
    let base = widget_base(instance).map_err(PyBankfeedError::from)?;
    Ok(PyConnectUrl(options.build(base, token).map_err(PyBankfeedError::from)?))
}

#[doc = stub_doc!("ConnectUrl")]
#[pyclass(name = "ConnectUrl", module = "bankfeed", frozen)]
pub(crate) struct PyConnectUrl(pub(crate) ConnectUrl);

#[pymethods]
impl PyConnectUrl {
    #[doc = stub_doc!("ConnectUrl.reveal")]
    fn reveal(&self) -> String {
        self.0.reveal()
    }

    #[doc = stub_doc!("ConnectUrl.params")]
    #[getter]
    fn params<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let params = PyDict::new(py);
        for (name, value) in self.0.params() {
            params.set_item(name, value)?;
        }
        Ok(params)
    }

    #[doc = stub_doc!("ConnectUrl.base")]
    #[getter]
    fn base(&self) -> &str {
        self.0.base()
    }

    fn __str__(&self) -> String {
        self.0.to_string()
    }

    fn __repr__(&self) -> String {
        format!("ConnectUrl({:?})", self.0.to_string())
    }
}

#[doc = stub_doc!("Connection")]
#[pyclass(name = "Connection", module = "bankfeed", frozen, eq)]
#[derive(PartialEq)]
pub(crate) struct PyConnection(pub(crate) Connection);

#[pymethods]
impl PyConnection {
    #[doc = stub_doc!("Connection.from_redirect")]
    #[classmethod]
    fn from_redirect(_cls: &Bound<'_, PyType>, url_or_query: &Bound<'_, PyAny>) -> PyResult<Self> {
        let text = args::borrowed_text("url_or_query", url_or_query)?;
        Ok(PyConnection(Connection::from_redirect(text).map_err(PyBankfeedError::from)?))
    }

    #[doc = stub_doc!("Connection.from_event")]
    #[classmethod]
    fn from_event(_cls: &Bound<'_, PyType>, event: &Bound<'_, PyAny>) -> PyResult<Self> {
        if event.cast::<PyMapping>().is_err() {
            return Err(args::wrong_type("event", "a mapping (the widget's event data)", event));
        }
        let value = convert::from_python("event", event).map_err(PyBankfeedError::from)?;
        Ok(PyConnection(Connection::from_event(&value).map_err(PyBankfeedError::from)?))
    }

    #[doc = stub_doc!("Connection.login_id")]
    #[getter]
    fn login_id(&self) -> &str {
        self.0.login_id.expose()
    }

    #[doc = stub_doc!("Connection.institution")]
    #[getter]
    fn institution(&self) -> Option<&str> {
        self.0.institution.as_deref()
    }

    #[doc = stub_doc!("Connection.account_ids")]
    #[getter]
    fn account_ids(&self) -> Vec<String> {
        self.0.account_ids.clone()
    }

    #[doc = stub_doc!("Connection.tag")]
    #[getter]
    fn tag(&self) -> Option<&str> {
        self.0.tag.as_deref()
    }

    #[doc = stub_doc!("Connection.source")]
    #[getter]
    fn source(&self) -> &'static str {
        self.0.source.name()
    }

    fn __repr__(&self) -> String {
        let Connection { institution, account_ids, tag, source, .. } = &self.0;
        let text =
            |value: &Option<String>| value.as_ref().map_or_else(|| "None".to_owned(), |value| format!("{value:?}"));
        format!(
            "Connection(login_id=\"***\", institution={}, account_ids={account_ids:?}, tag={}, source={:?})",
            text(institution),
            text(tag),
            source.name()
        )
    }
}

// The catcher of one `client.connect(...)`: bound once its authorize token is minted
// (crates/bankfeed/src/connect/start.rs); python/bankfeed/_connect.py opens its launch page, waits on it once,
// and closes it on every way out.
#[doc = stub_doc!("_Catcher")]
#[pyclass(name = "_Catcher", module = "bankfeed", frozen)]
pub(crate) struct PyCatcher {
    client: Client,
    flavor: Flavor,
    widget: ConnectUrl,
    launch_url: String,
    catcher: Mutex<Option<Catcher>>,
}

/// How long `_Catcher.close()` waits for the socket to be closed.
const CLOSE_WAIT: Duration = Duration::from_secs(2);

#[pymethods]
impl PyCatcher {
    #[doc = stub_doc!("_Catcher.widget")]
    #[getter]
    fn widget(&self) -> PyConnectUrl {
        PyConnectUrl(self.widget.clone())
    }

    #[doc = stub_doc!("_Catcher.launch_url")]
    #[getter]
    fn launch_url(&self) -> &str {
        &self.launch_url
    }

    #[doc = stub_doc!("_Catcher.wait")]
    fn wait(&self, py: Python<'_>, timeout: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let seconds = connect_timeout(args::seconds("timeout", timeout)?)?;
        let catcher =
            lock(&self.catcher).take().ok_or_else(|| PyValueError::new_err("this catcher was waited on already"))?;
        let client = self.client.clone();
        let future = async move {
            let call = client.call("connect");
            call.run(catcher.wait(Duration::from_secs_f64(seconds))).await
        };
        Invocation::new(&self.client, future, |py, _, _, connection| {
            Ok(Py::new(py, PyConnection(connection))?.into_any())
        })
        .named("AsyncClient", "connect")
        .run(py, self.flavor)
    }

    #[doc = stub_doc!("_Catcher.close")]
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let Some(catcher) = lock(&self.catcher).take() else { return Ok(()) };
        let runtime = crate::runtime::runtime()?;
        let (closed, is_closed) = std::sync::mpsc::channel();
        runtime.spawn(async move {
            catcher.close().await;
            let _ = closed.send(());
        });
        // Its socket is closed before the exception that made the caller close it goes on.
        py.detach(move || {
            let _ = is_closed.recv_timeout(CLOSE_WAIT);
        });
        Ok(())
    }
}

/// `client.connect(...)`'s first step as a Python callable for python/bankfeed/_connect.py: each
/// call mints a token, then binds a catcher ([`Client::start_connect`]), run as the client runs
/// its calls (a `_Catcher`, or a coroutine of one).
pub(crate) fn starter<'py>(
    py: Python<'py>,
    client: &Client,
    flavor: Flavor,
    options: ConnectOptions,
) -> PyResult<Bound<'py, PyCFunction>> {
    let client = client.clone();
    PyCFunction::new_closure(py, Some(c"start_connect"), None, move |args, _| -> PyResult<Py<PyAny>> {
        let (runner, options) = (client.clone(), options.clone());
        let future = async move {
            let call = runner.call(protocol::GENERATE_AUTHORIZE_TOKEN.name);
            call.run(runner.start_connect(&call, &options, Limits::default())).await
        };
        Invocation::new(&client, future, started_to_py).named("AsyncClient", "connect").run(args.py(), flavor)
    })
}

fn started_to_py(py: Python<'_>, client: &Client, flavor: Flavor, started: Started) -> PyResult<Py<PyAny>> {
    let Started { widget, launch_url, catcher } = started;
    let catcher = PyCatcher { client: client.clone(), flavor, widget, launch_url, catcher: Mutex::new(Some(catcher)) };
    Ok(Py::new(py, catcher)?.into_any())
}

/// The most `client.connect` waits: a day.
const MAX_WAIT_SECONDS: f64 = 86_400.0;

/// `timeout` of `client.connect`: more than 0, at most [`MAX_WAIT_SECONDS`]; checked before the
/// catcher starts, so that nothing is opened for a wait that would be refused.
pub(crate) fn connect_timeout(seconds: f64) -> PyResult<f64> {
    if seconds.is_finite() && seconds > 0.0 && seconds <= MAX_WAIT_SECONDS {
        Ok(seconds)
    } else {
        let rule = format!("must be more than 0 and at most {MAX_WAIT_SECONDS} seconds, got {seconds}");
        Err(PyBankfeedError::from(Error::config("timeout", rule)).into())
    }
}

/// `client.connect_url(...)`'s conversion.
pub(crate) fn connect_url_to_py(py: Python<'_>, _: &Client, _: Flavor, url: ConnectUrl) -> PyResult<Py<PyAny>> {
    Ok(Py::new(py, PyConnectUrl(url))?.into_any())
}

//! Cassettes from Python (docs/cassettes.md#in-python): the clients' `cassette=`, `record_mode=`
//! and `allow_live_record=` options, and `bf.cassette(...)`, a block whose clients all record into
//! or replay from one cassette. Recording, matching, redaction and the fail-closed scan are the
//! client crate's (crates/bankfeed/src/cassette/): this file hands them what Python gave, and
//! writes the cassette when a client closes or a block ends.

use std::path::PathBuf;
use std::str::FromStr;
use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyString};

use crate::args;
use crate::error::{IntoException, OrRaise};
use bankfeed::cassette::{Cassette, CassetteOptions, CassetteSession, RecordMode};
use bankfeed::config::ClientConfig;
use bankfeed::error::Error;
use bankfeed::sync::lock;
use bankfeed::Client;

/// The cassette of the `bf.cassette(...)` block a client is built in: a context variable, so
/// that each asyncio task, and each thread a context is copied into, sees its own block.
static CURRENT: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

fn current(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    let variable = CURRENT.get_or_try_init(py, || {
        let default = PyDict::new(py);
        default.set_item("default", py.None())?;
        let variable = py.import("contextvars")?.getattr("ContextVar")?.call(("bankfeed.cassette",), Some(&default))?;
        Ok::<_, PyErr>(variable.unbind())
    })?;
    Ok(variable.bind(py))
}

/// What a client's `cassette=` names: a file of its own, or a cassette shared with other clients.
pub(crate) enum Given {
    Path(PathBuf),
    Shared(Py<PyCassette>),
}

/// `cassette=` of the clients: None, a path (`str` or `os.PathLike`), or a `bf.cassette(...)`.
pub(crate) fn cassette(value: &Bound<'_, PyAny>) -> PyResult<Option<Given>> {
    if value.is_none() {
        return Ok(None);
    }
    if let Ok(shared) = value.cast::<PyCassette>() {
        return Ok(Some(Given::Shared(shared.clone().unbind())));
    }
    path_of("cassette", "a str, an os.PathLike, a bf.cassette(...) or None", value).map(|path| Some(Given::Path(path)))
}

/// `record_mode=` of the clients: None (the cassette's own mode, `"none"` for a path) or a name.
pub(crate) fn record_mode(value: &Bound<'_, PyAny>) -> PyResult<Option<RecordMode>> {
    if value.is_none() {
        return Ok(None);
    }
    mode_of("record_mode", value).map(Some)
}

/// The path of a cassette file, from argument `field`: a `str` or an `os.PathLike` giving one,
/// not empty and not a directory.
pub(crate) fn path_of(field: &'static str, takes: &str, value: &Bound<'_, PyAny>) -> PyResult<PathBuf> {
    let py = value.py();
    let is_path = value.is_instance_of::<PyString>() || value.is_instance(&py.import("os")?.getattr("PathLike")?)?;
    if !is_path {
        return Err(args::wrong_type(field, takes, value));
    }
    let given = py.import("os")?.getattr("fspath")?.call1((value,))?;
    let Ok(text) = given.cast::<PyString>() else {
        return Err(args::wrong_type(field, "a path given as text (a bytes path is not taken)", value));
    };
    let text = args::str_of(field, None, text)?;
    let rule = if text.is_empty() {
        Some("must be the path of a cassette file, e.g. \"tests/cassettes/test_login.yaml\"; got an empty string")
    } else if text.contains('\0') {
        Some("must be the path of a cassette file; got a path that holds a NUL character")
    } else {
        None
    };
    if let Some(rule) = rule {
        return Err(Error::config(field, rule).into_exception());
    }
    let path = PathBuf::from(text);
    if path.is_dir() {
        let rule = format!(
            "must be the path of a cassette file, not of a directory; got {:?}, a directory: add the file's name, \
             e.g. \"{}\"",
            text,
            path.join("test_login.yaml").display()
        );
        return Err(Error::config(field, rule).into_exception());
    }
    Ok(path)
}

/// A record mode from argument `field` (`record_mode` of a client, `mode` of `bf.cassette`).
fn mode_of(field: &'static str, value: &Bound<'_, PyAny>) -> PyResult<RecordMode> {
    parse_mode(field, mode_text(field, value)?)
}

/// The name of a record mode, as `str`, from argument `field`.
fn mode_text<'a>(field: &'static str, value: &'a Bound<'_, PyAny>) -> PyResult<&'a str> {
    let Ok(text) = value.cast::<PyString>() else {
        let takes = format!("one of {} as a str", RecordMode::NAMES.map(|name| format!("{name:?}")).join(", "));
        return Err(args::wrong_type(field, &takes, value));
    };
    args::str_of(field, None, text)
}

/// `mode` of `bf.cassette`, read as its literal default is written.
fn mode<'a>(value: &'a Bound<'_, PyAny>) -> PyResult<&'a str> {
    mode_text("mode", value)
}

fn parse_mode(field: &'static str, name: &str) -> PyResult<RecordMode> {
    RecordMode::from_str(name)
        .map_err(|error| match error {
            // The core names its own argument; `bf.cassette` calls it `mode`.
            Error::Config { rule, .. } => Error::config(field, rule),
            other => other,
        })
        .or_raise()
}

/// The client of `config`: on the cassette given, or on that of the `bf.cassette(...)` block it is
/// built in, or live.
pub(crate) fn client_of(
    py: Python<'_>,
    config: ClientConfig,
    given: Option<Given>,
    record_mode: Option<RecordMode>,
    allow_live_record: bool,
) -> PyResult<Client> {
    let given = match given {
        Some(given) => Some(given),
        None => current(py)?
            .call_method0("get")?
            .cast_into::<PyCassette>()
            .ok()
            .map(|shared| Given::Shared(shared.unbind())),
    };
    let session = match given {
        None => {
            refuse_without_path(record_mode, allow_live_record, "give cassette=PATH too")?;
            return Client::new(config).or_raise();
        }
        Some(Given::Path(path)) => {
            let options = CassetteOptions { allow_live_record, ..CassetteOptions::default() };
            let mode = record_mode.unwrap_or(RecordMode::None);
            py.detach(|| CassetteSession::open(&path, mode, &config, &options)).map(Arc::new).or_raise()?
        }
        Some(Given::Shared(shared)) => {
            refuse_without_path(
                record_mode,
                allow_live_record,
                "this client is on a bf.cassette(...), which has its own: give them to bf.cassette(path, mode=..., \
                 allow_live_record=...)",
            )?;
            shared.get().session_for(&config).or_raise()?
        }
    };
    Client::with_cassette(config, session).or_raise()
}

/// The error of `record_mode=` or `allow_live_record=` given to a client that opens no cassette
/// file of its own: they would be ignored.
fn refuse_without_path(record_mode: Option<RecordMode>, allow_live_record: bool, next: &str) -> PyResult<()> {
    let field = match (record_mode, allow_live_record) {
        (Some(_), _) => "record_mode",
        (None, true) => "allow_live_record",
        (None, false) => return Ok(()),
    };
    Err(Error::config(field, format!("is an option of a cassette file given as cassette=PATH: {next}"))
        .into_exception())
}

/// Writes what `client` recorded into its cassette, if it is on one: when it closes. The error of
/// a cassette that could not be written (a secret found in its text: nothing was written) is
/// raised.
pub(crate) fn save_on_close(py: Python<'_>, client: &Client) -> PyResult<()> {
    if let Some(cassette) = client.cassette() {
        py.detach(|| cassette.save()).or_raise()?;
    }
    Ok(())
}

/// What a client on a cassette adds to its repr: the file and the mode.
pub(crate) fn shown(client: &Client) -> String {
    match client.cassette() {
        Some(cassette) => {
            format!(", cassette={:?}, record_mode={:?}", cassette.path().display().to_string(), cassette.mode().name())
        }
        None => String::new(),
    }
}

#[doc = stub_doc!("cassette")]
#[pyfunction(name = "cassette")]
#[pyo3(signature = (path, mode="none", *, allow_live_record=false))]
pub(crate) fn new_cassette(
    path: &Bound<'_, PyAny>,
    #[pyo3(from_py_with = mode)] mode: &str,
    #[pyo3(from_py_with = args::allow_live_record)] allow_live_record: bool,
) -> PyResult<PyCassette> {
    let path = path_of("path", "a str or an os.PathLike", path)?;
    let mode = parse_mode("mode", mode)?;
    Ok(PyCassette { path, mode, allow_live_record, opened: Mutex::new(None), tokens: Mutex::new(Vec::new()) })
}

#[doc = stub_doc!("Cassette")]
#[pyclass(name = "Cassette", module = "bankfeed", frozen)]
pub(crate) struct PyCassette {
    path: PathBuf,
    mode: RecordMode,
    allow_live_record: bool,
    /// Opened by the first client built on it, for that client's configuration.
    opened: Mutex<Option<Opened>>,
    /// The tokens of the context variable, one per `with` block entered and not yet left.
    tokens: Mutex<Vec<Py<PyAny>>>,
}

struct Opened {
    session: Arc<CassetteSession>,
    /// The hosts and the customer it records: its pseudonyms and its check of live hosts are
    /// theirs, so a client of others needs a cassette of its own.
    upstream: (String, String, String),
}

impl PyCassette {
    /// The session of this cassette for a client of `config`, opened by the first one. The GIL
    /// stays held: a thread that let it go while holding the lock could not take it back from
    /// one that waits for the lock.
    fn session_for(&self, config: &ClientConfig) -> Result<Arc<CassetteSession>, Error> {
        let upstream = (config.base_url.clone(), config.investments_base_url.clone(), config.customer_id.clone());
        let mut opened = lock(&self.opened);
        if let Some(opened) = opened.as_ref() {
            if opened.upstream != upstream {
                return Err(Error::config(
                    "cassette",
                    format!(
                        "{} records the requests of clients of base_url {:?}, investments_base_url {:?} and \
                         customer_id {:?}; this client's are {:?}, {:?} and {:?}: give it a cassette of its own",
                        self.path.display(),
                        opened.upstream.0,
                        opened.upstream.1,
                        opened.upstream.2,
                        upstream.0,
                        upstream.1,
                        upstream.2
                    ),
                ));
            }
            return Ok(Arc::clone(&opened.session));
        }
        let options = CassetteOptions { allow_live_record: self.allow_live_record, ..CassetteOptions::default() };
        let session = Arc::new(CassetteSession::open(&self.path, self.mode, config, &options)?);
        *opened = Some(Opened { session: Arc::clone(&session), upstream });
        Ok(session)
    }

    fn session(&self) -> Option<Arc<CassetteSession>> {
        lock(&self.opened).as_ref().map(|opened| Arc::clone(&opened.session))
    }
}

#[pymethods]
impl PyCassette {
    #[doc = stub_doc!("Cassette.path")]
    #[getter]
    fn path(&self) -> String {
        self.path.display().to_string()
    }

    #[doc = stub_doc!("Cassette.mode")]
    #[getter]
    fn mode(&self) -> &'static str {
        self.mode.name()
    }

    #[doc = stub_doc!("Cassette.play_count")]
    fn play_count(&self) -> (usize, usize) {
        self.session().map_or((0, 0), |session| session.play_count())
    }

    #[doc = stub_doc!("Cassette._has_token_call")]
    #[pyo3(name = "_has_token_call")]
    fn has_token_call(&self, py: Python<'_>) -> PyResult<bool> {
        py.detach(|| Cassette::load(&self.path))
            .map(|cassette| cassette.has_token_call())
            .map_err(|message| Error::Cassette { path: self.path.display().to_string(), message })
            .or_raise()
    }

    #[doc = stub_doc!("Cassette._oldest_recording")]
    #[pyo3(name = "_oldest_recording")]
    fn oldest_recording(&self, py: Python<'_>) -> PyResult<Option<i64>> {
        py.detach(|| Cassette::load(&self.path))
            .map(|cassette| cassette.oldest_recording().map(|time| time.timestamp()))
            .map_err(|message| Error::Cassette { path: self.path.display().to_string(), message })
            .or_raise()
    }

    #[doc = stub_doc!("Cassette.save")]
    fn save(&self, py: Python<'_>) -> PyResult<bool> {
        match self.session() {
            Some(session) => py.detach(|| session.save()).or_raise(),
            None => Ok(false),
        }
    }

    #[doc = stub_doc!("Cassette.__enter__")]
    fn __enter__(slf: &Bound<'_, Self>) -> PyResult<Py<Self>> {
        let token = current(slf.py())?.call_method1("set", (slf,))?;
        lock(&slf.get().tokens).push(token.unbind());
        Ok(slf.clone().unbind())
    }

    #[doc = stub_doc!("Cassette.__exit__")]
    fn __exit__(
        &self,
        py: Python<'_>,
        _kind: Option<Bound<'_, PyAny>>,
        _value: Option<Bound<'_, PyAny>>,
        _traceback: Option<Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let token = lock(&self.tokens).pop();
        if let Some(token) = token {
            current(py)?.call_method1("reset", (token,))?;
        }
        self.save(py).map(|_| ())
    }

    fn __repr__(&self) -> String {
        let live = if self.allow_live_record { ", allow_live_record=True" } else { "" };
        format!("Cassette(path={:?}, mode={:?}{live})", self.path.display().to_string(), self.mode.name())
    }
}

#[doc = stub_doc!("check_cassette")]
#[pyfunction]
pub(crate) fn check_cassette(py: Python<'_>, path: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    let path = path_of("path", "a str or an os.PathLike", path)?;
    Ok(py.detach(|| bankfeed::cassette::check_cassette(&path)))
}

//! The core's log targets and the Python loggers their records go to (`bankfeed::http` to
//! `bankfeed.http`, and so on; docs/logging.md), and a record's level as Python numbers it: what
//! the bridge (`logging.rs`) and the emitting thread (`log_emitter.rs`) both need.

use log::Level;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

/// The core's targets. A record of any other target is dropped: reqwest's own name whole URLs,
/// queries included.
pub(crate) const TARGETS: [&str; 2] = [bankfeed::events::HTTP_TARGET, bankfeed::events::POLL_TARGET];

/// The Python loggers of `TARGETS`, in the same order, looked up once.
pub(crate) fn loggers(py: Python<'_>) -> PyResult<&'static Vec<Py<PyAny>>> {
    static LOGGERS: PyOnceLock<Vec<Py<PyAny>>> = PyOnceLock::new();
    LOGGERS.get_or_try_init(py, || {
        let logging = py.import("logging")?;
        TARGETS
            .iter()
            .map(|target| Ok(logging.call_method1("getLogger", (target.replace("::", "."),))?.unbind()))
            .collect()
    })
}

/// The Python logger of target `index` of `TARGETS`.
pub(crate) fn logger(py: Python<'_>, index: usize) -> PyResult<&Bound<'_, PyAny>> {
    loggers(py)?
        .get(index)
        .map(|logger| logger.bind(py))
        .ok_or_else(|| pyo3::exceptions::PyRuntimeError::new_err("no such logger"))
}

/// A `log` level as Python's `logging` numbers it.
pub(crate) fn python_level(level: Level) -> u8 {
    match level {
        Level::Error => 40,
        Level::Warn => 30,
        Level::Info => 20,
        Level::Debug => 10,
        Level::Trace => 5,
    }
}

pub(crate) fn target_index(target: &str) -> Option<usize> {
    TARGETS.iter().position(|known| *known == target)
}

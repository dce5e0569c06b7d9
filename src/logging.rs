//! The bridge from the core's `log` records to Python's `logging`: the target `bankfeed::http`
//! goes to the logger `bankfeed.http`, and so on (docs/logging.md).
//!
//! Python's levels are read on the calling thread, which holds the GIL already, at the start of
//! every call (`refresh`), and kept in atomics that the IO threads read without the GIL. So a
//! record below those levels costs one comparison (the `log` macros check `log::max_level()`
//! before formatting anything).
//!
//! A record Python will emit is formatted where it happens and queued; the IO threads never enter
//! Python for it (docs/logging.md#threads-and-the-gil). One thread of the process, `bankfeed-log`,
//! hands the queued records to Python's `logging`, one at a time. So a handler that blocks (a
//! full pipe, a lock, a network sink) delays only the records after it, never a request, a poll
//! or a call's deadline; and a fork never copies an IO thread stopped inside a handler with a
//! stream's lock held. The emitting thread itself is kept out of Python while a fork happens:
//! an `os.register_at_fork` hook waits for the record being emitted (briefly; see
//! `log_emitter::FORK_WAIT`), as Python's own `logging` does with its locks. A blocking call
//! waits, briefly, for its records before it returns ([`flush`](crate::log_emitter::flush)), so
//! that they come before its result, as they came before.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use log::{Level, LevelFilter, Log, Metadata, Record};
use pyo3::exceptions::PyException;
use pyo3::intern;
use pyo3::prelude::*;

use crate::log_emitter::Pending;
use crate::loggers::{loggers, python_level, target_index};

/// The most verbose level each target's Python logger accepted at the last refresh, as a
/// `LevelFilter` (0 is off).
static LEVELS: [AtomicUsize; 2] = [AtomicUsize::new(0), AtomicUsize::new(0)];

static INSTALLED: AtomicBool = AtomicBool::new(false);

static BRIDGE: Bridge = Bridge;

/// Installs the bridge as the process's `log` logger and its fork hooks; called once, when the
/// module is imported.
pub(crate) fn install(module: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = module.py();
    // Imported first, so that the emitting thread's fork hook runs before logging's own.
    py.import("logging")?;
    crate::log_emitter::register(module)?;
    // An Err means another logger came first; only this module installs one, so it cannot happen.
    if log::set_logger(&BRIDGE).is_ok() {
        INSTALLED.store(true, Ordering::Release);
        // At import nothing waits on a Ctrl-C yet: Python raises it again at its next check.
        let _ = refresh(py);
    }
    Ok(())
}

/// Reads the levels of the core's Python loggers again, so that a change of level made by the
/// application between two calls applies to the next one. Cheap: a few `isEnabledFor`, which
/// Python answers from its own cache.
///
/// Fails only with a `KeyboardInterrupt` (or another exception that is not an `Exception`):
/// Python raises a Ctrl-C that arrived just before at its next bytecode, which may be inside
/// `isEnabledFor`; kept from the caller, that Ctrl-C would be lost and the call would wait on.
pub(crate) fn refresh(py: Python<'_>) -> PyResult<()> {
    if !INSTALLED.load(Ordering::Acquire) {
        return Ok(());
    }
    let loggers = loggers(py).map(Some).or_else(|error| only_interrupts(py, error))?;
    let mut most = LevelFilter::Off;
    for (index, slot) in LEVELS.iter().enumerate() {
        let level = match loggers.and_then(|all| all.get(index)) {
            Some(logger) => accepted(logger.bind(py))?,
            None => LevelFilter::Off,
        };
        slot.store(level as usize, Ordering::Relaxed);
        most = most.max(level);
    }
    log::set_max_level(most);
    Ok(())
}

/// Passes on a `KeyboardInterrupt`, `SystemExit` and the like; an `Exception` (a logging setup
/// that cannot be asked) becomes `None`: logging off, the call goes on.
fn only_interrupts<T>(py: Python<'_>, error: PyErr) -> PyResult<Option<T>> {
    if error.is_instance_of::<PyException>(py) {
        Ok(None)
    } else {
        Err(error)
    }
}

/// The most verbose level of the core's (it logs nothing at TRACE) that `logger` accepts now;
/// off when it cannot be asked (see `only_interrupts`).
fn accepted(logger: &Bound<'_, PyAny>) -> PyResult<LevelFilter> {
    for level in [Level::Debug, Level::Info, Level::Warn, Level::Error] {
        match is_enabled_for(logger, level).map(Some).or_else(|error| only_interrupts(logger.py(), error))? {
            Some(true) => return Ok(level.to_level_filter()),
            Some(false) => {}
            None => return Ok(LevelFilter::Off),
        }
    }
    Ok(LevelFilter::Off)
}

fn is_enabled_for(logger: &Bound<'_, PyAny>, level: Level) -> PyResult<bool> {
    logger.call_method1(intern!(logger.py(), "isEnabledFor"), (python_level(level),))?.is_truthy()
}

struct Bridge;

impl Log for Bridge {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        target_index(metadata.target())
            .and_then(|index| LEVELS.get(index))
            .is_some_and(|slot| metadata.level() as usize <= slot.load(Ordering::Relaxed))
    }

    /// Formats the record here, on the thread where it happened, and queues it for the emitting
    /// thread (crates/bankfeed/src/log_emitter.rs): no Python on this thread.
    fn log(&self, record: &Record<'_>) {
        let Some(target) = target_index(record.target()) else { return };
        if !self.enabled(record.metadata()) {
            return;
        }
        crate::log_emitter::push(Pending {
            target,
            level: record.level(),
            message: record.args().to_string(),
            file: record.file_static(),
            line: record.line(),
            created: std::time::SystemTime::now(),
            thread: std::thread::current().name().map(str::to_owned),
        });
    }

    fn flush(&self) {}
}

//! The `atexit` hook of the module: the records still queued handed to Python's `logging`, then
//! the gate of `exit.rs` closed, before the interpreter starts finalising
//! (docs/architecture.md#exit-with-calls-in-flight).

use std::time::Instant;

use pyo3::prelude::*;

use crate::exit;
use crate::log_emitter;

/// The `atexit` hook: closes the gate and waits for the threads inside Python to leave.
#[pyfunction]
fn _close_before_exit(py: Python<'_>) {
    // The records still queued first, while their thread may still enter Python.
    log_emitter::drain(py, Instant::now() + exit::GRACE);
    exit::close(py);
}

/// Registers the hook; called when the module is imported. Hooks run last-registered first, so
/// this one runs before `logging.shutdown` when `logging` was imported before bankfeed.
pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    let hook = wrap_pyfunction!(_close_before_exit, module)?;
    module.py().import("atexit")?.call_method1("register", (hook,))?;
    Ok(())
}

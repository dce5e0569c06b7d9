//! The two runners of an [`Invocation`] (docs/architecture.md#one-call-two-runners), and the one
//! place that picks between them: the flavor of the object the operation belongs to.

pub(crate) mod asyncio;
pub(crate) mod blocking;

use pyo3::prelude::*;

use crate::invocation::{Flavor, Invocation};

/// Runs an invocation the way a flavor says.
pub(crate) trait Run {
    /// The result itself (blocking), or a coroutine (async).
    fn run(self, py: Python<'_>, flavor: Flavor) -> PyResult<Py<PyAny>>;
}

impl<T: Send + 'static> Run for Invocation<T> {
    fn run(self, py: Python<'_>, flavor: Flavor) -> PyResult<Py<PyAny>> {
        match flavor {
            Flavor::Blocking => blocking::run(py, self),
            Flavor::Async => asyncio::start(py, self),
        }
    }
}

//! The pyo3 layer: classes, exception mapping and conversions over the Rust core; nothing else.

mod blocking;
mod challenge;
mod client;
mod convert;
mod errors;
mod sandbox;
mod session;

use pyo3::prelude::*;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<client::PyClient>()?;
    m.add_class::<session::PySession>()?;
    m.add_class::<challenge::PyChallenge>()?;
    m.add_class::<challenge::PySecurityChallenge>()?;
    m.add_class::<sandbox::PySandbox>()?;
    m.add_function(wrap_pyfunction!(sandbox::serve_sandbox, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}

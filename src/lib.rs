//! The Python binding, the extension module `bankfeed._native`: pyo3 classes, exception mapping and
//! conversions over the client crate (`bankfeed`) and the sandbox crate (`bankfeed-sandbox`);
//! nothing else (docs/architecture.md#how-a-call-travels, docs/architecture.md#the-crates).

// `stub_doc!("Client.investments")`: the docstring of that name in python/bankfeed/_native.pyi,
// read by build.rs. The binding's Python docs are written there only, and reach `__doc__` and
// `help()` through `#[doc = stub_doc!(...)]` (docs/architecture.md#one-source-for-the-docstrings).
include!(concat!(env!("OUT_DIR"), "/stub_docs.rs"));

mod args;
mod atexit;
mod bulk;
mod cassette;
mod challenge;
mod classes;
mod client;
mod combine;
mod connect;
mod convert;
mod error;
mod exit;
mod handler;
mod invocation;
mod log_emitter;
mod loggers;
mod logging;
mod raise;
mod results;
mod run;
mod runtime;
mod sandbox;
mod session;
mod table;
mod views;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use bankfeed::config::ClientOptions;

/// The defaults of the constructors' options as the core has them, by class (`Client`,
/// `Sandbox`): `tests/python/tooling/test_defaults.py` compares them with the signatures' literals.
#[pyfunction]
fn _defaults(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let defaults = PyDict::new(py);
    defaults.set_item("Client", pythonize::pythonize(py, &ClientOptions::default())?)?;
    defaults.set_item("Sandbox", sandbox::defaults(py)?)?;
    Ok(defaults)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    logging::install(m)?;
    atexit::register(m)?;
    m.add_class::<classes::PyBaseClient>()?;
    m.add_class::<classes::PyClient>()?;
    m.add_class::<classes::PyAsyncClient>()?;
    m.add_class::<classes::PyBaseSession>()?;
    m.add_class::<classes::PySession>()?;
    m.add_class::<classes::PyAsyncSession>()?;
    m.add_class::<classes::PyBaseChallenge>()?;
    m.add_class::<classes::PyChallenge>()?;
    m.add_class::<classes::PyAsyncChallenge>()?;
    m.add_class::<classes::PySecurityChallenge>()?;
    m.add_class::<sandbox::PySandbox>()?;
    m.add_class::<cassette::PyCassette>()?;
    m.add_function(wrap_pyfunction!(cassette::new_cassette, m)?)?;
    m.add_function(wrap_pyfunction!(cassette::check_cassette, m)?)?;
    m.add_class::<table::PyTable>()?;
    m.add_class::<results::PyInvestments>()?;
    m.add_class::<results::PyAttributes>()?;
    m.add_class::<results::PyAccounts>()?;
    m.add_class::<results::PyStatements>()?;
    m.add_class::<combine::PyCombined>()?;
    m.add_class::<combine::PyGathering>()?;
    m.add_class::<connect::PyConnectUrl>()?;
    m.add_class::<connect::PyConnection>()?;
    m.add_class::<connect::PyCatcher>()?;
    m.add_function(wrap_pyfunction!(connect::connect_url, m)?)?;
    // Private and left out of `__all__` (typed by `bankfeed._type_aliases.BulkResults` and
    // `AsyncBulkResults`): here so that the name their `type()` prints exists.
    m.setattr("_BulkResults", m.py().get_type::<bulk::PyBulkResults>())?;
    m.setattr("_AsyncBulkResults", m.py().get_type::<bulk::PyAsyncBulkResults>())?;
    m.add_function(wrap_pyfunction!(combine::combine, m)?)?;
    m.add_function(wrap_pyfunction!(sandbox::serve_sandbox, m)?)?;
    // Private and left out of `__all__`: test hooks, not API.
    m.setattr("_panic_in_background", wrap_pyfunction!(run::blocking::_panic_in_background, m)?)?;
    m.setattr("_defaults", wrap_pyfunction!(_defaults, m)?)?;
    // Private too: what the Python layer's readers of LoginIds share with the bulk calls.
    m.setattr("_check_login_ids", wrap_pyfunction!(args::_check_login_ids, m)?)?;
    // Private too: the public test instance as the core names it, for the pytest plugin's live
    // and cassette tiers, so that the instance is written down once.
    m.setattr("_TEST_INSTANCE_HOSTS", PyTuple::new(m.py(), bankfeed::cassette::TEST_INSTANCE_HOSTS)?)?;
    m.setattr("_TEST_INSTANCE_CUSTOMER_ID", bankfeed_sandbox::DEFAULT_CUSTOMER_ID)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}

//! The notebook views (`_repr_html_`) of tables, results, sessions and combined results: the
//! HTML is written by `bankfeed._views` (docs/notebooks.md), the Rust side only hands it over.

use pyo3::prelude::*;

/// The HTML view `view` of `bankfeed._views` gives for `object`.
pub(crate) fn html(object: &Bound<'_, PyAny>, view: &str) -> PyResult<String> {
    object.py().import("bankfeed._views")?.call_method1(view, (object,))?.extract()
}

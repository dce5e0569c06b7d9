//! Conversions between JSON and Python values.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDateTime, PyDict, PyMapping, PyString, PyTzInfo};
use serde_json::Value;

use crate::authorize::Answers;
use crate::data::attributes::{AttributesQuery, CustomAttributes, Package};
use crate::data::dates::ymd;
use crate::error::Error;

/// Microseconds since the epoch as an aware `datetime` in UTC.
pub(crate) fn utc_datetime(py: Python<'_>, micros: i64) -> PyResult<Bound<'_, PyDateTime>> {
    let (y, m, d) = ymd(micros.div_euclid(86_400_000_000) as i32);
    let rest = micros.rem_euclid(86_400_000_000);
    let seconds = rest / 1_000_000;
    let utc = PyTzInfo::utc(py)?.to_owned();
    let (hour, minute, second) = ((seconds / 3600) as u8, (seconds / 60 % 60) as u8, (seconds % 60) as u8);
    PyDateTime::new(py, y, m as u8, d as u8, hour, minute, second, (rest % 1_000_000) as u32, Some(&utc))
}

pub(crate) fn to_python<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    pythonize::pythonize(py, value).map_err(|e| PyTypeError::new_err(e.to_string()))
}

/// A JSON body as Python, built on first access and then handed out as that one object, so that
/// `.raw` and the fields read from it are not parsed again on every access.
pub(crate) struct Parsed {
    value: PyOnceLock<Py<PyAny>>,
}

impl Default for Parsed {
    fn default() -> Self {
        Parsed { value: PyOnceLock::new() }
    }
}

impl Parsed {
    /// The body `raw` as Python (a JSON text parsed once).
    pub(crate) fn json<'py>(&self, py: Python<'py>, raw: &[u8]) -> PyResult<Bound<'py, PyAny>> {
        self.get(py, || {
            let value: Value = serde_json::from_slice(raw).map_err(|e| PyValueError::new_err(e.to_string()))?;
            to_python(py, &value)
        })
    }

    /// An already parsed `value` as Python (converted once).
    pub(crate) fn value<'py>(&self, py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
        self.get(py, || to_python(py, value))
    }

    /// A top-level field of the body (keys matched case-insensitively, as the service's casing
    /// varies), taken from the one parsed object; None when absent.
    pub(crate) fn field<'py>(&self, py: Python<'py>, raw: &[u8], name: &str) -> PyResult<Bound<'py, PyAny>> {
        let whole = self.json(py, raw)?;
        if let Ok(object) = whole.cast::<PyDict>() {
            for (key, value) in object.iter() {
                if key.cast::<PyString>().is_ok_and(|key| key.to_str().is_ok_and(|key| key.eq_ignore_ascii_case(name)))
                {
                    return Ok(value);
                }
            }
        }
        Ok(py.None().into_bound(py))
    }

    fn get<'py>(
        &self,
        py: Python<'py>,
        make: impl FnOnce() -> PyResult<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let value = self.value.get_or_try_init(py, || make().map(Bound::unbind))?;
        Ok(value.bind(py).clone())
    }
}

/// Reads a Python mapping of prompt to a string or a list of strings. Error messages name the
/// prompt and the expected type, never the value (answers are secrets).
pub(crate) fn answers(mapping: &Bound<'_, PyAny>) -> Result<Answers, Error> {
    let shape = |key: &str| Error::invalid_answer(key, "must map to a string or a list of strings");
    let mapping = mapping
        .cast::<PyMapping>()
        .map_err(|_| Error::invalid_answer("answers", "must be a mapping of prompt to answer"))?;
    let items =
        mapping.items().map_err(|_| Error::invalid_answer("answers", "must be a mapping of prompt to answer"))?;
    let mut answers = Answers::new();
    for item in items.iter() {
        let (key, value): (Bound<'_, PyAny>, Bound<'_, PyAny>) =
            item.extract().map_err(|_| Error::invalid_answer("answers", "must be a mapping of prompt to answer"))?;
        let key: String =
            key.extract().map_err(|_| Error::invalid_answer("answers", "keys must be strings (the prompts)"))?;
        let values = if let Ok(text) = value.cast::<PyString>() {
            vec![text.to_string()]
        } else {
            value.extract::<Vec<String>>().map_err(|_| shape(&key))?
        };
        answers.push(key, values);
    }
    Ok(answers)
}

/// A Python value as JSON (for `Filters`, passed through as given).
pub(crate) fn from_python(field: &'static str, value: &Bound<'_, PyAny>) -> Result<Value, Error> {
    pythonize::depythonize(value).map_err(|e| Error::config(field, format!("must be JSON-like data ({e})")))
}

/// The arguments of `attributes(...)` as a query: a package, or a custom set.
pub(crate) fn attributes_query(
    attributes: Option<Bound<'_, PyAny>>,
    package: Option<String>,
    filters: Option<Bound<'_, PyAny>>,
    detail: Option<Vec<String>>,
    account_filter: Option<Vec<String>>,
) -> Result<AttributesQuery, Error> {
    const EITHER: &str = "pass either attributes={group: [names]} for a custom request \
                          or package=\"income\" (credit_risk, user_analysis, lending, all)";
    const GROUPS: &str = "must map a group name to a list of attribute names, e.g. {\"Card\": [\"balance_min\"]}";
    const CUSTOM_ONLY: &str = "applies to custom attributes only (attributes=...), not to a package";
    match (attributes, package.as_deref()) {
        (Some(_), Some(_)) | (None, None) => Err(Error::config("attributes", EITHER)),
        (None, Some(package)) => {
            let given = [
                ("filters", filters.is_some()),
                ("detail", detail.is_some()),
                ("account_filter", account_filter.is_some()),
            ];
            if let Some((field, _)) = given.into_iter().find(|(_, given)| *given) {
                return Err(Error::config(field, CUSTOM_ONLY));
            }
            Package::parse(package).map(AttributesQuery::Package)
        }
        (Some(attributes), None) => {
            let groups: Vec<(String, Vec<String>)> = attributes
                .cast::<PyMapping>()
                .ok()
                .and_then(|m| m.items().ok())
                .and_then(|items| items.extract().ok())
                .ok_or_else(|| Error::config("attributes", GROUPS))?;
            let custom = CustomAttributes {
                attributes: groups,
                filters: filters.map(|f| from_python("filters", &f)).transpose()?,
                detail: detail.unwrap_or_default(),
                account_filter: account_filter.unwrap_or_default(),
            };
            custom.validate()?;
            Ok(AttributesQuery::Custom(custom))
        }
    }
}

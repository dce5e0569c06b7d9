//! Conversions between JSON and Python values.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDateTime, PyMapping, PyString, PyTzInfo};
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

/// The whole body, or a top-level field of it (keys matched case-insensitively), as Python.
pub(crate) fn raw_field<'py>(py: Python<'py>, raw: &[u8], field: Option<&str>) -> PyResult<Bound<'py, PyAny>> {
    let value: Value = serde_json::from_slice(raw).map_err(|e| PyTypeError::new_err(e.to_string()))?;
    match field {
        None => to_python(py, &value),
        Some(name) => {
            let found = value.as_object().and_then(|o| o.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)));
            to_python(py, found.map_or(&Value::Null, |(_, v)| v))
        }
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
    attributes: Option<&Bound<'_, PyAny>>,
    package: Option<&str>,
    filters: Option<&Bound<'_, PyAny>>,
    detail: Option<Vec<String>>,
    account_filter: Option<Vec<String>>,
) -> Result<AttributesQuery, Error> {
    match (attributes, package) {
        (Some(_), Some(_)) | (None, None) => Err(Error::config(
            "attributes",
            "pass either attributes={group: [names]} for a custom request or package=\"income\" (credit_risk, user_analysis, lending, all)",
        )),
        (None, Some(package)) => {
            let custom_only = [("filters", filters.is_some()), ("detail", detail.is_some()), ("account_filter", account_filter.is_some())];
            if let Some((field, _)) = custom_only.iter().find(|(_, given)| *given) {
                return Err(Error::config(field, "applies to custom attributes only (attributes=...), not to a package"));
            }
            Package::parse(package).map(AttributesQuery::Package)
        }
        (Some(attributes), None) => {
            let groups: Vec<(String, Vec<String>)> = attributes
                .cast::<PyMapping>()
                .ok()
                .and_then(|m| m.items().ok())
                .and_then(|items| items.extract().ok())
                .ok_or_else(|| Error::config("attributes", "must map a group name to a list of attribute names, e.g. {\"Card\": [\"balance_min\"]}"))?;
            let custom = CustomAttributes {
                attributes: groups,
                filters: filters.map(|f| from_python("filters", f)).transpose()?,
                detail: detail.unwrap_or_default(),
                account_filter: account_filter.unwrap_or_default(),
            };
            custom.validate()?;
            Ok(AttributesQuery::Custom(custom))
        }
    }
}

//! Conversions between JSON and Python values.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{
    PyBool, PyByteArray, PyBytes, PyDateTime, PyDict, PyFloat, PyInt, PyList, PyMapping, PyString, PyTuple, PyTzInfo,
};
use serde_json::{Map, Value};
use std::sync::Arc;

use crate::error::{IntoException, OrRaise};
use bankfeed::authorize::{Answers, Challenge, MAX_CHALLENGES};
use bankfeed::data::attributes::{AttributesQuery, CustomAttributes, Package};
use bankfeed::data::dates::ymd;
use bankfeed::data::requests::AccountsDetailOptions;
use bankfeed::error::Error;
use bankfeed::shown::shown;

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

/// Reads a Python mapping of prompt to a string or a list of strings, for `challenge`. Error
/// messages name the prompt and the expected type, never the value (answers are secrets); a key
/// that is not one of the challenge's prompts is not named either, since a caller who swapped
/// prompt and answer keyed by the answer (docs/protocol.md#challenges-and-answer-rules).
pub(crate) fn answers(mapping: &Bound<'_, PyAny>, challenge: &Challenge) -> Result<Answers, Error> {
    const MAPPING: &str = "must be a mapping of prompt to answer";
    // Only the type of what came is named: its value could be an answer.
    let not_a_mapping = format!("{MAPPING}, not {}", crate::args::type_name(mapping));
    let mapping = mapping.cast::<PyMapping>().map_err(|_| Error::invalid_answer("answers", not_a_mapping))?;
    let keys = challenge.answer_keys();
    let mut answers = Answers::new();
    // The mapping's own failure (its __iter__ or __getitem__) is raised as it is.
    let own = |error: PyErr| Error::Handler(Arc::new(error));
    for (index, entry) in crate::args::entries(mapping).map_err(own)?.enumerate() {
        // Every key must be one of the step's, answered once, so more entries than keys cannot
        // pass: a mapping without end is not read to its end. Some more are read, so that a wrong
        // key among a few is named by the check, as it is in a mapping of the right size.
        let most = keys.len().saturating_add(MAX_CHALLENGES);
        if index >= most {
            let rule = format!(
                "has {most} entries or more, and this step has {} prompts and choices to key them: each key must \
                 be a prompt exactly as asked, answered once",
                keys.len()
            );
            return Err(Error::invalid_answer("answers", rule));
        }
        let (key, value) = entry.map_err(own)?;
        let key = key
            .cast::<PyString>()
            .map_err(|_| Error::invalid_answer("answers", "keys must be strings (the prompts)"))?
            .to_str()
            .map_err(|_| {
                Error::invalid_answer(
                    "answers",
                    "a key is not valid text (it holds a lone surrogate); keys must be the prompts exactly as asked",
                )
            })?
            .to_owned();
        // Name the key only when it is one of the server's prompts (or choices): anything else
        // could be an answer written where its prompt belongs.
        let named = if keys.contains(key.as_str()) { key.as_str() } else { "answers" };
        let values = answer_values(&value, named).map_err(|error| match error {
            Read::Own(error) => own(error),
            Read::Refused(error) => error,
        })?;
        answers.push(key, values);
    }
    Ok(answers)
}

/// The most answers one prompt takes: a choice question has a handful of choices.
const MAX_VALUES: usize = 1000;

/// Why an answer's values could not be read.
enum Read {
    /// The value's own code failed (its __iter__ or __next__): raised as it is.
    Own(PyErr),
    /// The value breaks a rule.
    Refused(Error),
}

/// The answers to `prompt`: a string, or an iterable of strings read one at a time (never by its
/// length, which may lie) up to [`MAX_VALUES`].
fn answer_values(value: &Bound<'_, PyAny>, prompt: &str) -> Result<Vec<String>, Read> {
    let shape = || {
        let came = crate::args::type_name(value);
        Read::Refused(Error::invalid_answer(prompt, format!("must map to a string or a list of strings, not {came}")))
    };
    if let Ok(text) = value.cast::<PyString>() {
        return Ok(vec![answer_text(text, prompt).map_err(Read::Refused)?]);
    }
    if value.is_instance_of::<PyBytes>() || value.is_instance_of::<PyByteArray>() || value.cast::<PyMapping>().is_ok() {
        return Err(shape());
    }
    let items = match value.try_iter() {
        Ok(items) => items,
        Err(error) if error.is_instance_of::<PyTypeError>(value.py()) => return Err(shape()),
        Err(error) => return Err(Read::Own(error)),
    };
    let mut values = Vec::new();
    for (index, item) in items.enumerate() {
        if index >= MAX_VALUES {
            return Err(Read::Refused(Error::invalid_answer(prompt, format!("takes at most {MAX_VALUES} answers"))));
        }
        let item = item.map_err(Read::Own)?;
        values.push(answer_text(item.cast::<PyString>().map_err(|_| shape())?, prompt).map_err(Read::Refused)?);
    }
    Ok(values)
}

/// One answer string. A lone surrogate has no UTF-8 form: sending it would alter the answer, so
/// it is refused, naming the prompt and never the value.
fn answer_text(text: &Bound<'_, PyString>, prompt: &str) -> Result<String, Error> {
    text.to_str().map(str::to_owned).map_err(|_| {
        Error::invalid_answer(prompt, "the answer is not valid text (it holds a lone surrogate) and cannot be sent")
    })
}

/// How deep a value from Python may nest: far beyond any real filter, far below the native stack.
const MAX_DEPTH: usize = 32;

/// A Python value as JSON (for `Filters`, passed through as given): None, bool, int, float, str,
/// a mapping with string keys, or a list or tuple. Bounded in depth and checked for cycles, so
/// no input can exhaust the stack; an error names `field`.
pub(crate) fn from_python(field: &'static str, value: &Bound<'_, PyAny>) -> Result<Value, Error> {
    let mut path = Vec::new();
    to_json(value, &mut path).map_err(|reason| Error::config(field, format!("must be JSON-like data: {reason}")))
}

/// Converts `value`; `path` holds the containers being converted around it, outermost first.
fn to_json(value: &Bound<'_, PyAny>, path: &mut Vec<usize>) -> Result<Value, String> {
    if value.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(flag) = value.cast::<PyBool>() {
        return Ok(Value::Bool(flag.is_true()));
    }
    if value.is_instance_of::<PyInt>() {
        if let Ok(number) = value.extract::<i64>() {
            return Ok(Value::from(number));
        }
        return value.extract::<u64>().map(Value::from).map_err(|_| "an integer does not fit in 64 bits".to_owned());
    }
    if let Ok(number) = value.cast::<PyFloat>() {
        return serde_json::Number::from_f64(number.value())
            .map(Value::Number)
            .ok_or_else(|| "NaN and infinity have no JSON form".to_owned());
    }
    if let Ok(text) = value.cast::<PyString>() {
        return text
            .to_str()
            .map(|text| Value::String(text.to_owned()))
            .map_err(|_| "a string is not valid text (it holds a lone surrogate)".to_owned());
    }
    let container = value.as_ptr() as usize;
    if path.contains(&container) {
        return Err("a dict or list contains itself".to_owned());
    }
    if path.len() >= MAX_DEPTH {
        return Err(format!("nested deeper than {MAX_DEPTH} levels"));
    }
    path.push(container);
    let converted = container_to_json(value, path);
    path.pop();
    converted
}

fn container_to_json(value: &Bound<'_, PyAny>, path: &mut Vec<usize>) -> Result<Value, String> {
    if let Ok(list) = value.cast::<PyList>() {
        return list.iter().map(|item| to_json(&item, path)).collect::<Result<_, _>>().map(Value::Array);
    }
    if let Ok(tuple) = value.cast::<PyTuple>() {
        return tuple.iter().map(|item| to_json(&item, path)).collect::<Result<_, _>>().map(Value::Array);
    }
    let Ok(mapping) = value.cast::<PyMapping>() else {
        let kind = value.get_type().name().map_or_else(|_| "?".to_owned(), |name| name.to_string());
        return Err(format!("a value of type {kind} has no JSON form (use None, bool, int, float, str, dict, list)"));
    };
    // Read one entry at a time, never by a length that may lie (a dict as a snapshot: converting
    // a value may run a nested mapping's own code, which could change the dict being walked).
    let mut object = Map::new();
    let unreadable = |e: PyErr| format!("a mapping could not be read ({e})");
    for (index, entry) in crate::args::entries(mapping).map_err(unreadable)?.enumerate() {
        if index >= crate::args::MAX_ITEMS {
            return Err(format!("a mapping holds more than {} entries", crate::args::MAX_ITEMS));
        }
        let (key, item) = entry.map_err(unreadable)?;
        object.insert(key_text(&key)?, to_json(&item, path)?);
    }
    Ok(Value::Object(object))
}

fn key_text(key: &Bound<'_, PyAny>) -> Result<String, String> {
    let key = key.cast::<PyString>().map_err(|_| "a dict key is not a string".to_owned())?;
    key.to_str().map(str::to_owned).map_err(|_| "a dict key is not valid text (it holds a lone surrogate)".to_owned())
}

/// The keyword arguments of `accounts_detail(...)` and `accounts_detail_many(...)` as the
/// options of GetAccountsDetail: a filter or a delta not given is an empty one.
pub(crate) fn accounts_detail_options(
    with_transactions: Option<bool>,
    days: Option<String>,
    with_account_identity: Option<bool>,
    with_kyc: Option<bool>,
    accounts_filter: Option<Vec<String>>,
    with_details_and_banking_statements: Option<bool>,
    number_of_banking_statements: Option<String>,
    date_from: Option<String>,
    date_to: Option<String>,
    refresh_delta: Option<Vec<(String, String)>>,
) -> AccountsDetailOptions {
    AccountsDetailOptions {
        with_transactions,
        days,
        with_account_identity,
        with_kyc,
        accounts_filter: accounts_filter.unwrap_or_default(),
        with_details_and_banking_statements,
        number_of_banking_statements,
        date_from,
        date_to,
        refresh_delta: refresh_delta.unwrap_or_default(),
    }
}

/// The arguments of `attributes(...)` as a query: a package, or a custom set.
pub(crate) fn attributes_query(
    attributes: Option<Bound<'_, PyAny>>,
    package: Option<String>,
    filters: Option<Bound<'_, PyAny>>,
    detail: Option<Vec<String>>,
    account_filter: Option<Vec<String>>,
) -> PyResult<AttributesQuery> {
    const CUSTOM_ONLY: &str = "applies to custom attributes only (attributes=...), not to a package";
    // Shown as "attributes {rule}": the field begins the sentence.
    let either = |got: &str| {
        let packages = Package::names();
        let rule = format!(
            "({{group: [names]}}, for a custom request) or package (one of {packages}) is required, exactly one \
             of the two; got {got}"
        );
        Error::config("attributes", rule)
    };
    match (attributes, package.as_deref()) {
        (Some(_), Some(_)) => Err(either("both").into_exception()),
        (None, None) => Err(either("neither").into_exception()),
        (None, Some(package)) => {
            let given = [
                ("filters", filters.is_some()),
                ("detail", detail.is_some()),
                ("account_filter", account_filter.is_some()),
            ];
            if let Some((field, _)) = given.into_iter().find(|(_, given)| *given) {
                return Err(Error::config(field, CUSTOM_ONLY).into_exception());
            }
            Ok(Package::parse(package).map(AttributesQuery::Package).or_raise()?)
        }
        (Some(attributes), None) => {
            let groups = groups(&attributes)?;
            let custom = CustomAttributes {
                attributes: groups,
                filters: filters.map(|f| from_python("filters", &f)).transpose().or_raise()?,
                detail: detail.unwrap_or_default(),
                account_filter: account_filter.unwrap_or_default(),
            };
            custom.validate().or_raise()?;
            Ok(AttributesQuery::Custom(custom))
        }
    }
}

const GROUPS: &str = "must map a group name to a list of attribute names, e.g. {\"Card\": [\"balance_min\"]}";

/// The most groups, and the most names in a group, one custom attributes call takes.
const MAX_GROUP_ITEMS: usize = crate::args::MAX_ITEMS;

/// `attributes={group: [names]}`, read one entry and one name at a time (never by a length, which
/// may lie) up to [`MAX_GROUP_ITEMS`]. A refusal names what came, as `{"Card": str}` (groups and
/// names are no secrets); the mapping's or a list's own exception goes through as it is.
fn groups(attributes: &Bound<'_, PyAny>) -> PyResult<Vec<(String, Vec<String>)>> {
    let refuse =
        |got: String| -> PyErr { Error::config("attributes", format!("{GROUPS}; got {got}")).into_exception() };
    let mapping = attributes.cast::<PyMapping>().map_err(|_| refuse(crate::args::type_name(attributes)))?;
    let mut groups = Vec::new();
    for (index, entry) in crate::args::entries(mapping)?.enumerate() {
        if index >= MAX_GROUP_ITEMS {
            return Err(Error::config("attributes", format!("must hold at most {MAX_GROUP_ITEMS} groups, got more"))
                .into_exception());
        }
        let (group, names) = entry?;
        let group = match group.cast::<PyString>() {
            Ok(text) => crate::args::str_of("attributes", Some("a group name"), text)?.to_owned(),
            Err(_) => return Err(refuse(format!("{{{}: ...}}", crate::args::type_name(&group)))),
        };
        let wrong = || refuse(format!("{{{}: {}}}", shown(&group), crate::args::type_name(&names)));
        if names.is_instance_of::<PyString>() || names.is_instance_of::<PyBytes>() || names.cast::<PyMapping>().is_ok()
        {
            return Err(wrong());
        }
        let items = match names.try_iter() {
            Ok(items) => items,
            Err(error) if error.is_instance_of::<PyTypeError>(names.py()) => return Err(wrong()),
            Err(error) => return Err(error),
        };
        let mut read = Vec::new();
        for (index, name) in items.enumerate() {
            if index >= MAX_GROUP_ITEMS {
                let rule = format!("group {} must hold at most {MAX_GROUP_ITEMS} names, got more", shown(&group));
                return Err(Error::config("attributes", rule).into_exception());
            }
            let name = name?;
            let Ok(text) = name.cast::<PyString>() else { return Err(wrong()) };
            read.push(
                crate::args::str_of("attributes", Some(&format!("a name in group {}", shown(&group))), text)?
                    .to_owned(),
            );
        }
        groups.push((group, read));
    }
    Ok(groups)
}

//! Arguments read from Python with errors that name the argument, say what it got (its type,
//! never its value: some are secrets) and what it takes.
//!
//! pyo3's `#[pyo3(from_py_with = ...)]` takes a function of the value alone, so [`named!`] gives
//! each argument name its own small function over the generic readers below.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyString};

use crate::config::{MAX_CONNECTIONS, MAX_RETRIES};
use crate::error::Error;

/// The Python type name of `value`, for messages.
pub(crate) fn type_name(value: &Bound<'_, PyAny>) -> String {
    value.get_type().name().map_or_else(|_| "an unknown type".to_owned(), |name| name.to_string())
}

/// The TypeError of an argument `name` that takes `takes` and got `value`.
pub(crate) fn wrong_type(name: &str, takes: &str, value: &Bound<'_, PyAny>) -> PyErr {
    PyTypeError::new_err(format!("{name} must be {takes}, not {}", type_name(value)))
}

/// A `str`.
pub(crate) fn text(name: &str, value: &Bound<'_, PyAny>) -> PyResult<String> {
    match value.cast::<PyString>() {
        Ok(text) => Ok(text.to_str()?.to_owned()),
        Err(_) => Err(wrong_type(name, "a str", value)),
    }
}

/// A `str`, borrowed from the Python object (for arguments with a literal default).
pub(crate) fn borrowed_text<'a>(name: &str, value: &'a Bound<'_, PyAny>) -> PyResult<&'a str> {
    match value.cast::<PyString>() {
        Ok(text) => text.to_str(),
        Err(_) => Err(wrong_type(name, "a str", value)),
    }
}

/// A `str` or None.
pub(crate) fn optional_text(name: &str, value: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
    if value.is_none() {
        return Ok(None);
    }
    match value.cast::<PyString>() {
        Ok(text) => Ok(Some(text.to_str()?.to_owned())),
        Err(_) => Err(wrong_type(name, "a str or None", value)),
    }
}

/// A list (or any iterable) of `str`, or None. A lone `str` is refused rather than read as its
/// characters.
pub(crate) fn optional_texts(name: &str, value: &Bound<'_, PyAny>) -> PyResult<Option<Vec<String>>> {
    if value.is_none() {
        return Ok(None);
    }
    list_of_texts(name, value, "a list of str or None").map(Some)
}

fn list_of_texts(name: &str, value: &Bound<'_, PyAny>, takes: &str) -> PyResult<Vec<String>> {
    if value.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err(format!("{name} must be {takes}, not a single str: wrap it in a list")));
    }
    if value.is_instance_of::<PyBytes>() || value.is_instance_of::<PyByteArray>() {
        return Err(wrong_type(name, takes, value));
    }
    let items = value.try_iter().map_err(|_| wrong_type(name, takes, value))?;
    items
        .enumerate()
        .map(|(index, item)| {
            let item = item?;
            match item.cast::<PyString>() {
                Ok(text) => Ok(text.to_str()?.to_owned()),
                Err(_) => Err(wrong_type(&format!("{name}[{index}]"), "a str", &item)),
            }
        })
        .collect()
}

/// A list (or any iterable) of `str`; a lone `str` is refused rather than read as its characters.
pub(crate) fn texts(name: &str, value: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    list_of_texts(name, value, "a list (or any iterable) of str")
}

/// A `bool` (not any truthy value: `save="no"` would otherwise save).
pub(crate) fn flag(name: &str, value: &Bound<'_, PyAny>) -> PyResult<bool> {
    match value.cast::<PyBool>() {
        Ok(flag) => Ok(flag.is_true()),
        Err(_) => Err(wrong_type(name, "a bool", value)),
    }
}

/// A `bool` or None.
pub(crate) fn optional_flag(name: &str, value: &Bound<'_, PyAny>) -> PyResult<Option<bool>> {
    if value.is_none() {
        return Ok(None);
    }
    match value.cast::<PyBool>() {
        Ok(flag) => Ok(Some(flag.is_true())),
        Err(_) => Err(wrong_type(name, "a bool or None", value)),
    }
}

/// A number of seconds: an `int` or a `float` (its range is checked by the configuration).
pub(crate) fn seconds(name: &str, value: &Bound<'_, PyAny>) -> PyResult<f64> {
    if value.is_instance_of::<PyBool>() {
        return Err(wrong_type(name, "a number of seconds (int or float)", value));
    }
    value.extract::<f64>().map_err(|_| wrong_type(name, "a number of seconds (int or float)", value))
}

/// A number of seconds, or None.
pub(crate) fn optional_seconds(name: &str, value: &Bound<'_, PyAny>) -> PyResult<Option<f64>> {
    if value.is_none() {
        return Ok(None);
    }
    if value.is_instance_of::<PyBool>() {
        return Err(wrong_type(name, "a number of seconds (int or float) or None", value));
    }
    value.extract::<f64>().map(Some).map_err(|_| wrong_type(name, "a number of seconds (int or float) or None", value))
}

/// A whole number that fits `T` (counts, ports, seeds): TypeError for another type, ConfigError
/// (a ValueError) out of range.
pub(crate) fn whole<T>(name: &'static str, value: &Bound<'_, PyAny>) -> PyResult<T>
where
    T: TryFrom<i128> + Bounds,
{
    whole_within(name, value, T::MIN, T::MAX, &format!("an int from {} to {}", T::MIN, T::MAX))
}

/// A whole number that fits `T`, or None.
pub(crate) fn optional_whole<T>(name: &'static str, value: &Bound<'_, PyAny>) -> PyResult<Option<T>>
where
    T: TryFrom<i128> + Bounds,
{
    if value.is_none() {
        return Ok(None);
    }
    // Without "or None" the message would hide that leaving the argument out is allowed.
    whole_within(name, value, T::MIN, T::MAX, &format!("an int from {} to {} or None", T::MIN, T::MAX)).map(Some)
}

/// A whole number from `min` to `max`, for an argument whose rule is narrower than its type's
/// (`Sandbox(logins=...)`, `max_retries=`): the messages state the rule, not the range of the type.
pub(crate) fn whole_in<T>(name: &'static str, value: &Bound<'_, PyAny>, min: T, max: T) -> PyResult<T>
where
    T: TryFrom<i128> + Into<i128>,
{
    let (min, max) = (min.into(), max.into());
    whole_within(name, value, min, max, &format!("an int from {min} to {max}"))
}

/// A whole number of at least `min` that fits `T`, for a count with no upper bound of its own
/// (`max_body_bytes=`): the message says "at least", not the largest value of the type.
pub(crate) fn whole_at_least<T>(name: &'static str, value: &Bound<'_, PyAny>, min: T) -> PyResult<T>
where
    T: TryFrom<i128> + Into<i128> + Bounds,
{
    let min = min.into();
    whole_within(name, value, min, T::MAX, &format!("an int of at least {min}"))
}

/// The int in `value`, from `min` to `max`, as `T`; `takes` says what the argument takes.
fn whole_within<T: TryFrom<i128>>(
    name: &'static str,
    value: &Bound<'_, PyAny>,
    min: i128,
    max: i128,
    takes: &str,
) -> PyResult<T> {
    if value.is_instance_of::<PyBool>() {
        return Err(wrong_type(name, takes, value));
    }
    let number = match value.extract::<i128>() {
        Ok(number) => number,
        Err(err) if err.is_instance_of::<PyTypeError>(value.py()) => return Err(wrong_type(name, takes, value)),
        Err(_) => {
            let beyond = if value.lt(0).unwrap_or(false) { "a smaller int" } else { "a larger int" };
            return Err(Error::config(name, format!("must be {takes}, got {beyond}")).into());
        }
    };
    let out_of_range = || -> PyErr { Error::config(name, format!("must be {takes}, got {number}")).into() };
    if !(min..=max).contains(&number) {
        return Err(out_of_range());
    }
    T::try_from(number).map_err(|_| out_of_range())
}

/// The range of an integer type, for messages.
pub(crate) trait Bounds {
    const MIN: i128;
    const MAX: i128;
}

macro_rules! bounds {
    ($($t:ty),*) => {
        $(
            impl Bounds for $t {
                const MIN: i128 = <$t>::MIN as i128;
                const MAX: i128 = <$t>::MAX as i128;
            }
        )*
    };
}
bounds!(u16, u32, u64, usize, i64);

/// One extractor per argument name, for `#[pyo3(from_py_with = args::<name>)]`.
macro_rules! named {
    ($($name:ident: $read:ident -> $t:ty;)*) => {
        $(
            pub(crate) fn $name(value: &Bound<'_, PyAny>) -> PyResult<$t> {
                $read(stringify!($name), value)
            }
        )*
    };
}

named! {
    // Strings of the client and the session calls.
    institution: text -> String;
    username: text -> String;
    password: text -> String;
    login_id: text -> String;
    name: text -> String;
    base_url: optional_text -> Option<String>;
    customer_id: optional_text -> Option<String>;
    api_key: optional_text -> Option<String>;
    secret_key: optional_text -> Option<String>;
    investments_base_url: optional_text -> Option<String>;
    language: optional_text -> Option<String>;
    tag: optional_text -> Option<String>;
    package: optional_text -> Option<String>;
    days: optional_text -> Option<String>;
    number_of_banking_statements: optional_text -> Option<String>;
    number_of_statements: optional_text -> Option<String>;
    request_id: optional_text -> Option<String>;
    // Lists of strings.
    login_ids: texts -> Vec<String>;
    detail: optional_texts -> Option<Vec<String>>;
    account_filter: optional_texts -> Option<Vec<String>>;
    accounts_filter: optional_texts -> Option<Vec<String>>;
    // Flags.
    save: flag -> bool;
    progress: flag -> bool;
    tier2: flag -> bool;
    allow_insecure_http: flag -> bool;
    schedule_refresh: optional_flag -> Option<bool>;
    with_transactions: optional_flag -> Option<bool>;
    with_account_identity: optional_flag -> Option<bool>;
    with_kyc: optional_flag -> Option<bool>;
    with_details_and_banking_statements: optional_flag -> Option<bool>;
    with_balance: optional_flag -> Option<bool>;
    // Durations.
    timeout: seconds -> f64;
    poll_interval: seconds -> f64;
    poll_timeout: seconds -> f64;
    pending_seconds: seconds -> f64;
    deadline: optional_seconds -> Option<f64>;
    // Whole numbers.
    port: whole -> u16;
    pending_polls: whole -> u32;
    slow_pending_polls: whole -> u32;
    loading_polls: whole -> u32;
    seed: whole -> u64;
    investment_transactions: optional_whole -> Option<usize>;
    banking_transactions: optional_whole -> Option<usize>;
}

/// The most logins a bulk call runs at once; far more than one process can keep connections for.
const MAX_CONCURRENCY: i128 = 1_000_000;

/// `concurrency` of the bulk calls: 1 to [`MAX_CONCURRENCY`].
pub(crate) fn concurrency(value: &Bound<'_, PyAny>) -> PyResult<usize> {
    whole_within("concurrency", value, 1, MAX_CONCURRENCY, &format!("an int from 1 to {MAX_CONCURRENCY}"))
}

// The client's counts, each told its own rule rather than its type's range; the configuration
// checks them again for Rust callers (src/config.rs).

pub(crate) fn max_retries(value: &Bound<'_, PyAny>) -> PyResult<u32> {
    whole_in("max_retries", value, 0, MAX_RETRIES)
}

pub(crate) fn max_challenge_rounds(value: &Bound<'_, PyAny>) -> PyResult<u32> {
    whole_at_least("max_challenge_rounds", value, 1_u32)
}

pub(crate) fn max_body_bytes(value: &Bound<'_, PyAny>) -> PyResult<usize> {
    whole_within("max_body_bytes", value, 1, <usize as Bounds>::MAX, "an int of at least 1")
}

pub(crate) fn max_connections(value: &Bound<'_, PyAny>) -> PyResult<usize> {
    let max = MAX_CONNECTIONS as i128;
    whole_within("max_connections", value, 1, max, &format!("an int from 1 to {max}"))
}

/// `login_id` where it may be left out (`Client.session`).
pub(crate) fn optional_login_id(value: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
    optional_text("login_id", value)
}

/// `request_id` where it is required (`Client.session`).
pub(crate) fn required_request_id(value: &Bound<'_, PyAny>) -> PyResult<String> {
    text("request_id", value)
}

/// `host`: borrowed, so that its default stays the literal pyo3 shows in the signature.
pub(crate) fn host<'a>(value: &'a Bound<'_, PyAny>) -> PyResult<&'a str> {
    borrowed_text("host", value)
}

/// `proxy`: a str or None, borrowed, so that its default stays the literal `"environment"` pyo3
/// shows in the signature.
pub(crate) fn proxy<'a>(value: &'a Bound<'_, PyAny>) -> PyResult<Option<&'a str>> {
    if value.is_none() {
        return Ok(None);
    }
    match value.cast::<PyString>() {
        Ok(text) => text.to_str().map(Some),
        Err(_) => Err(wrong_type("proxy", "a str (\"environment\" or a proxy URL) or None", value)),
    }
}

/// `on_challenge`: a callable or None.
pub(crate) fn on_challenge<'py>(value: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
    if value.is_none() {
        Ok(None)
    } else if value.is_callable() {
        Ok(Some(value.clone()))
    } else {
        Err(wrong_type("on_challenge", "a callable taking a Challenge (e.g. bf.answers({...})) or None", value))
    }
}

//! Arguments read from Python with errors that name the argument, say what it got (its type,
//! never its value: some are secrets) and what it takes.
//!
//! pyo3's `#[pyo3(from_py_with = ...)]` takes a function of the value alone, so `named!` gives
//! each argument name its own small function over the generic readers below.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyMapping, PyString};

use crate::error::IntoException;
use bankfeed::config::{MAX_CONNECTIONS, MAX_RETRIES};
use bankfeed::error::Error;

/// The Python type name of `value`, for messages.
pub(crate) fn type_name(value: &Bound<'_, PyAny>) -> String {
    value.get_type().name().map_or_else(|_| "an unknown type".to_owned(), |name| name.to_string())
}

/// The TypeError of an argument `name` that takes `takes` and got `value`.
pub(crate) fn wrong_type(name: &str, takes: &str, value: &Bound<'_, PyAny>) -> PyErr {
    PyTypeError::new_err(format!("{name} must be {takes}, not {}", type_name(value)))
}

/// What a message says of a `str` that holds a lone surrogate, and the next step. Never the value:
/// it may be a password or a key.
const NOT_TEXT: &str = "it holds a lone surrogate (what Python makes of bytes that are not UTF-8, read from \
                        os.environ, sys.argv or a file opened with errors=\"surrogateescape\"), which has no UTF-8 \
                        form and cannot be sent; decode those bytes with their real encoding first";

/// The error of argument `field` holding a `str` with a lone surrogate; `item` names the part of
/// the argument that does (`"an item at index 3"`), if not the whole.
pub(crate) fn not_text(field: &'static str, item: Option<&str>) -> Error {
    match item {
        None => Error::config(field, format!("is not valid text: {NOT_TEXT}")),
        Some(item) => Error::config(field, format!("has {item} that is not valid text: {NOT_TEXT}")),
    }
}

/// The text of `text`, part of argument `field`. Python's own `UnicodeEncodeError` is dropped, not
/// chained: its `object` is the whole value, which may be a secret.
pub(crate) fn str_of<'a>(field: &'static str, item: Option<&str>, text: &'a Bound<'_, PyString>) -> PyResult<&'a str> {
    text.to_str().map_err(|_| not_text(field, item).into_exception())
}

/// A `str`.
pub(crate) fn text(name: &'static str, value: &Bound<'_, PyAny>) -> PyResult<String> {
    match value.cast::<PyString>() {
        Ok(text) => Ok(str_of(name, None, text)?.to_owned()),
        Err(_) => Err(wrong_type(name, "a str", value)),
    }
}

/// A `str`, borrowed from the Python object (for arguments with a literal default).
pub(crate) fn borrowed_text<'a>(name: &'static str, value: &'a Bound<'_, PyAny>) -> PyResult<&'a str> {
    match value.cast::<PyString>() {
        Ok(text) => str_of(name, None, text),
        Err(_) => Err(wrong_type(name, "a str", value)),
    }
}

/// A `str` or None.
pub(crate) fn optional_text(name: &'static str, value: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
    if value.is_none() {
        return Ok(None);
    }
    match value.cast::<PyString>() {
        Ok(text) => Ok(Some(str_of(name, None, text)?.to_owned())),
        Err(_) => Err(wrong_type(name, "a str or None", value)),
    }
}

/// The most items a list argument holds (`detail`, `account_filter`, the names of an attributes
/// group, ...): far more than any real call, far less than a mistake that would take the
/// process's memory (docs/bad-input.md#arguments).
pub(crate) const MAX_ITEMS: usize = 10_000;

/// The most LoginIds one bulk call takes: a million, some hundred megabytes of ids and
/// bookkeeping; a job with more splits them into calls (docs/bad-input.md#arguments).
pub(crate) const MAX_LOGIN_IDS: usize = 1_000_000;

/// Reads the iterable `value` one item at a time, handing each to `each`, and refuses it past `max`
/// items. Its length is never asked: a `__len__` (or `__length_hint__`) that lies would have
/// memory reserved for it up front, which for a huge number aborts the process. An exception of
/// the iterable's own `__iter__` or `__next__` goes through as it is.
pub(crate) fn each_item<'py>(
    name: &'static str,
    value: &Bound<'py, PyAny>,
    takes: &str,
    max: usize,
    mut each: impl FnMut(usize, Bound<'py, PyAny>) -> PyResult<()>,
) -> PyResult<()> {
    let items = value.try_iter().map_err(|error| {
        // Python's own "not iterable" names no argument; any other error is the object's news.
        if error.is_instance_of::<PyTypeError>(value.py()) {
            wrong_type(name, takes, value)
        } else {
            error
        }
    })?;
    for (index, item) in items.enumerate() {
        if index >= max {
            return Err(Error::config(name, format!("must hold at most {max} items, got more")).into_exception());
        }
        each(index, item?)?;
    }
    Ok(())
}

/// The entries of a mapping, read one at a time: a dict's as a snapshot of its items (code run
/// for one entry may change the dict, which an iterator over the dict itself would not survive);
/// any other mapping's by iterating its keys and looking each value up, so that its length is
/// never asked (see [`each_item`]). An exception of the mapping's own `__iter__` or `__getitem__`
/// comes out as it is, with its traceback. Callers stop at their own bound.
pub(crate) enum Entries<'py> {
    Dict(pyo3::types::iter::BoundListIterator<'py>),
    Mapping { mapping: Bound<'py, PyMapping>, keys: Bound<'py, pyo3::types::PyIterator> },
}

/// [`Entries`] of `value`.
pub(crate) fn entries<'py>(value: &Bound<'py, PyMapping>) -> PyResult<Entries<'py>> {
    Ok(if let Ok(dict) = value.cast::<PyDict>() {
        Entries::Dict(dict.items().into_iter())
    } else {
        // Asked only so that a failing `__len__` is raised as the mapping's own error; what it
        // answers reserves nothing.
        value.len()?;
        Entries::Mapping { mapping: value.clone(), keys: value.try_iter()? }
    })
}

impl<'py> Iterator for Entries<'py> {
    type Item = PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)>;

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Entries::Dict(items) => items.next().map(|pair| pair.extract()),
            Entries::Mapping { mapping, keys } => {
                let key = match keys.next()? {
                    Ok(key) => key,
                    Err(error) => return Some(Err(error)),
                };
                Some(mapping.get_item(&key).map(|value| (key, value)))
            }
        }
    }
}

/// A list (or any iterable) of `str`, or None. A lone `str` is refused rather than read as its
/// characters.
pub(crate) fn optional_texts(name: &'static str, value: &Bound<'_, PyAny>) -> PyResult<Option<Vec<String>>> {
    if value.is_none() {
        return Ok(None);
    }
    list_of_texts(name, value, "a list of str or None", MAX_ITEMS).map(Some)
}

/// Refuses a lone `str` (it would be read as its characters) and bytes where an iterable of `str`
/// is wanted.
fn not_a_single_text(name: &'static str, value: &Bound<'_, PyAny>, takes: &str) -> PyResult<()> {
    if value.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err(format!("{name} must be {takes}, not a single str: wrap it in a list")));
    }
    if value.is_instance_of::<PyBytes>() || value.is_instance_of::<PyByteArray>() {
        return Err(wrong_type(name, takes, value));
    }
    Ok(())
}

fn list_of_texts(name: &'static str, value: &Bound<'_, PyAny>, takes: &str, max: usize) -> PyResult<Vec<String>> {
    not_a_single_text(name, value, takes)?;
    let mut texts = Vec::new();
    each_item(name, value, takes, max, |index, item| {
        match item.cast::<PyString>() {
            Ok(text) => texts.push(str_of(name, Some(&format!("an item at index {index}")), text)?.to_owned()),
            Err(_) => return Err(wrong_type(&format!("{name}[{index}]"), "a str", &item)),
        }
        Ok(())
    })?;
    Ok(texts)
}

/// The LoginIds of a bulk call, in order. One that cannot be sent is that login's own failure,
/// not the call's, and the other logins go on (docs/bad-input.md#arguments).
pub(crate) struct LoginIds {
    pub(crate) ids: Vec<String>,
    pub(crate) unusable: Vec<Unusable>,
}

/// A LoginId that cannot be sent, the key it is handed back with, and its `ConfigError`.
pub(crate) struct Unusable {
    /// Text that is not valid (a lone surrogate): the very `str` that came, so that the caller can
    /// match it with its own list. A missing value: `""`, the text of no LoginId, since the pairs
    /// of a bulk call are typed `(str, result)` and `bf.combine` keys its errors by text.
    pub(crate) key: Py<PyAny>,
    pub(crate) error: Error,
}

impl LoginIds {
    /// One LoginId given as text: kept, or, when it is not valid text, that login's failure.
    fn push_text(&mut self, text: &Bound<'_, PyString>) {
        match text.to_str() {
            Ok(id) => self.ids.push(id.to_owned()),
            Err(_) => self
                .unusable
                .push(Unusable { key: text.clone().into_any().unbind(), error: not_text("login_id", None) }),
        }
    }
}

/// What the `login_ids` of the bulk calls take, for messages.
const LOGIN_IDS_TAKE: &str = "an iterable of str (a list, a pandas or polars Series, a NumPy or pyarrow array)";

/// `login_ids` of the bulk calls: an iterable of text, at most [`MAX_LOGIN_IDS`], read one item
/// at a time (see [`each_item`]). The items are what the data libraries hand out: `str` and its
/// subclasses (NumPy's `str_`), and Arrow scalars (a pyarrow array yields them, a Ray Data batch's
/// column is one), read with their `as_py()`. A missing value (None, NaN, `pandas.NA`, an Arrow
/// null) is that login's own `ConfigError`; any other item is the call's `TypeError`.
pub(crate) fn login_ids(value: &Bound<'_, PyAny>) -> PyResult<LoginIds> {
    const NAME: &str = "login_ids";
    not_a_single_text(NAME, value, LOGIN_IDS_TAKE)?;
    not_a_whole_frame(value)?;
    let py = value.py();
    let mut read = LoginIds { ids: Vec::new(), unusable: Vec::new() };
    each_item(NAME, value, LOGIN_IDS_TAKE, MAX_LOGIN_IDS, |index, item| {
        // Text as it is (a column of a million LoginIds asks nothing more of each); an Arrow
        // scalar through its `as_py()`.
        let as_py =
            if item.is_instance_of::<PyString>() { None } else { item.getattr_opt(pyo3::intern!(py, "as_py"))? };
        let value = match &as_py {
            Some(as_py) => as_py.call0()?,
            None => item.clone(),
        };
        if let Ok(text) = value.cast::<PyString>() {
            read.push_text(text);
            return Ok(());
        }
        let Some(what) = missing(&value) else {
            return Err(wrong_type(&format!("{NAME}[{index}]"), "a str", &item));
        };
        let what = if as_py.is_some() { "an Arrow null" } else { what };
        let rule = format!(
            "is missing: login_ids[{index}] is {what}, not a LoginId; leave the missing values out first \
             (series.dropna(), or drop_nulls() in polars)"
        );
        let key = PyString::new(py, "").into_any().unbind();
        read.unusable.push(Unusable { key, error: Error::config("login_id", rule) });
        Ok(())
    })?;
    Ok(read)
}

/// What a missing value among `login_ids` is, for its message, or None for any other item:
/// None, a NaN float (pandas' missing text in an `object` column), and `pandas.NA` (its missing
/// text in a `string` column), recognised without importing pandas.
fn missing(item: &Bound<'_, PyAny>) -> Option<&'static str> {
    if item.is_none() {
        return Some("None");
    }
    if let Ok(number) = item.cast::<PyFloat>() {
        return number.value().is_nan().then_some("NaN");
    }
    let kind = item.get_type();
    let of_pandas = kind.module().is_ok_and(|module| module.to_str().is_ok_and(|name| name.starts_with("pandas")));
    (of_pandas && kind.name().is_ok_and(|name| name.to_str().is_ok_and(|name| name == "NAType"))).then_some("pandas.NA")
}

/// The checks of a bulk call's `login_ids` that come before its items (not one text, not a whole
/// table), for the Python layer's own readers of LoginIds (`bf.export`, `bankfeed.dask.read`, the
/// dlt source), which read the items themselves and must refuse what the bulk calls refuse, in
/// the same words.
#[doc = stub_doc!("_check_login_ids")]
#[pyfunction]
pub(crate) fn _check_login_ids(login_ids: &Bound<'_, PyAny>) -> PyResult<()> {
    not_a_single_text("login_ids", login_ids, LOGIN_IDS_TAKE)?;
    not_a_whole_frame(login_ids)
}

/// Refuses a whole table where its column of LoginIds is wanted: a pandas DataFrame iterates its
/// column names, which would be read as LoginIds, and the others would fail less clearly.
fn not_a_whole_frame(value: &Bound<'_, PyAny>) -> PyResult<()> {
    const FRAMES: [(&str, &str); 5] = [
        ("pandas", "DataFrame"),
        ("polars", "DataFrame"),
        ("polars", "LazyFrame"),
        ("pyarrow", "Table"),
        ("pyarrow", "RecordBatch"),
    ];
    for class in value.get_type().mro().iter() {
        let (Ok(module), Ok(name)) = (class.getattr("__module__"), class.getattr("__name__")) else { continue };
        let (Ok(module), Ok(name)) = (module.extract::<String>(), name.extract::<String>()) else { continue };
        let root = module.split('.').next().unwrap_or_default();
        if FRAMES.contains(&(root, name.as_str())) {
            return Err(PyTypeError::new_err(format!(
                "login_ids must be {LOGIN_IDS_TAKE}, not a whole {name}: pass its column of LoginIds, such as \
                 frame[\"login_id\"]"
            )));
        }
    }
    Ok(())
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
            return Err(Error::config(name, format!("must be {takes}, got {beyond}")).into_exception());
        }
    };
    let out_of_range = || -> PyErr { Error::config(name, format!("must be {takes}, got {number}")).into_exception() };
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

/// A date option (`date_from`, `date_to`): a `datetime.date` (a `datetime` counts as its day), a
/// `str` written `YYYY-MM-DD` (its form is checked with the other options), or None.
pub(crate) fn optional_date(name: &'static str, value: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
    if value.is_none() {
        return Ok(None);
    }
    if let Ok(text) = value.cast::<PyString>() {
        return Ok(Some(str_of(name, None, text)?.to_owned()));
    }
    if value.cast::<pyo3::types::PyDate>().is_ok() {
        let iso: String = value.call_method0("isoformat")?.extract()?;
        return Ok(Some(iso.chars().take(10).collect()));
    }
    Err(wrong_type(name, "a datetime.date, a str written YYYY-MM-DD, or None", value))
}

/// `refresh_delta`: a mapping of account id to the id of the last transaction the caller holds of
/// it, or None.
pub(crate) fn refresh_delta(value: &Bound<'_, PyAny>) -> PyResult<Option<Vec<(String, String)>>> {
    const NAME: &str = "refresh_delta";
    const TAKES: &str = "a mapping of account id to the id of its last transaction held (str to str), or None";
    if value.is_none() {
        return Ok(None);
    }
    let Ok(mapping) = value.cast::<PyMapping>() else { return Err(wrong_type(NAME, TAKES, value)) };
    let mut pairs = Vec::new();
    for (index, entry) in entries(mapping)?.enumerate() {
        if index >= MAX_ITEMS {
            return Err(Error::config(NAME, format!("must hold at most {MAX_ITEMS} items, got more")).into_exception());
        }
        let (account, transaction) = entry?;
        let (Ok(account), Ok(transaction)) = (account.cast::<PyString>(), transaction.cast::<PyString>()) else {
            return Err(PyTypeError::new_err(format!("{NAME} must be {TAKES}")));
        };
        pairs.push((
            str_of(NAME, Some("a key"), account)?.to_owned(),
            str_of(NAME, Some("a value"), transaction)?.to_owned(),
        ));
    }
    Ok(Some(pairs))
}

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
    date_from: optional_date -> Option<String>;
    date_to: optional_date -> Option<String>;
    // Lists of strings.
    detail: optional_texts -> Option<Vec<String>>;
    account_filter: optional_texts -> Option<Vec<String>>;
    accounts_filter: optional_texts -> Option<Vec<String>>;
    // Flags.
    save: flag -> bool;
    active: flag -> bool;
    progress: flag -> bool;
    tier2: flag -> bool;
    investments: flag -> bool;
    admin: flag -> bool;
    auth: flag -> bool;
    allow_insecure_http: flag -> bool;
    allow_live_record: flag -> bool;
    open_browser: flag -> bool;
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
    session_idle_seconds: seconds -> f64;
    session_processing_seconds: seconds -> f64;
    card_in_use_seconds: seconds -> f64;
    token_ttl: seconds -> f64;
    deadline: optional_seconds -> Option<f64>;
    // Whole numbers.
    port: whole -> u16;
    pending_polls: whole -> u32;
    slow_pending_polls: whole -> u32;
    loading_polls: whole -> u32;
    max_wrong_answers: whole -> u32;
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
// checks them again for Rust callers (crates/bankfeed/src/config.rs).

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

/// `answers` of `Client.answer_mfa_questions`: a dict of question to answer, both `str`, in the
/// dict's order. A message names the question, never an answer (answers are secrets).
pub(crate) fn answers(value: &Bound<'_, PyAny>) -> PyResult<Vec<(String, String)>> {
    const NAME: &str = "answers";
    let dict = value.cast::<PyDict>().map_err(|_| wrong_type(NAME, "a dict of question to answer", value))?;
    let mut answers = Vec::with_capacity(dict.len());
    for (question, answer) in dict.iter() {
        let question = match question.cast::<PyString>() {
            Ok(text) => str_of(NAME, Some("a question"), text)?.to_owned(),
            Err(_) => return Err(wrong_type("each question of answers", "a str", &question)),
        };
        let answer = match answer.cast::<PyString>() {
            Ok(text) => str_of(NAME, Some("an answer"), text)?.to_owned(),
            Err(_) => return Err(wrong_type(&format!("the answer to {question:?}"), "a str", &answer)),
        };
        answers.push((question, answer));
    }
    Ok(answers)
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
/// `instance` of `bf.connect_url`: a `str` (an instance name or the widget's URL).
pub(crate) fn instance<'a>(value: &'a Bound<'_, PyAny>) -> PyResult<&'a str> {
    borrowed_text("instance", value)
}

pub(crate) fn proxy<'a>(value: &'a Bound<'_, PyAny>) -> PyResult<Option<&'a str>> {
    if value.is_none() {
        return Ok(None);
    }
    match value.cast::<PyString>() {
        Ok(text) => str_of("proxy", None, text).map(Some),
        Err(_) => Err(wrong_type("proxy", "a str (\"environment\" or a proxy URL) or None", value)),
    }
}

/// `money`: `"float"` or `"decimal"` (docs/tables.md#money), checked by
/// [`bankfeed::data::money::MoneyType::parse`].
pub(crate) fn money<'a>(value: &'a Bound<'_, PyAny>) -> PyResult<&'a str> {
    match value.cast::<PyString>() {
        Ok(text) => str_of("money", None, text),
        Err(_) => Err(wrong_type("money", "\"float\" or \"decimal\"", value)),
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

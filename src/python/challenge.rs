//! `Challenge` and `SecurityChallenge`.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyBytes;

use super::convert::{self, Parsed};
use super::operation::{Flavor, Operation};
use super::session::step_to_py;
use crate::authorize::{Challenge, SecurityChallenge};
use crate::Client;

/// What `Challenge` and `AsyncChallenge` share: the challenge, its client and every method but
/// how `answer` runs (docs/architecture.md#one-operation-two-runners).
#[pyclass(name = "_BaseChallenge", module = "bankfeed", frozen, subclass)]
pub(crate) struct PyBaseChallenge {
    client: Client,
    flavor: Flavor,
    challenge: Challenge,
    raw: Parsed,
    /// Built on first access, then the same objects every time (each keeps its parsed `.raw`).
    challenges: PyOnceLock<Vec<Py<PySecurityChallenge>>>,
}

/// Security challenges to answer before the session opens (a 203 answer).
///
/// Answer them all in one call::
///
///     step = client.authorize("FlinksCapital", "Greatday", "Everyday")
///     while isinstance(step, bf.Challenge):
///         step = step.answer({c.prompt: ask_the_user(c) for c in step.challenges})
#[pyclass(name = "Challenge", module = "bankfeed", frozen, extends = PyBaseChallenge)]
pub(crate) struct PyChallenge;

/// A ``Challenge`` met by an ``AsyncClient``: ``await challenge.answer(...)``.
///
///     step = await client.authorize("FlinksCapital", "Greatday", "Everyday")
///     while isinstance(step, bf.AsyncChallenge):
///         step = await step.answer({c.prompt: ask_the_user(c) for c in step.challenges})
#[pyclass(name = "AsyncChallenge", module = "bankfeed", frozen, extends = PyBaseChallenge)]
pub(crate) struct PyAsyncChallenge;

/// The Python object of `challenge`: a `Challenge`, or an `AsyncChallenge` for an async client.
pub(crate) fn to_py(py: Python<'_>, client: &Client, flavor: Flavor, challenge: Challenge) -> PyResult<Py<PyAny>> {
    let base = PyBaseChallenge {
        client: client.clone(),
        flavor,
        challenge,
        raw: Parsed::default(),
        challenges: PyOnceLock::new(),
    };
    let base = PyClassInitializer::from(base);
    Ok(match flavor {
        Flavor::Blocking => Py::new(py, base.add_subclass(PyChallenge))?.into_any(),
        Flavor::Async => Py::new(py, base.add_subclass(PyAsyncChallenge))?.into_any(),
    })
}

#[pymethods]
impl PyBaseChallenge {
    /// The RequestId the answers go to.
    #[getter]
    fn request_id(&self) -> &str {
        &self.challenge.request_id
    }

    /// The challenges of this step, in the order the server sent them.
    #[getter]
    fn challenges(&self, py: Python<'_>) -> PyResult<Vec<Py<PySecurityChallenge>>> {
        let challenges = self.challenges.get_or_try_init(py, || {
            let each = self.challenge.challenges.iter().cloned();
            each.map(|inner| Py::new(py, PySecurityChallenge { inner, raw: Parsed::default() })).collect()
        })?;
        Ok(challenges.iter().map(|challenge| challenge.clone_ref(py)).collect())
    }

    /// The prompts, verbatim: the keys of the answers.
    #[getter]
    fn prompts(&self) -> Vec<String> {
        self.challenge.prompts().map(str::to_owned).collect()
    }

    /// `Institution` as sent: a name, or a dict.
    #[getter]
    fn institution<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.raw.field(py, &self.challenge.raw, "Institution")
    }

    /// The 203 body exactly as the server sent it.
    #[getter]
    fn raw<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.raw.json(py, &self.challenge.raw)
    }

    /// Checks `answers` against the answer rules without sending anything; raises InvalidAnswer.
    fn validate(&self, answers: &Bound<'_, PyAny>) -> PyResult<()> {
        Ok(self.challenge.validate(&convert::answers(answers, &self.challenge)?)?)
    }

    /// Sends the answers (prompt → string or list of strings; a TextOrCall challenge is keyed by
    /// the chosen choice) after checking them. Returns the next step: a Session, or a Challenge
    /// (awaitable, giving an AsyncSession or an AsyncChallenge, on an AsyncChallenge).
    fn answer(&self, py: Python<'_>, answers: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let answers = convert::answers(answers, &self.challenge)?;
        let (client, challenge) = (self.client.clone(), self.challenge.clone());
        let future = async move { client.answer(&challenge, answers).await };
        Operation::new(&self.client, future, step_to_py).named("AsyncChallenge", "answer").run(py, self.flavor)
    }

    /// The notebook view: each challenge, the images of an ImageSelection as a numbered grid.
    fn _repr_html_(slf: &Bound<'_, Self>) -> PyResult<String> {
        display(slf.as_any(), "challenge_html")
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let this = slf.get();
        let items: Vec<String> = this.challenge.challenges.iter().map(describe).collect();
        Ok(format!(
            "{}(request_id={:?}, challenges=[{}])",
            slf.get_type().name()?,
            this.challenge.request_id,
            items.join(", ")
        ))
    }
}

/// HTML for a notebook, written by `bankfeed._display`.
fn display(object: &Bound<'_, PyAny>, view: &str) -> PyResult<String> {
    object.py().import("bankfeed._display")?.call_method1(view, (object,))?.extract()
}

fn describe(challenge: &SecurityChallenge) -> String {
    format!("{}: {:?}", challenge.kind.as_str(), challenge.prompt)
}

/// One element of `Challenge.challenges`.
#[pyclass(name = "SecurityChallenge", module = "bankfeed", frozen)]
pub(crate) struct PySecurityChallenge {
    inner: SecurityChallenge,
    raw: Parsed,
}

#[pymethods]
impl PySecurityChallenge {
    /// `QuestionAndAnswer`, `ImageSelection`, `MultipleChoice`, `MultipleChoiceMultipleAnswers`,
    /// `TextOrCall`, `WaitUntilEUAccept`, or an unknown type as sent.
    #[getter]
    fn r#type(&self) -> &str {
        self.inner.kind.as_str()
    }

    /// The question, verbatim: also the key of its answer.
    #[getter]
    fn prompt(&self) -> &str {
        &self.inner.prompt
    }

    /// `Iterables`: the choices, or None.
    #[getter]
    fn choices(&self) -> Option<Vec<String>> {
        self.inner.choices.clone()
    }

    /// For an ImageSelection challenge, the decoded images (in the order of `choices`); else None.
    #[getter]
    fn images<'py>(&self, py: Python<'py>) -> PyResult<Option<Vec<Bound<'py, PyBytes>>>> {
        match self.inner.images() {
            None => Ok(None),
            Some(Ok(images)) => Ok(Some(images.iter().map(|image| PyBytes::new(py, image)).collect())),
            Some(Err(error)) => Err(error.into()),
        }
    }

    /// Whether the prompt asks for a six-digit security code.
    #[getter]
    fn is_security_code(&self) -> bool {
        self.inner.is_security_code()
    }

    /// The element as sent.
    #[getter]
    fn raw<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.raw.value(py, &self.inner.raw)
    }

    /// The notebook view: the prompt, then the images as a numbered grid, or the choices.
    fn _repr_html_(slf: &Bound<'_, Self>) -> PyResult<String> {
        display(slf.as_any(), "security_challenge_html")
    }

    fn __repr__(&self) -> String {
        let choices = match (&self.inner.choices, self.inner.kind.as_str()) {
            (Some(choices), "ImageSelection") => format!(", images={}", choices.len()),
            (Some(choices), _) => format!(", choices={choices:?}"),
            (None, _) => String::new(),
        };
        format!("SecurityChallenge(type={:?}, prompt={:?}{choices})", self.inner.kind.as_str(), self.inner.prompt)
    }
}

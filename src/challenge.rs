//! `Challenge` and `SecurityChallenge`.

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::classes::{step_to_py, PyBaseChallenge, PySecurityChallenge};
use crate::convert::{self, Parsed};
use crate::error::{IntoException, OrRaise};
use crate::invocation::Invocation;
use crate::run::Run;
use bankfeed::authorize::SecurityChallenge;
use bankfeed::protocol;

#[pymethods]
impl PyBaseChallenge {
    #[doc = stub_doc!("_BaseChallenge.request_id")]
    #[getter]
    fn request_id(&self) -> &str {
        &self.challenge.request_id
    }

    #[doc = stub_doc!("_BaseChallenge.login_id")]
    #[getter]
    fn login_id(&self) -> Option<&str> {
        self.challenge.login_id.as_deref()
    }

    #[doc = stub_doc!("_BaseChallenge.challenges")]
    #[getter]
    fn challenges(&self, py: Python<'_>) -> PyResult<Vec<Py<PySecurityChallenge>>> {
        let challenges = self.challenges.get_or_try_init(py, || {
            let each = self.challenge.challenges.iter().cloned();
            each.map(|inner| Py::new(py, PySecurityChallenge { inner, raw: Parsed::default() })).collect()
        })?;
        Ok(challenges.iter().map(|challenge| challenge.clone_ref(py)).collect())
    }

    #[doc = stub_doc!("_BaseChallenge.prompts")]
    #[getter]
    fn prompts(&self) -> Vec<String> {
        self.challenge.prompts().map(str::to_owned).collect()
    }

    #[doc = stub_doc!("_BaseChallenge.institution")]
    #[getter]
    fn institution<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.raw.field(py, &self.challenge.raw, "Institution")
    }

    #[doc = stub_doc!("_BaseChallenge.institution_name")]
    #[getter]
    fn institution_name(&self) -> Option<&str> {
        self.challenge.named_institution.name.as_deref()
    }

    #[doc = stub_doc!("_BaseChallenge.institution_id")]
    #[getter]
    fn institution_id(&self) -> Option<&str> {
        self.challenge.named_institution.id.as_deref()
    }

    #[doc = stub_doc!("_BaseChallenge.raw")]
    #[getter]
    fn raw<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.raw.json(py, &self.challenge.raw)
    }

    #[doc = stub_doc!("_BaseChallenge.validate")]
    fn validate(&self, answers: &Bound<'_, PyAny>) -> PyResult<()> {
        self.challenge.validate(&convert::answers(answers, &self.challenge).or_raise()?).or_raise()
    }

    #[doc = stub_doc!("Challenge.answer")]
    fn answer(&self, py: Python<'_>, answers: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let answers = convert::answers(answers, &self.challenge).or_raise()?;
        let (client, challenge) = (self.client.clone(), self.challenge.clone());
        let future = async move {
            let call = client.call(protocol::AUTHORIZE.name);
            call.run(client.answer(&call, &challenge, answers)).await
        };
        Invocation::new(&self.client, future, step_to_py).named("AsyncChallenge", "answer").run(py, self.flavor)
    }

    #[doc = stub_doc!("_BaseChallenge._repr_html_")]
    fn _repr_html_(slf: &Bound<'_, Self>) -> PyResult<String> {
        display(slf.as_any(), "challenge_html")
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let this = slf.get();
        let challenges = this.challenges(slf.py())?;
        let items = this
            .challenge
            .challenges
            .iter()
            .zip(&challenges)
            .map(|(challenge, object)| Ok(format!("{} ({})", describe(challenge), answer_form(object.bind(slf.py()))?)))
            .collect::<PyResult<Vec<String>>>()?;
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

/// How to answer one challenge of its type (docs/answering.md), written by `bankfeed._display`
/// so that the repr and the notebook view say the same.
fn answer_form(challenge: &Bound<'_, PySecurityChallenge>) -> PyResult<String> {
    display(challenge.as_any(), "answer_form")
}

fn describe(challenge: &SecurityChallenge) -> String {
    format!("{}: {:?}", challenge.kind.as_str(), challenge.prompt)
}

#[pymethods]
impl PySecurityChallenge {
    #[doc = stub_doc!("SecurityChallenge.type")]
    #[getter]
    fn r#type(&self) -> &str {
        self.inner.kind.as_str()
    }

    #[doc = stub_doc!("SecurityChallenge.prompt")]
    #[getter]
    fn prompt(&self) -> &str {
        &self.inner.prompt
    }

    #[doc = stub_doc!("SecurityChallenge.choices")]
    #[getter]
    fn choices(&self) -> Option<Vec<String>> {
        self.inner.choices.clone()
    }

    #[doc = stub_doc!("SecurityChallenge.images")]
    #[getter]
    fn images<'py>(&self, py: Python<'py>) -> PyResult<Option<Vec<Bound<'py, PyBytes>>>> {
        match self.inner.images() {
            None => Ok(None),
            Some(Ok(images)) => Ok(Some(images.iter().map(|image| PyBytes::new(py, image)).collect())),
            Some(Err(error)) => Err(error.into_exception()),
        }
    }

    #[doc = stub_doc!("SecurityChallenge.is_security_code")]
    #[getter]
    fn is_security_code(&self) -> bool {
        self.inner.is_security_code()
    }

    #[doc = stub_doc!("SecurityChallenge.raw")]
    #[getter]
    fn raw<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.raw.value(py, &self.inner.raw)
    }

    #[doc = stub_doc!("SecurityChallenge._repr_html_")]
    fn _repr_html_(slf: &Bound<'_, Self>) -> PyResult<String> {
        display(slf.as_any(), "security_challenge_html")
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let this = slf.get();
        let choices = match (&this.inner.choices, this.inner.kind.as_str()) {
            (Some(choices), "ImageSelection") => format!(", images={}", choices.len()),
            (Some(choices), _) => format!(", choices={choices:?}"),
            (None, _) => String::new(),
        };
        Ok(format!(
            "SecurityChallenge(type={:?}, prompt={:?}{choices}; {})",
            this.inner.kind.as_str(),
            this.inner.prompt,
            answer_form(slf)?
        ))
    }
}

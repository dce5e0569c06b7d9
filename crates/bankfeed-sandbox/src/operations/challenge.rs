//! Security challenges the sandbox asks, and the rules that judge their answers.

use serde::Serialize;

pub(crate) const QUESTION_AND_ANSWER: &str = "QuestionAndAnswer";
pub(crate) const IMAGE_SELECTION: &str = "ImageSelection";
pub(crate) const MULTIPLE_CHOICE: &str = "MultipleChoice";
pub(crate) const MULTIPLE_CHOICE_MULTIPLE_ANSWERS: &str = "MultipleChoiceMultipleAnswers";
pub(crate) const TEXT_OR_CALL: &str = "TextOrCall";
pub(crate) const WAIT_UNTIL_EU_ACCEPT: &str = "WaitUntilEUAccept";

/// The challenges of one 203 answer, all answered in the same call.
pub(crate) type Round = Vec<Challenge>;

/// One element of `SecurityChallenges`, with what it takes to pass it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "PascalCase")]
pub(crate) struct Challenge {
    #[serde(rename = "Type")]
    pub kind: &'static str,
    pub prompt: &'static str,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub iterables: Vec<String>,
    #[serde(skip)]
    pub check: Check,
}

/// What passes a challenge.
#[derive(Debug, Clone)]
pub(crate) enum Check {
    /// Free text, compared trimmed and case-insensitively, as people type it.
    Text(&'static str),
    /// Exactly one answer: the choice at this index of `Iterables`.
    Choice(usize),
    /// Exactly this set of choices (indexes into `Iterables`), in any order.
    Choices(Vec<usize>),
    /// Keyed by one of the `Iterables` (not by the prompt), valued `Text` or `Call`.
    TextOrCall,
    /// A question picked from `Iterables` and a non-empty answer to it. `sample` is the index of
    /// the question used in the documented answer, so the sample answers pick distinct ones.
    PickQuestion { sample: usize, sample_answer: &'static str },
    /// The end user confirmed on the trusted device.
    Verified,
}

impl Challenge {
    pub(crate) fn new(kind: &'static str, prompt: &'static str, check: Check) -> Challenge {
        Challenge { kind, prompt, iterables: Vec::new(), check }
    }

    pub(crate) fn with_choices<S: Into<String>>(mut self, choices: impl IntoIterator<Item = S>) -> Challenge {
        self.iterables = choices.into_iter().map(Into::into).collect();
        self
    }

    /// Whether `key` of `SecurityResponses` addresses this challenge. Prompts are matched
    /// verbatim: they are data, and the service keys answers by the exact text.
    pub(crate) fn is_keyed_by(&self, key: &str) -> bool {
        match self.check {
            Check::TextOrCall => self.iterables.iter().any(|choice| choice == key),
            _ => self.prompt == key,
        }
    }

    pub(crate) fn accepts(&self, answer: &[String]) -> bool {
        match &self.check {
            Check::Text(expected) => {
                matches!(answer, [text] if text.trim().eq_ignore_ascii_case(expected))
            }
            Check::Choice(index) => {
                matches!(answer, [choice] if self.iterables.get(*index).is_some_and(|wanted| choice.trim() == wanted))
            }
            Check::Choices(indexes) => {
                let mut given: Vec<&str> = answer.iter().map(|choice| choice.trim()).collect();
                given.sort_unstable();
                given.dedup();
                let mut wanted: Vec<&str> =
                    indexes.iter().filter_map(|&i| self.iterables.get(i)).map(String::as_str).collect();
                wanted.sort_unstable();
                given.len() == answer.len() && given == wanted
            }
            Check::TextOrCall => matches!(answer, [how]
                if how.trim().eq_ignore_ascii_case("Text") || how.trim().eq_ignore_ascii_case("Call")),
            Check::PickQuestion { .. } => matches!(answer, [question, reply]
                if self.iterables.iter().any(|q| q == question.trim()) && !reply.trim().is_empty()),
            Check::Verified => {
                matches!(answer, [word] if word.trim().eq_ignore_ascii_case("VERIFIED"))
            }
        }
    }

    /// The choice at `index`; the tables of [`crate::world::users`](mod@crate::world::users) only name choices they list, so
    /// an empty string (which no check accepts) never reaches a caller.
    fn choice(&self, index: usize) -> String {
        self.iterables.get(index).cloned().unwrap_or_default()
    }

    /// What a person types or picks to pass it, in the widget's words (an image by its number
    /// from 1, as the forms show them); None when any answer passes (a phone to pick, a question
    /// to choose, a device to confirm).
    pub(crate) fn typed_answer(&self) -> Option<String> {
        match &self.check {
            Check::Text(expected) => Some((*expected).to_owned()),
            Check::Choice(index) if self.kind == IMAGE_SELECTION => Some(format!("image {}", index + 1)),
            Check::Choice(index) => Some(self.choice(*index)),
            Check::Choices(indexes) => Some(indexes.iter().map(|&i| self.choice(i)).collect::<Vec<_>>().join(" + ")),
            Check::TextOrCall | Check::PickQuestion { .. } | Check::Verified => None,
        }
    }

    /// A `SecurityResponses` entry that passes: (key, answer).
    pub(crate) fn sample_answer(&self) -> (String, Vec<String>) {
        let prompt = self.prompt.to_owned();
        match &self.check {
            Check::Text(expected) => (prompt, vec![(*expected).to_owned()]),
            Check::Choice(index) => (prompt, vec![self.choice(*index)]),
            Check::Choices(indexes) => (prompt, indexes.iter().map(|&i| self.choice(i)).collect()),
            Check::TextOrCall => (self.choice(0), vec!["Text".to_owned()]),
            Check::PickQuestion { sample, sample_answer } => {
                (prompt, vec![self.choice(*sample), (*sample_answer).to_owned()])
            }
            Check::Verified => (prompt, vec!["VERIFIED".to_owned()]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn choices_must_match_as_a_set() {
        let challenge = Challenge::new(MULTIPLE_CHOICE_MULTIPLE_ANSWERS, "p", Check::Choices(vec![0, 2]))
            .with_choices(["a", "b", "c"]);
        assert!(challenge.accepts(&strings(&["c", "a"])));
        assert!(!challenge.accepts(&strings(&["a"])));
        assert!(!challenge.accepts(&strings(&["a", "c", "c"])));
        assert!(!challenge.accepts(&strings(&["a", "b", "c"])));
    }

    #[test]
    fn text_is_trimmed_and_case_insensitive() {
        let challenge = Challenge::new(QUESTION_AND_ANSWER, "p", Check::Text("Montreal"));
        assert!(challenge.accepts(&strings(&["  montreal "])));
        assert!(!challenge.accepts(&strings(&["Montreal", "Montreal"])));
        assert!(!challenge.accepts(&[]));
    }
}

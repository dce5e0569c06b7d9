//! The answer rules of docs/protocol.md#challenges-and-answer-rules, checked before anything is
//! sent. A violation names the prompt and the rule, and never repeats the answer (answers are
//! secrets).

use std::collections::{HashMap, HashSet};
use std::fmt;

use serde_json::{Map, Value};

use super::challenge::{Challenge, ChallengeType, SecurityChallenge};
use crate::error::Error;

/// Answers to a 203: each key an exact prompt (or, for `TextOrCall`, the chosen choice), each
/// value the answer strings. Kept in the caller's order.
#[derive(Clone, Default, PartialEq)]
pub struct Answers(Vec<(String, Vec<String>)>);

impl Answers {
    pub fn new() -> Self {
        Answers(Vec::new())
    }

    pub fn from_pairs<K: Into<String>, V: Into<String>>(pairs: impl IntoIterator<Item = (K, Vec<V>)>) -> Self {
        Answers(pairs.into_iter().map(|(k, v)| (k.into(), v.into_iter().map(Into::into).collect())).collect())
    }

    pub fn push(&mut self, key: impl Into<String>, values: Vec<String>) {
        self.0.push((key.into(), values));
    }

    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(k, _)| k.as_str())
    }

    /// The answers by key, the first of a key given twice: read once per check, so that checking
    /// a step takes one pass over its challenges and one over the answers, not their product.
    fn by_key(&self) -> HashMap<&str, &[String]> {
        let mut by_key = HashMap::with_capacity(self.0.len());
        for (key, values) in &self.0 {
            by_key.entry(key.as_str()).or_insert(values.as_slice());
        }
        by_key
    }

    /// `SecurityResponses` as the service expects it: keys verbatim, never re-cased.
    /// Every answer, of every prompt.
    pub(crate) fn values(&self) -> impl Iterator<Item = &str> {
        self.0.iter().flat_map(|(_, values)| values.iter().map(String::as_str))
    }

    pub(crate) fn to_wire(&self) -> Value {
        let map: Map<String, Value> = self.0.iter().map(|(k, v)| (k.clone(), Value::from(v.clone()))).collect();
        Value::Object(map)
    }
}

/// Only the number of answers: a key is an answer when the caller swapped prompt and answer.
impl fmt::Debug for Answers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Answers({} keys, ***)", self.0.len())
    }
}

const TEXT_OR_CALL: [&str; 2] = ["Text", "Call"];

impl Challenge {
    /// Checks `answers` against every rule; `Ok` means they may be sent.
    pub fn validate(&self, answers: &Answers) -> Result<(), Error> {
        let keys = self.answer_keys();
        let mut seen = HashSet::new();
        for key in answers.keys() {
            // Known keys first: only a prompt (or a choice) may be named in a message.
            if !keys.contains(key) {
                return Err(unknown_key(self, key));
            }
            if !seen.insert(key) {
                return Err(Error::invalid_answer(key, "is answered twice"));
            }
        }
        let answers = answers.by_key();
        self.challenges.iter().try_for_each(|challenge| check(challenge, &answers))
    }

    /// The texts that may key an answer: the prompts, and the choices of TextOrCall challenges.
    /// Only such a key is ever repeated in an error message. Made once per check, so that a
    /// step's keys are looked up in constant time each.
    pub fn answer_keys(&self) -> HashSet<&str> {
        let mut keys = HashSet::with_capacity(self.challenges.len());
        for challenge in &self.challenges {
            match challenge.kind {
                ChallengeType::TextOrCall => keys.extend(challenge.choices.iter().flatten().map(String::as_str)),
                _ => {
                    keys.insert(challenge.prompt.as_str());
                }
            }
        }
        keys
    }
}

/// How many prompts or choices a message lists: a step has a few, and a message must stay a line.
const LISTED: usize = 10;

/// `items` as a message lists them: the first [`LISTED`], and how many more there are.
fn listed<T: fmt::Debug>(items: &[T]) -> String {
    match items.get(..LISTED) {
        Some(first) if items.len() > LISTED => format!("{first:?} and {} more", items.len() - LISTED),
        _ => format!("{items:?}"),
    }
}

/// A key that is not a prompt. It is never repeated: a caller who swapped prompt and answer keyed
/// by the answer. A key that differs from a prompt only in case or spaces names that prompt.
fn unknown_key(challenge: &Challenge, key: &str) -> Error {
    if let Some(near) = challenge.challenges.iter().find(|c| c.prompt.trim().eq_ignore_ascii_case(key.trim())) {
        let rule = match near.kind {
            ChallengeType::TextOrCall => format!(
                "a TextOrCall challenge is keyed by the chosen choice, not by its prompt; choices: {:?}",
                near.choices.as_deref().unwrap_or_default()
            ),
            _ => "is keyed with different case or spaces: keys must be the prompt exactly as asked".to_owned(),
        };
        return Error::invalid_answer(&near.prompt, rule);
    }
    let prompts: Vec<&str> = challenge.prompts().collect();
    let choices: Vec<&String> = challenge
        .challenges
        .iter()
        .filter(|c| c.kind == ChallengeType::TextOrCall)
        .flat_map(|c| c.choices.iter().flatten())
        .collect();
    let mut rule =
        format!("an answer is keyed by text that is not one of the prompts; the prompts are: {}", listed(&prompts));
    if !choices.is_empty() {
        rule.push_str(&format!(" (a TextOrCall challenge is keyed by one of its choices: {})", listed(&choices)));
    }
    Error::invalid_answer("answers", rule)
}

fn check(challenge: &SecurityChallenge, answers: &HashMap<&str, &[String]>) -> Result<(), Error> {
    let prompt = challenge.prompt.as_str();
    let fail = |rule: String| Err(Error::invalid_answer(prompt, rule));
    let choices = challenge.choices.as_deref().unwrap_or_default();
    // A set, so that answers naming many of many choices are still checked in one pass each.
    let choice_set: HashSet<&str> = choices.iter().map(String::as_str).collect();
    let in_choices = |value: &String| choice_set.contains(value.as_str());

    if challenge.kind == ChallengeType::TextOrCall {
        let chosen: Vec<&String> = choices.iter().filter(|c| answers.contains_key(c.as_str())).collect();
        return match chosen.as_slice() {
            [] => fail(format!(
                "TextOrCall is answered with the chosen choice as the key and [\"Text\"] or [\"Call\"] as the value; choices: {}",
                listed(choices)
            )),
            [choice] => match answers.get(choice.as_str()).copied().unwrap_or_default() {
                [value] if TEXT_OR_CALL.contains(&value.as_str()) => Ok(()),
                _ => fail(format!("the value for choice {choice:?} must be [\"Text\"] or [\"Call\"]")),
            },
            _ => fail("TextOrCall takes exactly one choice".to_owned()),
        };
    }

    let Some(&values) = answers.get(prompt) else {
        return fail("every prompt must be answered, and this one has no answer".to_owned());
    };
    let blank = values.iter().any(|v| v.trim().is_empty());
    match &challenge.kind {
        ChallengeType::QuestionAndAnswer if challenge.choices.is_some() => match values {
            [question, answer] if in_choices(question) && !answer.trim().is_empty() => Ok(()),
            _ => fail("pick a question from the choices and answer it: [question, answer]".to_owned()),
        },
        ChallengeType::QuestionAndAnswer if challenge.is_security_code() => match values {
            [code] if code.len() == 6 && code.bytes().all(|b| b.is_ascii_digit()) => Ok(()),
            _ => fail("a security code is exactly six digits".to_owned()),
        },
        ChallengeType::QuestionAndAnswer => match values {
            [_] if !blank => Ok(()),
            _ => fail("a question takes exactly one non-empty answer".to_owned()),
        },
        ChallengeType::MultipleChoice => match values {
            [value] if in_choices(value) => Ok(()),
            [_] => fail(format!("the answer must be one of the choices {}", listed(choices))),
            _ => fail("MultipleChoice takes exactly one answer".to_owned()),
        },
        ChallengeType::MultipleChoiceMultipleAnswers => {
            if values.is_empty() {
                return fail("MultipleChoiceMultipleAnswers takes one or more answers".to_owned());
            }
            if !values.iter().all(in_choices) {
                return fail(format!("every answer must be one of the choices {}", listed(choices)));
            }
            if values.iter().collect::<HashSet<_>>().len() != values.len() {
                return fail("a choice is given twice".to_owned());
            }
            Ok(())
        }
        ChallengeType::ImageSelection => match values {
            [value] if in_choices(value) => Ok(()),
            _ => fail(format!("the answer must be exactly one of the {} images of the choices", choices.len())),
        },
        ChallengeType::WaitUntilEUAccept => match values {
            [value] if value == "VERIFIED" => Ok(()),
            _ => fail("once the end user has confirmed on the trusted device, answer [\"VERIFIED\"]".to_owned()),
        },
        ChallengeType::TextOrCall => unreachable!("handled above"),
        ChallengeType::Other(_) => {
            if values.is_empty() || blank {
                return fail("the answer must be one or more non-empty strings".to_owned());
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn challenge(items: Value) -> Challenge {
        let body = json!({"RequestId": "11111111-2222-3333-4444-555555555555", "SecurityChallenges": items});
        Challenge::parse(serde_json::to_vec(&body).unwrap(), None).unwrap()
    }

    fn one(kind: &str, prompt: &str, choices: Option<&[&str]>) -> Challenge {
        let mut item = json!({"Type": kind, "Prompt": prompt});
        if let Some(choices) = choices {
            item["Iterables"] = json!(choices);
        }
        challenge(json!([item]))
    }

    fn answers(pairs: &[(&str, &[&str])]) -> Answers {
        Answers::from_pairs(pairs.iter().map(|(k, v)| (*k, v.to_vec())))
    }

    /// Asserts that `answers` break a rule of `prompt`, and that the message never repeats them.
    fn broken(challenge: &Challenge, answers: Answers, prompt: &str, rule_part: &str) {
        match challenge.validate(&answers) {
            Err(Error::InvalidAnswer { prompt: p, rule }) => {
                assert_eq!(p, prompt);
                assert!(rule.contains(rule_part), "{rule:?} lacks {rule_part:?}");
            }
            other => panic!("expected InvalidAnswer, got {other:?}"),
        }
    }

    #[test]
    fn every_prompt_must_be_answered_in_one_call() {
        let c = challenge(
            json!([{"Type": "QuestionAndAnswer", "Prompt": "A?"}, {"Type": "QuestionAndAnswer", "Prompt": "B?"}]),
        );
        assert!(c.validate(&answers(&[("A?", &["a"]), ("B?", &["b"])])).is_ok());
        broken(&c, answers(&[("A?", &["a"])]), "B?", "every prompt");
    }

    #[test]
    fn keys_must_be_prompts_verbatim() {
        let c = one("QuestionAndAnswer", "What city were you born in?", None);
        broken(
            &c,
            answers(&[("what city were you born in?", &["Montreal"])]),
            "What city were you born in?",
            "exactly as asked",
        );
        broken(&c, answers(&[("Favourite colour?", &["blue"])]), "answers", "What city were you born in?");
    }

    #[test]
    fn a_swapped_answer_is_never_repeated() {
        let c = one("QuestionAndAnswer", "What city were you born in?", None);
        let swapped = answers(&[("Montreal", &["What city were you born in?"])]);
        let err = c.validate(&swapped).unwrap_err();
        assert!(!err.to_string().contains("Montreal"), "{err}");
        assert!(!format!("{err:?}").contains("Montreal"), "{err:?}");
        broken(&c, swapped, "answers", "not one of the prompts");
        let twice = Answers::from_pairs([("Montreal", vec!["a"]), ("Montreal", vec!["b"])]);
        assert!(!c.validate(&twice).unwrap_err().to_string().contains("Montreal"));
    }

    #[test]
    fn a_long_list_of_prompts_is_cut_in_a_message() {
        let items: Vec<Value> =
            (0..40).map(|i| json!({"Type": "QuestionAndAnswer", "Prompt": format!("Question {i}?")})).collect();
        let c = challenge(Value::Array(items));
        let err = c.validate(&answers(&[("Nothing?", &["a"])])).unwrap_err().to_string();
        assert!(err.contains("\"Question 9?\"] and 30 more"), "{err}");
        assert!(!err.contains("Question 10?"), "{err}");
    }

    /// A step as large as a step may be, answered whole, passes: the cap leaves room for any real
    /// step, and every key and prompt is found among a hundred.
    #[test]
    fn a_full_step_answered_whole_passes() {
        let max = crate::authorize::MAX_CHALLENGES;
        let items: Vec<Value> = (0..max)
            .map(|i| json!({"Type": "MultipleChoice", "Prompt": format!("Q{i}?"), "Iterables": ["a", "b"]}))
            .collect();
        let c = challenge(Value::Array(items));
        let all: Vec<(String, Vec<String>)> = (0..max).map(|i| (format!("Q{i}?"), vec!["b".to_owned()])).collect();
        assert!(c.validate(&Answers::from_pairs(all)).is_ok());
        assert_eq!(c.answer_keys().len(), max);
    }

    #[test]
    fn a_question_takes_one_non_empty_answer() {
        let c = one("QuestionAndAnswer", "Q?", None);
        broken(&c, answers(&[("Q?", &[" "])]), "Q?", "exactly one non-empty");
        broken(&c, answers(&[("Q?", &["a", "b"])]), "Q?", "exactly one non-empty");
    }

    #[test]
    fn a_security_code_is_six_digits() {
        let c = one("QuestionAndAnswer", "Enter the 6-digit security code from your SecurID token", None);
        let prompt = c.challenges[0].prompt.clone();
        assert!(c.validate(&answers(&[(&prompt, &["123456"])])).is_ok());
        for bad in ["12345", "1234567", "12a456", "12345６"] {
            broken(&c, answers(&[(&prompt, &[bad])]), &prompt, "six digits");
        }
    }

    #[test]
    fn multiple_choice_is_exactly_one_of_the_choices() {
        let c = one("MultipleChoice", "Street?", Some(&["Elm", "Oak"]));
        assert!(c.validate(&answers(&[("Street?", &["Oak"])])).is_ok());
        broken(&c, answers(&[("Street?", &["Elm", "Oak"])]), "Street?", "exactly one");
        broken(&c, answers(&[("Street?", &["Pine"])]), "Street?", "one of the choices");
    }

    #[test]
    fn multiple_answers_are_one_or_more_distinct_choices() {
        let c = one("MultipleChoiceMultipleAnswers", "Cards?", Some(&["Visa", "Amex", "MC"]));
        assert!(c.validate(&answers(&[("Cards?", &["Visa", "Amex"])])).is_ok());
        broken(&c, answers(&[("Cards?", &[])]), "Cards?", "one or more");
        broken(&c, answers(&[("Cards?", &["Visa", "Diners"])]), "Cards?", "one of the choices");
        broken(&c, answers(&[("Cards?", &["Visa", "Visa"])]), "Cards?", "twice");
    }

    #[test]
    fn an_image_is_one_of_the_images() {
        let c = one("ImageSelection", "Yours?", Some(&["aW1nMQ==", "aW1nMg=="]));
        assert!(c.validate(&answers(&[("Yours?", &["aW1nMg=="])])).is_ok());
        broken(&c, answers(&[("Yours?", &["aW1nMw=="])]), "Yours?", "one of the 2 images");
    }

    #[test]
    fn text_or_call_is_keyed_by_the_chosen_choice() {
        let c = one("TextOrCall", "How?", Some(&["(514) 555-0101", "(438) 555-0199"]));
        assert!(c.validate(&answers(&[("(514) 555-0101", &["Text"])])).is_ok());
        assert!(c.validate(&answers(&[("(438) 555-0199", &["Call"])])).is_ok());
        broken(&c, answers(&[("(514) 555-0101", &["Email"])]), "How?", "\"Text\"");
        broken(&c, answers(&[("How?", &["Text"])]), "How?", "keyed by the chosen choice");
        broken(
            &c,
            answers(&[("(514) 555-0101", &["Text"]), ("(438) 555-0199", &["Call"])]),
            "How?",
            "exactly one choice",
        );
    }

    #[test]
    fn a_trusted_device_is_answered_verified() {
        let c = one("WaitUntilEUAccept", "Confirm", None);
        assert!(c.validate(&answers(&[("Confirm", &["VERIFIED"])])).is_ok());
        broken(&c, answers(&[("Confirm", &["verified"])]), "Confirm", "VERIFIED");
    }

    #[test]
    fn new_question_challenges_take_a_listed_question_and_an_answer() {
        let c = one("QuestionAndAnswer", "New security question 1", Some(&["Pet?", "School?"]));
        assert!(c.validate(&answers(&[("New security question 1", &["Pet?", "Rex"])])).is_ok());
        broken(
            &c,
            answers(&[("New security question 1", &["Car?", "Rex"])]),
            "New security question 1",
            "from the choices",
        );
        broken(&c, answers(&[("New security question 1", &["Rex"])]), "New security question 1", "from the choices");
    }

    #[test]
    fn unknown_types_take_free_text() {
        let c = one("FaceScan", "Smile", None);
        assert!(c.validate(&answers(&[("Smile", &["ok"])])).is_ok());
        broken(&c, answers(&[("Smile", &[])]), "Smile", "non-empty");
    }

    #[test]
    fn no_message_repeats_an_answer() {
        let c = one("QuestionAndAnswer", "Enter the security code we sent you", None);
        let err = c.validate(&answers(&[("Enter the security code we sent you", &["98765"])])).unwrap_err();
        assert!(!err.to_string().contains("98765"));
        assert!(!format!("{:?}", answers(&[("Q", &["hunter2"])])).contains("hunter2"));
        assert!(!format!("{:?}", answers(&[("hunter2", &["Q"])])).contains("hunter2"));
    }
}

//! `Language` of Authorize: the language of the prompts a session asks
//! (docs/sandbox.md#lastrefresh-loginids-and-languages). The documentation names two, `en` and
//! `fr` ([Authorize reference](https://docs.flinks.com/reference/opening-a-session)).

use std::borrow::Cow;

use serde_json::Value;

use crate::operations::challenge::Challenge;
use crate::server::body::Body;
use crate::server::reply::ErrorReply;

/// The language of a session's prompts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Language {
    #[default]
    English,
    French,
}

/// Every prompt the sandbox asks, in English and in French. Only prompts are translated: the
/// choices (streets, cards, phone numbers, images, the questions offered for a reset) are data
/// the end user picks from, and the answers documented in docs/sandbox.md#users stay right.
const FRENCH: [(&str, &str); 15] = [
    ("What city were you born in?", "Dans quelle ville êtes-vous né?"),
    ("What is the best country on earth?", "Quel est le meilleur pays au monde?"),
    ("What shape do people like most?", "Quelle forme les gens préfèrent-ils?"),
    ("Select your personal image", "Sélectionnez votre image personnelle"),
    ("Enter the 6-digit security code from your SecurID token", "Entrez le code à 6 chiffres de votre jeton SecurID"),
    ("Which of these streets have you lived on?", "Dans laquelle de ces rues avez-vous habité?"),
    ("Which of these cards do you hold?", "Lesquelles de ces cartes détenez-vous?"),
    ("How would you like to receive your security code?", "Comment voulez-vous recevoir votre code de sécurité?"),
    ("Enter the security code we sent you", "Entrez le code de sécurité que nous vous avons envoyé"),
    (
        "Confirm this sign-in on your trusted device, then continue",
        "Confirmez cette connexion sur votre appareil de confiance, puis continuez",
    ),
    (
        "Which bank branch did you open your first account at?",
        "À quelle succursale avez-vous ouvert votre premier compte?",
    ),
    ("What year did you open your first account?", "En quelle année avez-vous ouvert votre premier compte?"),
    ("New security question 1", "Nouvelle question de sécurité 1"),
    ("New security question 2", "Nouvelle question de sécurité 2"),
    ("New security question 3", "Nouvelle question de sécurité 3"),
];

impl Language {
    /// `Language` of an Authorize body: absent (or sent empty) is English; `en` and `fr` in any
    /// case; anything else is refused, naming the field, rather than asked in a language the
    /// caller did not want.
    pub(crate) fn of(body: &Body) -> Result<Language, ErrorReply> {
        let Some(value) = body.get("Language") else { return Ok(Language::English) };
        match value {
            Value::Null => Ok(Language::English),
            Value::String(text) if text.trim().is_empty() || text.trim().eq_ignore_ascii_case("en") => {
                Ok(Language::English)
            }
            Value::String(text) if text.trim().eq_ignore_ascii_case("fr") => Ok(Language::French),
            _ => Err(ErrorReply::invalid_request(format!(
                "Language must be \"en\" or \"fr\", got {value}: the languages the prompts are asked in"
            ))),
        }
    }

    /// `prompt` in this language.
    pub(crate) fn prompt(self, prompt: &'static str) -> &'static str {
        match self {
            Language::English => prompt,
            Language::French => {
                FRENCH.iter().find(|(english, _)| *english == prompt).map_or(prompt, |(_, french)| french)
            }
        }
    }

    /// A round of challenges with its prompts in this language.
    pub(crate) fn round(self, round: &[Challenge]) -> Cow<'_, [Challenge]> {
        if self == Language::English {
            return Cow::Borrowed(round);
        }
        Cow::Owned(
            round
                .iter()
                .map(|challenge| Challenge { prompt: self.prompt(challenge.prompt), ..challenge.clone() })
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_french_prompt_differs_from_its_english_one() {
        for (english, french) in FRENCH {
            assert_ne!(english, french);
            assert_eq!(Language::French.prompt(english), french);
            assert_eq!(Language::English.prompt(english), english);
        }
    }

    #[test]
    fn every_prompt_of_every_user_has_a_french_one() {
        for scenario in crate::world::users::scenarios() {
            for challenge in scenario.flow().iter().chain(scenario.saved_flow()).flatten() {
                assert_ne!(Language::French.prompt(challenge.prompt), challenge.prompt, "{}", scenario.username);
            }
        }
    }
}

//! The scenario table: one test user of institution `FlinksCapital` per flow.

use std::sync::OnceLock;

use crate::operations::challenge::{
    Challenge, Check, Round, IMAGE_SELECTION, MULTIPLE_CHOICE, MULTIPLE_CHOICE_MULTIPLE_ANSWERS, QUESTION_AND_ANSWER,
    TEXT_OR_CALL, WAIT_UNTIL_EU_ACCEPT,
};
use crate::server::reply::OPERATION_DISPATCHED;
use crate::server::reply::OPERATION_PENDING;
use crate::world::images;

/// Every user's password.
pub(crate) const PASSWORD: &str = "Everyday";

const CITY: &str = "What city were you born in?";
const COUNTRY: &str = "What is the best country on earth?";
const SHAPE: &str = "What shape do people like most?";

/// A test user, as documentation (the README table) and as answers a test can send.
#[derive(Debug, Clone)]
pub struct SandboxUser {
    /// Username at institution `FlinksCapital`.
    pub username: &'static str,
    /// The password (`Everyday` for all).
    pub password: &'static str,
    /// What the user does, in one sentence.
    pub description: &'static str,
    /// The `Type` of every challenge the user is asked, in the order they come.
    pub challenge_types: Vec<&'static str>,
    /// A passing `SecurityResponses` entry for every challenge, in prompt order: the key is the
    /// prompt, except for `TextOrCall`, where it is the chosen phone number.
    pub answers: Vec<(String, Vec<String>)>,
}

/// Every sandbox user, in a stable order: the documented test users of the real test instance
/// first, then one per remaining challenge flow.
pub fn users() -> Vec<SandboxUser> {
    scenarios().iter().map(Scenario::describe).collect()
}

/// How a user behaves on Authorize with credentials.
pub(crate) enum Outcome {
    /// 401 with this code, whatever is sent.
    Refused { code: &'static str, message: &'static str },
    /// These rounds of challenges (none: 200 at once).
    Flow(Vec<Round>),
}

pub(crate) struct Scenario {
    pub username: &'static str,
    pub description: &'static str,
    pub outcome: Outcome,
    /// The flow of Authorize by LoginId with `MostRecentCached` false, when it differs from
    /// the credentials flow.
    pub saved_flow: Option<Vec<Round>>,
    /// The code of a slow user's data calls, which stay pending `slow_pending_polls` times.
    pub slow_pending: Option<&'static str>,
    /// Whether a credentials login asks only one round of the flow, picked with the seed and the
    /// login's number, and asks it again when the answers are empty, as the public test
    /// instance's `Greatday` does (docs/sandbox.md#users).
    pub one_round: bool,
    /// Whether `cached_challenges="per_user"` asks this user's cached reads a question first
    /// (docs/sandbox.md#cached-reads-asked-a-question).
    pub cached_challenge: bool,
}

impl Scenario {
    /// The rounds of a credentials login; empty for refused users.
    pub(crate) fn flow(&self) -> &[Round] {
        match &self.outcome {
            Outcome::Flow(rounds) => rounds,
            Outcome::Refused { .. } => &[],
        }
    }

    /// The rounds a credentials login is asked: the whole flow, or for a user asked one round
    /// per login, the round `draw` picks (the caller draws it from the seed and the login's
    /// number, so that this table of users needs no generator).
    pub(crate) fn flow_of_login(&self, draw: u64) -> &[Round] {
        let flow = self.flow();
        if !self.one_round || flow.is_empty() {
            return flow;
        }
        // The remainder is below the flow's length, which is a usize.
        let index = usize::try_from(draw % flow.len() as u64).unwrap_or_default();
        flow.get(index..=index).unwrap_or(flow)
    }

    /// The rounds of a live login by saved connection.
    pub(crate) fn saved_flow(&self) -> &[Round] {
        self.saved_flow.as_deref().unwrap_or_else(|| self.flow())
    }

    /// The one round a cached read of this user's login is asked when it is asked one
    /// (docs/sandbox.md#cached-reads-asked-a-question): one of the user's own security
    /// questions, the country one first (the one the service was recorded asking `Greatday`'s
    /// cached read), or that country question for a user who has none.
    pub(crate) fn cached_flow(&self) -> &'static [Round] {
        static ROUNDS: OnceLock<[Vec<Round>; 3]> = OnceLock::new();
        let [country, city, shape] = ROUNDS.get_or_init(|| {
            [
                vec![vec![question(COUNTRY, "Canada")]],
                vec![vec![question(CITY, "Montreal")]],
                vec![vec![question(SHAPE, "Triangle")]],
            ]
        });
        let asks = |prompt: &str| {
            self.flow().iter().chain(self.saved_flow()).flatten().any(|challenge| challenge.prompt == prompt)
        };
        if asks(COUNTRY) || !(asks(CITY) || asks(SHAPE)) {
            country
        } else if asks(CITY) {
            city
        } else {
            shape
        }
    }

    fn describe(&self) -> SandboxUser {
        // The trusted-device user meets its challenge only on the saved-connection call.
        let rounds = if self.saved_flow.is_some() { self.saved_flow() } else { self.flow() };
        let challenges = rounds.iter().flatten();
        // A user asked one round per login meets the types of one round; any round may come, so
        // the answers are every round's.
        let asked = if self.one_round { rounds.get(..1).unwrap_or(rounds) } else { rounds };
        SandboxUser {
            username: self.username,
            password: PASSWORD,
            description: self.description,
            challenge_types: asked.iter().flatten().map(|challenge| challenge.kind).collect(),
            answers: challenges.map(Challenge::sample_answer).collect(),
        }
    }
}

/// The user named `username`, matched case-insensitively like the institution's login form.
pub(crate) fn find(username: &str) -> Option<User> {
    let username = username.trim();
    if let Some(index) = bulk_index(username) {
        return Some(User::bulk(index));
    }
    scenarios().iter().find(|user| user.username.eq_ignore_ascii_case(username)).map(User::named)
}

/// What every bulk username starts with (docs/sandbox.md#many-logins).
pub const BULK_PREFIX: &str = "bulk_";

/// The number of a bulk username (`bulk_42`, `BULK_00042`: 42), or None for any other name.
/// Leading zeros do not matter: `bulk_42` and `bulk_00042` are one user. Numbers go up to
/// 999,999,999 (nine digits), so every one fits a `u32`.
pub(crate) fn bulk_index(username: &str) -> Option<u32> {
    let username = username.trim();
    let prefix = username.get(..BULK_PREFIX.len())?;
    let digits = username.get(BULK_PREFIX.len()..)?;
    if !prefix.eq_ignore_ascii_case(BULK_PREFIX) || digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let trimmed = digits.trim_start_matches('0');
    if trimmed.len() > 9 {
        return None;
    }
    if trimmed.is_empty() {
        Some(0)
    } else {
        trimmed.parse().ok()
    }
}

/// Whether two usernames name the same user: case aside, and for bulk users whatever the
/// zeros before their number (`bulk_42` is `bulk_00042`).
pub(crate) fn same_user(a: &str, b: &str) -> bool {
    match (bulk_index(a), bulk_index(b)) {
        (Some(a), Some(b)) => a == b,
        _ => a.eq_ignore_ascii_case(b),
    }
}

/// The canonical username of bulk login `index`: its number written with at least five digits
/// (`bulk_00042`), which is what its LoginId derives from and what answers call it.
pub fn bulk_username(index: u32) -> String {
    format!("{BULK_PREFIX}{index:05}")
}

/// Who a session or a saved login belongs to: a user of the scenario table, or a bulk user,
/// who behaves as `greatday_nomfa` under a name of its own.
#[derive(Clone, Copy)]
pub(crate) struct User {
    pub scenario: &'static Scenario,
    pub bulk: Option<u32>,
}

impl User {
    fn named(scenario: &'static Scenario) -> User {
        User { scenario, bulk: None }
    }

    pub(crate) fn bulk(index: u32) -> User {
        User { scenario: bulk_scenario(), bulk: Some(index) }
    }

    /// The username the answers show and the LoginId derives from.
    pub(crate) fn username(&self) -> std::borrow::Cow<'static, str> {
        match self.bulk {
            Some(index) => bulk_username(index).into(),
            None => self.scenario.username.into(),
        }
    }
}

/// The scenario every bulk user follows: greatday_nomfa's, no challenge.
fn bulk_scenario() -> &'static Scenario {
    static BULK: OnceLock<Scenario> = OnceLock::new();
    BULK.get_or_init(|| flow("bulk_<n>", "No challenge, as greatday_nomfa: one distinct login per number.", Vec::new()))
}

pub(crate) fn scenarios() -> &'static [Scenario] {
    static TABLE: OnceLock<Vec<Scenario>> = OnceLock::new();
    TABLE.get_or_init(table)
}

fn question(prompt: &'static str, answer: &'static str) -> Challenge {
    Challenge::new(QUESTION_AND_ANSWER, prompt, Check::Text(answer))
}

fn greatday_rounds() -> Vec<Round> {
    vec![vec![question(CITY, "Montreal")], vec![question(COUNTRY, "Canada")], vec![question(SHAPE, "Triangle")]]
}

fn flow(username: &'static str, description: &'static str, rounds: Vec<Round>) -> Scenario {
    Scenario {
        username,
        description,
        outcome: Outcome::Flow(rounds),
        saved_flow: None,
        slow_pending: None,
        one_round: false,
        cached_challenge: false,
    }
}

fn refused(username: &'static str, description: &'static str, code: &'static str, message: &'static str) -> Scenario {
    Scenario {
        username,
        description,
        outcome: Outcome::Refused { code, message },
        saved_flow: None,
        slow_pending: None,
        one_round: false,
        cached_challenge: false,
    }
}

fn table() -> Vec<Scenario> {
    const NEW_QUESTIONS: [&str; 5] = [
        "What was the name of your first pet?",
        "What was the make of your first car?",
        "What is your mother's maiden name?",
        "What was the name of your elementary school?",
        "In what city did your parents meet?",
    ];
    let new_question = |prompt: &'static str, sample: usize, sample_answer: &'static str| {
        Challenge::new(QUESTION_AND_ANSWER, prompt, Check::PickQuestion { sample, sample_answer })
            .with_choices(NEW_QUESTIONS)
    };

    vec![
        Scenario {
            one_round: true,
            cached_challenge: true,
            ..flow(
                "Greatday",
                "One of three security questions (city Montreal, country Canada, shape Triangle) per login, \
                 picked with the seed; empty answers ask it again. With cached_challenges=\"per_user\", a cached \
                 Authorize asks the country question first.",
                greatday_rounds(),
            )
        },
        flow("greatday_nomfa", "No challenge: 200 at once.", Vec::new()),
        refused(
            "test_disabled_account",
            "Refused with 401 DISABLED_LOGIN.",
            "DISABLED_LOGIN",
            "The account is disabled at the institution",
        ),
        refused(
            "test_service_unavailable",
            "Refused with 401 RETRY_LATER.",
            "RETRY_LATER",
            "The institution is unavailable at the moment; retry later",
        ),
        Scenario {
            slow_pending: Some(OPERATION_PENDING),
            ..flow(
                "test_pending",
                "Greatday's questions, then data calls answer 202 OPERATION_PENDING slow_pending_polls times.",
                greatday_rounds(),
            )
        },
        Scenario {
            slow_pending: Some(OPERATION_DISPATCHED),
            ..flow(
                "test_dispatched",
                "Greatday's questions, then data calls answer 202 OPERATION_DISPATCHED slow_pending_polls times.",
                greatday_rounds(),
            )
        },
        Scenario {
            cached_challenge: true,
            ..flow(
                "greatday_three_rounds",
                "Greatday's three security questions, one per 203: city, country, shape. With \
                 cached_challenges=\"per_user\", a cached Authorize asks the country question first.",
                greatday_rounds(),
            )
        },
        flow(
            "mfa_three_questions",
            "Greatday's three security questions at once, in one 203.",
            vec![vec![question(CITY, "Montreal"), question(COUNTRY, "Canada"), question(SHAPE, "Triangle")]],
        ),
        flow(
            "mfa_image",
            "A security question, then an ImageSelection of 16 PNG images (the right one is image 8, numbered 1 to 16 as the forms number them).",
            vec![
                vec![question(CITY, "Montreal")],
                vec![Challenge::new(
                    IMAGE_SELECTION,
                    "Select your personal image",
                    Check::Choice(images::ANSWER_INDEX),
                )
                .with_choices(images::images_base64().iter().cloned())],
            ],
        ),
        flow(
            "mfa_securid",
            "A 6-digit SecurID code (123456), then a security question.",
            vec![
                vec![question("Enter the 6-digit security code from your SecurID token", "123456")],
                vec![question(CITY, "Montreal")],
            ],
        ),
        flow(
            "mfa_multiple_choice",
            "One MultipleChoice question: exactly one choice.",
            vec![vec![Challenge::new(MULTIPLE_CHOICE, "Which of these streets have you lived on?", Check::Choice(1))
                .with_choices(["Rue Sherbrooke", "Maple Avenue", "Elm Street", "None of the above"])]],
        ),
        flow(
            "mfa_multiple_answers",
            "One MultipleChoiceMultipleAnswers question: the exact set of right choices, in any order.",
            vec![vec![Challenge::new(
                MULTIPLE_CHOICE_MULTIPLE_ANSWERS,
                "Which of these cards do you hold?",
                Check::Choices(vec![0, 2]),
            )
            .with_choices(["Visa Infinite", "Mastercard World", "Amex Gold", "Visa Classic"])]],
        ),
        flow(
            "mfa_text_or_call",
            "TextOrCall (answer keyed by a phone number, Text or Call), then the code sent (654321).",
            vec![
                vec![Challenge::new(
                    TEXT_OR_CALL,
                    "How would you like to receive your security code?",
                    Check::TextOrCall,
                )
                .with_choices(["(514) 555-0101", "(438) 555-0199"])],
                vec![question("Enter the security code we sent you", "654321")],
            ],
        ),
        Scenario {
            saved_flow: Some(vec![vec![Challenge::new(
                WAIT_UNTIL_EU_ACCEPT,
                "Confirm this sign-in on your trusted device, then continue",
                Check::Verified,
            )]]),
            ..flow(
                "mfa_trusted_device",
                "200 at once with credentials; the WaitUntilEUAccept challenge comes on Authorize by \
                 LoginId with MostRecentCached false (save the login first).",
                Vec::new(),
            )
        },
        flow(
            "mfa_reset_questions",
            "Security-question reset: two MultipleChoice questions, then three new questions to pick \
             and answer (question from Iterables, answer text) at once.",
            vec![
                vec![
                    Challenge::new(
                        MULTIPLE_CHOICE,
                        "Which bank branch did you open your first account at?",
                        Check::Choice(1),
                    )
                    .with_choices([
                        "Downtown Montreal",
                        "Laval Centre",
                        "Quebec City",
                        "Ottawa Rideau",
                    ]),
                    Challenge::new(MULTIPLE_CHOICE, "What year did you open your first account?", Check::Choice(1))
                        .with_choices(["1998", "2003", "2010", "2015"]),
                ],
                vec![
                    new_question("New security question 1", 0, "Rex"),
                    new_question("New security question 2", 1, "Civic"),
                    new_question("New security question 3", 4, "Quebec City"),
                ],
            ],
        ),
    ]
}

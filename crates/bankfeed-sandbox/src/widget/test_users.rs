//! The sandbox's test users as the credential page lists them: each name with the answers its
//! challenges take, so that a person at the widget knows what to type, as the public test
//! instance's documentation tells its users (docs/sandbox.md#the-hosted-widget).

use crate::operations::challenge::Challenge;
use crate::world::users::scenarios;

/// One test user: its username and what it is asked to type, in the order asked.
pub(crate) struct TestUser {
    pub username: &'static str,
    pub answers: Vec<String>,
}

/// Every named test user (the bulk users are `greatday_nomfa`'s), in the users table's order.
pub(crate) fn test_users() -> Vec<TestUser> {
    scenarios()
        .iter()
        .map(|scenario| {
            // The trusted-device user is asked on its saved connection: its answers are those too.
            let challenges = scenario.flow().iter().chain(scenario.saved_flow.iter().flatten()).flatten();
            let mut answers: Vec<String> = Vec::new();
            for answer in challenges.filter_map(Challenge::typed_answer) {
                if !answers.contains(&answer) {
                    answers.push(answer);
                }
            }
            TestUser { username: scenario.username, answers }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answers_of(username: &str) -> Vec<String> {
        test_users().into_iter().find(|user| user.username == username).map(|user| user.answers).unwrap_or_default()
    }

    #[test]
    fn each_user_shows_what_a_person_types() {
        assert_eq!(answers_of("Greatday"), ["Montreal", "Canada", "Triangle"]);
        assert_eq!(answers_of("greatday_nomfa"), Vec::<String>::new());
        // Images are numbered from 1, as the form's buttons are.
        assert_eq!(answers_of("mfa_image"), ["Montreal", "image 8"]);
        assert_eq!(answers_of("mfa_multiple_answers"), ["Visa Infinite + Amex Gold"]);
        assert_eq!(answers_of("mfa_text_or_call"), ["654321"]);
    }
}

//! The client's calls of the service's operations beyond the interface against the sandbox
//! (docs/protocol.md#operations-beyond-the-interface): the nightly refresh and the stored answers.
//! The sandbox's own answers to them are its crate's tests (`sandbox_linking.rs` there).

use bankfeed::error::Error;
use bankfeed_sandbox::SandboxConfig;
use serde_json::Value;

use crate::common::{client_of, saved_session};

#[tokio::test]
async fn the_client_sets_the_nightly_refresh_and_answers_the_security_questions() {
    let (_sandbox, client) = client_of(SandboxConfig::default());
    let session = saved_session(&client).await;
    let login_id = session.login_id.unwrap();
    let on = within!(client, "SetScheduledRefresh", |c, call| c.set_scheduled_refresh(&call, &login_id, true));
    assert!(on.unwrap());
    let cached = within!(client, "Authorize", |c, call| c.authorize_cached(&call, &login_id)).unwrap();
    let answer: Value = serde_json::from_slice(&cached.raw).unwrap();
    assert_eq!(answer["Login"]["IsScheduledRefresh"], true);

    // greatday_nomfa is asked no question: none to list.
    let questions = within!(client, "GetMFAQuestions", |c, call| c.mfa_questions(&call, &login_id)).unwrap();
    assert!(questions.is_empty(), "{questions:?}");
    let answers = [("What shape do people like most?".to_owned(), "Triangle".to_owned())];
    match within!(client, "AnswerMFAQuestions", |c, call| c.answer_mfa_questions(&call, &login_id, &answers)) {
        Err(Error::Api(api)) => {
            assert_eq!(api.code.as_deref(), Some("INVALID_REQUEST"));
            assert!(!api.to_string().contains("Triangle"), "{api}");
        }
        other => panic!("{other:?}"),
    }
    let blank = [("Q?".to_owned(), String::new())];
    match within!(client, "AnswerMFAQuestions", |c, call| c.answer_mfa_questions(&call, &login_id, &blank)) {
        Err(Error::Config { field: "answers", rule }) => assert!(rule.contains("Q?"), "{rule}"),
        other => panic!("{other:?}"),
    }
}

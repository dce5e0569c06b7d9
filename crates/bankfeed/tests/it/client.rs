//! The Rust client against the embedded sandbox: every user's flow, the answer rules, errors,
//! polling and its timeout, cancellation and the keys.

use std::time::{Duration, Instant};

use bankfeed::authorize::{AuthorizeRequest, Credentials};
use bankfeed::config::ClientOptions;
use bankfeed::error::ApiErrorKind;
use bankfeed::ops::{self, Target};
use bankfeed::{Answers, Challenge, Client, ClientConfig, Error, Secret, Session, Step};
use bankfeed_sandbox::{users, Sandbox, SandboxConfig, SandboxUser};

use crate::common::{client_of as start, no_challenge, saved_session, user, INSTITUTION};

fn sandbox() -> (Sandbox, Client) {
    start(SandboxConfig::default())
}

fn credentials(username: &str, save: bool) -> AuthorizeRequest {
    let mut credentials = Credentials::new(INSTITUTION, username, Secret::new("Everyday"));
    credentials.save = save;
    AuthorizeRequest::Credentials(credentials)
}

/// The answers of `user` that this challenge asks for (prompts, or TextOrCall choices).
fn answers_for(user: &SandboxUser, challenge: &Challenge) -> Answers {
    let mut answers = Answers::new();
    for (key, values) in &user.answers {
        let asked = challenge.challenges.iter().any(|c| {
            &c.prompt == key
                || c.choices.iter().flatten().any(|choice| choice == key) && c.kind.as_str() == "TextOrCall"
        });
        if asked {
            answers.push(key.clone(), values.clone());
        }
    }
    answers
}

fn challenge_of(step: Step) -> Challenge {
    match step {
        Step::Challenge(challenge) => challenge,
        Step::Session(session) => panic!("expected a challenge, got {session:?}"),
    }
}

fn api_error(result: Result<impl std::fmt::Debug, Error>) -> Box<bankfeed::ApiError> {
    match result {
        Err(Error::Api(api)) => api,
        other => panic!("expected an API error, got {other:?}"),
    }
}

/// Opens the session of `user` step by step; returns it with the challenge types seen.
async fn open_step_by_step(client: &Client, user: &SandboxUser) -> (Session, Vec<String>) {
    let mut seen = Vec::new();
    let mut step = if user.username == "mfa_trusted_device" {
        let session = within!(client, "Authorize", |c, call| c.login(
            &call,
            Credentials::new(INSTITUTION, user.username, "Everyday".into()).saved(),
            &mut no_challenge
        ))
        .unwrap();
        within!(client, "Authorize", |c, call| c
            .authorize(&call, AuthorizeRequest::SavedLive { login_id: session.login_id.unwrap(), save: true }))
        .unwrap()
    } else {
        within!(client, "Authorize", |c, call| c.authorize(&call, credentials(user.username, true))).unwrap()
    };
    loop {
        match step {
            Step::Session(session) => return (session, seen),
            Step::Challenge(challenge) => {
                seen.extend(challenge.challenges.iter().map(|c| c.kind.as_str().to_owned()));
                let answers = answers_for(user, &challenge);
                step = within!(client, "Authorize", |c, call| c.answer(&call, &challenge, answers)).unwrap();
            }
        }
    }
}

trait Saved {
    fn saved(self) -> Self;
}

impl Saved for Credentials {
    fn saved(mut self) -> Self {
        self.save = true;
        self
    }
}

const FAILING_USERS: [&str; 2] = ["test_disabled_account", "test_service_unavailable"];

#[tokio::test]
async fn every_user_opens_a_session_step_by_step() {
    let (_sandbox, client) = sandbox();
    for user in users().iter().filter(|u| !FAILING_USERS.contains(&u.username)) {
        let (session, seen) = open_step_by_step(&client, user).await;
        assert_eq!(seen, user.challenge_types, "{}", user.username);
        let login_id = session.login_id.clone().expect("a LoginId");
        assert_eq!(session.login.as_ref().and_then(|l| l.id.as_deref()), Some(login_id.as_str()));
        // The connection was saved: a cached read opens a new session on the same LoginId.
        let cached = within!(client, "Authorize", |c, call| c.authorize_cached(&call, &login_id)).unwrap();
        assert_ne!(cached.request_id, session.request_id);
        assert_eq!(cached.login_id.as_deref(), Some(login_id.as_str()));
    }
}

#[tokio::test]
async fn every_user_opens_a_session_through_a_handler() {
    let (_sandbox, client) = sandbox();
    for user in users().iter().filter(|u| !FAILING_USERS.contains(&u.username) && u.username != "mfa_trusted_device") {
        let mut rounds = 0;
        let mut handler = |challenge: &Challenge| {
            rounds += 1;
            Ok(answers_for(user, challenge))
        };
        let credentials = Credentials::new(INSTITUTION, user.username, "Everyday".into());
        let session = within!(client, "Authorize", |c, call| c.login(&call, credentials, &mut handler)).unwrap();
        assert!(session.login_id.is_some(), "{}", user.username);
        assert!(rounds >= usize::from(!user.challenge_types.is_empty()), "{}", user.username);
    }
}

#[tokio::test]
async fn the_trusted_device_flow_runs_on_the_saved_connection() {
    let (_sandbox, client) = sandbox();
    let user = user("mfa_trusted_device");
    let session = within!(client, "Authorize", |c, call| c.login(
        &call,
        Credentials::new(INSTITUTION, user.username, "Everyday".into()).saved(),
        &mut no_challenge
    ))
    .unwrap();
    let login_id = session.login_id.unwrap();
    let challenge = challenge_of(
        within!(client, "Authorize", |c, call| c
            .authorize(&call, AuthorizeRequest::SavedLive { login_id: login_id.clone(), save: false }))
        .unwrap(),
    );
    assert_eq!(challenge.challenges[0].kind.as_str(), "WaitUntilEUAccept");
    let step = within!(client, "Authorize", |c, call| c.answer(
        &call,
        &challenge,
        Answers::from_pairs([(challenge.challenges[0].prompt.clone(), vec!["VERIFIED"])])
    ))
    .unwrap();
    match step {
        Step::Session(session) => assert_eq!(session.login_id.as_deref(), Some(login_id.as_str())),
        other @ Step::Challenge(_) => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn the_documented_failing_users_fail_with_their_codes() {
    let (_sandbox, client) = sandbox();
    let disabled = api_error(
        within!(client, "Authorize", |c, call| c.authorize(&call, credentials("test_disabled_account", false)))
    );
    assert_eq!((disabled.status, disabled.code.as_deref()), (401, Some("DISABLED_LOGIN")));
    assert_eq!(disabled.kind(), ApiErrorKind::LoginDisabled);
    let unavailable = api_error(
        within!(client, "Authorize", |c, call| c.authorize(&call, credentials("test_service_unavailable", false)))
    );
    assert_eq!(unavailable.code.as_deref(), Some("RETRY_LATER"));
    assert_eq!(unavailable.kind(), ApiErrorKind::RetryLater);
}

#[tokio::test]
async fn a_broken_answer_rule_sends_nothing() {
    let (sandbox, client) = sandbox();
    let challenge = challenge_of(
        within!(client, "Authorize", |c, call| c.authorize(&call, credentials("mfa_multiple_choice", false))).unwrap(),
    );
    let before = sandbox.request_count();
    let prompt = challenge.challenges[0].prompt.clone();
    let result = within!(client, "Authorize", |c, call| c.answer(
        &call,
        &challenge,
        Answers::from_pairs([(prompt.clone(), vec!["Maple Avenue", "Elm Street"])])
    ));
    match result {
        Err(Error::InvalidAnswer { prompt: p, .. }) => assert_eq!(p, prompt),
        other => panic!("{other:?}"),
    }
    assert_eq!(sandbox.request_count(), before);
}

#[tokio::test]
async fn a_wrong_answer_is_refused_and_can_be_corrected() {
    let (_sandbox, client) = sandbox();
    let challenge = challenge_of(
        within!(client, "Authorize", |c, call| c.authorize(&call, credentials("Greatday", false))).unwrap(),
    );
    let prompt = challenge.challenges[0].prompt.clone();
    let refused = within!(client, "Authorize", |c, call| c.answer(
        &call,
        &challenge,
        Answers::from_pairs([(prompt.clone(), vec!["Atlantis"])])
    ));
    // The error keeps the challenge, which stays open: what a login whose handler answered wrong
    // answers again (docs/errors.md#the-classes).
    let Err(Error::AnswerRefused { error: wrong, challenge: open }) = refused else { panic!("{refused:?}") };
    assert_eq!(wrong.code.as_deref(), Some("INVALID_SECURITY_RESPONSE"));
    assert_eq!(wrong.request_id.as_deref(), Some(challenge.request_id.as_str()));
    assert_eq!(open.request_id, challenge.request_id);
    let right = answers_for(&user("Greatday"), &open);
    assert!(within!(client, "Authorize", |c, call| c.answer(&call, &open, right)).is_ok());
}

#[tokio::test]
async fn an_unknown_request_id_is_session_nonexistent() {
    let (_sandbox, client) = sandbox();
    let mut challenge = challenge_of(
        within!(client, "Authorize", |c, call| c.authorize(&call, credentials("Greatday", false))).unwrap(),
    );
    challenge.request_id = "00000000-0000-4000-8000-000000000000".into();
    let answers = answers_for(&user("Greatday"), &challenge);
    let error = api_error(within!(client, "Authorize", |c, call| c.answer(&call, &challenge, answers)));
    assert_eq!((error.status, error.code.as_deref()), (400, Some("SESSION_NONEXISTENT")));
    assert_eq!(error.kind(), ApiErrorKind::Session);
}

#[tokio::test]
async fn an_unsaved_or_unknown_login_is_invalid_login() {
    let (_sandbox, client) = sandbox();
    let session = within!(client, "Authorize", |c, call| c.login(
        &call,
        Credentials::new(INSTITUTION, "greatday_nomfa", "Everyday".into()),
        &mut no_challenge
    ))
    .unwrap();
    let unsaved =
        api_error(within!(client, "Authorize", |c, call| c.authorize_cached(&call, &session.login_id.unwrap())));
    assert_eq!(unsaved.code.as_deref(), Some("INVALID_LOGIN"));
    let unknown = api_error(
        within!(client, "Authorize", |c, call| c.authorize_cached(&call, "00000000-0000-4000-8000-000000000000"))
    );
    assert_eq!(unknown.kind(), ApiErrorKind::InvalidLogin);
}

#[tokio::test]
async fn the_challenge_loop_is_bounded() {
    let (sandbox, _) = sandbox();
    let options = ClientOptions {
        base_url: Some(sandbox.url()),
        customer_id: Some(sandbox.customer_id().to_owned()),
        api_key: sandbox.api_key().map(Secret::new),
        secret_key: sandbox.secret_key().map(Secret::new),
        max_challenge_rounds: 1,
        ..ClientOptions::default()
    };
    let client = Client::new(ClientConfig::resolve(options, |_| None).unwrap()).unwrap();
    let greatday = user("greatday_three_rounds");
    let mut handler = |challenge: &Challenge| Ok(answers_for(&greatday, challenge));
    let result = within!(client, "Authorize", |c, call| c.login(
        &call,
        Credentials::new(INSTITUTION, "greatday_three_rounds", "Everyday".into()),
        &mut handler
    ));
    assert!(matches!(result, Err(Error::TooManyChallenges { rounds: 1, .. })), "{result:?}");
}

#[tokio::test]
async fn investments_are_polled_to_200() {
    let (sandbox, client) = start(SandboxConfig { pending_polls: 3, ..SandboxConfig::default() });
    let session = saved_session(&client).await;
    let investments = data!(client, ops::Investments, Target::Session(&session), &()).unwrap();
    assert!(investments.tables.accounts.rows > 0);
    assert_eq!(investments.tables.request_id.as_deref(), Some(session.request_id.as_str()));
    let value = investments.raw.to_value().unwrap();
    assert_eq!(value["RequestId"], session.request_id.as_str());
    let polls = sandbox.requests().iter().filter(|r| r.path.ends_with("/Investments")).count();
    assert_eq!(polls, 4);
}

#[tokio::test]
async fn a_session_still_loading_is_waited_out_like_a_202() {
    let (sandbox, client) = start(SandboxConfig { loading_polls: 2, pending_polls: 1, ..SandboxConfig::default() });
    let session = saved_session(&client).await;
    assert!(data!(client, ops::Investments, Target::Session(&session), &()).is_ok());
    let statuses: Vec<u16> =
        sandbox.requests().iter().filter(|r| r.path.ends_with("/Investments")).map(|r| r.status).collect();
    assert_eq!(statuses, [400, 400, 202, 200]);
}

#[tokio::test]
async fn the_dispatched_user_is_polled_too() {
    let (_sandbox, client) = sandbox();
    let dispatched = user("test_dispatched");
    let mut handler = |challenge: &Challenge| Ok(answers_for(&dispatched, challenge));
    let session = within!(client, "Authorize", |c, call| c.login(
        &call,
        Credentials::new(INSTITUTION, "test_dispatched", "Everyday".into()).saved(),
        &mut handler
    ))
    .unwrap();
    assert!(data!(client, ops::Investments, Target::Session(&session), &()).is_ok());
}

#[tokio::test]
async fn a_poll_that_never_ends_times_out_with_the_request_id() {
    let (sandbox, _) = start(SandboxConfig { pending_seconds: 30.0, ..SandboxConfig::default() });
    let options = ClientOptions {
        base_url: Some(sandbox.url()),
        customer_id: Some(sandbox.customer_id().to_owned()),
        api_key: sandbox.api_key().map(Secret::new),
        secret_key: sandbox.secret_key().map(Secret::new),
        poll_interval: 0.05,
        poll_timeout: 0.3,
        ..ClientOptions::default()
    };
    let client = Client::new(ClientConfig::resolve(options, |_| None).unwrap()).unwrap();
    let session = saved_session(&client).await;
    let started = Instant::now();
    match data!(client, ops::Investments, Target::Session(&session), &()) {
        Err(Error::PendingTimeout { request_id, waited, .. }) => {
            assert_eq!(request_id.as_deref(), Some(session.request_id.as_str()));
            assert!(waited >= Duration::from_millis(300));
        }
        other => panic!("{other:?}"),
    }
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn dropping_a_poll_stops_it() {
    let (sandbox, client) = start(SandboxConfig { pending_seconds: 30.0, ..SandboxConfig::default() });
    let session = saved_session(&client).await;
    let call = client.call("Investments");
    let poll = call.run(client.data::<ops::Investments>(&call, Target::Session(&session), &()));
    let cancelled = tokio::time::timeout(Duration::from_millis(200), poll).await;
    assert!(cancelled.is_err());
    let after_cancel = sandbox.request_count();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(sandbox.request_count(), after_cancel, "no request after the poll was dropped");
}

#[tokio::test]
async fn keys_are_sent_where_the_service_expects_them() {
    let config = SandboxConfig {
        secret_key: Some("sk-test".into()),
        api_key: Some("ak-test".into()),
        ..SandboxConfig::default()
    };
    let sandbox = Sandbox::start(config).unwrap();
    let make = |api_key: &str| {
        let options = ClientOptions {
            base_url: Some(sandbox.url()),
            customer_id: Some(sandbox.customer_id().to_owned()),
            secret_key: Some(Secret::new("sk-test")),
            api_key: Some(Secret::new(api_key)),
            poll_interval: 0.01,
            ..ClientOptions::default()
        };
        Client::new(ClientConfig::resolve(options, |_| None).unwrap()).unwrap()
    };
    let client = make("ak-test");
    let session = saved_session(&client).await;
    assert!(data!(client, ops::Investments, Target::Session(&session), &()).is_ok());
    let wrong = api_error(data!(make("ak-wrong"), ops::Investments, Target::Session(&session), &()));
    assert_eq!(wrong.kind(), ApiErrorKind::Unauthorized);
    // Without the secret key there is no token, and Authorize is refused.
    let options = ClientOptions {
        base_url: Some(sandbox.url()),
        customer_id: Some(sandbox.customer_id().to_owned()),
        ..ClientOptions::default()
    };
    let keyless = Client::new(ClientConfig::resolve(options, |_| None).unwrap()).unwrap();
    let refused =
        api_error(within!(keyless, "Authorize", |c, call| c.authorize(&call, credentials("greatday_nomfa", false))));
    assert_eq!(refused.code.as_deref(), Some("UNAUTHORIZED"));
}

#[tokio::test]
async fn a_refused_connection_is_a_transport_error_naming_the_operation() {
    let (sandbox, client) = sandbox();
    sandbox.stop();
    match within!(client, "Authorize", |c, call| c.authorize(&call, credentials("greatday_nomfa", false))) {
        // With the sandbox's keys, an Authorize starts with its token call: that is what failed.
        Err(Error::Transport { operation, .. }) => assert_eq!(operation, "GenerateAuthorizeToken"),
        other => panic!("{other:?}"),
    }
}

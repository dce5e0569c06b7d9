//! Cassettes (docs/cassettes.md): sessions recorded against the sandbox, then replayed with the
//! sandbox stopped, through the client's own code paths; what the file must never hold; and the
//! errors of a replay that does not match.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bankfeed::authorize::Credentials;
use bankfeed::cassette::{pseudonym, Cassette, CassetteOptions, CassetteSession, RecordMode};
use bankfeed::config::ClientOptions;
use bankfeed::data::requests::{AccountsDetailOptions, AccountsSummaryOptions, StatementsOptions};
use bankfeed::ops::{self, Target};
use bankfeed::{Answers, Challenge, Client, ClientConfig, Error, Secret, Session};
use bankfeed_sandbox::{users, Sandbox, SandboxConfig, SandboxUser};
use serde_json::Value;

use crate::common::INSTITUTION;

/// A cassette path of its own for `name`, removed first.
fn cassette_path(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("bankfeed-cassettes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.yaml"));
    let _ = std::fs::remove_file(&path);
    path
}

/// The options of a client of `base_url`, with a poll interval that a replay must not sleep.
fn options(
    base_url: &str,
    customer_id: &str,
    api_key: Option<&str>,
    secret_key: Option<&str>,
    poll: f64,
) -> ClientConfig {
    let options = ClientOptions {
        base_url: Some(base_url.to_owned()),
        customer_id: Some(customer_id.to_owned()),
        api_key: api_key.map(Secret::new),
        secret_key: secret_key.map(Secret::new),
        poll_interval: poll,
        poll_timeout: 30.0,
        ..ClientOptions::default()
    };
    ClientConfig::resolve(options, |_| None).unwrap()
}

fn on_cassette(
    config: ClientConfig,
    path: &Path,
    mode: RecordMode,
    cassette: CassetteOptions,
) -> (Client, Arc<CassetteSession>) {
    let session = Arc::new(CassetteSession::open(path, mode, &config, &cassette).unwrap());
    (Client::with_cassette(config, Arc::clone(&session)).unwrap(), session)
}

/// A user whose login asks a security question.
fn challenged_user() -> SandboxUser {
    users().into_iter().find(|user| user.challenge_types == ["QuestionAndAnswer"]).expect("a user asked one question")
}

fn answers_of(user: &SandboxUser, challenge: &Challenge) -> Answers {
    let mut answers = Answers::new();
    for (key, values) in &user.answers {
        if challenge.challenges.iter().any(|c| &c.prompt == key) {
            answers.push(key.clone(), values.clone());
        }
    }
    answers
}

/// What one session of the test does: a credentials login answering its challenge, account
/// detail polled through 202s, and investments.
struct Outcome {
    session: Session,
    challenged: usize,
    /// The answers the handler gave.
    answered: Vec<String>,
    accounts: Value,
    investments: Value,
}

async fn run_session(client: &Client, user: &SandboxUser) -> Result<Outcome, Error> {
    let mut challenged = 0;
    let mut answered = Vec::new();
    let mut handler = |challenge: &Challenge| {
        challenged += 1;
        let answers = answers_of(user, challenge);
        for (key, values) in &user.answers {
            if challenge.challenges.iter().any(|c| &c.prompt == key) {
                answered.extend(values.iter().cloned());
            }
        }
        Ok(answers)
    };
    let mut credentials = Credentials::new(INSTITUTION, user.username, Secret::new(user.password));
    credentials.save = true;
    let session = within!(client, "Authorize", |c, call| c.login(&call, credentials, &mut handler))?;
    let options =
        AccountsDetailOptions { with_transactions: Some(true), days: Some("Days90".into()), ..Default::default() };
    let detail = data!(client, ops::AccountsDetail, Target::Session(&session), &options)?;
    let investments = data!(client, ops::Investments, Target::Session(&session), &())?;
    Ok(Outcome {
        session,
        challenged,
        answered,
        accounts: detail.raw.to_value().unwrap(),
        investments: investments.raw.to_value().unwrap(),
    })
}

/// Every string under a key named `key` in `value`.
fn strings_under(value: &Value, key: &str, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (name, item) in map {
                if name == key {
                    collect_strings(item, out);
                } else {
                    strings_under(item, key, out);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| strings_under(item, key, out)),
        _ => {}
    }
}

fn collect_strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(text) => out.push(text.clone()),
        Value::Number(number) => out.push(number.to_string()),
        Value::Array(items) => items.iter().for_each(|item| collect_strings(item, out)),
        Value::Object(map) => map.values().for_each(|item| collect_strings(item, out)),
        _ => {}
    }
}

/// Records a session against a keyed sandbox; returns the sandbox (still running), the outcome and the path.
async fn record(
    name: &str,
    cassette: CassetteOptions,
) -> (Sandbox, Result<Outcome, Error>, Arc<CassetteSession>, PathBuf) {
    let sandbox = Sandbox::start(SandboxConfig { pending_polls: 2, ..SandboxConfig::default() }).unwrap();
    let config = options(&sandbox.url(), sandbox.customer_id(), sandbox.api_key(), sandbox.secret_key(), 0.01);
    let path = cassette_path(name);
    let (client, session) = on_cassette(config, &path, RecordMode::Once, cassette);
    let outcome = run_session(&client, &challenged_user()).await;
    (sandbox, outcome, session, path)
}

#[tokio::test]
async fn a_recorded_session_replays_with_the_sandbox_stopped_and_gives_the_same_results() {
    let user = challenged_user();
    let (sandbox, live, recording, path) = record("replay", CassetteOptions::default()).await;
    let live = live.unwrap();
    assert_eq!(live.challenged, 1);
    let sent = sandbox.requests().len();
    assert!(recording.save().unwrap(), "written");
    let (url, customer, api_key, secret_key) = (
        sandbox.url(),
        sandbox.customer_id().to_owned(),
        sandbox.api_key().map(str::to_owned),
        sandbox.secret_key().map(str::to_owned),
    );
    sandbox.stop();

    // The same test again, the sandbox gone; a poll interval of 5 s that a replay never sleeps.
    let config = options(&url, &customer, api_key.as_deref(), secret_key.as_deref(), 5.0);
    let (client, replay) = on_cassette(config, &path, RecordMode::Once, CassetteOptions::default());
    let started = Instant::now();
    let replayed = run_session(&client, &user).await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(3), "{:?}: no poll interval slept", started.elapsed());
    assert_eq!(replay.play_count(), (sent, sent), "every request the sandbox saw, played once");
    assert!(!replay.save().unwrap(), "a replay writes nothing");

    // The same answers, the ids as their pseudonyms.
    assert_eq!(replayed.challenged, 1);
    let live_login = live.session.login_id.clone().unwrap();
    assert_eq!(replayed.session.login_id, Some(pseudonym(&live_login)));
    assert_eq!(replayed.session.request_id, pseudonym(&live.session.request_id));
    let money = |value: &Value, key: &str| {
        let mut found = Vec::new();
        strings_under(value, key, &mut found);
        found
    };
    for key in ["Balance", "Debit", "Credit", "Date", "Category"] {
        assert_eq!(money(&replayed.accounts, key), money(&live.accounts, key), "{key}");
    }
    assert!(!money(&live.accounts, "Debit").is_empty());
    assert_eq!(
        money(&replayed.investments, "MarketValue"),
        money(&live.investments, "MarketValue"),
        "investments, value for value"
    );
    // Replayed twice, a cassette gives the same again: a replay is deterministic.
    let config = options(&url, &customer, api_key.as_deref(), secret_key.as_deref(), 5.0);
    let (client, _) = on_cassette(config, &path, RecordMode::None, CassetteOptions::default());
    let again = run_session(&client, &user).await.unwrap();
    assert_eq!((again.accounts, again.investments), (replayed.accounts, replayed.investments));
}

#[tokio::test]
async fn no_secret_and_no_personal_value_that_crossed_the_wire_is_in_the_file() {
    let user = challenged_user();
    let (sandbox, live, recording, path) = record("redaction", CassetteOptions::default()).await;
    let live = live.unwrap();
    recording.save().unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let mut values: Vec<(String, String)> = vec![
        ("password".into(), user.password.to_owned()),
        ("username".into(), user.username.to_owned()),
        ("api key".into(), sandbox.api_key().unwrap().to_owned()),
        ("secret key".into(), sandbox.secret_key().unwrap().to_owned()),
        ("customer id".into(), sandbox.customer_id().to_owned()),
        ("LoginId".into(), live.session.login_id.clone().unwrap()),
        ("RequestId".into(), live.session.request_id.clone()),
    ];
    assert!(!live.answered.is_empty());
    values.extend(live.answered.iter().map(|answer| ("answer".to_owned(), answer.clone())));
    // The holder's name, address, email and phone are distinctive: none is anywhere in the file.
    let mut holder = Vec::new();
    strings_under(&live.accounts, "Holder", &mut holder);
    assert!(holder.len() > 5, "the sandbox sends a holder: {holder:?}");
    values.extend(
        holder.into_iter().filter(|value| value.chars().count() >= 3).map(|value| ("Holder".to_owned(), value)),
    );
    // Their words stand in other fields too (a description's "Interest", a title's "Savings", an
    // account type), so the values are compared: no description and no title of the file is one
    // that came.
    let cassette = bankfeed::cassette::Cassette::parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
    for (field, least) in [("Description", 10), ("Title", 2)] {
        let (mut came, mut kept) = (Vec::new(), Vec::new());
        strings_under(&live.accounts, field, &mut came);
        for interaction in &cassette.interactions {
            if let Some(bankfeed::cassette::StoredBody::Json { json }) = &interaction.response.body {
                strings_under(json, field, &mut kept);
            }
        }
        assert!(came.len() >= least && kept.len() >= came.len(), "{field}: {} {}", came.len(), kept.len());
        assert!(kept.iter().all(|kept| !came.contains(kept)), "a {field} came through as it was");
    }
    let folded = text.to_lowercase();
    for (what, value) in &values {
        assert!(!folded.contains(&value.to_lowercase()), "the {what} {value:?} is in the cassette");
    }
    for field in ["password", "username", "securityresponses", "flinks-auth-key", "x-api-key", "holder"] {
        assert!(folded.contains(field), "{field} is named (field names stay)");
    }
    assert!(text.contains("origin: live") && text.contains("redactions:"), "{}", &text[..400]);
    // The scan of a written file finds nothing in it, and finds a value put back by hand.
    let targets: Vec<(String, Secret)> =
        values.iter().map(|(what, value)| (what.clone(), Secret::new(value.as_str()))).collect();
    bankfeed::cassette::check_file(&path, &targets).unwrap();
    std::fs::write(&path, text.replacen("REDACTED", user.password, 1)).unwrap();
    let error = bankfeed::cassette::check_file(&path, &targets).unwrap_err();
    assert!(matches!(&error, Error::CassetteSecret { field, .. } if field == "password"), "{error}");
    assert!(!error.to_string().contains(user.password), "{error}");
}

#[tokio::test]
async fn a_broken_redactor_is_caught_and_nothing_is_written() {
    for (unredacted, named) in [("Password", "Authorize request's body"), ("x-api-key", "x-api-key")] {
        let cassette = CassetteOptions { unredacted: vec![unredacted.to_owned()], ..CassetteOptions::default() };
        let (_sandbox, live, recording, path) = record(&format!("broken-{unredacted}"), cassette).await;
        live.unwrap();
        match recording.save() {
            Err(error @ Error::CassetteSecret { .. }) => {
                let text = error.to_string();
                assert!(text.contains(named) && text.contains(&path.display().to_string()), "{text}");
                assert!(!text.contains("Everyday"), "{text}");
                println!("{text}");
            }
            other => panic!("{unredacted}: {other:?}"),
        }
        assert!(!path.exists(), "nothing written");
    }
}

#[tokio::test]
async fn an_unmatched_request_shows_the_closest_recorded_one_and_a_run_out_sequence_is_an_error() {
    let (sandbox, live, recording, path) = record("unmatched", CassetteOptions::default()).await;
    let live = live.unwrap();
    recording.save().unwrap();
    let config = options(&sandbox.url(), sandbox.customer_id(), sandbox.api_key(), sandbox.secret_key(), 0.01);
    let requests = sandbox.requests().len();
    let (client, replay) = on_cassette(config, &path, RecordMode::None, CassetteOptions::default());
    // The replayed session's ids are the pseudonyms.
    let mut session = live.session.clone();
    session.login_id = session.login_id.as_deref().map(pseudonym);
    session.request_id = pseudonym(&session.request_id);
    // A summary was never recorded: the closest is the detail request of the same session.
    let summary = data!(client, ops::AccountsSummary, Target::Session(&session), &AccountsSummaryOptions::default());
    match summary {
        Err(error @ Error::CassetteUnmatched { .. }) => {
            let text = error.to_string();
            println!("{text}");
            assert!(text.contains(&path.display().to_string()), "{text}");
            assert!(
                text.contains("POST /v3/{customer_id}/BankingServices/GetAccountsSummary (GetAccountsSummary)"),
                "{text}"
            );
            assert!(text.contains("the closest recorded request is interaction"), "{text}");
            assert!(
                text.contains(
                    "differs in: path: recorded /v3/{customer_id}/BankingServices/GetAccountsDetail, sent \
                     /v3/{customer_id}/BankingServices/GetAccountsSummary"
                ),
                "{text}"
            );
        }
        other => panic!("{other:?}"),
    }
    // Investments were polled 202, 202, 200; asked twice, the second ask runs out.
    assert!(data!(client, ops::Investments, Target::Session(&session), &()).is_ok());
    match data!(client, ops::Investments, Target::Session(&session), &()) {
        Err(error @ Error::CassetteRunOut { .. }) => {
            let text = error.to_string();
            assert!(text.contains("all were played") && text.contains("Investments"), "{text}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(sandbox.requests().len(), requests, "a replay sends nothing");
    assert!(replay.play_count().0 > 0);
}

#[tokio::test]
async fn recording_a_host_that_is_not_loopback_needs_allow_live_record() {
    let config = options("https://bank.example.com", "cid", None, None, 0.01);
    let path = cassette_path("live");
    let error = CassetteSession::open(&path, RecordMode::Once, &config, &CassetteOptions::default()).unwrap_err();
    assert!(matches!(error, Error::Config { field: "allow_live_record", .. }), "{error}");
    let allowed = CassetteOptions { allow_live_record: true, ..CassetteOptions::default() };
    assert!(CassetteSession::open(&path, RecordMode::Once, &config, &allowed).is_ok());
    let missing = CassetteSession::open(&path, RecordMode::None, &config, &CassetteOptions::default()).unwrap_err();
    assert!(missing.to_string().contains("does not exist"), "{missing}");
}

/// A login of `greatday_nomfa` (no challenge).
async fn login_nomfa(client: &Client) -> Result<Session, Error> {
    let mut credentials = Credentials::new(INSTITUTION, "greatday_nomfa", Secret::new("Everyday"));
    credentials.save = true;
    let mut none = |challenge: &Challenge| Err(Error::ChallengeRequired(Box::new(challenge.clone())));
    within!(client, "Authorize", |c, call| c.login(&call, credentials, &mut none))
}

/// A login of `greatday_nomfa` (no challenge), then its investments.
async fn investments_of(client: &Client) -> Result<(Session, Value), Error> {
    let session = login_nomfa(client).await?;
    let investments = data!(client, ops::Investments, Target::Session(&session), &())?;
    Ok((session, investments.raw.to_value().unwrap()))
}

#[tokio::test]
async fn a_retried_503_replays_without_its_wait_and_the_modes_add_or_rewrite() {
    use bankfeed_sandbox::{Fault, FaultKind};
    let sandbox = Sandbox::start(SandboxConfig { pending_polls: 1, ..SandboxConfig::default() }).unwrap();
    let config = || options(&sandbox.url(), sandbox.customer_id(), sandbox.api_key(), sandbox.secret_key(), 0.01);
    sandbox.inject([Fault {
        operation: Some("Investments".to_owned()),
        times: Some(1),
        ..Fault::new(FaultKind::Status {
            status: 503,
            code: Some("RETRY_LATER".into()),
            message: None,
            retry_after: Some("1".into()),
        })
    }]);
    let path = cassette_path("modes");
    let (client, recording) = on_cassette(config(), &path, RecordMode::Once, CassetteOptions::default());
    let started = Instant::now();
    let (_, live) = investments_of(&client).await.unwrap();
    assert!(started.elapsed() >= Duration::from_secs(1), "the live retry waited its Retry-After");
    recording.save().unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("status: 503") && text.contains("retry-after: '1'"), "kept as information");
    let recorded = Cassette::parse(&text).unwrap().interactions.len();

    // Replayed: the 503 is retried as it was, without the wait.
    let (client, replay) = on_cassette(config(), &path, RecordMode::None, CassetteOptions::default());
    let started = Instant::now();
    let (_, replayed) = investments_of(&client).await.unwrap();
    assert!(started.elapsed() < Duration::from_millis(800), "{:?}", started.elapsed());
    // The same figures (the login's ids and personal fields are pseudonyms and disguises).
    for key in ["Value", "Cash"] {
        assert_eq!(replayed[key], live[key], "{key}");
    }
    assert_eq!(replay.play_count(), (recorded, recorded));

    // new_episodes: what matches is replayed; a second session, never recorded, is sent and
    // added. (A new request on a replayed session could not go out: the server does not know
    // its pseudonym RequestId; docs/cassettes.md#modes.)
    let (client, episodes) = on_cassette(config(), &path, RecordMode::NewEpisodes, CassetteOptions::default());
    let before = sandbox.requests().len();
    investments_of(&client).await.unwrap();
    assert_eq!(sandbox.requests().len(), before, "all of it replayed");
    investments_of(&client).await.unwrap();
    assert!(sandbox.requests().len() > before, "the second session went out");
    assert!(episodes.save().unwrap());
    let added = Cassette::parse(&std::fs::read_to_string(&path).unwrap()).unwrap().interactions.len();
    assert!(added > recorded, "{added} > {recorded}");
    let (client, _) = on_cassette(config(), &path, RecordMode::None, CassetteOptions::default());
    investments_of(&client).await.unwrap();
    investments_of(&client).await.unwrap();

    // rewrite: the file holds this session's requests alone.
    let (client, rewrite) = on_cassette(config(), &path, RecordMode::Rewrite, CassetteOptions::default());
    investments_of(&client).await.unwrap();
    assert!(rewrite.save().unwrap());
    let rewritten = Cassette::parse(&std::fs::read_to_string(&path).unwrap()).unwrap().interactions.len();
    assert!(rewritten < added, "{rewritten} < {added}");
    // all: sent again and added after what is there.
    let (client, all) = on_cassette(config(), &path, RecordMode::All, CassetteOptions::default());
    investments_of(&client).await.unwrap();
    assert!(all.save().unwrap());
    let doubled = Cassette::parse(&std::fs::read_to_string(&path).unwrap()).unwrap().interactions.len();
    assert_eq!(doubled, 2 * rewritten);
}

/// A handler that answers as `user` does, from what each challenge offers: a `TextOrCall`
/// challenge with its first phone number, an image selection with the image at the position
/// the user's image had in the recording (`picks`: filled when recording, read when replaying),
/// any other by its prompt. A replay offers the recording's disguised numbers and placeholder
/// images, never the real ones: a handler answers them by position (docs/cassettes.md#redaction).
fn offered_answers(user: &SandboxUser, challenge: &Challenge, met: &mut Vec<String>, picks: &mut Picks) -> Answers {
    let mut answers = Answers::new();
    for asked in &challenge.challenges {
        met.push(asked.kind.as_str().to_owned());
        let choices: Vec<&String> = asked.choices.iter().flatten().collect();
        if asked.kind.as_str() == "TextOrCall" {
            answers.push(choices[0].clone(), vec!["Text".to_owned()]);
            continue;
        }
        let Some((prompt, values)) = user.answers.iter().find(|(prompt, _)| prompt == &asked.prompt) else { continue };
        if asked.kind.as_str() == "ImageSelection" {
            let at = match picks {
                Picks::Recording(found) => {
                    let at = choices.iter().position(|choice| values.contains(choice)).expect("the user's image");
                    found.push(at);
                    at
                }
                Picks::Replaying(found) => found.remove(0),
            };
            answers.push(prompt.clone(), vec![choices[at].clone()]);
        } else {
            answers.push(prompt.clone(), values.clone());
        }
    }
    answers
}

/// The positions of the images a user picked: found when recording, given back when replaying.
enum Picks {
    Recording(Vec<usize>),
    Replaying(Vec<usize>),
}

/// The login of `user` with credentials, answering each challenge (`offered_answers`); the
/// session and the challenge types met.
async fn login_answering(
    client: &Client,
    user: &SandboxUser,
    picks: &mut Picks,
) -> Result<(Session, Vec<String>), Error> {
    let mut met = Vec::new();
    let mut handler = |challenge: &Challenge| Ok(offered_answers(user, challenge, &mut met, picks));
    let credentials = Credentials::new(INSTITUTION, user.username, Secret::new(user.password));
    let session = within!(client, "Authorize", |c, call| c.login(&call, credentials, &mut handler))?;
    Ok((session, met))
}

#[tokio::test]
async fn every_challenge_flow_replays_with_the_sandbox_stopped() {
    // Each user whose credentials login meets challenges: each challenge type recorded once at
    // least, the phone numbers of TextOrCall disguised in the answer and in the request naming one.
    let flows: Vec<SandboxUser> = users()
        .into_iter()
        .filter(|user| !user.challenge_types.is_empty() && user.username != "mfa_trusted_device")
        .collect();
    let types: std::collections::BTreeSet<&str> =
        flows.iter().flat_map(|user| user.challenge_types.iter().copied()).collect();
    for kind in ["QuestionAndAnswer", "ImageSelection", "MultipleChoice", "MultipleChoiceMultipleAnswers", "TextOrCall"]
    {
        assert!(types.contains(kind), "no sandbox user meets {kind}: {types:?}");
    }
    for user in &flows {
        let sandbox = Sandbox::start(SandboxConfig::default()).unwrap();
        let config = options(&sandbox.url(), sandbox.customer_id(), sandbox.api_key(), sandbox.secret_key(), 0.01);
        let path = cassette_path(&format!("flow-{}", user.username));
        let (client, recording) = on_cassette(config, &path, RecordMode::Once, CassetteOptions::default());
        let mut picks = Picks::Recording(Vec::new());
        let (live, met) =
            login_answering(&client, user, &mut picks).await.unwrap_or_else(|e| panic!("{}: {e}", user.username));
        assert!(!met.is_empty(), "{}", user.username);
        let sent = sandbox.requests().len();
        assert!(recording.save().unwrap());
        let config = options(&sandbox.url(), sandbox.customer_id(), sandbox.api_key(), sandbox.secret_key(), 5.0);
        sandbox.stop();
        let text = std::fs::read_to_string(&path).unwrap();
        if met.iter().any(|kind| kind == "TextOrCall") {
            for (number, _) in user.answers.iter().filter(|(key, _)| key.starts_with('(')) {
                assert!(!text.contains(number.as_str()), "{}: the phone number {number} is in the file", user.username);
            }
        }
        let (client, replay) = on_cassette(config, &path, RecordMode::None, CassetteOptions::default());
        let Picks::Recording(found) = picks else { unreachable!() };
        let (replayed, met_again) = login_answering(&client, user, &mut Picks::Replaying(found))
            .await
            .unwrap_or_else(|e| panic!("{} replayed: {e}", user.username));
        assert_eq!(met_again, met, "{}", user.username);
        assert_eq!(replayed.request_id, pseudonym(&live.request_id), "{}", user.username);
        assert_eq!(replay.play_count(), (sent, sent), "{}: every request played once", user.username);
    }
}

/// A login of `greatday_nomfa`, then twelve months of statements: each statement's file, as the
/// base64 text of the answer.
async fn statement_files(client: &Client) -> Result<Vec<String>, Error> {
    let session = login_nomfa(client).await?;
    let options = StatementsOptions { number_of_statements: Some("Months12".into()), ..Default::default() };
    let statements = data!(client, ops::Statements, Target::Session(&session), &options)?;
    let mut files = Vec::new();
    strings_under(&statements.payload.raw.to_value().unwrap(), "Base64Bytes", &mut files);
    Ok(files)
}

/// The names of the files in the directory `dir`, sorted; none when it does not exist.
fn file_names(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut names: Vec<String> =
        entries.map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

/// `{sha256}.pdf` of the statement file `base64`: the name of its sidecar file.
fn sidecar_name(base64: &str) -> String {
    use base64::Engine as _;
    let pdf = base64::engine::general_purpose::STANDARD.decode(base64).unwrap();
    assert!(pdf.starts_with(b"%PDF-"));
    let hash = ring::digest::digest(&ring::digest::SHA256, &pdf);
    let hex = hash.as_ref().iter().fold(String::new(), |mut hex, byte| {
        hex.push_str(&format!("{byte:02x}"));
        hex
    });
    format!("{hex}.pdf")
}

#[tokio::test]
async fn statement_pdfs_go_to_sidecar_files_named_by_their_hash_and_replay_byte_for_byte() {
    let sandbox = Sandbox::start(SandboxConfig::default()).unwrap();
    let config = || options(&sandbox.url(), sandbox.customer_id(), sandbox.api_key(), sandbox.secret_key(), 0.01);
    let path = cassette_path("statements");
    let dir = bankfeed::cassette::sidecar_dir(&path);
    let _ = std::fs::remove_dir_all(&dir);
    // As a recording of the public test instance: the statements are kept as they came.
    let public = CassetteOptions { origin: Some(bankfeed::cassette::Origin::TestInstance), ..Default::default() };
    let (client, recording) = on_cassette(config(), &path, RecordMode::Once, public.clone());
    let live = statement_files(&client).await.unwrap();
    assert!(live.len() >= 12, "{}", live.len());
    assert!(recording.save().unwrap());

    // One file per statement, named by its hash; the YAML holds references, not the PDFs.
    let mut expected: Vec<String> = live.iter().map(|file| sidecar_name(file)).collect();
    expected.sort();
    expected.dedup();
    assert_eq!(file_names(&dir), expected);
    let text = std::fs::read_to_string(&path).unwrap();
    for file in &live {
        assert!(!text.contains(file.as_str()), "a statement's base64 text is in the YAML");
        assert!(text.contains(&format!("$sidecar: {}", sidecar_name(file))), "{text}");
    }
    let inline: usize = live.iter().map(String::len).sum();
    assert!(inline > 2 * text.len(), "{} bytes of YAML for {inline} of PDFs", text.len());
    assert_eq!(bankfeed::cassette::check_cassette(&path), Vec::<String>::new());

    // Replayed with the sandbox gone: the same statements, byte for byte.
    let config = config();
    sandbox.stop();
    let (client, replay) = on_cassette(config.clone(), &path, RecordMode::None, public.clone());
    assert_eq!(statement_files(&client).await.unwrap(), live);
    assert_eq!(replay.play_count().0, replay.play_count().1);

    // A sidecar file changed, or gone, and the cassette is refused, naming it.
    let changed = dir.join(&expected[0]);
    let original = std::fs::read(&changed).unwrap();
    std::fs::write(&changed, [original.as_slice(), b"%% appended"].concat()).unwrap();
    let refused = CassetteSession::open(&path, RecordMode::None, &config, &public).unwrap_err();
    let message = refused.to_string();
    assert!(matches!(refused, Error::Cassette { .. }), "{refused:?}");
    assert!(message.contains(&path.display().to_string()) && message.contains(&expected[0]), "{message}");
    assert!(message.contains("SHA-256"), "{message}");
    let findings = bankfeed::cassette::check_cassette(&path);
    assert!(!findings.is_empty() && findings.iter().all(|finding| finding.contains(&expected[0])), "{findings:?}");
    std::fs::remove_file(&changed).unwrap();
    let missing = CassetteSession::open(&path, RecordMode::None, &config, &public).unwrap_err().to_string();
    assert!(missing.contains(&expected[0]) && missing.contains("could not be read"), "{missing}");
    std::fs::write(&changed, original).unwrap();

    // Recorded anew as a live recording: every statement is the placeholder PDF, one file for
    // all of them, and the files of the first recording are removed.
    let sandbox = Sandbox::start(SandboxConfig::default()).unwrap();
    let config = options(&sandbox.url(), sandbox.customer_id(), sandbox.api_key(), sandbox.secret_key(), 0.01);
    let (client, rewrite) = on_cassette(config, &path, RecordMode::Rewrite, CassetteOptions::default());
    statement_files(&client).await.unwrap();
    assert!(rewrite.save().unwrap());
    let placeholder = file_names(&dir);
    assert_eq!(placeholder.len(), 1, "{placeholder:?}");
    assert!(!expected.contains(&placeholder[0]), "the first recording's files are gone");
    assert_eq!(std::fs::metadata(dir.join(&placeholder[0])).unwrap().len(), 308, "the placeholder PDF");
    let config = options(&sandbox.url(), sandbox.customer_id(), sandbox.api_key(), sandbox.secret_key(), 0.01);
    let (client, _) = on_cassette(config, &path, RecordMode::None, CassetteOptions::default());
    let replayed = statement_files(&client).await.unwrap();
    assert!(replayed.len() >= 12 && replayed.iter().all(|file| sidecar_name(file) == placeholder[0]));
    std::fs::remove_dir_all(&dir).unwrap();
}

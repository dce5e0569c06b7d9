//! Fuzzing of every decoder of the service's answers (docs/bad-input.md): the sandbox's own
//! answers to every operation, mutated by structure and by byte, are fed to every decoder, which
//! must answer each with `Ok` or a documented error (`DecodeError`, `ProtocolError`, an
//! `ApiError` it describes), never a panic, and never take long.
//!
//! `BANKFEED_FUZZ_ITERATIONS` sets the number of inputs (8,000 by default: seconds in a debug build);
//! `BANKFEED_FUZZ_SEED` the seed. CONTRIBUTING.md has the long run. An input that fails is saved
//! under `target/fuzz-failures/` and named in the failure.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

use bankfeed::fuzzing::{self, DECODERS};
use bankfeed_sandbox::{users, Sandbox, SandboxConfig, SandboxUser};
use bankfeed_testing::{iterations, mutate, mutate_bytes, seed, Rng};
use serde_json::{json, Value};

use crate::common::INSTITUTION;

/// Operation paths under `/v3/{customerId}/`.
const AUTHORIZE: &str = "BankingServices/Authorize";
const DETAIL: &str = "BankingServices/GetAccountsDetail";
const SUMMARY: &str = "BankingServices/GetAccountsSummary";
const STATEMENTS: &str = "BankingServices/GetStatements";
const INVESTMENTS: &str = "Investments";

/// A sandbox that asks for no keys, spoken to over plain HTTP: the seeds are its answers as they
/// come, whatever the client would make of them.
struct Wire {
    sandbox: Sandbox,
    http: reqwest::Client,
}

impl Wire {
    fn start() -> Wire {
        // reqwest is built without a default crypto provider; installing twice is harmless.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let sandbox =
            Sandbox::start(SandboxConfig { auth: false, ..SandboxConfig::default() }).expect("sandbox starts");
        Wire { sandbox, http: reqwest::Client::builder().build().expect("reqwest client") }
    }

    /// Sends `body` to `operation`, a path under `/v3/{customerId}/`; the status and the JSON answer.
    async fn send(&self, method: reqwest::Method, operation: &str, body: Option<Value>) -> (u16, Value) {
        let url = format!("{}/v3/{}/{operation}", self.sandbox.url(), self.sandbox.customer_id());
        let mut request = self.http.request(method, url);
        if let Some(body) = body {
            request = request.header("content-type", "application/json").body(serde_json::to_vec(&body).expect("JSON"));
        }
        let response = request.send().await.expect("request sent");
        let status = response.status().as_u16();
        let answer = response.bytes().await.expect("body read");
        (status, serde_json::from_slice(&answer).expect("a JSON answer"))
    }

    async fn post(&self, operation: &str, body: Value) -> (u16, Value) {
        self.send(reqwest::Method::POST, operation, Some(body)).await
    }

    async fn get(&self, operation: &str) -> (u16, Value) {
        self.send(reqwest::Method::GET, operation, None).await
    }
}

/// The `SecurityResponses` that answer the 203 `reply`, from `user`'s documented answers.
fn answers_for(user: &SandboxUser, reply: &Value) -> Value {
    let mut responses = serde_json::Map::new();
    for challenge in reply["SecurityChallenges"].as_array().expect("SecurityChallenges") {
        let choices: Vec<&str> = challenge["Iterables"]
            .as_array()
            .map(|items| items.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let (key, answer) = user
            .answers
            .iter()
            .find(|(key, _)| *key == challenge["Prompt"] || choices.contains(&key.as_str()))
            .unwrap_or_else(|| panic!("{}: no documented answer for {challenge}", user.username));
        responses.insert(key.clone(), json!(answer));
    }
    Value::Object(responses)
}

/// No input may take this long through every decoder (a debug build, on a busy machine).
const SLOW: Duration = Duration::from_secs(5);

/// Arrays cut to this many items: a seed keeps every shape of its payload, and mutating it stays
/// cheap.
const KEEP_ITEMS: usize = 3;

fn shrink(value: &mut Value) {
    match value {
        Value::Array(items) => {
            items.truncate(KEEP_ITEMS);
            items.iter_mut().for_each(shrink);
        }
        Value::Object(map) => map.values_mut().for_each(shrink),
        _ => {}
    }
}

fn bytes(mut value: Value) -> Vec<u8> {
    shrink(&mut value);
    serde_json::to_vec(&value).unwrap()
}

/// The sandbox's answers to every operation: Authorize 200 and every first 203, the 202s,
/// account detail and summary, statements, investments, attributes, DeleteCard, and error
/// bodies; plus the documented shapes the sandbox does not produce (the token answer).
async fn seeds() -> Vec<(String, Vec<u8>)> {
    let api = Wire::start();
    let mut seeds = Vec::new();
    let mut add = |name: &str, value: &Value| seeds.push((name.to_owned(), bytes(value.clone())));

    for user in users() {
        let body = json!({"Institution": INSTITUTION, "Username": user.username, "Password": "Everyday",
            "MostRecentCached": false, "Save": true});
        let (status, reply) = api.post(AUTHORIZE, body).await;
        add(&format!("Authorize {status} {}", user.username), &reply);
        if status == 203 {
            let responses = answers_for(&user, &reply);
            let next = json!({"RequestId": reply["RequestId"], "SecurityResponses": responses});
            let (status, reply) = api.post(AUTHORIZE, next).await;
            add(&format!("Authorize answer {status} {}", user.username), &reply);
        }
    }
    let login = json!({"Institution": INSTITUTION, "Username": "greatday_nomfa", "Password": "Everyday",
        "MostRecentCached": false, "Save": true});
    let (_, session) = api.post(AUTHORIZE, login).await;
    let request_id = session["RequestId"].as_str().unwrap().to_owned();
    let login_id = session["Login"]["Id"].as_str().unwrap().to_owned();

    let ops: [(&str, Value); 4] = [
        (
            DETAIL,
            json!({"RequestId": request_id, "WithTransactions": true, "DaysOfTransactions": "Days365",
            "WithAccountIdentity": true, "WithDetailsAndBankingStatements": true,
            "NumberOfBankingStatements": "Months3"}),
        ),
        (SUMMARY, json!({"RequestId": request_id, "WithBalance": true, "WithAccountIdentity": true})),
        (STATEMENTS, json!({"RequestId": request_id, "NumberOfStatements": "MostRecent"})),
        (INVESTMENTS, json!({"RequestId": request_id, "LoginId": login_id, "MostRecentCached": true})),
    ];
    for (operation, body) in ops {
        loop {
            let (status, reply) = api.post(operation, body.clone()).await;
            add(&format!("{operation} {status}"), &reply);
            if status != 202 {
                break;
            }
        }
    }
    let attributes = format!("insight/login/{login_id}/attributes/{request_id}");
    for _ in 0..5 {
        let (status, reply) = api.get(&format!("{attributes}/GetIncomeAttributes")).await;
        add(&format!("GetIncomeAttributes {status}"), &reply);
        if status == 200 {
            break;
        }
    }
    let custom = json!({"MostRecentCached": true, "Attributes": {"Card": ["balance_min", "count_nsf"]},
        "Options": {"AttributesDetail": ["count_nsf"]}});
    for _ in 0..5 {
        let (status, reply) = api.post(&attributes, custom.clone()).await;
        add(&format!("Attributes {status}"), &reply);
        if status == 200 {
            break;
        }
    }
    let (status, reply) = api.post(DETAIL, json!({"RequestId": "4a0d5b8e-0000-4000-8000-000000000000"})).await;
    add(&format!("unknown session {status}"), &reply);
    let (status, reply) =
        api.send(reqwest::Method::DELETE, &format!("BankingServices/DeleteCard/{login_id}"), None).await;
    add(&format!("DeleteCard {status}"), &reply);
    add("token", &json!({"HttpStatusCode": 200, "Token": "9a1c2b3d-1111-4222-8333-444455556666"}));
    add(
        "dispatched",
        &json!({"FlinksCode": "OPERATION_DISPATCHED", "HttpStatusCode": 202, "Message": "m",
        "RequestId": request_id,
        "Links": [{"rel": "GetAccountsDetailAsync", "href": "/GetAccountsDetailAsync", "example": null}]}),
    );
    api.sandbox.stop();
    seeds
}

/// Runs every decoder on `input`; the first failure (a panic, or a result that is not a
/// documented one) is returned with the decoder's name.
fn run_all(input: &[u8]) -> Result<(), String> {
    for (name, decoder) in DECODERS {
        match catch_unwind(AssertUnwindSafe(|| decoder(input))) {
            Err(panic) => {
                let message = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_default();
                return Err(format!("{name} panicked: {message}"));
            }
            Ok(Ok(())) => {}
            Ok(Err(error)) => {
                let operations = ["Investments", "GetAccountsDetail", "GetStatements", "GetIncomeAttributes"];
                let allowed = [&operations[..], &["Authorize", "ImageSelection", "GenerateAuthorizeToken"]].concat();
                fuzzing::check(&error, &allowed).map_err(|why| format!("{name}: {why}"))?;
            }
        }
    }
    Ok(())
}

/// Saves a failing input and fails the test naming it.
fn fail(input: &[u8], seed: u64, index: u64, why: &str) -> ! {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("../fuzz-failures");
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join(format!("decoders-{seed}-{index}.bin"));
    let _ = std::fs::write(&path, input);
    let start = String::from_utf8_lossy(&input[..input.len().min(400)]).into_owned();
    panic!("input {index} of seed {seed} ({} bytes, saved to {}): {why}\n{start:?}", input.len(), path.display());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_decoder_survives_mutated_answers() {
    let seeds = seeds().await;
    assert!(seeds.len() >= 30, "{} seeds", seeds.len());
    for (name, seed) in &seeds {
        run_all(seed).unwrap_or_else(|why| panic!("the unmutated {name} fails: {why}"));
    }
    let total = iterations(8_000);
    let seed = seed();
    let started = Instant::now();
    // Decoding is synchronous and CPU-bound: off the runtime's threads.
    tokio::task::spawn_blocking(move || {
        let mut rng = Rng::new(seed);
        let mut previous: Vec<u8> = Vec::new();
        for index in 0..total {
            // Mostly a fresh mutation of a seed; now and then a mutation of the last input, to
            // reach further from the seeds.
            let input = match (rng.one_in(4), rng.pick(&seeds)) {
                (true, _) if !previous.is_empty() => mutate(&previous, &mut rng),
                (_, Some((_, seed))) => mutate(seed, &mut rng),
                _ => Vec::new(),
            };
            let start = Instant::now();
            if let Err(why) = run_all(&input) {
                fail(&input, seed, index, &why);
            }
            if start.elapsed() > SLOW {
                fail(&input, seed, index, &format!("took {:?}", start.elapsed()));
            }
            previous = input;
        }
    })
    .await
    .unwrap();
    eprintln!("{total} inputs through {} decoders in {:?} (seed {seed})", DECODERS.len(), started.elapsed());
}

#[test]
fn header_values_and_dates_never_panic() {
    let seeds: [&[u8]; 10] = [
        b"120",
        b"0.5",
        b"Wed, 21 Oct 2015 07:28:00 GMT",
        b"1e308",
        b"18446744073709551616",
        b"-1",
        b"NaN",
        b"2026-11-20T08:15:42.1234567Z",
        b"2026/11/20",
        b"2026-11-20",
    ];
    let mut rng = Rng::new(seed());
    for _ in 0..iterations(20_000) {
        let mut input = rng.pick(&seeds).unwrap().to_vec();
        for _ in 0..=rng.below(3) {
            input = mutate_bytes(input, &mut rng);
        }
        input.truncate(4096);
        let text = String::from_utf8_lossy(&input);
        fuzzing::retry_after(&text);
        fuzzing::dates(&text);
    }
}

/// The shapes the fuzzing found or that the issue named, kept as a fixed list.
#[test]
fn known_hostile_bodies_get_documented_errors() {
    let deep_array = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let deep_object = format!("{}1{}", "{\"a\":".repeat(10_000), "}".repeat(10_000));
    let unclosed = "[".repeat(100_000);
    let inputs: Vec<Vec<u8>> = vec![
        Vec::new(),
        b"\xff\xfe".to_vec(),
        br#"{"Accounts": [{"Id": "\ud800"}]}"#.to_vec(),
        br#"{"Accounts": [{"Balance": {"Current": 1e999}}]}"#.to_vec(),
        br#"{"Accounts": NaN}"#.to_vec(),
        br#"{"Accounts": [], "Accounts": {}}"#.to_vec(),
        br#"{"RequestId": "r", "SecurityChallenges": [{"Type": "ImageSelection", "Prompt": "p", "Iterables": ["%%"]}]}"#
            .to_vec(),
        br#"{"StatementsByAccount": [{"Statements": [{"Base64Bytes": "!!"}]}]}"#.to_vec(),
        br#"{"HttpStatusCode": -1e308, "Accounts": []}"#.to_vec(),
        br#"{"Card": {"AttributesDetail": {"x": 1}}}"#.to_vec(),
        // Deep inside the fields the lenient readers skip or read as a value (crates/bankfeed/src/data/de.rs):
        // serde_json bounds what is built, and skips what is ignored without recursing.
        format!(r#"{{"Accounts": [{{"Balance": {deep_array}, "Transactions": [{deep_array}]}}]}}"#).into_bytes(),
        format!(r#"{{"Accounts": [], "Login": {deep_object}, "Institution": {deep_array}}}"#).into_bytes(),
        format!(r#"{{"Card": {{"Id": "x", "balance_min": {deep_array}, "AttributesDetail": {deep_array}}}}}"#).into_bytes(),
        format!(r#"{{"RequestId": "r", "SecurityChallenges": [{{"Type": "x", "Prompt": "p", "Iterables": {deep_array}}}]}}"#)
            .into_bytes(),
        format!(r#"{{"Accounts": [{{"Id": {unclosed}"#).into_bytes(),
        deep_array.into_bytes(),
        deep_object.into_bytes(),
        unclosed.into_bytes(),
    ];
    for (index, input) in inputs.iter().enumerate() {
        if let Err(why) = run_all(input) {
            fail(input, 0, index as u64, &why);
        }
    }
}

//! What the sandbox's integration tests share: a sandbox with a plain HTTP client that speaks JSON
//! to it, the sandbox users' documented answers, and the checks of an error answer. The client's
//! tests against the sandbox are the client crate's (`crates/bankfeed/tests/it/`).
//!
//! The modules of the test binary add wire calls of their own to [`Api`] in `impl Api` blocks.
//! Those are methods of one type across the binary, so a name can be taken once: a call two
//! modules need (such as [`Api::cached`]) lives here.

use bankfeed_sandbox::{users, Sandbox, SandboxConfig, SandboxUser};
use serde_json::{json, Value};

/// The test institution every sandbox user belongs to.
pub(crate) const INSTITUTION: &str = "FlinksCapital";

/// Operation paths under `/v3/{customerId}/`.
pub(crate) const AUTHORIZE: &str = "BankingServices/Authorize";
pub(crate) const TOKEN: &str = "BankingServices/GenerateAuthorizeToken";
pub(crate) const DETAIL: &str = "BankingServices/GetAccountsDetail";
pub(crate) const SUMMARY: &str = "BankingServices/GetAccountsSummary";
pub(crate) const STATEMENTS: &str = "BankingServices/GetStatements";
pub(crate) const INVESTMENTS: &str = "Investments";

/// A status and a parsed JSON body.
pub(crate) type Reply = (u16, Value);

/// A sandbox and an HTTP client for it.
pub(crate) struct Api {
    pub sandbox: Sandbox,
    pub http: reqwest::Client,
    /// Whether requests carry the keys the sandbox asks for, as a keyed client sends them (a
    /// fresh token on every Authorize, the API key on everything else), unless a test gives
    /// those headers itself.
    keyed: bool,
}

impl Api {
    /// A sandbox, and a client that sends the keys it asks for (docs/sandbox.md#keys).
    pub(crate) fn with(config: SandboxConfig) -> Api {
        Api::start(config, true)
    }

    /// A sandbox, and a client that sends only the headers a test gives: for tests of the keys.
    pub(crate) fn unkeyed(config: SandboxConfig) -> Api {
        Api::start(config, false)
    }

    fn start(config: SandboxConfig, keyed: bool) -> Api {
        // reqwest is built without a default crypto provider; installing twice is harmless.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder().build().expect("reqwest client");
        Api { sandbox: Sandbox::start(config).expect("sandbox starts"), http, keyed }
    }

    /// A fresh Authorize token from the sandbox's secret key.
    pub(crate) async fn token(&self) -> String {
        let secret = self.sandbox.secret_key().expect("a sandbox that asks for a secret key");
        let response =
            self.http.post(self.url(TOKEN)).header("flinks-auth-key", secret).send().await.expect("token call sent");
        assert_eq!(response.status().as_u16(), 200, "the token call");
        let body: Value = serde_json::from_slice(&response.bytes().await.expect("token read")).expect("JSON");
        body["Token"].as_str().expect("a Token").to_owned()
    }

    /// The key headers a keyed client adds to a request to `url`, beside the test's `headers`.
    async fn keys_for(&self, method: &reqwest::Method, url: &str, headers: &[(&str, &str)]) -> Vec<(String, String)> {
        let given = |name: &str| headers.iter().any(|(header, _)| header.eq_ignore_ascii_case(name));
        let path = url.split('?').next().unwrap_or_default().to_ascii_lowercase();
        let mut keys = Vec::new();
        if !self.keyed || given("flinks-auth-key") || given("x-api-key") {
            return keys;
        }
        if path.ends_with(&TOKEN.to_ascii_lowercase()) {
            if let Some(secret) = self.sandbox.secret_key() {
                keys.push(("flinks-auth-key".to_owned(), secret.to_owned()));
            }
        } else if path.ends_with(&AUTHORIZE.to_ascii_lowercase()) && *method == reqwest::Method::POST {
            if self.sandbox.secret_key().is_some() {
                keys.push(("flinks-auth-key".to_owned(), self.token().await));
            }
        } else if let Some(key) = self.sandbox.api_key() {
            keys.push(("x-api-key".to_owned(), key.to_owned()));
        }
        keys
    }

    /// The URL of `operation`, a path under `/v3/{customerId}/`.
    pub(crate) fn url(&self, operation: &str) -> String {
        format!("{}/v3/{}/{}", self.sandbox.url(), self.sandbox.customer_id(), operation)
    }

    /// Sends `body` as it is (JSON or not) and parses the answer, which must be JSON.
    pub(crate) async fn raw(
        &self,
        method: reqwest::Method,
        operation: &str,
        headers: &[(&str, &str)],
        body: Option<Vec<u8>>,
    ) -> Reply {
        self.send_url(method, self.url(operation), headers, body).await
    }

    /// As [`Api::raw`], to any URL (another customer id, no operation at all).
    pub(crate) async fn send_url(
        &self,
        method: reqwest::Method,
        url: String,
        headers: &[(&str, &str)],
        body: Option<Vec<u8>>,
    ) -> Reply {
        let keys = self.keys_for(&method, &url, headers).await;
        let mut request = self.http.request(method, url);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        for (name, value) in keys {
            request = request.header(name, value);
        }
        if let Some(body) = body {
            request = request.header("content-type", "application/json").body(body);
        }
        let response = request.send().await.expect("request sent");
        let status = response.status().as_u16();
        let bytes = response.bytes().await.expect("body read");
        let body = serde_json::from_slice(&bytes).unwrap_or_else(|error| {
            let start = bytes.get(..bytes.len().min(500)).unwrap_or_default();
            panic!("status {status}: body is not JSON ({error}): {:?}", String::from_utf8_lossy(start))
        });
        (status, body)
    }

    pub(crate) async fn send_with(
        &self,
        method: reqwest::Method,
        operation: &str,
        headers: &[(&str, &str)],
        body: Option<Value>,
    ) -> Reply {
        let bytes = body.map(|body| serde_json::to_vec(&body).expect("JSON"));
        self.raw(method, operation, headers, bytes).await
    }

    pub(crate) async fn send(&self, method: reqwest::Method, operation: &str, body: Option<Value>) -> Reply {
        self.send_with(method, operation, &[], body).await
    }

    pub(crate) async fn post_with(&self, operation: &str, headers: &[(&str, &str)], body: Value) -> Reply {
        self.send_with(reqwest::Method::POST, operation, headers, Some(body)).await
    }

    pub(crate) async fn post(&self, operation: &str, body: Value) -> Reply {
        self.send(reqwest::Method::POST, operation, Some(body)).await
    }

    pub(crate) async fn get(&self, operation: &str) -> Reply {
        self.send(reqwest::Method::GET, operation, None).await
    }

    /// A new RequestId on a saved connection: a cached Authorize.
    pub(crate) async fn cached(&self, login_id: &str) -> Reply {
        self.post(AUTHORIZE, json!({"LoginId": login_id, "MostRecentCached": true})).await
    }
}

/// The sandbox user called `username` (any case).
pub(crate) fn user(username: &str) -> SandboxUser {
    users().into_iter().find(|user| user.username.eq_ignore_ascii_case(username)).expect("a sandbox user")
}

/// The `SecurityResponses` for a 203, from the user's documented answers.
pub(crate) fn answers_for(user: &SandboxUser, reply: &Value) -> Value {
    let mut responses = serde_json::Map::new();
    for challenge in challenges(reply) {
        let choices = strings(&challenge["Iterables"]);
        let (key, answer) = user
            .answers
            .iter()
            .find(|(key, _)| *key == challenge["Prompt"] || choices.contains(key))
            .unwrap_or_else(|| panic!("{}: no documented answer for {challenge}", user.username));
        responses.insert(key.clone(), json!(answer));
    }
    Value::Object(responses)
}

pub(crate) fn challenges(reply: &Value) -> &Vec<Value> {
    reply["SecurityChallenges"].as_array().expect("SecurityChallenges")
}

pub(crate) fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|items| items.iter().map(|item| item.as_str().expect("a string").to_owned()).collect())
        .unwrap_or_default()
}

#[track_caller]
pub(crate) fn assert_error(reply: &Reply, status: u16, code: &str) {
    assert_eq!(reply.0, status, "{}", reply.1);
    assert_eq!(reply.1["HttpStatusCode"], status, "{}", reply.1);
    assert_eq!(reply.1["FlinksCode"], code, "{}", reply.1);
    assert!(!reply.1["Message"].as_str().unwrap_or_default().is_empty(), "{}", reply.1);
}

#[track_caller]
pub(crate) fn assert_message_names(reply: &Reply, text: &str) {
    let message = reply.1["Message"].as_str().unwrap_or_default();
    assert!(message.contains(text), "{message:?} should name {text:?}");
}

//! The sandbox server, driven over real HTTP the way a client sees it; a module per operation or
//! layer of the server.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use bankfeed_sandbox::{users, AuthorizeKind, Fault, FaultKind, Sandbox, SandboxConfig};
use base64::Engine as _;
use serde_json::{json, Value};

use crate::common::{answers_for, assert_error, assert_message_names, challenges, strings, user, Api, Reply};
use crate::common::{AUTHORIZE, INVESTMENTS, TOKEN};

mod authorize;
mod challenges;
mod connections;
mod investments;
mod request_shapes;
mod routes;
mod saved;
mod sessions;
mod surface;
mod tokens;

impl Api {
    fn new() -> Api {
        Api::with(SandboxConfig::default())
    }

    async fn authorize(&self, body: Value) -> Reply {
        self.post(AUTHORIZE, body).await
    }

    async fn credentials(&self, username: &str, save: bool) -> Reply {
        self.authorize(json!({
            "Institution": "FlinksCapital",
            "Username": username,
            "Password": "Everyday",
            "MostRecentCached": false,
            "Save": save,
        }))
        .await
    }

    async fn answer(&self, request_id: &str, responses: Value) -> Reply {
        self.authorize(json!({"RequestId": request_id, "SecurityResponses": responses})).await
    }

    /// Answers 203s from the user's documented answers until the 200, which it returns.
    async fn complete(&self, username: &str, mut reply: Reply) -> Value {
        let user = user(username);
        let mut rounds = 0;
        while reply.0 == 203 {
            rounds += 1;
            assert!(rounds <= 5, "{username}: too many rounds");
            let request_id = reply.1["RequestId"].as_str().unwrap().to_owned();
            reply = self.answer(&request_id, answers_for(&user, &reply.1)).await;
            if reply.0 == 200 {
                assert_eq!(reply.1["RequestId"], request_id.as_str(), "the RequestId carries on through the rounds");
            }
        }
        assert_eq!(reply.0, 200, "{username}: {}", reply.1);
        reply.1
    }

    async fn login(&self, username: &str, save: bool) -> Value {
        let reply = self.credentials(username, save).await;
        self.complete(username, reply).await
    }

    async fn investments(&self, login_id: &str, request_id: &str) -> Reply {
        self.post(INVESTMENTS, json!({"LoginId": login_id, "RequestId": request_id, "MostRecentCached": true})).await
    }

    /// Polls Investments until it stops answering 202; returns the 202 codes seen and the last reply.
    async fn poll_investments(&self, login_id: &str, request_id: &str) -> (Vec<String>, Reply) {
        let mut codes = Vec::new();
        loop {
            let reply = self.investments(login_id, request_id).await;
            if reply.0 != 202 {
                return (codes, reply);
            }
            assert_eq!(reply.1["HttpStatusCode"], 202);
            assert_eq!(reply.1["Message"], "Your operation is still processing");
            assert_eq!(reply.1["RequestId"], request_id);
            assert_eq!(reply.1["Links"], json!([]));
            codes.push(reply.1["FlinksCode"].as_str().unwrap().to_owned());
            assert!(codes.len() < 50, "pending forever");
        }
    }
}

fn prompts(reply: &Value) -> Vec<&str> {
    challenges(reply).iter().map(|challenge| challenge["Prompt"].as_str().unwrap()).collect()
}

fn request_id(reply: &Reply) -> String {
    reply.1["RequestId"].as_str().unwrap_or_else(|| panic!("no RequestId in {}", reply.1)).to_owned()
}

fn login_id(body: &Value) -> String {
    body["Login"]["Id"].as_str().unwrap().to_owned()
}

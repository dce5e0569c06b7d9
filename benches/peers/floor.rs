//! The floor of benches/sessions.py: the session flow (a cached Authorize, then Investments polled
//! through its 202s; docs/protocol.md#authorize, #investments) in plain Rust with reqwest, tokio and
//! serde_json, with every answer parsed into a `serde_json::Value`, as a Rust user would write it.
//!
//! Usage: `sessions_floor BASE_URL CUSTOMER_ID LOGIN_IDS_FILE SESSIONS CONCURRENCY [POLL_INTERVAL]`.
//! The LoginIds file holds one LoginId a line, cycled over the sessions. Prints one JSON object:
//! `{"wall": seconds, "latencies": [seconds per session], "peak_rss_kb": VmHWM}`. The harness
//! measures the process's CPU time from outside (wait4); the peak memory comes from here, as Linux
//! carries the parent's high-water mark into a child's `ru_maxrss`.

use std::error::Error;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

type BoxError = Box<dyn Error + Send + Sync>;

struct Flow {
    http: reqwest::Client,
    authorize_url: String,
    investments_url: String,
    poll_interval: Duration,
}

impl Flow {
    async fn post(&self, url: &str, body: &Value) -> Result<(u16, Value), BoxError> {
        let response = self
            .http
            .post(url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(serde_json::to_vec(body)?)
            .send()
            .await?;
        let status = response.status().as_u16();
        let bytes = response.bytes().await?;
        Ok((status, serde_json::from_slice(&bytes)?))
    }

    async fn session(&self, login_id: &str) -> Result<Value, BoxError> {
        let (status, authorized) =
            self.post(&self.authorize_url, &json!({"LoginId": login_id, "MostRecentCached": true})).await?;
        let request_id = match (status, authorized.get("RequestId").and_then(Value::as_str)) {
            (200, Some(id)) => id.to_owned(),
            _ => return Err(format!("Authorize answered {status}: {authorized}").into()),
        };
        let body = json!({"LoginId": login_id, "RequestId": request_id, "MostRecentCached": true});
        loop {
            let (status, data) = self.post(&self.investments_url, &body).await?;
            match status {
                200 => return Ok(data),
                202 => tokio::time::sleep(self.poll_interval).await,
                _ => return Err(format!("Investments answered {status}: {data}").into()),
            }
        }
    }
}

/// This process's peak resident memory in kB (`VmHWM`), or None where /proc has none.
fn peak_rss_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn arg(args: &[String], index: usize, name: &str) -> Result<String, BoxError> {
    args.get(index).cloned().ok_or_else(|| format!("missing argument {name}").into())
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let args: Vec<String> = std::env::args().collect();
    let base_url = arg(&args, 1, "BASE_URL")?;
    let customer_id = arg(&args, 2, "CUSTOMER_ID")?;
    let ids_text = std::fs::read_to_string(arg(&args, 3, "LOGIN_IDS_FILE")?)?;
    let sessions: usize = arg(&args, 4, "SESSIONS")?.parse()?;
    let concurrency: usize = arg(&args, 5, "CONCURRENCY")?.parse()?;
    let poll_interval: f64 = args.get(6).map_or(Ok(0.01), |text| text.parse())?;
    let login_ids: Vec<String> =
        ids_text.lines().map(str::trim).filter(|line| !line.is_empty()).map(str::to_owned).collect();
    if login_ids.is_empty() || concurrency == 0 {
        return Err("need at least one LoginId and a concurrency of at least 1".into());
    }

    // reqwest is built without a crypto provider in this crate (see Cargo.toml); plain http needs
    // none, but building a client does.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let flow = Arc::new(Flow {
        http: reqwest::Client::builder().build()?,
        authorize_url: format!("{base_url}/v3/{customer_id}/BankingServices/Authorize"),
        investments_url: format!("{base_url}/v3/{customer_id}/Investments"),
        poll_interval: Duration::from_secs_f64(poll_interval),
    });
    let permits = Arc::new(Semaphore::new(concurrency));
    let started = Instant::now();
    let mut tasks = JoinSet::new();
    for login_id in login_ids.iter().cycle().take(sessions) {
        let (flow, permits, login_id) = (Arc::clone(&flow), Arc::clone(&permits), login_id.clone());
        tasks.spawn(async move {
            let _permit = permits.acquire_owned().await?;
            let start = Instant::now();
            flow.session(&login_id).await?;
            Ok::<f64, BoxError>(start.elapsed().as_secs_f64())
        });
    }
    let mut latencies = Vec::with_capacity(sessions);
    while let Some(joined) = tasks.join_next().await {
        latencies.push(joined??);
    }
    let wall = started.elapsed().as_secs_f64();
    println!("{}", json!({"wall": wall, "latencies": latencies, "peak_rss_kb": peak_rss_kb()}));
    Ok(())
}

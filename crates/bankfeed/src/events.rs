//! The core's log lines (docs/logging.md#what-is-logged): their loggers, and how each line is
//! written. A line names the operation, the method and the path of a URL, never its host, query
//! or user info; a value the server chose is cut short and escaped, so that it cannot forge a
//! line of its own. The sender and the poll engine say what happened; the words are here.

use std::time::Duration;

use reqwest::Method;
use tokio::time::Instant;

use crate::data::answer::ID_CHARS;
use crate::masking::SentSecrets;
use crate::shown::{snippet, Seconds};

/// The logger of requests and retries: `bankfeed.http` in Python.
pub const HTTP_TARGET: &str = "bankfeed::http";

/// The logger of poll rounds and pending timeouts: `bankfeed.poll` in Python.
pub const POLL_TARGET: &str = "bankfeed::poll";

/// The request a line is about, and the secrets its call sent: a segment of its path may be a
/// value the server chose (a RequestId it named), shown with them masked.
#[derive(Clone, Copy)]
pub(crate) struct Sent<'a> {
    pub operation: &'a str,
    pub method: &'a Method,
    pub url: &'a str,
    pub secrets: &'a SentSecrets,
}

/// Whether a DEBUG line of `target` would be written: what it needs is worked out only then.
pub(crate) fn debug_wanted(target: &str) -> bool {
    log::log_enabled!(target: target, log::Level::Debug)
}

/// One line per attempt at DEBUG: method, path, the answer's status or why there was none,
/// duration, RequestId, attempt.
pub(crate) fn attempt(sent: Sent<'_>, answer: &str, request_id: Option<&str>, started: Instant, attempt: u32) {
    log::debug!(
        target: HTTP_TARGET,
        "{} {} {} -> {} in {:.1} ms (RequestId {}, attempt {})",
        sent.operation,
        sent.method,
        LogPath(sent.url, sent.secrets),
        answer,
        started.elapsed().as_secs_f64() * 1000.0,
        LogId(request_id),
        attempt,
    );
}

/// The DEBUG line of a retry about to wait `wait`, after the failure `after`.
pub(crate) fn retry(sent: Sent<'_>, wait: Duration, next_attempt: u32, most: u32, after: &str) {
    log::debug!(
        target: HTTP_TARGET,
        "{} retry: {} {} again in {:.1} ms (attempt {} of at most {}) after {}",
        sent.operation,
        sent.method,
        LogPath(sent.url, sent.secrets),
        wait.as_secs_f64() * 1000.0,
        next_attempt,
        most,
        after,
    );
}

/// A WARNING when a failure that could have been retried ends the call; `login`, the login the
/// call is for, shown short beside the RequestId.
pub(crate) fn given_up(
    sent: Sent<'_>,
    attempts: u32,
    why: &str,
    failure: &str,
    request_id: Option<&str>,
    login: Option<&str>,
) {
    log::warn!(
        target: HTTP_TARGET,
        "{} {} {}: retries exhausted after {} attempt{} ({}): {} (RequestId {}{})",
        sent.operation,
        sent.method,
        LogPath(sent.url, sent.secrets),
        attempts,
        if attempts == 1 { "" } else { "s" },
        why,
        failure,
        LogId(request_id),
        ShortLogin(login),
    );
}

/// The DEBUG line of a poll round: the operation still pending, and the wait before the next.
pub(crate) fn pending_round(
    sent: Sent<'_>,
    round: u32,
    code: Option<&str>,
    request_id: Option<&str>,
    wait: Duration,
    waited: Duration,
) {
    log::debug!(
        target: POLL_TARGET,
        "{} pending, round {} ({}, RequestId {}): {} {} in {:.1} ms, {:.1} ms elapsed",
        sent.operation,
        round,
        LogId(Some(code.unwrap_or("no code"))),
        LogId(request_id),
        sent.method,
        LogPath(sent.url, sent.secrets),
        wait.as_secs_f64() * 1000.0,
        waited.as_secs_f64() * 1000.0,
    );
}

/// The WARNING of an operation still pending when its time ran out, `why` saying which limit;
/// `login` as for [`given_up`].
pub(crate) fn pending_timeout(
    operation: &str,
    request_id: Option<&str>,
    login: Option<&str>,
    waited: Duration,
    why: &str,
) {
    log::warn!(
        target: POLL_TARGET,
        "{} still pending after {} (RequestId {}{}): {}",
        operation,
        Seconds(waited),
        LogId(request_id),
        ShortLogin(login),
        why,
    );
}

/// The login of a warning, as the notebook views show a LoginId: an ellipsis and its last four
/// characters (escaped), enough to find it in a list of LoginIds and the export's
/// `_failures.jsonl` (docs/logging.md#what-is-logged). Nothing when the call is no login's.
pub(crate) struct ShortLogin<'a>(pub Option<&'a str>);

impl std::fmt::Display for ShortLogin<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Some(login) = self.0 else { return Ok(()) };
        let count = login.chars().count();
        // As the views: a LoginId of four characters or fewer is shown as the ellipsis alone.
        let tail: String = if count > 4 { login.chars().skip(count - 4).collect() } else { String::new() };
        write!(f, ", login \u{2026}{}", tail.escape_debug())
    }
}

/// The path of a URL for a log line: never its query, its userinfo or its host; each segment
/// shown as an identifier the server chose, with the call's secrets masked.
pub(crate) struct LogPath<'a>(pub &'a str, pub &'a SentSecrets);

impl std::fmt::Display for LogPath<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Ok(url) = reqwest::Url::parse(self.0) else { return f.write_str("(a URL that does not parse)") };
        if self.1.is_empty() {
            return f.write_str(url.path());
        }
        let segments: Vec<String> = url.path().split('/').map(|segment| self.1.id(segment)).collect();
        f.write_str(&segments.join("/"))
    }
}

/// A value the server chose (a RequestId, a code) in a log line: cut short, with control
/// characters escaped, so that it cannot forge a line of its own; `-` when there is none.
pub(crate) struct LogId<'a>(pub Option<&'a str>);

impl std::fmt::Display for LogId<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(id) => write!(f, "{}", snippet(id, ID_CHARS).escape_debug()),
            None => f.write_str("-"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_line_names_the_path_only_and_escapes_what_the_server_chose() {
        let url = "https://user:pw@h.example:8443/v3/c/Investments?token=t0k&x=1#f";
        let none = SentSecrets::default();
        assert_eq!(LogPath(url, &none).to_string(), "/v3/c/Investments");
        assert_eq!(LogPath("not a url", &none).to_string(), "(a URL that does not parse)");
        let mut token = SentSecrets::default();
        token.add(&crate::secret::Secret::new("t0k-9f2e"));
        let polled = "https://h.example/v3/c/BankingServices/GetAccountsDetailAsync/t0k-9f2e";
        assert_eq!(LogPath(polled, &token).to_string(), "/v3/c/BankingServices/GetAccountsDetailAsync/***");
        assert_eq!(LogId(Some("r-1\r\nWARNING forged")).to_string(), "r-1\\r\\nWARNING forged");
        assert_eq!(LogId(None).to_string(), "-");
        assert_eq!(LogId(Some(&"x".repeat(500))).to_string().chars().count(), ID_CHARS + 1);
    }
}

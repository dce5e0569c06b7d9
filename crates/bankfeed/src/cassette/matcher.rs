//! Which recorded interaction answers a request (docs/cassettes.md#matching): the method, the
//! path with the customer id normalized, the query sorted, the JSON body compared as JSON (key
//! order ignored) after the same redaction as at record time, and of the headers only
//! `Content-Type`. A request that matches nothing is shown with the closest recorded one and how
//! the two differ.

use serde_json::Value;

use super::format::{RecordedRequest, StoredBody};
use crate::shown::snippet;

/// What a request is matched on.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct MatchKey {
    method: String,
    /// The path, `{customer_id}` in place of the customer's segment.
    path: String,
    query: Vec<(String, String)>,
    content_type: Option<String>,
    body: Option<StoredBody>,
}

impl MatchKey {
    pub(crate) fn of(request: &RecordedRequest) -> Self {
        let (path, query) = match reqwest::Url::parse(&request.uri) {
            Ok(url) => {
                let mut query: Vec<(String, String)> =
                    url.query_pairs().map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
                query.sort();
                (normalized_path(url.path()), query)
            }
            Err(_) => (normalized_path(&request.uri), Vec::new()),
        };
        let content_type = request.headers.get("content-type").map(|value| media_type(value));
        MatchKey { method: request.method.to_ascii_uppercase(), path, query, content_type, body: request.body.clone() }
    }

    /// The request as an error shows it: method and path (after redaction, so no secret).
    pub(crate) fn shown(&self) -> String {
        let mut shown = format!("{} {}", self.method, self.path);
        if !self.query.is_empty() {
            let pairs: Vec<String> = self.query.iter().map(|(k, v)| format!("{k}={v}")).collect();
            shown.push('?');
            shown.push_str(&pairs.join("&"));
        }
        shown
    }

    /// How `self` (the request sent) differs from `recorded`, one line per difference; empty
    /// when they match.
    pub(crate) fn differences(&self, recorded: &MatchKey) -> Vec<String> {
        let mut differences = Vec::new();
        let mut differ = |what: &str, recorded: &str, sent: &str| {
            differences.push(format!("{what}: recorded {}, sent {}", snippet(recorded, 120), snippet(sent, 120)));
        };
        if self.method != recorded.method {
            differ("method", &recorded.method, &self.method);
        }
        if self.path != recorded.path {
            differ("path", &recorded.path, &self.path);
        }
        if self.query != recorded.query {
            differ("query", &format!("{:?}", recorded.query), &format!("{:?}", self.query));
        }
        if self.content_type != recorded.content_type {
            let shown = |value: &Option<String>| value.clone().unwrap_or_else(|| "none".to_owned());
            differ("content-type", &shown(&recorded.content_type), &shown(&self.content_type));
        }
        match (&recorded.body, &self.body) {
            (Some(StoredBody::Json { json: recorded }), Some(StoredBody::Json { json: sent })) => {
                json_differences("body", recorded, sent, &mut differences);
            }
            (recorded, sent) if recorded != sent => {
                let shown = |body: &Option<StoredBody>| match body {
                    None => "no body".to_owned(),
                    Some(StoredBody::Json { json }) => json.to_string(),
                    Some(StoredBody::Text { text }) => text.clone(),
                    Some(StoredBody::Base64 { base64 }) => format!("base64 {base64}"),
                    Some(StoredBody::Sidecar { sidecar }) => format!("the sidecar file {sidecar}"),
                };
                differ("body", &shown(recorded), &shown(sent));
            }
            _ => {}
        }
        differences
    }
}

/// The differences of two JSON values under `at`: keys missing on either side, and values that
/// differ, by path. Key order does not count.
fn json_differences(at: &str, recorded: &Value, sent: &Value, out: &mut Vec<String>) {
    if recorded == sent {
        return;
    }
    match (recorded, sent) {
        (Value::Object(recorded), Value::Object(sent)) => {
            for (key, value) in recorded {
                match sent.get(key) {
                    Some(other) => json_differences(&format!("{at}.{key}"), value, other, out),
                    None => out.push(format!("{at}.{key}: only in the recorded request")),
                }
            }
            for key in sent.keys().filter(|key| !recorded.contains_key(*key)) {
                out.push(format!("{at}.{key}: only in the request sent"));
            }
        }
        _ => out.push(format!(
            "{at}: recorded {}, sent {}",
            snippet(&recorded.to_string(), 120),
            snippet(&sent.to_string(), 120)
        )),
    }
}

/// `path` with the customer's segment (`/v3/{customer_id}/...`) normalized.
fn normalized_path(path: &str) -> String {
    let mut segments: Vec<&str> = path.split('/').collect();
    if segments.get(1).is_some_and(|first| *first == "v3") {
        if let Some(customer) = segments.get_mut(2) {
            *customer = "{customer_id}";
        }
    }
    segments.join("/")
}

/// The media type of a `Content-Type` value, without parameters, in lower case.
fn media_type(value: &str) -> String {
    value.split(';').next().unwrap_or_default().trim().to_ascii_lowercase()
}

/// What the player found for a request.
#[derive(Debug)]
pub(crate) enum Found {
    /// The index of the interaction that answers it.
    Answer(usize),
    /// Every interaction that matches was played already: `played` of them.
    RunOut { played: usize },
    /// Nothing matches; the closest recorded request (its index) and how it differs.
    Unmatched { closest: Option<(usize, Vec<String>)> },
}

/// Finds the first unplayed interaction among `recorded` that matches `sent`: the 202, 202, 200
/// of a poll are played in recorded order.
pub(crate) fn find(sent: &MatchKey, recorded: &[MatchKey], played: &[bool]) -> Found {
    let mut matching = 0;
    for (at, key) in recorded.iter().enumerate() {
        if key == sent {
            if !played.get(at).copied().unwrap_or(false) {
                return Found::Answer(at);
            }
            matching += 1;
        }
    }
    if matching > 0 {
        return Found::RunOut { played: matching };
    }
    // Closest: the same method first, then the longest common start of the path (the same
    // family of operation), then the fewest differences, then the earliest.
    let closest = recorded
        .iter()
        .enumerate()
        .min_by_key(|(at, key)| {
            let shared = key.path.bytes().zip(sent.path.bytes()).take_while(|(a, b)| a == b).count();
            (key.method != sent.method, std::cmp::Reverse(shared), sent.differences(key).len(), *at)
        })
        .map(|(at, key)| (at, sent.differences(key)));
    Found::Unmatched { closest }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::*;

    fn request(method: &str, uri: &str, body: Option<Value>) -> MatchKey {
        let mut headers = BTreeMap::new();
        if body.is_some() {
            headers.insert("content-type".to_owned(), "application/json; charset=utf-8".to_owned());
        }
        MatchKey::of(&RecordedRequest {
            method: method.into(),
            uri: uri.into(),
            headers,
            body: body.map(|json| StoredBody::Json { json }),
        })
    }

    #[test]
    fn the_customer_the_query_order_and_the_key_order_do_not_count() {
        let a = request(
            "POST",
            "http://127.0.0.1:1/v3/cid-a/BankingServices/Authorize?b=2&a=1",
            Some(json!({"A": 1, "B": [1, 2]})),
        );
        let b = request(
            "post",
            "http://127.0.0.1:2/v3/cid-b/BankingServices/Authorize?a=1&b=2",
            Some(json!({"B": [1, 2], "A": 1})),
        );
        assert_eq!(a, b);
        assert!(a.differences(&b).is_empty());
        let c = request("POST", "http://h/v3/c/BankingServices/Authorize?a=1&b=2", Some(json!({"B": [2, 1], "A": 1})));
        assert_eq!(c.differences(&a), ["body.B: recorded [1,2], sent [2,1]"]);
    }

    #[test]
    fn playback_is_sequential_and_a_run_out_sequence_is_not_repeated() {
        let poll = request("GET", "http://h/v3/c/BankingServices/GetAccountsDetailAsync/r", None);
        let other = request("POST", "http://h/v3/c/BankingServices/Authorize", Some(json!({"LoginId": "l"})));
        let recorded = [other.clone(), poll.clone(), poll.clone()];
        let mut played = [false; 3];
        for expected in [1, 2] {
            match find(&poll, &recorded, &played) {
                Found::Answer(at) => {
                    assert_eq!(at, expected);
                    played[at] = true;
                }
                found => panic!("{found:?}"),
            }
        }
        assert!(matches!(find(&poll, &recorded, &played), Found::RunOut { played: 2 }));
    }

    #[test]
    fn an_unmatched_request_names_the_closest_and_what_differs() {
        let recorded = [
            request("GET", "http://h/v3/c/BankingServices/GetAccountsDetailAsync/r", None),
            request("POST", "http://h/v3/c/BankingServices/Authorize", Some(json!({"LoginId": "l-1", "Save": true}))),
        ];
        let sent =
            request("POST", "http://h/v3/c/BankingServices/Authorize", Some(json!({"LoginId": "l-2", "Most": 1})));
        match find(&sent, &recorded, &[false, false]) {
            Found::Unmatched { closest: Some((1, differences)) } => assert_eq!(
                differences,
                [
                    "body.LoginId: recorded \"l-1\", sent \"l-2\"",
                    "body.Save: only in the recorded request",
                    "body.Most: only in the request sent"
                ]
            ),
            found => panic!("{found:?}"),
        }
    }
}

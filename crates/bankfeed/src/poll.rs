//! The one place that handles 202 "still processing" answers, for every data operation.
//!
//! Dropping the future cancels the wait at once (the sleep and any request in flight), which is
//! how the Python layer stops a poll on Ctrl-C.

use reqwest::Method;
use tokio::time::Instant;

use crate::call::{Call, CALL_DEADLINE};
use crate::config::{is_safe_segment, PollPolicy, SAFE_SEGMENT};
use crate::data::answer::{Pending, Reply};
use crate::data::json::body_snippet;
use crate::error::Error;
use crate::events;
use crate::http::{ApiRequest, Http};

/// Sends `request` until it answers with data, repeating it every poll interval while it answers
/// 202, or GETting the `...Async/{requestId}` link when a 202 names one. A "session still loading"
/// error is waited out the same way, inside the same deadline. `request_id` names the session in
/// a `PendingTimeout` when the 202 bodies do not.
///
/// The first request is bounded by the client's `timeout`; every later one is cut at the poll
/// deadline (`poll_timeout` after the first was sent), so a server that stops answering cannot
/// hold a pending operation a whole `timeout` past it (docs/protocol.md#polling).
pub(crate) async fn poll(
    http: &Http,
    pollable: Pollable<'_>,
    call: &Call,
    policy: &PollPolicy,
    request_id: Option<&str>,
) -> Result<Vec<u8>, Error> {
    let result = poll_until_done(http, pollable, call, policy, request_id).await;
    call.settled();
    result
}

/// A request that may answer 202, and where its operation is polled when a 202 names no
/// endpoint it can follow.
#[derive(Clone, Copy)]
pub(crate) struct Pollable<'a> {
    pub request: &'a ApiRequest,
    /// The operation's own `...Async` endpoint (`GetAccountsDetailAsync`, from
    /// [`crate::protocol::WireOp::async_rel`]), GET beside the operation with the RequestId. None
    /// for an operation that is repeated as it is (the interface's rule 7.1). Production's 202s
    /// name their link as a literal `{Endpoint}Async` template, so for the banking operations this,
    /// not the link, is the usual way (docs/protocol.md#polling).
    pub async_rel: Option<&'static str>,
}

async fn poll_until_done(
    http: &Http,
    pollable: Pollable<'_>,
    call: &Call,
    policy: &PollPolicy,
    request_id: Option<&str>,
) -> Result<Vec<u8>, Error> {
    let request = pollable.request;
    let started = Instant::now();
    let poll_deadline = started.checked_add(policy.timeout);
    let mut current = request.clone();
    let mut last_request_id = request_id.map(str::to_owned);
    // The results processed so far that the last 202 carrying any gave, kept for the timeout.
    let mut partial: Option<serde_json::Value> = None;
    let pending_timeout = |last_request_id: Option<String>, partial: Option<serde_json::Value>| {
        let waited = started.elapsed();
        // The poll may be cut at the call's deadline a moment before the deadline itself ends it.
        let call_ended =
            call.deadline().is_some_and(|call| call <= Instant::now() && poll_deadline.is_none_or(|poll| call < poll));
        let why = if call_ended { CALL_DEADLINE } else { "poll_timeout reached" };
        events::pending_timeout(request.operation, last_request_id.as_deref(), call.login(), waited, why);
        Error::PendingTimeout {
            operation: request.operation.to_owned(),
            request_id: last_request_id,
            waited,
            partial: partial.map(Box::new),
        }
    };
    let mut first = true;
    let mut round: u32 = 0;
    loop {
        // The call's own deadline, when sooner, ends it the same way: the operation is pending.
        let cut = match (poll_deadline, call.deadline()) {
            (Some(poll), Some(call)) => Some(poll.min(call)),
            (poll, call) => poll.or(call),
        };
        let reply = match cut.filter(|_| !first) {
            Some(at) => match tokio::time::timeout_at(at, http.send_until(&current, Some(at), call)).await {
                Ok(reply) => reply,
                Err(_) => return Err(pending_timeout(last_request_id, partial)),
            },
            // The first request is not cut, but its retries stop at the deadline with the server's answer.
            None => http.send_until(&current, cut, call).await,
        };
        first = false;
        round = round.saturating_add(1);
        let code = match reply {
            Ok(Reply::Data { bytes, .. }) => return Ok(bytes),
            Ok(Reply::Pending(pending)) => {
                if let Some(id) = &pending.request_id {
                    // It goes into the Async URL, which carries the api key.
                    if !is_safe_segment(id) {
                        return Err(unsafe_segment(request.operation, "RequestId", &pending, last_request_id));
                    }
                    last_request_id = Some(id.clone());
                }
                if let Some(next) = async_request(pollable, &pending, last_request_id.as_deref())? {
                    current = next;
                }
                if let Some(results) = partial_results(&pending.body) {
                    partial = Some(results);
                }
                pending.code
            }
            Ok(reply @ Reply::Challenge(_)) => {
                return Err(
                    reply.unexpected(request.operation, "a data operation expects data, not a security challenge")
                )
            }
            Err(Error::Api(api)) if api.is_session_loading() => api.code,
            Err(error) => return Err(error.resumable_at(last_request_id.as_deref())),
        };
        call.pending(request.operation, last_request_id.as_deref(), started, partial.as_ref());
        let waited = started.elapsed();
        if waited >= policy.timeout {
            return Err(pending_timeout(last_request_id, partial));
        }
        let wait = policy.interval.min(policy.timeout.saturating_sub(waited));
        if events::debug_wanted(events::POLL_TARGET) {
            // The code and the RequestId are the server's: shown with the call's secrets masked.
            let secrets = call.secrets();
            let sent = events::Sent { operation: request.operation, ..current.sent(&secrets) };
            let code = code.as_deref().map(|code| secrets.code(code));
            let request_id = last_request_id.as_deref().map(|id| secrets.id(id));
            events::pending_round(sent, round, code.as_deref(), request_id.as_deref(), wait, waited);
        }
        http.pause(wait, call).await;
    }
}

/// The fields of a 202 body past its envelope (`FlinksCode`, `Links`, `HttpStatusCode`,
/// `Message`, `RequestId`, in any case): the results processed so far, which the service sends
/// with `OPERATION_PENDING` and `OPERATION_DISPATCHED` (docs/protocol.md#polling). None when
/// the body carries none, or is no JSON object.
fn partial_results(body: &[u8]) -> Option<serde_json::Value> {
    const ENVELOPE: [&str; 6] = ["FlinksCode", "ServiceCode", "Links", "HttpStatusCode", "Message", "RequestId"];
    let serde_json::Value::Object(mut fields) = serde_json::from_slice(body).ok()? else { return None };
    fields.retain(|key, _| !ENVELOPE.iter().any(|envelope| envelope.eq_ignore_ascii_case(key)));
    (!fields.is_empty()).then_some(serde_json::Value::Object(fields))
}

/// The GET of `{dir of the request's URL}/{endpoint}/{requestId}`: the Async endpoints sit beside
/// the operation they poll (`.../BankingServices/GetAccountsDetailAsync/{requestId}`). The
/// endpoint is the one the 202's link names, or else the operation's own; None (repeat the
/// request) for an operation without one, or while no RequestId is known. A link's href and the
/// RequestId come from the server and go into a URL that carries the api key: each must be one
/// safe segment.
fn async_request(
    pollable: Pollable<'_>,
    pending: &Pending,
    request_id: Option<&str>,
) -> Result<Option<ApiRequest>, Error> {
    let original = pollable.request;
    let Some(request_id) = request_id else { return Ok(None) };
    let endpoint = match pending.async_href.as_deref() {
        Some(href) => {
            let href = href.trim_matches('/');
            if !is_safe_segment(href) {
                return Err(unsafe_segment(
                    original.operation,
                    "Async link's href",
                    pending,
                    Some(request_id.to_owned()),
                ));
            }
            href
        }
        None => match pollable.async_rel {
            Some(rel) => rel,
            None => return Ok(None),
        },
    };
    if !is_safe_segment(request_id) {
        return Err(unsafe_segment(original.operation, "RequestId", pending, None));
    }
    let dir = original.url.rsplit_once('/').map_or(original.url.as_str(), |(dir, _)| dir);
    let mut request = ApiRequest::new(original.operation, Method::GET, format!("{dir}/{endpoint}/{request_id}"));
    request.headers.clone_from(&original.headers);
    Ok(Some(request))
}

/// A 202 naming a path segment that could move the poll, and its api key, to another path. The
/// error keeps the last RequestId that was safe, not the offending value (it may hold line
/// breaks); the snippet shows the body.
fn unsafe_segment(operation: &str, field: &str, pending: &Pending, request_id: Option<String>) -> Error {
    Error::Protocol {
        operation: operation.to_owned(),
        status: 202,
        message: format!("the 202's {field} is not {SAFE_SEGMENT}, so it cannot be polled"),
        request_id,
        snippet: body_snippet(&pending.body),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// A call without a deadline that no close ends: the poll engine alone is under test.
    fn free() -> Call {
        Call::new("test", None, None)
    }
    use crate::config::ClientConfig;
    use crate::http::stub;

    fn pending(request_id: Option<&str>, href: Option<&str>) -> Pending {
        Pending {
            code: None,
            request_id: request_id.map(str::to_owned),
            async_href: href.map(str::to_owned),
            body: br#"{"FlinksCode": "OPERATION_PENDING"}"#.to_vec(),
        }
    }

    fn detail() -> ApiRequest {
        ApiRequest::new("AccountsDetail", Method::POST, "http://h/v3/c/BankingServices/GetAccountsDetail".into())
    }

    /// GetAccountsDetail, polled on its own `...Async` endpoint when a 202 names none usable.
    fn detail_pollable(request: &ApiRequest) -> Pollable<'_> {
        Pollable { request, async_rel: Some("GetAccountsDetailAsync") }
    }

    #[test]
    fn async_links_sit_beside_the_operation() {
        let request = detail();
        let next =
            async_request(detail_pollable(&request), &pending(Some("r"), Some("/GetStatementsAsync")), Some("r"))
                .unwrap()
                .unwrap();
        assert_eq!(next.method, Method::GET);
        // The link the 202 names is followed, even when it is not the operation's own.
        assert_eq!(next.url, "http://h/v3/c/BankingServices/GetStatementsAsync/r");
        assert!(next.body.is_none());
    }

    #[test]
    fn without_a_usable_link_the_operation_is_polled_its_own_way() {
        // A 202 without a link, or with production's template (read as none: data/answer.rs).
        let request = detail();
        let next = async_request(detail_pollable(&request), &pending(Some("r"), None), Some("r")).unwrap().unwrap();
        assert_eq!(
            (next.method, next.url.as_str()),
            (Method::GET, "http://h/v3/c/BankingServices/GetAccountsDetailAsync/r")
        );
        // No RequestId known yet: nothing to put in the path, so the request is repeated.
        assert!(async_request(detail_pollable(&request), &pending(None, None), None).unwrap().is_none());
        // An operation without an Async endpoint is repeated as it is (the interface's rule 7.1).
        let original = ApiRequest::new("Investments", Method::POST, "http://h/v3/c/Investments".into());
        let investments = Pollable { request: &original, async_rel: None };
        assert!(async_request(investments, &pending(Some("r"), None), Some("r")).unwrap().is_none());
    }

    const HOSTILE: [&str; 8] = ["..", "%2e%2e", "a\\b", "a\r\nb", "a/b", "../../Authorize", "https://evil", ""];

    #[test]
    fn a_hostile_href_or_request_id_never_reaches_a_url() {
        for bad in HOSTILE {
            let href = pending(Some("r"), Some(bad));
            // An href of "/" or "" trims to nothing: not a segment either.
            let request = detail();
            match async_request(detail_pollable(&request), &href, Some("r")) {
                Err(Error::Protocol { status: 202, message, request_id, .. }) => {
                    assert!(message.contains("href"), "{message}");
                    assert_eq!(request_id.as_deref(), Some("r"));
                }
                other => panic!("{bad:?}: {other:?}"),
            }
            let id = pending(Some(bad), Some("/GetAccountsDetailAsync"));
            match async_request(detail_pollable(&request), &id, Some(bad)) {
                Err(Error::Protocol { status: 202, message, request_id: None, .. }) => {
                    assert!(message.contains("RequestId"), "{message}");
                }
                other => panic!("{bad:?}: {other:?}"),
            }
        }
    }

    fn http(base: &str) -> (Http, ApiRequest) {
        let mut config = ClientConfig::new(base, "c").unwrap();
        config.retry.max_retries = 0;
        config.timeout = Duration::from_secs(30);
        let request = ApiRequest::new(
            "GetAccountsDetail",
            Method::POST,
            format!("{base}/v3/c/BankingServices/GetAccountsDetail"),
        );
        (Http::new(&config).unwrap(), request)
    }

    fn policy(timeout_ms: u64) -> PollPolicy {
        PollPolicy { interval: Duration::from_millis(10), timeout: Duration::from_millis(timeout_ms) }
    }

    #[tokio::test]
    async fn a_202_with_a_hostile_request_id_is_a_protocol_error_and_is_not_polled() {
        for bad in [r"..", r"%2e%2e", r"a\\b", r"a\r\nb", r"a/b"] {
            let body = format!(
                r#"{{"FlinksCode": "OPERATION_PENDING", "RequestId": "{bad}",
                    "Links": [{{"rel": "GetAccountsDetailAsync", "href": "/GetAccountsDetailAsync"}}]}}"#
            );
            let base = stub::serve(vec![(202, Box::leak(body.into_boxed_str()))]);
            let (http, request) = http(&base);
            match poll(&http, detail_pollable(&request), &free(), &policy(5000), Some("session-id")).await {
                Err(Error::Protocol { operation, status, message, request_id, snippet }) => {
                    assert_eq!((operation.as_str(), status), ("GetAccountsDetail", 202));
                    assert!(message.contains("RequestId"), "{message}");
                    assert_eq!(request_id.as_deref(), Some("session-id"));
                    assert!(snippet.contains("OPERATION_PENDING"), "{snippet}");
                }
                other => panic!("{bad}: {other:?}"),
            }
        }
    }

    /// A 202 as production sends it: the link a literal template, recorded from a staging
    /// instance (docs/protocol.md#polling).
    const TEMPLATE_202: &str = r#"{"FlinksCode": "OPERATION_PENDING",
        "Links": [{"rel": "{Endpoint}Async", "href": "/{Endpoint}Async", "example": "/{Endpoint}Async/{requestId}"}],
        "HttpStatusCode": 202, "Message": "Your operation is still processing", "RequestId": "r-1"}"#;

    #[tokio::test]
    async fn a_template_202_is_polled_on_the_operations_own_async_endpoint() {
        use crate::http::stub::{serve_answers, Answer};
        let stub = serve_answers(vec![
            Answer::new(202, TEMPLATE_202),
            Answer::new(202, TEMPLATE_202),
            Answer::new(200, r#"{"HttpStatusCode": 200, "Accounts": []}"#),
        ]);
        let (client, request) = http(&stub.url);
        let bytes = poll(&client, detail_pollable(&request), &free(), &policy(5000), Some("r-0")).await.unwrap();
        assert!(String::from_utf8_lossy(&bytes).contains("Accounts"));
        let lines: Vec<String> =
            stub.requests().iter().map(|r| r.lines().next().unwrap_or_default().to_owned()).collect();
        assert_eq!(
            lines,
            [
                "POST /v3/c/BankingServices/GetAccountsDetail HTTP/1.1",
                "GET /v3/c/BankingServices/GetAccountsDetailAsync/r-1 HTTP/1.1",
                "GET /v3/c/BankingServices/GetAccountsDetailAsync/r-1 HTTP/1.1",
            ]
        );
        // An operation without an Async endpoint repeats its request: no brace reaches a path.
        let stub = serve_answers(vec![Answer::new(202, TEMPLATE_202), Answer::new(200, "{}")]);
        let (client, request) = http(&stub.url);
        let investments = Pollable { request: &request, async_rel: None };
        poll(&client, investments, &free(), &policy(5000), Some("r-0")).await.unwrap();
        let requests = stub.requests();
        assert_eq!(requests.len(), 2);
        assert!(
            requests.iter().all(|r| r.starts_with("POST /v3/c/BankingServices/GetAccountsDetail HTTP")),
            "{requests:?}"
        );
    }

    #[tokio::test]
    async fn a_failure_after_a_202_keeps_the_pending_request_id() {
        use crate::http::stub::{serve_answers, Answer};
        let pending = r#"{"FlinksCode": "OPERATION_PENDING", "RequestId": "r-1"}"#;
        // The network gone between two polls, a proxy's page instead of a 202, and an error
        // envelope that names no RequestId: each keeps the one the operation is pending under.
        let failures =
            [Answer::dropped(), Answer::new(202, "<html>proxy</html>"), Answer::new(502, "<html>bad</html>")];
        for failure in failures {
            let stub = serve_answers(vec![Answer::new(202, pending), failure.clone()]);
            let (http, request) = http(&stub.url);
            let error = poll(&http, detail_pollable(&request), &free(), &policy(5000), None).await.unwrap_err();
            assert_eq!(error.request_id(), Some("r-1"), "{failure:?}: {error:?}");
            if let Error::Transport { .. } | Error::Decode { .. } = error {
                let message = error.to_string();
                assert!(message.contains("its RequestId r-1 stays open"), "{message}");
                assert!(message.contains(r#"Target::login(login_id, Some("r-1"))"#), "{message}");
            }
        }
        // No RequestId known (none given, none named by a 202): nothing to resume.
        let stub = serve_answers(vec![Answer::dropped()]);
        let (http, request) = http(&stub.url);
        let error = poll(&http, detail_pollable(&request), &free(), &policy(5000), None).await.unwrap_err();
        assert!(matches!(error, Error::Transport { resumable: None, .. }), "{error:?}");
        assert!(!error.to_string().contains("stays open"), "{error}");
    }

    #[tokio::test]
    async fn a_poll_request_is_cut_at_the_poll_deadline() {
        // A 202, then a server that takes the next request and never answers.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            let mut held = Vec::new();
            for (index, socket) in listener.incoming().enumerate() {
                let mut socket = socket.unwrap();
                if index == 0 {
                    use std::io::{Read, Write};
                    let mut buffer = [0u8; 4096];
                    let _ = socket.read(&mut buffer);
                    let body = r#"{"FlinksCode": "OPERATION_PENDING", "RequestId": "r-1"}"#;
                    let answer = format!(
                        "HTTP/1.1 202 Accepted\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
                         connection: close\r\n\r\n{body}",
                        body.len()
                    );
                    socket.write_all(answer.as_bytes()).unwrap();
                } else {
                    held.push(socket);
                }
            }
        });
        let (http, request) = http(&base);
        let started = std::time::Instant::now();
        match poll(&http, detail_pollable(&request), &free(), &policy(300), None).await {
            Err(Error::PendingTimeout { request_id, waited, .. }) => {
                assert_eq!(request_id.as_deref(), Some("r-1"));
                assert!(waited >= Duration::from_millis(300), "{waited:?}");
            }
            other => panic!("{other:?}"),
        }
        // The request timeout is 30 s: only the poll deadline can have ended the call this soon.
        assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
    }
}

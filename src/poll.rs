//! The one place that handles 202 "still processing" answers, for every data operation.
//!
//! Dropping the future cancels the wait at once (the sleep and any request in flight), which is
//! how the Python layer stops a poll on Ctrl-C.

use std::time::Instant;

use reqwest::Method;

use crate::config::PollPolicy;
use crate::error::Error;
use crate::http::{ApiRequest, Http, Pending, Reply};

/// Sends `request` until it answers with data, repeating it every poll interval while it answers
/// 202, or GETting the `...Async/{requestId}` link when a 202 names one. A "session still loading"
/// error is waited out the same way, inside the same deadline. `request_id` names the session in
/// a `PendingTimeout` when the 202 bodies do not.
pub(crate) async fn poll(
    http: &Http,
    request: &ApiRequest,
    policy: &PollPolicy,
    request_id: Option<&str>,
) -> Result<Vec<u8>, Error> {
    let started = Instant::now();
    let mut current = request.clone();
    let mut last_request_id = request_id.map(str::to_owned);
    loop {
        match http.send(&current).await {
            Ok(Reply::Data { bytes, .. }) => return Ok(bytes),
            Ok(Reply::Pending(pending)) => {
                if let Some(id) = &pending.request_id {
                    last_request_id = Some(id.clone());
                }
                if let Some(next) = async_request(request, &pending, last_request_id.as_deref()) {
                    current = next;
                }
            }
            Ok(reply @ Reply::Challenge(_)) => {
                return Err(
                    reply.unexpected(request.operation, "a data operation expects data, not a security challenge")
                )
            }
            Err(Error::Api(api)) if api.is_session_loading() => {}
            Err(error) => return Err(error),
        }
        let waited = started.elapsed();
        if waited >= policy.timeout {
            return Err(Error::PendingTimeout {
                operation: request.operation.to_owned(),
                request_id: last_request_id,
                waited,
            });
        }
        tokio::time::sleep(policy.interval.min(policy.timeout.saturating_sub(waited))).await;
    }
}

/// The GET of `{dir of the request's URL}/{href}/{requestId}`: the Async endpoints sit beside the
/// operation they poll (`.../BankingServices/GetAccountsDetailAsync/{requestId}`).
fn async_request(original: &ApiRequest, pending: &Pending, request_id: Option<&str>) -> Option<ApiRequest> {
    let href = pending.async_href.as_deref()?.trim_matches('/');
    let request_id = request_id?;
    let dir = original.url.rsplit_once('/').map_or(original.url.as_str(), |(dir, _)| dir);
    let mut request = ApiRequest::new(original.operation, Method::GET, format!("{dir}/{href}/{request_id}"));
    request.headers = original.headers.clone();
    Some(request)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn async_links_sit_beside_the_operation() {
        let original =
            ApiRequest::new("AccountsDetail", Method::POST, "http://h/v3/c/BankingServices/GetAccountsDetail".into());
        let pending = Pending {
            code: None,
            request_id: Some("r".into()),
            async_href: Some("/GetAccountsDetailAsync".into()),
            body: Vec::new(),
        };
        let next = async_request(&original, &pending, Some("r")).unwrap();
        assert_eq!(next.method, Method::GET);
        assert_eq!(next.url, "http://h/v3/c/BankingServices/GetAccountsDetailAsync/r");
        assert!(next.body.is_none());
    }

    #[test]
    fn without_a_link_the_same_request_is_repeated() {
        let original = ApiRequest::new("Investments", Method::POST, "http://h/v3/c/Investments".into());
        let pending = Pending { code: None, request_id: Some("r".into()), async_href: None, body: Vec::new() };
        assert!(async_request(&original, &pending, Some("r")).is_none());
    }
}

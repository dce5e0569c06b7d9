//! The events the widget's pages post to the page that embeds them (`window.parent`, and
//! `window.opener` when there is one), shaped as the service documents them:
//! `{"step": NAME, ...}` (docs/sandbox.md#events). The pages post them with the script of
//! `pages.rs`; this file only says what each one holds.

use serde_json::{json, Map, Value};

/// Every step name the sandbox posts, for the documentation and the tests.
pub(crate) const APP_MOUNTED: &str = "APP_MOUNTED";
pub(crate) const LOAD_CONSENT: &str = "COMPONENT_LOAD_CONSENT";
pub(crate) const ACCEPT_CONSENT: &str = "COMPONENT_ACCEPT_CONSENT";
pub(crate) const DENY_CONSENT: &str = "COMPONENT_DENY_CONSENT";
pub(crate) const LOAD_INSTITUTION_SELECTOR: &str = "COMPONENT_LOAD_INSTITUTION_SELECTOR";
pub(crate) const INSTITUTION_SELECTED: &str = "INSTITUTION_SELECTED";
pub(crate) const LOAD_CREDENTIAL: &str = "COMPONENT_LOAD_CREDENTIAL";
pub(crate) const LOAD_CREDENTIAL_RETRY: &str = "COMPONENT_LOAD_CREDENTIAL_RETRY";
pub(crate) const SUBMIT_CREDENTIAL: &str = "SUBMIT_CREDENTIAL";
pub(crate) const LOAD_MFA: &str = "COMPONENT_LOAD_MFA";
pub(crate) const LOAD_MFA_RETRY: &str = "COMPONENT_LOAD_MFA_RETRY";
pub(crate) const SUBMIT_MFA: &str = "SUBMIT_MFA";
pub(crate) const LOAD_ACCOUNT_SELECTION: &str = "COMPONENT_LOAD_ACCOUNT_SELECTION";
pub(crate) const ACCOUNT_SELECTED: &str = "ACCOUNT_SELECTED";
pub(crate) const CLOSE_SESSION: &str = "COMPONENT_CLOSE_SESSION";
pub(crate) const REDIRECT: &str = "REDIRECT";
/// An error the service reported (a wrong password, a wrong answer, a refused token): the
/// documented error events carry `flinksCode`, `requestId` and `institution`; the sandbox adds
/// this step name so every event has one (docs/protocol.md#the-hosted-widget).
pub(crate) const ERROR: &str = "ERROR";
/// The wrong password that used up `maximumRetry`: the flow ends on an error page.
pub(crate) const MAXIMUM_RETRY_REACHED: &str = "MAXIMUM_RETRY_REACHED";

/// `{"step": step}`.
pub(crate) fn step(step: &str) -> Value {
    json!({ "step": step })
}

/// `{"step": step, "institution": institution}`.
pub(crate) fn at(step: &str, institution: &str) -> Value {
    json!({ "step": step, "institution": institution })
}

/// The institution selector's load: `cached` is false, as the sandbox keeps no earlier choice.
pub(crate) fn institution_selector() -> Value {
    json!({ "step": LOAD_INSTITUTION_SELECTOR, "cached": false })
}

/// A challenge page's load: the types of the round's challenges, in order.
pub(crate) fn mfa(step: &str, institution: &str, types: &[String]) -> Value {
    json!({ "step": step, "institution": institution, "mfaTypes": types })
}

/// The account selector's load: how many accounts the login has, and how many are shown.
pub(crate) fn account_selection(institution: &str, total: usize, displayed: usize) -> Value {
    json!({
        "step": LOAD_ACCOUNT_SELECTION,
        "institution": institution,
        "totalAccounts": total,
        "displayedAccounts": displayed,
    })
}

/// An error: `step` (`ERROR`, or `MAXIMUM_RETRY_REACHED` at the end), the service's code, the
/// RequestId when there was a session, and the institution.
pub(crate) fn error(step: &str, code: &str, request_id: Option<&str>, institution: Option<&str>) -> Value {
    json!({ "step": step, "flinksCode": code, "requestId": request_id, "institution": institution })
}

/// What the redirect carries besides its URL.
pub(crate) struct Connected<'a> {
    pub login_id: &'a str,
    pub institution: &'a str,
    pub account_ids: &'a [String],
    pub tag: Option<&'a str>,
    /// A connection of the demo (`demo=true`), which the redirect says.
    pub demo: bool,
}

/// The final event: the redirect URL with its query, and the same facts as fields. `accountId`
/// is a string for one account, a list for several, absent for none; `tag` only when given.
pub(crate) fn redirect(url: &str, connected: &Connected<'_>) -> Value {
    let mut event = Map::new();
    event.insert("step".into(), REDIRECT.into());
    event.insert("url".into(), url.into());
    event.insert("loginId".into(), connected.login_id.into());
    event.insert("institution".into(), connected.institution.into());
    match connected.account_ids {
        [] => {}
        [one] => {
            event.insert("accountId".into(), one.as_str().into());
        }
        several => {
            event.insert("accountId".into(), several.iter().map(|id| Value::from(id.as_str())).collect());
        }
    }
    if let Some(tag) = connected.tag {
        event.insert("tag".into(), tag.into());
    }
    Value::Object(event)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_redirect_event_lists_several_accounts() {
        let ids = ["a".to_owned(), "b".to_owned()];
        let connected =
            Connected { login_id: "L", institution: "FlinksCapital", account_ids: &ids, tag: Some("t"), demo: false };
        let event = redirect("https://x/?loginId=L", &connected);
        assert_eq!(event["accountId"], json!(["a", "b"]));
        assert_eq!(event["tag"], "t");
        let one = Connected { account_ids: &ids[..1], tag: None, ..connected };
        let event = redirect("u", &one);
        assert_eq!(event["accountId"], "a");
        assert!(event.get("tag").is_none());
    }
}

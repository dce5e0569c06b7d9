//! The redirect URL of a finished flow: `redirectUrl` with `demo=true` (for a demo connection, as
//! the service's recorded callbacks have it), `loginId`, `institution`, one `accountId` per
//! selected account and `tag` appended to its query, in that order
//! (docs/sandbox.md#the-redirect). Without a `redirectUrl` it is the widget's own result page,
//! `/v2/Result/{institution}` with the same query, the address a mobile WebView watches for.

use super::events::Connected;

/// Where a flow without `redirectUrl` ends, followed by the institution: the widget's own page
/// (docs/sandbox.md#the-redirect).
pub(crate) const RESULT_PATH: &str = "/v2/Result/";

/// The URL the flow ends at.
pub(crate) fn url(redirect_url: Option<&str>, connected: &Connected<'_>) -> String {
    let mut pairs = Vec::new();
    if connected.demo {
        pairs.push(("demo", "true"));
    }
    pairs.extend([("loginId", connected.login_id), ("institution", connected.institution)]);
    pairs.extend(connected.account_ids.iter().map(|id| ("accountId", id.as_str())));
    if let Some(tag) = connected.tag {
        pairs.push(("tag", tag));
    }
    let query = pairs.iter().map(|(key, value)| format!("{key}={}", encode(value))).collect::<Vec<_>>().join("&");
    let Some(base) = redirect_url else { return format!("{RESULT_PATH}{}?{query}", encode(connected.institution)) };
    // The query goes before a fragment, after any query the URL has.
    let (base, fragment) = match base.split_once('#') {
        Some((base, fragment)) => (base, Some(fragment)),
        None => (base, None),
    };
    let joiner = if !base.contains('?') {
        "?"
    } else if base.ends_with('?') || base.ends_with('&') {
        ""
    } else {
        "&"
    };
    match fragment {
        Some(fragment) => format!("{base}{joiner}{query}#{fragment}"),
        None => format!("{base}{joiner}{query}"),
    }
}

/// Percent-encodes everything but the unreserved characters of RFC 3986.
pub(crate) fn encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn connected<'a>(account_ids: &'a [String], tag: Option<&'a str>) -> Connected<'a> {
        Connected { login_id: "L1", institution: "FlinksCapital", account_ids, tag, demo: false }
    }

    #[test]
    fn the_query_is_appended_in_order() {
        let ids = ["A".to_owned(), "B".to_owned()];
        assert_eq!(
            url(Some("https://example.com/done"), &connected(&ids, Some("my tag"))),
            "https://example.com/done?loginId=L1&institution=FlinksCapital&accountId=A&accountId=B&tag=my%20tag"
        );
    }

    #[test]
    fn an_existing_query_and_fragment_are_kept() {
        assert_eq!(
            url(Some("https://example.com/done?a=1#top"), &connected(&[], None)),
            "https://example.com/done?a=1&loginId=L1&institution=FlinksCapital#top"
        );
        assert_eq!(url(None, &connected(&[], None)), "/v2/Result/FlinksCapital?loginId=L1&institution=FlinksCapital");
    }

    #[test]
    fn a_demo_connection_says_so_first() {
        let demo = Connected { demo: true, ..connected(&[], None) };
        assert_eq!(
            url(Some("https://example.com/done"), &demo),
            "https://example.com/done?demo=true&loginId=L1&institution=FlinksCapital"
        );
        assert_eq!(url(None, &demo), "/v2/Result/FlinksCapital?demo=true&loginId=L1&institution=FlinksCapital");
    }
}

//! The widget's query parameters (docs/sandbox.md#the-hosted-widget): read once, when a flow
//! begins, and kept with it. Names are matched without regard to case; booleans are `true` or
//! `false` in any case; anything else is refused with the parameter's name, what came and the
//! rule, on an error page rather than guessed: in the flow's language when `language` itself
//! could be read, in English otherwise.

use super::texts::{self, fill};

/// Which institution list the widget shows (`productType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Product {
    Banking,
    Investment,
}

/// The parameters a flow honours; the others are accepted and ignored, as the service ignores
/// those it does not know.
#[derive(Debug, Clone)]
#[expect(clippy::struct_excessive_bools, reason = "one field per boolean parameter of the URL, each independent")]
pub(crate) struct Params {
    pub demo: bool,
    pub product: Product,
    pub redirect_url: Option<String>,
    pub inner_redirect: bool,
    pub consent: bool,
    pub customer_name: Option<String>,
    pub account_selector: bool,
    pub account_selector_multiple: bool,
    pub account_selector_currency: Option<String>,
    pub show_all_accounts: bool,
    pub tag: Option<String>,
    pub institution: Option<String>,
    pub maximum_retry: u32,
    pub authorize_token: Option<String>,
    pub french: bool,
    pub header: bool,
    pub close: bool,
    pub back: bool,
    pub institution_filter: bool,
    pub stringify: bool,
}

/// What a refused parameter says: its name, what came, and the rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BadParam {
    pub name: &'static str,
    pub message: String,
    /// The message is in French (`language=fr` was read before the refusal).
    pub french: bool,
}

/// `maximumRetry` when the URL does not say (docs/sandbox.md#the-hosted-widget).
pub(crate) const DEFAULT_MAXIMUM_RETRY: u32 = 3;

/// The most `maximumRetry` the sandbox takes: more would only make a test wait.
const MAX_MAXIMUM_RETRY: u32 = 100;

impl Params {
    /// Reads the query's pairs (already decoded). A parameter given twice counts once: the first.
    pub(crate) fn read(pairs: &[(String, String)]) -> Result<Params, BadParam> {
        let value = |name: &str| {
            pairs.iter().find(|(key, _)| key.eq_ignore_ascii_case(name)).map(|(_, value)| value.trim().to_owned())
        };
        let text = |name: &str| value(name).filter(|value| !value.is_empty());
        // Read first: the other refusals are worded in its language.
        let french = match text("language") {
            None => false,
            Some(value) if value.eq_ignore_ascii_case("en") => false,
            Some(value) if value.eq_ignore_ascii_case("fr") => true,
            Some(value) => {
                return Err(BadParam {
                    name: "language",
                    message: format!("language must be en or fr, got {value:?}"),
                    french: false,
                })
            }
        };
        let t = texts::of(french);
        let bad = |name: &'static str, template: &str, values: &[(&str, &str)]| BadParam {
            name,
            message: fill(template, values),
            french,
        };
        let flag = |name: &'static str, default: bool| match value(name) {
            None => Ok(default),
            Some(value) if value.is_empty() => Ok(default),
            Some(value) if value.eq_ignore_ascii_case("true") => Ok(true),
            Some(value) if value.eq_ignore_ascii_case("false") => Ok(false),
            Some(value) => Err(bad(name, t.bad_flag, &[("name", name), ("value", &format!("{value:?}"))])),
        };
        let product = match text("productType") {
            None => Product::Banking,
            Some(value) if value.eq_ignore_ascii_case("banking") => Product::Banking,
            Some(value) if value.eq_ignore_ascii_case("investment") => Product::Investment,
            Some(value) => return Err(bad("productType", t.bad_product_type, &[("value", &format!("{value:?}"))])),
        };
        let maximum_retry = match text("maximumRetry") {
            None => DEFAULT_MAXIMUM_RETRY,
            Some(value) => {
                value.parse::<u32>().ok().filter(|n| (1..=MAX_MAXIMUM_RETRY).contains(n)).ok_or_else(|| {
                    bad(
                        "maximumRetry",
                        t.bad_maximum_retry,
                        &[("max", &MAX_MAXIMUM_RETRY.to_string()), ("value", &format!("{value:?}"))],
                    )
                })?
            }
        };
        let redirect_url = text("redirectUrl");
        if let Some(url) = &redirect_url {
            if !is_web_url(url) {
                return Err(bad("redirectUrl", t.bad_redirect_url, &[("value", &format!("{url:?}"))]));
            }
        }
        Ok(Params {
            demo: flag("demo", false)?,
            product,
            redirect_url,
            inner_redirect: flag("innerRedirect", false)?,
            consent: flag("consentEnable", true)?,
            customer_name: text("customerName"),
            account_selector: flag("accountSelectorEnable", false)?,
            account_selector_multiple: flag("accountSelectorMultiple", false)?,
            account_selector_currency: text("accountSelectorCurrency"),
            show_all_accounts: flag("showAllAccounts", false)?,
            tag: text("tag"),
            institution: text("institution"),
            maximum_retry,
            authorize_token: text("authorizeToken"),
            french,
            header: flag("headerEnable", true)?,
            close: flag("closeEnable", false)?,
            back: flag("backEnable", true)?,
            institution_filter: flag("institutionFilterEnable", false)?,
            stringify: flag("stringify", false)?,
        })
    }
}

/// A redirect goes to a web page: `http` or `https`. Any other scheme (`javascript:` above all)
/// would run in the widget's page, so it is refused.
fn is_web_url(url: &str) -> bool {
    let lower = url.to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(query: &[(&str, &str)]) -> Result<Params, BadParam> {
        let pairs: Vec<(String, String)> = query.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        Params::read(&pairs)
    }

    #[test]
    fn defaults_are_the_documented_ones() {
        let params = read(&[]).unwrap();
        assert!(!params.demo && params.consent && !params.account_selector && !params.inner_redirect);
        assert_eq!(params.product, Product::Banking);
        assert_eq!(params.maximum_retry, DEFAULT_MAXIMUM_RETRY);
    }

    #[test]
    fn product_type_is_read_in_any_case() {
        assert_eq!(read(&[("productType", "Investment")]).unwrap().product, Product::Investment);
        assert_eq!(read(&[("producttype", "BANKING")]).unwrap().product, Product::Banking);
        assert_eq!(read(&[("productType", "crypto")]).unwrap_err().name, "productType");
    }

    #[test]
    fn bad_values_name_the_parameter() {
        let error = read(&[("demo", "yes")]).unwrap_err();
        assert_eq!(error.name, "demo");
        assert!(error.message.contains("\"yes\""), "{}", error.message);
        assert_eq!(read(&[("maximumRetry", "0")]).unwrap_err().name, "maximumRetry");
        assert_eq!(read(&[("redirectUrl", "javascript:alert(1)")]).unwrap_err().name, "redirectUrl");
    }
}

//! The hosted widget's URL (docs/connect.md#the-parameters): its options, checked and written
//! with the service's names, and the authorize token masked wherever the URL is shown.

use std::fmt;

use reqwest::Url;

use crate::call::Call;
use crate::client::{parse_token, Client};
use crate::error::Error;
use crate::protocol;
use crate::protocol::PathValues;
use crate::proxy::is_loopback;
use crate::secret::Secret;
use crate::shown::{shown, shown_url};

/// What a shown URL holds in place of the authorize token.
pub const MASK: &str = "***";

/// The widget's query parameter that carries the authorize token.
pub const TOKEN_PARAMETER: &str = "authorizeToken";

/// The widget's options, each None when left out of the URL (the widget's own default then).
#[derive(Clone, Debug, Default)]
pub struct ConnectOptions {
    pub demo: Option<bool>,
    pub product_type: Option<String>,
    pub redirect_url: Option<String>,
    pub inner_redirect: Option<bool>,
    pub language: Option<String>,
    pub consent: Option<bool>,
    pub customer_name: Option<String>,
    pub account_selector: Option<bool>,
    pub account_selector_multiple: Option<bool>,
    pub account_selector_currency: Option<String>,
    pub show_all_accounts: Option<bool>,
    pub tag: Option<String>,
    pub institution: Option<String>,
    pub maximum_retry: Option<i64>,
    pub institution_filter: Option<bool>,
    pub close_enable: Option<bool>,
    pub header_enable: Option<bool>,
    pub back_enable: Option<bool>,
    /// Parameters passed through as they are, in order: the widget's options bankfeed has no
    /// name for (docs/connect.md#other-parameters).
    pub extra: Vec<(String, String)>,
}

/// Each typed option: its name in bankfeed, its name on the wire. `extra` may use neither.
pub const PARAMETERS: [(&str, &str); 19] = [
    ("authorize_token", TOKEN_PARAMETER),
    ("demo", "demo"),
    ("product_type", "productType"),
    ("redirect_url", "redirectUrl"),
    ("inner_redirect", "innerRedirect"),
    ("language", "language"),
    ("consent", "consentEnable"),
    ("customer_name", "customerName"),
    ("account_selector", "accountSelectorEnable"),
    ("account_selector_multiple", "accountSelectorMultiple"),
    ("account_selector_currency", "accountSelectorCurrency"),
    ("show_all_accounts", "showAllAccounts"),
    ("tag", "tag"),
    ("institution", "institution"),
    ("maximum_retry", "maximumRetry"),
    ("institution_filter", "institutionFilterEnable"),
    ("close_enable", "closeEnable"),
    ("header_enable", "headerEnable"),
    ("back_enable", "backEnable"),
];

/// The widget's address for an instance name: `toolbox` is the service's shared test instance
/// (docs/connect.md#where-the-widget-is).
fn instance_base(name: &str) -> String {
    format!("https://{name}-iframe.private.fin.ag/v2/")
}

/// The widget's base: an instance name (letters, digits and `-`, as in a host name), or a whole
/// http(s) URL without query or fragment (http to a loopback host only: the token travels in it).
pub fn widget_base(instance: &str) -> Result<Url, Error> {
    let name_rule = "must be an instance name such as \"toolbox\" (1 to 63 ASCII letters, digits and '-') \
                     or an http(s) URL of the widget such as https://toolbox-iframe.private.fin.ag/v2/";
    if !instance.contains(':') {
        let ok = (1..=63).contains(&instance.len())
            && instance.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            && !instance.starts_with('-')
            && !instance.ends_with('-');
        return if ok {
            Url::parse(&instance_base(&instance.to_ascii_lowercase()))
                .map_err(|_| Error::config("instance", format!("{name_rule}, got {}", shown(instance))))
        } else {
            Err(Error::config("instance", format!("{name_rule}, got {}", shown(instance))))
        };
    }
    let refused = || Error::config("instance", format!("{name_rule}, got {}", shown_url(instance)));
    if instance.contains(['?', '#']) || instance.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(refused());
    }
    let url = Url::parse(instance).map_err(|_| refused())?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err(refused());
    }
    match url.scheme() {
        "https" => Ok(url),
        "http" if is_loopback(&url) => Ok(url),
        "http" => Err(Error::config(
            "instance",
            format!(
                "uses http:// to a host that is not loopback, got {}: the authorize token would travel in clear \
                 text; use https://",
                shown_url(instance)
            ),
        )),
        _ => Err(refused()),
    }
}

/// The widget of the service a client speaks to: `https://X-api.private.fin.ag` is served by
/// `https://X-iframe.private.fin.ag/v2/`; any other base URL (the sandbox) serves it at `/v2/`.
pub fn widget_base_of(base_url: &str) -> Result<Url, Error> {
    let base = base_url.trim_end_matches('/');
    let derived = match base.strip_prefix("https://").and_then(|host| host.strip_suffix("-api.private.fin.ag")) {
        Some(instance) if !instance.is_empty() && !instance.contains(['/', '@', ':']) => instance_base(instance),
        _ => format!("{base}/v2/"),
    };
    Url::parse(&derived).map_err(|_| Error::config("base_url", "gives no widget URL: pass instance= instead"))
}

/// A URL of the widget: the address to open or embed, shown with its token masked.
#[derive(Clone)]
pub struct ConnectUrl {
    base: Url,
    /// The parameters in the order they are written, the token left out.
    params: Vec<(String, String)>,
    token: Option<Secret>,
}

impl ConnectUrl {
    /// The whole URL, token included: only to open or embed it.
    pub fn reveal(&self) -> String {
        self.written(self.token.as_ref().map(Secret::expose))
    }

    /// The parameters in order, the token as [`MASK`].
    pub fn params(&self) -> Vec<(String, String)> {
        let mut params = self.params.clone();
        if self.token.is_some() {
            params.push((TOKEN_PARAMETER.to_owned(), MASK.to_owned()));
        }
        params
    }

    /// The widget's base URL, without query.
    pub fn base(&self) -> &str {
        self.base.as_str()
    }

    /// Whether the URL carries an authorize token.
    pub fn has_token(&self) -> bool {
        self.token.is_some()
    }

    fn written(&self, token: Option<&str>) -> String {
        let mut url = self.base.clone();
        if self.params.is_empty() && token.is_none() {
            return url.into();
        }
        {
            let mut query = url.query_pairs_mut();
            for (name, value) in &self.params {
                query.append_pair(name, value);
            }
            if let Some(token) = token {
                query.append_pair(TOKEN_PARAMETER, token);
            }
        }
        url.into()
    }
}

impl fmt::Display for ConnectUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `*` is written as it is in a query, so the mask reads as one.
        f.write_str(&self.written(self.token.as_ref().map(|_| MASK)))
    }
}

impl fmt::Debug for ConnectUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ConnectUrl({self})")
    }
}

fn boolean(value: bool) -> String {
    if value { "true" } else { "false" }.to_owned()
}

/// A text option: not empty, no control character (it would forge the widget's display).
fn text(field: &'static str, value: &str) -> Result<String, Error> {
    if value.trim().is_empty() {
        return Err(Error::config(field, "must not be empty: leave it out (None) for the widget's default"));
    }
    if value.chars().any(char::is_control) {
        return Err(Error::config(field, format!("must not hold control characters, got {}", shown(value))));
    }
    Ok(value.to_owned())
}

/// `productType` as interface-v3 spells its two values (docs/connect.md#the-parameters).
fn product_type(value: &str) -> Result<String, Error> {
    match value.trim().to_ascii_lowercase().as_str() {
        "banking" => Ok("Banking".to_owned()),
        "investment" | "investments" => Ok("investment".to_owned()),
        _ => Err(Error::config("product_type", format!("must be \"banking\" or \"investment\", got {}", shown(value)))),
    }
}

fn language(value: &str) -> Result<String, Error> {
    match value.trim().to_ascii_lowercase().as_str() {
        lang @ ("en" | "fr") => Ok(lang.to_owned()),
        _ => Err(Error::config("language", format!("must be \"en\" or \"fr\", got {}", shown(value)))),
    }
}

fn currency(value: &str) -> Result<String, Error> {
    let trimmed = value.trim();
    if trimmed.len() == 3 && trimmed.bytes().all(|b| b.is_ascii_alphabetic()) {
        Ok(trimmed.to_ascii_lowercase())
    } else {
        Err(Error::config(
            "account_selector_currency",
            format!("must be a three-letter currency code such as \"cad\" or \"usd\", got {}", shown(value)),
        ))
    }
}

/// The redirect: an absolute URL (http(s), or an app's own scheme for a deep link), which the
/// widget extends with the LoginId; a fragment would hide that query from the server.
fn redirect(value: &str) -> Result<String, Error> {
    let rule = "must be an absolute URL such as https://example.com/connected (or an app's scheme, myapp://done), \
                without a fragment";
    let refused = || Error::config("redirect_url", format!("{rule}, got {}", shown_url(value)));
    if value.contains('#') || value.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(refused());
    }
    let url = Url::parse(value).map_err(|_| refused())?;
    if url.cannot_be_a_base() || url.host_str().is_none_or(str::is_empty) {
        return Err(refused());
    }
    Ok(value.to_owned())
}

fn maximum_retry(value: i64) -> Result<String, Error> {
    if (1..=100).contains(&value) {
        Ok(value.to_string())
    } else {
        Err(Error::config("maximum_retry", format!("must be a whole number from 1 to 100, got {value}")))
    }
}

impl ConnectOptions {
    /// The parameters in the order they are written, each checked; the token is not among them.
    pub(crate) fn params(&self) -> Result<Vec<(String, String)>, Error> {
        let mut params: Vec<(&'static str, String)> = Vec::new();
        let flags = [
            ("demo", self.demo),
            ("innerRedirect", self.inner_redirect),
            ("consentEnable", self.consent),
            ("accountSelectorEnable", self.account_selector),
            ("accountSelectorMultiple", self.account_selector_multiple),
            ("showAllAccounts", self.show_all_accounts),
            ("institutionFilterEnable", self.institution_filter),
            ("closeEnable", self.close_enable),
            ("headerEnable", self.header_enable),
            ("backEnable", self.back_enable),
        ];
        if let Some(value) = &self.redirect_url {
            params.push(("redirectUrl", redirect(value)?));
        }
        if let Some(value) = &self.product_type {
            params.push(("productType", product_type(value)?));
        }
        if let Some(value) = &self.language {
            params.push(("language", language(value)?));
        }
        if let Some(value) = &self.customer_name {
            params.push(("customerName", text("customer_name", value)?));
        }
        if let Some(value) = &self.account_selector_currency {
            params.push(("accountSelectorCurrency", currency(value)?));
        }
        if let Some(value) = &self.institution {
            params.push(("institution", text("institution", value)?));
        }
        if let Some(value) = &self.tag {
            params.push(("tag", text("tag", value)?));
        }
        if let Some(value) = self.maximum_retry {
            params.push(("maximumRetry", maximum_retry(value)?));
        }
        params.extend(flags.into_iter().filter_map(|(name, value)| value.map(|value| (name, boolean(value)))));
        let mut written: Vec<(String, String)> =
            params.into_iter().map(|(name, value)| (name.to_owned(), value)).collect();
        for (name, value) in &self.extra {
            written.push((extra_name(name)?, extra_value(name, value)?));
        }
        Ok(written)
    }

    /// The widget's URL at `base`, with `token` when one is given.
    pub fn build(&self, base: Url, token: Option<Secret>) -> Result<ConnectUrl, Error> {
        if let Some(token) = &token {
            text("authorize_token", token.expose()).map_err(|_| {
                Error::config("authorize_token", "must be a non-empty token without control characters (not shown)")
            })?;
        }
        Ok(ConnectUrl { base, params: self.params()?, token })
    }
}

/// A key of `extra`: a name the widget reads, not one bankfeed writes from a typed option (in any
/// case: two spellings of one option would leave the widget to pick one).
fn extra_name(name: &str) -> Result<String, Error> {
    if name.is_empty() || name.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(Error::config(
            "extra",
            format!("keys must be parameter names without spaces, such as \"termsUrl\", got {}", shown(name)),
        ));
    }
    if let Some((option, wire)) =
        PARAMETERS.iter().find(|(option, wire)| name.eq_ignore_ascii_case(wire) || name.eq_ignore_ascii_case(option))
    {
        return Err(Error::config(
            "extra",
            format!("key {} is the widget's {wire}, which has its own argument: pass {option} instead", shown(name)),
        ));
    }
    Ok(name.to_owned())
}

fn extra_value(name: &str, value: &str) -> Result<String, Error> {
    if value.chars().any(char::is_control) {
        return Err(Error::config("extra", format!("the value of {} must not hold control characters", shown(name))));
    }
    Ok(value.to_owned())
}

impl Client {
    /// The widget's URL for this client's service ([`widget_base_of`]), with an authorize token
    /// minted just before when the client has a secret key (single use, 30 minutes:
    /// docs/connect.md#the-authorize-token).
    pub async fn connect_url(&self, call: &Call, options: &ConnectOptions) -> Result<ConnectUrl, Error> {
        let base = widget_base_of(&self.config().base_url)?;
        // Checked before a token is spent on options that would be refused.
        options.params()?;
        let token = self.authorize_token(call).await?;
        options.build(base, token)
    }

    /// A fresh authorize token (GenerateAuthorizeToken) when the client has a secret key; None
    /// without one (docs/connect.md#the-authorize-token).
    pub async fn authorize_token(&self, call: &Call) -> Result<Option<Secret>, Error> {
        call.doing(protocol::GENERATE_AUTHORIZE_TOKEN.name);
        let Some(secret) = &self.config().secret_key else { return Ok(None) };
        let customer = PathValues::new(&self.config().customer_id);
        let request =
            self.request(&protocol::GENERATE_AUTHORIZE_TOKEN, customer)?.header("flinks-auth-key", secret.clone());
        let token = parse_token(self.http()?.send(&request, call).await?)?;
        call.sent(&token);
        Ok(Some(token))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(options: &ConnectOptions, token: Option<&str>) -> ConnectUrl {
        options.build(widget_base("toolbox").unwrap(), token.map(Secret::new)).unwrap()
    }

    #[test]
    fn every_option_is_written_with_the_services_name() {
        let options = ConnectOptions {
            demo: Some(true),
            product_type: Some("INVESTMENT".into()),
            redirect_url: Some("https://example.com/done?x=1&y=2".into()),
            back_enable: Some(false),
            maximum_retry: Some(3),
            extra: vec![("termsUrl".into(), "https://example.com/terms".into())],
            ..ConnectOptions::default()
        };
        let shown = url(&options, Some("tok-secret")).reveal();
        assert_eq!(
            shown,
            "https://toolbox-iframe.private.fin.ag/v2/?redirectUrl=https%3A%2F%2Fexample.com%2Fdone%3Fx%3D1%26y%3D2\
             &productType=investment&maximumRetry=3&demo=true&backEnable=false\
             &termsUrl=https%3A%2F%2Fexample.com%2Fterms&authorizeToken=tok-secret"
        );
    }

    #[test]
    fn the_token_is_masked_when_shown() {
        let connect = url(&ConnectOptions::default(), Some("tok-secret"));
        assert_eq!(connect.to_string(), "https://toolbox-iframe.private.fin.ag/v2/?authorizeToken=***");
        assert!(!format!("{connect:?}").contains("tok-secret"));
    }

    #[test]
    fn a_typed_option_in_extra_is_refused_naming_it() {
        let options = ConnectOptions { extra: vec![("RedirectUrl".into(), "x".into())], ..ConnectOptions::default() };
        let error = options.build(widget_base("toolbox").unwrap(), None).unwrap_err().to_string();
        assert!(error.contains("redirect_url") && error.starts_with("extra "), "{error}");
    }

    #[test]
    fn widget_bases() {
        assert_eq!(
            widget_base_of("https://acme-api.private.fin.ag").unwrap().as_str(),
            "https://acme-iframe.private.fin.ag/v2/"
        );
        assert_eq!(widget_base_of("http://127.0.0.1:8080/").unwrap().as_str(), "http://127.0.0.1:8080/v2/");
        assert!(widget_base("http://example.com/v2/").is_err());
        assert!(widget_base("bad name").is_err());
        assert!(widget_base("http://127.0.0.1:9/v2/").is_ok());
    }
}

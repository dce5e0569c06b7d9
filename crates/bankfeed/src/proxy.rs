//! Which proxy, if any, a request goes through (docs/protocol.md#proxies). The decision is made
//! here, once per URL, from the `proxy` option and the proxy variables read when the client was
//! made; the HTTP layer hands reqwest nothing else, and names the proxy in its transport errors.
//!
//! Loopback hosts never go through a proxy: a sandbox's passwords would otherwise travel in clear
//! text to whatever `HTTP_PROXY` names.

use std::env::VarError;
use std::fmt;
use std::net::IpAddr;

use crate::error::Error;
use crate::secret::Secret;
use crate::shown::shown_url;

/// The variables read for an `https://` host, the first set one winning: the specific ones, upper
/// case first, then `ALL_PROXY`.
const HTTPS_VARIABLES: [&str; 4] = ["HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"];
/// The same for an `http://` host.
const HTTP_VARIABLES: [&str; 4] = ["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"];
/// The hosts that bypass the proxy of a variable.
const NO_PROXY_VARIABLES: [&str; 2] = ["NO_PROXY", "no_proxy"];
/// Set by a web server for a CGI script, which also turns a request's `Proxy:` header into the
/// variable `HTTP_PROXY` ("httpoxy"): there, only the lower-case `http_proxy` is read.
const CGI_VARIABLE: &str = "REQUEST_METHOD";

/// The value of `proxy=` that reads the proxy variables (the default).
pub const ENVIRONMENT: &str = "environment";

/// Whether the URL's host is this machine: 127.0.0.0/8, ::1 or `localhost`.
pub(crate) fn is_loopback(url: &reqwest::Url) -> bool {
    // The parser gives addresses in their normal form: `127.1` as `127.0.0.1`, IPv6 in brackets.
    let Some(host) = url.host_str() else { return false };
    let address = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost") || address.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// The `proxy` option as the caller gave it.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum ProxyOption {
    /// The proxy variables of the environment (`proxy="environment"`, the default).
    #[default]
    Environment,
    /// No proxy at all (`proxy=None` in Python).
    Off,
    /// This proxy for every host that is not loopback; it may hold `user:password@`.
    Url(Secret),
}

impl ProxyOption {
    /// The option from its Python value: `None`, `"environment"`, or a proxy URL.
    pub fn from_given(value: Option<&str>) -> Self {
        match value {
            None => ProxyOption::Off,
            Some(ENVIRONMENT) => ProxyOption::Environment,
            Some(url) => ProxyOption::Url(Secret::new(url)),
        }
    }
}

/// Serde of the `proxy` option as it is given in Python, for a pickled `Client`'s options
/// (docs/architecture.md#pickling): `"environment"`, `None` for no proxy, or the URL, its
/// `user:password@` included, as the keys are.
pub mod as_given {
    use serde::{Deserialize, Deserializer, Serializer};

    use super::{ProxyOption, ENVIRONMENT};

    pub fn serialize<S: Serializer>(value: &ProxyOption, serializer: S) -> Result<S::Ok, S::Error> {
        match value {
            ProxyOption::Environment => serializer.serialize_some(ENVIRONMENT),
            ProxyOption::Off => serializer.serialize_none(),
            ProxyOption::Url(url) => serializer.serialize_some(url.expose()),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<ProxyOption, D::Error> {
        Ok(ProxyOption::from_given(Option::<String>::deserialize(deserializer)?.as_deref()))
    }
}

/// Where a proxy URL came from, for messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Source {
    Option,
    Variable(&'static str),
}

/// A proxy to send requests through.
#[derive(Clone)]
pub struct ProxyUrl {
    /// Whole, `user:password@` included: it goes to reqwest and nowhere else.
    url: reqwest::Url,
    /// Scheme, host and port, with `***@` in place of a user name or password: what reprs and
    /// messages show.
    shown: String,
    source: Source,
}

impl ProxyUrl {
    /// `value` as a proxy URL. A variable's value without a scheme is an `http://` one, as curl
    /// reads it; `proxy=` needs the scheme, so that a misspelt `"Environment"` or `"none"` is not
    /// taken for a host. Errors name `proxy` (and the variable, when `source` is one), never the
    /// user name or password.
    fn parse(value: &str, source: Source) -> Result<Self, Error> {
        let named = |error: Error| match source {
            Source::Option => error,
            Source::Variable(variable) => error.read_from(variable),
        };
        let given = value.trim();
        if source == Source::Option && !given.contains("://") {
            return Err(Error::config(
                "proxy",
                format!(
                    "must be \"{ENVIRONMENT}\", None, or a proxy URL with its scheme, such as \
                     http://proxy.corp:3128; got {}",
                    shown_url(given)
                ),
            ));
        }
        let with_scheme = if given.contains("://") { given.to_owned() } else { format!("http://{given}") };
        // The URL parser drops tabs and newlines silently; a value holding any is refused instead.
        let clean = !given.is_empty() && !given.chars().any(|c| c.is_whitespace() || c.is_control());
        let url = reqwest::Url::parse(&with_scheme).ok().filter(|_| clean).ok_or_else(|| {
            named(Error::config(
                "proxy",
                format!(
                    "must be a proxy URL such as http://proxy.corp:3128 (http:// or https://, with \
                     user:password@ when the proxy asks for them); got {}",
                    shown_url(given)
                ),
            ))
        })?;
        match url.scheme() {
            "http" | "https" => {}
            scheme => {
                return Err(named(Error::config(
                    "proxy",
                    format!(
                        "uses the scheme {scheme}://, which bankfeed cannot speak to a proxy: use an http:// or \
                         https:// proxy, or turn proxies off (the proxy option) to connect directly"
                    ),
                )))
            }
        }
        let Some(host) = url.host_str().filter(|host| !host.is_empty()) else {
            return Err(named(Error::config(
                "proxy",
                format!("names no host: it must be a URL such as http://proxy.corp:3128; got {}", shown_url(given)),
            )));
        };
        let hidden = if url.username().is_empty() && url.password().is_none() { "" } else { "***@" };
        let port = url.port().map(|port| format!(":{port}")).unwrap_or_default();
        let shown = format!("{}://{hidden}{host}{port}", url.scheme());
        Ok(ProxyUrl { url, shown, source })
    }

    /// The URL reqwest connects through, `user:password@` included.
    pub(crate) fn url(&self) -> &reqwest::Url {
        &self.url
    }

    /// The proxy as reprs and messages show it: without its user name or password.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    fn is_loopback(&self) -> bool {
        is_loopback(&self.url)
    }
}

/// `http://proxy.corp:3128 (from HTTPS_PROXY)`: the proxy and where it came from.
impl fmt::Display for ProxyUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.source {
            Source::Option => write!(f, "{} (from the proxy option)", self.shown),
            Source::Variable(variable) => write!(f, "{} (from {variable})", self.shown),
        }
    }
}

impl fmt::Debug for ProxyUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ProxyUrl({self})")
    }
}

/// The hosts a `NO_PROXY` value lets bypass the proxy, as curl reads it: comma-separated host
/// names (each matching itself and its subdomains; a leading `.` or `*.` changes nothing), IP
/// addresses, CIDR ranges (`10.0.0.0/8`), or `*` for every host. A port in an entry is ignored.
#[derive(Clone, Debug, Default, PartialEq)]
struct NoProxy {
    every_host: bool,
    domains: Vec<String>,
    networks: Vec<(IpAddr, u8)>,
}

impl NoProxy {
    fn parse(value: &str) -> Self {
        let mut no_proxy = NoProxy::default();
        for entry in value.split(',').map(str::trim).filter(|entry| !entry.is_empty()) {
            if entry == "*" {
                no_proxy.every_host = true;
            } else if let Some(network) = network(entry) {
                no_proxy.networks.push(network);
            } else {
                // `host:port`: the port is ignored; an IPv6 address was taken as a network above.
                let host = entry.rsplit_once(':').map_or(entry, |(host, _)| host);
                let host = host.trim_start_matches("*.").trim_start_matches('.').trim_end_matches('.');
                if !host.is_empty() {
                    no_proxy.domains.push(host.to_ascii_lowercase());
                }
            }
        }
        no_proxy
    }

    fn matches(&self, url: &reqwest::Url) -> bool {
        if self.every_host {
            return true;
        }
        let Some(host) = url.host_str() else { return false };
        // The parser gives an IPv6 address in brackets, and every address in its normal form.
        if let Ok(ip) = host.trim_start_matches('[').trim_end_matches(']').parse::<IpAddr>() {
            self.networks.iter().any(|&(net, bits)| within(ip, net, bits))
        } else {
            let domain = host.trim_end_matches('.').to_ascii_lowercase();
            self.domains.iter().any(|entry| {
                domain == *entry || domain.strip_suffix(entry.as_str()).is_some_and(|head| head.ends_with('.'))
            })
        }
    }
}

/// An IP address (its own network) or a CIDR range; `[::1]` and `[::1]:port` are addresses too.
fn network(entry: &str) -> Option<(IpAddr, u8)> {
    let entry = match entry.strip_prefix('[') {
        Some(rest) => rest.split_once(']').map_or(rest, |(address, _)| address),
        None => entry,
    };
    let (address, bits) = match entry.split_once('/') {
        Some((address, bits)) => (address, Some(bits.parse::<u8>().ok()?)),
        None => (entry, None),
    };
    let address = address.parse::<IpAddr>().ok()?;
    let width = if address.is_ipv4() { 32 } else { 128 };
    let bits = bits.unwrap_or(width);
    (bits <= width).then_some((address, bits))
}

/// Whether `ip` is in the network `net`/`bits` (both of the same family).
fn within(ip: IpAddr, net: IpAddr, bits: u8) -> bool {
    match (ip, net) {
        (IpAddr::V4(ip), IpAddr::V4(net)) => {
            let mask = u32::MAX.checked_shl(32 - u32::from(bits)).unwrap_or(0);
            u32::from(ip) & mask == u32::from(net) & mask
        }
        (IpAddr::V6(ip), IpAddr::V6(net)) => {
            let mask = u128::MAX.checked_shl(128 - u32::from(bits)).unwrap_or(0);
            u128::from(ip) & mask == u128::from(net) & mask
        }
        _ => false,
    }
}

/// How requests are routed, once the option and the variables are read.
#[derive(Clone, Debug)]
enum Rule {
    Off,
    /// `proxy=` a URL: every host that is not loopback.
    Every(ProxyUrl),
    Environment(Box<FromEnvironment>),
}

/// What the proxy variables say. Each value is kept as read, its error included: a value that
/// cannot be used is an error only for a client whose hosts it would apply to.
#[derive(Clone, Debug)]
struct FromEnvironment {
    http: Option<Result<ProxyUrl, Error>>,
    https: Option<Result<ProxyUrl, Error>>,
    no_proxy: Result<NoProxy, Error>,
}

/// The proxies of one client: the `proxy` option as given, and the rule it resolved to.
#[derive(Clone, Debug)]
pub struct Proxies {
    option: ProxyOption,
    rule: Rule,
    allow_insecure_http: bool,
}

impl Default for Proxies {
    /// No proxy: what a client built with no environment gets from the default option.
    fn default() -> Self {
        Proxies { option: ProxyOption::Environment, rule: Rule::Off, allow_insecure_http: false }
    }
}

impl Proxies {
    /// The proxies of `option`, reading the variables through `env` (as `std::env::var` does) when
    /// it is `Environment`. An explicit URL is checked here; a variable only when a host it would
    /// apply to is [`decide`](Self::decide)d.
    pub fn resolve(
        option: ProxyOption,
        allow_insecure_http: bool,
        env: &impl Fn(&str) -> Result<String, VarError>,
    ) -> Result<Self, Error> {
        let rule = match &option {
            ProxyOption::Off => Rule::Off,
            ProxyOption::Url(url) => Rule::Every(ProxyUrl::parse(url.expose(), Source::Option)?),
            ProxyOption::Environment => {
                let cgi = !matches!(env(CGI_VARIABLE), Err(VarError::NotPresent));
                let proxy = |variables: &[&'static str]| {
                    let skip = |variable: &&'static str| cgi && *variable == "HTTP_PROXY";
                    first_set(env, variables.iter().copied().filter(|variable| !skip(variable))).map(
                        |(variable, value)| value.and_then(|value| ProxyUrl::parse(&value, Source::Variable(variable))),
                    )
                };
                Rule::Environment(Box::new(FromEnvironment {
                    http: proxy(&HTTP_VARIABLES),
                    https: proxy(&HTTPS_VARIABLES),
                    no_proxy: first_set(env, NO_PROXY_VARIABLES.iter().copied())
                        .map_or(Ok(NoProxy::default()), |(_, value)| value.map(|value| NoProxy::parse(&value))),
                }))
            }
        };
        Ok(Proxies { option, rule, allow_insecure_http })
    }

    /// The proxy a request to `url` goes through, or `None` to connect directly
    /// (docs/protocol.md#proxies). An error when the proxy that applies cannot be used: a value
    /// that does not parse, a scheme reqwest is not built for, a variable that is not UTF-8, or a
    /// plain `http://` request that would cross the network to a proxy in clear text.
    pub fn decide(&self, url: &reqwest::Url) -> Result<Option<&ProxyUrl>, Error> {
        // This machine is reached directly, whatever is set: a proxy would see a sandbox's
        // passwords, and a proxy on another machine cannot reach this one's loopback anyway.
        if is_loopback(url) {
            return Ok(None);
        }
        let proxy = match &self.rule {
            Rule::Off => return Ok(None),
            Rule::Every(proxy) => proxy,
            Rule::Environment(variables) => {
                let chosen = match url.scheme() {
                    "https" => &variables.https,
                    "http" => &variables.http,
                    _ => return Ok(None),
                };
                let Some(chosen) = chosen else { return Ok(None) };
                if variables.no_proxy.as_ref().map_err(Clone::clone)?.matches(url) {
                    return Ok(None);
                }
                chosen.as_ref().map_err(Clone::clone)?
            }
        };
        // A proxy sees the whole of a plain http:// request, passwords and keys included.
        if url.scheme() == "http" && !self.allow_insecure_http && !proxy.is_loopback() {
            return Err(Error::config(
                "proxy",
                format!(
                    "would receive plain http:// requests in clear text through {proxy}: use https://, or turn on \
                     the allow_insecure_http option"
                ),
            ));
        }
        Ok(Some(proxy))
    }

    /// [`decide`](Self::decide) for a request being sent: the client's hosts were decided without
    /// an error when it was made, and every request goes to one of them.
    pub(crate) fn route(&self, url: &reqwest::Url) -> Option<&ProxyUrl> {
        self.decide(url).ok().flatten()
    }

    /// The option as given (pickling carries it as such).
    pub fn option(&self) -> &ProxyOption {
        &self.option
    }

    /// The proxy of `proxy=` a URL, as shown; `None` for the other options.
    pub fn explicit(&self) -> Option<&ProxyUrl> {
        match &self.rule {
            Rule::Every(proxy) => Some(proxy),
            _ => None,
        }
    }

    /// Whether reqwest needs a proxy at all: not when `proxy=None`, nor when no variable is set.
    pub(crate) fn any(&self) -> bool {
        match &self.rule {
            Rule::Off => false,
            Rule::Every(_) => true,
            Rule::Environment(variables) => variables.http.is_some() || variables.https.is_some(),
        }
    }
}

/// The first of `variables` set to something other than an empty string (which counts as unset),
/// and its value: an error naming it when it is not UTF-8.
fn first_set(
    env: &impl Fn(&str) -> Result<String, VarError>,
    mut variables: impl Iterator<Item = &'static str>,
) -> Option<(&'static str, Result<String, Error>)> {
    variables.find_map(|variable| match env(variable) {
        Ok(value) if value.is_empty() => None,
        Ok(value) => Some((variable, Ok(value))),
        Err(VarError::NotPresent) => None,
        Err(VarError::NotUnicode(_)) => Some((variable, Err(Error::not_unicode("proxy", variable)))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> reqwest::Url {
        reqwest::Url::parse(text).unwrap()
    }

    /// An environment holding `vars`.
    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Result<String, VarError> + 'a {
        move |name: &str| {
            vars.iter().find(|(key, _)| *key == name).map(|(_, value)| (*value).to_owned()).ok_or(VarError::NotPresent)
        }
    }

    fn from_env(vars: &[(&str, &str)]) -> Proxies {
        Proxies::resolve(ProxyOption::Environment, false, &env(vars)).unwrap()
    }

    /// The proxy a request to `target` goes through, as shown with its source.
    fn through(proxies: &Proxies, target: &str) -> Option<String> {
        proxies.decide(&url(target)).unwrap().map(ToString::to_string)
    }

    fn rule_of(result: Result<impl fmt::Debug, Error>) -> String {
        match result {
            Err(Error::Config { field: "proxy", rule }) => rule,
            other => panic!("expected a proxy error, got {other:?}"),
        }
    }

    const EVERY_VARIABLE: [(&str, &str); 4] = [
        ("HTTPS_PROXY", "http://proxy.corp:3128"),
        ("HTTP_PROXY", "http://proxy.corp:3128"),
        ("ALL_PROXY", "http://proxy.corp:3128"),
        ("NO_PROXY", ""),
    ];

    #[test]
    fn loopback_hosts_never_go_through_a_proxy() {
        let explicit =
            Proxies::resolve(ProxyOption::Url(Secret::new("http://proxy.corp:3128")), true, &env(&[])).unwrap();
        for proxies in [from_env(&EVERY_VARIABLE), explicit] {
            for target in [
                "http://127.0.0.1:8080",
                "http://127.8.9.10",
                "http://[::1]:9",
                "http://localhost:1",
                "https://LOCALHOST",
            ] {
                assert_eq!(through(&proxies, target), None, "{target}");
            }
            assert!(through(&proxies, "https://api.example.com").is_some());
        }
    }

    #[test]
    fn the_variable_of_the_scheme_wins_upper_case_first_then_all_proxy() {
        let proxies = from_env(&[
            ("HTTPS_PROXY", "http://secure.corp:1"),
            ("https_proxy", "http://lower.corp:2"),
            ("HTTP_PROXY", "http://plain.corp:3"),
            ("ALL_PROXY", "http://all.corp:4"),
        ]);
        assert_eq!(through(&proxies, "https://api.example.com").unwrap(), "http://secure.corp:1 (from HTTPS_PROXY)");
        let insecure = Proxies::resolve(ProxyOption::Environment, true, &env(&[("HTTP_PROXY", "http://plain.corp:3")]));
        assert_eq!(
            through(&insecure.unwrap(), "http://api.example.com").unwrap(),
            "http://plain.corp:3 (from HTTP_PROXY)"
        );
        let lower = from_env(&[("https_proxy", "http://lower.corp:2"), ("ALL_PROXY", "http://all.corp:4")]);
        assert_eq!(through(&lower, "https://api.example.com").unwrap(), "http://lower.corp:2 (from https_proxy)");
        let all = from_env(&[("all_proxy", "https://all.corp:4"), ("HTTP_PROXY", "http://plain.corp:3")]);
        assert_eq!(through(&all, "https://api.example.com").unwrap(), "https://all.corp:4 (from all_proxy)");
        // HTTP_PROXY is for http:// hosts only.
        assert_eq!(through(&from_env(&[("HTTP_PROXY", "http://plain.corp:3")]), "https://api.example.com"), None);
        // An empty variable counts as unset.
        let empty = from_env(&[("HTTPS_PROXY", ""), ("https_proxy", "http://lower.corp:2")]);
        assert_eq!(through(&empty, "https://api.example.com").unwrap(), "http://lower.corp:2 (from https_proxy)");
        assert_eq!(through(&from_env(&[]), "https://api.example.com"), None);
    }

    #[test]
    fn a_cgi_script_does_not_read_http_proxy_which_a_request_header_can_set() {
        let vars = [("REQUEST_METHOD", "GET"), ("HTTP_PROXY", "http://evil.example:1")];
        let cgi = Proxies::resolve(ProxyOption::Environment, true, &env(&vars)).unwrap();
        assert_eq!(through(&cgi, "http://api.example.com"), None);
        let vars = [("REQUEST_METHOD", "GET"), ("http_proxy", "http://proxy.corp:3128")];
        let cgi = Proxies::resolve(ProxyOption::Environment, true, &env(&vars)).unwrap();
        assert!(through(&cgi, "http://api.example.com").is_some());
    }

    #[test]
    fn no_proxy_lists_hosts_suffixes_addresses_and_ranges() {
        let proxies = from_env(&[
            ("HTTPS_PROXY", "http://proxy.corp:3128"),
            ("NO_PROXY", " internal.example , .corp.example,*.wild.example, 10.0.0.0/8, 192.168.1.7,[fd00::1]:443,api.port.example:8443"),
        ]);
        for direct in [
            "https://internal.example",
            "https://a.b.internal.example:8443",
            "https://corp.example",
            "https://x.corp.example",
            "https://x.wild.example",
            "https://10.200.3.4",
            "https://192.168.1.7",
            "https://[fd00::1]",
            "https://api.port.example",
            "https://INTERNAL.example.",
        ] {
            assert_eq!(through(&proxies, direct), None, "{direct}");
        }
        for proxied in
            ["https://notinternal.example", "https://internal.example.com", "https://11.0.0.1", "https://192.168.1.8"]
        {
            assert!(through(&proxies, proxied).is_some(), "{proxied}");
        }
        let every = from_env(&[("HTTPS_PROXY", "http://proxy.corp:3128"), ("no_proxy", "*")]);
        assert_eq!(through(&every, "https://api.example.com"), None);
    }

    #[test]
    fn an_explicit_proxy_takes_every_host_but_loopback_and_ignores_no_proxy() {
        let option = ProxyOption::from_given(Some("https://proxy.corp:8443"));
        let vars = [("NO_PROXY", "*"), ("HTTPS_PROXY", "http://other.corp:1")];
        let proxies = Proxies::resolve(option, false, &env(&vars)).unwrap();
        assert_eq!(
            through(&proxies, "https://api.example.com").unwrap(),
            "https://proxy.corp:8443 (from the proxy option)"
        );
        assert_eq!(proxies.explicit().unwrap().shown(), "https://proxy.corp:8443");
        assert_eq!(ProxyOption::from_given(Some(ENVIRONMENT)), ProxyOption::Environment);
        // Given as an argument, a value without a scheme is refused, not taken for a host.
        for misspelt in ["Environment", "none", "proxy.corp:3128", "alice:hunter2@proxy.corp"] {
            let rule = rule_of(Proxies::resolve(ProxyOption::from_given(Some(misspelt)), false, &env(&[])));
            assert!(rule.contains("\"environment\", None, or a proxy URL") && !rule.contains("hunter2"), "{rule}");
        }
    }

    #[test]
    fn proxy_none_reads_no_variable() {
        let proxies = Proxies::resolve(ProxyOption::from_given(None), false, &|name: &str| {
            panic!("{name} was read");
        })
        .unwrap();
        assert_eq!(through(&proxies, "https://api.example.com"), None);
        assert!(!proxies.any());
        assert!(!from_env(&[]).any() && from_env(&EVERY_VARIABLE).any());
    }

    #[test]
    fn credentials_are_used_but_never_shown() {
        let option = ProxyOption::Url(Secret::new("http://alice:hunter2@proxy.corp:3128"));
        let proxies = Proxies::resolve(option, false, &env(&[])).unwrap();
        let proxy = proxies.decide(&url("https://api.example.com")).unwrap().unwrap();
        assert_eq!(proxy.url().password(), Some("hunter2"));
        assert_eq!(proxy.to_string(), "http://***@proxy.corp:3128 (from the proxy option)");
        let debug = format!("{proxies:?}");
        assert!(!debug.contains("hunter2") && !debug.contains("alice"), "{debug}");
        let from_variable = from_env(&[("HTTPS_PROXY", "bob:hunter2@proxy.corp")]);
        let shown = through(&from_variable, "https://api.example.com").unwrap();
        assert_eq!(shown, "http://***@proxy.corp (from HTTPS_PROXY)");
    }

    #[test]
    fn an_unusable_proxy_is_an_error_only_where_it_applies() {
        for bad in ["socks5://proxy.corp:1080", "http://", "http://proxy corp", "http://a:hunter2@[oops"] {
            let option = ProxyOption::Url(Secret::new(bad));
            let rule = rule_of(Proxies::resolve(option, false, &env(&[])));
            assert!(!rule.contains("hunter2") && !rule.contains("read from"), "{rule}");
            let proxies = from_env(&[("ALL_PROXY", bad)]);
            // Not for loopback, nor for a host NO_PROXY lets through...
            assert_eq!(through(&proxies, "http://127.0.0.1:9"), None);
            let bypassed = from_env(&[("ALL_PROXY", bad), ("NO_PROXY", "api.example.com")]);
            assert_eq!(through(&bypassed, "https://api.example.com"), None);
            // ...but for a host it would carry.
            let rule = rule_of(proxies.decide(&url("https://api.example.com")));
            assert!(rule.ends_with("(read from ALL_PROXY)") && !rule.contains("hunter2"), "{rule}");
            assert_eq!(proxies.route(&url("https://api.example.com")).map(ToString::to_string), None);
        }
        let rule = rule_of(Proxies::resolve(ProxyOption::Url(Secret::new("socks5://p:1")), false, &env(&[])));
        assert!(rule.contains("socks5://") && rule.contains("turn proxies off"), "{rule}");
    }

    #[test]
    fn a_variable_that_is_not_utf8_is_an_error_naming_it_where_it_applies() {
        let lookup = |name: &str| match name {
            "HTTPS_PROXY" => Err(VarError::NotUnicode(std::ffi::OsString::from("x"))),
            _ => Err(VarError::NotPresent),
        };
        let proxies = Proxies::resolve(ProxyOption::Environment, false, &lookup).unwrap();
        assert_eq!(proxies.decide(&url("http://127.0.0.1:9")).unwrap().map(ToString::to_string), None);
        let rule = rule_of(proxies.decide(&url("https://api.example.com")));
        assert!(rule.contains("not UTF-8") && rule.ends_with("(read from HTTPS_PROXY)"), "{rule}");
        let no_proxy = |name: &str| match name {
            "NO_PROXY" => Err(VarError::NotUnicode(std::ffi::OsString::from("x"))),
            "HTTPS_PROXY" => Ok("http://proxy.corp:3128".to_owned()),
            _ => Err(VarError::NotPresent),
        };
        let proxies = Proxies::resolve(ProxyOption::Environment, false, &no_proxy).unwrap();
        assert!(rule_of(proxies.decide(&url("https://api.example.com"))).ends_with("(read from NO_PROXY)"));
    }

    #[test]
    fn plain_http_crosses_the_network_to_a_proxy_only_when_insecure_http_is_allowed() {
        let vars = [("HTTP_PROXY", "http://proxy.corp:3128")];
        let strict = Proxies::resolve(ProxyOption::Environment, false, &env(&vars)).unwrap();
        let rule = rule_of(strict.decide(&url("http://api.example.com")));
        assert!(rule.contains("the allow_insecure_http option") && rule.contains("HTTP_PROXY"), "{rule}");
        let insecure = Proxies::resolve(ProxyOption::Environment, true, &env(&vars)).unwrap();
        assert!(through(&insecure, "http://api.example.com").is_some());
        // A proxy on this machine is no crossing.
        let local = Proxies::resolve(ProxyOption::Url(Secret::new("http://127.0.0.1:3128")), false, &env(&[]));
        assert!(through(&local.unwrap(), "http://api.example.com").is_some());
    }

    #[test]
    fn networks_and_masks() {
        assert_eq!(network("10.0.0.0/8"), Some(("10.0.0.0".parse().unwrap(), 8)));
        assert_eq!(network("::1"), Some(("::1".parse().unwrap(), 128)));
        assert_eq!(network("10.0.0.0/33"), None);
        assert_eq!(network("example.com"), None);
        assert!(within("10.1.2.3".parse().unwrap(), "10.0.0.0".parse().unwrap(), 8));
        assert!(within("1.2.3.4".parse().unwrap(), "0.0.0.0".parse().unwrap(), 0));
        assert!(!within("::1".parse().unwrap(), "0.0.0.0".parse().unwrap(), 0));
        assert!(within("fd00::5".parse().unwrap(), "fd00::".parse().unwrap(), 64));
    }
}

//! The wire operations of the v3 API, each named once: its name, method, path, `...Async` link,
//! whether it names a login, whether it waits for account detail, and its host
//! (docs/protocol.md#hosts-paths-and-versions).
//!
//! The sandbox registers its routes from these templates and matches faults by them; the client
//! builds its URLs from them ([`WireOp::url`], [`WireOp::async_path_for`]). A template is the path under the service's
//! root, with the values it names in braces: `{customer_id}`, `{login_id}`, `{request_id}` and
//! `{operation}` (the syntax axum's router reads, so the sandbox routes the template itself).
//!
//! This module knows no HTTP stack and no server: it is the table, and the one function that
//! fills a template in.

/// An HTTP method an operation is sent with: the four the API uses, so that a router can match
/// them all; `reqwest::Method::from` gives the one to send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpMethod {
    Get,
    Post,
    Delete,
    Patch,
}

/// The method as reqwest (and axum, through the same `http` crate) spells it.
impl From<HttpMethod> for reqwest::Method {
    fn from(method: HttpMethod) -> reqwest::Method {
        match method {
            HttpMethod::Get => reqwest::Method::GET,
            HttpMethod::Post => reqwest::Method::POST,
            HttpMethod::Delete => reqwest::Method::DELETE,
            HttpMethod::Patch => reqwest::Method::PATCH,
        }
    }
}

impl HttpMethod {
    /// `GET`, `POST`, `DELETE` or `PATCH`.
    pub const fn as_str(self) -> &'static str {
        match self {
            HttpMethod::Get => "GET",
            HttpMethod::Post => "POST",
            HttpMethod::Delete => "DELETE",
            HttpMethod::Patch => "PATCH",
        }
    }
}

/// Which of the customer's hosts an operation goes to (docs/protocol.md#hosts-paths-and-versions):
/// Investments has a host of its own (`investments_base_url`), every other operation goes to
/// `base_url`. The sandbox serves both on one address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Host {
    Banking,
    Investments,
}

/// One operation of the API as it goes on the wire.
#[derive(Debug, PartialEq, Eq)]
pub struct WireOp {
    /// The operation's name, as the service names it and as errors, logs and the sandbox's faults
    /// (docs/sandbox.md#faults) name it. Both shapes of the attributes call are `Attributes`; a
    /// use-case GET also has a name of its own, its `{operation}` (`GetIncomeAttributes`).
    pub name: &'static str,
    pub method: HttpMethod,
    /// The path under the service's root, e.g. `/v3/{customer_id}/BankingServices/GetAccountsDetail`.
    pub path: &'static str,
    /// The path of the `GET` that continues a pending request, when its 202 names an `...Async`
    /// link (docs/protocol.md#polling); None for an operation the caller repeats as it is.
    pub async_path: Option<&'static str>,
    /// Whether its request names a LoginId, in its path or its body (Investments). For a data
    /// operation it must be the login of the RequestId.
    pub names_login: bool,
    /// Whether it answers 202 until account detail has answered 200 for the RequestId, so the
    /// client fetches account detail first (docs/protocol.md#attributes).
    pub after_detail: bool,
    pub host: Host,
}

/// The single-use token an Authorize needs when a secret key is set (docs/protocol.md#authentication).
pub const GENERATE_AUTHORIZE_TOKEN: WireOp = WireOp {
    name: "GenerateAuthorizeToken",
    method: HttpMethod::Post,
    path: "/v3/{customer_id}/BankingServices/GenerateAuthorizeToken",
    async_path: None,
    names_login: false,
    after_detail: false,
    host: Host::Banking,
};

/// Every shape of the login call (docs/protocol.md#authorize).
pub const AUTHORIZE: WireOp = WireOp {
    name: "Authorize",
    method: HttpMethod::Post,
    path: "/v3/{customer_id}/BankingServices/Authorize",
    async_path: None,
    names_login: false,
    after_detail: false,
    host: Host::Banking,
};

/// docs/protocol.md#account-detail-summary-and-statements
pub const GET_ACCOUNTS_DETAIL: WireOp = WireOp {
    name: "GetAccountsDetail",
    method: HttpMethod::Post,
    path: "/v3/{customer_id}/BankingServices/GetAccountsDetail",
    async_path: Some("/v3/{customer_id}/BankingServices/GetAccountsDetailAsync/{request_id}"),
    names_login: false,
    after_detail: false,
    host: Host::Banking,
};

/// docs/protocol.md#account-detail-summary-and-statements
pub const GET_ACCOUNTS_SUMMARY: WireOp = WireOp {
    name: "GetAccountsSummary",
    method: HttpMethod::Post,
    path: "/v3/{customer_id}/BankingServices/GetAccountsSummary",
    async_path: Some("/v3/{customer_id}/BankingServices/GetAccountsSummaryAsync/{request_id}"),
    names_login: false,
    after_detail: false,
    host: Host::Banking,
};

/// docs/protocol.md#account-detail-summary-and-statements
pub const GET_STATEMENTS: WireOp = WireOp {
    name: "GetStatements",
    method: HttpMethod::Post,
    path: "/v3/{customer_id}/BankingServices/GetStatements",
    async_path: Some("/v3/{customer_id}/BankingServices/GetStatementsAsync/{request_id}"),
    names_login: false,
    after_detail: false,
    host: Host::Banking,
};

/// One POST, repeated as it is while pending, on the investments host (docs/protocol.md#investments).
pub const INVESTMENTS: WireOp = WireOp {
    name: "Investments",
    method: HttpMethod::Post,
    path: "/v3/{customer_id}/Investments",
    async_path: None,
    names_login: true,
    after_detail: false,
    host: Host::Investments,
};

/// A custom set of attributes (docs/protocol.md#attributes).
pub const ATTRIBUTES: WireOp = WireOp {
    name: "Attributes",
    method: HttpMethod::Post,
    path: "/v3/{customer_id}/insight/login/{login_id}/attributes/{request_id}",
    async_path: None,
    names_login: true,
    after_detail: true,
    host: Host::Banking,
};

/// The attributes of a use-case package, `{operation}` naming it (docs/protocol.md#attributes).
pub const ATTRIBUTES_USE_CASE: WireOp = WireOp {
    name: "Attributes",
    method: HttpMethod::Get,
    path: "/v3/{customer_id}/insight/login/{login_id}/attributes/{request_id}/{operation}",
    async_path: None,
    names_login: true,
    after_detail: true,
    host: Host::Banking,
};

/// Forgets a saved connection (docs/protocol.md#deletecard).
pub const DELETE_CARD: WireOp = WireOp {
    name: "DeleteCard",
    method: HttpMethod::Delete,
    path: "/v3/{customer_id}/BankingServices/DeleteCard/{login_id}",
    async_path: None,
    names_login: true,
    after_detail: false,
    host: Host::Banking,
};

/// Opens sessions on several saved logins at once (docs/protocol.md#operations-beyond-the-interface).
pub const AUTHORIZE_MULTIPLE: WireOp =
    banking("AuthorizeMultiple", HttpMethod::Post, "/v3/{customer_id}/BankingServices/AuthorizeMultiple");

/// The saved security questions of a login (docs/protocol.md#operations-beyond-the-interface).
pub const GET_MFA_QUESTIONS: WireOp = WireOp {
    names_login: true,
    ..banking("GetMFAQuestions", HttpMethod::Get, "/v3/{customer_id}/BankingServices/GetMFAQuestions/{login_id}")
};

/// Stores answers to a login's security questions (docs/protocol.md#operations-beyond-the-interface).
pub const ANSWER_MFA_QUESTIONS: WireOp = WireOp {
    names_login: true,
    ..banking("AnswerMFAQuestions", HttpMethod::Patch, "/v3/{customer_id}/BankingServices/AnswerMFAQuestions")
};

/// Turns a login's nightly refresh on or off (docs/protocol.md#operations-beyond-the-interface).
pub const SET_SCHEDULED_REFRESH: WireOp = WireOp {
    names_login: true,
    ..banking("SetScheduledRefresh", HttpMethod::Patch, "/v3/{customer_id}/BankingServices/SetScheduledRefresh")
};

/// The logins whose nightly refresh cannot run (docs/protocol.md#operations-beyond-the-interface).
pub const GET_NIGHTLY_REFRESH_STATUS: WireOp =
    banking("GetNightlyRefreshStatus", HttpMethod::Get, "/v3/{customer_id}/BankingServices/GetNightlyRefreshStatus");

/// The institutions the service supports (docs/protocol.md#operations-beyond-the-interface).
pub const INSTITUTIONS: WireOp =
    banking("Institutions", HttpMethod::Get, "/v3/{customer_id}/BankingServices/Institutions");

/// The categorized transactions of a session (docs/protocol.md#operations-beyond-the-interface).
pub const GET_CATEGORIZATION: WireOp = WireOp {
    names_login: true,
    ..banking(
        "GetCategorization",
        HttpMethod::Get,
        "/v3/{customer_id}/categorization/login/{login_id}/requestid/{request_id}",
    )
};

/// An operation on the banking host that is answered at once (no `...Async` link, no wait for
/// account detail) and names no login.
const fn banking(name: &'static str, method: HttpMethod, path: &'static str) -> WireOp {
    WireOp { name, method, path, async_path: None, names_login: false, after_detail: false, host: Host::Banking }
}

/// Every wire operation, in the order of docs/protocol.md#hosts-paths-and-versions.
pub const ALL: [&WireOp; 16] = [
    &GENERATE_AUTHORIZE_TOKEN,
    &AUTHORIZE,
    &GET_ACCOUNTS_DETAIL,
    &GET_ACCOUNTS_SUMMARY,
    &GET_STATEMENTS,
    &INVESTMENTS,
    &ATTRIBUTES,
    &ATTRIBUTES_USE_CASE,
    &DELETE_CARD,
    &AUTHORIZE_MULTIPLE,
    &GET_MFA_QUESTIONS,
    &ANSWER_MFA_QUESTIONS,
    &SET_SCHEDULED_REFRESH,
    &GET_NIGHTLY_REFRESH_STATUS,
    &INSTITUTIONS,
    &GET_CATEGORIZATION,
];

/// The operations' names, each once, in the order of [`ALL`].
pub fn names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = Vec::with_capacity(ALL.len());
    for op in ALL {
        if !names.contains(&op.name) {
            names.push(op.name);
        }
    }
    names
}

impl WireOp {
    /// The `rel` of the link a pending answer names, which is also the last fixed segment of
    /// [`WireOp::async_path`]: `GetAccountsDetailAsync`.
    pub fn async_rel(&self) -> Option<&'static str> {
        let path = self.async_path?.strip_suffix("/{request_id}")?;
        path.rsplit_once('/').map(|(_, rel)| rel)
    }

    /// Whether its path names the LoginId (DeleteCard, attributes) rather than its body.
    pub fn login_in_path(&self) -> bool {
        self.path.contains("{login_id}")
    }

    /// The path of this operation for `values`, e.g. `/v3/43387ca6-.../Investments`.
    pub fn path_for(&self, values: &PathValues<'_>) -> Result<String, MissingValue> {
        fill(self.path, values)
    }

    /// Its URL for `values`: the path after the root of its host, `base_url` or, for
    /// Investments, `investments_base_url` (docs/protocol.md#hosts-paths-and-versions).
    pub fn url(
        &self,
        base_url: &str,
        investments_base_url: &str,
        values: &PathValues<'_>,
    ) -> Result<String, MissingValue> {
        let base = match self.host {
            Host::Banking => base_url,
            Host::Investments => investments_base_url,
        };
        Ok(format!("{base}{}", self.path_for(values)?))
    }

    /// The path of its `...Async` GET for `values`; None for an operation without one.
    pub fn async_path_for(&self, values: &PathValues<'_>) -> Result<Option<String>, MissingValue> {
        self.async_path.map(|template| fill(template, values)).transpose()
    }
}

/// The values a template names. A value the template does not name is not used, so a caller can
/// give all it has. Values go into the path as given: the caller checks that each is one plain
/// path segment (docs/protocol.md#hosts-paths-and-versions).
#[derive(Debug, Clone, Copy)]
pub struct PathValues<'a> {
    pub customer_id: &'a str,
    pub login_id: Option<&'a str>,
    pub request_id: Option<&'a str>,
    /// The use-case operation of an attributes GET (`GetIncomeAttributes`).
    pub operation: Option<&'a str>,
}

impl<'a> PathValues<'a> {
    pub fn new(customer_id: &'a str) -> PathValues<'a> {
        PathValues { customer_id, login_id: None, request_id: None, operation: None }
    }

    pub fn login_id(self, login_id: &'a str) -> PathValues<'a> {
        PathValues { login_id: Some(login_id), ..self }
    }

    pub fn request_id(self, request_id: &'a str) -> PathValues<'a> {
        PathValues { request_id: Some(request_id), ..self }
    }

    pub fn operation(self, operation: &'a str) -> PathValues<'a> {
        PathValues { operation: Some(operation), ..self }
    }

    fn get(&self, placeholder: &str) -> Option<&'a str> {
        match placeholder {
            "customer_id" => Some(self.customer_id),
            "login_id" => self.login_id,
            "request_id" => self.request_id,
            "operation" => self.operation,
            _ => None,
        }
    }
}

/// A template named a value [`PathValues`] did not have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingValue {
    pub template: &'static str,
    /// The value's name, as the template writes it: `login_id`.
    pub placeholder: &'static str,
}

impl std::fmt::Display for MissingValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the path {} needs a {}", self.template, self.placeholder)
    }
}

impl std::error::Error for MissingValue {}

/// `template` with each `{name}` replaced by its value in `values`.
pub fn fill(template: &'static str, values: &PathValues<'_>) -> Result<String, MissingValue> {
    let mut path = String::with_capacity(template.len() + 64);
    let mut rest = template;
    while let Some((before, after)) = rest.split_once('{') {
        path.push_str(before);
        let (placeholder, after) = after.split_once('}').unwrap_or((after, ""));
        let value = values.get(placeholder).ok_or(MissingValue { template, placeholder })?;
        path.push_str(value);
        rest = after;
    }
    path.push_str(rest);
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLACEHOLDERS: [&str; 4] = ["customer_id", "login_id", "request_id", "operation"];

    fn placeholders(template: &str) -> Vec<&str> {
        template.split('{').skip(1).map(|part| part.split_once('}').unwrap().0).collect()
    }

    #[test]
    fn every_template_is_under_the_version_and_customer_and_names_known_values() {
        for op in ALL {
            for template in [Some(op.path), op.async_path].into_iter().flatten() {
                assert!(template.starts_with("/v3/{customer_id}/"), "{template}");
                assert!(placeholders(template).iter().all(|name| PLACEHOLDERS.contains(name)), "{template}");
            }
            assert!(!op.login_in_path() || op.names_login, "{}", op.name);
        }
    }

    #[test]
    fn each_method_and_path_is_one_operation() {
        let mut routes: Vec<(HttpMethod, &str)> = ALL.iter().map(|op| (op.method, op.path)).collect();
        routes.extend(ALL.iter().filter_map(|op| op.async_path.map(|path| (HttpMethod::Get, path))));
        let count = routes.len();
        routes.sort_by_key(|(method, path)| (method.as_str(), *path));
        routes.dedup();
        assert_eq!(routes.len(), count);
        assert_eq!(
            names(),
            [
                "GenerateAuthorizeToken",
                "Authorize",
                "GetAccountsDetail",
                "GetAccountsSummary",
                "GetStatements",
                "Investments",
                "Attributes",
                "DeleteCard",
                "AuthorizeMultiple",
                "GetMFAQuestions",
                "AnswerMFAQuestions",
                "SetScheduledRefresh",
                "GetNightlyRefreshStatus",
                "Institutions",
                "GetCategorization"
            ]
        );
    }

    #[test]
    fn async_links_are_named_after_their_path() {
        assert_eq!(GET_ACCOUNTS_DETAIL.async_rel(), Some("GetAccountsDetailAsync"));
        for op in ALL {
            assert_eq!(op.async_rel().is_some(), op.async_path.is_some(), "{}", op.name);
            if let Some(rel) = op.async_rel() {
                assert_eq!(rel, format!("{}Async", op.name));
            }
        }
    }

    #[test]
    fn paths_are_filled_in() {
        let values = PathValues::new("cid").login_id("login").request_id("req").operation("GetIncomeAttributes");
        assert_eq!(INVESTMENTS.path_for(&values).unwrap(), "/v3/cid/Investments");
        assert_eq!(INVESTMENTS.url("https://a", "https://w", &values).unwrap(), "https://w/v3/cid/Investments");
        assert_eq!(
            AUTHORIZE.url("https://a", "https://w", &values).unwrap(),
            "https://a/v3/cid/BankingServices/Authorize"
        );
        assert_eq!(reqwest::Method::from(DELETE_CARD.method), reqwest::Method::DELETE);
        assert_eq!(DELETE_CARD.path_for(&values).unwrap(), "/v3/cid/BankingServices/DeleteCard/login");
        assert_eq!(
            ATTRIBUTES_USE_CASE.path_for(&values).unwrap(),
            "/v3/cid/insight/login/login/attributes/req/GetIncomeAttributes"
        );
        assert_eq!(
            GET_STATEMENTS.async_path_for(&values).unwrap().as_deref(),
            Some("/v3/cid/BankingServices/GetStatementsAsync/req")
        );
        assert_eq!(AUTHORIZE.async_path_for(&values).unwrap(), None);
        let missing = ATTRIBUTES.path_for(&PathValues::new("cid").request_id("req")).unwrap_err();
        assert_eq!(missing.placeholder, "login_id");
        assert_eq!(
            missing.to_string(),
            "the path /v3/{customer_id}/insight/login/{login_id}/attributes/{request_id} needs a login_id"
        );
    }

    /// The table of docs/protocol.md#hosts-paths-and-versions names each operation's method and
    /// path under `/v3/{customerId}/`, in the service's spelling of the values.
    #[test]
    fn the_protocol_page_lists_every_operation() {
        let page = include_str!("../../../docs/protocol.md");
        let (_, table) = page.split_once("## Hosts, paths and versions").unwrap();
        let (table, _) = table.split_once("\n## ").unwrap();
        let spelled = |template: &str| {
            template
                .trim_start_matches("/v3/{customer_id}/")
                .replace("{login_id}", "{loginId}")
                .replace("{request_id}", "{requestId}")
        };
        for op in ALL {
            let route = format!("`{} {}`", op.method.as_str(), spelled(op.path));
            assert!(table.contains(&route), "{route} is not in docs/protocol.md");
            if let Some(path) = op.async_path {
                let route = format!("`GET {}`", spelled(path));
                assert!(table.contains(&route), "{route} is not in docs/protocol.md");
            }
        }
    }
}

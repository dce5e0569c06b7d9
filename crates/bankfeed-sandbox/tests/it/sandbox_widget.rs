//! The sandbox's imitation of the hosted widget over plain HTTP (docs/sandbox.md#the-hosted-widget):
//! the pages a flow goes through, the events each page posts, the redirect, the token check,
//! and a LoginId that opens a cached session at once. The browser tests
//! (tests/python/browser/test_widget_sandbox.py) click through the same pages.

use bankfeed_sandbox::SandboxConfig;
use serde_json::Value;

use crate::common::{Api, INSTITUTION};

/// A page of the widget: its HTML, the flow its forms post to, and the events it posts on load.
struct Page {
    html: String,
    flow: Option<String>,
    events: Vec<Value>,
}

impl Page {
    fn has(&self, id: &str) -> bool {
        self.html.contains(&format!("id=\"{id}\""))
    }

    fn steps(&self) -> Vec<String> {
        self.events.iter().map(|event| event["step"].as_str().unwrap_or_default().to_owned()).collect()
    }
}

fn read_page(html: String) -> Page {
    let flow = html.split("action=\"/v2/flow/").nth(1).and_then(|rest| rest.split('"').next()).map(str::to_owned);
    let events = html
        .split("<script type=\"application/json\" id=\"widget-events\">")
        .nth(1)
        .and_then(|rest| rest.split("</script>").next())
        .map(|json| serde_json::from_str::<Vec<Value>>(json).expect("the page's events are JSON"))
        .unwrap_or_default();
    Page { html, flow, events }
}

async fn open(api: &Api, path_and_query: &str) -> Page {
    let response = api.http.get(format!("{}{path_and_query}", api.sandbox.url())).send().await.expect("GET sent");
    assert_eq!(response.status().as_u16(), 200);
    let policy = response.headers()["content-security-policy"].to_str().unwrap().to_owned();
    assert!(policy.contains("default-src 'none'"), "{policy}");
    read_page(response.text().await.expect("page read"))
}

async fn send(api: &Api, page: &Page, form: &[(&str, &str)]) -> Page {
    let flow = page.flow.as_deref().expect("a page with a form");
    let response = api
        .http
        .post(format!("{}/v2/flow/{flow}", api.sandbox.url()))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(encode_form(form))
        .send()
        .await
        .expect("form sent");
    assert_eq!(response.status().as_u16(), 200);
    read_page(response.text().await.expect("page read"))
}

/// The form as a browser sends it (`application/x-www-form-urlencoded`).
fn encode_form(form: &[(&str, &str)]) -> String {
    let encode = |text: &str| {
        text.bytes()
            .map(|byte| {
                if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
                    char::from(byte).to_string()
                } else {
                    format!("%{byte:02X}")
                }
            })
            .collect::<String>()
    };
    form.iter().map(|(key, value)| format!("{}={}", encode(key), encode(value))).collect::<Vec<_>>().join("&")
}

fn open_config() -> SandboxConfig {
    SandboxConfig { auth: false, ..SandboxConfig::default() }
}

#[tokio::test]
async fn greatday_nomfa_connects_and_its_login_id_opens_a_cached_session() {
    let api = Api::with(open_config());
    let first = open(&api, "/v2/?demo=true&redirectUrl=https://example.com/done&tag=t1").await;
    assert_eq!(first.steps(), ["APP_MOUNTED", "COMPONENT_LOAD_CONSENT"]);
    assert!(first.has("consent-accept"));
    let list = send(&api, &first, &[("action", "consent")]).await;
    assert_eq!(list.steps(), ["COMPONENT_LOAD_INSTITUTION_SELECTOR"]);
    assert!(list.has("institution-FlinksCapital") && list.html.contains("Flinks Capital"));
    let form = send(&api, &list, &[("action", "institution"), ("institution", INSTITUTION)]).await;
    assert_eq!(form.events, [serde_json::json!({"step": "COMPONENT_LOAD_CREDENTIAL", "institution": INSTITUTION})]);
    let done =
        send(&api, &form, &[("action", "credentials"), ("username", "greatday_nomfa"), ("password", "Everyday")]).await;
    assert!(done.has("connected-page"), "{}", done.html);
    let redirect = &done.events[0];
    assert_eq!(redirect["step"], "REDIRECT");
    let login_id = redirect["loginId"].as_str().unwrap();
    // A demo connection says so first, as the service's recorded callbacks do.
    assert_eq!(
        redirect["url"],
        format!("https://example.com/done?demo=true&loginId={login_id}&institution=FlinksCapital&tag=t1")
    );
    assert_eq!(redirect["tag"], "t1");
    let (status, body) = api.cached(login_id).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["Login"]["Id"], login_id);
}

#[tokio::test]
async fn greatday_is_asked_its_question_and_a_wrong_answer_can_be_retried() {
    let api = Api::with(open_config());
    let form = open(&api, "/v2/?consentEnable=false&institution=FlinksCapital").await;
    assert_eq!(form.steps(), ["APP_MOUNTED", "COMPONENT_LOAD_CREDENTIAL"]);
    assert!(!form.has("credential-back"), "a pre-selected institution has no list to go back to");
    let mfa = send(&api, &form, &[("action", "credentials"), ("username", "Greatday"), ("password", "Everyday")]).await;
    assert_eq!(mfa.events[0]["step"], "COMPONENT_LOAD_MFA");
    assert_eq!(mfa.events[0]["mfaTypes"], serde_json::json!(["QuestionAndAnswer"]));
    let wrong = send(&api, &mfa, &[("action", "mfa"), ("answer-0", "Nowhere")]).await;
    assert_eq!(wrong.steps(), ["ERROR", "COMPONENT_LOAD_MFA_RETRY"]);
    assert_eq!(wrong.events[0]["flinksCode"], "INVALID_SECURITY_RESPONSE");
    assert!(wrong.has("mfa-error"));
    let prompt = wrong.html.split("id=\"prompt-0\">").nth(1).unwrap().split('<').next().unwrap().to_owned();
    let answer = match prompt.as_str() {
        "What city were you born in?" => "Montreal",
        "What is the best country on earth?" => "Canada",
        _ => "Triangle",
    };
    let done = send(&api, &wrong, &[("action", "mfa"), ("answer-0", answer)]).await;
    assert_eq!(done.steps(), ["REDIRECT"], "{}", done.html);
    // Without redirectUrl the widget's own frame goes to its result page, the address a mobile
    // WebView watches for, which shows what the app is sent. No demo here: no demo=true.
    let login_id = done.events[0]["loginId"].as_str().unwrap().to_owned();
    let result = format!("/v2/Result/FlinksCapital?loginId={login_id}&institution=FlinksCapital");
    assert_eq!(done.events[0]["url"], result.as_str());
    assert!(done.html.contains(&format!("data-navigate=\"{}\" data-top=\"false\"", result.replace('&', "&amp;"))));
    let shown = open(&api, &result).await;
    assert!(shown.has("connected-page") && shown.has("connected-query"), "{}", shown.html);
    assert!(shown.html.contains(&login_id));
    assert!(shown.events.is_empty(), "REDIRECT was posted once, before");
}

#[tokio::test]
async fn wrong_passwords_end_the_flow_at_maximum_retry() {
    let api = Api::with(open_config());
    let mut page = open(&api, "/v2/?consentEnable=false&institution=FlinksCapital&maximumRetry=2").await;
    page = send(&api, &page, &[("action", "credentials"), ("username", "Greatday"), ("password", "nope")]).await;
    assert_eq!(page.steps(), ["ERROR", "COMPONENT_LOAD_CREDENTIAL_RETRY"]);
    assert_eq!(page.events[0]["flinksCode"], "INVALID_PASSWORD");
    assert!(page.has("credential-error") && page.has("password"));
    assert!(!page.html.contains("nope"), "the password is never shown again");
    page = send(&api, &page, &[("action", "credentials"), ("username", "Greatday"), ("password", "nope")]).await;
    assert_eq!(page.steps(), ["MAXIMUM_RETRY_REACHED"]);
    assert!(page.has("error-page") && page.flow.is_none());
}

#[tokio::test]
async fn the_token_is_required_checked_and_single_use() {
    let api = Api::with(SandboxConfig::default());
    let missing = open(&api, "/v2/?demo=true").await;
    assert!(missing.has("error-page") && missing.html.contains("missing"), "{}", missing.html);
    assert_eq!(missing.events[1]["flinksCode"], "UNAUTHORIZED");
    let token = api.token().await;
    let first = open(&api, &format!("/v2/?demo=true&authorizeToken={token}")).await;
    assert!(first.has("consent-page"), "{}", first.html);
    let again = open(&api, &format!("/v2/?demo=true&authorizeToken={token}")).await;
    assert!(again.has("error-page") && again.html.contains("used already"), "{}", again.html);
    // The flow it opened goes on to a session, with tokens of its own.
    let mut page = send(&api, &first, &[("action", "consent")]).await;
    page = send(&api, &page, &[("action", "institution"), ("institution", INSTITUTION)]).await;
    page =
        send(&api, &page, &[("action", "credentials"), ("username", "greatday_nomfa"), ("password", "Everyday")]).await;
    assert_eq!(page.steps(), ["REDIRECT"], "{}", page.html);
    // The request log has the widget's requests, their fields with every secret masked.
    let logged: Vec<_> = api.sandbox.requests().into_iter().filter(|entry| entry.path.starts_with("/v2/")).collect();
    let log = format!("{logged:?}");
    assert!(!log.contains(&token) && !log.contains("Everyday"), "{log}");
    assert_eq!(logged[1].body.as_ref().unwrap()["authorizeToken"], "***");
    let login = logged.last().unwrap();
    assert_eq!(login.body.as_ref().unwrap()["password"], "***");
    assert_eq!(login.username.as_deref(), Some("greatday_nomfa"));
    assert_eq!(login.login_id.as_deref(), page.events[0]["loginId"].as_str());
}

#[tokio::test]
async fn product_type_switches_lists_only_with_investments_enabled() {
    let api = Api::with(open_config());
    let investment = open(&api, "/v2/?demo=true&consentEnable=false&productType=Investment").await;
    assert!(investment.html.contains("data-product=\"investment\"") && investment.has("institution-Questrade"));
    assert!(investment.has("institution-FlinksCapital"));
    let disabled = Api::with(SandboxConfig { investments: false, ..open_config() });
    let banking = open(&disabled, "/v2/?demo=true&consentEnable=false&productType=investment").await;
    assert!(banking.html.contains("data-product=\"banking\"") && banking.has("institution-RBC"));
    let hidden = open(&api, "/v2/?consentEnable=false").await;
    assert!(!hidden.has("institution-FlinksCapital"), "the test institution only with demo=true");
}

#[tokio::test]
async fn the_account_selector_sends_the_chosen_accounts() {
    let api = Api::with(open_config());
    let form = open(
        &api,
        "/v2/?consentEnable=false&institution=FlinksCapital&accountSelectorEnable=true&accountSelectorMultiple=true&redirectUrl=http://127.0.0.1:9/x",
    )
    .await;
    let accounts =
        send(&api, &form, &[("action", "credentials"), ("username", "greatday_nomfa"), ("password", "Everyday")]).await;
    assert_eq!(accounts.steps(), ["COMPONENT_LOAD_ACCOUNT_SELECTION"]);
    let ids: Vec<String> = accounts
        .html
        .split("name=\"account\" value=\"")
        .skip(1)
        .map(|rest| rest.split('"').next().unwrap().to_owned())
        .collect();
    assert!(ids.len() >= 2, "{}", accounts.html);
    let done = send(&api, &accounts, &[("action", "accounts"), ("account", &ids[0]), ("account", &ids[1])]).await;
    let redirect = &done.events[0];
    assert_eq!(redirect["accountId"], serde_json::json!([ids[0], ids[1]]));
    let url = redirect["url"].as_str().unwrap();
    assert!(url.ends_with(&format!("&accountId={}&accountId={}", ids[0], ids[1])), "{url}");
    assert!(done.html.contains("data-top=\"true\""), "innerRedirect absent: the top window goes");
}

#[tokio::test]
async fn the_widget_is_served_at_its_other_paths_and_refuses_bad_parameters() {
    let api = Api::with(open_config());
    assert!(open(&api, "/v2/Testing/?demo=true").await.has("consent-page"));
    assert!(open(&api, "/?demo=true").await.has("consent-page"));
    let bad = open(&api, "/v2/?demo=maybe").await;
    assert!(bad.has("error-page") && bad.html.contains("demo must be true or false"), "{}", bad.html);
    let (status, body) = api.send_url(reqwest::Method::GET, format!("{}/", api.sandbox.url()), &[], None).await;
    assert_eq!(status, 404, "{body}");
}

#[tokio::test]
async fn declining_consent_ends_the_flow() {
    let api = Api::with(open_config());
    let first = open(&api, "/v2/?demo=true&customerName=Acme").await;
    assert!(first.html.contains("Acme uses the bankfeed sandbox"));
    assert!(first.html.contains(r#"data-event="{&quot;step&quot;:&quot;COMPONENT_DENY_CONSENT&quot;}""#));
    let declined = send(&api, &first, &[("action", "deny")]).await;
    assert!(declined.has("error-page") && declined.flow.is_none(), "{}", declined.html);
    // The flow is gone: its forms lead nowhere.
    let gone = send(&api, &first, &[("action", "consent")]).await;
    assert!(gone.has("error-page") && gone.html.contains("SESSION_EXPIRED"), "{}", gone.html);
}

#[tokio::test]
async fn french_asks_the_challenges_in_french() {
    let api = Api::with(open_config());
    let form = open(&api, "/v2/?consentEnable=false&institution=FlinksCapital&language=fr").await;
    assert!(form.html.contains(r#"<html lang="fr">"#));
    let mfa =
        send(&api, &form, &[("action", "credentials"), ("username", "mfa_multiple_choice"), ("password", "Everyday")])
            .await;
    assert!(mfa.html.contains("Dans laquelle de ces rues avez-vous habité?"), "{}", mfa.html);
    let done = send(&api, &mfa, &[("action", "mfa"), ("answer-0", "1")]).await;
    assert_eq!(done.steps(), ["REDIRECT"], "{}", done.html);
}

#[tokio::test]
async fn the_header_and_close_button_follow_their_parameters() {
    let api = Api::with(open_config());
    let plain = open(&api, "/v2/?demo=true").await;
    assert!(plain.has("widget-header-text") && !plain.has("widget-close"));
    assert!(plain.html.contains(r#"data-stringify="false""#));
    let bare = open(&api, "/v2/?demo=true&headerEnable=false&closeEnable=true&stringify=true").await;
    assert!(bare.html.contains(r#"data-stringify="true""#));
    assert!(!bare.has("widget-header-text") && bare.has("widget-close"));
    assert!(bare.html.contains("COMPONENT_CLOSE_SESSION"));
}

#[tokio::test]
async fn the_way_back_leads_to_the_list_unless_back_enable_is_false() {
    let api = Api::with(open_config());
    let list = open(&api, "/v2/?demo=true&consentEnable=false").await;
    let form = send(&api, &list, &[("action", "institution"), ("institution", INSTITUTION)]).await;
    assert!(form.has("credential-back"));
    let again = send(&api, &form, &[("action", "back")]).await;
    assert_eq!(again.steps(), ["COMPONENT_LOAD_INSTITUTION_SELECTOR"]);
    let list = open(&api, "/v2/?demo=true&consentEnable=false&backEnable=false").await;
    let form = send(&api, &list, &[("action", "institution"), ("institution", INSTITUTION)]).await;
    assert!(!form.has("credential-back"));
    let same = send(&api, &form, &[("action", "back")]).await;
    assert!(same.has("credential-page"), "a back form is not taken without backEnable");
}

#[tokio::test]
async fn an_unknown_preselected_institution_is_named() {
    let api = Api::with(open_config());
    let page = open(&api, "/v2/?institution=RBC").await;
    assert!(page.has("error-page") && page.html.contains("&quot;RBC&quot;"), "{}", page.html);
    assert_eq!(page.events[1]["flinksCode"], "INVALID_INSTITUTION");
}

#[tokio::test]
async fn a_refused_user_ends_on_an_error_page_with_the_code() {
    let api = Api::with(open_config());
    let form = open(&api, "/v2/?consentEnable=false&institution=FlinksCapital").await;
    let page = send(
        &api,
        &form,
        &[("action", "credentials"), ("username", "test_disabled_account"), ("password", "Everyday")],
    )
    .await;
    assert!(page.has("error-page"), "{}", page.html);
    assert_eq!(page.events[0]["flinksCode"], "DISABLED_LOGIN");
}

#[tokio::test]
async fn wrong_answers_are_retried_as_the_api_allows_then_end_the_flow() {
    let api = Api::with(SandboxConfig { max_wrong_answers: 2, ..open_config() });
    let form = open(&api, "/v2/?consentEnable=false&institution=FlinksCapital").await;
    let mut page =
        send(&api, &form, &[("action", "credentials"), ("username", "mfa_multiple_choice"), ("password", "Everyday")])
            .await;
    page = send(&api, &page, &[("action", "mfa"), ("answer-0", "0")]).await;
    assert_eq!(page.steps(), ["ERROR", "COMPONENT_LOAD_MFA_RETRY"]);
    page = send(&api, &page, &[("action", "mfa"), ("answer-0", "0")]).await;
    assert!(page.has("error-page") && page.flow.is_none(), "{}", page.html);
    assert_eq!(page.events[0]["flinksCode"], "INVALID_SECURITY_RESPONSE_NO_RETRY");
}

#[tokio::test]
async fn an_expired_or_unknown_token_is_named() {
    let api = Api::with(SandboxConfig { token_ttl: std::time::Duration::from_millis(50), ..SandboxConfig::default() });
    let token = api.token().await;
    tokio::time::sleep(std::time::Duration::from_millis(120)).await;
    let expired = open(&api, &format!("/v2/?demo=true&authorizeToken={token}")).await;
    assert!(expired.has("error-page") && expired.html.contains("has expired"), "{}", expired.html);
    assert!(!expired.html.contains(&token), "the token is never shown");
    let unknown = open(&api, &format!("/v2/?demo=true&authorizeToken={}", uuid_like())).await;
    assert!(unknown.html.contains("was not issued by GenerateAuthorizeToken"), "{}", unknown.html);
    let garbage = open(&api, "/v2/?demo=true&authorizeToken=hello").await;
    assert!(garbage.html.contains("is not a token"), "{}", garbage.html);
}

fn uuid_like() -> &'static str {
    "0b9f4c1e-5d2a-4f3b-9a7c-1e2d3c4b5a69"
}

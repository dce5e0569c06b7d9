//! The widget's pages as HTML: one card, as the hosted widget shows it, with a header, a title
//! and the page's form. Everything is inline (style, script, the images as `data:` URLs): the
//! pages load nothing from anywhere, so they work offline. Every element a test or a person
//! looks for has a stable id (docs/sandbox.md#pages-and-element-ids).

use std::fmt::Write as _;

use serde_json::Value;

use super::events;
use super::flow::{AccountChoice, Chrome, Navigate, Shown, View};
use super::lists::Entry;
use super::login::Asked;
use super::params::Product;
use super::test_users::test_users;
use super::texts::{self, fill, Texts};
use crate::operations::challenge::{
    IMAGE_SELECTION, MULTIPLE_CHOICE, MULTIPLE_CHOICE_MULTIPLE_ANSWERS, QUESTION_AND_ANSWER, TEXT_OR_CALL,
    WAIT_UNTIL_EU_ACCEPT,
};

/// The card's look: a white card on a grey page, as the hosted widget.
const STYLE: &str = include_str!("widget.css");

/// Posts the page's events to the parent (and the opener), posts each form's event just before
/// it is sent, and performs the final redirect.
const SCRIPT: &str = include_str!("widget.js");

/// Where every form of a flow posts.
pub(crate) fn action_of(flow: &str) -> String {
    format!("/v2/flow/{flow}")
}

/// The whole page for `shown`.
pub(crate) fn render(shown: &Shown) -> String {
    let t = texts::of(shown.chrome.french);
    let (page_id, title, body) = match &shown.view {
        View::Consent { customer_name } => {
            ("consent-page", t.consent_title.to_owned(), consent(shown, t, customer_name.as_deref()))
        }
        View::Institutions { product, entries, filter } => {
            let title = match product {
                Product::Banking => t.institutions_title,
                Product::Investment => t.investment_institutions_title,
            };
            ("institution-page", title.to_owned(), institutions(shown, t, *product, entries, *filter))
        }
        View::Credentials { institution, username, error, can_go_back } => (
            "credential-page",
            fill(t.sign_in_to, &[("institution", display_name(institution))]),
            credentials(shown, t, institution, username, error.as_deref(), *can_go_back),
        ),
        View::Mfa { round, error } => {
            ("mfa-page", mfa_title(t, round).to_owned(), mfa(shown, t, round, error.as_deref()))
        }
        View::Accounts { accounts, multiple, currency } => (
            "account-page",
            if *multiple { t.accounts_title } else { t.account_title }.to_owned(),
            account_selection(shown, t, accounts, *multiple, currency.as_deref()),
        ),
        View::Connected { url, navigate, .. } => {
            ("connected-page", t.connected_title.to_owned(), connected(t, url, navigate.as_ref()))
        }
        View::Error { title, message, code } => ("error-page", title.clone(), error_page(t, message, code.as_deref())),
    };
    shell(&shown.chrome, t, &shown.events, page_id, &title, &body)
}

fn shell(chrome: &Chrome, t: &Texts, on_load: &[Value], page_id: &str, title: &str, body: &str) -> String {
    let lang = t.lang;
    let events = serde_json::to_string(on_load).unwrap_or_else(|_| "[]".to_owned()).replace('<', "\\u003c");
    let mut header = String::new();
    if chrome.header {
        header.push_str(
            r#"<header id="widget-header"><span class="lock" aria-hidden="true"><svg viewBox="0 0 24 24" width="16" height="16"><path fill="currentColor" d="M12 2a5 5 0 0 0-5 5v3H6a2 2 0 0 0-2 2v8a2 2 0 0 0 2 2h12a2 2 0 0 0 2-2v-8a2 2 0 0 0-2-2h-1V7a5 5 0 0 0-5-5zm-3 8V7a3 3 0 0 1 6 0v3z"/></svg></span><span id="widget-header-text">"#,
        );
        let _ = write!(header, "{} · {}</span>", text(t.secure_connection), text(t.sandbox));
    } else {
        header.push_str(r#"<header id="widget-header" class="bare">"#);
    }
    if chrome.close {
        let close = match chrome.institution {
            Some(institution) => events::at(events::CLOSE_SESSION, institution),
            None => events::step(events::CLOSE_SESSION),
        };
        let _ = write!(
            header,
            r#"<button type="button" id="widget-close" aria-label="{}" data-event="{}">×</button>"#,
            attr(t.close),
            attr(&close.to_string())
        );
    }
    header.push_str("</header>");
    format!(
        r#"<!DOCTYPE html>
<html lang="{lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title_text} · {sandbox}</title>
<style>{STYLE}</style>
</head>
<body>
<main id="widget" class="card" data-stringify="{stringify}">
{header}
<section id="{page_id}" class="page">
<h1 id="page-title">{title_text}</h1>
{body}
</section>
</main>
<script type="application/json" id="widget-events">{events}</script>
<script>{SCRIPT}</script>
</body>
</html>
"#,
        title_text = text(title),
        sandbox = text(t.sandbox),
        stringify = chrome.stringify,
    )
}

fn form_open(shown: &Shown, id: &str, event: Option<&Value>) -> String {
    let flow = shown.flow.as_deref().unwrap_or_default();
    let event = event.map(|event| format!(r#" data-event="{}""#, attr(&event.to_string()))).unwrap_or_default();
    format!(r#"<form id="{id}" method="post" action="{}"{event} autocomplete="off">"#, attr(&action_of(flow)))
}

fn consent(shown: &Shown, t: &Texts, customer_name: Option<&str>) -> String {
    let who = customer_name.unwrap_or(t.consent_who);
    let accept = events::step(events::ACCEPT_CONSENT);
    let deny = events::step(events::DENY_CONSENT);
    format!(
        r#"<p id="consent-text">{consent_text}</p>
<ul class="consent-list"><li>{item0}</li><li>{item1}</li><li>{item2}</li></ul>
<p class="fine">{fine}</p>
{form}<button type="submit" id="consent-accept" class="primary" name="action" value="consent" data-event="{accept}">{continue_}</button>
<button type="submit" id="consent-deny" class="secondary" name="action" value="deny" data-event="{deny}">{decline}</button>
</form>"#,
        consent_text = text(&fill(t.consent_text, &[("who", who)])),
        item0 = text(t.consent_items[0]),
        item1 = text(t.consent_items[1]),
        item2 = text(t.consent_items[2]),
        fine = text(t.consent_fine),
        continue_ = text(t.continue_),
        decline = text(t.decline),
        form = form_open(shown, "consent-form", None),
        accept = attr(&accept.to_string()),
        deny = attr(&deny.to_string()),
    )
}

fn institutions(shown: &Shown, t: &Texts, product: Product, entries: &[Entry], filter: bool) -> String {
    let mut html = String::new();
    if filter {
        let _ = write!(
            html,
            r#"<input type="search" id="institution-search" placeholder="{}" aria-label="{}">"#,
            attr(t.search_placeholder),
            attr(t.search_label),
        );
    }
    html.push_str(&form_open(shown, "institution-form", None));
    html.push_str(r#"<input type="hidden" name="action" value="institution">"#);
    let product = match product {
        Product::Banking => "banking",
        Product::Investment => "investment",
    };
    let _ = write!(html, r#"<ul id="institution-list" class="institutions" data-product="{product}">"#);
    for entry in entries {
        let event = events::at(events::INSTITUTION_SELECTED, entry.id);
        let note = if entry.available {
            String::new()
        } else {
            format!(r#"<span class="note">{}</span>"#, text(t.not_in_sandbox))
        };
        let disabled = if entry.available { "" } else { " disabled" };
        let _ = write!(
            html,
            r#"<li><button type="submit" class="institution" id="institution-{id}" name="institution" value="{id}" data-event="{event}"{disabled}><span class="logo" aria-hidden="true">{initials}</span><span class="name">{name}</span>{note}</button></li>"#,
            id = attr(entry.id),
            event = attr(&event.to_string()),
            initials = text(&initials(entry.name)),
            name = text(entry.name),
        );
    }
    html.push_str("</ul></form>");
    if entries.is_empty() {
        let _ = write!(html, r#"<p class="fine" id="institution-empty">{}</p>"#, text(t.no_institution));
    }
    html
}

fn credentials(
    shown: &Shown,
    t: &Texts,
    institution: &str,
    username: &str,
    error: Option<&str>,
    can_go_back: bool,
) -> String {
    let event = events::at(events::SUBMIT_CREDENTIAL, institution);
    let mut html = error_note("credential-error", error);
    html.push_str(&form_open(shown, "credential-form", Some(&event)));
    let _ = write!(
        html,
        r#"<input type="hidden" name="action" value="credentials">
<label for="username">{username_label}</label>
<input type="text" id="username" name="username" value="{username}" autocomplete="off" required>
<label for="password">{password_label}</label>
<input type="password" id="password" name="password" autocomplete="off" required>
<button type="submit" id="credential-submit" class="primary">{continue_}</button>
</form>"#,
        username = attr(username),
        username_label = text(t.username),
        password_label = text(t.password),
        continue_ = text(t.continue_),
    );
    if can_go_back {
        html.push_str(&form_open(shown, "credential-back-form", None));
        let _ = write!(
            html,
            r#"<input type="hidden" name="action" value="back"><button type="submit" id="credential-back" class="link">{}</button></form>"#,
            text(t.other_institution)
        );
    }
    html.push_str(&test_users_hint(t));
    html
}

/// The sandbox's test users, their password and their answers, under the sign-in form: a person
/// at the widget needs nothing else to get through (docs/sandbox.md#the-hosted-widget).
fn test_users_hint(t: &Texts) -> String {
    let intro = fill(
        &text(t.test_users),
        &[
            ("password", &format!("<code>{}</code>", text(crate::world::users::PASSWORD))),
            ("command", "<code>bankfeed users</code>"),
        ],
    );
    let mut html = format!(r#"<aside id="sandbox-users" class="hint"><p>{intro}</p><ul>"#);
    for user in test_users() {
        let _ = write!(html, r#"<li><code class="user">{}</code>"#, text(user.username));
        if !user.answers.is_empty() {
            let answers: Vec<String> = user.answers.iter().map(|answer| text(answer)).collect();
            let _ = write!(html, r#" <span class="answers">{}</span>"#, answers.join(" · "));
        }
        html.push_str("</li>");
    }
    html.push_str("</ul></aside>");
    html
}

fn mfa_title(t: &Texts, round: &[Asked]) -> &'static str {
    match round.first().map(|asked| asked.kind.as_str()) {
        Some(IMAGE_SELECTION) => t.image_title,
        Some(TEXT_OR_CALL) => t.text_or_call_title,
        Some(WAIT_UNTIL_EU_ACCEPT) => t.trusted_device_title,
        Some(QUESTION_AND_ANSWER) if round.iter().all(|asked| !asked.choices.is_empty()) => t.new_questions_title,
        _ => t.mfa_title,
    }
}

fn mfa(shown: &Shown, t: &Texts, round: &[Asked], error: Option<&str>) -> String {
    let institution = shown.chrome.institution.unwrap_or(crate::server::reply::INSTITUTION);
    let event = events::at(events::SUBMIT_MFA, institution);
    let mut html = error_note("mfa-error", error);
    html.push_str(&form_open(shown, "mfa-form", Some(&event)));
    html.push_str(r#"<input type="hidden" name="action" value="mfa">"#);
    // A round answered by its own buttons (the image grid, Text or Call, the trusted device)
    // needs no Continue button of its own.
    let mut own_buttons = true;
    for (i, asked) in round.iter().enumerate() {
        let _ = write!(
            html,
            r#"<fieldset class="challenge" id="challenge-{i}" data-type="{kind}"><legend id="prompt-{i}">{prompt}</legend>"#,
            kind = attr(&asked.kind),
            prompt = text(&asked.prompt),
        );
        match asked.kind.as_str() {
            IMAGE_SELECTION => {
                html.push_str(r#"<div class="images">"#);
                for (j, image) in asked.choices.iter().enumerate() {
                    let _ = write!(
                        html,
                        r#"<button type="submit" class="image" id="image-{i}-{j}" name="answer-{i}" value="{j}" aria-label="{label}"><img alt="{label}" src="data:image/png;base64,{image}"></button>"#,
                        label = attr(&fill(t.image, &[("n", &(j + 1).to_string())])),
                        image = attr(image),
                    );
                }
                html.push_str("</div>");
            }
            TEXT_OR_CALL => {
                for (j, phone) in asked.choices.iter().enumerate() {
                    let checked = if j == 0 { " checked" } else { "" };
                    let _ = write!(
                        html,
                        r#"<label class="choice"><input type="radio" id="phone-{i}-{j}" name="phone-{i}" value="{j}"{checked}> {phone}</label>"#,
                        phone = text(phone),
                    );
                }
                let _ = write!(
                    html,
                    r#"<div class="row"><button type="submit" id="mfa-text" class="primary" name="how-{i}" value="Text">{text_me}</button><button type="submit" id="mfa-call" class="secondary" name="how-{i}" value="Call">{call_me}</button></div>"#,
                    text_me = text(t.text_me),
                    call_me = text(t.call_me),
                );
            }
            WAIT_UNTIL_EU_ACCEPT => {
                let _ = write!(
                    html,
                    r#"<p class="fine">{}</p><button type="submit" id="mfa-confirm" class="primary">{}</button>"#,
                    text(t.trusted_device_note),
                    text(t.confirmed),
                );
            }
            MULTIPLE_CHOICE | MULTIPLE_CHOICE_MULTIPLE_ANSWERS => {
                own_buttons = false;
                let input = if asked.kind == MULTIPLE_CHOICE { "radio" } else { "checkbox" };
                for (j, choice) in asked.choices.iter().enumerate() {
                    let _ = write!(
                        html,
                        r#"<label class="choice"><input type="{input}" id="answer-{i}-{j}" name="answer-{i}" value="{j}"> {choice}</label>"#,
                        choice = text(choice),
                    );
                }
            }
            QUESTION_AND_ANSWER if !asked.choices.is_empty() => {
                own_buttons = false;
                let _ = write!(
                    html,
                    r#"<label for="question-{i}">{question}</label><select id="question-{i}" name="question-{i}" required><option value="">{choose}</option>"#,
                    question = text(t.question),
                    choose = text(t.choose_question),
                );
                for (j, question) in asked.choices.iter().enumerate() {
                    let _ = write!(html, r#"<option value="{j}">{question}</option>"#, question = text(question));
                }
                let _ = write!(
                    html,
                    r#"</select><label for="answer-{i}">{answer}</label><input type="text" id="answer-{i}" name="answer-{i}" autocomplete="off" required>"#,
                    answer = text(t.answer),
                );
            }
            _ => {
                own_buttons = false;
                let _ = write!(
                    html,
                    r#"<input type="text" id="answer-{i}" name="answer-{i}" aria-labelledby="prompt-{i}" autocomplete="off">"#
                );
            }
        }
        html.push_str("</fieldset>");
    }
    if !own_buttons {
        let _ = write!(html, r#"<button type="submit" id="mfa-submit" class="primary">{}</button>"#, text(t.continue_));
    }
    html.push_str("</form>");
    html
}

fn account_selection(
    shown: &Shown,
    t: &Texts,
    accounts: &[AccountChoice],
    multiple: bool,
    currency: Option<&str>,
) -> String {
    let institution = shown.chrome.institution.unwrap_or(crate::server::reply::INSTITUTION);
    let event = events::at(events::ACCOUNT_SELECTED, institution);
    // The script adds the accounts checked to the event (`accountId`) as the form is sent.
    let mut html = form_open(shown, "account-form", Some(&event));
    html.push_str(r#"<input type="hidden" name="action" value="accounts"><ul id="account-list" class="accounts">"#);
    let input = if multiple { "checkbox" } else { "radio" };
    for (index, account) in accounts.iter().enumerate() {
        let checked = if index == 0 && !multiple { " checked" } else { "" };
        let _ = write!(
            html,
            r#"<li><label class="account"><input type="{input}" id="account-{id}" name="account" value="{id}"{checked}><span class="name">{title}</span><span class="number">•••• {tail}</span><span class="balance">{balance} {currency}</span></label></li>"#,
            id = attr(&account.id),
            title = text(&account.title),
            tail = text(&account.number_tail),
            balance = text(&account.balance),
            currency = account.currency,
        );
    }
    html.push_str("</ul>");
    if accounts.is_empty() {
        let none = match currency {
            Some(currency) => fill(t.no_account_in, &[("currency", &currency.to_uppercase())]),
            None => t.no_account.to_owned(),
        };
        let _ = write!(html, r#"<p class="fine" id="account-empty">{}</p>"#, text(&none));
    }
    let _ = write!(
        html,
        r#"<button type="submit" id="account-submit" class="primary">{}</button></form>"#,
        text(t.continue_)
    );
    html
}

fn connected(t: &Texts, url: &str, navigate: Option<&Navigate>) -> String {
    let mut html =
        format!(r#"<div class="done" aria-hidden="true">✓</div><p id="connected-text">{}</p>"#, text(t.connected_text));
    if let Some(navigate) = navigate {
        let target = if navigate.top { "_top" } else { "_self" };
        let _ = write!(
            html,
            r#"<p class="fine">{back} <a id="redirect-link" href="{url}" target="{target}" data-navigate="{url}" data-top="{top}">{continue_}</a></p>"#,
            back = text(t.taking_you_back),
            continue_ = text(t.continue_),
            url = attr(&navigate.url),
            top = navigate.top,
        );
    } else {
        let _ = write!(
            html,
            r#"<p class="fine">{} <code id="connected-query">{}</code></p>"#,
            text(t.sent_to_app),
            text(url)
        );
    }
    html
}

fn error_page(t: &Texts, message: &str, code: Option<&str>) -> String {
    let mut html = format!(r#"<p id="error-message" class="error">{}</p>"#, text(message));
    if let Some(code) = code {
        let _ = write!(html, r#"<p class="fine">{} <code id="error-code">{}</code></p>"#, text(t.code), text(code));
    }
    html
}

fn error_note(id: &str, error: Option<&str>) -> String {
    error.map(|error| format!(r#"<p id="{id}" class="error" role="alert">{}</p>"#, text(error))).unwrap_or_default()
}

/// How an institution is named on the page (`FlinksCapital` is shown `Flinks Capital`).
fn display_name(id: &str) -> &str {
    if id == crate::server::reply::INSTITUTION {
        super::lists::TEST_INSTITUTION_NAME
    } else {
        id
    }
}

fn initials(name: &str) -> String {
    name.split_whitespace().filter_map(|word| word.chars().next()).take(2).collect()
}

/// `value` escaped for an element's text.
fn text(value: &str) -> String {
    attr(value)
}

/// `value` escaped for a double-quoted attribute (and for text).
fn attr(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_escaped() {
        assert_eq!(attr(r#"<a href="x">&'"#), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
    }

    #[test]
    fn the_events_cannot_close_their_script() {
        let shown = Shown {
            flow: None,
            chrome: Chrome::default(),
            view: View::Error { title: "t".into(), message: "m".into(), code: None },
            events: vec![serde_json::json!({"step": "</script><script>alert(1)</script>"})],
        };
        let page = render(&shown);
        assert!(!page.contains("</script><script>alert"), "{page}");
        assert!(page.contains(r#"id="error-page""#));
    }

    #[test]
    fn the_sign_in_page_names_the_test_users_their_password_and_answers() {
        let shown = Shown {
            flow: Some("f".into()),
            chrome: Chrome { header: false, ..Chrome::default() },
            view: View::Credentials {
                institution: "FlinksCapital",
                username: String::new(),
                error: None,
                can_go_back: false,
            },
            events: Vec::new(),
        };
        let page = render(&shown);
        for shown in [
            "This is the bankfeed sandbox",
            "<code>Everyday</code>",
            "<code>bankfeed users</code>",
            r#"<code class="user">Greatday</code> <span class="answers">Montreal · Canada · Triangle</span>"#,
            r#"<code class="user">mfa_image</code> <span class="answers">Montreal · image 8</span>"#,
            r#"<code class="user">greatday_nomfa</code></li>"#,
        ] {
            assert!(page.contains(shown), "{shown} not in {page}");
        }
    }

    #[test]
    fn the_page_loads_nothing_from_elsewhere() {
        let shown = Shown {
            flow: Some("f".into()),
            chrome: Chrome { header: true, close: true, ..Chrome::default() },
            view: View::Consent { customer_name: Some("Acme".into()) },
            events: Vec::new(),
        };
        let page = render(&shown);
        for outside in ["http://", "https://", "//fonts", "<link", "src=\"http"] {
            assert!(!page.contains(outside), "{outside} in {page}");
        }
    }
}

//! One person's way through the widget, from the URL that opened it to the redirect: which page
//! comes next, what each form's answer does, and which events each page posts
//! (docs/sandbox.md#the-hosted-widget). Flows are kept by an unguessable id that every form
//! carries; the pages only render what [`Shown`] says.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::events::{self, Connected};
use super::lists::{self, Entry};
use super::login::{self, Answer, Asked};
use super::params::{Params, Product};
use super::redirect;
use super::texts::{self, fill};
use crate::operations::challenge::{
    IMAGE_SELECTION, MULTIPLE_CHOICE, MULTIPLE_CHOICE_MULTIPLE_ANSWERS, QUESTION_AND_ANSWER, TEXT_OR_CALL,
    WAIT_UNTIL_EU_ACCEPT,
};
use crate::server::reply::INSTITUTION;
use crate::world::state::Shared;
use bankfeed::sync::lock;

/// A flow left alone this long is forgotten: a person takes minutes, not hours.
const FLOW_TTL: Duration = Duration::from_secs(60 * 60);

/// At most this many flows are kept; past it the oldest go first.
const MAX_FLOWS: usize = 10_000;

/// At most this many used widget tokens are remembered, to say "used already"; past it they are
/// forgotten, and a token used again is still refused (as unknown: it was taken from the tokens
/// Authorize keeps).
const MAX_USED_TOKENS: usize = 100_000;

/// The flows in progress, and the widget tokens already used.
#[derive(Default)]
pub(crate) struct Flows {
    /// The flows in progress, by id.
    in_progress: Mutex<HashMap<String, Flow>>,
    used_tokens: Mutex<HashSet<u128>>,
    /// The look (language included) of the last [`MAX_FLOWS`] flows that connected, by LoginId,
    /// newest last: their result page keeps it (docs/sandbox.md#the-redirect).
    ended: Mutex<VecDeque<(String, Chrome)>>,
}

/// Where a flow is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Consent,
    Institutions,
    Credentials,
    Mfa,
    Accounts,
}

/// One flow in progress.
struct Flow {
    params: Params,
    /// The list shown: investment only when asked for and enabled.
    product: Product,
    stage: Stage,
    institution: Option<&'static str>,
    /// The last username typed, shown again on a retry (a username is no secret; the password
    /// never leaves the request that carried it).
    username: String,
    wrong_credentials: u32,
    request_id: Option<String>,
    round: Vec<Asked>,
    login_id: Option<String>,
    accounts: Vec<AccountChoice>,
    total_accounts: usize,
    touched: Instant,
}

/// An account the selector offers.
#[derive(Debug, Clone)]
pub(crate) struct AccountChoice {
    pub id: String,
    pub title: String,
    pub number_tail: String,
    pub balance: String,
    pub currency: &'static str,
}

/// What the header of every page shows.
#[derive(Debug, Clone, Default)]
#[expect(clippy::struct_excessive_bools, reason = "one field per parameter of the page's look, each independent")]
pub(crate) struct Chrome {
    pub header: bool,
    pub close: bool,
    pub french: bool,
    /// Events posted as JSON text rather than objects (`stringify=true`).
    pub stringify: bool,
    pub institution: Option<&'static str>,
}

/// A page to show: the flow its forms post to, what it shows, and the events it posts on load.
pub(crate) struct Shown {
    pub flow: Option<String>,
    pub chrome: Chrome,
    pub view: View,
    pub events: Vec<Value>,
}

/// What a page shows.
pub(crate) enum View {
    Consent { customer_name: Option<String> },
    Institutions { product: Product, entries: Vec<Entry>, filter: bool },
    Credentials { institution: &'static str, username: String, error: Option<String>, can_go_back: bool },
    Mfa { round: Vec<Asked>, error: Option<String> },
    Accounts { accounts: Vec<AccountChoice>, multiple: bool, currency: Option<String> },
    Connected { url: String, navigate: Option<Navigate>, login_id: String },
    Error { title: String, message: String, code: Option<String> },
}

/// Where the final page sends the browser.
pub(crate) struct Navigate {
    pub url: String,
    /// The top window (innerRedirect false or absent), or only the frame the widget is in.
    pub top: bool,
}

impl Flows {
    /// The first page of a flow for the URL's query: refused parameters and tokens end it at once.
    pub(crate) fn begin(&self, shared: &Shared, pairs: &[(String, String)]) -> Shown {
        let mut events = vec![events::step(events::APP_MOUNTED)];
        let params = match Params::read(pairs) {
            Ok(params) => params,
            Err(bad) => {
                events.push(events::error(events::ERROR, "INVALID_REQUEST", None, None));
                // In French when `language=fr` could be read: a refused `language` is English.
                let chrome = Chrome { french: bad.french, ..Chrome::default() };
                let title = texts::of(bad.french).bad_link_title;
                return failed(chrome, events, title, bad.message, "INVALID_REQUEST");
            }
        };
        let t = texts::of(params.french);
        let chrome = Chrome {
            header: params.header,
            close: params.close,
            french: params.french,
            stringify: params.stringify,
            institution: None,
        };
        if let Err(problem) = self.admit(shared, params.authorize_token.as_deref(), params.french) {
            events.push(events::error(events::ERROR, "UNAUTHORIZED", None, None));
            return failed(chrome, events, t.unusable_link_title, problem, "UNAUTHORIZED");
        }
        let mut preselected = None;
        if let Some(given) = params.institution.as_deref() {
            let Some(institution) = lists::preselected(given) else {
                events.push(events::error(events::ERROR, "INVALID_INSTITUTION", None, None));
                let message = fill(
                    t.unknown_institution,
                    &[
                        ("given", &format!("{given:?}")),
                        ("institution", INSTITUTION),
                        ("number", &crate::server::reply::INSTITUTION_ID.to_string()),
                    ],
                );
                return failed(chrome, events, t.unknown_institution_title, message, "INVALID_INSTITUTION");
            };
            preselected = Some(institution);
        }
        let product = lists::product_shown(&params, shared.config.investments);
        let mut flow = Flow {
            params,
            product,
            stage: Stage::Consent,
            institution: preselected,
            username: String::new(),
            wrong_credentials: 0,
            request_id: None,
            round: Vec::new(),
            login_id: None,
            accounts: Vec::new(),
            total_accounts: 0,
            touched: Instant::now(),
        };
        let view = if flow.params.consent {
            events.push(events::step(events::LOAD_CONSENT));
            View::Consent { customer_name: flow.params.customer_name.clone() }
        } else {
            flow.after_consent(&mut events)
        };
        let id = self.keep(flow);
        Shown { flow: Some(id), chrome, view, events }
    }

    /// The page after a form of flow `id` was sent.
    pub(crate) async fn advance(&self, shared: &Arc<Shared>, id: &str, form: &[(String, String)]) -> Shown {
        // Taken out while it waits for Authorize, so no lock is held across the wait; a second
        // form sent meanwhile finds no flow and says so.
        let Some(mut flow) = lock(&self.in_progress).remove(id) else {
            // The flow, and with it its language, is gone: the page is in the default language.
            let events = vec![events::error(events::ERROR, "SESSION_EXPIRED", None, None)];
            let t = texts::of(false);
            return failed(Chrome::default(), events, t.ended_title, t.ended.to_owned(), "SESSION_EXPIRED");
        };
        flow.touched = Instant::now();
        let field = |name: &str| form.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str());
        let mut events = Vec::new();
        let action = field("action").unwrap_or_default();
        let view = match (flow.stage, action) {
            (Stage::Consent, "consent") => flow.after_consent(&mut events),
            (Stage::Consent, "deny") => {
                let t = texts::of(flow.params.french);
                return failed(flow.chrome(), events, t.cancelled_title, t.cancelled.to_owned(), "CONSENT_DENIED");
            }
            (Stage::Institutions, "institution") => flow.choose(field("institution").unwrap_or_default(), &mut events),
            (Stage::Credentials, "back") if flow.params.back && flow.params.institution.is_none() => {
                flow.institution = None;
                flow.institutions(&mut events)
            }
            (Stage::Credentials, "credentials") => {
                let username = field("username").unwrap_or_default().trim().to_owned();
                let password = field("password").unwrap_or_default().to_owned();
                let answer = login::with_credentials(shared, &username, &password, flow.params.french).await;
                flow.username = username;
                match flow.after_credentials(shared, answer, &mut events).await {
                    Ok(view) => view,
                    Err(ended) => return *ended,
                }
            }
            (Stage::Mfa, "mfa") => {
                let responses = responses(&flow.round, form);
                let request_id = flow.request_id.clone().unwrap_or_default();
                let answer = login::answer(shared, &request_id, responses).await;
                match flow.after_answers(shared, answer, &mut events) {
                    Ok(view) => view,
                    Err(ended) => return *ended,
                }
            }
            (Stage::Accounts, "accounts") => {
                let chosen: Vec<String> =
                    form.iter().filter(|(key, _)| key == "account").map(|(_, value)| value.clone()).collect();
                flow.after_accounts(chosen, &mut events)
            }
            // A form of an earlier page (the browser's back button): the current page again.
            _ => flow.current(&mut events),
        };
        let chrome = flow.chrome();
        if let View::Connected { login_id, .. } = &view {
            let mut ended = lock(&self.ended);
            if ended.len() >= MAX_FLOWS {
                ended.pop_front();
            }
            ended.push_back((login_id.clone(), chrome.clone()));
            drop(ended);
            return Shown { flow: None, chrome, view, events };
        }
        lock(&self.in_progress).insert(id.to_owned(), flow);
        Shown { flow: Some(id.to_owned()), chrome, view, events }
    }

    /// The look of the newest flow that connected `login_id`, for its result page.
    pub(crate) fn ended_look(&self, login_id: &str) -> Option<Chrome> {
        let ended = lock(&self.ended);
        ended.iter().rev().find(|(connected, _)| connected.eq_ignore_ascii_case(login_id)).map(|(_, look)| look.clone())
    }

    /// Keeps `flow` under a new id, forgetting flows left alone too long.
    fn keep(&self, flow: Flow) -> String {
        let id = uuid::Uuid::new_v4().simple().to_string();
        let mut flows = lock(&self.in_progress);
        let now = Instant::now();
        flows.retain(|_, flow| now.duration_since(flow.touched) < FLOW_TTL);
        if flows.len() >= MAX_FLOWS {
            let oldest = flows.iter().min_by_key(|(_, flow)| flow.touched).map(|(id, _)| id.clone());
            if let Some(oldest) = oldest {
                flows.remove(&oldest);
            }
        }
        flows.insert(id.clone(), flow);
        id
    }

    /// The widget's token check, as the sandbox's keys say (docs/sandbox.md#keys): with a secret
    /// key asked for, `authorizeToken` must be a token from GenerateAuthorizeToken, unused and not
    /// expired, and this use uses it up. The refusal names the problem, never the token.
    fn admit(&self, shared: &Shared, token: Option<&str>, french: bool) -> Result<(), String> {
        if shared.config.required_secret_key().is_none() {
            return Ok(());
        }
        let t = texts::of(french);
        let minutes = (shared.config.token_ttl.as_secs_f64() / 60.0).to_string();
        let Some(token) = token else {
            // The next step, for a person who typed the widget's URL by hand (docs/sandbox.md#the-token).
            return Err(fill(t.token_missing, &[("customer_id", &shared.config.customer_id)]));
        };
        let Some(token) = uuid::Uuid::try_parse(token.trim()).ok().map(|token| token.as_u128()) else {
            return Err(t.token_unreadable.to_owned());
        };
        if lock(&self.used_tokens).contains(&token) {
            return Err(t.token_used.to_owned());
        }
        let mut inner = shared.lock();
        if inner.token_expiry(token).is_some_and(|expires| Instant::now() >= expires) {
            return Err(fill(t.token_expired, &[("minutes", &minutes)]));
        }
        if inner.take_token(token).is_none() {
            return Err(fill(t.token_unknown, &[("minutes", &minutes)]));
        }
        drop(inner);
        let mut used = lock(&self.used_tokens);
        if used.len() >= MAX_USED_TOKENS {
            used.clear();
        }
        used.insert(token);
        Ok(())
    }
}

impl Flow {
    fn chrome(&self) -> Chrome {
        Chrome {
            header: self.params.header,
            close: self.params.close,
            french: self.params.french,
            stringify: self.params.stringify,
            institution: self.institution,
        }
    }

    /// The page of the stage the flow is at, again.
    fn current(&mut self, events: &mut Vec<Value>) -> View {
        match self.stage {
            Stage::Consent => {
                events.push(events::step(events::LOAD_CONSENT));
                View::Consent { customer_name: self.params.customer_name.clone() }
            }
            Stage::Institutions => self.institutions(events),
            Stage::Credentials => self.credentials(events, None),
            Stage::Mfa => self.mfa(events, events::LOAD_MFA, None),
            Stage::Accounts => self.account_page(events),
        }
    }

    /// Consent given (or not asked for): the list, or the credentials of a pre-selected institution.
    fn after_consent(&mut self, events: &mut Vec<Value>) -> View {
        match self.institution {
            Some(_) => self.credentials(events, None),
            None => self.institutions(events),
        }
    }

    fn institutions(&mut self, events: &mut Vec<Value>) -> View {
        self.stage = Stage::Institutions;
        events.push(events::institution_selector());
        View::Institutions {
            product: self.product,
            entries: lists::entries(self.product, self.params.demo, self.params.french),
            filter: self.params.institution_filter,
        }
    }

    fn choose(&mut self, id: &str, events: &mut Vec<Value>) -> View {
        let entries = lists::entries(self.product, self.params.demo, self.params.french);
        match entries.iter().find(|entry| entry.available && entry.id == id) {
            Some(entry) => {
                self.institution = Some(entry.id);
                self.credentials(events, None)
            }
            None => self.institutions(events),
        }
    }

    fn credentials(&mut self, events: &mut Vec<Value>, error: Option<String>) -> View {
        self.stage = Stage::Credentials;
        let institution = self.institution.unwrap_or(INSTITUTION);
        let step = if error.is_some() { events::LOAD_CREDENTIAL_RETRY } else { events::LOAD_CREDENTIAL };
        events.push(events::at(step, institution));
        View::Credentials {
            institution,
            username: self.username.clone(),
            error,
            can_go_back: self.params.back && self.params.institution.is_none(),
        }
    }

    fn mfa(&mut self, events: &mut Vec<Value>, step: &str, error: Option<String>) -> View {
        self.stage = Stage::Mfa;
        let types: Vec<String> = self.round.iter().map(|asked| asked.kind.clone()).collect();
        events.push(events::mfa(step, self.institution.unwrap_or(INSTITUTION), &types));
        View::Mfa { round: self.round.clone(), error }
    }

    /// What Authorize said to the credentials.
    async fn after_credentials(&mut self, shared: &Arc<Shared>, answer: Answer, events: &mut Vec<Value>) -> Next {
        let institution = self.institution.unwrap_or(INSTITUTION);
        let t = texts::of(self.params.french);
        match answer {
            Answer::Opened { login_id } if login::asks_when_saved(&self.username) => {
                // The sandbox asks this user's trusted-device confirmation on a live login by
                // LoginId (docs/sandbox.md#users): the widget makes that login, so its page shows.
                let answer = login::saved_live(shared, &login_id, self.params.french).await;
                self.after_answers(shared, answer, events)
            }
            Answer::Refused { code, message, request_id }
                if code == "INVALID_PASSWORD" || code == "INVALID_USERNAME" =>
            {
                self.wrong_credentials += 1;
                if self.wrong_credentials >= self.params.maximum_retry {
                    events.push(events::error(
                        events::MAXIMUM_RETRY_REACHED,
                        &code,
                        request_id.as_deref(),
                        Some(institution),
                    ));
                    let message = fill(
                        t.too_many,
                        &[
                            ("message", &message),
                            ("attempt", &self.wrong_credentials.to_string()),
                            ("maximum", &self.params.maximum_retry.to_string()),
                        ],
                    );
                    return Err(Box::new(failed(
                        self.chrome(),
                        std::mem::take(events),
                        t.too_many_title,
                        message,
                        &code,
                    )));
                }
                events.push(events::error(events::ERROR, &code, request_id.as_deref(), Some(institution)));
                let left = self.params.maximum_retry - self.wrong_credentials;
                let error = fill(t.wrong_credentials, &[("message", &message), ("left", &left.to_string())]);
                Ok(self.credentials(events, Some(error)))
            }
            other => self.after_answers(shared, other, events),
        }
    }

    /// What Authorize said to a login or to answers: the next round, the accounts, or the end.
    fn after_answers(&mut self, shared: &Shared, answer: Answer, events: &mut Vec<Value>) -> Next {
        let institution = self.institution.unwrap_or(INSTITUTION);
        let t = texts::of(self.params.french);
        match answer {
            Answer::Challenged { request_id, round } => {
                self.request_id = Some(request_id);
                self.round = round;
                Ok(self.mfa(events, events::LOAD_MFA, None))
            }
            Answer::Opened { login_id } => {
                self.login_id = Some(login_id);
                if self.params.account_selector {
                    self.load_accounts(shared);
                    Ok(self.account_page(events))
                } else {
                    Ok(self.connected(Vec::new(), events))
                }
            }
            Answer::Refused { code, message, request_id } if self.stage == Stage::Mfa && retryable(&code) => {
                events.push(events::error(events::ERROR, &code, request_id.as_deref(), Some(institution)));
                let error = fill(t.wrong_answer, &[("message", &message)]);
                Ok(self.mfa(events, events::LOAD_MFA_RETRY, Some(error)))
            }
            Answer::Refused { code, message, request_id } => {
                events.push(events::error(events::ERROR, &code, request_id.as_deref(), Some(institution)));
                let message = fill(t.refused, &[("message", &message)]);
                Err(Box::new(failed(self.chrome(), std::mem::take(events), t.refused_title, message, &code)))
            }
        }
    }

    fn load_accounts(&mut self, shared: &Shared) {
        let login_id = self.login_id.clone().unwrap_or_default();
        let banking = shared.data.banking(&shared.config, &login_id, shared.clock());
        self.total_accounts = banking.accounts.len();
        let currency_wanted = self.params.account_selector_currency.clone();
        let t = texts::of(self.params.french);
        self.accounts = banking
            .accounts
            .iter()
            .filter(|account| self.params.show_all_accounts || account.category == "Operations")
            // Every sandbox account is in Canadian dollars.
            .filter(|_| currency_wanted.as_deref().is_none_or(|wanted| wanted.eq_ignore_ascii_case("CAD")))
            .map(|account| AccountChoice {
                id: account.id.to_string(),
                title: account.title.to_owned(),
                number_tail: account.last_four_digits().to_owned(),
                balance: t.money(account.current.dollars()),
                currency: "CAD",
            })
            .collect();
    }

    fn account_page(&mut self, events: &mut Vec<Value>) -> View {
        self.stage = Stage::Accounts;
        let institution = self.institution.unwrap_or(INSTITUTION);
        events.push(events::account_selection(institution, self.total_accounts, self.accounts.len()));
        View::Accounts {
            accounts: self.accounts.clone(),
            multiple: self.params.account_selector_multiple,
            currency: self.params.account_selector_currency.clone(),
        }
    }

    fn after_accounts(&mut self, chosen: Vec<String>, events: &mut Vec<Value>) -> View {
        let known = chosen.iter().all(|id| self.accounts.iter().any(|account| &account.id == id));
        let count_ok = if self.accounts.is_empty() {
            chosen.is_empty()
        } else if self.params.account_selector_multiple {
            !chosen.is_empty()
        } else {
            chosen.len() == 1
        };
        if !known || !count_ok {
            return self.account_page(events);
        }
        self.connected(chosen, events)
    }

    fn connected(&mut self, account_ids: Vec<String>, events: &mut Vec<Value>) -> View {
        let login_id = self.login_id.clone().unwrap_or_default();
        let connected = Connected {
            login_id: &login_id,
            institution: self.institution.unwrap_or(INSTITUTION),
            account_ids: &account_ids,
            tag: self.params.tag.as_deref(),
            demo: self.params.demo,
        };
        let url = redirect::url(self.params.redirect_url.as_deref(), &connected);
        events.push(events::redirect(&url, &connected));
        // Without a redirectUrl the widget's own frame goes to its result page.
        let top = self.params.redirect_url.is_some() && !self.params.inner_redirect;
        let navigate = Some(Navigate { url: url.clone(), top });
        View::Connected { url, navigate, login_id }
    }
}

/// The refusals of an answer that leave the round open for another try, as the API allows.
fn retryable(code: &str) -> bool {
    matches!(code, "INVALID_SECURITY_RESPONSE" | "SECURITYRESPONSES_INCOMPLETE" | "UNKNOWN_CHALLENGE_KEY")
}

/// The page after a form: the next one of the flow, or a final one that ends it.
type Next = Result<View, Box<Shown>>;

/// A final error page.
fn failed(chrome: Chrome, events: Vec<Value>, title: &str, message: String, code: &str) -> Shown {
    let view = View::Error { title: title.to_owned(), message, code: Some(code.to_owned()) };
    Shown { flow: None, chrome, view, events }
}

/// The `SecurityResponses` of a challenge form: choices are posted by their index in the
/// challenge's `Iterables` and sent as the text the API keys and checks them by
/// (docs/sandbox.md#the-hosted-widget).
fn responses(round: &[Asked], form: &[(String, String)]) -> Vec<(String, Vec<String>)> {
    let all = |name: String| -> Vec<&str> {
        form.iter().filter(|(key, _)| *key == name).map(|(_, value)| value.as_str()).collect()
    };
    let first = |name: String| all(name).first().map(|value| (*value).to_owned());
    let choice =
        |asked: &Asked, index: &str| index.trim().parse::<usize>().ok().and_then(|i| asked.choices.get(i)).cloned();
    let mut responses = Vec::new();
    for (i, asked) in round.iter().enumerate() {
        let response = match asked.kind.as_str() {
            TEXT_OR_CALL => {
                let phone = first(format!("phone-{i}")).and_then(|index| choice(asked, &index));
                let how = first(format!("how-{i}")).unwrap_or_default();
                phone.map(|phone| (phone, vec![how]))
            }
            WAIT_UNTIL_EU_ACCEPT => Some((asked.prompt.clone(), vec!["VERIFIED".to_owned()])),
            MULTIPLE_CHOICE | IMAGE_SELECTION => first(format!("answer-{i}"))
                .and_then(|index| choice(asked, &index))
                .map(|c| (asked.prompt.clone(), vec![c])),
            MULTIPLE_CHOICE_MULTIPLE_ANSWERS => {
                let chosen: Vec<String> =
                    all(format!("answer-{i}")).into_iter().filter_map(|index| choice(asked, index)).collect();
                (!chosen.is_empty()).then(|| (asked.prompt.clone(), chosen))
            }
            QUESTION_AND_ANSWER if !asked.choices.is_empty() => {
                let question = first(format!("question-{i}")).and_then(|index| choice(asked, &index));
                let text = first(format!("answer-{i}")).unwrap_or_default();
                question.map(|question| (asked.prompt.clone(), vec![question, text]))
            }
            _ => first(format!("answer-{i}")).map(|text| (asked.prompt.clone(), vec![text])),
        };
        responses.extend(response);
    }
    responses
}

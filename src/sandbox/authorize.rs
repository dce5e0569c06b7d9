//! `POST BankingServices/Authorize`: opening sessions, and the challenge state machine
//! (interface-v3.md section 3).

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde::Serialize;
use serde_json::Value;

use super::body::Body;
use super::challenge::{Challenge, Round};
use super::keys;
use super::reply::{self, ApiError, Link, LoginBody, LAST_REFRESH};
use super::state::{missing_session, Session, Shared, Stage};
use super::users::{self, Outcome, INSTITUTION, INSTITUTION_ID, PASSWORD};

const CHALLENGE_LINKS: [Link; 1] = [Link::new("Authorization", "/Authorize")];
const OPEN_LINKS: [Link; 3] = [
    Link::new("AccountsDetail", "/GetAccountsDetail"),
    Link::new("AccountsSummary", "/GetAccountsSummary"),
    Link::new("Statements", "/GetStatements"),
];

/// The four request shapes are told apart by their fields, as the service does: answers name a
/// RequestId, saved connections a LoginId, and anything else is a credentials login.
pub(crate) async fn authorize(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    bytes: Bytes,
) -> Result<Response, ApiError> {
    keys::take_authorize_token(&shared, &headers)?;
    let body = Body::parse(&bytes)?;
    if body.has("RequestId") || body.has("SecurityResponses") {
        answer(&shared, &body)
    } else if body.has("LoginId") {
        by_login_id(&shared, &body)
    } else {
        credentials(&shared, &body)
    }
}

fn credentials(shared: &Shared, body: &Body) -> Result<Response, ApiError> {
    if body.flag("MostRecentCached")? == Some(true) {
        return Err(ApiError::invalid_request(
            "MostRecentCached true needs a LoginId: a credentials login must send MostRecentCached false",
        ));
    }
    let save = body.flag("Save")?.unwrap_or(false);
    body.flag("ScheduleRefresh")?;
    let institution = body.required("Institution")?;
    let username = body.required("Username")?;
    let password = body.required("Password")?;
    if !institution.trim().eq_ignore_ascii_case(INSTITUTION) {
        return Err(ApiError::invalid_request(format!(
            "unknown institution {institution:?}: the sandbox knows only {INSTITUTION}"
        )));
    }
    let user = users::find(username).ok_or_else(|| {
        ApiError::unauthorized("INVALID_USERNAME", format!("The username {username:?} is not known at {INSTITUTION}"))
    })?;
    if password != PASSWORD {
        return Err(ApiError::unauthorized("INVALID_PASSWORD", "The password is not correct"));
    }
    match &user.outcome {
        Outcome::Refused { code, message } => Err(ApiError::unauthorized(code, *message)),
        Outcome::Flow(rounds) => Ok(begin(shared, Session::new(user, None, save, tag(body)), rounds)),
    }
}

/// Cached read (`MostRecentCached` true) or live login by saved connection (false).
fn by_login_id(shared: &Shared, body: &Body) -> Result<Response, ApiError> {
    let login_id = body.required("LoginId")?;
    let cached = body.flag("MostRecentCached")?.unwrap_or(false);
    body.flag("Save")?;
    body.flag("ScheduleRefresh")?;
    let saved = shared.lock().saved_login(login_id);
    let (user, login_id) = saved.ok_or_else(|| {
        ApiError::unauthorized("INVALID_LOGIN", format!("No saved connection has LoginId {login_id}"))
    })?;
    let flow: &'static [Round] = if cached { &[] } else { user.saved_flow() };
    Ok(begin(shared, Session::new(user, Some(login_id), true, tag(body)), flow))
}

fn answer(shared: &Shared, body: &Body) -> Result<Response, ApiError> {
    let request_id = body.required("RequestId")?;
    let responses = body
        .security_responses()?
        .ok_or_else(|| ApiError::invalid_request("SecurityResponses is required with a RequestId"))?;
    let mut inner = shared.lock();
    let session =
        inner.session(request_id, shared.config.session_ttl).map_err(|missing| missing_session(missing, request_id))?;
    let (flow, round) = match session.stage {
        Stage::Challenged { flow, round } => (flow, round),
        Stage::Open => {
            return Err(ApiError::bad_request("ALREADY_AUTHORIZED", "This RequestId is already authorized")
                .with_request_id(request_id))
        }
    };
    judge(&flow[round], &responses).map_err(|error| error.with_request_id(request_id))?;
    // The same RequestId carries on through every round, as in the flows the service shows.
    if let Some(next) = flow.get(round + 1) {
        session.stage = Stage::Challenged { flow, round: round + 1 };
        return Ok(challenged(request_id, next, session.tag.as_ref()));
    }
    let session = inner.open(request_id).expect("the session was found above");
    Ok(opened(request_id, session))
}

/// Checks answers in the order the service reports problems: keys it does not know, then
/// prompts left unanswered, then wrong answers. A wrong answer leaves the round pending.
fn judge(challenges: &[Challenge], responses: &[(&str, Vec<String>)]) -> Result<(), ApiError> {
    let mut given: Vec<Vec<&[String]>> = vec![Vec::new(); challenges.len()];
    for (key, answer) in responses {
        let index = challenges.iter().position(|challenge| challenge.is_keyed_by(key)).ok_or_else(|| {
            ApiError::unauthorized(
                "UNKNOWN_CHALLENGE_KEY",
                format!("{key:?} is not the prompt (or TextOrCall choice) of a pending challenge"),
            )
        })?;
        given[index].push(answer);
    }
    if let Some((challenge, _)) = challenges.iter().zip(&given).find(|(_, answers)| answers.is_empty()) {
        return Err(ApiError::unauthorized(
            "SECURITYRESPONSES_INCOMPLETE",
            format!("No answer was given to {:?}", challenge.prompt),
        ));
    }
    for (challenge, answers) in challenges.iter().zip(&given) {
        // Two keys for one challenge (both TextOrCall numbers) is as wrong as a wrong answer.
        if !matches!(answers.as_slice(), [answer] if challenge.accepts(answer)) {
            return Err(ApiError::unauthorized(
                "INVALID_SECURITY_RESPONSE",
                format!("The answer to {:?} is not correct", challenge.prompt),
            ));
        }
    }
    Ok(())
}

/// Stores the session and answers with its first round of challenges, or opens it at once.
fn begin(shared: &Shared, mut session: Session, flow: &'static [Round]) -> Response {
    let mut inner = shared.lock();
    match flow.first() {
        Some(round) => {
            session.stage = Stage::Challenged { flow, round: 0 };
            let tag = session.tag.clone();
            let request_id = inner.add_session(session, shared.config.session_ttl);
            challenged(&request_id, round, tag.as_ref())
        }
        None => {
            let request_id = inner.add_session(session, shared.config.session_ttl);
            let session = inner.open(&request_id).expect("the session was just added");
            opened(&request_id, session)
        }
    }
}

fn tag(body: &Body) -> Option<Value> {
    body.get("Tag").cloned()
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct ChallengedBody<'a> {
    links: &'a [Link],
    http_status_code: u16,
    security_challenges: &'a [Challenge],
    institution: &'a str,
    request_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    tag: Option<&'a Value>,
}

/// 203: the session waits for answers to `round`.
fn challenged(request_id: &str, round: &[Challenge], tag: Option<&Value>) -> Response {
    let body = ChallengedBody {
        links: &CHALLENGE_LINKS,
        http_status_code: 203,
        security_challenges: round,
        institution: INSTITUTION,
        request_id,
        tag,
    };
    reply::json(StatusCode::NON_AUTHORITATIVE_INFORMATION, &body)
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct OpenedBody<'a> {
    links: &'a [Link],
    http_status_code: u16,
    login: LoginBody<'a>,
    institution_name: &'a str,
    institution_id: u32,
    institution: &'a str,
    request_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    tag: Option<&'a Value>,
}

/// 200: the session is open.
fn opened(request_id: &str, session: &Session) -> Response {
    let body = OpenedBody {
        links: &OPEN_LINKS,
        http_status_code: 200,
        login: LoginBody {
            username: session.user.username,
            is_scheduled_refresh: false,
            last_refresh: LAST_REFRESH,
            kind: Some("Personal"),
            id: session.login_id.as_deref().unwrap_or_default(),
        },
        institution_name: INSTITUTION,
        institution_id: INSTITUTION_ID,
        institution: INSTITUTION,
        request_id,
        tag: session.tag.as_ref(),
    };
    reply::json(StatusCode::OK, &body)
}

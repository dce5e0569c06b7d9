//! `POST BankingServices/Authorize`: opening sessions, and the challenge state machine
//! (docs/protocol.md#authorize and docs/protocol.md#challenges-and-answer-rules).

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::Value;

use crate::config::{AuthorizeKind, CachedChallenges};
use crate::generator::{hash, Rng};
use crate::operations::challenge::{Challenge, Round};
use crate::operations::language::Language;
use crate::server::body::{Body, BodyBytes};
use crate::server::reply::{
    self, Envelope, ErrorReply, InstitutionFields, Link, LoginBody, INSTITUTION, INSTITUTION_ID,
};
use crate::world::keys;
use crate::world::state::{missing_session, Busy, Inner, Missing, OpeningToken, Session, Shared, Stage};
use crate::world::users::{self, Outcome, PASSWORD};

const CHALLENGE_LINKS: [Link; 1] = [Link::new("Authorization", "/Authorize")];
const OPEN_LINKS: [Link; 3] = [
    Link::new("AccountsDetail", "/GetAccountsDetail"),
    Link::new("AccountsSummary", "/GetAccountsSummary"),
    Link::new("Statements", "/GetStatements"),
];

/// The four request shapes are told apart by their fields, as the service does: answers name a
/// RequestId, saved connections a LoginId, and anything else is a credentials login. Fields sent
/// empty count as absent (`"LoginId": ""` beside credentials), as real clients send them
/// (docs/protocol.md#request-shapes-real-clients-send).
pub(crate) async fn authorize(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    BodyBytes(bytes): BodyBytes,
) -> Result<Response, ErrorReply> {
    let token = keys::presented_token(&shared, &headers)?;
    let body = Body::parse(&bytes)?;
    match shape(&body) {
        AuthorizeKind::ChallengeAnswer => answer(&shared, &body, token),
        AuthorizeKind::Cached | AuthorizeKind::Saved => by_login_id(&shared, &body, token),
        AuthorizeKind::Credentials => credentials(&shared, &body, token),
    }
}

/// Which of the four shapes an Authorize body is; the request log says it too
/// (docs/sandbox.md#the-request-log). A `MostRecentCached` that is no flag counts as false here,
/// and is refused by the handler.
pub(crate) fn shape(body: &Body) -> AuthorizeKind {
    if body.present("RequestId") || body.present("SecurityResponses") {
        AuthorizeKind::ChallengeAnswer
    } else if body.present("LoginId") {
        if body.flag("MostRecentCached").ok().flatten() == Some(true) {
            AuthorizeKind::Cached
        } else {
            AuthorizeKind::Saved
        }
    } else {
        AuthorizeKind::Credentials
    }
}

/// A live login with credentials. `MostRecentCached` true beside them is still a live login:
/// there is no cached data to read without a LoginId, and clients send it so.
fn credentials(shared: &Shared, body: &Body, token: Option<u128>) -> Result<Response, ErrorReply> {
    body.flag("MostRecentCached")?;
    let save = body.flag("Save")?.unwrap_or(false);
    body.flag("ScheduleRefresh")?;
    let language = Language::of(body)?;
    let schedule_refresh = body.flag("ScheduleRefresh")?.unwrap_or(false);
    let institution = body.required("Institution")?;
    let username = body.required("Username")?;
    let password = body.required("Password")?;
    let token = keys::open_with(shared, token)?;
    if !institution.trim().eq_ignore_ascii_case(INSTITUTION) {
        return Err(ErrorReply::invalid_request(format!(
            "unknown institution {institution:?}: the sandbox knows only {INSTITUTION}"
        )));
    }
    let user = users::find(username).ok_or_else(|| {
        ErrorReply::unauthorized("INVALID_USERNAME", format!("The username {username:?} is not known at {INSTITUTION}"))
    })?;
    // In any case: public clients and the documentation spell it three ways.
    if !password.eq_ignore_ascii_case(PASSWORD) {
        return Err(ErrorReply::unauthorized("INVALID_PASSWORD", "The password is not correct"));
    }
    match &user.scenario.outcome {
        Outcome::Refused { code, message } => Err(ErrorReply::unauthorized(code, *message)),
        Outcome::Flow(_) => {
            let number = shared.lock().next_login();
            // The same seed asks the same questions in the same order (docs/sandbox.md#users).
            let seed = shared.config.seed.to_le_bytes();
            let draw = Rng::new(hash(&[&seed, user.scenario.username.as_bytes(), &number.to_le_bytes()])).next();
            let flow = user.scenario.flow_of_login(draw);
            let mut session = Session::new(user, None, save, tag(body));
            session.language = language;
            session.schedule_refresh = schedule_refresh;
            begin(shared, session, flow, token)
        }
    }
}

/// Cached read (`MostRecentCached` true) or live login by saved connection (false).
fn by_login_id(shared: &Shared, body: &Body, token: Option<u128>) -> Result<Response, ErrorReply> {
    let login_id = body.required("LoginId")?;
    let cached = body.flag("MostRecentCached")?.unwrap_or(false);
    body.flag("Save")?;
    body.flag("ScheduleRefresh")?;
    let language = Language::of(body)?;
    let token = keys::open_with(shared, token)?;
    let saved = shared.lock().saved_login(login_id);
    let (user, login_id) = saved.ok_or_else(|| {
        ErrorReply::unauthorized("INVALID_LOGIN", format!("No saved connection has LoginId {login_id}"))
    })?;
    // A cached read touches no bank, but the service may still ask it a security question
    // first (docs/sandbox.md#cached-reads-asked-a-question).
    let asked_cached = cached
        && match shared.config.cached_challenges {
            CachedChallenges::Never => false,
            CachedChallenges::Always => true,
            CachedChallenges::PerUser => user.scenario.cached_challenge,
        };
    let flow: &'static [Round] = if asked_cached {
        user.scenario.cached_flow()
    } else if cached {
        &[]
    } else {
        shared.lock().without_answered(&login_id, user.scenario.saved_flow())
    };
    let mut session = Session::new(user, Some(login_id), true, tag(body));
    session.live = !cached;
    session.asked_cached = asked_cached;
    session.language = language;
    begin(shared, session, flow, token)
}

fn answer(shared: &Shared, body: &Body, token: Option<u128>) -> Result<Response, ErrorReply> {
    let request_id = body.required("RequestId")?;
    let responses = body
        .security_responses()?
        .ok_or_else(|| ErrorReply::invalid_request("SecurityResponses is required with a RequestId"))?;
    let mut inner = shared.lock();
    keys::admit_answer(&mut inner, shared, request_id, token)?;
    let session =
        inner.session(request_id, shared.config.session_ttl).map_err(|missing| missing_session(missing, request_id))?;
    let (flow, round) = match session.stage {
        Stage::Challenged { flow, round } => (flow, round),
        Stage::Open => {
            return Err(ErrorReply::bad_request("ALREADY_AUTHORIZED", "This RequestId is already authorized")
                .with_request_id(request_id))
        }
    };
    // A stage only ever names a round of its own flow; an unknown one would be a lost session.
    let current = flow.get(round).ok_or_else(|| missing_session(Missing::Unknown, request_id))?;
    // Asked in the session's language, so answered by the prompts as they were sent.
    let language = session.language;
    let current = language.round(current);
    // Greatday asks again when the answers are empty, as the public test instance does.
    if session.user.scenario.one_round && all_empty(&responses) {
        return Ok(challenged(request_id, &current, session.tag.as_ref()));
    }
    if let Err(error) = judge(&current, &responses) {
        return Err(wrong_answer(&mut inner, shared.config.max_wrong_answers, request_id, error));
    }
    // The same RequestId carries on through every round, as in the flows the service shows.
    if let Some(next) = flow.get(round + 1) {
        session.stage = Stage::Challenged { flow, round: round + 1 };
        return Ok(challenged(request_id, &language.round(next), session.tag.as_ref()));
    }
    let session =
        inner.open(request_id, shared.clock()).ok_or_else(|| missing_session(Missing::Unknown, request_id))?;
    Ok(opened(request_id, session))
}

/// Whether `SecurityResponses` holds no answer at all: `{}`, or only empty lists and blank strings.
fn all_empty(responses: &[(&str, Vec<String>)]) -> bool {
    responses.iter().all(|(_, answers)| answers.iter().all(|answer| answer.trim().is_empty()))
}

/// Checks answers in the order the service reports problems: keys it does not know, then
/// prompts left unanswered, then wrong answers. A wrong answer leaves the round pending.
fn judge(challenges: &[Challenge], responses: &[(&str, Vec<String>)]) -> Result<(), ErrorReply> {
    let mut given: Vec<Vec<&[String]>> = vec![Vec::new(); challenges.len()];
    for (key, answer) in responses {
        let index = challenges.iter().position(|challenge| challenge.is_keyed_by(key)).ok_or_else(|| {
            ErrorReply::unauthorized(
                "UNKNOWN_CHALLENGE_KEY",
                format!("{key:?} is not the prompt (or TextOrCall choice) of a pending challenge"),
            )
        })?;
        if let Some(answers) = given.get_mut(index) {
            answers.push(answer);
        }
    }
    if let Some((challenge, _)) = challenges.iter().zip(&given).find(|(_, answers)| answers.is_empty()) {
        return Err(ErrorReply::unauthorized(
            "SECURITYRESPONSES_INCOMPLETE",
            format!("No answer was given to {:?}", challenge.prompt),
        ));
    }
    for (challenge, answers) in challenges.iter().zip(&given) {
        // Two keys for one challenge (both TextOrCall numbers) is as wrong as a wrong answer.
        if !matches!(answers.as_slice(), [answer] if challenge.accepts(answer)) {
            return Err(ErrorReply::unauthorized(
                "INVALID_SECURITY_RESPONSE",
                format!("The answer to {:?} is not correct", challenge.prompt),
            ));
        }
    }
    Ok(())
}

/// What a refused answer does: a wrong one counts against the session, and the one that reaches
/// `max_wrong_answers` ends it with the documented no-retry error (docs/protocol.md#errors).
fn wrong_answer(inner: &mut Inner, max_wrong_answers: u32, request_id: &str, error: ErrorReply) -> ErrorReply {
    let Some(session) = inner.session(request_id, std::time::Duration::MAX).ok() else {
        return error.with_request_id(request_id);
    };
    if error.code() != "INVALID_SECURITY_RESPONSE" {
        return error.with_request_id(request_id);
    }
    session.wrong_answers += 1;
    if session.wrong_answers < max_wrong_answers.max(1) {
        return error.with_request_id(request_id);
    }
    inner.end_session(request_id);
    ErrorReply::unauthorized(
        "INVALID_SECURITY_RESPONSE_NO_RETRY",
        format!(
            "{max_wrong_answers} wrong answers: the session is closed and cannot be answered again; authorize again"
        ),
    )
    .with_request_id(request_id)
}

/// Stores the session and answers with its first round of challenges, or opens it at once. A
/// live login whose newest live session is still processing its data refuses a second live one
/// with `CONCURRENT_SESSION`: a live session holds the connection to the bank. A cached read
/// touches no bank, so it neither meets nor causes it (docs/sandbox.md#documented-failures).
fn begin(
    shared: &Shared,
    mut session: Session,
    flow: &'static [Round],
    token: Option<OpeningToken>,
) -> Result<Response, ErrorReply> {
    session.token = token;
    let mut inner = shared.lock();
    let login_id = session.login_id.clone().unwrap_or_else(|| inner.login_id_of(session.user));
    let busy = inner.busy(&login_id, shared.config.session_ttl, std::time::Duration::ZERO, true);
    if session.live && busy == Some(Busy::Processing) {
        return Err(ErrorReply::bad_request(
            "CONCURRENT_SESSION",
            format!("A session of LoginId {login_id} is in progress: wait for its data, then authorize again"),
        ));
    }
    Ok(if let Some(round) = flow.first() {
        session.stage = Stage::Challenged { flow, round: 0 };
        let tag = session.tag.clone();
        let round = session.language.round(round).into_owned();
        let request_id = inner.add_session(session, shared.config.session_ttl);
        challenged(&request_id, &round, tag.as_ref())
    } else {
        let request_id = inner.add_session(session, shared.config.session_ttl);
        match inner.open(&request_id, shared.clock()) {
            Some(session) => opened(&request_id, session),
            // Just added under the lock still held: always found.
            None => missing_session(Missing::Unknown, &request_id).into_response(),
        }
    })
}

fn tag(body: &Body) -> Option<Value> {
    body.get("Tag").cloned()
}

/// The 203's keys, in the order the service writes them (docs/sandbox.md#where-the-sandbox-differs-from-the-real-service).
#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct ChallengedBody<'a> {
    http_status_code: u16,
    links: &'a [Link],
    security_challenges: &'a [Challenge],
    institution_name: &'a str,
    institution_id: u32,
    institution: &'a str,
    request_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    tag: Option<&'a Value>,
}

/// 203: the session waits for answers to `round`.
fn challenged(request_id: &str, round: &[Challenge], tag: Option<&Value>) -> Response {
    let body = ChallengedBody {
        http_status_code: 203,
        links: &CHALLENGE_LINKS,
        security_challenges: round,
        institution_name: INSTITUTION,
        institution_id: INSTITUTION_ID,
        institution: INSTITUTION,
        request_id,
        tag,
    };
    reply::json(StatusCode::NON_AUTHORITATIVE_INFORMATION, &body)
}

/// What the 200 of Authorize says besides the [`Envelope`].
#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct OpenedBody<'a> {
    links: &'a [Link],
    #[serde(skip_serializing_if = "Option::is_none")]
    tag: Option<&'a Value>,
}

/// 200: the session is open. The answer to a cached read's question names no `Login`, as the
/// service's does, though the session is of that login (docs/sandbox.md#cached-reads-asked-a-question).
fn opened(request_id: &str, session: &Session) -> Response {
    let last_refresh = reply::last_refresh(session.last_refresh);
    let login = LoginBody {
        username: &session.user.username(),
        is_scheduled_refresh: session.scheduled_refresh,
        last_refresh: &last_refresh,
        kind: Some("Personal"),
        id: session.login_id.as_deref().unwrap_or_default(),
    };
    let body = OpenedBody { links: &OPEN_LINKS, tag: session.tag.as_ref() };
    let login = (!session.asked_cached).then_some(login);
    Envelope::new(body, Some(InstitutionFields::BANKING), login, request_id).ok()
}

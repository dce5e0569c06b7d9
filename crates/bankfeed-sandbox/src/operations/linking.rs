//! The account-linking operations of the service that act on saved logins outside a session:
//! `SetScheduledRefresh`, `GetNightlyRefreshStatus`, `GetMFAQuestions` and `AnswerMFAQuestions`
//! (docs/protocol.md#operations-beyond-the-interface).

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde::Serialize;
use serde_json::Value;

use crate::server::body::{Body, BodyBytes, Segments};
use crate::server::reply::{self, Envelope, ErrorReply};
use crate::world::keys;
use crate::world::state::morning_of;
use crate::world::state::Shared;

/// The answer to a LoginId that names no saved connection, as Authorize gives it.
fn unknown_login(login_id: &str) -> ErrorReply {
    ErrorReply::unauthorized("INVALID_LOGIN", format!("No saved connection has LoginId {login_id}"))
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct MessageBody {
    message: String,
}

/// `PATCH SetScheduledRefresh` with `LoginId` and `IsActivated`: turns the login's nightly
/// refresh on or off, which its Authorize and data answers then show as `IsScheduledRefresh`.
pub(crate) async fn set_scheduled_refresh(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    bytes: Result<BodyBytes, ErrorReply>,
) -> Result<Response, ErrorReply> {
    keys::check_api_key(&shared, &headers)?;
    let body = Body::parse(&bytes?.0)?;
    let login_id = body.required("LoginId")?;
    let on = body.flag("IsActivated")?.ok_or_else(|| {
        ErrorReply::invalid_request("IsActivated is required: true turns the nightly refresh on, false off")
    })?;
    if !shared.lock().set_scheduled_refresh(login_id, on) {
        return Err(unknown_login(login_id));
    }
    let state = if on { "activated" } else { "deactivated" };
    let message = format!("The scheduled refresh of LoginId {login_id} is {state}");
    Ok(Envelope::plain(MessageBody { message }).ok())
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct NightlyStatusBody {
    ineligible_cards: Vec<IneligibleCard>,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct IneligibleCard {
    login_id: String,
    last_refresh_date: String,
    last_refresh_state: &'static str,
    last_refresh_error_code: Option<&'static str>,
}

/// `GET GetNightlyRefreshStatus`, with the secret key: the saved logins whose nightly refresh
/// is on but would stop at a security question no stored answer passes, in the documented shape.
pub(crate) async fn nightly_refresh_status(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
) -> Result<Response, ErrorReply> {
    keys::check_secret_key(&shared, &headers)?;
    let ineligible = shared.lock().ineligible_for_nightly_refresh();
    // The night's refresh that stopped at the question: the clock's morning.
    let last_refresh_date = reply::last_refresh(morning_of(shared.clock()));
    let ineligible_cards = ineligible
        .into_iter()
        .map(|login_id| IneligibleCard {
            login_id,
            last_refresh_date: last_refresh_date.clone(),
            last_refresh_state: "AnsweringSecurityChallenge",
            last_refresh_error_code: None,
        })
        .collect();
    Ok(Envelope::plain(NightlyStatusBody { ineligible_cards }).ok())
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct QuestionsBody {
    message: &'static str,
    questions: Vec<Question>,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct Question {
    question: &'static str,
}

/// `GET GetMFAQuestions/{loginId}`: the security questions of the saved login's institution
/// account (its user's question-and-answer prompts), in the documented shape.
pub(crate) async fn get_mfa_questions(
    State(shared): State<Arc<Shared>>,
    Segments((_, login_id)): Segments<(String, String)>,
    headers: HeaderMap,
) -> Result<Response, ErrorReply> {
    keys::check_api_key(&shared, &headers)?;
    let questions = shared.lock().mfa_questions(&login_id).ok_or_else(|| unknown_login(&login_id))?;
    let questions = questions.into_iter().map(|question| Question { question }).collect();
    Ok(reply::json(StatusCode::OK, &QuestionsBody { message: "SUCCESS", questions }))
}

/// `PATCH AnswerMFAQuestions` with `LoginId` and `Questions` (each `Question` and `Answer`):
/// stores the answers, which a live refresh of the login then gives for itself. A question the
/// login is not asked, or an empty answer, is refused naming it; nothing is stored then.
pub(crate) async fn answer_mfa_questions(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    bytes: Result<BodyBytes, ErrorReply>,
) -> Result<Response, ErrorReply> {
    keys::check_api_key(&shared, &headers)?;
    let body = Body::parse(&bytes?.0)?;
    let login_id = body.required("LoginId")?;
    let Some(Value::Array(items)) = body.get("Questions") else {
        return Err(ErrorReply::invalid_request(
            "Questions is required: a list of objects, each with a Question and its Answer",
        ));
    };
    if items.is_empty() {
        return Err(ErrorReply::invalid_request("Questions must name at least one Question and its Answer"));
    }
    let mut inner = shared.lock();
    let asked = inner.mfa_questions(login_id).ok_or_else(|| unknown_login(login_id))?;
    let mut answers = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let Value::Object(map) = item else {
            return Err(ErrorReply::invalid_request(format!(
                "Questions[{index}] must be an object with a Question and its Answer"
            )));
        };
        let item = Body::from_map(map.clone());
        let question = item
            .string("Question")?
            .ok_or_else(|| ErrorReply::invalid_request(format!("Questions[{index}].Question is required")))?;
        // Never echoed: an answer is a secret (docs/sandbox.md#the-request-log).
        let answer = item.string("Answer")?.ok_or_else(|| {
            ErrorReply::invalid_request(format!("Questions[{index}].Answer is required and must not be empty"))
        })?;
        let Some(known) = asked.iter().find(|known| known.eq_ignore_ascii_case(question.trim())) else {
            return Err(ErrorReply::invalid_request(format!(
                "Questions[{index}].Question {question:?} is not a security question of LoginId {login_id}; \
                 GetMFAQuestions lists them"
            )));
        };
        answers.push(((*known).to_owned(), answer.to_owned()));
    }
    inner.store_mfa_answers(login_id, answers);
    Ok(reply::json(StatusCode::OK, &MessageBody { message: "Answers updated".to_owned() }))
}

//! The router: the operations, the customer-id check, the 404/405 answers, the request log.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use axum::Router;

use super::reply::ErrorReply;
use super::state::Shared;
use super::{
    accounts, attributes, authorize, delete as delete_card, faults, investments, keys, operation, statements,
    RecordedRequest,
};

pub(crate) fn router(shared: Arc<Shared>) -> Router {
    // Every operation lives under /v3/{customerId}/; new ones are added here and get the
    // customer check for free.
    let operations = Router::new()
        .route("/v3/{customer_id}/BankingServices/GenerateAuthorizeToken", post(keys::generate_token))
        .route("/v3/{customer_id}/BankingServices/Authorize", post(authorize::authorize))
        .route("/v3/{customer_id}/BankingServices/DeleteCard/{login_id}", delete(delete_card::delete_card))
        .route("/v3/{customer_id}/insight/login/{login_id}/attributes/{request_id}", post(attributes::custom))
        .route(
            "/v3/{customer_id}/insight/login/{login_id}/attributes/{request_id}/{operation}",
            get(attributes::use_case),
        );
    let operations = operation::routes::<accounts::Detail>(operations);
    let operations = operation::routes::<accounts::Summary>(operations);
    let operations = operation::routes::<statements::Statements>(operations);
    let operations = operation::routes::<investments::Investments>(operations)
        .route_layer(middleware::from_fn_with_state(Arc::clone(&shared), check_customer));
    operations
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        // In front of every handler, inside the log so that faulted requests are logged too.
        .layer(middleware::from_fn_with_state(Arc::clone(&shared), faults::inject))
        // Outermost, so it sees every request, the unmatched ones included.
        .layer(middleware::from_fn_with_state(Arc::clone(&shared), record))
        .with_state(shared)
}

/// Counts and logs the request line and the status; never the body, which can hold passwords.
/// A request whose answer was never sent (its connection dropped by a fault, or closed by the
/// client first) is logged with status 0.
async fn record(State(shared): State<Arc<Shared>>, request: Request, next: Next) -> Response {
    shared.count_request();
    let method = request.method().to_string();
    let path = request.uri().path().to_owned();
    let mut entry = Unanswered(Some((Arc::clone(&shared), RecordedRequest { method, path, status: 0 })));
    let response = next.run(request).await;
    if let Some((shared, mut logged)) = entry.0.take() {
        logged.status = faults::logged_status(&response);
        shared.record(logged);
    }
    response
}

/// Logs its request with status 0 if the handler's future is dropped before it answers.
struct Unanswered(Option<(Arc<Shared>, RecordedRequest)>);

impl Drop for Unanswered {
    fn drop(&mut self) {
        if let Some((shared, logged)) = self.0.take() {
            shared.record(logged);
        }
    }
}

async fn check_customer(State(shared): State<Arc<Shared>>, request: Request, next: Next) -> Response {
    let customer_id =
        request.uri().path().strip_prefix("/v3/").and_then(|rest| rest.split('/').next()).unwrap_or_default();
    if customer_id != shared.config.customer_id {
        return ErrorReply::new(
            StatusCode::NOT_FOUND,
            "INVALID_REQUEST",
            format!("unknown customer id {customer_id:?}"),
        )
        .into_response();
    }
    next.run(request).await
}

async fn not_found(method: Method, request: Request) -> ErrorReply {
    ErrorReply::new(
        StatusCode::NOT_FOUND,
        "INVALID_REQUEST",
        format!("No operation at {method} {}", request.uri().path()),
    )
}

async fn method_not_allowed(method: Method, request: Request) -> ErrorReply {
    ErrorReply::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "INVALID_REQUEST",
        format!("{} does not take {method}", request.uri().path()),
    )
}

//! The answer to an operation of the service that the sandbox's customer does not have: the
//! service's refusal, not a 404 that would read as a wrong path
//! (docs/protocol.md#operations-beyond-the-interface).

use axum::http::HeaderMap;

use crate::server::reply::ErrorReply;
use crate::world::keys;
use crate::world::state::Shared;
use bankfeed::protocol::WireOp;

/// The code of the refusal: the service's documented code for a call the customer's keys do not
/// open (docs/protocol.md#operations-beyond-the-interface).
pub(crate) const NOT_ENABLED: &str = "ACCESS_DENIED";

/// Refuses `op` after the key check, so a request without the key still learns that first.
pub(crate) fn refuse(shared: &Shared, headers: &HeaderMap, op: &'static WireOp) -> ErrorReply {
    if let Err(refused) = keys::check_api_key(shared, headers) {
        return refused;
    }
    ErrorReply::unauthorized(
        NOT_ENABLED,
        format!("The {} operation is not enabled for this customer; ask your account manager to enable it", op.name),
    )
}

//! `DELETE BankingServices/DeleteCard/{loginId}`: forgets a connection and its sessions.

use std::sync::Arc;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use serde::Serialize;

use crate::server::body::Segments;
use crate::server::reply::{Envelope, ErrorReply};
use crate::world::keys;
use crate::world::state::{Busy, Shared};

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct DeletedBody {
    message: String,
}

/// Refused with 400 `CARD_IN_USE` while the login's data is processing, or within
/// `card_in_use` of the Authorize that connected it new (docs/sandbox.md#documented-failures).
/// The LoginId stays derivable from the username, so a later credentials login with `Save`
/// brings the connection back under the same LoginId, as a reconnection would.
pub(crate) async fn delete_card(
    State(shared): State<Arc<Shared>>,
    Segments((_, login_id)): Segments<(String, String)>,
    headers: HeaderMap,
) -> Result<Response, ErrorReply> {
    keys::check_api_key(&shared, &headers)?;
    {
        let mut inner = shared.lock();
        let busy = inner.busy(&login_id, shared.config.session_ttl, shared.config.card_in_use, false);
        if let Some(busy) = busy {
            let why = match busy {
                Busy::Processing => "its data is still being processed",
                Busy::JustConnected => "it was connected a moment ago",
            };
            return Err(ErrorReply::bad_request(
                "CARD_IN_USE",
                format!("LoginId {login_id} is in use: {why}; delete it once that is done"),
            ));
        }
        if !inner.delete_login(&login_id) {
            return Err(ErrorReply::unauthorized("INVALID_LOGIN", format!("No connection has LoginId {login_id}")));
        }
    }
    shared.data.forget(&login_id);
    let message = format!("All of the information about LoginId {login_id} has been removed");
    Ok(Envelope::plain(DeletedBody { message }).ok())
}

//! The widget's paths: `GET /v2/` (also `/v2/<segment>/`, and `/` with a query, the widget's
//! first version) begins a flow; `POST /v2/flow/<id>` sends one of its forms. Every answer is a
//! whole HTML page that loads nothing from elsewhere, which its `Content-Security-Policy` also
//! says to the browser.

use std::sync::Arc;

use axum::extract::rejection::{FormRejection, QueryRejection};
use axum::extract::{Form, Path, Query, State};
use axum::http::header::{CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, REFERRER_POLICY};
use axum::http::{HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Router};

use serde_json::{Map, Value};

use super::flow::{Chrome, Flows, Shown, View};
use super::pages;
use crate::server::recorded::Note;
use crate::server::reply;
use crate::world::state::Shared;

/// Inline style and script, images as `data:` URLs, forms to the widget itself, nothing else.
const POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; \
                      img-src data:; form-action 'self'; base-uri 'none'";

type Pairs = Vec<(String, String)>;

/// The widget's routes, with the flows they share.
pub(crate) fn router() -> Router<Arc<Shared>> {
    let flows = Arc::new(Flows::default());
    Router::new()
        .route("/", get(root))
        .route("/v2", get(begin))
        .route("/v2/", get(begin))
        .route("/v2/{segment}", get(begin))
        .route("/v2/{segment}/", get(begin))
        .route("/v2/flow/{flow}", post(advance))
        .route("/v2/Result/{institution}", get(result))
        .layer(Extension(flows))
}

/// `/` with a query is the widget's first version; without one it is no resource, as before.
async fn root(
    State(shared): State<Arc<Shared>>,
    Extension(flows): Extension<Arc<Flows>>,
    note: Option<Extension<Note>>,
    uri: Uri,
    query: Result<Query<Pairs>, QueryRejection>,
) -> Response {
    if uri.query().is_none_or(str::is_empty) {
        return reply::no_resource(uri.path());
    }
    page(&start(&shared, &flows, note, query))
}

async fn begin(
    State(shared): State<Arc<Shared>>,
    Extension(flows): Extension<Arc<Flows>>,
    note: Option<Extension<Note>>,
    query: Result<Query<Pairs>, QueryRejection>,
) -> Response {
    page(&start(&shared, &flows, note, query))
}

fn start(
    shared: &Shared,
    flows: &Flows,
    note: Option<Extension<Note>>,
    query: Result<Query<Pairs>, QueryRejection>,
) -> Shown {
    // A query that is not valid URL encoding reads as no parameter at all, which the token check
    // (when asked for) and the pages then answer.
    let pairs = query.map(|Query(pairs)| pairs).unwrap_or_default();
    if let Some(Extension(note)) = note {
        note.widget(&fields(&pairs), None, None);
    }
    flows.begin(shared, &pairs)
}

async fn advance(
    State(shared): State<Arc<Shared>>,
    Extension(flows): Extension<Arc<Flows>>,
    note: Option<Extension<Note>>,
    Path(flow): Path<String>,
    form: Result<Form<Pairs>, FormRejection>,
) -> Response {
    let form = form.map(|Form(pairs)| pairs).unwrap_or_default();
    let shown = flows.advance(&shared, &flow, &form).await;
    if let Some(Extension(note)) = note {
        let username = form.iter().find(|(key, _)| key == "username").map(|(_, value)| value.trim().to_owned());
        let login_id = match &shown.view {
            View::Connected { login_id, .. } => Some(login_id.clone()),
            _ => None,
        };
        note.widget(&fields(&form), username, login_id);
    }
    page(&shown)
}

/// `GET /v2/Result/{institution}`: where a flow without `redirectUrl` ends, the address a mobile
/// WebView watches for (docs/sandbox.md#the-redirect). It says the account is connected and shows
/// what the app is sent, the query, with the look and language of the flow that connected the
/// LoginId (English, with the header, for one the sandbox does not remember); it posts no event:
/// the flow posted `REDIRECT` before coming here.
async fn result(
    Extension(flows): Extension<Arc<Flows>>,
    note: Option<Extension<Note>>,
    uri: Uri,
    query: Result<Query<Pairs>, QueryRejection>,
) -> Response {
    let pairs = query.map(|Query(pairs)| pairs).unwrap_or_default();
    let login_id = pairs.iter().find(|(key, _)| key == "loginId").map(|(_, value)| value.clone()).unwrap_or_default();
    if let Some(Extension(note)) = note {
        note.widget(&fields(&pairs), None, Some(login_id.clone()).filter(|id| !id.is_empty()));
    }
    let chrome = flows.ended_look(&login_id).unwrap_or(Chrome { header: true, ..Chrome::default() });
    let url = uri.query().map(|query| format!("?{query}")).unwrap_or_default();
    let view = View::Connected { url, navigate: None, login_id };
    page(&Shown { flow: None, chrome, view, events: Vec::new() })
}

/// A query's or a form's fields as a JSON object for the request log: a field given several
/// times (the accounts chosen) as a list.
fn fields(pairs: &Pairs) -> Value {
    let mut fields = Map::new();
    for (key, value) in pairs {
        match fields.get_mut(key) {
            None => {
                fields.insert(key.clone(), Value::from(value.as_str()));
            }
            Some(Value::Array(values)) => values.push(Value::from(value.as_str())),
            Some(first) => *first = Value::Array(vec![first.take(), Value::from(value.as_str())]),
        }
    }
    Value::Object(fields)
}

fn page(shown: &Shown) -> Response {
    let mut response = (StatusCode::OK, pages::render(shown)).into_response();
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(CONTENT_SECURITY_POLICY, HeaderValue::from_static(POLICY));
    // The widget's URL carries the authorize token: the page it redirects to must not see it.
    headers.insert(REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    response
}

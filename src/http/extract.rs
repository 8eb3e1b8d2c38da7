//! Extractors with the API's error contract: a JSON body (400 with the
//! parser's reason, 413 past the limit) and the session a route acts on
//! (the `{sessionId}` in the path, else the current session, named in
//! the reply's `Quire-Session-Id`).

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{FromRequest, FromRequestParts, RawPathParams, Request};
use axum::http::HeaderValue;
use axum::http::request::Parts;
use axum::middleware::Next;
use axum::response::Response;
use serde::de::DeserializeOwned;
use std::sync::{Arc, OnceLock};

use super::AppState;
use super::error::ApiError;
use super::guard::too_large;
use crate::access::Caller;
use quire_model::error::CoreError;
use quire_model::ids::SessionId;

/// A JSON request body. Any content type is accepted, so `curl -d` works.
pub struct JsonBody<T>(pub T);

/// Bodies at least this large are parsed on the blocking pool: a 20 MiB
/// batch takes a worker for a tenth of a second.
const PARSE_OFF_RUNTIME: usize = 1 << 20;

impl<T: DeserializeOwned + Send + 'static> FromRequest<AppState> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, ApiError> {
        let bytes = Bytes::from_request(req, state)
            .await
            .map_err(|e| body_error(e, state))?;
        if bytes.len() < PARSE_OFF_RUNTIME {
            return parse_json(&bytes).map(JsonBody);
        }
        tokio::task::spawn_blocking(move || parse_json(&bytes))
            .await
            .map_err(|e| {
                ApiError::new(
                    axum::http::StatusCode::INTERNAL_SERVER_ERROR,
                    "internal",
                    e.to_string(),
                )
            })?
            .map(JsonBody)
    }
}

pub fn body_error(e: BytesRejection, state: &AppState) -> ApiError {
    let text = e.body_text();
    if e.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE || text.contains("length limit") {
        too_large(state.guard.max_body_bytes)
    } else {
        ApiError::bad_request("bad_body", text)
    }
}

/// Every JSON body of the API is an object: an array or a scalar is
/// refused, never read as the struct's fields in order.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if first.is_some_and(|b| *b != b'{')
        && serde_json::from_slice::<serde::de::IgnoredAny>(bytes).is_ok()
    {
        return Err(ApiError::bad_request(
            "invalid_request",
            "invalid request: the body must be a JSON object",
        ));
    }
    serde_json::from_slice(bytes).map_err(|e| {
        use serde_json::error::Category;
        match e.classify() {
            Category::Syntax | Category::Eof | Category::Io => {
                ApiError::bad_request("malformed_json", format!("malformed JSON: {e}"))
            }
            Category::Data => {
                ApiError::bad_request("invalid_request", format!("invalid request: {e}"))
            }
        }
    })
}

/// The app's state as one request sees it: its core acts for the
/// request's caller (the user the guard found), so what the route changes
/// is signed with their name.
pub struct Acting(pub AppState);

impl FromRequestParts<AppState> for Acting {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, std::convert::Infallible> {
        let mut state = state.clone();
        if let Some(caller) = parts.extensions.get::<Caller>() {
            state.core = state
                .core
                .acting_for(caller.name())
                .below_review(caller.below_review());
        }
        Ok(Acting(state))
    }
}

/// The request's caller, when the guard named one (every route but the
/// open ones): what paths a reply may show depends on it.
pub struct Viewer(pub Option<Caller>);

impl FromRequestParts<AppState> for Viewer {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut Parts,
        _: &AppState,
    ) -> Result<Self, std::convert::Infallible> {
        Ok(Viewer(parts.extensions.get::<Caller>().cloned()))
    }
}

impl Viewer {
    /// `value` as JSON, without the server's paths unless the caller is an
    /// admin (`access::as_seen_by`).
    pub fn json<T: serde::Serialize>(&self, value: &T) -> axum::Json<serde_json::Value> {
        let value = serde_json::to_value(value).unwrap_or_default();
        axum::Json(crate::access::as_seen_by(self.0.as_ref(), value))
    }
}

/// The session a route acts on.
pub struct Target(pub SessionId);

impl FromRequestParts<AppState> for Target {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let params = RawPathParams::from_request_parts(parts, state)
            .await
            .map_err(|e| ApiError::bad_request("bad_path", e.body_text()))?;
        let given = params
            .iter()
            .find(|(k, _)| *k == "sessionId")
            .map(|(_, v)| v.to_owned());
        let id = match given {
            Some(text) => Some(
                text.parse::<SessionId>()
                    .map_err(|_| ApiError::from(CoreError::not_found("session", &text)))?,
            ),
            None => None,
        };
        let implicit = id.is_none();
        let target = state.core.resolve(id).map_err(ApiError::from)?;
        if implicit && let Some(acted_on) = parts.extensions.get::<ActedOn>() {
            let _ = acted_on.0.set(target);
        }
        Ok(Target(target))
    }
}

/// The reply header that names the session a route without one in its
/// path acted on (the current session, which anyone may change).
pub const SESSION_HEADER: &str = "quire-session-id";

/// Which session a route without a `{sessionId}` acted on: set by
/// [`Target`], sent back by [`name_the_session`].
#[derive(Clone, Default)]
struct ActedOn(Arc<OnceLock<SessionId>>);

/// Middleware: a reply to a route that acted on the current session says
/// which one, in [`SESSION_HEADER`].
pub async fn name_the_session(mut request: Request, next: Next) -> Response {
    let acted_on = ActedOn::default();
    request.extensions_mut().insert(acted_on.clone());
    let mut response = next.run(request).await;
    if let Some(id) = acted_on.0.get()
        && let Ok(value) = HeaderValue::from_str(&id.to_string())
    {
        response.headers_mut().insert(SESSION_HEADER, value);
    }
    response
}

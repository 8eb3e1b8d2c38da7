//! The access log: a line per request with its method, route, status,
//! user and duration, at `info` for a change and `debug` for a read (a
//! GET, or a reply marked [`OnlyRead`]: an MCP call that only reads; target
//! `quire::access`). It runs the guard's checks inside it (it calls
//! [`super::guard::guard`]), so a refusal is logged too. Never a token, a
//! query string or a body: the route is the path template
//! (`/api/v1/sessions/{sessionId}/scene.json`) when the request matched
//! one, else the path alone.

use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::Response;

use super::AppState;
use crate::access::{Caller, OnlyRead};

pub async fn access_log(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().clone();
    let matched = request.extensions().get::<MatchedPath>().cloned();
    let path = matched.is_none().then(|| request.uri().path().to_owned());
    let route = matched
        .as_ref()
        .map_or(path.as_deref().unwrap_or(""), |m| m.as_str());
    let response = super::guard::guard(&state, request, next).await;
    let status = response.status().as_u16();
    let user = response
        .extensions()
        .get::<Caller>()
        .and_then(Caller::name)
        .unwrap_or("-");
    let seconds = started.elapsed().as_secs_f64();
    state
        .metrics
        .request(method.as_str(), route, status, seconds);
    // Tenths of a millisecond are all a reader needs.
    let ms = (seconds * 10_000.0).round() / 10.0;
    let read = matches!(method, Method::GET | Method::HEAD | Method::OPTIONS)
        || response.extensions().get::<OnlyRead>().is_some();
    if read && status < 400 {
        tracing::debug!(target: "quire::access", %method, %route, status, %user, ms, "request");
    } else {
        tracing::info!(target: "quire::access", %method, %route, status, %user, ms, "request");
    }
    response
}

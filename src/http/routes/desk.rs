//! The translator's desk over HTTP: a segment's memory matches and
//! concordance search, on a session named in the path.

use std::collections::HashMap;

use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::http::api::{Body, Doc, QueryParam, json};
use crate::http::error::{ApiError, ApiResult};
use crate::http::extract::{Acting, Target};
use quire_core::matches::Match;
use quire_model::error::CoreError;
use quire_model::ids::NodeId;

/// Remembered translations, best first.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(super) struct Matches {
    matches: Vec<Match>,
}

pub(super) const MATCHES: Doc = Doc {
    id: "getMatches",
    tag: "memory",
    summary: "The translation memory's best matches (up to 3) for a text node's source: score, origin, date and the words that differ",
    request: Body::None,
    response: Body::Json(json::<Matches>),
    errors: &[404, 409, 422],
    queries: &[],
};

pub(super) async fn matches(
    Acting(state): Acting,
    Target(id): Target,
    Path(params): Path<HashMap<String, String>>,
) -> ApiResult<Json<Matches>> {
    let text = params.get("nodeId").cloned().unwrap_or_default();
    let node: NodeId = text
        .parse()
        .map_err(|_| ApiError::from(CoreError::not_found("node", &text)))?;
    Ok(Json(Matches {
        matches: state.core.matches(id, node).await?,
    }))
}

/// `?q=WORDS&limit=N`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ConcordanceQuery {
    #[serde(default)]
    q: String,
    #[serde(default)]
    limit: Option<usize>,
}

/// The most concordance results a request may ask for, and its default.
const MAX_RESULTS: usize = 200;
const DEFAULT_RESULTS: usize = 50;

pub(super) const CONCORDANCE: Doc = Doc {
    id: "searchConcordance",
    tag: "memory",
    summary: "Remembered segments (the projects' reviewed and final translations, the imported TMX files) whose source or translation holds every word of `q`",
    request: Body::None,
    response: Body::Json(json::<Matches>),
    errors: &[400, 404, 409, 422],
    queries: &[
        QueryParam {
            name: "q",
            description: "The words to look for (all of them, case aside); required",
            schema: r#"{ "type": "string", "minLength": 1 }"#,
        },
        QueryParam {
            name: "limit",
            description: "At most this many results (default 50)",
            schema: r#"{ "type": "integer", "minimum": 1, "maximum": 200 }"#,
        },
    ],
};

pub(super) async fn concordance(
    Acting(state): Acting,
    Target(id): Target,
    query: Result<Query<ConcordanceQuery>, QueryRejection>,
) -> ApiResult<Json<Matches>> {
    let Query(query) = query.map_err(|e| ApiError::bad_request("bad_query", e.body_text()))?;
    let limit = query.limit.unwrap_or(DEFAULT_RESULTS);
    if !(1..=MAX_RESULTS).contains(&limit) {
        return Err(ApiError::from(CoreError::InvalidInput(format!(
            "limit {limit} is out of range (1-{MAX_RESULTS})"
        ))));
    }
    Ok(Json(Matches {
        matches: state.core.concordance(id, &query.q, limit).await?,
    }))
}

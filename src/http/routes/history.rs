//! `GET /api/v1/projects/{projectId}/history`: who did what in a project,
//! newest first, filtered and paged ([`quire_core::journal`]).

use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query};

use crate::http::api::{Body, Doc, QueryParam, json};
use crate::http::error::{ApiError, ApiResult};
use crate::http::extract::Acting;
use quire_core::journal::{HistoryPage, HistoryQuery};
use quire_model::error::CoreError;
use quire_model::ids::ProjectId;

pub(super) const HISTORY: Doc = Doc {
    id: "projectHistory",
    tag: "history",
    summary: "Who did what in a project, newest first: each change, undo and redo with when, who (a person, an agent with its client, or an engine with who started its job) and what (page, node, field, before and after); `next` is the cursor of the next page, null on the last",
    request: Body::None,
    response: Body::Json(json::<HistoryPage>),
    errors: &[400, 404],
    queries: &[
        QueryParam {
            name: "user",
            description: "That person's entries, their agents' and the jobs they started",
            schema: r#"{ "type": "string" }"#,
        },
        QueryParam {
            name: "agent",
            description: "Entries whose agent client holds this (an agent's edits)",
            schema: r#"{ "type": "string" }"#,
        },
        QueryParam {
            name: "engine",
            description: "An engine's entries (ocr, tm, llm-translate, …)",
            schema: r#"{ "type": "string" }"#,
        },
        QueryParam {
            name: "page",
            description: "Entries that changed this page",
            schema: r#"{ "type": "string", "format": "uuid" }"#,
        },
        QueryParam {
            name: "node",
            description: "Entries that changed this node",
            schema: r#"{ "type": "string", "format": "uuid" }"#,
        },
        QueryParam {
            name: "since",
            description: "From this time (RFC 3339), inclusive",
            schema: r#"{ "type": "string", "format": "date-time" }"#,
        },
        QueryParam {
            name: "until",
            description: "Before this time (RFC 3339)",
            schema: r#"{ "type": "string", "format": "date-time" }"#,
        },
        QueryParam {
            name: "limit",
            description: "At most this many entries (default 50)",
            schema: r#"{ "type": "integer", "minimum": 1, "maximum": 500 }"#,
        },
        QueryParam {
            name: "cursor",
            description: "A page's `next`: the entries after that page",
            schema: r#"{ "type": "string" }"#,
        },
    ],
};

pub(super) async fn history(
    Acting(state): Acting,
    Path(project): Path<String>,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> ApiResult<Json<HistoryPage>> {
    let Query(pairs) = query.map_err(|e| ApiError::bad_request("bad_query", e.body_text()))?;
    let query = HistoryQuery::parse(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .map_err(|e| ApiError::bad_request("bad_query", e.to_string()))?;
    let project: ProjectId = project
        .parse()
        .map_err(|_| ApiError::from(CoreError::not_found("project", &project)))?;
    Ok(Json(state.core.history(project, query).await?))
}

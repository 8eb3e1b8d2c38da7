//! Projects and sessions: list, create, open, close, select, and a project
//! archive brought in as a new project.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::Form;
use super::pages::is_multipart;
use crate::http::AppState;
use crate::http::api::{Body, Doc, json};
use crate::http::error::ApiResult;
use crate::http::extract::{Acting, JsonBody, Target, Viewer, body_error};
use crate::wire::Closed;
use quire_core::ProjectEntry;
use quire_core::events::SessionSummary;
use quire_core::import::makes_pages;
use quire_model::ids::{ProjectId, SessionId};
use quire_model::lang::Languages;

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct CreateProject {
    #[schemars(length(min = 1, max = 200), regex(pattern = quire_model::limits::NAME_PATTERN))]
    name: String,
    /// BCP 47, e.g. `ja`.
    #[serde(default)]
    #[schemars(regex(pattern = quire_model::lang::TAG_PATTERN))]
    source_language: Option<String>,
    /// BCP 47, e.g. `pt-BR`.
    #[serde(default)]
    #[schemars(regex(pattern = quire_model::lang::TAG_PATTERN))]
    target_language: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct OpenProject {
    id: ProjectId,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct SelectSession {
    id: SessionId,
}

pub(super) const LIST_PROJECTS: Doc = Doc {
    id: "listProjects",
    tag: "projects",
    summary: "Managed projects in the projects directory",
    request: Body::None,
    response: Body::Json(json::<Vec<ProjectEntry>>),
    errors: &[],
    queries: &[],
};

pub(super) async fn list_projects(Acting(state): Acting, viewer: Viewer) -> ApiResult<Json<Value>> {
    Ok(viewer.json(&state.core.list_projects().await?))
}

pub(super) const CREATE_PROJECT: Doc = Doc {
    id: "createProject",
    tag: "projects",
    summary: "Create a managed project and open it; returns its session (a project made from a file: POST /api/v1/projects/import)",
    request: Body::Json(json::<CreateProject>),
    response: Body::Json(json::<SessionSummary>),
    errors: &[400, 409, 422],
    queries: &[],
};

pub(super) async fn create_project(
    Acting(state): Acting,
    JsonBody(body): JsonBody<CreateProject>,
) -> ApiResult<Json<SessionSummary>> {
    Ok(Json(
        state
            .core
            .create_managed_project_with(
                &body.name,
                Languages {
                    source_language: body.source_language,
                    target_language: body.target_language,
                },
            )
            .await?,
    ))
}

pub(super) const OPEN_PROJECT: Doc = Doc {
    id: "openProject",
    tag: "projects",
    summary: "Open a managed project by id and make it current",
    request: Body::Json(json::<OpenProject>),
    response: Body::Json(json::<SessionSummary>),
    errors: &[400, 404, 409],
    queries: &[],
};

pub(super) async fn open_project(
    Acting(state): Acting,
    viewer: Viewer,
    JsonBody(body): JsonBody<OpenProject>,
) -> ApiResult<Json<Value>> {
    Ok(viewer.json(&state.core.open_managed_project(body.id).await?))
}

pub(super) const OPEN_SESSION: Doc = Doc {
    id: "openSession",
    tag: "sessions",
    summary: "Open a managed project by id (or find its open session) without changing the current session; address it under /api/v1/sessions/{sessionId}",
    request: Body::Json(json::<OpenProject>),
    response: Body::Json(json::<SessionSummary>),
    errors: &[400, 404, 409],
    queries: &[],
};

pub(super) async fn open_session(
    Acting(state): Acting,
    viewer: Viewer,
    JsonBody(body): JsonBody<OpenProject>,
) -> ApiResult<Json<Value>> {
    Ok(viewer.json(&state.core.open_managed_session(body.id).await?))
}

pub(super) const CLOSE_CURRENT: Doc = Doc {
    id: "closeCurrentProject",
    tag: "projects",
    summary: "Save and close the current session",
    request: Body::None,
    response: Body::Json(json::<Closed>),
    errors: &[409],
    queries: &[],
};

pub(super) async fn close_current(
    Acting(state): Acting,
    Target(id): Target,
) -> ApiResult<Json<Closed>> {
    close(state, id).await
}

pub(super) const CLOSE_SESSION: Doc = Doc {
    id: "closeSession",
    tag: "sessions",
    summary: "Save and close a session",
    request: Body::None,
    response: Body::Json(json::<Closed>),
    errors: &[404],
    queries: &[],
};

pub(super) async fn close_session(
    Acting(state): Acting,
    Target(id): Target,
) -> ApiResult<Json<Closed>> {
    close(state, id).await
}

pub(super) async fn close(state: AppState, id: SessionId) -> ApiResult<Json<Closed>> {
    state.core.close_session(id).await?;
    Ok(Json(Closed { closed: id }))
}

pub(super) const SESSIONS: Doc = Doc {
    id: "listSessions",
    tag: "sessions",
    summary: "Open sessions",
    request: Body::None,
    response: Body::Json(json::<Vec<SessionSummary>>),
    errors: &[],
    queries: &[],
};

pub(super) async fn sessions(Acting(state): Acting, viewer: Viewer) -> Json<Value> {
    viewer.json(&state.core.sessions())
}

pub(super) const SESSION: Doc = Doc {
    id: "getSession",
    tag: "sessions",
    summary: "One open session",
    request: Body::None,
    response: Body::Json(json::<SessionSummary>),
    errors: &[404],
    queries: &[],
};

pub(super) async fn session(
    Acting(state): Acting,
    viewer: Viewer,
    Target(id): Target,
) -> ApiResult<Json<Value>> {
    Ok(viewer.json(&state.core.session(id)?))
}

pub(super) const SELECT_SESSION: Doc = Doc {
    id: "selectSession",
    tag: "sessions",
    summary: "Make a session current",
    request: Body::Json(json::<SelectSession>),
    response: Body::Json(json::<SessionSummary>),
    errors: &[400, 404],
    queries: &[],
};

pub(super) async fn select_session(
    Acting(state): Acting,
    viewer: Viewer,
    JsonBody(body): JsonBody<SelectSession>,
) -> ApiResult<Json<Value>> {
    state.core.make_current(body.id)?;
    Ok(viewer.json(&state.core.session(body.id)?))
}

pub(super) const IMPORT_ARCHIVE: Doc = Doc {
    id: "importProject",
    tag: "projects",
    summary: "A new project from a file, opened: a project archive (the zip as the body, any content type, or one multipart file: a new id), or one multipart file a project is made from — a translator's PO/POT or XLIFF 1.2/2.0 (a page with a node per segment, written back in its own format on export), subtitles, images or text; multipart fields `name`, `sourceLanguage`, `targetLanguage` (default: the file's)",
    request: Body::Bytes(&["application/octet-stream"]),
    response: Body::Json(json::<SessionSummary>),
    errors: &[400, 409, 413, 422],
    queries: &[],
};

/// A project archive (`application/zip`, or one multipart file), or a
/// multipart file a project is made from: a new project, opened.
pub(super) async fn import_archive(
    Acting(state): Acting,
    request: Request,
) -> ApiResult<Json<SessionSummary>> {
    let bytes = if is_multipart(&request) {
        let mut form = Form::read(request, &state).await?;
        if form.files.first().is_some_and(makes_pages) {
            let (name, source_language, target_language) = (
                form.field("name")?,
                form.field("sourceLanguage")?,
                form.field("targetLanguage")?,
            );
            let files = std::mem::take(&mut form.files);
            let (session, _) = state
                .core
                .create_project_from_files(
                    name.as_deref(),
                    Languages {
                        source_language,
                        target_language,
                    },
                    files,
                )
                .await?;
            return Ok(Json(session));
        }
        form.files
            .into_iter()
            .next()
            .map(|f| f.bytes)
            .unwrap_or_default()
    } else {
        Bytes::from_request(request, &state)
            .await
            .map_err(|e| body_error(e, &state))?
            .to_vec()
    };
    Ok(Json(state.core.import_managed_archive(bytes).await?))
}

//! The `/api/v1` routes: thin handlers that call the core and shape its
//! answers. Blocking core calls (open, create, close, blobs) run on the
//! blocking pool.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{FromRequest, Multipart, Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Value, json};

use super::AppState;
use super::api::{Api, Body, Doc, json, object};
use super::error::{ApiError, ApiResult};
use quire_core::engines::EngineInfo;
use quire_core::import::ImageFile;
use quire_model::error::CoreError;

mod desk;
mod history;
mod jobs;
mod pages;
mod projects;
mod suggestions;
mod transfer;
use jobs::{
    CANCEL_OPERATION, OPERATIONS, START_PIPELINE, cancel_operation, operations, start_pipeline,
};
use pages::{
    APPLY, BLOB, IMPORT_PAGES, PAGE_VIEWS, REDO, SCENE, UNDO, apply, blob, import_pages,
    page_views, redo, scene, undo,
};
use projects::{
    CLOSE_CURRENT, CLOSE_SESSION, CREATE_PROJECT, IMPORT_ARCHIVE, LIST_PROJECTS, OPEN_PROJECT,
    OPEN_SESSION, SELECT_SESSION, SESSION, SESSIONS, close_current, close_session, create_project,
    import_archive, list_projects, open_project, open_session, select_session, session, sessions,
};
use transfer::{
    EXPORT, GLOSSARY, IMPORT_GLOSSARY, IMPORT_MEMORY, IMPORT_TRANSLATIONS, export, glossary,
    import_glossary, import_memory, import_translations,
};

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Meta {
    name: &'static str,
    version: &'static str,
    mode: String,
    platform: String,
    sharing_supported: bool,
    /// Who is asking: their name (absent on a server without users) and
    /// role, so that a client offers only what the role allows.
    #[serde(skip_serializing_if = "Option::is_none")]
    user: Option<String>,
    #[schemars(with = "String")]
    role: &'static str,
}

pub fn platform() -> String {
    format!("{}-{}", std::env::consts::OS, std::env::consts::ARCH)
}

const HEALTHZ: Doc = Doc {
    id: "health",
    tag: "meta",
    summary: "Health: `ok`, or 503 naming each open project that cannot be written (no token needed)",
    request: Body::None,
    response: Body::Text,
    errors: &[503],
    queries: &[],
};

/// `ok`, or 503 naming each open project that cannot be written (a full
/// disk) and why; quire keeps trying, so it says `ok` again by itself.
async fn healthz(State(state): State<AppState>) -> Response {
    let unwritable = state.core.unwritable().await;
    if unwritable.is_empty() {
        return "ok".into_response();
    }
    let each: Vec<String> = unwritable
        .iter()
        .map(|u| {
            format!(
                "project `{}` (session {}) cannot be written: {}",
                u.name, u.session_id, u.why
            )
        })
        .collect();
    ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "unwritable",
        each.join("; "),
    )
    .into_response()
}

const META: Doc = Doc {
    id: "getMeta",
    tag: "meta",
    summary: "Name, version, mode, platform and whether TUI sharing is supported",
    request: Body::None,
    response: Body::Json(json::<Meta>),
    errors: &[],
    queries: &[],
};

async fn meta(State(state): State<AppState>, viewer: crate::http::extract::Viewer) -> Json<Meta> {
    let caller = viewer.0.unwrap_or_else(crate::access::Caller::local);
    Json(Meta {
        user: caller.name().map(str::to_owned),
        role: caller.role.as_str(),
        name: "quire",
        version: env!("CARGO_PKG_VERSION"),
        mode: state.mode.to_string(),
        platform: platform(),
        sharing_supported: cfg!(any(target_os = "linux", target_os = "macos")),
    })
}

const ENGINES: Doc = Doc {
    id: "listEngines",
    tag: "engines",
    summary: "The engine registry",
    request: Body::None,
    response: Body::Json(json::<Vec<EngineInfo>>),
    errors: &[],
    queries: &[],
};

async fn engines(State(state): State<AppState>) -> Json<Vec<EngineInfo>> {
    Json(state.core.engines())
}

const CONFIG: Doc = Doc {
    id: "getConfig",
    tag: "meta",
    summary: "The effective configuration, secrets redacted",
    request: Body::None,
    response: Body::Json(object),
    errors: &[],
    queries: &[],
};

async fn config(
    State(state): State<AppState>,
    viewer: crate::http::extract::Viewer,
) -> Json<Value> {
    // `Secret` serializes as "[redacted]".
    let config = serde_json::to_value(state.config().effective())
        .unwrap_or_else(|e| json!({ "error": e.to_string() }));
    Json(crate::access::config_as_seen_by(viewer.0.as_ref(), config))
}

const OPENAPI: Doc = Doc {
    id: "getOpenApi",
    tag: "meta",
    summary: "This document",
    request: Body::None,
    response: Body::Json(object),
    errors: &[],
    queries: &[],
};

async fn openapi(State(state): State<AppState>) -> Json<Value> {
    let open = state.openapi.document();
    if state.guard.secured() {
        Json(super::api::secured(open))
    } else {
        Json(open.clone())
    }
}

/// Routes that act on a session, registered twice: under `/api/v1` (the
/// current session) and under `/api/v1/sessions/{sessionId}`.
/// The files of a multipart body (name and bytes, in order) and its other
/// fields.
struct Form {
    files: Vec<ImageFile>,
    fields: Vec<(String, Bytes)>,
}

impl Form {
    async fn read(request: Request, state: &AppState) -> ApiResult<Form> {
        let mut form = Multipart::from_request(request, state)
            .await
            .map_err(|e| ApiError::bad_request("bad_multipart", e.body_text()))?;
        let (mut files, mut fields) = (Vec::new(), Vec::new());
        while let Some(field) = form
            .next_field()
            .await
            .map_err(|e| multipart_error(e, state))?
        {
            let name = field.name().unwrap_or_default().to_owned();
            let file_name = field.file_name().map(str::to_owned);
            let bytes = field.bytes().await.map_err(|e| multipart_error(e, state))?;
            match file_name {
                Some(name) => files.push(ImageFile {
                    name,
                    bytes: bytes.to_vec(),
                }),
                None => fields.push((name, bytes)),
            }
        }
        if files.is_empty() {
            return Err(ApiError::bad_request(
                "no_files",
                "the multipart body has no file field",
            ));
        }
        Ok(Form { files, fields })
    }

    /// The text of the field `name`, if it is there.
    fn field(&self, name: &str) -> ApiResult<Option<String>> {
        let Some((_, value)) = self.fields.iter().find(|(n, _)| n == name) else {
            return Ok(None);
        };
        String::from_utf8(value.to_vec()).map(Some).map_err(|_| {
            ApiError::from(CoreError::InvalidInput(format!(
                "the field `{name}` is not UTF-8"
            )))
        })
    }

    /// Whether the field `name` is `true` or `1`.
    fn flag(&self, name: &str) -> bool {
        self.fields
            .iter()
            .any(|(n, v)| n == name && matches!(&v[..], b"true" | b"1"))
    }

    /// The first file, as UTF-8 text, with its name.
    fn text(self) -> ApiResult<(String, String)> {
        let Some(file) = self.files.into_iter().next() else {
            return Err(ApiError::bad_request("no_files", "no file field"));
        };
        let text = String::from_utf8(file.bytes).map_err(|_| {
            ApiError::from(CoreError::InvalidInput(format!(
                "`{}` is not UTF-8",
                file.name
            )))
        })?;
        Ok((file.name, text))
    }
}

fn multipart_error(e: axum::extract::multipart::MultipartError, state: &AppState) -> ApiError {
    if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
        crate::http::guard::too_large(state.guard.max_body_bytes)
    } else {
        ApiError::bad_request("bad_multipart", e.body_text())
    }
}

fn session_routes(api: &mut Api<AppState>, prefix: &str) {
    let p = |path: &str| format!("{prefix}{path}");
    api.route("POST", &p("/pages"), IMPORT_PAGES, import_pages);
    api.route("GET", &p("/scene.json"), SCENE, scene);
    api.route("GET", &p("/blobs/{hash}"), BLOB, blob);
    api.route("GET", &p("/pages/{pageId}/views"), PAGE_VIEWS, page_views);
    api.route("POST", &p("/history/apply"), APPLY, apply);
    api.route("POST", &p("/history/undo"), UNDO, undo);
    api.route("POST", &p("/history/redo"), REDO, redo);
    api.route("POST", &p("/pipelines"), START_PIPELINE, start_pipeline);
    let s = |path: &str| p(&format!("/nodes/{{nodeId}}/suggestions{path}"));
    api.route("GET", &s(""), suggestions::LIST, suggestions::list);
    api.route("POST", &s(""), suggestions::ADD, suggestions::add);
    let one = |what: &str| s(&format!("/{{suggestionId}}/{what}"));
    api.route("POST", &one("vote"), suggestions::VOTE, suggestions::vote);
    api.route(
        "POST",
        &one("accept"),
        suggestions::ACCEPT,
        suggestions::accept,
    );
    api.route(
        "POST",
        &one("reject"),
        suggestions::REJECT,
        suggestions::reject,
    );
    let current = |what: &str| {
        if prefix == "/api/v1" {
            format!("/api/v1/projects/current/{what}")
        } else {
            p(&format!("/{what}"))
        }
    };
    api.route(
        "POST",
        &current("import"),
        IMPORT_TRANSLATIONS,
        import_translations,
    );
    api.route("GET", &current("glossary"), GLOSSARY, glossary);
    api.route(
        "POST",
        &current("glossary/import"),
        IMPORT_GLOSSARY,
        import_glossary,
    );
    let export_path = current("export");
    api.route("POST", &export_path, EXPORT, export);
}

/// Every route of the API, documented.
pub fn api() -> Api<AppState> {
    let mut api = Api::new();
    api.route("GET", "/healthz", HEALTHZ, healthz);
    api.route("GET", "/api/v1/meta", META, meta);
    api.route("GET", "/api/v1/engines", ENGINES, engines);
    api.route("GET", "/api/v1/projects", LIST_PROJECTS, list_projects);
    api.route("POST", "/api/v1/projects", CREATE_PROJECT, create_project);
    api.route(
        "POST",
        "/api/v1/projects/import",
        IMPORT_ARCHIVE,
        import_archive,
    );
    api.route(
        "PUT",
        "/api/v1/projects/current",
        OPEN_PROJECT,
        open_project,
    );
    api.route(
        "DELETE",
        "/api/v1/projects/current",
        CLOSE_CURRENT,
        close_current,
    );
    api.route("POST", "/api/v1/memory", IMPORT_MEMORY, import_memory);
    api.route("GET", "/api/v1/sessions", SESSIONS, sessions);
    api.route("POST", "/api/v1/sessions", OPEN_SESSION, open_session);
    api.route(
        "PUT",
        "/api/v1/sessions/current",
        SELECT_SESSION,
        select_session,
    );
    api.route("GET", "/api/v1/sessions/{sessionId}", SESSION, session);
    api.route(
        "DELETE",
        "/api/v1/sessions/{sessionId}",
        CLOSE_SESSION,
        close_session,
    );
    session_routes(&mut api, "/api/v1");
    api.with_id_suffix("InSession", |api| {
        session_routes(api, "/api/v1/sessions/{sessionId}");
    });
    // The desk's lookups name their session: they follow one person's
    // cursor, never whichever project was opened last.
    api.route(
        "GET",
        "/api/v1/sessions/{sessionId}/nodes/{nodeId}/matches",
        desk::MATCHES,
        desk::matches,
    );
    api.route(
        "GET",
        "/api/v1/sessions/{sessionId}/concordance",
        desk::CONCORDANCE,
        desk::concordance,
    );
    api.route(
        "GET",
        "/api/v1/projects/{projectId}/history",
        history::HISTORY,
        history::history,
    );
    api.route("GET", "/api/v1/operations", OPERATIONS, operations);
    api.route(
        "DELETE",
        "/api/v1/operations/{jobId}",
        CANCEL_OPERATION,
        cancel_operation,
    );
    api.route("GET", "/api/v1/config", CONFIG, config);
    api.route(
        "GET",
        "/api/v1/events",
        super::events::EVENTS,
        super::events::events,
    );
    api.route("GET", "/api/v1/openapi.json", OPENAPI, openapi);
    api
}

//! The `/api/v1` routes: thin handlers that call the core and shape its
//! answers. Blocking core calls (open, create, close, blobs) run on the
//! blocking pool.

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::QueryRejection;
use axum::extract::{FromRequest, Multipart, Path, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::AppState;
use super::api::{Api, Body, Doc};
use super::error::{ApiError, ApiResult};
use super::extract::{JsonBody, Target, body_error, parse_json};
use crate::core::blobs::BlobHash;
use crate::core::engines::EngineInfo;
use crate::core::events::{JobSummary, SessionSummary};
use crate::core::export::ExportSpec;
use crate::core::glossary::{GlossaryFormat, GlossaryImport, GlossaryReport, Term};
use crate::core::ids::{JobId, PageId, ProjectId, SessionId};
use crate::core::import::{ImageFile, ImportResult};
use crate::core::jobs::{Approval, PipelineSpec};
use crate::core::lang::Languages;
use crate::core::op::Op;
use crate::core::storage::SnapshotFile;
use crate::core::translations::{ImportReport, TranslationFormat, TranslationImport};
use crate::core::{ApplyResult, CoreError, ProjectEntry};
use crate::wire::{Cancelled, Closed, Epoch, Started};

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Meta {
    name: &'static str,
    version: &'static str,
    mode: String,
    platform: String,
    sharing_supported: bool,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateProject {
    #[schemars(length(min = 1, max = 200), regex(pattern = crate::core::limits::NAME_PATTERN))]
    name: String,
    /// BCP 47, e.g. `ja`.
    #[serde(default)]
    #[schemars(regex(pattern = crate::core::lang::TAG_PATTERN))]
    source_language: Option<String>,
    /// BCP 47, e.g. `pt-BR`.
    #[serde(default)]
    #[schemars(regex(pattern = crate::core::lang::TAG_PATTERN))]
    target_language: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OpenProject {
    id: ProjectId,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SelectSession {
    id: SessionId,
}

/// JSON page import.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TextPage {
    /// The page's name.
    name: String,
    /// Paragraphs separated by blank lines; one text node each.
    text: String,
    #[serde(default)]
    source_lang: Option<String>,
}

pub fn platform() -> String {
    format!("{}-{}", std::env::consts::OS, std::env::consts::ARCH)
}

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

async fn meta(State(state): State<AppState>) -> Json<Meta> {
    Json(Meta {
        name: "quire",
        version: env!("CARGO_PKG_VERSION"),
        mode: state.mode.clone(),
        platform: platform(),
        sharing_supported: cfg!(any(target_os = "linux", target_os = "macos")),
    })
}

async fn engines(State(state): State<AppState>) -> Json<Vec<EngineInfo>> {
    Json(state.core.engines())
}

async fn list_projects(State(state): State<AppState>) -> ApiResult<Json<Vec<ProjectEntry>>> {
    Ok(Json(state.core.list_projects().await?))
}

async fn create_project(
    State(state): State<AppState>,
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

async fn open_project(
    State(state): State<AppState>,
    JsonBody(body): JsonBody<OpenProject>,
) -> ApiResult<Json<SessionSummary>> {
    Ok(Json(state.core.open_managed_project(body.id).await?))
}

async fn open_session(
    State(state): State<AppState>,
    JsonBody(body): JsonBody<OpenProject>,
) -> ApiResult<Json<SessionSummary>> {
    Ok(Json(state.core.open_managed_session(body.id).await?))
}

async fn close_current(
    State(state): State<AppState>,
    Target(id): Target,
) -> ApiResult<Json<Closed>> {
    close(state, id).await
}

async fn close_session(
    State(state): State<AppState>,
    Target(id): Target,
) -> ApiResult<Json<Closed>> {
    close(state, id).await
}

async fn close(state: AppState, id: SessionId) -> ApiResult<Json<Closed>> {
    state.core.close_session(id).await?;
    Ok(Json(Closed { closed: id }))
}

async fn sessions(State(state): State<AppState>) -> Json<Vec<SessionSummary>> {
    Json(state.core.sessions())
}

async fn session(
    State(state): State<AppState>,
    Target(id): Target,
) -> ApiResult<Json<SessionSummary>> {
    state.core.session(id).map(Json).map_err(ApiError::from)
}

async fn select_session(
    State(state): State<AppState>,
    JsonBody(body): JsonBody<SelectSession>,
) -> ApiResult<Json<SessionSummary>> {
    state.core.make_current(body.id)?;
    state
        .core
        .session(body.id)
        .map(Json)
        .map_err(ApiError::from)
}

async fn export(
    State(state): State<AppState>,
    Target(id): Target,
    JsonBody(spec): JsonBody<ExportSpec>,
) -> ApiResult<Response> {
    let export = state.core.export(id, spec).await?;
    let disposition = format!("attachment; filename=\"{}\"", export.file_name);
    let mut response = export.bytes.into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(export.media_type),
    );
    if let Ok(value) = HeaderValue::from_str(&disposition) {
        headers.insert(header::CONTENT_DISPOSITION, value);
    }
    Ok(response)
}

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

/// A translation file: multipart (`file`, format from its name, and
/// `force`), or JSON [`TranslationImport`].
async fn import_translations(
    State(state): State<AppState>,
    Target(id): Target,
    request: Request,
) -> ApiResult<Json<ImportReport>> {
    let import = if is_multipart(&request) {
        let form = Form::read(request, &state).await?;
        let force = form.flag("force");
        let (file_name, content) = form.text()?;
        let format = TranslationFormat::from_path(&file_name).ok_or_else(|| {
            ApiError::from(CoreError::InvalidInput(format!(
                "`{file_name}`: the format is not known from its name (.xlf, .xliff, .po)"
            )))
        })?;
        TranslationImport {
            format,
            content,
            force,
        }
    } else {
        let bytes = Bytes::from_request(request, &state)
            .await
            .map_err(|e| body_error(e, &state))?;
        parse_json(&bytes)?
    };
    Ok(Json(state.core.import_translations(id, import).await?))
}

/// A glossary file: multipart (`file`, format from its name) or JSON
/// [`GlossaryImport`].
async fn import_glossary(
    State(state): State<AppState>,
    Target(id): Target,
    request: Request,
) -> ApiResult<Json<GlossaryReport>> {
    let import = if is_multipart(&request) {
        let (file_name, content) = Form::read(request, &state).await?.text()?;
        let format = GlossaryFormat::from_path(&file_name).ok_or_else(|| {
            ApiError::from(CoreError::InvalidInput(format!(
                "`{file_name}`: the format is not known from its name (.csv, .tbx)"
            )))
        })?;
        GlossaryImport { format, content }
    } else {
        let bytes = Bytes::from_request(request, &state)
            .await
            .map_err(|e| body_error(e, &state))?;
        parse_json(&bytes)?
    };
    Ok(Json(state.core.import_glossary(id, import).await?))
}

/// The session's glossary.
#[derive(Serialize, JsonSchema)]
pub struct GlossaryView {
    epoch: u64,
    terms: Vec<Term>,
}

async fn glossary(
    State(state): State<AppState>,
    Target(id): Target,
) -> ApiResult<Json<GlossaryView>> {
    let s = state.core.scene(id).await?;
    Ok(Json(GlossaryView {
        epoch: s.epoch,
        terms: s.scene.project.glossary.clone(),
    }))
}

/// A project archive (`application/zip`, or one multipart file): a new
/// project, opened.
async fn import_archive(
    State(state): State<AppState>,
    request: Request,
) -> ApiResult<Json<SessionSummary>> {
    let bytes = if is_multipart(&request) {
        let form = Form::read(request, &state).await?;
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

fn is_multipart(request: &Request) -> bool {
    request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("multipart/form-data"))
}

/// Multipart files (images, text, subtitles, comic archives), or JSON
/// `{ name, text }`.
async fn import_pages(
    State(state): State<AppState>,
    Target(id): Target,
    request: Request,
) -> ApiResult<Json<ImportResult>> {
    if is_multipart(&request) {
        let form = Form::read(request, &state).await?;
        return state
            .core
            .import_files(id, form.files)
            .await
            .map(Json)
            .map_err(ApiError::from);
    }
    let bytes = Bytes::from_request(request, &state)
        .await
        .map_err(|e| body_error(e, &state))?;
    let page: TextPage = parse_json(&bytes)?;
    state
        .core
        .import_text(id, &page.name, &page.text, page.source_lang.as_deref())
        .await
        .map(|r| {
            Json(ImportResult {
                epoch: r.epoch,
                created: r.created,
                skipped: Vec::new(),
            })
        })
        .map_err(ApiError::from)
}

fn multipart_error(e: axum::extract::multipart::MultipartError, state: &AppState) -> ApiError {
    if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
        super::guard::too_large(state.guard.max_body_bytes)
    } else {
        ApiError::bad_request("bad_multipart", e.body_text())
    }
}

/// `?pages=ID,ID` keeps only those pages (what a `SceneAdvanced` with
/// `pages` says changed).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SceneQuery {
    #[serde(default)]
    pages: Option<String>,
}

async fn scene(
    State(state): State<AppState>,
    Target(id): Target,
    query: Result<Query<SceneQuery>, QueryRejection>,
) -> ApiResult<Json<SnapshotFile>> {
    let Query(query) = query.map_err(|e| ApiError::bad_request("bad_query", e.body_text()))?;
    let wanted = query
        .pages
        .map(|list| {
            list.split(',')
                .map(|p| {
                    p.trim()
                        .parse::<PageId>()
                        .map_err(|_| ApiError::from(CoreError::not_found("page", p.trim())))
                })
                .collect::<ApiResult<Vec<PageId>>>()
        })
        .transpose()?;
    let mut s = state.core.scene(id).await?;
    if let Some(wanted) = wanted {
        if let Some(missing) = wanted.iter().find(|p| s.scene.page(**p).is_none()) {
            return Err(CoreError::not_found("page", missing).into());
        }
        s.scene.pages.retain(|p| wanted.contains(&p.id));
    }
    Ok(Json(SnapshotFile {
        epoch: s.epoch,
        scene: s.scene,
    }))
}

/// `?maxSide=N` asks for a thumbnail instead of the bytes.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BlobQuery {
    #[serde(default)]
    max_side: Option<u32>,
}

/// A blob never changes (its hash is its name): an `ETag` a client sent
/// back is answered with 304 without reading anything.
async fn blob(
    State(state): State<AppState>,
    Target(id): Target,
    Path(params): Path<std::collections::HashMap<String, String>>,
    query: Result<Query<BlobQuery>, QueryRejection>,
    request: HeaderMap,
) -> ApiResult<Response> {
    let Query(query) = query.map_err(|e| ApiError::bad_request("bad_query", e.body_text()))?;
    let text = params.get("hash").cloned().unwrap_or_default();
    let hash: BlobHash = text
        .parse()
        .map_err(|_| ApiError::from(CoreError::not_found("blob", &text)))?;
    let etag = match query.max_side {
        Some(side) => format!("\"{hash}-{side}\""),
        None => format!("\"{hash}\""),
    };
    let (mut response, media) = if super::etag_matches(&request, &etag) {
        (StatusCode::NOT_MODIFIED.into_response(), None)
    } else if let Some(side) = query.max_side {
        let picture = state.core.blob_picture(id, hash, side).await?;
        (
            picture.bytes.clone().into_response(),
            Some(picture.mime_type),
        )
    } else {
        let bytes = state.core.read_blob(id, hash).await?;
        let media = crate::core::blobs::media_type(&bytes);
        (bytes.into_response(), Some(media))
    };
    let headers = response.headers_mut();
    if let Some(media) = media {
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(media));
    }
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=31536000, immutable"),
    );
    if let Ok(etag) = HeaderValue::from_str(&etag) {
        headers.insert(header::ETAG, etag);
    }
    Ok(response)
}

async fn apply(
    State(state): State<AppState>,
    Target(id): Target,
    JsonBody(op): JsonBody<Op>,
) -> ApiResult<Json<ApplyResult>> {
    state
        .core
        .apply(id, op)
        .await
        .map(Json)
        .map_err(ApiError::from)
}

async fn undo(State(state): State<AppState>, Target(id): Target) -> ApiResult<Json<Epoch>> {
    Ok(Json(state.core.undo(id).await?.into()))
}

async fn redo(State(state): State<AppState>, Target(id): Target) -> ApiResult<Json<Epoch>> {
    Ok(Json(state.core.redo(id).await?.into()))
}

async fn start_pipeline(
    State(state): State<AppState>,
    Target(id): Target,
    JsonBody(spec): JsonBody<PipelineSpec>,
) -> ApiResult<Json<Started>> {
    let job_id = state
        .core
        .start_pipeline(id, spec, Approval::Unattended)
        .await?;
    Ok(Json(Started { job_id }))
}

async fn operations(State(state): State<AppState>) -> Json<Vec<JobSummary>> {
    Json(state.core.jobs())
}

async fn cancel_operation(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> ApiResult<Json<Cancelled>> {
    let job: JobId = id
        .parse()
        .map_err(|_| ApiError::from(CoreError::not_found("job", &id)))?;
    let cancelled = state.core.cancel_job(job)?;
    Ok(Json(Cancelled { cancelled }))
}

async fn config(State(state): State<AppState>) -> Json<Value> {
    // `Secret` serializes as "[redacted]".
    Json(serde_json::to_value(&*state.config).unwrap_or_else(|e| json!({ "error": e.to_string() })))
}

async fn openapi(State(state): State<AppState>) -> Json<Value> {
    Json((*state.openapi).clone())
}

/// Routes that act on a session, registered twice: under `/api/v1` (the
/// current session) and under `/api/v1/sessions/{sessionId}`.
fn session_routes(api: &mut Api<AppState>, prefix: &str) {
    let op = api.schema::<Op>();
    let applied = api.schema::<ApplyResult>();
    let text_page = api.schema::<TextPage>();
    let imported = api.schema::<ImportResult>();
    let snapshot = api.schema::<SnapshotFile>();
    let epoch = api.schema::<Epoch>();
    let pipeline = api.schema::<PipelineSpec>();
    let started = api.schema::<Started>();
    let export_spec = api.schema::<ExportSpec>();
    let translation_import = api.schema::<TranslationImport>();
    let import_report = api.schema::<ImportReport>();
    let glossary_view = api.schema::<GlossaryView>();
    let glossary_import = api.schema::<GlossaryImport>();
    let glossary_report = api.schema::<GlossaryReport>();
    let p = |path: &str| format!("{prefix}{path}");
    api.route(
        "POST",
        &p("/pages"),
        Doc {
            id: "importPages",
            tag: "pages",
            summary: "Import pages: multipart files (natural file name order) or JSON { name, text } (one text node per paragraph)",
            request: Body::MultipartOr(
                "One or more files: images (PNG, JPEG, WebP) and text (.txt, .md) a page each, subtitles (.srt, .vtt) a page of timed cues, comic archives (.cbz, .zip) a page per image",
                text_page,
            ),
            response: Body::Json(imported),
            errors: &[400, 404, 409, 413, 422],
        },
        import_pages,
    );
    api.route(
        "GET",
        &p("/scene.json"),
        Doc {
            id: "getScene",
            tag: "scene",
            summary: "The scene and its epoch (with pages, only those pages)",
            request: Body::None,
            response: Body::Json(snapshot),
            errors: &[400, 404, 409],
        },
        scene,
    );
    api.query(
        "GET",
        &p("/scene.json"),
        "pages",
        "Page ids, comma-separated: only these pages, in scene order (404 when one is not in the scene)",
        json!({ "type": "string" }),
    );
    api.route(
        "GET",
        &p("/blobs/{hash}"),
        Doc {
            id: "getBlob",
            tag: "scene",
            summary: "A blob's bytes, or with maxSide an image blob's thumbnail (JPEG, or PNG when it has transparency); immutable, with an ETag (304 for If-None-Match)",
            request: Body::None,
            response: Body::Bytes(&[
                "image/png",
                "image/jpeg",
                "image/webp",
                "application/octet-stream",
            ]),
            errors: &[304, 400, 404, 409, 422],
        },
        blob,
    );
    api.query(
        "GET",
        &p("/blobs/{hash}"),
        "maxSide",
        "A thumbnail whose long side is at most this many pixels (16 to 8192; never scaled up)",
        json!({ "type": "integer", "minimum": 16, "maximum": 8192 }),
    );
    api.route(
        "POST",
        &p("/history/apply"),
        Doc {
            id: "applyOp",
            tag: "history",
            summary: "Apply an op; returns the new epoch and the ids it created",
            request: Body::Json(op),
            response: Body::Json(applied),
            errors: &[400, 404, 409, 413, 422],
        },
        apply,
    );
    api.route(
        "POST",
        &p("/history/undo"),
        Doc {
            id: "undo",
            tag: "history",
            summary: "Undo the latest change; epoch null when there is nothing to undo",
            request: Body::None,
            response: Body::Json(epoch.clone()),
            errors: &[404, 409],
        },
        undo,
    );
    api.route(
        "POST",
        &p("/history/redo"),
        Doc {
            id: "redo",
            tag: "history",
            summary: "Redo the latest undone change; epoch null when there is nothing to redo",
            request: Body::None,
            response: Body::Json(epoch),
            errors: &[404, 409],
        },
        redo,
    );
    api.route(
        "POST",
        &p("/pipelines"),
        Doc {
            id: "startPipeline",
            tag: "pipelines",
            summary: "Start a pipeline; every step and page is checked first; returns the job id its events carry",
            request: Body::Json(pipeline),
            response: Body::Json(started),
            errors: &[400, 403, 404, 409, 422],
        },
        start_pipeline,
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
        Doc {
            id: "importTranslations",
            tag: "import",
            summary: "Merge translations back (XLIFF 2.0 or gettext PO) by node id, as one history entry; conflicts are reported and left alone unless force",
            request: Body::MultipartOr(
                "One translation file (.xlf, .xliff, .po) as the field `file`, and optionally `force` = true",
                translation_import,
            ),
            response: Body::Json(import_report),
            errors: &[400, 404, 409, 413, 422],
        },
        import_translations,
    );
    api.route(
        "GET",
        &current("glossary"),
        Doc {
            id: "getGlossary",
            tag: "glossary",
            summary: "The project's glossary, sorted by source; edit it with an UpdateGlossary op",
            request: Body::None,
            response: Body::Json(glossary_view),
            errors: &[404, 409],
        },
        glossary,
    );
    api.route(
        "POST",
        &current("glossary/import"),
        Doc {
            id: "importGlossary",
            tag: "glossary",
            summary: "Add terms from a CSV or TBX file (a term with a source the glossary has replaces it), as one history entry",
            request: Body::MultipartOr(
                "One glossary file (.csv with a header row naming source and target, or .tbx) as the field `file`",
                glossary_import,
            ),
            response: Body::Json(glossary_report),
            errors: &[400, 404, 409, 413, 422],
        },
        import_glossary,
    );
    let export_path = current("export");
    api.route(
        "POST",
        &export_path,
        Doc {
            id: "exportProject",
            tag: "export",
            summary: "Export as archive (zip), json, markdown, xliff, po, srt, vtt, or rendered pages as png (a zip), cbz or pdf (stale pages rendered first), optionally some pages",
            request: Body::Json(export_spec),
            response: Body::Bytes(&[
                "application/zip",
                "application/json",
                "text/markdown",
                "application/xliff+xml",
                "text/x-gettext-translation",
                "application/x-subrip",
                "text/vtt",
                "application/vnd.comicbook+zip",
                "application/pdf",
            ]),
            errors: &[400, 404, 409, 422],
        },
        export,
    );
}

/// Every route of the API, documented.
pub fn api() -> Api<AppState> {
    let mut api = Api::new();
    let meta_schema = api.schema::<Meta>();
    let engines_schema = api.schema::<Vec<EngineInfo>>();
    let projects_schema = api.schema::<Vec<ProjectEntry>>();
    let session_schema = api.schema::<SessionSummary>();
    let sessions_schema = api.schema::<Vec<SessionSummary>>();
    let create_schema = api.schema::<CreateProject>();
    let open_schema = api.schema::<OpenProject>();
    let select_schema = api.schema::<SelectSession>();
    let closed_schema = api.schema::<Closed>();
    let jobs_schema = api.schema::<Vec<JobSummary>>();
    let cancelled_schema = api.schema::<Cancelled>();
    api.route(
        "GET",
        "/healthz",
        Doc {
            id: "health",
            tag: "meta",
            summary: "Health: `ok`, or 503 naming each open project that cannot be written (no token needed)",
            request: Body::None,
            response: Body::Text,
            errors: &[503],
        },
        healthz,
    );
    api.route(
        "GET",
        "/api/v1/meta",
        Doc {
            id: "getMeta",
            tag: "meta",
            summary: "Name, version, mode, platform and whether TUI sharing is supported",
            request: Body::None,
            response: Body::Json(meta_schema),
            errors: &[],
        },
        meta,
    );
    api.route(
        "GET",
        "/api/v1/engines",
        Doc {
            id: "listEngines",
            tag: "engines",
            summary: "The engine registry",
            request: Body::None,
            response: Body::Json(engines_schema),
            errors: &[],
        },
        engines,
    );
    api.route(
        "GET",
        "/api/v1/projects",
        Doc {
            id: "listProjects",
            tag: "projects",
            summary: "Managed projects in the projects directory",
            request: Body::None,
            response: Body::Json(projects_schema),
            errors: &[],
        },
        list_projects,
    );
    api.route(
        "POST",
        "/api/v1/projects",
        Doc {
            id: "createProject",
            tag: "projects",
            summary: "Create a managed project and open it; returns its session",
            request: Body::Json(create_schema),
            response: Body::Json(session_schema.clone()),
            errors: &[400, 409, 422],
        },
        create_project,
    );
    api.route(
        "POST",
        "/api/v1/projects/import",
        Doc {
            id: "importProject",
            tag: "projects",
            summary: "Import a project archive (the zip as the body, any content type, or one multipart file) as a new project with a new id, and open it",
            request: Body::Bytes(&["application/octet-stream"]),
            response: Body::Json(session_schema.clone()),
            errors: &[400, 409, 413, 422],
        },
        import_archive,
    );
    api.route(
        "PUT",
        "/api/v1/projects/current",
        Doc {
            id: "openProject",
            tag: "projects",
            summary: "Open a managed project by id and make it current",
            request: Body::Json(open_schema.clone()),
            response: Body::Json(session_schema.clone()),
            errors: &[400, 404, 409],
        },
        open_project,
    );
    api.route(
        "DELETE",
        "/api/v1/projects/current",
        Doc {
            id: "closeCurrentProject",
            tag: "projects",
            summary: "Save and close the current session",
            request: Body::None,
            response: Body::Json(closed_schema.clone()),
            errors: &[409],
        },
        close_current,
    );
    api.route(
        "GET",
        "/api/v1/sessions",
        Doc {
            id: "listSessions",
            tag: "sessions",
            summary: "Open sessions",
            request: Body::None,
            response: Body::Json(sessions_schema),
            errors: &[],
        },
        sessions,
    );
    api.route(
        "POST",
        "/api/v1/sessions",
        Doc {
            id: "openSession",
            tag: "sessions",
            summary: "Open a managed project by id (or find its open session) without changing the current session; address it under /api/v1/sessions/{sessionId}",
            request: Body::Json(open_schema),
            response: Body::Json(session_schema.clone()),
            errors: &[400, 404, 409],
        },
        open_session,
    );
    api.route(
        "PUT",
        "/api/v1/sessions/current",
        Doc {
            id: "selectSession",
            tag: "sessions",
            summary: "Make a session current",
            request: Body::Json(select_schema),
            response: Body::Json(session_schema.clone()),
            errors: &[400, 404],
        },
        select_session,
    );
    api.route(
        "GET",
        "/api/v1/sessions/{sessionId}",
        Doc {
            id: "getSession",
            tag: "sessions",
            summary: "One open session",
            request: Body::None,
            response: Body::Json(session_schema),
            errors: &[404],
        },
        session,
    );
    api.route(
        "DELETE",
        "/api/v1/sessions/{sessionId}",
        Doc {
            id: "closeSession",
            tag: "sessions",
            summary: "Save and close a session",
            request: Body::None,
            response: Body::Json(closed_schema),
            errors: &[404],
        },
        close_session,
    );
    session_routes(&mut api, "/api/v1");
    api.with_id_suffix("InSession", |api| {
        session_routes(api, "/api/v1/sessions/{sessionId}");
    });
    api.route(
        "GET",
        "/api/v1/operations",
        Doc {
            id: "listJobs",
            tag: "pipelines",
            summary: "Jobs in flight and the last 100 finished, with their warnings",
            request: Body::None,
            response: Body::Json(jobs_schema),
            errors: &[],
        },
        operations,
    );
    api.route(
        "DELETE",
        "/api/v1/operations/{jobId}",
        Doc {
            id: "cancelJob",
            tag: "pipelines",
            summary: "Cancel a job (between pages); cancelled is false when it had already finished",
            request: Body::None,
            response: Body::Json(cancelled_schema),
            errors: &[404],
        },
        cancel_operation,
    );
    api.route(
        "GET",
        "/api/v1/config",
        Doc {
            id: "getConfig",
            tag: "meta",
            summary: "The effective configuration, secrets redacted",
            request: Body::None,
            response: Body::Json(schemars::json_schema!({ "type": "object" })),
            errors: &[],
        },
        config,
    );
    api.route(
        "GET",
        "/api/v1/events",
        Doc {
            id: "events",
            tag: "events",
            summary: "Server-sent events: id = seq; a Snapshot first, or the events after Last-Event-ID when still buffered",
            request: Body::None,
            response: Body::Events,
            errors: &[],
        },
        super::events::events,
    );
    api.route(
        "GET",
        "/api/v1/openapi.json",
        Doc {
            id: "getOpenApi",
            tag: "meta",
            summary: "This document",
            request: Body::None,
            response: Body::Json(schemars::json_schema!({ "type": "object" })),
            errors: &[],
        },
        openapi,
    );
    api
}

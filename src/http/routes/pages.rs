//! A session's pages and scene: importing pages, reading the scene and its
//! blobs, applying ops, undo and redo.

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::QueryRejection;
use axum::extract::{FromRequest, Path, Query, Request};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use schemars::JsonSchema;
use serde::Deserialize;

use super::Form;
use crate::http::api::{Body, Doc, QueryParam, json};
use crate::http::error::{ApiError, ApiResult};
use crate::http::extract::{Acting, JsonBody, Target, body_error, parse_json};
use crate::wire::Epoch;
use quire_core::ApplyResult;
use quire_core::import::ImportResult;
use quire_core::picture::PageViews;
use quire_core::session::SceneSnapshot;
use quire_model::error::CoreError;
use quire_model::hash::BlobHash;
use quire_model::ids::PageId;
use quire_model::op::Op;

/// JSON page import.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct TextPage {
    /// The page's name.
    name: String,
    /// Paragraphs separated by blank lines; one text node each.
    text: String,
    #[serde(default)]
    source_lang: Option<String>,
}

pub(super) fn is_multipart(request: &Request) -> bool {
    request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("multipart/form-data"))
}

pub(super) const IMPORT_PAGES: Doc = Doc {
    id: "importPages",
    tag: "pages",
    summary: "Import pages: multipart files (natural file name order) or JSON { name, text } (one text node per paragraph)",
    request: Body::MultipartOr(
        "One or more files: images (PNG, JPEG, WebP) and text (.txt, .md) a page each, subtitles (.srt, .vtt) a page of timed cues, comic archives (.cbz, .zip) a page per image",
        json::<TextPage>,
    ),
    response: Body::Json(json::<ImportResult>),
    errors: &[400, 404, 409, 413, 422],
    queries: &[],
};

/// Multipart files (images, text, subtitles, comic archives), or JSON
/// `{ name, text }`.
pub(super) async fn import_pages(
    Acting(state): Acting,
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

/// `?pages=ID,ID` keeps only those pages (what a `SceneAdvanced` with
/// `pages` says changed).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SceneQuery {
    #[serde(default)]
    pages: Option<String>,
}

pub(super) const SCENE: Doc = Doc {
    id: "getScene",
    tag: "scene",
    summary: "The scene and its epoch (with pages, only those pages)",
    request: Body::None,
    response: Body::Json(json::<SceneSnapshot>),
    errors: &[400, 404, 409],
    queries: &[QueryParam {
        name: "pages",
        description: "Page ids, comma-separated: only these pages, in scene order (404 when one is not in the scene)",
        schema: r#"{ "type": "string" }"#,
    }],
};

pub(super) async fn scene(
    Acting(state): Acting,
    Target(id): Target,
    query: Result<Query<SceneQuery>, QueryRejection>,
) -> ApiResult<Json<SceneSnapshot>> {
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
    Ok(Json(state.core.scene_pages(id, wanted.as_deref()).await?))
}

/// `?maxSide=N` asks for a thumbnail instead of the bytes.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct BlobQuery {
    #[serde(default)]
    max_side: Option<u32>,
}

pub(super) const PAGE_VIEWS: Doc = Doc {
    id: "getPageViews",
    tag: "scene",
    summary: "A page's cleaned and rendered images, each with whether it is still current (a view says when it is out of date)",
    request: Body::None,
    response: Body::Json(json::<PageViews>),
    errors: &[404, 409],
    queries: &[],
};

/// The page's made images and whether each is current.
pub(super) async fn page_views(
    Acting(state): Acting,
    Target(id): Target,
    Path(params): Path<std::collections::HashMap<String, String>>,
) -> ApiResult<Json<PageViews>> {
    let text = params.get("pageId").cloned().unwrap_or_default();
    let page: PageId = text
        .parse()
        .map_err(|_| ApiError::from(CoreError::not_found("page", &text)))?;
    Ok(Json(state.core.page_views(id, page).await?))
}

pub(super) const BLOB: Doc = Doc {
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
    queries: &[QueryParam {
        name: "maxSide",
        description: "A thumbnail whose long side is at most this many pixels (16 to 8192; never scaled up)",
        schema: r#"{ "type": "integer", "minimum": 16, "maximum": 8192 }"#,
    }],
};

/// A blob never changes (its hash is its name): an `ETag` a client sent
/// back is answered with 304 without reading anything.
pub(super) async fn blob(
    Acting(state): Acting,
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
    let (mut response, media) = if crate::http::etag_matches(&request, &etag) {
        (StatusCode::NOT_MODIFIED.into_response(), None)
    } else if let Some(side) = query.max_side {
        let picture = state.core.blob_picture(id, hash, side).await?;
        (
            picture.bytes.clone().into_response(),
            Some(picture.mime_type),
        )
    } else {
        let bytes = state.core.read_blob(id, hash).await?;
        let media = quire_store::blobs::media_type(&bytes);
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

pub(super) const APPLY: Doc = Doc {
    id: "applyOp",
    tag: "history",
    summary: "Apply an op; returns the new epoch and the ids it created",
    request: Body::Json(json::<Op>),
    response: Body::Json(json::<ApplyResult>),
    errors: &[400, 403, 404, 409, 413, 422],
    queries: &[],
};

pub(super) async fn apply(
    Acting(state): Acting,
    caller: Option<axum::Extension<crate::access::Caller>>,
    Target(id): Target,
    JsonBody(op): JsonBody<Op>,
) -> ApiResult<Json<ApplyResult>> {
    if let Some(axum::Extension(caller)) = caller {
        let (role, what) = crate::access::op_needs(&op);
        caller.may(role, what).map_err(|why| {
            ApiError::new(axum::http::StatusCode::FORBIDDEN, "forbidden_role", why)
        })?;
    }
    state
        .core
        .apply(id, op)
        .await
        .map(Json)
        .map_err(ApiError::from)
}

pub(super) const UNDO: Doc = Doc {
    id: "undo",
    tag: "history",
    summary: "Undo the caller's own latest change still in effect (their edits, their agents', the jobs they started; an agent's only its own); epoch null and a message when they have none; 409 undo_conflict naming who when someone else has changed it since",
    request: Body::None,
    response: Body::Json(json::<Epoch>),
    errors: &[404, 409],
    queries: &[],
};

pub(super) async fn undo(Acting(state): Acting, Target(id): Target) -> ApiResult<Json<Epoch>> {
    Ok(Json(Epoch::undone(state.core.undo(id).await?)))
}

pub(super) const REDO: Doc = Doc {
    id: "redo",
    tag: "history",
    summary: "Redo the caller's own latest undone change; epoch null and a message when there is none; 409 undo_conflict naming who when someone else has changed it since",
    request: Body::None,
    response: Body::Json(json::<Epoch>),
    errors: &[404, 409],
    queries: &[],
};

pub(super) async fn redo(Acting(state): Acting, Target(id): Target) -> ApiResult<Json<Epoch>> {
    Ok(Json(Epoch::redone(state.core.redo(id).await?)))
}

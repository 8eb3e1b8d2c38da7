//! Files in and out of a session: exports, translations merged back, the
//! glossary.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use schemars::JsonSchema;
use serde::Serialize;

use super::Form;
use super::pages::is_multipart;
use crate::http::api::{Body, Doc, json};
use crate::http::error::{ApiError, ApiResult};
use crate::http::extract::{Acting, JsonBody, Target, body_error, parse_json};
use quire_core::export::ExportSpec;
use quire_core::glossary::{GlossaryImport, GlossaryReport};
use quire_core::memories::{TmxImport, TmxReport};
use quire_core::translations::{ImportReport, TranslationImport};
use quire_formats::glossary::GlossaryFormat;
use quire_formats::units::TranslationFormat;
use quire_model::error::CoreError;
use quire_model::glossary::Term;

pub(super) const EXPORT: Doc = Doc {
    id: "exportProject",
    tag: "export",
    summary: "Export as archive (zip), json, markdown, xliff, po, tmx (the reviewed and final segments), srt, vtt, or rendered pages as png (a zip), cbz or pdf (stale pages rendered first), optionally some pages",
    request: Body::Json(json::<ExportSpec>),
    response: Body::Bytes(&[
        "application/zip",
        "application/json",
        "text/markdown",
        "application/xliff+xml",
        "text/x-gettext-translation",
        "application/x-tmx+xml",
        "application/x-subrip",
        "text/vtt",
        "application/vnd.comicbook+zip",
        "application/pdf",
    ]),
    errors: &[400, 404, 409, 422],
    queries: &[],
};

pub(super) async fn export(
    Acting(state): Acting,
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
    if let Some(value) = export
        .untranslated
        .and_then(|u| HeaderValue::from_str(&u.said()).ok())
    {
        headers.insert(crate::wire::UNTRANSLATED_HEADER, value);
    }
    Ok(response)
}

pub(super) const IMPORT_TRANSLATIONS: Doc = Doc {
    id: "importTranslations",
    tag: "import",
    summary: "Merge translations back (XLIFF 2.0 or gettext PO) three-way against the export the file came from, as one history entry: the file's changes taken, later changes here kept, conflicts named with both values and kept as here unless their units are in `take`; `force` merges a file in other languages than the project's and never takes a conflict",
    request: Body::MultipartOr(
        "One translation file (.xlf, .xliff, .poxliff, .po) as the field `file`; optionally `force` = true and `take` (the conflicting units to take, comma-separated)",
        json::<TranslationImport>,
    ),
    response: Body::Json(json::<ImportReport>),
    errors: &[400, 404, 409, 413, 422],
    queries: &[],
};

/// A translation file: multipart (`file`, format from its name, `force`
/// and `take`), or JSON [`TranslationImport`].
pub(super) async fn import_translations(
    Acting(state): Acting,
    Target(id): Target,
    request: Request,
) -> ApiResult<Json<ImportReport>> {
    let import = if is_multipart(&request) {
        let form = Form::read(request, &state).await?;
        let force = form.flag("force");
        let take = form
            .field("take")?
            .map(|units| {
                units
                    .split(',')
                    .map(str::trim)
                    .filter(|u| !u.is_empty())
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        let file = form.files.into_iter().next().ok_or_else(|| {
            ApiError::bad_request("no_files", "the multipart body has no file field")
        })?;
        let file_name = file.name;
        let format = TranslationFormat::from_path(&file_name).ok_or_else(|| {
            ApiError::from(CoreError::InvalidInput(format!(
                "`{file_name}`: the format is not known from its name (.xlf, .xliff, .poxliff, .po)"
            )))
        })?;
        let content = quire_formats::units::decode(format, &file_name, &file.bytes)?;
        TranslationImport {
            format,
            content,
            force,
            take,
        }
    } else {
        let bytes = Bytes::from_request(request, &state)
            .await
            .map_err(|e| body_error(e, &state))?;
        parse_json(&bytes)?
    };
    Ok(Json(state.core.import_translations(id, import).await?))
}

pub(super) const IMPORT_GLOSSARY: Doc = Doc {
    id: "importGlossary",
    tag: "glossary",
    summary: "Add terms from a CSV or TBX file (a term with a source the glossary has replaces it), as one history entry",
    request: Body::MultipartOr(
        "One glossary file (.csv with a header row naming source and target, or .tbx) as the field `file`",
        json::<GlossaryImport>,
    ),
    response: Body::Json(json::<GlossaryReport>),
    errors: &[400, 404, 409, 413, 422],
    queries: &[],
};

/// A glossary file: multipart (`file`, format from its name) or JSON
/// [`GlossaryImport`].
pub(super) async fn import_glossary(
    Acting(state): Acting,
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
pub(super) struct GlossaryView {
    epoch: u64,
    terms: Vec<Term>,
}

pub(super) const GLOSSARY: Doc = Doc {
    id: "getGlossary",
    tag: "glossary",
    summary: "The project's glossary, sorted by source; edit it with an UpdateGlossary op",
    request: Body::None,
    response: Body::Json(json::<GlossaryView>),
    errors: &[404, 409],
    queries: &[],
};

pub(super) async fn glossary(
    Acting(state): Acting,
    Target(id): Target,
) -> ApiResult<Json<GlossaryView>> {
    let s = state.core.scene(id).await?;
    Ok(Json(GlossaryView {
        epoch: s.epoch,
        terms: s.scene.project.glossary.clone(),
    }))
}

pub(super) const IMPORT_MEMORY: Doc = Doc {
    id: "importMemory",
    tag: "memory",
    summary: "Add a TMX file to the translation memory (named after the file; one of the same name is replaced); its units in the project's two languages are then offered by the tm engine",
    request: Body::MultipartOr(
        "One .tmx file (any encoding its declaration or byte order mark names) as the field `file`",
        json::<TmxImport>,
    ),
    response: Body::Json(json::<TmxReport>),
    errors: &[400, 413, 422],
    queries: &[],
};

/// A TMX file: multipart (`file`) or JSON [`TmxImport`].
pub(super) async fn import_memory(
    Acting(state): Acting,
    request: Request,
) -> ApiResult<Json<TmxReport>> {
    let (name, bytes) = if is_multipart(&request) {
        let form = Form::read(request, &state).await?;
        let file = form.files.into_iter().next().ok_or_else(|| {
            ApiError::bad_request("no_files", "the multipart body has no file field")
        })?;
        (file.name, file.bytes)
    } else {
        let bytes = Bytes::from_request(request, &state)
            .await
            .map_err(|e| body_error(e, &state))?;
        let import: TmxImport = parse_json(&bytes)?;
        (import.name, import.content.into_bytes())
    };
    Ok(Json(state.core.import_tmx(&name, bytes).await?))
}

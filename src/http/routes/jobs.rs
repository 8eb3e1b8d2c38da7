//! Pipelines: starting one, listing jobs, cancelling one.

use axum::Json;
use axum::extract::Path;

use crate::http::api::{Body, Doc, json};
use crate::http::error::{ApiError, ApiResult};
use crate::http::extract::{Acting, JsonBody, Target};
use crate::wire::{Cancelled, Started};
use quire_core::events::JobSummary;
use quire_core::jobs::{Approval, PipelineSpec};
use quire_model::error::CoreError;
use quire_model::ids::JobId;

pub(super) const START_PIPELINE: Doc = Doc {
    id: "startPipeline",
    tag: "pipelines",
    summary: "Start a pipeline; every step and page is checked first; returns the job id its events carry",
    request: Body::Json(json::<PipelineSpec>),
    response: Body::Json(json::<Started>),
    errors: &[400, 403, 404, 409, 422],
    queries: &[],
};

pub(super) async fn start_pipeline(
    Acting(state): Acting,
    Target(id): Target,
    JsonBody(spec): JsonBody<PipelineSpec>,
) -> ApiResult<Json<Started>> {
    let job_id = state
        .core
        .start_pipeline(id, spec, Approval::Unattended)
        .await?;
    Ok(Json(Started { job_id }))
}

pub(super) const OPERATIONS: Doc = Doc {
    id: "listJobs",
    tag: "pipelines",
    summary: "Jobs in flight and the last 100 finished, with their warnings",
    request: Body::None,
    response: Body::Json(json::<Vec<JobSummary>>),
    errors: &[],
    queries: &[],
};

pub(super) async fn operations(Acting(state): Acting) -> Json<Vec<JobSummary>> {
    Json(state.core.jobs())
}

pub(super) const CANCEL_OPERATION: Doc = Doc {
    id: "cancelJob",
    tag: "pipelines",
    summary: "Cancel a job (between pages); cancelled is false when it had already finished",
    request: Body::None,
    response: Body::Json(json::<Cancelled>),
    errors: &[404],
    queries: &[],
};

pub(super) async fn cancel_operation(
    Acting(state): Acting,
    Path(id): Path<String>,
) -> ApiResult<Json<Cancelled>> {
    let job: JobId = id
        .parse()
        .map_err(|_| ApiError::from(CoreError::not_found("job", &id)))?;
    let cancelled = state.core.cancel_job(job)?;
    Ok(Json(Cancelled { cancelled }))
}

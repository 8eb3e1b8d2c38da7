//! The tasks extension of MCP (`io.modelcontextprotocol/tasks`, SEP-2663)
//! for `quire_start_pipeline`: a client that declares it gets a task at
//! once instead of a result, and follows it with `tasks/get` to the same
//! result a `wait: true` call returns; `tasks/cancel` cancels the job.
//!
//! A task is a job: its id is the job's id, and it is kept as long as the
//! core keeps the job (jobs in flight and the last 100), so the task
//! needs no state of its own, in either era.

use rmcp::model::{
    CallToolResult, CreateTaskResult, DetailedTask, ErrorData, JsonObject, Task, TaskPayload,
    TaskStatus,
};
use serde_json::Value;

use super::reply::ok;
use super::tools::Started;
use crate::wire;
use quire_core::Core;
use quire_core::events::{JobStatus, JobSummary};
use quire_model::ids::JobId;
use quire_store::storage::now_rfc3339;

/// How often a client is asked to poll `tasks/get`.
const POLL_INTERVAL_MS: u64 = 500;

/// The task of a job just started.
pub(super) fn created(job: JobId) -> CreateTaskResult {
    CreateTaskResult::new(task(job, TaskStatus::Working))
}

/// `tasks/get`: the job's state, and when it has ended, its result.
pub(super) fn get(core: &Core, task_id: &str) -> Result<DetailedTask, ErrorData> {
    let summary = core.job(job_id(task_id)?).map_err(unknown(task_id))?;
    let payload = match summary.status {
        JobStatus::Queued | JobStatus::Running => TaskPayload::Working,
        JobStatus::Cancelled => TaskPayload::Cancelled,
        JobStatus::Completed | JobStatus::CompletedWithErrors | JobStatus::Failed => {
            TaskPayload::Completed {
                result: outcome(summary)?,
            }
        }
    };
    let task = task(job_id(task_id)?, payload.status());
    Ok(DetailedTask::new(task, payload))
}

/// `tasks/cancel`: cancels the job (a job that has ended stays as it was).
pub(super) fn cancel(core: &Core, task_id: &str) -> Result<(), ErrorData> {
    core.cancel_job(job_id(task_id)?)
        .map(|_| ())
        .map_err(unknown(task_id))
}

fn task(job: JobId, status: TaskStatus) -> Task {
    Task::new(job.to_string(), status, started_at(job), now_rfc3339())
        .with_poll_interval_ms(POLL_INTERVAL_MS)
}

/// When the job was made: its v7 id carries the time.
fn started_at(job: JobId) -> String {
    let at = job.0.get_timestamp().map_or(std::time::UNIX_EPOCH, |t| {
        let (secs, nanos) = t.to_unix();
        std::time::UNIX_EPOCH + std::time::Duration::new(secs, nanos)
    });
    humantime::format_rfc3339_millis(at).to_string()
}

/// What `quire_start_pipeline` with `wait: true` answers for the ended job.
fn outcome(summary: JobSummary) -> Result<JsonObject, ErrorData> {
    let result: CallToolResult = ok(&Started {
        started: wire::Started { job_id: summary.id },
        status: Some(summary.status),
        warnings: Some(summary.warnings),
        error: summary.error,
    })
    .map_err(|_| ErrorData::internal_error("cannot encode the job's result", None))?;
    match serde_json::to_value(result) {
        Ok(Value::Object(map)) => Ok(map),
        _ => Err(ErrorData::internal_error(
            "cannot encode the job's result",
            None,
        )),
    }
}

fn job_id(task_id: &str) -> Result<JobId, ErrorData> {
    task_id
        .parse()
        .map_err(|_| ErrorData::invalid_params(format!("unknown task `{task_id}`"), None))
}

fn unknown(task_id: &str) -> impl Fn(quire_model::error::CoreError) -> ErrorData + '_ {
    move |_| ErrorData::invalid_params(format!("unknown task `{task_id}`"), None)
}

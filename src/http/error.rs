//! The HTTP error contract: every failure is a status and a JSON body
//! `{ "error": { "code": "...", "message": "..." } }`. Core errors are
//! mapped to statuses here, in one place. (On `/mcp` the guard's refusals
//! are rewritten as JSON-RPC errors: [`super::guard::guard`].)

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use quire_model::error::CoreError;
use quire_model::error::Stale;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
    /// Both values of a stale edit (a `conflict`), as `error.stale`.
    pub stale: Option<Box<Stale>>,
    /// What the log says instead of `message`, when the client is told
    /// less (a file error's path stays in the server's log).
    pub logged: Option<String>,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
            stale: None,
            logged: None,
        }
    }

    pub fn bad_request(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, code, message)
    }
}

/// The status of each core error code.
pub fn status_of(error: &CoreError) -> StatusCode {
    match error {
        CoreError::NoSession
        | CoreError::Conflict(_)
        | CoreError::Stale(_)
        | CoreError::UndoConflict(_)
        | CoreError::Locked(_) => StatusCode::CONFLICT,
        CoreError::NotFound { .. } => StatusCode::NOT_FOUND,
        CoreError::InvalidOp(_) | CoreError::InvalidInput(_) => StatusCode::UNPROCESSABLE_ENTITY,
        CoreError::ApprovalRequired(_) | CoreError::Forbidden(_) => StatusCode::FORBIDDEN,
        CoreError::Corrupt { .. } | CoreError::Io { .. } => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

impl From<CoreError> for ApiError {
    fn from(error: CoreError) -> Self {
        // A file's path is the server's business: the client hears what
        // went wrong, the log where.
        let told = match &error {
            CoreError::Io { message, .. } => {
                Some(format!("a file could not be read or written: {message}"))
            }
            CoreError::Corrupt { message, .. } => {
                Some(format!("a project file is damaged: {message}"))
            }
            _ => None,
        };
        let full = error.to_string();
        ApiError {
            status: status_of(&error),
            code: error.code(),
            message: told.clone().unwrap_or_else(|| full.clone()),
            logged: told.map(|_| full),
            stale: match error {
                CoreError::Stale(stale) => Some(stale),
                _ => None,
            },
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        if self.status.is_server_error() {
            let logged = self.logged.as_deref().unwrap_or(&self.message);
            tracing::error!(code = self.code, "{logged}");
        }
        let mut body = json!({ "error": { "code": self.code, "message": self.message } });
        if let Some(stale) = &self.stale {
            body["error"]["stale"] = json!(stale);
        }
        let mut response = (self.status, Json(body)).into_response();
        response.extensions_mut().insert(Refused {
            code: self.code,
            message: self.message,
        });
        response
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

/// What an [`ApiError`] response said, kept on it for a frontend that
/// answers in another shape (`/mcp`'s JSON-RPC).
#[derive(Debug, Clone)]
pub struct Refused {
    pub code: &'static str,
    pub message: String,
}

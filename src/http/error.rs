//! The HTTP error contract: every failure is a status and a JSON body
//! `{ "error": { "code": "...", "message": "..." } }`. Core errors are
//! mapped to statuses here, in one place.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::core::CoreError;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
        }
    }

    pub fn bad_request(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, code, message)
    }
}

/// The status of each core error code.
pub fn status_of(error: &CoreError) -> StatusCode {
    match error {
        CoreError::NoSession | CoreError::Conflict(_) | CoreError::Locked(_) => {
            StatusCode::CONFLICT
        }
        CoreError::NotFound { .. } => StatusCode::NOT_FOUND,
        CoreError::InvalidOp(_) | CoreError::InvalidInput(_) => StatusCode::UNPROCESSABLE_ENTITY,
        CoreError::ApprovalRequired(_) => StatusCode::FORBIDDEN,
        CoreError::Corrupt { .. } | CoreError::Io { .. } => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

impl From<CoreError> for ApiError {
    fn from(error: CoreError) -> Self {
        ApiError {
            status: status_of(&error),
            code: error.code(),
            message: error.to_string(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        if self.status.is_server_error() {
            tracing::error!(code = self.code, "{}", self.message);
        }
        let body = json!({ "error": { "code": self.code, "message": self.message } });
        (self.status, Json(body)).into_response()
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

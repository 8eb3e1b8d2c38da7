//! The wire protocol between the `quire mcp tui` adapter and a shared TUI:
//! newline-delimited JSON frames of at most 64 KiB over a Unix socket.
//!
//! ```text
//! → {"id":0,"method":"hello","params":{"token":"…","client":"…","protocol":1}}
//! ← {"id":0,"result":{"protocol":1,"instance":"…"}}
//! → {"id":1,"method":"get_view_context","params":{}}
//! ← {"id":1,"result":{"ok":true,"context":{…}}}
//! → {"id":2,"method":"select_session","params":{…,"deadlineMs":5000}}
//! ← {"id":2,"result":{"ok":false,"code":"stale_revision",…}}
//! ← {"id":3,"error":{"code":"bad_request","message":"…"}}
//! ```

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

use quire_model::ids::SessionId;

/// The methods, each named once.
pub const HELLO: &str = "hello";
pub const GET_VIEW_CONTEXT: &str = "get_view_context";
pub const SELECT_SESSION: &str = "select_session";

/// Bumped on any incompatible change; in `endpoint.json` and `hello`.
pub const PROTOCOL: u32 = 1;
/// Largest frame, newline excluded.
pub const MAX_FRAME: usize = 64 * 1024;
/// Navigations a shared TUI accepts in its life.
pub const NAVIGATION_LIMIT: usize = 128;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Request {
    pub id: u64,
    pub method: String,
    #[serde(default)]
    pub params: Value,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Hello {
    #[serde(serialize_with = "crate::config::secret::expose")]
    pub token: crate::config::secret::Secret,
    #[serde(default)]
    pub client: String,
    pub protocol: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProtocolError {
    pub code: String,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

/// A reply frame.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Reply {
    pub id: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ProtocolError>,
}

impl Reply {
    pub fn ok(id: u64, result: impl Serialize) -> Self {
        Reply {
            id,
            result: Some(serde_json::to_value(result).unwrap_or(Value::Null)),
            error: None,
        }
    }

    pub fn error(id: u64, code: &str, message: impl Into<String>) -> Self {
        Reply {
            id,
            result: None,
            error: Some(ProtocolError {
                code: code.to_owned(),
                message: message.into(),
                data: None,
            }),
        }
    }
}

/// Why navigation is blocked right now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BlockedReason {
    Draft,
    Attachment,
    Modal,
    ApprovalPending,
    SessionBusy,
    BackendDisconnected,
    StartOverlay,
    ExitOverlay,
    RecentInput,
}

/// The bounded view state an agent may read. No text, titles, paths or
/// credentials.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ViewContext {
    pub instance: Uuid,
    pub generation: u64,
    pub revision: u64,
    /// `home` or `session`.
    pub route: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<SessionId>,
    /// The view has finished loading and the backend is connected.
    pub ready: bool,
    pub navigation_blocked: bool,
    pub blocked_reasons: Vec<BlockedReason>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
    pub navigations_used: usize,
    pub navigations_limit: usize,
}

/// `select_session` arguments (also the tool's input).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SelectArgs {
    /// From a recent get_view_context.
    pub instance: Uuid,
    /// From a recent get_view_context.
    pub generation: u64,
    /// From a recent get_view_context.
    pub revision: u64,
    /// The session to show (a session of the workspace).
    pub session_id: SessionId,
    /// A new UUID for each navigation attempt; repeat it only to repeat the
    /// same attempt.
    pub request_id: Uuid,
}

/// What the TUI did with a navigation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Receipt {
    pub request_id: Uuid,
    pub session_id: SessionId,
    pub route: String,
    pub revision: u64,
    pub context: ViewContext,
}

/// The result of both tools: `{ ok, code?, message?, receipt?, context? }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Outcome {
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receipt: Option<Receipt>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<ViewContext>,
}

impl Outcome {
    pub fn context(context: ViewContext) -> Self {
        Outcome {
            ok: true,
            code: None,
            message: None,
            receipt: None,
            context: Some(context),
        }
    }

    pub fn rejected(code: &str, message: impl Into<String>, context: Option<ViewContext>) -> Self {
        Outcome {
            ok: false,
            code: Some(code.to_owned()),
            message: Some(message.into()),
            receipt: None,
            context,
        }
    }
}

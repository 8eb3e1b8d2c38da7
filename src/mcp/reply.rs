//! What a tool call answers, in one place: a success carries its JSON as
//! `structuredContent` and as a text block; a failure the model can act on
//! is a tool execution error (`isError: true`); only protocol faults are
//! JSON-RPC errors (see `05-mcp.md`, Errors).
//!
//! An error result has no `structuredContent`: the TypeScript SDK client
//! validates structured content against the tool's `outputSchema` even when
//! `isError` is set, and a mismatch throws away the server's message. The
//! machine-readable envelope `{ "error": { "code", "message", ... } }`
//! travels in the text block instead, as its second line; the first line is
//! the message, for clients (and models) that read only text.

use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock, ErrorData, InputRequiredResult};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use quire_model::error::CoreError;

/// Why a call did not succeed.
#[derive(Debug)]
pub enum Failure {
    /// A tool execution error: the model can read it and try again.
    Tool(ToolError),
    /// A protocol fault (an unknown tool, a result that cannot be encoded).
    Protocol(ErrorData),
    /// Not yet: the person at the client must answer first (stateless
    /// era, an input-required result); the client calls again with the
    /// answer.
    Ask(Box<InputRequiredResult>),
}

/// A tool execution error: a stable code, the message, and details such
/// as the `field` whose value did not fit or the `id` that is unknown.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolError {
    pub code: String,
    pub message: String,
    #[serde(flatten)]
    pub details: Map<String, Value>,
}

impl ToolError {
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        ToolError {
            code: code.into(),
            message: message.into(),
            details: Map::new(),
        }
    }

    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.details.insert(key.to_owned(), value.into());
        self
    }

    /// The result a client receives: `isError`, one text block whose first
    /// line is the message and whose second is the JSON envelope.
    pub fn into_result(self) -> CallToolResult {
        let first_line = self.message.replace(['\r', '\n'], " ");
        let envelope = json!({ "error": self });
        CallToolResult::error(vec![ContentBlock::text(format!(
            "{first_line}\n{envelope}"
        ))])
    }
}

impl Failure {
    /// The failure as a caller who may not see the server's paths reads
    /// it: the projects directory `dir` is never named (a path inside it
    /// reads as the caller would write it, relative to it).
    pub fn without_dir(self, dir: &std::path::Path) -> Failure {
        let Failure::Tool(mut error) = self else {
            return self;
        };
        let dir = dir.display().to_string();
        if dir.is_empty() {
            return Failure::Tool(error);
        }
        let scrub = |text: &str| {
            text.replace(&format!("{dir}/"), "")
                .replace(&dir, "the projects directory")
        };
        error.message = scrub(&error.message);
        for value in error.details.values_mut() {
            if let Value::String(text) = value {
                *text = scrub(text);
            }
        }
        Failure::Tool(error)
    }
}

impl From<CoreError> for Failure {
    fn from(e: CoreError) -> Self {
        Failure::Tool(ToolError::from(e))
    }
}

impl From<ToolError> for Failure {
    fn from(e: ToolError) -> Self {
        Failure::Tool(e)
    }
}

impl From<ErrorData> for Failure {
    fn from(e: ErrorData) -> Self {
        Failure::Protocol(e)
    }
}

impl From<CoreError> for ToolError {
    /// The core's code, except that an unknown id names what is unknown
    /// (`unknown_session`, `unknown_page`, `unknown_job`) and carries the id.
    fn from(e: CoreError) -> Self {
        let message = e.to_string();
        match e {
            CoreError::NotFound { what, id } => {
                ToolError::new(format!("unknown_{}", what.replace(' ', "_")), message)
                    .with("id", id)
            }
            CoreError::Stale(stale) => {
                ToolError::new("conflict", message).with("stale", json!(stale))
            }
            other => ToolError::new(other.code(), message),
        }
    }
}

pub type Outcome<T> = Result<T, Failure>;

/// Reads a tool's arguments; a misfit is the tool error
/// `invalid_arguments` naming the field (`op.page.nodes[0].kind`).
///
/// serde loses the path inside a tagged union (an `Op` is read whole
/// before its `type` picks the variant), so there the tool's presented
/// schema finds the field: `op.page.width`, not `op`.
pub fn parse<T: DeserializeOwned + schemars::JsonSchema>(args: Value) -> Outcome<T> {
    serde_path_to_error::deserialize(&args).map_err(|e| {
        let mut field = e.path().to_string();
        let inner = e.into_inner();
        if let Some(deeper) = super::schema::locate(
            &Value::Object(super::schema::of::<T>().as_ref().clone()),
            &args,
        ) && (field == "." || deeper.starts_with(&field))
        {
            field = deeper;
        }
        let error = if field == "." {
            ToolError::new("invalid_arguments", format!("invalid arguments: {inner}"))
        } else {
            ToolError::new(
                "invalid_arguments",
                format!("invalid arguments: {field}: {inner}"),
            )
            .with("field", field)
        };
        Failure::Tool(error)
    })
}

/// A successful result: `value` as structured content and as a JSON text
/// block (for clients that read only text).
pub fn ok<T: Serialize>(value: &T) -> Outcome<CallToolResult> {
    let json = serde_json::to_value(value).map_err(|e| {
        Failure::Protocol(ErrorData::internal_error(
            format!("cannot encode the result: {e}"),
            None,
        ))
    })?;
    Ok(structured(json, false))
}

/// `json` as structured content and as a JSON text block. Only for results
/// whose output schema admits them, errors included (`mcp tui`'s outcome).
pub fn structured(json: Value, is_error: bool) -> CallToolResult {
    let content = vec![ContentBlock::text(json.to_string())];
    let mut result = if is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    result.structured_content = Some(json);
    result
}

/// What the client receives for an outcome.
pub fn finish(outcome: Outcome<CallToolResult>) -> Result<CallToolResponse, ErrorData> {
    match outcome {
        Ok(result) => Ok(result.into()),
        Err(Failure::Tool(error)) => Ok(error.into_result().into()),
        Err(Failure::Ask(ask)) => Ok(CallToolResponse::InputRequired(*ask)),
        Err(Failure::Protocol(error)) => Err(error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Args {
        inner: Inner,
    }

    #[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Inner {
        count: u32,
    }

    fn envelope(result: &CallToolResult) -> (String, Value) {
        let text = result.content[0].as_text().expect("text").text.clone();
        let (first, rest) = text.split_once('\n').expect("two lines");
        (first.to_owned(), serde_json::from_str(rest).expect("JSON"))
    }

    #[test]
    fn a_misfit_names_its_field_and_is_a_tool_error() {
        let Err(Failure::Tool(e)) = parse::<Args>(json!({ "inner": { "count": "x" } })) else {
            panic!("not a tool error");
        };
        let result = e.into_result();
        assert_eq!(result.is_error, Some(true));
        assert!(result.structured_content.is_none());
        let (first, json) = envelope(&result);
        assert!(
            first.starts_with("invalid arguments: inner.count: "),
            "{first}"
        );
        assert_eq!(json["error"]["code"], "invalid_arguments");
        assert_eq!(json["error"]["field"], "inner.count");
        assert_eq!(json["error"]["message"], first);
    }

    #[test]
    fn an_unknown_id_says_what_is_unknown() {
        let e = ToolError::from(CoreError::not_found("session", "abc"));
        assert_eq!(e.code, "unknown_session");
        assert_eq!(e.details["id"], "abc");
        let (first, json) = envelope(&e.into_result());
        assert_eq!(first, "unknown session abc");
        assert_eq!(json["error"]["id"], "abc");
    }

    #[test]
    fn a_message_over_several_lines_keeps_the_first_line_the_message() {
        let e = ToolError::new("invalid_op", "one\ntwo");
        let (first, json) = envelope(&e.into_result());
        assert_eq!(first, "one two");
        assert_eq!(json["error"]["message"], "one\ntwo");
    }
}

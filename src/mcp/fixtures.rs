//! The official conformance suite's fixtures (`05-mcp.md`, "Conformance
//! fixtures"), served only with `[mcp] conformance_fixtures = true`: the
//! tools, resources, resource template and prompts whose names the suite's
//! server scenarios call (`test_simple_text`, `test://static-text`,
//! `test_simple_prompt`, …), with the behaviour each scenario checks, in
//! both eras. The workspace tools stay as they are beside them.
//!
//! A test switch, not for a team: a config that sets it with users or
//! `[server.oauth]` is refused. Nothing here touches the core.

// MCP logging, which the suite checks: see `watch.rs` on rmcp's deprecation.
#![allow(deprecated)]

use std::sync::{Arc, LazyLock};

use rmcp::RoleServer;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ErrorData, GetPromptResponse,
    GetPromptResult, InputRequiredResult, JsonObject, Prompt, ReadResourceResult, Resource,
    ResourceTemplate, ServerRequest, Tool,
};
use rmcp::service::RequestContext;
use serde_json::{Value, json};

/// A 1×1 PNG, the image every image fixture answers with.
const PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";
/// Eight samples of 8 kHz silence as a WAV file.
const WAV: &str = "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA==";

/// A tool without arguments (the suite's fixtures declare none or a few).
fn tool(name: &str, description: &str, properties: Value) -> Tool {
    let schema = json!({ "type": "object", "properties": properties });
    Tool::new(
        name.to_owned(),
        description.to_owned(),
        Arc::new(schema.as_object().cloned().unwrap_or_default()),
    )
}

/// The fixture tools, after the workspace's.
pub(super) fn tools() -> Vec<Tool> {
    let text = |description: &str| json!({ "type": "string", "description": description });
    let none = json!({});
    let mut tools = vec![
        tool("test_simple_text", "Answers one text block", none.clone()),
        tool("test_image_content", "Answers an image", none.clone()),
        tool("test_audio_content", "Answers an audio clip", none.clone()),
        tool(
            "test_embedded_resource",
            "Answers an embedded resource",
            none.clone(),
        ),
        tool(
            "test_multiple_content_types",
            "Answers text, an image and a resource",
            none.clone(),
        ),
        tool(
            "test_tool_with_logging",
            "Logs three messages while it runs",
            none.clone(),
        ),
        tool(
            "test_tool_with_progress",
            "Reports progress while it runs",
            none.clone(),
        ),
        tool(
            "test_error_handling",
            "Always fails as a tool error",
            none.clone(),
        ),
        tool(
            "test_sampling",
            "Asks the client's model",
            json!({ "prompt": text("The prompt to send to the model") }),
        ),
        tool(
            "test_elicitation",
            "Asks the client's person",
            json!({ "message": text("The message to show the person") }),
        ),
        tool(
            "test_elicitation_sep1034_defaults",
            "Asks with a default for every field",
            none.clone(),
        ),
        tool(
            "test_elicitation_sep1330_enums",
            "Asks with every kind of enum",
            none.clone(),
        ),
        tool(
            "test_missing_capability",
            "Needs the client's sampling capability",
            none.clone(),
        ),
        tool(
            "test_streaming_elicitation",
            "Streams progress, then its result",
            none.clone(),
        ),
        tool(
            "test_logging_tool",
            "Logs only at a level the request asked for",
            none.clone(),
        ),
    ];
    for (name, description) in INPUT_REQUIRED {
        tools.push(tool(name, description, none.clone()));
    }
    // JSON Schema 2020-12 kept whole (SEP-1613, SEP-2106): the suite's own
    // schema, which quire's tools never use (Gemini cannot read it).
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": { "address": { "$anchor": "addressDef", "type": "object",
            "properties": { "street": { "type": "string" }, "city": { "type": "string" } } } },
        "properties": {
            "name": { "type": "string" },
            "address": { "$ref": "#/$defs/address" },
            "contactMethod": { "type": "string", "enum": ["phone", "email"] },
            "phone": { "type": "string" },
            "email": { "type": "string" },
        },
        "allOf": [{ "anyOf": [{ "required": ["phone"] }, { "required": ["email"] }] }],
        "if": { "properties": { "contactMethod": { "const": "phone" } }, "required": ["contactMethod"] },
        "then": { "required": ["phone"] },
        "else": { "required": ["email"] },
        "additionalProperties": false,
    });
    tools.push(Tool::new(
        SCHEMA_TOOL,
        "Tool with JSON Schema 2020-12 features",
        Arc::new(schema.as_object().cloned().unwrap_or_default()),
    ));
    tools
}

/// The tool whose schema is JSON Schema 2020-12 kept whole.
const SCHEMA_TOOL: &str = "json_schema_2020_12_tool";

/// The tools of the multi round-trip (2026-07-28) scenarios.
const INPUT_REQUIRED: [(&str, &str); 8] = [
    (
        "test_input_required_result_elicitation",
        "Asks a name first",
    ),
    (
        "test_input_required_result_sampling",
        "Asks the client's model first",
    ),
    (
        "test_input_required_result_list_roots",
        "Asks the client's roots first",
    ),
    (
        "test_input_required_result_request_state",
        "Asks with a request state",
    ),
    (
        "test_input_required_result_multiple_inputs",
        "Asks three things at once",
    ),
    (
        "test_input_required_result_multi_round",
        "Asks in two rounds",
    ),
    (
        "test_input_required_result_tampered_state",
        "Asks with a signed request state",
    ),
    (
        "test_input_required_result_capabilities",
        "Asks only what the client can answer",
    ),
];

/// Whether `name` is a fixture tool.
pub(super) fn is_tool(name: &str) -> bool {
    name.starts_with("test_") || name == SCHEMA_TOOL
}

fn answer(content: Value) -> Result<CallToolResponse, ErrorData> {
    serde_json::from_value::<rmcp::model::CallToolResult>(
        json!({ "content": content, "resultType": "complete" }),
    )
    .map(CallToolResponse::Complete)
    .map_err(|e| ErrorData::internal_error(e.to_string(), None))
}

fn text(text: impl Into<String>) -> Result<CallToolResponse, ErrorData> {
    answer(json!([{ "type": "text", "text": text.into() }]))
}

fn ask(requests: Value, state: Option<String>) -> Result<CallToolResponse, ErrorData> {
    Ok(CallToolResponse::InputRequired(input_required(
        requests, state,
    )?))
}

fn input_required(
    requests: Value,
    state: Option<String>,
) -> Result<InputRequiredResult, ErrorData> {
    let requests = serde_json::from_value(requests)
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    Ok(InputRequiredResult::new(Some(requests), state))
}

/// `elicitation/create` for one string (or boolean) field.
fn elicit(message: &str, field: &str, kind: &str) -> Value {
    json!({ "method": "elicitation/create", "params": { "message": message,
        "requestedSchema": { "type": "object", "properties": { field: { "type": kind } },
                             "required": [field] } } })
}

fn sample(prompt: &str, max_tokens: u32) -> Value {
    json!({ "method": "sampling/createMessage", "params": {
        "messages": [{ "role": "user", "content": { "type": "text", "text": prompt } }],
        "maxTokens": max_tokens } })
}

/// The `field` an elicitation answer's content holds, as text.
fn answered(response: &Value, field: &str) -> String {
    match &response["content"][field] {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Sends `request` (`{ method, params }`) to the client and returns its
/// answer as JSON (handshake era: the client answers on the connection).
async fn ask_client(ctx: &RequestContext<RoleServer>, request: Value) -> Result<Value, String> {
    let request: ServerRequest = serde_json::from_value(request).map_err(|e| e.to_string())?;
    let reply = ctx
        .peer
        .send_request(request)
        .await
        .map_err(|e| e.to_string())?;
    serde_json::to_value(reply).map_err(|e| e.to_string())
}

/// The key `requestState` is signed with (one per process).
static STATE_KEY: LazyLock<ring::hmac::Key> = LazyLock::new(|| {
    let mut secret = [0u8; 32];
    getrandom::fill(&mut secret).unwrap_or_default();
    ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &secret)
});

fn signed(state: &Value) -> String {
    let body = state.to_string();
    let tag = ring::hmac::sign(&STATE_KEY, body.as_bytes());
    let hex: String = tag.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    format!("{hex}.{body}")
}

fn verified(state: &str) -> Option<Value> {
    let (hex, body) = state.split_once('.')?;
    let tag: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect::<Option<_>>()?;
    ring::hmac::verify(&STATE_KEY, body.as_bytes(), &tag).ok()?;
    serde_json::from_str(body).ok()
}

fn nonce() -> String {
    uuid::Uuid::now_v7().to_string()
}

/// Answers a fixture tool's call.
pub(super) async fn call(
    request: &CallToolRequestParams,
    ctx: &RequestContext<RoleServer>,
    capabilities: Option<&ClientCapabilities>,
) -> Result<CallToolResponse, ErrorData> {
    let args = request.arguments.clone().unwrap_or_default();
    let arg = |name: &str| {
        args.get(name)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let name = request.name.as_ref();
    if name.starts_with("test_input_required_result_") {
        let responses: JsonObject = request
            .input_responses
            .as_ref()
            .and_then(|r| serde_json::to_value(r).ok())
            .and_then(|v| v.as_object().cloned())
            .unwrap_or_default();
        let state = request.request_state.as_deref();
        return needing_input(name, &responses, state, capabilities);
    }
    match name {
        "test_simple_text"
        | "test_image_content"
        | "test_audio_content"
        | "test_embedded_resource"
        | "test_multiple_content_types"
        | "test_error_handling" => content(name),
        "test_tool_with_logging"
        | "test_tool_with_progress"
        | "test_streaming_elicitation"
        | "test_logging_tool" => notifying(name, ctx).await,
        "test_sampling"
        | "test_elicitation"
        | "test_elicitation_sep1034_defaults"
        | "test_elicitation_sep1330_enums" => asking(name, ctx, &arg).await,
        "test_missing_capability" => {
            if capabilities.is_some_and(|c| c.sampling.is_some()) {
                text("Success")
            } else {
                Err(ErrorData::missing_required_client_capability(
                    serde_json::from_value(json!({ "sampling": {} })).unwrap_or_default(),
                ))
            }
        }
        SCHEMA_TOOL => text(format!(
            "JSON Schema 2020-12 tool called with: {}",
            Value::Object(args.clone())
        )),
        other => Err(ErrorData::invalid_params(
            format!("unknown tool `{other}`"),
            None,
        )),
    }
}

/// The tools whose answer is fixed content.
fn content(name: &str) -> Result<CallToolResponse, ErrorData> {
    match name {
        "test_simple_text" => text("This is a simple text response for testing."),
        "test_image_content" => {
            answer(json!([{ "type": "image", "data": PNG, "mimeType": "image/png" }]))
        }
        "test_audio_content" => {
            answer(json!([{ "type": "audio", "data": WAV, "mimeType": "audio/wav" }]))
        }
        "test_embedded_resource" => answer(json!([{ "type": "resource", "resource": {
            "uri": "test://embedded-resource", "mimeType": "text/plain",
            "text": "This is an embedded resource content." } }])),
        "test_multiple_content_types" => answer(json!([
            { "type": "text", "text": "Multiple content types test:" },
            { "type": "image", "data": PNG, "mimeType": "image/png" },
            { "type": "resource", "resource": { "uri": "test://mixed-content-resource",
              "mimeType": "application/json", "text": r#"{"test":"data","value":123}"# } },
        ])),
        "test_error_handling" => serde_json::from_value::<rmcp::model::CallToolResult>(json!({
            "content": [{ "type": "text",
                          "text": "This tool intentionally returns an error for testing" }],
            "isError": true,
            "resultType": "complete",
        }))
        .map(CallToolResponse::Complete)
        .map_err(|e| ErrorData::internal_error(e.to_string(), None)),
        other => unknown(other),
    }
}

/// The tools that notify the client (log messages, progress) while they
/// run.
async fn notifying(
    name: &str,
    ctx: &RequestContext<RoleServer>,
) -> Result<CallToolResponse, ErrorData> {
    match name {
        "test_tool_with_logging" => {
            for message in [
                "Tool execution started",
                "Tool processing data",
                "Tool execution completed",
            ] {
                let log = rmcp::model::LoggingMessageNotificationParam::new(
                    rmcp::model::LoggingLevel::Info,
                    Value::String(message.into()),
                );
                let _ = ctx.peer.notify_logging_message(log).await;
            }
            text("Tool with logging executed successfully")
        }
        "test_tool_with_progress" => {
            let token = ctx.meta.get_progress_token();
            if let Some(token) = &token {
                for step in [0.0, 50.0, 100.0] {
                    let _ = ctx
                        .peer
                        .notify_progress(
                            rmcp::model::ProgressNotificationParam::new(token.clone(), step)
                                .with_total(100.0)
                                .with_message(format!("Completed step {step} of 100")),
                        )
                        .await;
                }
            }
            let token = token.map_or_else(
                || "0".to_owned(),
                |t| match t.0 {
                    rmcp::model::NumberOrString::String(s) => s.to_string(),
                    rmcp::model::NumberOrString::Number(n) => n.to_string(),
                },
            );
            text(token)
        }
        "test_streaming_elicitation" => {
            if let Some(token) = ctx.meta.get_progress_token() {
                let _ = ctx
                    .peer
                    .notify_progress(
                        rmcp::model::ProgressNotificationParam::new(token, 50.0).with_total(100.0),
                    )
                    .await;
            }
            text("Streaming complete")
        }
        "test_logging_tool" => {
            // Only at the level the request asked for (2026-07-28).
            if let Some(level) = ctx.meta.log_level() {
                let log = rmcp::model::LoggingMessageNotificationParam::new(
                    level,
                    Value::String("test_logging_tool ran".into()),
                );
                let _ = ctx.peer.notify_logging_message(log).await;
            }
            text("Logging complete")
        }
        other => unknown(other),
    }
}

/// The tools that ask the client's model or person in a request of
/// their own (the handshake era's sampling and elicitation).
async fn asking(
    name: &str,
    ctx: &RequestContext<RoleServer>,
    arg: &(dyn Fn(&str) -> String + Sync),
) -> Result<CallToolResponse, ErrorData> {
    match name {
        "test_sampling" => match ask_client(ctx, sample(&arg("prompt"), 100)).await {
            Ok(reply) => {
                let said = reply["content"]["text"].as_str().unwrap_or("No response");
                text(format!("LLM response: {said}"))
            }
            Err(e) => text(format!("Sampling not supported or error: {e}")),
        },
        "test_elicitation" => {
            let question = json!({ "method": "elicitation/create", "params": {
                "message": arg("message"),
                "requestedSchema": { "type": "object", "properties": {
                    "response": { "type": "string", "description": "User's response" } },
                    "required": ["response"] } } });
            match ask_client(ctx, question).await {
                Ok(reply) => text(format!(
                    "User response: action={}, content={}",
                    reply["action"].as_str().unwrap_or_default(),
                    reply.get("content").cloned().unwrap_or(json!({}))
                )),
                Err(e) => text(format!("Elicitation not supported or error: {e}")),
            }
        }
        "test_elicitation_sep1034_defaults" | "test_elicitation_sep1330_enums" => {
            let (message, properties) = if name == "test_elicitation_sep1034_defaults" {
                (
                    "Please review and update the form fields with defaults",
                    json!({
                        "name": { "type": "string", "description": "User name", "default": "John Doe" },
                        "age": { "type": "integer", "description": "User age", "default": 30 },
                        "score": { "type": "number", "description": "User score", "default": 95.5 },
                        "status": { "type": "string", "description": "User status",
                                    "enum": ["active", "inactive", "pending"], "default": "active" },
                        "verified": { "type": "boolean", "description": "Verification status", "default": true },
                    }),
                )
            } else {
                (
                    "Please select options from the enum fields",
                    json!({
                        "untitledSingle": { "type": "string", "description": "Select one option",
                                            "enum": ["option1", "option2", "option3"] },
                        "titledSingle": { "type": "string", "description": "Select one option with titles",
                            "oneOf": [{ "const": "value1", "title": "First Option" },
                                      { "const": "value2", "title": "Second Option" },
                                      { "const": "value3", "title": "Third Option" }] },
                        "legacyEnum": { "type": "string", "description": "Select one option (legacy)",
                            "enum": ["opt1", "opt2", "opt3"],
                            "enumNames": ["Option One", "Option Two", "Option Three"] },
                        "untitledMulti": { "type": "array", "description": "Select multiple options",
                            "minItems": 1, "maxItems": 3,
                            "items": { "type": "string", "enum": ["option1", "option2", "option3"] } },
                        "titledMulti": { "type": "array", "description": "Select multiple options with titles",
                            "minItems": 1, "maxItems": 3,
                            "items": { "anyOf": [{ "const": "value1", "title": "First Choice" },
                                                 { "const": "value2", "title": "Second Choice" },
                                                 { "const": "value3", "title": "Third Choice" }] } },
                    }),
                )
            };
            let question = json!({ "method": "elicitation/create", "params": { "message": message,
                "requestedSchema": { "type": "object", "properties": properties, "required": [] } } });
            match ask_client(ctx, question).await {
                Ok(reply) => text(format!(
                    "Elicitation completed: action={}, content={}",
                    reply["action"].as_str().unwrap_or_default(),
                    reply.get("content").cloned().unwrap_or(json!({}))
                )),
                Err(e) => text(format!("Elicitation not supported or error: {e}")),
            }
        }
        other => unknown(other),
    }
}

/// The tools that answer with an input-required result (2026-07-28):
/// what they need from the client, and the state to send back with it.
fn needing_input(
    name: &str,
    responses: &JsonObject,
    state: Option<&str>,
    capabilities: Option<&ClientCapabilities>,
) -> Result<CallToolResponse, ErrorData> {
    match name {
        "test_input_required_result_elicitation" => match responses.get("user_name") {
            Some(r) => text(format!("Hello, {}!", answered(r, "name"))),
            None => ask(
                json!({ "user_name": elicit("What is your name?", "name", "string") }),
                None,
            ),
        },
        "test_input_required_result_sampling" => match responses.get("sample_request") {
            Some(r) => text(format!(
                "Sampling result: {}",
                r["content"]["text"].as_str().unwrap_or("no response")
            )),
            None => ask(
                json!({ "sample_request": sample("What is the capital of France?", 100) }),
                None,
            ),
        },
        "test_input_required_result_list_roots" => match responses.get("roots_request") {
            Some(r) => text(format!(
                "Found {} root(s)",
                r["roots"].as_array().map_or(0, Vec::len)
            )),
            None => ask(
                json!({ "roots_request": { "method": "roots/list", "params": {} } }),
                None,
            ),
        },
        "test_input_required_result_request_state" => {
            let kept = state.and_then(|s| serde_json::from_str::<Value>(s).ok());
            let ok = responses
                .get("confirm")
                .is_some_and(|r| r["content"]["ok"] == true);
            if ok && kept.is_some_and(|s| s["kind"] == "request-state") {
                return text("state-ok: requestState validated");
            }
            let state = json!({ "kind": "request-state", "nonce": nonce() }).to_string();
            ask(
                json!({ "confirm": elicit("Please confirm", "ok", "boolean") }),
                Some(state),
            )
        }
        "test_input_required_result_multiple_inputs" => {
            let kept = state.and_then(|s| serde_json::from_str::<Value>(s).ok());
            if let (Some(name), Some(greeting), Some(roots), Some(kept)) = (
                responses.get("user_name"),
                responses.get("greeting"),
                responses.get("client_roots"),
                kept,
            ) && kept["kind"] == "multiple-inputs"
            {
                return text(format!(
                    "Name: {}; Greeting: {}; Roots: {}",
                    answered(name, "name"),
                    greeting["content"]["text"]
                        .as_str()
                        .unwrap_or("Hello there!"),
                    roots["roots"].as_array().map_or(0, Vec::len)
                ));
            }
            let state = json!({ "kind": "multiple-inputs", "nonce": nonce() }).to_string();
            ask(
                json!({
                    "user_name": elicit("What is your name?", "name", "string"),
                    "greeting": sample("Generate a greeting", 50),
                    "client_roots": { "method": "roots/list", "params": {} },
                }),
                Some(state),
            )
        }
        "test_input_required_result_multi_round" => {
            let kept = state.and_then(|s| serde_json::from_str::<Value>(s).ok());
            match (kept, responses.get("step1"), responses.get("step2")) {
                (Some(kept), Some(step1), _) if kept["round"] == 1 => {
                    let state =
                        json!({ "round": 2, "name": answered(step1, "name"), "nonce": nonce() });
                    ask(
                        json!({ "step2": elicit("Step 2: What is your favorite color?", "color", "string") }),
                        Some(state.to_string()),
                    )
                }
                (Some(kept), _, Some(step2)) if kept["round"] == 2 => text(format!(
                    "Multi-round complete for {} who likes {}",
                    kept["name"].as_str().unwrap_or("friend"),
                    answered(step2, "color")
                )),
                _ => ask(
                    json!({ "step1": elicit("Step 1: What is your name?", "name", "string") }),
                    Some(json!({ "round": 1, "nonce": nonce() }).to_string()),
                ),
            }
        }
        "test_input_required_result_tampered_state" => {
            if let Some(given) = state {
                let Some(kept) = verified(given) else {
                    return Err(ErrorData::invalid_params(
                        "requestState integrity check failed",
                        None,
                    ));
                };
                if kept["kind"] == "tamper-test" && responses.contains_key("confirm") {
                    return text("integrity-ok: state verified");
                }
            }
            let state = signed(&json!({ "kind": "tamper-test", "nonce": nonce() }));
            ask(
                json!({ "confirm": elicit("Please confirm", "ok", "boolean") }),
                Some(state),
            )
        }
        "test_input_required_result_capabilities" => {
            if !responses.is_empty() {
                let keys: Vec<&str> = responses.keys().map(String::as_str).collect();
                return text(format!("capabilities-ok: received {}", keys.join(",")));
            }
            let mut requests = serde_json::Map::new();
            if capabilities.is_some_and(|c| c.elicitation.is_some()) {
                requests.insert(
                    "elicit_input".into(),
                    elicit("Elicitation input", "value", "string"),
                );
            }
            if capabilities.is_some_and(|c| c.sampling.is_some()) {
                requests.insert("sample_input".into(), sample("Sample request", 50));
            }
            if requests.is_empty() {
                return text("No supported capabilities declared");
            }
            let state = signed(&json!({ "kind": "capabilities-test", "nonce": nonce() }));
            ask(Value::Object(requests), Some(state))
        }
        other => unknown(other),
    }
}

fn unknown(name: &str) -> Result<CallToolResponse, ErrorData> {
    Err(ErrorData::invalid_params(
        format!("unknown tool `{name}`"),
        None,
    ))
}

/// The fixture resources.
pub(super) fn resources() -> Vec<Resource> {
    [
        json!({ "uri": "test://static-text", "name": "static-text", "title": "Static Text Resource",
                "description": "A static text resource for testing", "mimeType": "text/plain" }),
        json!({ "uri": "test://static-binary", "name": "static-binary", "title": "Static Binary Resource",
                "description": "A static binary resource (image) for testing", "mimeType": "image/png" }),
        json!({ "uri": "test://watched-resource", "name": "watched-resource", "title": "Watched Resource",
                "description": "A resource that may change", "mimeType": "text/plain" }),
    ]
    .into_iter()
    .filter_map(|r| serde_json::from_value(r).ok())
    .collect()
}

/// The fixture resource template.
pub(super) fn templates() -> Vec<ResourceTemplate> {
    serde_json::from_value(json!([{ "uriTemplate": "test://template/{id}/data", "name": "template",
        "title": "Resource Template", "description": "A resource template with parameter substitution",
        "mimeType": "application/json" }]))
    .unwrap_or_default()
}

/// Whether `uri` is a fixture resource's (or the template's).
pub(super) fn is_resource(uri: &str) -> bool {
    uri.starts_with("test://")
}

/// Reads a fixture resource.
pub(super) fn read(uri: &str) -> Result<ReadResourceResult, ErrorData> {
    let contents = match uri {
        "test://static-text" => json!({ "uri": uri, "mimeType": "text/plain",
            "text": "This is the content of the static text resource." }),
        "test://static-binary" => json!({ "uri": uri, "mimeType": "image/png", "blob": PNG }),
        "test://watched-resource" => json!({ "uri": uri, "mimeType": "text/plain",
            "text": "Watched resource content" }),
        _ => match uri
            .strip_prefix("test://template/")
            .and_then(|rest| rest.strip_suffix("/data"))
            .filter(|id| !id.is_empty() && !id.contains('/'))
        {
            Some(id) => json!({ "uri": uri, "mimeType": "application/json",
                "text": json!({ "id": id, "templateTest": true, "data": format!("Data for ID: {id}") }).to_string() }),
            None => {
                return Err(ErrorData::resource_not_found(
                    format!("no resource {uri}"),
                    Some(json!({ "uri": uri })),
                ));
            }
        },
    };
    serde_json::from_value(json!({ "contents": [contents], "resultType": "complete" }))
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))
}

/// The fixture prompts.
pub(super) fn prompts() -> Vec<Prompt> {
    serde_json::from_value(json!([
        { "name": "test_simple_prompt", "title": "Simple Test Prompt",
          "description": "A simple prompt without arguments" },
        { "name": "test_prompt_with_arguments", "title": "Prompt With Arguments",
          "description": "A prompt with required arguments", "arguments": [
            { "name": "arg1", "description": "First test argument", "required": true },
            { "name": "arg2", "description": "Second test argument", "required": true } ] },
        { "name": "test_prompt_with_embedded_resource", "title": "Prompt With Embedded Resource",
          "description": "A prompt that includes an embedded resource", "arguments": [
            { "name": "resourceUri", "description": "URI of the resource to embed", "required": true } ] },
        { "name": "test_prompt_with_image", "title": "Prompt With Image",
          "description": "A prompt that includes image content" },
        { "name": "test_input_required_result_prompt",
          "description": "Asks for context before it answers" },
    ]))
    .unwrap_or_default()
}

/// Whether `name` is a fixture prompt.
pub(super) fn is_prompt(name: &str) -> bool {
    name.starts_with("test_")
}

/// A fixture prompt.
pub(super) fn prompt(
    name: &str,
    arguments: Option<&JsonObject>,
    responses: Option<&rmcp::model::InputResponses>,
) -> Result<GetPromptResponse, ErrorData> {
    let arg = |n: &str| {
        arguments
            .and_then(|a| a.get(n))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let messages = match name {
        "test_simple_prompt" => json!([{ "role": "user", "content": { "type": "text",
            "text": "This is a simple prompt for testing." } }]),
        "test_prompt_with_arguments" => json!([{ "role": "user", "content": { "type": "text",
            "text": format!("Prompt with arguments: arg1='{}', arg2='{}'", arg("arg1"), arg("arg2")) } }]),
        "test_prompt_with_embedded_resource" => json!([
            { "role": "user", "content": { "type": "resource", "resource": {
                "uri": arg("resourceUri"), "mimeType": "text/plain",
                "text": "Embedded resource content for testing." } } },
            { "role": "user", "content": { "type": "text",
                "text": "Please process the embedded resource above." } },
        ]),
        "test_prompt_with_image" => json!([
            { "role": "user", "content": { "type": "image", "data": PNG, "mimeType": "image/png" } },
            { "role": "user", "content": { "type": "text", "text": "Please analyze the image above." } },
        ]),
        "test_input_required_result_prompt" => {
            let given = responses
                .and_then(|r| serde_json::to_value(r).ok())
                .and_then(|r| r.get("user_context").cloned());
            match given {
                Some(r) => json!([{ "role": "user", "content": { "type": "text",
                    "text": format!("Prompt with context: {}", answered(&r, "context")) } }]),
                None => {
                    let question = json!({ "user_context":
                        elicit("What context should the prompt use?", "context", "string") });
                    return Ok(GetPromptResponse::InputRequired(input_required(
                        question, None,
                    )?));
                }
            }
        }
        other => {
            return Err(ErrorData::invalid_params(
                format!("unknown prompt `{other}`"),
                None,
            ));
        }
    };
    serde_json::from_value::<GetPromptResult>(
        json!({ "messages": messages, "resultType": "complete" }),
    )
    .map(GetPromptResponse::Complete)
    .map_err(|e| ErrorData::internal_error(e.to_string(), None))
}

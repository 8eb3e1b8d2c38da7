//! The workspace tools: names, descriptions, and the argument and result
//! types whose JSON Schemas are the tools' input and output schemas.

use std::sync::{Arc, LazyLock};

use rmcp::model::Tool;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::config::schema::Role;
use quire_core::engines::EngineInfo;
use quire_core::events::{JobStatus, JobWarningInfo, SessionSummary};
use quire_core::export::{ExportFormat, ExportSpec};
use quire_core::jobs::PipelineSpec;
use quire_model::ids::{JobId, NodeId, PageId, SessionId};
use quire_model::op::Op;
use quire_model::scene::TextState;

/// Tool names clients accept: `^[a-zA-Z0-9_-]{1,64}$` (see 00-overview.md).
pub fn valid_tool_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OpenProjectArgs {
    /// A project directory, or a .zip archive (opened as a copy).
    pub path: String,
    /// Create a project at `path` with this name.
    #[serde(default)]
    pub create_name: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ImportTranslationsArgs {
    #[serde(default)]
    pub session_id: Option<SessionId>,
    /// .xlf, .po, .csv, .tbx, .tmx (rules as for projects).
    #[serde(default)]
    pub path: Option<String>,
    /// Or the file's text.
    #[serde(default)]
    pub content: Option<String>,
    /// Merge a file in other languages (conflicts only via take).
    #[serde(default)]
    pub force: bool,
    /// Or in these conflicts' units.
    #[serde(default)]
    pub take: Vec<String>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionArgs {
    // The session to act on; default: this connection's active session,
    // else the current session (the server's instructions say so once, for
    // every tool, rather than each schema).
    #[serde(default)]
    pub session_id: Option<SessionId>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApplyArgs {
    // The change (the tool's description says the rest).
    #[serde(deserialize_with = "quire_model::objects::one")]
    pub op: Op,
    #[serde(default)]
    pub session_id: Option<SessionId>,
}

/// `quire_suggestions`: one tool for a segment's suggestions (five would
/// take `tools/list` past its budget).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SuggestionsArgs {
    pub action: SuggestionAction,
    pub node_id: NodeId,
    // add: the proposed translation. (Plain comments: the budget.)
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub suggestion_id: Option<String>,
    // vote: 1, -1, or 0 to take it back.
    #[serde(default)]
    #[schemars(range(min = -1, max = 1))]
    pub value: Option<i8>,
    #[serde(default)]
    pub session_id: Option<SessionId>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum SuggestionAction {
    List,
    Add,
    Vote,
    Accept,
    Reject,
}

/// A node's open suggestions after the call, most votes first, and the
/// epoch a change made.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SuggestionList {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub epoch: Option<u64>,
    pub suggestions: Vec<quire_core::suggestions::SuggestionView>,
}

/// `quire_start_pipeline`: the core's spec and the tool's own fields, side
/// by side in one object.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StartPipelineArgs {
    #[serde(flatten)]
    pub spec: PipelineSpec,
    #[serde(default)]
    pub session_id: Option<SessionId>,
    /// Return when the job ends.
    #[serde(default)]
    pub wait: bool,
    /// Default 600; the job goes on.
    #[serde(default)]
    pub wait_timeout_secs: Option<u64>,
}

/// The arguments of a tool that lists: one optional filter. A tool
/// without arguments would have to declare an empty object, and the only
/// way to say "no property" that OpenAI's strict mode accepts,
/// `additionalProperties: false`, is the one Gemini's MCP converter
/// crashes on (and loses every tool with it).
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListArgs {
    /// Only those whose name or id holds this text (any case).
    #[serde(default)]
    pub filter: Option<String>,
}

impl ListArgs {
    /// Whether any of `names` holds the filter, ignoring case; true
    /// without one.
    pub fn keeps(&self, names: &[&str]) -> bool {
        self.filter.as_deref().is_none_or(|f| {
            let f = f.to_lowercase();
            names.iter().any(|n| n.to_lowercase().contains(&f))
        })
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GetSceneArgs {
    #[serde(default)]
    pub session_id: Option<SessionId>,
    /// Only these pages; default all.
    #[serde(default)]
    pub pages: Option<Vec<PageId>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct JobArgs {
    pub job_id: JobId,
}

/// `quire_export`: the core's spec and the tool's own fields.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExportArgs {
    #[serde(flatten)]
    pub spec: ExportSpec,
    #[serde(default)]
    pub session_id: Option<SessionId>,
    /// Write to this file instead (stdio only).
    #[serde(default)]
    pub out_path: Option<String>,
    // Replace outPath if it exists (the name says it; no description).
    #[serde(default)]
    pub overwrite: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ViewPageArgs {
    pub page_id: PageId,
    #[serde(default)]
    pub session_id: Option<SessionId>,
    /// Long side in pixels (default 1568).
    #[serde(default)]
    pub max_side: Option<u32>,
    #[serde(default)]
    pub view: Option<ViewImageRole>,
    // Outlines the text nodes' regions (their balloons).
    #[serde(default)]
    pub regions: Option<bool>,
}

/// Which of a page's images `quire_view_page` shows.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ViewImageRole {
    Source,
    Cleaned,
    Rendered,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ImportPagesArgs {
    /// Images, text, .srt/.vtt, .po/.xlf, .cbz/.zip
    /// comics.
    #[serde(default)]
    pub files: Option<Vec<String>>,
    /// Inline pages: text, or an image in base64.
    #[serde(default)]
    pub items: Option<Vec<ImportItem>>,
    /// BCP 47 tag of the imported text.
    #[serde(default)]
    pub source_lang: Option<String>,
    #[serde(default)]
    pub session_id: Option<SessionId>,
}

// One page given inline. (Plain comments here: the field's description
// says it, and `tools/list` has a budget.)
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ImportItem {
    Text(TextItem),
    Image(ImageItem),
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TextItem {
    pub name: String,
    pub text: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ImageItem {
    pub name: String,
    /// image/png, image/jpeg or image/webp.
    pub mime_type: String,
    // The image bytes, base64.
    pub data: String,
}

/// `quire_view_page`'s structured content (the image is its own block).
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PageView {
    pub page_id: PageId,
    pub name: String,
    /// The returned image's size and type; boxes are in its pixels.
    pub image: ViewImage,
    /// The page's text nodes, bottom to top.
    pub nodes: Vec<ViewNode>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ViewImage {
    pub width: u32,
    pub height: u32,
    pub mime_type: String,
    /// Image pixels per page unit.
    pub scale: f64,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ViewNode {
    pub id: NodeId,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub translation: Option<String>,
    pub state: TextState,
    /// In image pixels; all zero for a node not placed on the page yet.
    #[serde(rename = "box")]
    pub bounds: PixelBox,
    pub visible: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct PixelBox {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rotation: Option<f64>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Opened {
    pub session_id: SessionId,
    pub name: String,
    pub path: String,
}

/// `quire_start_pipeline`'s result: the job, and with `wait` how it ended.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Started {
    #[serde(flatten)]
    pub started: crate::wire::Started,
    /// With `wait`: the job's final status (or `running` if the wait timed out).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<JobStatus>,
    /// With `wait`: one entry per step that failed or found a problem on a page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warnings: Option<Vec<JobWarningInfo>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Sessions {
    pub sessions: Vec<SessionSummary>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Engines {
    pub engines: Vec<EngineInfo>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Exported {
    /// As asked (a plain string here: the input schema lists the values).
    #[schemars(with = "String")]
    pub format: ExportFormat,
    pub media_type: String,
    pub file_name: String,
    pub size: u64,
    /// The export itself, for text formats returned inline.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Where the export was written, when written to a file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

/// The workspace tools. Each name is written once, here; [`all`] describes
/// every variant and the handler dispatches on it (both `match`es are
/// exhaustive, so a new tool cannot be listed without being served).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolName {
    OpenProject,
    CloseProject,
    Apply,
    Undo,
    Redo,
    StartPipeline,
    ListSessions,
    GetScene,
    ListEngines,
    GetJob,
    CancelJob,
    Export,
    ViewPage,
    ImportPages,
    ImportTranslations,
    Suggestions,
}

impl ToolName {
    /// The role a call needs (`[[server.users]]`), and what it does.
    pub fn needs(self) -> (Role, &'static str) {
        match self {
            ToolName::OpenProject
            | ToolName::ListSessions
            | ToolName::GetScene
            | ToolName::ListEngines
            | ToolName::GetJob
            | ToolName::ViewPage => (Role::Read, "reading"),
            ToolName::CloseProject => (Role::Admin, "closing a project"),
            ToolName::Apply
            | ToolName::Undo
            | ToolName::Redo
            | ToolName::StartPipeline
            | ToolName::CancelJob
            | ToolName::Export
            | ToolName::ImportPages
            | ToolName::ImportTranslations => (Role::Edit, "changing a project"),
            // Accepting and rejecting need `edit`: the call checks.
            ToolName::Suggestions => (Role::Suggest, "suggesting a translation"),
        }
    }

    pub const ALL: [ToolName; 16] = [
        ToolName::OpenProject,
        ToolName::CloseProject,
        ToolName::Apply,
        ToolName::Undo,
        ToolName::Redo,
        ToolName::StartPipeline,
        ToolName::ListSessions,
        ToolName::GetScene,
        ToolName::ListEngines,
        ToolName::GetJob,
        ToolName::CancelJob,
        ToolName::Export,
        ToolName::ViewPage,
        ToolName::ImportPages,
        ToolName::ImportTranslations,
        ToolName::Suggestions,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ToolName::OpenProject => "quire_open_project",
            ToolName::CloseProject => "quire_close_project",
            ToolName::Apply => "quire_apply",
            ToolName::Undo => "quire_undo",
            ToolName::Redo => "quire_redo",
            ToolName::StartPipeline => "quire_start_pipeline",
            ToolName::ListSessions => "quire_list_sessions",
            ToolName::GetScene => "quire_get_scene",
            ToolName::ListEngines => "quire_list_engines",
            ToolName::GetJob => "quire_get_job",
            ToolName::CancelJob => "quire_cancel_job",
            ToolName::Export => "quire_export",
            ToolName::ViewPage => "quire_view_page",
            ToolName::ImportPages => "quire_import_pages",
            ToolName::ImportTranslations => "quire_import_translations",
            ToolName::Suggestions => "quire_suggestions",
        }
    }

    pub fn parse(name: &str) -> Option<ToolName> {
        Self::ALL.into_iter().find(|t| t.as_str() == name)
    }
}

/// The `tools` array of `tools/list`: `tools.json` without its whitespace
/// (`build.rs` writes it), as `quire mcp stdio` sends it.
pub const LIST_JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/tools.json"));

/// Every workspace tool, read once per process from [`LIST_JSON`] when
/// first asked for, and shared by every connection.
///
/// `tools.json` is what `described::describe` makes of the argument and result
/// types; a unit test keeps the two equal (`QUIRE_BLESS=1 cargo test --lib
/// tools_json` rewrites it). Building the schemas from the types took
/// about 5 ms, most of `quire mcp stdio`'s start; reading them takes a
/// tenth of that, and a handshake-era `quire mcp stdio` does not read
/// them at all (its transport answers `tools/list` with [`LIST_JSON`]).
pub fn all() -> Arc<[Tool]> {
    static TOOLS: LazyLock<Arc<[Tool]>> = LazyLock::new(|| {
        serde_json::from_str::<Vec<Tool>>(LIST_JSON)
            .unwrap_or_else(|e| unreachable!("tools.json is checked by a unit test: {e}"))
            .into()
    });
    TOOLS.clone()
}

/// Whether the workspace tool `name` only reads (its `readOnlyHint`); an
/// unknown name does not.
pub fn only_reads(name: &str) -> bool {
    all().iter().any(|tool| {
        tool.name == name && tool.annotations.as_ref().and_then(|a| a.read_only_hint) == Some(true)
    })
}

/// The tools as the types describe them: what `tools.json` must hold.
#[cfg(test)]
mod described {
    use rmcp::model::{Tool, ToolAnnotations};
    use schemars::JsonSchema;

    use super::*;
    use crate::mcp::schema;
    use crate::wire::{Cancelled, Closed, Epoch};
    use quire_core::ApplyResult;
    use quire_core::events::JobSummary;
    use quire_core::import::ImportResult;
    use quire_core::session::SceneSnapshot;
    use quire_core::translations::ImportReport;

    fn tool<I: JsonSchema, O: JsonSchema>(
        name: ToolName,
        title: &str,
        hints: ToolAnnotations,
        description: &'static str,
    ) -> Tool {
        Tool::new(name.as_str(), description, schema::of::<I>())
            .with_title(title)
            .with_annotations(hints)
            .with_raw_output_schema(schema::output_of::<O>())
    }

    /// A tool that only reads: clients need not ask before calling it. (MCP
    /// reads `destructiveHint` and `idempotentHint` only when `readOnlyHint`
    /// is false, so they are not sent.)
    fn reads() -> ToolAnnotations {
        ToolAnnotations::new().read_only(true).open_world(false)
    }

    /// A tool that changes the workspace, on this machine only. Only hints
    /// that differ from MCP's defaults are written (`readOnlyHint` false,
    /// `destructiveHint` true, `idempotentHint` false, `openWorldHint` true):
    /// what a client reads is the same, and `tools/list` is shorter.
    fn changes(destructive: bool, idempotent: bool) -> ToolAnnotations {
        let mut hints = ToolAnnotations::new().open_world(false);
        if !destructive {
            hints = hints.destructive(false);
        }
        if idempotent {
            hints = hints.idempotent(true);
        }
        hints
    }

    pub(super) fn describe(name: ToolName) -> Tool {
        match name {
            ToolName::OpenProject => tool::<OpenProjectArgs, Opened>(
                name,
                "Open or create a project",
                changes(false, false),
                "Open or create (createName) a project; later calls pass its sessionId (stateless HTTP: always).",
            ),
            ToolName::CloseProject => tool::<SessionArgs, Closed>(
                name,
                "Close a project",
                changes(false, true),
                "Save and close a session; its jobs are cancelled.",
            ),
            ToolName::Apply => tool::<ApplyArgs, ApplyResult>(
                name,
                "Apply an op",
                changes(true, false),
                "Apply one change (a Batch: one undo step). Send only new values; null clears. A failing op changes nothing.",
            ),
            ToolName::Undo => tool::<SessionArgs, Epoch>(
                name,
                "Undo",
                changes(true, false),
                "Undo your latest change; says what (epoch null: none).",
            ),
            ToolName::Redo => tool::<SessionArgs, Epoch>(
                name,
                "Redo",
                changes(true, false),
                "Redo your latest undone change (epoch null: none).",
            ),
            ToolName::StartPipeline => tool::<StartPipelineArgs, Started>(
                name,
                "Start a pipeline",
                changes(true, false).open_world(true),
                "Run steps over pages in the background: the jobId, or with wait=true the outcome.",
            ),
            ToolName::ListSessions => tool::<ListArgs, Sessions>(
                name,
                "List open sessions",
                reads(),
                "The open sessions: epoch, busy (a job runs), current.",
            ),
            ToolName::GetScene => tool::<GetSceneArgs, SceneSnapshot>(
                name,
                "Get the scene",
                reads(),
                "The scene (pages with their nodes) and its epoch.",
            ),
            ToolName::ListEngines => tool::<ListArgs, Engines>(
                name,
                "List engines",
                reads(),
                "The engines and whether a person must approve them.",
            ),
            ToolName::GetJob => tool::<JobArgs, JobSummary>(
                name,
                "Get a job",
                reads(),
                "A job's status, progress and warnings.",
            ),
            ToolName::CancelJob => tool::<JobArgs, Cancelled>(
                name,
                "Cancel a job",
                changes(false, true),
                "Cancel a job before its next page; false if it was done.",
            ),
            ToolName::Export => tool::<ExportArgs, Exported>(
                name,
                "Export",
                changes(false, true),
                "Export as text, or a zip resource up to 16 MiB; stdio: outPath writes a file.",
            ),
            ToolName::ViewPage => tool::<ViewPageArgs, PageView>(
                name,
                "View a page",
                reads(),
                "A page's image and its text nodes' boxes in its pixels.",
            ),
            ToolName::ImportPages => tool::<ImportPagesArgs, ImportResult>(
                name,
                "Import pages",
                changes(false, false),
                "Add pages as one undo step: files, then items, in order.",
            ),
            ToolName::ImportTranslations => tool::<ImportTranslationsArgs, ImportReport>(
                name,
                "Import translations",
                changes(false, true),
                "Merge XLIFF/PO three-way, add CSV/TBX glossary terms, or a TMX to the memory.",
            ),
            ToolName::Suggestions => tool::<SuggestionsArgs, SuggestionList>(
                name,
                "Suggestions",
                changes(false, false),
                "A segment's suggestions: list, add, vote, accept, reject.",
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tools_json_is_what_the_types_describe() {
        let described: Vec<Tool> = ToolName::ALL.into_iter().map(described::describe).collect();
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/mcp/tools.json");
        if std::env::var_os("QUIRE_BLESS").is_some() {
            let mut text = serde_json::to_string_pretty(&described).unwrap();
            text.push('\n');
            std::fs::write(path, text).unwrap();
        }
        // The file as it is now (`all()` holds it as it was at build time).
        let stored: Vec<Tool> = serde_json::from_str(&std::fs::read_to_string(path).unwrap())
            .expect("tools.json holds MCP tools");
        assert!(
            serde_json::to_value(&stored).unwrap() == serde_json::to_value(&described).unwrap(),
            "src/mcp/tools.json is out of date: QUIRE_BLESS=1 cargo test --lib tools_json"
        );
    }

    #[test]
    fn every_tool_name_is_accepted_by_common_clients() {
        let tools = all();
        assert_eq!(tools.len(), 16);
        for tool in tools.iter() {
            assert!(valid_tool_name(&tool.name), "{}", tool.name);
            for schema in [Some(&tool.input_schema), tool.output_schema.as_ref()]
                .into_iter()
                .flatten()
            {
                let json = serde_json::Value::Object(schema.as_ref().clone());
                assert_eq!(
                    crate::mcp::schema::foreign_keywords(&json),
                    Vec::<String>::new(),
                    "{}",
                    tool.name
                );
            }
            assert!(tool.name.starts_with("quire_"), "{}", tool.name);
            assert_eq!(
                tool.input_schema.get("type"),
                Some(&serde_json::json!("object")),
                "{}",
                tool.name
            );
            let output = tool.output_schema.as_ref().expect("output schema");
            assert_eq!(
                output.get("type"),
                Some(&serde_json::json!("object")),
                "{}",
                tool.name
            );
        }
        assert!(!valid_tool_name("quire.apply"));
        assert!(!valid_tool_name(&"x".repeat(65)));
    }
}

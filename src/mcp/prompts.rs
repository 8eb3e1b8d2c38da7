//! MCP prompts — short workflows an agent (or the person driving it) can
//! pick — and argument completion for them and for the resource templates.

use rmcp::model::{
    CompleteRequestParams, CompletionInfo, ErrorData, GetPromptResult, Prompt, PromptArgument,
    PromptMessage, Reference, Role,
};
use serde_json::Value;

use quire_core::Core;
use quire_model::ids::SessionId;
use quire_model::lang::check_tag;

/// Language tags offered when completing `targetLanguage` (any well-formed
/// BCP 47 tag is accepted; these are the ones people pick most).
const LANGUAGES: &[&str] = &[
    "ar", "cs", "da", "de", "el", "en", "en-GB", "en-US", "es", "es-419", "fa", "fi", "fr", "he",
    "hi", "hu", "id", "it", "ja", "ko", "ms", "nb", "nl", "pl", "pt", "pt-BR", "ro", "ru", "sv",
    "th", "tl", "tr", "uk", "vi", "zh-Hans", "zh-Hant",
];

pub const TRANSLATE: &str = "translate_session";
pub const REVIEW: &str = "review_qa";

pub fn list() -> Vec<Prompt> {
    let session = PromptArgument::new("sessionId")
        .with_description("The session (default: the active one)")
        .with_required(false);
    vec![
        Prompt::new(
            TRANSLATE,
            Some("Translate every text node of a session, keep placeholders, check with QA"),
            Some(vec![
                session.clone(),
                PromptArgument::new("targetLanguage")
                    .with_description("BCP 47 tag, e.g. fr, pt-BR, ja")
                    .with_required(true),
                PromptArgument::new("engine")
                    .with_description("A translation engine to run instead of translating yourself, e.g. llm-translate")
                    .with_required(false),
            ]),
        )
        .with_title("Translate a session"),
        Prompt::new(
            REVIEW,
            Some("Run QA on a session and fix what it finds, node by node"),
            Some(vec![session]),
        )
        .with_title("Review QA warnings"),
    ]
}

fn invalid(message: String) -> ErrorData {
    ErrorData::invalid_params(message, None)
}

fn argument<'a>(
    arguments: &'a Option<serde_json::Map<String, Value>>,
    name: &str,
) -> Option<&'a str> {
    arguments
        .as_ref()?
        .get(name)?
        .as_str()
        .filter(|s| !s.trim().is_empty())
}

/// The prompt `name` with `arguments`; `active` is the session calls act on
/// when none is named.
pub fn get(
    core: &Core,
    name: &str,
    arguments: &Option<serde_json::Map<String, Value>>,
    active: Option<SessionId>,
) -> Result<GetPromptResult, ErrorData> {
    if name != TRANSLATE && name != REVIEW {
        return Err(invalid(format!(
            "unknown prompt `{name}` (prompts: {TRANSLATE}, {REVIEW})"
        )));
    }
    let session = match argument(arguments, "sessionId") {
        Some(given) => {
            let id = given
                .parse::<uuid::Uuid>()
                .map(SessionId)
                .map_err(|_| invalid(format!("sessionId `{given}` is not a session id")))?;
            core.resolve(Some(id)).map_err(|e| invalid(e.to_string()))?
        }
        None => active
            .filter(|id| core.resolve(Some(*id)).is_ok())
            .or_else(|| core.resolve(None).ok())
            .ok_or_else(|| {
                invalid("no project is open: open one with quire_open_project first".into())
            })?,
    };
    let summary = core
        .sessions()
        .into_iter()
        .find(|s| s.id == session)
        .ok_or_else(|| invalid(format!("session {session} is not open")))?;
    let project = &summary.name;
    let text = if name == TRANSLATE {
        let Some(lang) = argument(arguments, "targetLanguage") else {
            return Err(invalid(
                "targetLanguage is required (a BCP 47 tag such as fr or pt-BR)".into(),
            ));
        };
        check_tag("targetLanguage", lang).map_err(|e| invalid(e.to_string()))?;
        let run = match argument(arguments, "engine") {
            Some(engine) => {
                if !core.engines().iter().any(|e| e.id == engine) {
                    return Err(invalid(format!(
                        "unknown engine `{engine}` (quire_list_engines lists them)"
                    )));
                }
                format!(
                    "2. Run the engine: quire_start_pipeline {{\"sessionId\": \"{session}\", \"steps\": [\"{engine}\", \"qa\"], \"targetLanguage\": \"{lang}\", \"wait\": true}}. Then read the result with quire_get_scene and correct what reads wrong."
                )
            }
            None => format!(
                "2. Translate each text node yourself into {lang}: set its translation with quire_apply, one Batch per page of UpdateNode ops {{\"type\": \"UpdateNode\", \"page\": PAGE_ID, \"id\": NODE_ID, \"patch\": {{\"kind\": {{\"type\": \"text\", \"translation\": \"...\"}}}}}}. Then run quire_start_pipeline {{\"steps\": [\"qa\"], \"wait\": true}}."
            ),
        };
        format!(
            "Translate the quire project \"{project}\" (session {session}) into {lang}.\n\
             1. Read it with quire_get_scene {{\"sessionId\": \"{session}\"}}. For a page with an image, quire_view_page shows the page and where each text box is: use it for context (who speaks, what the picture shows).\n\
             {run}\n\
             3. Keep placeholders ({{0}}, %s, %1$s, <b>…</b>) and line breaks as the source has them; keep names consistent across pages.\n\
             4. Fix every QA warning; quire_undo takes back a change that was wrong.\n\
             5. When asked for a file, quire_export {{\"format\": \"xliff\", \"targetLanguage\": \"{lang}\"}}."
        )
    } else {
        format!(
            "Review the QA findings of the quire project \"{project}\" (session {session}).\n\
             1. Run quire_start_pipeline {{\"sessionId\": \"{session}\", \"steps\": [\"qa\"], \"wait\": true}}; its result lists the warnings, each with its page.\n\
             2. For each warning, read the page with quire_get_scene {{\"pages\": [PAGE_ID]}} (or look at it with quire_view_page) and fix the node with quire_apply (UpdateNode).\n\
             3. Run the QA step again until it finds nothing, and say what you changed and what you left as it is, and why."
        )
    };
    Ok(
        GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)]).with_description(
            if name == TRANSLATE {
                "Translate a session"
            } else {
                "Review QA warnings"
            },
        ),
    )
}

/// Values for the argument being typed: session ids, page ids (of the
/// session already given, else the active one), engine ids, language tags.
pub async fn complete(
    core: &Core,
    request: &CompleteRequestParams,
    active: Option<SessionId>,
) -> Result<CompletionInfo, ErrorData> {
    let typed = request.argument.value.to_lowercase();
    let given = |name: &str| {
        request
            .context
            .as_ref()
            .and_then(|c| c.arguments.as_ref())
            .and_then(|a| a.get(name))
            .and_then(|v| v.parse::<uuid::Uuid>().ok())
            .map(SessionId)
    };
    let candidates: Vec<String> = match (&request.r#ref, request.argument.name.as_str()) {
        (_, "sessionId") => core
            .sessions()
            .into_iter()
            .map(|s| s.id.to_string())
            .collect(),
        (Reference::Resource(_), "pageId") => {
            let session = given("sessionId")
                .or(active)
                .or_else(|| core.resolve(None).ok());
            match session {
                Some(id) => match core.scene(id).await {
                    Ok(snapshot) => snapshot
                        .scene
                        .pages
                        .iter()
                        .map(|p| p.id.to_string())
                        .collect(),
                    Err(_) => Vec::new(),
                },
                None => Vec::new(),
            }
        }
        (Reference::Prompt(_), "engine") => core.engines().into_iter().map(|e| e.id).collect(),
        (Reference::Prompt(_), "targetLanguage") => {
            LANGUAGES.iter().map(|l| (*l).to_owned()).collect()
        }
        _ => Vec::new(),
    };
    let mut values: Vec<String> = candidates
        .into_iter()
        .filter(|c| c.to_lowercase().starts_with(&typed))
        .collect();
    let total = values.len();
    values.truncate(CompletionInfo::MAX_VALUES);
    let more = total > values.len();
    CompletionInfo::with_pagination(values, u32::try_from(total).ok(), more)
        .map_err(|e| ErrorData::internal_error(e, None))
}

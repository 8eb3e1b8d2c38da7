//! MCP resources: what a client can read by URI, list, and subscribe to.
//!
//! - `quire://sessions/{sessionId}/scene` — the scene and its epoch (JSON);
//! - `quire://sessions/{sessionId}/pages/{pageId}` — one page (JSON);
//! - `quire://sessions/{sessionId}/nodes/{nodeId}/matches` — the
//!   translation memory's best matches for a text node (JSON);
//! - `quire://sessions/{sessionId}/concordance/{words}` — remembered
//!   segments holding every word (percent-encoded) (JSON);
//! - `quire://sessions/{sessionId}/history` — who did what in its project,
//!   newest first: the first page of `GET /api/v1/projects/{id}/history`,
//!   with the same query (`…/history?user=ana&cursor=…`) (JSON);
//! - `quire://blobs/{hash}` — a blob's bytes with their MIME type.
//!
//! Every open session's scene is listed; the six shapes are the
//! resource templates. (Matches and concordance are resources rather than
//! tools: a tool more would take `tools/list` past its 16 KiB budget.) Subscriptions and their notifications are in
//! `watch.rs`.

use std::fmt;

use base64::Engine as _;
use rmcp::model::{ErrorData, Resource, ResourceContents, ResourceTemplate};
use serde_json::json;

use quire_core::Core;
use quire_model::error::CoreError;
use quire_model::hash::BlobHash;
use quire_model::ids::{NodeId, PageId, SessionId};
use quire_store::blobs::media_type;

const SCHEME: &str = "quire://";

/// A resource quire serves.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Uri {
    Scene(SessionId),
    Page(SessionId, PageId),
    Matches(SessionId, NodeId),
    /// The words, decoded.
    Concordance(SessionId, String),
    /// The query as written after `?` (empty: none).
    History(SessionId, String),
    Blob(BlobHash),
}

/// The most concordance results a resource read gives.
const CONCORDANCE: usize = 50;

/// `%XX` escapes decoded (UTF-8); `None` when they are not.
fn percent_decoded(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Every byte but unreserved ones percent-encoded.
fn percent_encoded(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                char::from(b).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

impl fmt::Display for Uri {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Uri::Scene(s) => write!(f, "{SCHEME}sessions/{s}/scene"),
            Uri::Page(s, p) => write!(f, "{SCHEME}sessions/{s}/pages/{p}"),
            Uri::Matches(s, n) => write!(f, "{SCHEME}sessions/{s}/nodes/{n}/matches"),
            Uri::Concordance(s, words) => write!(
                f,
                "{SCHEME}sessions/{s}/concordance/{}",
                percent_encoded(words)
            ),
            Uri::History(s, query) if query.is_empty() => {
                write!(f, "{SCHEME}sessions/{s}/history")
            }
            Uri::History(s, query) => write!(f, "{SCHEME}sessions/{s}/history?{query}"),
            Uri::Blob(h) => write!(f, "{SCHEME}blobs/{h}"),
        }
    }
}

impl Uri {
    /// Reads a URI; a malformed one is `invalid params` naming what is wrong.
    pub fn parse(uri: &str) -> Result<Uri, ErrorData> {
        let bad = |why: &str| {
            ErrorData::invalid_params(
                format!("`{uri}` is not a quire resource: {why} (see resources/templates/list)"),
                None,
            )
        };
        let rest = uri
            .strip_prefix(SCHEME)
            .ok_or_else(|| bad("it does not start with quire://"))?;
        let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
        let parts: Vec<&str> = rest.split('/').collect();
        let session = |s: &str| {
            s.parse::<uuid::Uuid>()
                .map(SessionId)
                .map_err(|_| bad("the session id is not a UUID"))
        };
        match parts.as_slice() {
            ["sessions", s, "scene"] => Ok(Uri::Scene(session(s)?)),
            ["sessions", s, "pages", p] => {
                let page = p
                    .parse::<uuid::Uuid>()
                    .map(PageId)
                    .map_err(|_| bad("the page id is not a UUID"))?;
                Ok(Uri::Page(session(s)?, page))
            }
            ["sessions", s, "nodes", n, "matches"] => {
                let node = n
                    .parse::<uuid::Uuid>()
                    .map(NodeId)
                    .map_err(|_| bad("the node id is not a UUID"))?;
                Ok(Uri::Matches(session(s)?, node))
            }
            ["sessions", s, "concordance", words] => {
                let words = percent_decoded(words)
                    .filter(|w| !w.trim().is_empty())
                    .ok_or_else(|| bad("give the words, percent-encoded (UTF-8)"))?;
                Ok(Uri::Concordance(session(s)?, words))
            }
            ["sessions", s, "history"] => {
                history_query(query).map_err(|e| bad(&e.to_string()))?;
                Ok(Uri::History(session(s)?, query.to_owned()))
            }
            _ if !query.is_empty() => Err(bad("only a history takes a query")),
            ["blobs", h] => h
                .parse::<BlobHash>()
                .map(Uri::Blob)
                .map_err(|_| bad("a blob hash is 64 lowercase hex digits")),
            _ => Err(bad("unknown path")),
        }
    }

    /// The session the resource belongs to (a blob belongs to none).
    pub fn session(&self) -> Option<SessionId> {
        match self {
            Uri::Scene(s)
            | Uri::Page(s, _)
            | Uri::Matches(s, _)
            | Uri::Concordance(s, _)
            | Uri::History(s, _) => Some(*s),
            Uri::Blob(_) => None,
        }
    }
}

/// A history resource's query (`user=ana&cursor=…`, percent-encoded), as
/// the HTTP route reads it.
fn history_query(query: &str) -> Result<quire_core::journal::HistoryQuery, CoreError> {
    let mut pairs = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        let decoded = |t: &str| {
            percent_decoded(&t.replace('+', " ")).ok_or_else(|| {
                CoreError::InvalidInput(format!("history query `{name}`: bad percent-encoding"))
            })
        };
        pairs.push((decoded(name)?, decoded(value)?));
    }
    quire_core::journal::HistoryQuery::parse(pairs.iter().map(|(n, v)| (n.as_str(), v.as_str())))
}

/// A resource that does not exist (or is not open): `-32002`.
fn not_found(uri: &Uri, why: &CoreError) -> ErrorData {
    ErrorData::resource_not_found(
        format!("{uri}: {why}"),
        Some(json!({ "uri": uri.to_string() })),
    )
}

/// The resources to list: every open session's scene.
pub fn list(core: &Core) -> Vec<Resource> {
    core.sessions()
        .into_iter()
        .map(|s| {
            Resource::new(Uri::Scene(s.id).to_string(), format!("{} (scene)", s.name))
                .with_description(format!(
                    "The scene of {} (pages, nodes, epoch); its pages are quire://sessions/{}/pages/{{pageId}}",
                    s.path.display(),
                    s.id
                ))
                .with_mime_type("application/json")
        })
        .collect()
}

/// The shapes of quire's URIs.
pub fn templates() -> Vec<ResourceTemplate> {
    let template = |uri: &str, name: &str, description: &str, mime: Option<&str>| {
        let t = ResourceTemplate::new(uri, name).with_description(description);
        match mime {
            Some(mime) => t.with_mime_type(mime),
            None => t,
        }
    };
    vec![
        template(
            "quire://sessions/{sessionId}/scene",
            "scene",
            "A session's scene and epoch",
            Some("application/json"),
        ),
        template(
            "quire://sessions/{sessionId}/pages/{pageId}",
            "page",
            "One page of a session: its nodes, texts, translations and boxes",
            Some("application/json"),
        ),
        template(
            "quire://sessions/{sessionId}/nodes/{nodeId}/matches",
            "matches",
            "The translation memory's best matches (up to 3) for a text node: score, origin, date, the words that differ",
            Some("application/json"),
        ),
        template(
            "quire://sessions/{sessionId}/concordance/{words}",
            "concordance",
            "Remembered segments (reviewed and final translations, imported TMX) whose source or translation holds every word",
            Some("application/json"),
        ),
        template(
            "quire://sessions/{sessionId}/history",
            "history",
            "Who did what in the session's project, newest first (when, who, page, node, field, before and after); add ?user=, agent=, engine=, page=, node=, since=, until=, limit=, cursor= as over HTTP",
            Some("application/json"),
        ),
        template(
            "quire://blobs/{hash}",
            "blob",
            "An image or mask a page uses, by its BLAKE3 hash",
            None,
        ),
    ]
}

/// What `uri` holds now.
pub async fn read(core: &Core, uri: Uri) -> Result<ResourceContents, ErrorData> {
    let text = |json: serde_json::Value| ResourceContents::TextResourceContents {
        uri: uri.to_string(),
        mime_type: Some("application/json".into()),
        text: json.to_string(),
        meta: None,
    };
    match &uri {
        Uri::Scene(session) => {
            let snapshot = core
                .scene(*session)
                .await
                .map_err(|e| not_found(&uri, &e))?;
            Ok(text(
                json!({ "epoch": snapshot.epoch, "scene": snapshot.scene }),
            ))
        }
        Uri::Page(session, page) => {
            let snapshot = core
                .scene(*session)
                .await
                .map_err(|e| not_found(&uri, &e))?;
            let Some(found) = snapshot.scene.page(*page) else {
                return Err(not_found(&uri, &CoreError::not_found("page", page)));
            };
            Ok(text(json!({ "epoch": snapshot.epoch, "page": found })))
        }
        Uri::Concordance(session, words) => {
            let found = core
                .concordance(*session, words, CONCORDANCE)
                .await
                .map_err(|e| not_found(&uri, &e))?;
            Ok(text(json!({ "matches": found })))
        }
        Uri::Matches(session, node) => {
            let found = core.matches(*session, *node).await.map_err(|e| match e {
                CoreError::InvalidInput(_) => {
                    ErrorData::invalid_params(format!("{uri}: {e}"), None)
                }
                e => not_found(&uri, &e),
            })?;
            Ok(text(json!({ "matches": found })))
        }
        Uri::History(session, query) => {
            let project = core
                .session(*session)
                .map_err(|e| not_found(&uri, &e))?
                .project_id;
            let query = history_query(query)
                .map_err(|e| ErrorData::invalid_params(format!("{uri}: {e}"), None))?;
            let page = core
                .history(project, query)
                .await
                .map_err(|e| not_found(&uri, &e))?;
            Ok(text(json!(page)))
        }
        Uri::Blob(hash) => {
            for s in core.sessions() {
                if let Ok(bytes) = core.read_blob(s.id, *hash).await {
                    return Ok(ResourceContents::BlobResourceContents {
                        uri: uri.to_string(),
                        mime_type: Some(media_type(&bytes).into()),
                        blob: base64::engine::general_purpose::STANDARD.encode(&bytes),
                        meta: None,
                    });
                }
            }
            Err(not_found(
                &uri,
                &CoreError::InvalidInput("no open project has this blob".into()),
            ))
        }
    }
}

/// Checks that a scene or page `uri` exists now, with one read of the
/// scene; for a page, returns its JSON, which a subscription compares
/// later changes against.
pub async fn subscribable(core: &Core, uri: Uri) -> Result<Option<String>, ErrorData> {
    let Some(session) = uri.session() else {
        return Err(ErrorData::invalid_params(
            format!("{uri}: a blob never changes; subscribe to a scene or a page"),
            None,
        ));
    };
    let snapshot = core.scene(session).await.map_err(|e| not_found(&uri, &e))?;
    match uri {
        Uri::Page(_, page) => match snapshot.scene.page(page) {
            Some(found) => Ok(serde_json::to_string(found).ok()),
            None => Err(not_found(&uri, &CoreError::not_found("page", page))),
        },
        _ => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_read_back_what_they_write() {
        let s = SessionId::new();
        let p = PageId::new();
        let h: BlobHash = "a".repeat(64).parse().unwrap();
        let n = NodeId::new();
        for uri in [
            Uri::Scene(s),
            Uri::Page(s, p),
            Uri::Matches(s, n),
            Uri::Concordance(s, "até a lua/sol 100%".into()),
            Uri::Blob(h),
        ] {
            assert_eq!(Uri::parse(&uri.to_string()).unwrap(), uri);
        }
        assert_eq!(
            Uri::Concordance(s, "full moon".into()).to_string(),
            format!("quire://sessions/{s}/concordance/full%20moon")
        );
    }

    #[test]
    fn malformed_uris_say_what_is_wrong() {
        for (uri, why) in [
            ("file:///etc/passwd", "quire://"),
            ("quire://sessions/nope/scene", "session id"),
            (
                "quire://sessions/0190d2a0-0000-7000-8000-000000000001/pages/x",
                "page id",
            ),
            ("quire://blobs/XYZ", "64 lowercase hex"),
            (
                "quire://sessions/0190d2a0-0000-7000-8000-000000000001/concordance/%FF",
                "percent-encoded",
            ),
            (
                "quire://sessions/0190d2a0-0000-7000-8000-000000000001/other",
                "unknown path",
            ),
        ] {
            let e = Uri::parse(uri).unwrap_err();
            assert_eq!(e.code, rmcp::model::ErrorCode::INVALID_PARAMS, "{uri}");
            assert!(e.message.contains(why), "{uri}: {}", e.message);
        }
    }
}

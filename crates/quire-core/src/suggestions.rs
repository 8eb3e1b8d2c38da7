//! A segment's suggestions (spec 10, "Suggestions"): [`Core::suggestions`]
//! lists a node's open ones, most votes first; [`Core::suggest`] adds
//! one, votes on one, or accepts or rejects one. Each act is an op like
//! any other (the stamper resolves it under the session's lock), so it is
//! logged, replayed, in the history and undoable by whoever made it.
//! Which role may do what is the caller's to check: adding and voting
//! need `suggest`, accepting and rejecting `edit`.

use serde::Serialize;
use uuid::Uuid;

use super::Core;
use quire_model::error::{CoreError, CoreResult};
use quire_model::ids::{NodeId, PageId, SessionId};
use quire_model::op::{NodePatch, Op};
use quire_model::scene::{NodeKind, Scene};
use quire_model::suggestion::{self, Suggest, Suggestion};

/// One open suggestion, as every frontend shows it.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SuggestionView {
    pub id: String,
    pub node_id: NodeId,
    pub text: String,
    /// Who proposed it: the user, else the agent's client; null for a
    /// person on a server without users.
    pub author: Option<String>,
    /// The agent's client, when an agent proposed it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// RFC 3339.
    pub at: String,
    /// The sum of the votes (+1 and -1).
    pub votes: i64,
    /// Who voted, in the order they did.
    pub voters: Vec<String>,
}

impl SuggestionView {
    fn of(node: NodeId, s: &Suggestion) -> SuggestionView {
        SuggestionView {
            id: s.id.clone(),
            node_id: node,
            text: s.text.clone(),
            author: s.author().map(str::to_owned),
            client: s.client.clone(),
            at: s.at.clone(),
            votes: s.score(),
            voters: s
                .votes
                .iter()
                .map(|v| v.voter.clone().unwrap_or_else(|| "a person".into()))
                .collect(),
        }
    }
}

/// What a caller does; [`Core::suggest`] gives a new suggestion its id.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    Add { text: String },
    Vote { id: String, value: i8 },
    Accept { id: String },
    Reject { id: String },
}

impl Action {
    /// Whether it changes a translation: accepting and rejecting need
    /// the `edit` role, adding and voting only `suggest`.
    pub fn edits(&self) -> bool {
        matches!(self, Action::Accept { .. } | Action::Reject { .. })
    }
}

/// What an act did: the epoch it made and, for an add or a vote, the
/// suggestion as it is now.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Suggested {
    pub epoch: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suggestion: Option<SuggestionView>,
}

/// The page holding `node` and the node's open suggestions; an unknown
/// node is `not_found`, a node that is not text is refused.
fn find(scene: &Scene, node: NodeId) -> CoreResult<(usize, PageId, &[Suggestion])> {
    for (i, page) in scene.pages.iter().enumerate() {
        if let Some(at) = page.node_index(node) {
            return match &page.nodes[at].kind {
                NodeKind::Text { suggestions, .. } => Ok((i, page.id, suggestions)),
                other => Err(CoreError::InvalidInput(format!(
                    "node {node} is a {} node; only text nodes take suggestions",
                    other.type_name()
                ))),
            };
        }
    }
    Err(CoreError::not_found("node", node))
}

impl Core {
    /// The open suggestions of `node`, most votes first, then the oldest.
    pub async fn suggestions(
        &self,
        id: SessionId,
        node: NodeId,
    ) -> CoreResult<Vec<SuggestionView>> {
        let snapshot = self.scene(id).await?;
        let (_, _, open) = find(&snapshot.scene, node)?;
        Ok(suggestion::ranked(open)
            .into_iter()
            .map(|s| SuggestionView::of(node, s))
            .collect())
    }

    /// Does `action` to `node`'s suggestions as this handle's person or
    /// agent. Nothing changes on a refusal: empty text, an unknown node
    /// or suggestion, a bad vote, accepting into a final segment below
    /// the review role.
    pub async fn suggest(
        &self,
        id: SessionId,
        node: NodeId,
        action: Action,
    ) -> CoreResult<Suggested> {
        let snapshot = self.scene(id).await?;
        let (index, page, _) = find(&snapshot.scene, node)?;
        let (act, shown) = match action {
            Action::Add { text } => {
                let id = Uuid::now_v7().to_string();
                (
                    Suggest::Add {
                        id: id.clone(),
                        text,
                    },
                    Some(id),
                )
            }
            Action::Vote { id, value } => (
                Suggest::Vote {
                    id: id.clone(),
                    value,
                },
                Some(id),
            ),
            Action::Accept { id } => (Suggest::Accept { id }, None),
            Action::Reject { id } => (Suggest::Reject { id }, None),
        };
        let label = format!("{} · page {}", act.label(), index + 1);
        let op = Op::Batch {
            ops: vec![Op::UpdateNode {
                page,
                id: node,
                patch: NodePatch::suggest(act),
                based_on: None,
            }],
            label: Some(label),
        };
        let epoch = self.apply(id, op).await?.epoch;
        let suggestion = match shown {
            Some(shown) => self
                .suggestions(id, node)
                .await?
                .into_iter()
                .find(|s| s.id == shown),
            None => None,
        };
        Ok(Suggested { epoch, suggestion })
    }
}

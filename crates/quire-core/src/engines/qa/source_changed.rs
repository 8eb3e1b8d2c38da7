//! `source-changed`: a translated node whose source a person or an agent
//! changed after the translation was written or reviewed (the node's
//! `source_edit`): the translation may no longer say what the source does.

use super::{Context, Rule, RuleLevel, texts};
use quire_model::ids::NodeId;
use quire_model::scene::{Author, NodeKind, Origin, Page};

pub(super) const RULE: Rule = Rule {
    id: "source-changed",
    key: "source_changed",
    default: RuleLevel::Warning,
    check,
};

fn check(page: &Page, _: &Context<'_>) -> Vec<(NodeId, String)> {
    texts(page)
        .filter(|t| t.translation.is_some())
        .filter_map(|t| match &t.node.kind {
            NodeKind::Text {
                source_edit: Some(edit),
                ..
            } => Some((
                t.node.id,
                format!(
                    "source changed by {} at {} after the translation: review it ({})",
                    who(edit),
                    edit.at,
                    t.what()
                ),
            )),
            _ => None,
        })
        .collect()
}

/// A person by their user name, an agent by its client (and its person).
fn who(edit: &Origin) -> String {
    let user = edit.user.as_deref();
    match (edit.by, edit.client.as_deref(), user) {
        (Author::Agent, Some(client), Some(user)) => format!("agent `{client}` ({user})"),
        (Author::Agent, Some(client), None) => format!("agent `{client}`"),
        (_, _, Some(user)) => format!("`{user}`"),
        _ => "a person".to_owned(),
    }
}

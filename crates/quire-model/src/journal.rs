//! Who did what: the project's journal (spec 10, "Who did what: the
//! history"). Each change, undo and redo becomes one [`Record`]: when, its
//! label, who made it ([`Who`]: a person, an agent for a person, or an
//! engine for who started its job) and what it changed ([`Change`]: page,
//! node, field, before and after). A record is made from a log frame alone
//! (its op and inverse carry both values), so the journal can always be
//! caught up from `ops.log` after a crash.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::history::Group;
use crate::ids::{NodeId, PageId};
use crate::op::Op;

/// Who made a change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "by", rename_all = "camelCase")]
pub enum Who {
    /// A person (the server's user, when it has users).
    Human {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        user: Option<String>,
    },
    /// An agent over MCP, for a person.
    Agent {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        user: Option<String>,
        /// The MCP client's name and version.
        client: String,
    },
    /// An engine's job, for who started it.
    Engine {
        engine: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        user: Option<String>,
        /// The agent's client, when an agent started the job.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        client: Option<String>,
    },
}

impl Default for Who {
    /// A person the server has no name for.
    fn default() -> Who {
        Who::Human { user: None }
    }
}

impl Who {
    /// Who a frame's change is: an engine's when it belongs to a job's
    /// step, else its agent's or its person's.
    pub fn of(user: Option<&str>, agent: Option<&str>, group: Option<&Group>) -> Who {
        let user = user.map(str::to_owned);
        match (group, agent) {
            (Some(group), client) => Who::Engine {
                engine: group.what.clone(),
                user,
                client: client.map(str::to_owned),
            },
            (None, Some(client)) => Who::Agent {
                user,
                client: client.to_owned(),
            },
            (None, None) => Who::Human { user },
        }
    }

    pub fn user(&self) -> Option<&str> {
        match self {
            Who::Human { user } | Who::Agent { user, .. } | Who::Engine { user, .. } => {
                user.as_deref()
            }
        }
    }
}

/// One field a change set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "FieldChange")]
pub struct Change {
    pub page: Option<PageId>,
    /// `None` for a page's or the project's own change.
    pub node: Option<NodeId>,
    /// A node kind's field (`translation`, `state`, `text`, …), a page's
    /// (`name`, …), `page` or `node` for adds and removals, `order` for
    /// moves, a project field or `glossary`.
    pub field: String,
    /// `null` when absent.
    #[schemars(schema_with = "any_value")]
    pub before: Value,
    #[schemars(schema_with = "any_value")]
    pub after: Value,
}

/// Any JSON value, as an object schema (some OpenAPI tools read no
/// boolean schema).
fn any_value(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "description": "The field's value: any JSON, null when absent" })
}

/// One entry of the journal: a change, an undo or a redo.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Record {
    pub epoch: u64,
    /// RFC 3339 UTC.
    pub at: String,
    pub label: String,
    pub by: Who,
    pub changes: Vec<Change>,
}

/// Fields left out of a record: bookkeeping a reader does not look for.
const QUIET: &[&str] = &["type", "origin", "foundBy", "sourceEdit"];

/// What `forward` changed, `inverse` telling what was there before.
pub fn changes(forward: &Op, inverse: &Op) -> Vec<Change> {
    let mut out = Vec::new();
    collect(forward, inverse, &mut out);
    out
}

fn collect(forward: &Op, inverse: &Op, out: &mut Vec<Change>) {
    match (forward, inverse) {
        (Op::Batch { ops, .. }, Op::Batch { ops: back, .. }) => {
            // An inverse batch undoes its members in reverse order.
            for (f, i) in ops.iter().zip(back.iter().rev()) {
                collect(f, i, out);
            }
        }
        (Op::Batch { ops, .. }, _) => {
            for f in ops {
                collect(
                    f,
                    &Op::Batch {
                        ops: Vec::new(),
                        label: None,
                    },
                    out,
                );
            }
        }
        (
            Op::UpdateNode {
                page, id, patch, ..
            },
            back,
        ) => {
            let before = match back {
                Op::UpdateNode { patch, .. } => json(patch),
                _ => Value::Null,
            };
            fields(Some(*page), Some(*id), &json(patch), &before, out);
        }
        (Op::UpdatePage { id, patch }, back) => {
            let before = match back {
                Op::UpdatePage { patch, .. } => json(patch),
                _ => Value::Null,
            };
            fields(Some(*id), None, &json(patch), &before, out);
        }
        (Op::UpdateProject { patch }, back) => {
            let before = match back {
                Op::UpdateProject { patch } => json(patch),
                _ => Value::Null,
            };
            fields(None, None, &json(patch), &before, out);
        }
        (Op::AddNode { page, node, .. }, _) => out.push(Change {
            page: Some(*page),
            node: node.id,
            field: "node".into(),
            before: Value::Null,
            after: summary(&json(&node.kind)),
        }),
        (Op::RemoveNode { page, id }, back) => out.push(Change {
            page: Some(*page),
            node: Some(*id),
            field: "node".into(),
            before: match back {
                Op::AddNode { node, .. } => summary(&json(&node.kind)),
                _ => Value::Null,
            },
            after: Value::Null,
        }),
        (Op::AddPage { page, .. }, _) => out.push(Change {
            page: page.id,
            node: None,
            field: "page".into(),
            before: Value::Null,
            after: Value::String(page.name.clone()),
        }),
        (Op::RemovePage { id }, back) => out.push(Change {
            page: Some(*id),
            node: None,
            field: "page".into(),
            before: match back {
                Op::AddPage { page, .. } => Value::String(page.name.clone()),
                _ => Value::Null,
            },
            after: Value::Null,
        }),
        (Op::ReorderPages { order }, back) => out.push(Change {
            page: None,
            node: None,
            field: "order".into(),
            before: match back {
                Op::ReorderPages { order } => json(order),
                _ => Value::Null,
            },
            after: json(order),
        }),
        (Op::ReorderNodes { page, order }, back) => out.push(Change {
            page: Some(*page),
            node: None,
            field: "order".into(),
            before: match back {
                Op::ReorderNodes { order, .. } => json(order),
                _ => Value::Null,
            },
            after: json(order),
        }),
        (Op::UpdateGlossary { set, remove }, _) => out.push(Change {
            page: None,
            node: None,
            field: "glossary".into(),
            before: json(remove),
            after: json(set),
        }),
    }
}

/// A patch's fields, each with the value before (from the inverse patch).
fn fields(
    page: Option<PageId>,
    node: Option<NodeId>,
    after: &Value,
    before: &Value,
    out: &mut Vec<Change>,
) {
    let Value::Object(after) = after else { return };
    for (key, value) in after {
        // A node patch's kind holds the text fields.
        if key == "kind"
            && let Value::Object(_) = value
        {
            fields(
                page,
                node,
                value,
                before.get("kind").unwrap_or(&Value::Null),
                out,
            );
            continue;
        }
        if QUIET.contains(&key.as_str()) {
            continue;
        }
        let shown = |v: &Value| match key.as_str() {
            "suggestions" => open_suggestions(v),
            _ => v.clone(),
        };
        let (before, after) = (before.get(key).map_or(Value::Null, shown), shown(value));
        // A field set to what it was (a state given again) changed nothing.
        if before == after {
            continue;
        }
        out.push(Change {
            page,
            node,
            field: key.clone(),
            before,
            after,
        });
    }
}

/// What a new or removed node was: its text, or its kind.
/// A node's open suggestions as a history shows them: each one's text
/// and the sum of its votes, `Salut (2 votes)`.
fn open_suggestions(list: &Value) -> Value {
    let Value::Array(list) = list else {
        return list.clone();
    };
    list.iter()
        .map(|s| {
            let text = s.get("text").and_then(Value::as_str).unwrap_or_default();
            let votes: i64 = s.get("votes").and_then(Value::as_array).map_or(0, |v| {
                v.iter().filter_map(|v| v.get("value")?.as_i64()).sum()
            });
            let unit = if votes.abs() == 1 { "vote" } else { "votes" };
            Value::String(format!("{text} ({votes} {unit})"))
        })
        .collect()
}

fn summary(kind: &Value) -> Value {
    match kind.get("text") {
        Some(text @ Value::String(_)) => text.clone(),
        _ => kind.get("type").cloned().unwrap_or(Value::Null),
    }
}

/// Anything serde writes, as a JSON value (`null` if it cannot be).
fn json<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::op::NodePatch;
    use crate::scene::TextState;

    #[test]
    fn an_edit_says_each_field_before_and_after() {
        let (page, id) = (PageId::new(), NodeId::new());
        let edit = |t: Option<&str>, s: TextState| Op::UpdateNode {
            page,
            id,
            patch: NodePatch::text(Some(t.map(str::to_owned)), Some(s)),
            based_on: None,
        };
        let forward = edit(Some("Olá"), TextState::Translated);
        let inverse = edit(None, TextState::Initial);
        let got = changes(&forward, &inverse);
        let fields: Vec<_> = got
            .iter()
            .map(|c| (c.field.as_str(), c.before.clone(), c.after.clone()))
            .collect();
        assert!(
            fields.contains(&("translation", Value::Null, "Olá".into())),
            "{got:?}"
        );
        assert!(
            fields.contains(&("state", "initial".into(), "translated".into())),
            "{got:?}"
        );
        assert!(
            got.iter()
                .all(|c| c.page == Some(page) && c.node == Some(id))
        );
    }
}

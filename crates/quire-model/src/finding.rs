//! [`Finding`]: a problem a check or a job found, naming its page and node.

use serde::Serialize;

use crate::ids::{NodeId, PageId};

/// How much a warning matters.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "camelCase")]
pub enum Severity {
    Info,
    #[default]
    Warning,
    Error,
}

/// A problem an engine or the job runner found, with what it is about, so
/// a frontend can jump to the page and node.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    /// What kind of problem: a QA rule (`missing-translation`,
    /// `placeholders`, `too-long`, `whitespace`) or the job's own
    /// (`engine-failed`, `kept-translation`, `page-removed`, `no-image`).
    pub rule: String,
    #[serde(default)]
    pub severity: Severity,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_id: Option<PageId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_id: Option<NodeId>,
    pub message: String,
}

impl Finding {
    pub fn new(rule: &str, severity: Severity, message: impl Into<String>) -> Finding {
        Finding {
            rule: rule.to_owned(),
            severity,
            page_id: None,
            node_id: None,
            message: message.into(),
        }
    }

    pub fn on(mut self, page: PageId, node: Option<NodeId>) -> Finding {
        self.page_id = Some(page);
        self.node_id = node;
        self
    }
}

//! Who did what, and each one taking back their own: [`Core::history`]
//! reads a project's journal (`storage::journal`), newest first, filtered
//! and paged, as `GET /api/v1/projects/{projectId}/history` and the MCP
//! resource `quire://sessions/{sessionId}/history` give it (spec 10, "Who
//! did what: the history"); [`Core::undo`] and [`Core::redo`] take back
//! and bring back the handle's own steps ("Undo is per person").

use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use super::blocking;
use super::session::Stepped;
use super::{Core, StepResult};
use quire_model::error::{CoreError, CoreResult};
use quire_model::history::Actor;
use quire_model::ids::SessionId;
use quire_model::ids::{NodeId, PageId, ProjectId};
use quire_model::journal::{Record, Who};
use quire_store::storage::ProjectFiles;

/// The most entries one page of history holds.
pub const MAX_LIMIT: usize = 500;

/// What to list: every filter combines with the others.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HistoryQuery {
    /// That person's entries, their agents' and their jobs'.
    pub user: Option<String>,
    /// Entries whose agent client holds this.
    pub agent: Option<String>,
    /// An engine's entries (`ocr`, `tm`, …).
    pub engine: Option<String>,
    pub page: Option<PageId>,
    pub node: Option<NodeId>,
    /// RFC 3339, inclusive.
    pub since: Option<SystemTime>,
    /// RFC 3339, exclusive.
    pub until: Option<SystemTime>,
    /// 1 to [`MAX_LIMIT`]; 50 when `None`.
    pub limit: Option<usize>,
    /// From a page's `next`: entries older than it.
    pub cursor: Option<String>,
}

impl HistoryQuery {
    /// The query of `pairs` (a URL's query string, decoded): an unknown
    /// parameter or a bad value is refused naming it.
    pub fn parse<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> CoreResult<Self> {
        let mut q = HistoryQuery::default();
        let bad = |name: &str, why: &str| {
            CoreError::InvalidInput(format!("history query `{name}`: {why}"))
        };
        for (name, value) in pairs {
            let time = || {
                humantime::parse_rfc3339_weak(value)
                    .map_err(|_| bad(name, "not an RFC 3339 time (2026-12-07T10:00:00Z)"))
            };
            match name {
                "user" => q.user = Some(value.to_owned()),
                "agent" => q.agent = Some(value.to_owned()),
                "engine" => q.engine = Some(value.to_owned()),
                "page" => q.page = Some(value.parse().map_err(|_| bad(name, "not a page id"))?),
                "node" => q.node = Some(value.parse().map_err(|_| bad(name, "not a node id"))?),
                "since" => q.since = Some(time()?),
                "until" => q.until = Some(time()?),
                "limit" => {
                    let n: usize = value
                        .parse()
                        .ok()
                        .filter(|n| (1..=MAX_LIMIT).contains(n))
                        .ok_or_else(|| bad(name, "a number from 1 to 500"))?;
                    q.limit = Some(n);
                }
                "cursor" => {
                    value
                        .parse::<u64>()
                        .map_err(|_| bad(name, "not a cursor from a page's `next`"))?;
                    q.cursor = Some(value.to_owned());
                }
                other => {
                    return Err(CoreError::InvalidInput(format!(
                        "history query: unknown parameter `{other}` (user, agent, engine, page, \
                         node, since, until, limit, cursor)"
                    )));
                }
            }
        }
        Ok(q)
    }

    fn keeps(&self, record: &Record) -> bool {
        let by = &record.by;
        let at = humantime::parse_rfc3339_weak(&record.at).ok();
        self.user.as_deref().is_none_or(|u| by.user() == Some(u))
            && self
                .agent
                .as_deref()
                .is_none_or(|a| matches!(by, Who::Agent { client, .. } if client.contains(a)))
            && self
                .engine
                .as_deref()
                .is_none_or(|e| matches!(by, Who::Engine { engine, .. } if engine == e))
            && self
                .page
                .is_none_or(|p| record.changes.iter().any(|c| c.page == Some(p)))
            && self
                .node
                .is_none_or(|n| record.changes.iter().any(|c| c.node == Some(n)))
            && self.since.is_none_or(|s| at.is_some_and(|t| t >= s))
            && self.until.is_none_or(|u| at.is_some_and(|t| t < u))
    }
}

/// One page of history, newest first; `next` is the cursor of the page
/// after it, `None` on the last.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HistoryPage {
    pub entries: Vec<Record>,
    pub next: Option<String>,
}

impl Core {
    /// Undoes this handle's user's (or agent's) latest change still in
    /// effect and says what it was; `None` when they have none. Someone
    /// else's change since to what it changed refuses it
    /// (`CoreError::UndoConflict`).
    pub async fn undo(&self, id: SessionId) -> CoreResult<Option<StepResult>> {
        self.step(id, true).await
    }

    /// Redoes their latest undone change; `None` when there is none.
    pub async fn redo(&self, id: SessionId) -> CoreResult<Option<StepResult>> {
        self.step(id, false).await
    }

    async fn step(&self, id: SessionId, undo: bool) -> CoreResult<Option<StepResult>> {
        let session = self.open_session(id)?;
        let who = Actor {
            user: self.user(),
            agent: self.agent.as_deref(),
            session: self.agent_session.as_deref(),
        };
        let stepped = match session.try_step(undo, who) {
            Some(stepped) => stepped?,
            None => {
                let (user, agent) = (self.user.clone(), self.agent.clone());
                let mcp = self.agent_session.clone();
                blocking(move || {
                    let who = Actor {
                        user: user.as_deref(),
                        agent: agent.as_deref(),
                        session: mcp.as_deref(),
                    };
                    if undo {
                        session.undo(who)
                    } else {
                        session.redo(who)
                    }
                })
                .await?
            }
        };
        let Some((pending, Stepped { label, ops, by })) = stepped else {
            return Ok(None);
        };
        let (epoch, _) = pending.durable().await?;
        Ok(Some(StepResult {
            epoch,
            label,
            ops,
            by,
        }))
    }

    /// The history of the project `project` (open or not): what
    /// `query` keeps of its journal, newest first. An unknown project is
    /// `not_found`.
    pub async fn history(
        &self,
        project: ProjectId,
        query: HistoryQuery,
    ) -> CoreResult<HistoryPage> {
        let open = self
            .sessions()
            .into_iter()
            .find(|s| s.project_id == project)
            .map(|s| s.path);
        let dir = match open {
            Some(path) => path,
            None => self
                .list_projects()
                .await?
                .into_iter()
                .find(|p| p.id == project)
                .map(|p| p.path)
                .ok_or_else(|| CoreError::not_found("project", project))?,
        };
        let path = ProjectFiles::new(dir).journal();
        super::blocking(move || {
            let records = quire_store::storage::journal::read(&path);
            let before: u64 = query
                .cursor
                .as_deref()
                .and_then(|c| c.parse().ok())
                .unwrap_or(u64::MAX);
            let limit = query.limit.unwrap_or(50);
            let mut entries: Vec<Record> = records
                .into_iter()
                .rev()
                .filter(|r| r.epoch < before && query.keeps(r))
                .take(limit + 1)
                .collect();
            let next = (entries.len() > limit).then(|| {
                entries.truncate(limit);
                entries
                    .last()
                    .map(|r| r.epoch.to_string())
                    .unwrap_or_default()
            });
            Ok(HistoryPage { entries, next })
        })
        .await
    }
}

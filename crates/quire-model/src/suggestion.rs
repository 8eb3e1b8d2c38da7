//! Suggestions: translations proposed for a text node without changing
//! it (spec 10, "Suggestions"), with one vote per person.
//!
//! A node keeps its open suggestions. They change only through a
//! [`Suggest`] act in a text patch, which the stamper (under the
//! session's lock, against the node as it is) turns into the node's new
//! list: the logged op carries the list itself, so replay, undo and the
//! history need nothing from here.

use serde::{Deserialize, Serialize};

use crate::error::{CoreError, CoreResult};
use crate::limits::{MAX_ATTRIBUTE_BYTES, MAX_TEXT_BYTES};

/// The most open suggestions one node keeps.
pub const MAX_SUGGESTIONS: usize = 50;

/// The most votes one suggestion keeps (one per person: a team signing
/// in through an identity provider has no fixed size).
pub const MAX_VOTES: usize = 1000;

/// One proposed translation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Suggestion {
    pub id: String,
    pub text: String,
    /// The server's user who proposed it (the agent's person for an
    /// agent); none on a server without users.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// The agent's MCP client, when an agent proposed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// RFC 3339.
    pub at: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub votes: Vec<Vote>,
}

/// One person's vote: +1 or -1. A person without a name (a server
/// without users) is one voter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Vote {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub voter: Option<String>,
    pub value: i8,
}

impl Suggestion {
    /// Who proposed it, as people read it: the user, else the agent's
    /// client; none for a person the server has no name for.
    pub fn author(&self) -> Option<&str> {
        self.user.as_deref().or(self.client.as_deref())
    }

    /// The sum of its votes.
    pub fn score(&self) -> i64 {
        self.votes.iter().map(|v| i64::from(v.value)).sum()
    }
}

/// What a caller does to a node's suggestions; the stamper resolves it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "do", rename_all = "camelCase", deny_unknown_fields)]
pub enum Suggest {
    Add { id: String, text: String },
    Vote { id: String, value: i8 },
    Accept { id: String },
    Reject { id: String },
}

impl Suggest {
    /// The history's label for it.
    pub fn label(&self) -> &'static str {
        match self {
            Suggest::Add { .. } => "Suggestion added",
            Suggest::Vote { .. } => "Vote on a suggestion",
            Suggest::Accept { .. } => "Suggestion accepted",
            Suggest::Reject { .. } => "Suggestion rejected",
        }
    }
}

/// Who acts, as a suggestion records it.
pub struct Actor<'a> {
    pub user: Option<&'a str>,
    pub client: Option<&'a str>,
    pub at: &'a str,
}

/// What an act leaves: the node's new list, and for an accept the
/// suggestion that becomes the translation.
pub struct Resolved {
    pub list: Vec<Suggestion>,
    pub accepted: Option<Suggestion>,
}

/// Resolves `act` against a node's open suggestions. An unknown id is
/// `not_found`; empty, over-long or duplicate text and a vote other than
/// -1, 0, 1 are refused; nothing is changed on a refusal.
pub fn resolve(open: &[Suggestion], act: &Suggest, who: &Actor<'_>) -> CoreResult<Resolved> {
    let mut list = open.to_vec();
    let find = |list: &[Suggestion], id: &str| {
        list.iter()
            .position(|s| s.id == id)
            .ok_or_else(|| CoreError::not_found("suggestion", id))
    };
    let mut accepted = None;
    match act {
        Suggest::Add { id, text } => {
            if id.is_empty() || id.len() > MAX_ATTRIBUTE_BYTES {
                return Err(CoreError::InvalidInput(format!(
                    "a suggestion's id is 1 to {MAX_ATTRIBUTE_BYTES} bytes"
                )));
            }
            let text = text.trim();
            if text.is_empty() {
                return Err(CoreError::InvalidInput(
                    "a suggestion needs a text; it is empty".into(),
                ));
            }
            if text.len() > MAX_TEXT_BYTES {
                return Err(CoreError::InvalidInput(format!(
                    "a suggestion is at most {MAX_TEXT_BYTES} bytes; this one is {}",
                    text.len()
                )));
            }
            if let Some(same) = list.iter().find(|s| s.text == text) {
                return Err(CoreError::Conflict(format!(
                    "the same text is already suggested ({}); vote for it instead",
                    same.id
                )));
            }
            if list.len() >= MAX_SUGGESTIONS {
                return Err(CoreError::Conflict(format!(
                    "this segment has {MAX_SUGGESTIONS} open suggestions, the most it keeps; \
                     accept or reject some first"
                )));
            }
            list.push(Suggestion {
                id: id.clone(),
                text: text.to_owned(),
                user: who.user.map(str::to_owned),
                client: who.client.map(str::to_owned),
                at: who.at.to_owned(),
                votes: Vec::new(),
            });
        }
        Suggest::Vote { id, value } => {
            if !(-1..=1).contains(value) {
                return Err(CoreError::InvalidInput(format!(
                    "a vote is 1, -1 or 0 (to take it back), not {value}"
                )));
            }
            let at = find(&list, id)?;
            // An agent votes as its person; one vote each.
            let voter = who.user.or(who.client).map(str::to_owned);
            let votes = &mut list[at].votes;
            votes.retain(|v| v.voter != voter);
            if *value != 0 && votes.len() >= MAX_VOTES {
                return Err(CoreError::Conflict(format!(
                    "suggestion {id} has {MAX_VOTES} votes, the most it keeps"
                )));
            }
            if *value != 0 {
                votes.push(Vote {
                    voter,
                    value: *value,
                });
            }
        }
        Suggest::Accept { id } => accepted = Some(list.remove(find(&list, id)?)),
        Suggest::Reject { id } => {
            list.remove(find(&list, id)?);
        }
    }
    Ok(Resolved { list, accepted })
}

/// The open suggestions as a list shows them: most votes first, then the
/// oldest.
pub fn ranked(open: &[Suggestion]) -> Vec<&Suggestion> {
    let mut out: Vec<&Suggestion> = open.iter().collect();
    out.sort_by(|a, b| b.score().cmp(&a.score()).then_with(|| a.at.cmp(&b.at)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn who(user: &str) -> Actor<'_> {
        Actor {
            user: Some(user),
            client: None,
            at: "2026-12-07T10:00:00Z",
        }
    }

    fn add(open: &[Suggestion], id: &str, text: &str, by: &str) -> CoreResult<Vec<Suggestion>> {
        let act = Suggest::Add {
            id: id.into(),
            text: text.into(),
        };
        Ok(resolve(open, &act, &who(by))?.list)
    }

    #[test]
    fn votes_are_one_per_person_and_a_new_one_replaces_the_old() {
        let list = add(&[], "a", " Bonjour ", "ana").unwrap();
        assert_eq!(list[0].text, "Bonjour");
        assert_eq!(list[0].user.as_deref(), Some("ana"));
        let vote = |list: &[Suggestion], by: &str, value: i8| {
            let act = Suggest::Vote {
                id: "a".into(),
                value,
            };
            resolve(list, &act, &who(by)).unwrap().list
        };
        let list = vote(&list, "ben", 1);
        let list = vote(&list, "ben", 1);
        let list = vote(&list, "cy", -1);
        let list = vote(&list, "dee", 1);
        assert_eq!(list[0].score(), 1);
        let list = vote(&list, "cy", 0);
        assert_eq!(list[0].score(), 2);
        assert_eq!(list[0].votes.len(), 2);
    }

    #[test]
    fn bad_acts_are_refused_naming_what_is_wrong() {
        let list = add(&[], "a", "Salut", "ana").unwrap();
        let err = add(&list, "b", "   ", "ana").unwrap_err();
        assert!(err.to_string().contains("empty"), "{err}");
        let err = add(&list, "b", "Salut", "ben").unwrap_err();
        assert!(err.to_string().contains("already suggested (a)"), "{err}");
        let act = Suggest::Vote {
            id: "a".into(),
            value: 2,
        };
        assert!(resolve(&list, &act, &who("ben")).is_err());
        let act = Suggest::Accept { id: "zz".into() };
        let err = resolve(&list, &act, &who("ben")).err().unwrap();
        assert_eq!(err.to_string(), "unknown suggestion zz");
        let full: Vec<Suggestion> = (0..MAX_SUGGESTIONS).fold(Vec::new(), |l, i| {
            add(&l, &i.to_string(), &i.to_string(), "ana").unwrap()
        });
        assert!(add(&full, "x", "one more", "ana").is_err());
        let mut crowded = list.clone();
        crowded[0].votes = (0..MAX_VOTES)
            .map(|i| Vote {
                voter: Some(format!("v{i}")),
                value: 1,
            })
            .collect();
        let act = Suggest::Vote {
            id: "a".into(),
            value: 1,
        };
        let err = resolve(&crowded, &act, &who("ben")).err().unwrap();
        assert!(err.to_string().contains("the most it keeps"), "{err}");
        // A voter already counted may still change or take back theirs.
        let act = Suggest::Vote {
            id: "a".into(),
            value: 0,
        };
        assert_eq!(
            resolve(&crowded, &act, &who("v3")).unwrap().list[0]
                .votes
                .len(),
            MAX_VOTES - 1
        );
    }

    #[test]
    fn accepting_takes_it_off_the_list_and_hands_it_back() {
        let list = add(&[], "a", "Salut", "ana").unwrap();
        let list = add(&list, "b", "Bonjour", "ben").unwrap();
        let act = Suggest::Accept { id: "a".into() };
        let done = resolve(&list, &act, &who("cy")).unwrap();
        assert_eq!(done.accepted.unwrap().text, "Salut");
        assert_eq!(done.list.len(), 1);
        assert_eq!(done.list[0].id, "b");
    }

    #[test]
    fn the_list_ranks_by_votes_then_age() {
        let list = add(&[], "a", "one", "ana").unwrap();
        let mut list = add(&list, "b", "two", "ben").unwrap();
        list[1].votes.push(Vote {
            voter: Some("cy".into()),
            value: 1,
        });
        let ids: Vec<&str> = ranked(&list).iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["b", "a"]);
    }
}

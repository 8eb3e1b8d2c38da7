//! A segment's suggestions over HTTP (spec 10, "Suggestions"): list and
//! add under `…/nodes/{nodeId}/suggestions`, vote, accept and reject
//! under `…/suggestions/{suggestionId}/…`. The guard holds adding and
//! voting to `suggest`, accepting and rejecting to `edit`.

use std::collections::HashMap;

use axum::Json;
use axum::extract::Path;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::http::api::{Body, Doc, json};
use crate::http::error::{ApiError, ApiResult};
use crate::http::extract::{Acting, JsonBody, Target};
use quire_core::suggestions::{Action, Suggested, SuggestionView};
use quire_model::error::CoreError;
use quire_model::ids::{NodeId, SessionId};

/// A node's open suggestions, most votes first.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(super) struct Suggestions {
    suggestions: Vec<SuggestionView>,
}

/// `{ text }`: the proposed translation.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct NewSuggestion {
    text: String,
}

/// `{ value }`: 1 for, -1 against, 0 to take one's vote back.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct Ballot {
    #[schemars(range(min = -1, max = 1))]
    value: i8,
}

fn node(params: &HashMap<String, String>) -> ApiResult<NodeId> {
    let text = params.get("nodeId").cloned().unwrap_or_default();
    text.parse()
        .map_err(|_| ApiError::from(CoreError::not_found("node", &text)))
}

fn suggestion(params: &HashMap<String, String>) -> String {
    params.get("suggestionId").cloned().unwrap_or_default()
}

pub(super) const LIST: Doc = Doc {
    id: "listSuggestions",
    tag: "suggestions",
    summary: "A text node's open suggestions, most votes first: id, text, author, when, the sum of the votes and who voted",
    request: Body::None,
    response: Body::Json(json::<Suggestions>),
    errors: &[400, 404],
    queries: &[],
};

pub(super) async fn list(
    Acting(state): Acting,
    Target(id): Target,
    Path(params): Path<HashMap<String, String>>,
) -> ApiResult<Json<Suggestions>> {
    let suggestions = state.core.suggestions(id, node(&params)?).await?;
    Ok(Json(Suggestions { suggestions }))
}

pub(super) const ADD: Doc = Doc {
    id: "addSuggestion",
    tag: "suggestions",
    summary: "Suggest a translation for a text node without changing it (role suggest and up); empty text is 400, the same text as an open suggestion 409",
    request: Body::Json(json::<NewSuggestion>),
    response: Body::Json(json::<SuggestionView>),
    errors: &[400, 403, 404, 409, 422],
    queries: &[],
};

pub(super) async fn add(
    Acting(state): Acting,
    Target(id): Target,
    Path(params): Path<HashMap<String, String>>,
    JsonBody(body): JsonBody<NewSuggestion>,
) -> ApiResult<Json<SuggestionView>> {
    let node = node(&params)?;
    if body.text.trim().is_empty() {
        return Err(ApiError::bad_request(
            "empty_text",
            "a suggestion needs a text; it is empty",
        ));
    }
    let done = state
        .core
        .suggest(id, node, Action::Add { text: body.text })
        .await?;
    done.suggestion
        .map(Json)
        .ok_or_else(|| ApiError::from(CoreError::internal("the new suggestion is not listed")))
}

pub(super) const VOTE: Doc = Doc {
    id: "voteSuggestion",
    tag: "suggestions",
    summary: "Vote on a suggestion: 1, -1, or 0 to take one's vote back; one vote per person, a new one replaces it (role suggest and up)",
    request: Body::Json(json::<Ballot>),
    response: Body::Json(json::<SuggestionView>),
    errors: &[400, 403, 404],
    queries: &[],
};

pub(super) async fn vote(
    Acting(state): Acting,
    Target(id): Target,
    Path(params): Path<HashMap<String, String>>,
    JsonBody(body): JsonBody<Ballot>,
) -> ApiResult<Json<SuggestionView>> {
    if !(-1..=1).contains(&body.value) {
        return Err(ApiError::bad_request(
            "bad_vote",
            format!("a vote is 1, -1 or 0 (to take it back), not {}", body.value),
        ));
    }
    let action = Action::Vote {
        id: suggestion(&params),
        value: body.value,
    };
    let done = state.core.suggest(id, node(&params)?, action).await?;
    done.suggestion
        .map(Json)
        .ok_or_else(|| ApiError::from(CoreError::internal("the suggestion is not listed")))
}

pub(super) const ACCEPT: Doc = Doc {
    id: "acceptSuggestion",
    tag: "suggestions",
    summary: "Accept a suggestion: it becomes the node's translation (state translated), signed by who accepted it and naming who suggested it, and leaves the list; undoable (role edit and up; a final segment needs review)",
    request: Body::None,
    response: Body::Json(json::<Suggested>),
    errors: &[403, 404],
    queries: &[],
};

pub(super) async fn accept(
    Acting(state): Acting,
    Target(id): Target,
    Path(params): Path<HashMap<String, String>>,
) -> ApiResult<Json<Suggested>> {
    let action = Action::Accept {
        id: suggestion(&params),
    };
    decide(state, id, &params, action).await
}

pub(super) const REJECT: Doc = Doc {
    id: "rejectSuggestion",
    tag: "suggestions",
    summary: "Reject a suggestion: it leaves the list, the translation is unchanged; undoable (role edit and up)",
    request: Body::None,
    response: Body::Json(json::<Suggested>),
    errors: &[403, 404],
    queries: &[],
};

pub(super) async fn reject(
    Acting(state): Acting,
    Target(id): Target,
    Path(params): Path<HashMap<String, String>>,
) -> ApiResult<Json<Suggested>> {
    let action = Action::Reject {
        id: suggestion(&params),
    };
    decide(state, id, &params, action).await
}

/// An accept or a reject of the suggestion the path names.
async fn decide(
    state: crate::http::AppState,
    id: SessionId,
    params: &HashMap<String, String>,
    action: Action,
) -> ApiResult<Json<Suggested>> {
    Ok(Json(state.core.suggest(id, node(params)?, action).await?))
}

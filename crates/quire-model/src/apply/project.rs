//! The ops on the project itself: `UpdateProject` (name, languages,
//! the word list, the comic metadata, the house style) and `UpdateGlossary`, each checked
//! whole before anything changes, with its inverse.

use super::Applied;
use crate::glossary::{self, Term};
use crate::op::Op;

/// `UpdateProject` on `project`: the patch checked whole (languages, the
/// word list), then applied, its inverse what it replaced.
pub(super) fn update_project(
    project: &mut crate::scene::ProjectMeta,
    patch: crate::op::ProjectPatch,
) -> Result<Applied, String> {
    if patch == crate::op::ProjectPatch::default() {
        return Err("the patch changes nothing".into());
    }
    if patch.name.as_ref().is_some_and(|n| n.trim().is_empty()) {
        return Err("the project name must not be empty".into());
    }
    for (what, tag) in [
        ("sourceLanguage", &patch.source_language),
        ("targetLanguage", &patch.target_language),
    ] {
        if let Some(Some(tag)) = tag {
            crate::lang::check_tag(what, tag).map_err(|e| e.to_string())?;
        }
    }
    for word in patch.add_words.iter().chain(&patch.remove_words) {
        if word.trim().is_empty() || word.trim() != word || word.chars().count() > 100 {
            return Err(format!(
                "`{word}` is not a word for the word list (no spaces around it, 1 to 100 characters)"
            ));
        }
    }
    let mut inverse = crate::op::ProjectPatch::default();
    if let Some(word) = patch
        .add_words
        .iter()
        .find(|w| project.words.binary_search(w).is_ok() || patch.remove_words.contains(w))
    {
        return Err(format!("the word list already has `{word}`"));
    }
    if let Some(word) = patch
        .remove_words
        .iter()
        .find(|w| project.words.binary_search(w).is_err())
    {
        return Err(format!("the word list has no `{word}`"));
    }
    for word in &patch.add_words {
        if let Err(at) = project.words.binary_search(word) {
            project.words.insert(at, word.clone());
            inverse.remove_words.push(word.clone());
        }
    }
    for word in &patch.remove_words {
        if let Ok(at) = project.words.binary_search(word) {
            project.words.remove(at);
            inverse.add_words.push(word.clone());
        }
    }
    if let Some(name) = &patch.name {
        inverse.name = Some(std::mem::replace(&mut project.name, name.clone()));
    }
    if let Some(tag) = &patch.source_language {
        inverse.source_language =
            Some(std::mem::replace(&mut project.source_language, tag.clone()));
    }
    if let Some(tag) = &patch.target_language {
        inverse.target_language =
            Some(std::mem::replace(&mut project.target_language, tag.clone()));
    }
    if let Some(style) = &patch.style {
        if *style == crate::op::StylePatch::default() {
            return Err("the style patch changes nothing".into());
        }
        super::check_style_patch(style)?;
        let mut unboxed = project.style.take().map(|s| *s);
        inverse.style = Some(super::patch_style(&mut unboxed, style));
        project.style = unboxed.map(Box::new);
    }
    if let Some(profile) = patch.subtitle_profile {
        inverse.subtitle_profile = Some(std::mem::replace(&mut project.subtitle_profile, profile));
    }
    if let Some(direction) = patch.reading_direction {
        inverse.reading_direction =
            Some(std::mem::replace(&mut project.reading_direction, direction));
    }
    for (patched, field, undo) in [
        (&patch.series, &mut project.series, &mut inverse.series),
        (&patch.number, &mut project.number, &mut inverse.number),
        (
            &patch.translator,
            &mut project.translator,
            &mut inverse.translator,
        ),
    ] {
        if let Some(value) = patched {
            *undo = Some(std::mem::replace(field, value.clone()));
        }
    }
    Ok(Applied {
        op: Op::UpdateProject { patch },
        inverse: Op::UpdateProject { patch: inverse },
        created: Vec::new(),
    })
}

/// Sets and removes glossary terms by source; the inverse puts back what
/// was there.
pub(super) fn update_glossary(
    glossary: &mut Vec<Term>,
    set: Vec<Term>,
    remove: Vec<String>,
) -> Result<Applied, String> {
    if set.is_empty() && remove.is_empty() {
        return Err("it changes nothing (give terms to set or sources to remove)".into());
    }
    let mut sources = std::collections::HashSet::new();
    for source in set.iter().map(|t| &t.source).chain(&remove) {
        if !sources.insert(source.as_str()) {
            return Err(format!("the term `{source}` is named twice"));
        }
    }
    for term in &set {
        if term.source.trim().is_empty() || term.target.trim().is_empty() {
            return Err(format!(
                "the term `{}` needs a source and a target",
                term.source
            ));
        }
    }
    if let Some(missing) = remove
        .iter()
        .find(|s| glossary::position(glossary, s).is_err())
    {
        return Err(format!("the glossary has no term `{missing}`"));
    }
    let (mut restore, mut drop) = (Vec::new(), Vec::new());
    for source in &remove {
        if let Ok(i) = glossary::position(glossary, source) {
            restore.push(glossary.remove(i));
        }
    }
    for term in &set {
        match glossary::position(glossary, &term.source) {
            Ok(i) => restore.push(std::mem::replace(&mut glossary[i], term.clone())),
            Err(i) => {
                drop.push(term.source.clone());
                glossary.insert(i, term.clone());
            }
        }
    }
    Ok(Applied {
        op: Op::UpdateGlossary { set, remove },
        inverse: Op::UpdateGlossary {
            set: restore,
            remove: drop,
        },
        created: Vec::new(),
    })
}

// The side panel for the selected text node: its source, the translation
// being edited (multi-line), its state, who wrote it, and its QA
// warnings. A remote change to the node while the person types never
// replaces the draft: a notice shows both and the person chooses.

import { useEffect, useRef, useState } from '../vendor/hooks.mjs';
import { qaWarnings } from './jobs.js';
import { STATE_LABELS, STATES, stateOf } from './scene.js';
import { goNextNeedingWork } from './session.js';
import { call, inSession } from './api.js';
import { apply, attempt, commitEditor, editDraft, may, resolveConflict, state, takeFocus, toast } from './store.js';
import { html, useAutofocus } from './ui.js';
import { Concordance, CueCounter, GlossaryHits, insertMatch, Matches, NodeHistory, Suggestions } from './desk.js';
import { BlockLettering } from './lettering.js';

/** The words a spelling warning names (`"amigu" (maybe amigo)`). */
function misspelt(message) {
  return [...message.matchAll(/"([^"]+)" \((?:maybe|no suggestion)/g)].map((m) => m[1]);
}

function addWord(word) {
  apply({ type: 'UpdateProject', patch: { addWords: [word] } }, `Adding “${word}” to the project's words`);
}

function origin(kind) {
  const o = kind.origin;
  if (!o) return kind.translation ? 'Written before quire recorded who wrote what' : null;
  const at = o.at ? new Date(o.at).toLocaleString() : '';
  // The server's user it was made as: the person, the agent's person, or
  // who started the engine's job.
  if (o.by === 'engine') {
    const score = o.score !== undefined && o.score !== null ? `, ${Math.round(o.score * 100)} % match` : '';
    return `Machine: ${o.engine || 'an engine'}${score}${o.user ? `, run by ${o.user}` : ''} · ${at}`;
  }
  if (o.by === 'agent') return `By ${o.client || 'an agent'} (agent${o.user ? ` of ${o.user}` : ''}) · ${at}`;
  return `By ${o.user || 'a person'} · ${at}`;
}

/** Who changed the source since the translation, when they did: the translation awaits review. */
function sourceChanged(kind) {
  const e = kind.sourceEdit;
  if (!e || !kind.translation) return null;
  const who = e.by === 'agent' ? `${e.client || 'an agent'} (agent${e.user ? ` of ${e.user}` : ''})` : e.user || 'a person';
  const at = e.at ? new Date(e.at).toLocaleString() : '';
  return `Source changed by ${who} · ${at}: review the translation (set a state or edit it)`;
}

function Conflict({ conflict }) {
  if (conflict.deleted) {
    return html`<div class="conflict" role="alert">
      <p>This box was deleted elsewhere (another browser, the TUI or an agent). Your draft is below; copy it if you need it.</p>
      <button type="button" onClick=${() => resolveConflict(false)}>Close</button>
    </div>`;
  }
  return html`<div class="conflict" role="alert" data-testid="conflict">
    <p>Changed elsewhere while you were typing. Theirs:</p>
    <blockquote>${conflict.theirs || html`<em>(cleared)</em>`}</blockquote>
    <div class="row">
      <button type="button" class="primary" onClick=${() => resolveConflict(true)}>Keep mine</button>
      <button type="button" onClick=${() => resolveConflict(false)}>Use theirs</button>
    </div>
  </div>`;
}

// A source being typed is never dropped without a word: Save or Enter in
// the form keeps it, Cancel or Esc drops it, and anything else that takes
// the field away (another box clicked, another page) saves it.
function SourceField({ text, onSave, onCancel }) {
  const field = useAutofocus();
  const settled = useRef(false);
  // What is typed, kept as it is typed: an effect's cleanup runs after the
  // field has gone.
  const typed = useRef(text);
  useEffect(() => () => {
    if (!settled.current && typed.current !== text) onSave(typed.current);
  }, []);
  const submit = (e) => {
    e.preventDefault();
    settled.current = true;
    onSave(new FormData(e.currentTarget).get('source'));
  };
  const cancel = () => {
    settled.current = true;
    onCancel();
  };
  return html`<form class="source" onSubmit=${submit}>
    <label for="source" class="field-label">Source</label>
    <textarea id="source" name="source" rows="3" ref=${field}
      onInput=${(e) => { typed.current = e.currentTarget.value; }}
      onKeyDown=${(e) => e.key === 'Escape' && cancel()}>${text}</textarea>
    <div class="row"><button type="submit">Save source</button>
      <button type="button" onClick=${cancel}>Cancel</button></div>
  </form>`;
}

// "Read" on one box: ocr of this node only, its text read again unless it
// is translated (a translation's source is kept) or final.
async function readBox(page, node) {
  const spec = { steps: ['ocr'], nodes: [node.id], overwrite: 'all' };
  const started = await attempt('Reading the box', () => call('POST', inSession(state.sessionId, '/pipelines'), spec));
  if (started) toast('Reading the box: ocr');
}

function SourceText({ page, node, image }) {
  const [editing, setEditing] = useState(false);
  const k = node.kind;
  const readable = image && !k.translation && k.state !== 'final';
  if (!editing || !may('edit')) {
    return html`<div class="source">
      <div class="field-head"><h3>Source</h3>
        ${may('edit') && html`<span>${readable && html`<button type="button" class="link" onClick=${() => readBox(page, node)}
          title="Read this box's text from the image (ocr)">Read</button> · `}
        <button type="button" class="link" onClick=${() => setEditing(true)}>Edit source</button></span>`}</div>
      <p lang=${k.sourceLang || undefined} class="source-text">${k.text || html`<em class="muted">no source text</em>`}</p>
    </div>`;
  }
  const save = (text) => {
    setEditing(false);
    if (text !== (k.text || '')) {
      apply({ type: 'UpdateNode', page: page.id, id: node.id, patch: { kind: { type: 'text', text: text || null } } },
        'Saving the source text');
    }
  };
  return html`<${SourceField} text=${k.text || ''} onSave=${save} onCancel=${() => setEditing(false)} />`;
}

export function Editor() {
  const field = useRef(null);
  useEffect(() => {
    if (field.current && takeFocus(state.route.nodeId)) field.current.focus();
  });
  const view = state.view;
  const nodeId = state.route.nodeId;
  const found = view && nodeId ? view.index.nodes.get(nodeId) : null;
  const editor = state.editor && state.editor.nodeId === nodeId ? state.editor : null;
  if (!found || found.node.kind.type !== 'text' || !editor) {
    return html`<section class="editor" aria-label="Editor">
      <h2>Editor</h2>
      <p class="muted">
        Click a box or a block (or Tab to it and press Enter) to edit its translation; <kbd>n</kbd> goes to the next untranslated one, <kbd>b</kbd> draws a new box on an image page.
      </p>
    </section>`;
  }
  const { page, node } = found;
  const k = node.kind;
  const info = view.index.pages.get(page.id);
  const number = info.texts.findIndex((n) => n.id === node.id) + 1;
  const current = stateOf(k);
  const dirty = editor.draft !== editor.base;
  const warnings = qaWarnings().filter((w) => w.nodeId === node.id);
  // A reader sees everything an editor does, but nothing that changes it;
  // a final segment, and the review states, are a reviewer's.
  const reviews = may('review');
  const writable = may('edit') && (current !== 'final' || reviews);
  const setState = (next) => {
    const patch = { kind: { type: 'text', state: next } };
    if (dirty && !editor.conflict) patch.kind.translation = editor.draft === '' ? null : editor.draft;
    apply({ type: 'UpdateNode', page: page.id, id: node.id, patch }, `Marking ${STATE_LABELS[next]}`);
  };
  const keys = (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      commitEditor().then(() => goNextNeedingWork(1));
    } else if (writable && e.altKey && ['1', '2', '3'].includes(e.key)) {
      if (insertMatch(node.id, Number(e.key) - 1)) e.preventDefault();
    } else if (e.key === 'Escape') {
      e.preventDefault();
      // A changed draft is never dropped without asking.
      if (dirty && !window.confirm('Drop your change to this translation?')) return;
      editDraft(editor.base);
      document.querySelector(`[data-node="${node.id}"]`)?.focus();
    }
  };
  return html`<section class="editor" aria-label="Editor">
    <div class="field-head">
      <h2>${info.source ? 'Box' : k.timing ? 'Cue' : 'Block'} ${number} <span class="muted">· page ${info.number}</span></h2>
      <span class=${`badge shade-${current}`} data-testid="state">${STATE_LABELS[current]}</span>
    </div>
    <${SourceText} page=${page} node=${node} image=${Boolean(info.source)} key=${node.id} />
    ${k.entry?.notes?.length > 0 && html`<ul class="entry-notes muted small" aria-label="Notes from the file">
      ${k.entry.notes.map((n) => html`<li>${n}</li>`)}</ul>`}
    ${editor.conflict && html`<${Conflict} conflict=${editor.conflict} />`}
    ${editor.restored && dirty && html`<p class="notice small" role="status" data-testid="draft-back">Your unsaved draft is back: Save keeps it, Revert drops it.</p>`}
    <label for="translation" class="field-label">Translation ${dirty && html`<span class="muted">(not saved)</span>`}</label>
    <textarea id="translation" ref=${field} rows="5" value=${editor.draft} lang=${view.scene.project.targetLanguage || undefined}
      readOnly=${!writable}
      onInput=${(e) => editDraft(e.currentTarget.value)} onKeyDown=${keys} onBlur=${() => commitEditor()}
      aria-describedby="translation-help"></textarea>
    ${k.timing && html`<${CueCounter} text=${editor.draft} timing=${k.timing} />`}
    ${writable ? html`<p id="translation-help" class="muted small">Saved when you leave the field; <kbd>Ctrl</kbd>+<kbd>Enter</kbd> saves and goes to the next untranslated one, <kbd>Esc</kbd> drops the change (after asking).</p>
    <div class="row">
      <button type="button" class="primary" disabled=${!dirty || Boolean(editor.conflict)} onClick=${() => commitEditor()}>Save</button>
      <button type="button" disabled=${!dirty} onClick=${() => editDraft(editor.base)}>Revert</button>
    </div>` : html`<p id="translation-help" class="muted small" data-testid="read-only">${may('edit')
      ? 'Final: a reviewer may change it, or take it back to translated.'
      : may('suggest')
        ? 'Your role may suggest a translation (below) and vote, not change it.'
        : 'Read only: your role may read and follow this project, not change it.'}</p>`}
    <fieldset class="states" disabled=${!writable}>
      <legend>State</legend>
      ${STATES.map((s) => html`<label class=${`state-option shade-${s}`}>
        <input type="radio" name="state" value=${s} checked=${current === s}
          disabled=${s === 'initial' || (!k.translation && !dirty) || (!reviews && (s === 'reviewed' || s === 'final'))}
          onChange=${() => setState(s)} />
        ${STATE_LABELS[s]}</label>`)}
    </fieldset>
    ${info.source && html`<${BlockLettering} page=${page} node=${node} />`}
    ${origin(k) && html`<p class="origin muted small">${origin(k)}</p>`}
    ${sourceChanged(k) && html`<p class="source-changed small" role="status" data-testid="source-changed">${sourceChanged(k)}</p>`}
    ${warnings.length > 0 && html`<div class="node-warnings"><h3>QA</h3><ul>
      ${warnings.map((w) => html`<li class=${`sev-${w.severity}`}><strong>${w.rule}</strong> ${w.message}
        ${writable && w.rule === 'spelling' && misspelt(w.message).map((word) => html` <button type="button" class="link small"
          data-testid="add-word" onClick=${() => addWord(word)}>Add “${word}” to dictionary</button>`)}</li>`)}
    </ul></div>`}
    <${Suggestions} node=${node} key=${`suggestions-${node.id}`} />
    <${Matches} nodeId=${node.id} key=${node.id} />
    <${NodeHistory} nodeId=${node.id} key=${`history-${node.id}`} />
    <${GlossaryHits} source=${k.text} />
    <${Concordance} />
    <p class="geometry muted small">${info.source
      ? `x ${Math.round(node.transform.x)}, y ${Math.round(node.transform.y)}, ${Math.round(node.transform.width)} × ${Math.round(node.transform.height)}`
      : ''}</p>
    ${writable && html`<button type="button" class="danger" onClick=${() => apply({ type: 'RemoveNode', page: page.id, id: node.id }, 'Deleting')}>
      Delete ${info.source ? 'box' : 'block'}</button>`}
  </section>`;
}

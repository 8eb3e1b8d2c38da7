// The workbench for one project: the page strip, the page (a canvas for
// image pages, a list of blocks for text pages), the editor and the jobs,
// with the keys that move between them.

import { useEffect, useRef, useState } from '../vendor/hooks.mjs';
import { Canvas } from './canvas.js';
import { Editor } from './editor.js';
import { ProjectHistory } from './history.js';
import { Jobs, RunDialog, warnedNodes } from './jobs.js';
import { needsReview, nextNode, shadeOf, stateOf } from './scene.js';
import { apply, go, may, reopen, select, setCanvas, setPane, shownPage, state, undoRedo } from './store.js';
import { Strip } from './strip.js';
import { TextPage } from './textpage.js';
import { PROFILES } from './desk.js';
import { HouseStyle } from './lettering.js';
import { download, EXPORTS, ImportConflicts, importFiles } from './transfer.js';
import { FileButton, html, typing, useKeys } from './ui.js';

function goPage(step) {
  const order = state.view.index.order;
  const info = shownPage();
  const at = info ? order.indexOf(info) : -1;
  const next = order[Math.max(0, Math.min(order.length - 1, at + step))];
  if (next && next !== info) go({ pageId: next.page.id, nodeId: null });
}

/** `n`: the next box with no translation, a machine's unreviewed one, or a warning;
 * while only segments awaiting review are shown, the next of those. */
export function goNextNeedingWork(step = 1) {
  const info = shownPage();
  const warned = warnedNodes();
  const wanted = state.show === 'review'
    ? (n) => needsReview(n.kind)
    : (n) => stateOf(n.kind) === 'initial' || shadeOf(n.kind) === 'machine' || warned.has(n.id);
  const found = nextNode(state.view.index, info && info.page.id, state.route.nodeId, wanted, step);
  if (found) select(found.pageId, found.nodeId);
}

/** The project's languages, set where the project is. */
function LanguagesMenu() {
  const project = state.view.scene.project;
  const [from, setFrom] = useState(project.sourceLanguage || '');
  const [to, setTo] = useState(project.targetLanguage || '');
  const [profile, setProfile] = useState(project.subtitleProfile || '');
  const shown = `${project.sourceLanguage || '?'} → ${project.targetLanguage || '?'}`;
  if (!may('edit')) return html`<span class="menu muted" data-testid="languages" title="The project's languages">${shown}</span>`;
  const configured = state.config?.qa?.subtitles?.profile || 'netflix';
  const save = (e) => {
    e.preventDefault();
    e.currentTarget.closest('details').open = false;
    const patch = { sourceLanguage: from.trim() || null, targetLanguage: to.trim() || null };
    if (profile !== (project.subtitleProfile || '')) patch.subtitleProfile = profile || null;
    apply({ type: 'UpdateProject', patch }, 'Setting the languages');
  };
  return html`<details class="menu">
    <summary role="button" aria-label="Languages" data-testid="languages">${shown}</summary>
    <form class="menu-list languages" onSubmit=${save}>
      <label>From <input name="from" value=${from} placeholder="en" onInput=${(e) => setFrom(e.currentTarget.value)} /></label>
      <label>To <input name="to" value=${to} placeholder="pt-BR" onInput=${(e) => setTo(e.currentTarget.value)} /></label>
      <label title="The limits this project's cues are checked against">Subtitles
        <select name="profile" value=${profile} onChange=${(e) => setProfile(e.currentTarget.value)}>
          <option value="">as configured (${configured})</option>
          ${Object.keys(PROFILES).map((p) => html`<option value=${p}>${p}</option>`)}
        </select></label>
      <button type="submit" class="primary">Set</button>
    </form>
  </details>`;
}

function escape(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Find and replace over the project: a count, a preview, one undoable op. */
function FindReplace() {
  const [find, setFind] = useState('');
  const [replace, setReplace] = useState('');
  const [opts, setOpts] = useState({ words: false, regex: false, match: false });
  let pattern = null;
  let error = null;
  if (find) {
    try {
      const body = opts.regex ? find : escape(find);
      // Whole words by Unicode letters and digits (JavaScript's \b knows ASCII only).
      const word = '[\\p{L}\\p{N}_]';
      pattern = new RegExp(opts.words ? `(?<!${word})(?:${body})(?!${word})` : body, `gu${opts.match ? '' : 'i'}`);
    } catch (e) {
      error = e.message;
    }
  }
  const texts = state.view.index.order.flatMap((info) => info.texts.map((n) => ({ info, n })));
  let matches = 0;
  let segments = 0;
  const changes = [];
  if (pattern) {
    for (const { info, n } of texts) {
      const count = [n.kind.text, n.kind.translation].reduce((c, t) => c + (t ? (t.match(pattern) || []).length : 0), 0);
      if (count) { matches += count; segments += 1; }
      const before = n.kind.translation;
      if (before && stateOf(n.kind) !== 'final') {
        const after = before.replace(pattern, opts.regex ? replace : () => replace);
        if (after !== before) changes.push({ info, n, before, after });
      }
    }
  }
  const run = () => {
    const ops = changes.map(({ info, n, before, after }) => ({
      type: 'UpdateNode', page: info.page.id, id: n.id,
      patch: { kind: { type: 'text', translation: after } }, basedOn: { translation: before },
    }));
    apply({ type: 'Batch', label: `replace “${find}” with “${replace}”`, ops }, `Replacing in ${ops.length}`);
  };
  const option = (key, label) => html`<label class="small"><input type="checkbox" checked=${opts[key]}
    onChange=${(e) => setOpts({ ...opts, [key]: e.currentTarget.checked })} /> ${label}</label>`;
  return html`<details class="menu">
    <summary role="button" aria-label="Find and replace">Find & replace</summary>
    <div class="menu-list find-replace">
      <label>Find <input name="find" value=${find} onInput=${(e) => setFind(e.currentTarget.value)} /></label>
      <label>Replace with <input name="replace" value=${replace} onInput=${(e) => setReplace(e.currentTarget.value)} /></label>
      <div class="row">${option('words', 'Whole words')}${option('regex', 'Regular expression')}${option('match', 'Match case')}</div>
      ${error && html`<p class="sev-error small">${error}</p>`}
      ${pattern && html`<p class="small" data-testid="find-count">${matches} ${matches === 1 ? 'match' : 'matches'} in ${segments} ${segments === 1 ? 'segment' : 'segments'}</p>`}
      ${changes.length > 0 && may('edit') && html`<ul class="preview small" data-testid="replace-preview">${changes.slice(0, 20).map((c) =>
        html`<li><del>${c.before}</del> → <ins>${c.after}</ins></li>`)}</ul>
        <button type="button" class="primary" onClick=${run}>Replace in ${changes.length} ${changes.length === 1 ? 'translation' : 'translations'}</button>`}
    </div>
  </details>`;
}

function ExportMenu() {
  const info = shownPage();
  const subtitles = info && info.texts.some((n) => n.kind.timing);
  const pictures = state.view.index.order.some((i) => i.source);
  const formats = EXPORTS.filter((e) => (!e.page || subtitles) && (!e.images || pictures));
  // How SRT, VTT and PO write a segment with no translation; '' is the
  // format's way (the source text in subtitles, empty in PO).
  const [untranslated, setUntranslated] = useState('');
  const partial = new Set(['srt', 'vtt', 'po']);
  return html`<details class="menu">
    <summary role="button" aria-label="Export">Export</summary>
    <ul class="menu-list" role="menu">
      ${formats.map((e) => html`<li role="none"><button type="button" role="menuitem" data-format=${e.format}
        onClick=${(ev) => {
          ev.currentTarget.closest('details').open = false;
          const options = partial.has(e.format) && untranslated ? { ...e.options, untranslated } : e.options;
          download(state.sessionId, e.format, e.page ? [info.page.id] : undefined, options);
        }}>${e.label}</button></li>`)}
      <li role="none" class="small"><label title="How SRT, VTT and PO exports write a segment with no translation">Untranslated
        <select name="untranslated" value=${untranslated} onChange=${(e) => setUntranslated(e.currentTarget.value)}>
          <option value="">as the format does</option>
          <option value="source">source text</option>
          <option value="empty">empty</option>
          <option value="refuse">refuse to export</option>
        </select></label></li>
    </ul>
  </details>`;
}

const KEYS = [
  ['?', 'this help'],
  ['n / N', 'next / previous box that needs work (untranslated, a machine\'s, warned)'],
  ['Shift+click', 'select blocks from the selected one: mark them reviewed or final at once'],
  ['PageDown / PageUp', 'next / previous page'],
  ['e', 'edit the selected box\'s translation'],
  ['Ctrl+Enter', 'save the translation and go to the next untranslated box'],
  ['Esc', 'drop the change being typed, after asking (in the editor)'],
  ['b / v', 'draw boxes / select (Esc leaves drawing)'],
  ['Arrows (Shift: by 10)', 'move the focused box'],
  ['Delete', 'delete the focused box'],
  ['+ / - / 0', 'zoom in / out / fit the page'],
  ['r', 'run engines or a pipeline'],
  ['Ctrl+Z / Ctrl+Shift+Z', 'undo / redo'],
];

/** The keys, on `?`. */
function KeyHelp({ onClose }) {
  const dialog = useRef(null);
  useEffect(() => {
    const el = dialog.current;
    el.showModal();
    el.addEventListener('close', onClose);
    return () => el.removeEventListener('close', onClose);
  }, []);
  return html`<dialog ref=${dialog} class="help-dialog" aria-labelledby="help-title">
    <h2 id="help-title">Keys</h2>
    <table class="keys">
      <tbody>${KEYS.map(([key, what]) => html`<tr key=${key}><th scope="row"><kbd>${key}</kbd></th><td>${what}</td></tr>`)}</tbody>
    </table>
    <form method="dialog" class="row end"><button type="submit" class="primary">Close</button></form>
  </dialog>`;
}

function SessionBar({ onRun, onHelp }) {
  const session = state.sessions.find((s) => s.id === state.sessionId);
  const name = (state.view && state.view.scene.project.name) || (session && session.name) || '…';
  return html`<div class="session-bar" role="toolbar" aria-label="Project">
    <h1 class="project-title" title=${session ? session.path : ''}>${name}</h1>
    ${may('edit') && html`
      <button type="button" onClick=${() => undoRedo('undo')} aria-label="Undo (Ctrl+Z)" title="Undo (Ctrl+Z)">↶ Undo</button>
      <button type="button" onClick=${() => undoRedo('redo')} aria-label="Redo (Ctrl+Shift+Z)" title="Redo (Ctrl+Shift+Z)">↷ Redo</button>
      <button type="button" onClick=${onRun} data-testid="run" title="Run engines (r)">▶ Run…</button>`}
    <button type="button" onClick=${onHelp} aria-label="Keys (?)" title="Keys (?)">?</button>
    <${LanguagesMenu} />
    <${HouseStyle} />
    <${FindReplace} />
    <${ProjectHistory} />
    ${may('edit') && html`<${ExportMenu} />
      <${FileButton} label="Import…" onFiles=${(files) => importFiles(state.sessionId, files)} testId="import" />`}
  </div>`;
}

const PANES = [
  ['pages', 'Pages'],
  ['page', 'Page'],
  ['edit', 'Edit'],
  ['jobs', 'Jobs'],
];

/** The tab bar a phone-sized screen shows instead of the columns. */
function PaneTabs() {
  return html`<nav class="pane-tabs" aria-label="Panels">
    ${PANES.map(([id, label]) => html`<button type="button" aria-pressed=${state.pane === id}
      onClick=${() => setPane(id)}>${label}</button>`)}
  </nav>`;
}

export function Workbench() {
  const [running, setRunning] = useState(false);
  const [helping, setHelping] = useState(false);
  const info = shownPage();
  useKeys((e) => {
    if (!state.view) return;
    const mod = e.ctrlKey || e.metaKey;
    if (mod && !typing(e.target) && may('edit') && (e.key === 'z' || e.key === 'Z' || e.key === 'y')) {
      e.preventDefault();
      undoRedo(e.key === 'y' || e.shiftKey ? 'redo' : 'undo');
      return;
    }
    if (mod || e.altKey || typing(e.target) || running || helping) return;
    const keys = {
      n: () => goNextNeedingWork(1),
      N: () => goNextNeedingWork(-1),
      PageDown: () => goPage(1),
      PageUp: () => goPage(-1),
      b: () => may('edit') && setCanvas({ tool: 'draw' }),
      v: () => setCanvas({ tool: 'select' }),
      r: () => may('edit') && setRunning(true),
      e: () => document.getElementById('translation')?.focus(),
      '?': () => setHelping(true),
    };
    const action = keys[e.key];
    if (action) {
      e.preventDefault();
      action();
    }
  });
  // A phone shows the editor when a node is picked.
  const picked = useRef(state.route.nodeId);
  useEffect(() => {
    if (state.route.nodeId && state.route.nodeId !== picked.current && state.pane === 'page') setPane('edit');
    picked.current = state.route.nodeId;
  });

  if (state.viewError && !state.view) {
    return html`<main class="center"><div class="card">
      <p role="alert">${state.viewError}</p>
      <button type="button" onClick=${reopen}>Open it again</button>
      <a href="#/">Back to the projects</a>
    </div></main>`;
  }
  if (!state.view) return html`<main class="center"><p class="muted" role="status">Opening the project…</p></main>`;
  return html`<main class=${`workbench pane-${state.pane}`} aria-label="Workbench">
    <${SessionBar} onRun=${() => setRunning(true)} onHelp=${() => setHelping(true)} />
    ${state.viewError && html`<p class="banner" role="alert">${state.viewError}
      <button type="button" onClick=${reopen}>Open it again</button></p>`}
    <${Strip} />
    <section class="page-area" aria-label="Page">
      ${!info && html`<div class="empty"><p>No pages yet.</p>
        <p class="muted">Drop images, text or subtitle files here, or use Import.</p></div>`}
      ${info && (info.source ? html`<${Canvas} info=${info} />` : html`<${TextPage} info=${info} />`)}
    </section>
    <aside class="side" aria-label="Details">
      <${Editor} />
      <${Jobs} />
    </aside>
    <${PaneTabs} />
    ${running && html`<${RunDialog} onClose=${() => setRunning(false)} page=${info && info.page} />`}
    ${helping && html`<${KeyHelp} onClose=${() => setHelping(false)} />`}
    <${ImportConflicts} />
  </main>`;
}

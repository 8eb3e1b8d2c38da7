// What a translator reaches for beside the editor: a cue's line lengths
// and reading speed while typing, the memory's best matches for the
// segment (one click inserts one), the glossary terms its source holds,
// and concordance search over the memory.

import { useEffect, useState } from '../vendor/hooks.mjs';
import { call, inSession } from './api.js';
import { stateOf } from './scene.js';
import { editDraft, may, state } from './store.js';
import { html } from './ui.js';

// The subtitle profiles of `[qa.subtitles]` (the server's defaults), and
// the limits a project is checked against: its own profile's or else the
// config's, with any limit set apart in the config.
export const PROFILES = {
  netflix: { line_length: 42, lines: 2, reading_speed: 17, min_duration_ms: 833, max_duration_ms: 7000, min_gap_ms: 83 },
  'netflix-children': { line_length: 42, lines: 2, reading_speed: 13, min_duration_ms: 833, max_duration_ms: 7000, min_gap_ms: 83 },
};

export function limits() {
  const set = state.config?.qa?.subtitles ?? {};
  const own = state.view?.scene.project.subtitleProfile;
  const base = PROFILES[own ?? set.profile] ?? PROFILES.netflix;
  const out = { ...base };
  for (const key of Object.keys(base)) if (typeof set[key] === 'number') out[key] = set[key];
  return out;
}

/** A cue as a viewer reads it: tags (<i>, {\an8}) left out; characters per line and per second. */
export function measure(text, durationMs) {
  const seen = text.replace(/<\/?[A-Za-z][^<>]*>/g, '').replace(/\{[^{}\s]*\}/g, '');
  const lines = seen.replace(/\n+$/, '').split('\n').map((l) => [...l.replace(/\r$/, '')].length);
  const chars = lines.reduce((a, b) => a + b, 0);
  const cps = durationMs > 0 ? (chars * 1000) / durationMs : null;
  return { lines, chars, cps };
}

/** The counts under a cue's translation, red with what goes past the limits. */
export function CueCounter({ text, timing }) {
  const m = measure(text, timing.end - timing.start);
  const l = limits();
  const over = [];
  if (m.lines.some((n) => n > l.line_length)) over.push(`${l.line_length} chars/line`);
  if (m.lines.length > l.lines) over.push(`${l.lines} lines`);
  if (m.cps !== null && m.cps > l.reading_speed) over.push(`${l.reading_speed} cps`);
  const counts = `${m.lines.join('·')} chars${m.cps === null ? '' : ` · ${m.cps.toFixed(1)} cps`}`;
  return html`<p class=${`cue-counter small ${over.length ? 'over' : 'ok'}`} data-testid="cue-counter" aria-live="polite">
    ${counts}${over.length > 0 && ` · over ${over.join(', ')}`}</p>`;
}

/** The matches shown for the edited segment, for Alt+1…3. */
let shown = { nodeId: null, matches: [] };

/** Alt+N in the editor: match N as the draft; whether there was one. */
export function insertMatch(nodeId, n) {
  const match = shown.nodeId === nodeId ? shown.matches[n] : null;
  if (match) editDraft(match.target);
  return Boolean(match);
}

/** The memory's best matches for the segment; a click (or Alt+N) puts one in the draft. */
export function Matches({ nodeId }) {
  const [found, setFound] = useState({ key: null, matches: [] });
  const epoch = state.view?.epoch;
  const key = `${state.sessionId}/${nodeId}/${epoch}`;
  useEffect(() => {
    let live = true;
    const sessionId = state.sessionId;
    if (!sessionId) return undefined;
    call('GET', inSession(sessionId, `/nodes/${nodeId}/matches`))
      .then((r) => live && setFound({ key, matches: r.matches }))
      .catch(() => live && setFound({ key, matches: [] }));
    return () => { live = false; };
  }, [key]);
  shown = { nodeId, matches: found.key === key ? found.matches : [] };
  if (found.matches.length === 0) return null;
  return html`<div class="matches" aria-label="Memory matches">
    <h3>Memory</h3>
    <ol>${found.matches.map((m, i) => html`<li>
      <button type="button" class="match" data-testid="match" title=${`Use this translation (Alt+${i + 1})`}
        disabled=${!may('edit')} onClick=${() => editDraft(m.target)}>
        <span class="score">${Math.round((m.score ?? 0) * 100)} %</span> ${m.target}</button>
      <div class="muted small">${m.origin}${m.changed ? ` · ${m.changed.slice(0, 10)}` : ''}</div>
      ${m.score < 1 && m.diff?.length > 0 && html`<div class="diff small">${m.diff.map((p) =>
        html`<span class=${`diff-${p.change}`}>${p.text} </span>`)}</div>`}
    </li>`)}</ol>
  </div>`;
}

/** The glossary terms the segment's source holds, with their required translations. */
export function GlossaryHits({ source }) {
  const terms = state.view?.scene.project.glossary ?? [];
  if (!source || terms.length === 0) return null;
  const lower = source.toLowerCase();
  const hits = terms.filter((t) => (t.caseSensitive ? source.includes(t.source) : lower.includes(t.source.toLowerCase())));
  if (hits.length === 0) return null;
  return html`<div class="glossary-hits" aria-label="Glossary terms">
    <h3>Glossary</h3>
    <ul>${hits.map((t) => html`<li><strong>${t.source}</strong> → ${t.target}${t.note ? html` <span class="muted small">(${t.note})</span>` : ''}</li>`)}</ul>
  </div>`;
}

/** Concordance: remembered segments holding every word searched for. */
export function Concordance() {
  const [query, setQuery] = useState('');
  const [found, setFound] = useState(null);
  const search = async (e) => {
    e.preventDefault();
    if (!query.trim() || !state.sessionId) return;
    try {
      const r = await call('GET', inSession(state.sessionId, `/concordance?q=${encodeURIComponent(query)}`));
      setFound({ query, matches: r.matches });
    } catch (err) {
      setFound({ query, error: err.message, matches: [] });
    }
  };
  return html`<form class="concordance" role="search" onSubmit=${search}>
    <label for="concordance" class="field-label">Concordance</label>
    <div class="row"><input id="concordance" type="search" value=${query} placeholder="words in the memory"
      onInput=${(e) => setQuery(e.currentTarget.value)} />
      <button type="submit">Search</button></div>
    ${found && html`<div class="concordance-results" data-testid="concordance">
      ${found.error && html`<p class="sev-error">${found.error}</p>`}
      ${!found.error && found.matches.length === 0 && html`<p class="muted small">Nothing remembered holds “${found.query}”.</p>`}
      <ul>${found.matches.map((m) => html`<li><span>${m.source}</span> → <strong>${m.target}</strong>
        <span class="muted small"> · ${m.origin}</span></li>`)}</ul></div>`}
  </form>`;
}

/** What a change says of its author: "ana", "ana's agent Claude Code 2.1", "ocr for ana"
 * ("a person", "the agent …", "ocr" on a server without users). */
export function author(by) {
  if (!by) return 'a person';
  const agent = by.client && (by.user ? `${by.user}'s agent ${by.client}` : `the agent ${by.client}`);
  if (by.by === 'agent') return agent;
  if (by.by === 'engine') return agent || by.user ? `${by.engine} for ${agent || by.user}` : by.engine;
  return by.user ?? 'a person';
}

export function told(value) {
  if (value === null || value === undefined) return '—';
  return typeof value === 'string' ? `“${value}”` : JSON.stringify(value);
}

/** The segment's own history: who changed what, when (newest first). */
export function NodeHistory({ nodeId }) {
  const [found, setFound] = useState({ key: null, entries: [] });
  const projectId = state.route.projectId;
  const key = `${projectId}/${nodeId}/${state.view?.epoch}`;
  useEffect(() => {
    let live = true;
    if (!projectId) return undefined;
    call('GET', `/api/v1/projects/${projectId}/history?node=${nodeId}&limit=10`)
      .then((r) => live && setFound({ key, entries: r.entries }))
      .catch(() => live && setFound({ key, entries: [] }));
    return () => { live = false; };
  }, [key]);
  if (found.entries.length === 0) return null;
  return html`<details class="node-history small" data-testid="node-history">
    <summary>History (${found.entries.length}${found.entries.length === 10 ? '+' : ''})</summary>
    <ol>${found.entries.map((e) => html`<li>
      <span class="muted">${e.at.replace('T', ' ').slice(0, 16)}</span> ${author(e.by)}: ${e.label}
      <ul>${e.changes.filter((c) => c.node === nodeId).map((c) => html`<li>${c.field}: ${told(c.before)} → ${told(c.after)}</li>`)}</ul>
    </li>`)}</ol>
  </details>`;
}

/** Who proposed a suggestion, as people read it. */
function proposer(s) {
  return s.user ?? s.client ?? 'a person';
}

function score(s) {
  return (s.votes ?? []).reduce((sum, v) => sum + v.value, 0);
}

/** The segment's open suggestions, most votes first: a suggester votes,
 * an editor accepts (it becomes the translation) or rejects; anyone from
 * `suggest` up proposes one. The scene carries them, so every client
 * sees a change as it lands. */
export function Suggestions({ node }) {
  const [text, setText] = useState('');
  const [error, setError] = useState(null);
  const open = [...(node.kind.suggestions ?? [])].sort((a, b) => score(b) - score(a) || a.at.localeCompare(b.at));
  if (open.length === 0 && !may('suggest')) return null;
  const me = state.meta?.user ?? null;
  const mine = (s) => (s.votes ?? []).find((v) => (v.voter ?? null) === me)?.value ?? 0;
  const act = (rest, body, what) => call('POST', inSession(state.sessionId, `/nodes/${node.id}/suggestions${rest}`), body)
    .then(() => { setError(null); return true; })
    .catch((e) => { setError(`${what}: ${e.message}`); return false; });
  const add = async (e) => {
    e.preventDefault();
    if (text.trim() && await act('', { text }, 'Suggesting')) setText('');
  };
  // A final segment takes a suggestion only from a reviewer.
  const accepts = may('edit') && (stateOf(node.kind) !== 'final' || may('review'));
  const vote = (s, value) => html`<button type="button" class="small vote" aria-pressed=${mine(s) === value}
    aria-label=${`${value > 0 ? 'For' : 'Against'} “${s.text}”`}
    onClick=${() => act(`/${s.id}/vote`, { value: mine(s) === value ? 0 : value }, 'Voting')}>${value > 0 ? '▲' : '▼'}</button>`;
  return html`<div class="suggestions" aria-label="Suggestions" data-testid="suggestions">
    <h3>Suggestions${open.length > 0 && ` (${open.length})`}</h3>
    ${open.length > 0 && html`<ol>${open.map((s) => html`<li data-testid="suggestion">
      <span class="suggestion-text">${s.text}</span>
      <span class="muted small"> · ${proposer(s)} · ${score(s)} vote${Math.abs(score(s)) === 1 ? '' : 's'}</span>
      <div class="row">
        ${may('suggest') && html`${vote(s, 1)}${vote(s, -1)}`}
        ${accepts && html`<button type="button" class="small" onClick=${() => act(`/${s.id}/accept`, undefined, 'Accepting')}>Accept</button>
          <button type="button" class="small" onClick=${() => act(`/${s.id}/reject`, undefined, 'Rejecting')}>Reject</button>`}
      </div></li>`)}</ol>`}
    ${may('suggest') && html`<form class="row" onSubmit=${add}>
      <input type="text" value=${text} aria-label="New suggestion" placeholder="Suggest another wording"
        onInput=${(e) => setText(e.currentTarget.value)} />
      <button type="submit" disabled=${!text.trim()}>Suggest</button></form>`}
    ${error && html`<p class="sev-error small" role="alert">${error}</p>`}
  </div>`;
}

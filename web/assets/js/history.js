// The project's History: who changed what, when, newest first, with the
// route's filters (person, agent, engine, since, until, the shown page)
// and a page of entries at a time. Each node's own history sits beside
// its editor (desk.js).

import { useState } from '../vendor/hooks.mjs';
import { call } from './api.js';
import { author, told } from './desk.js';
import { go, shownPage, state } from './store.js';
import { html } from './ui.js';

const FILTERS = [
  ['user', 'Person'],
  ['agent', 'Agent'],
  ['engine', 'Engine'],
];

/** Where a change is, as people read it: "page 2, block 3". */
function place(change) {
  const info = change.page && state.view.index.pages.get(change.page);
  if (!info) return change.page ? 'a removed page' : 'the project';
  const number = change.node ? info.texts.findIndex((n) => n.id === change.node) + 1 : 0;
  return number > 0 ? `page ${info.number}, ${info.source ? 'box' : 'block'} ${number}` : `page ${info.number}`;
}

export function ProjectHistory() {
  const [filters, setFilters] = useState({ user: '', agent: '', engine: '', since: '', until: '' });
  const [thisPage, setThisPage] = useState(false);
  const [found, setFound] = useState(null);
  const [error, setError] = useState(null);
  const read = async (cursor) => {
    const query = new URLSearchParams({ limit: '50' });
    for (const [key, value] of Object.entries(filters)) {
      if (!value.trim()) continue;
      // A date from the picker is the start of that day, UTC.
      query.set(key, key === 'since' || key === 'until' ? `${value}T00:00:00Z` : value.trim());
    }
    const shown = shownPage();
    if (thisPage && shown) query.set('page', shown.page.id);
    if (cursor) query.set('cursor', cursor);
    try {
      const page = await call('GET', `/api/v1/projects/${state.route.projectId}/history?${query}`);
      setFound((was) => ({ entries: [...(cursor && was ? was.entries : []), ...page.entries], next: page.next }));
      setError(null);
    } catch (e) {
      setError(e.message);
    }
  };
  const submit = (e) => {
    e.preventDefault();
    read(null);
  };
  const field = (key, label, type = 'text') => html`<label class="small">${label}
    <input type=${type} value=${filters[key]} onInput=${(e) => setFilters({ ...filters, [key]: e.currentTarget.value })} /></label>`;
  return html`<details class="menu" onToggle=${(e) => e.currentTarget.open && !found && read(null)}>
    <summary role="button" aria-label="Project history">History</summary>
    <div class="menu-list project-history" data-testid="project-history">
      <form class="history-filters" onSubmit=${submit}>
        ${FILTERS.map(([key, label]) => field(key, label))}
        ${field('since', 'From', 'date')}${field('until', 'Before', 'date')}
        <label class="small"><input type="checkbox" checked=${thisPage}
          onChange=${(e) => setThisPage(e.currentTarget.checked)} /> This page only</label>
        <button type="submit">Show</button>
      </form>
      ${error && html`<p class="sev-error small" role="alert">${error}</p>`}
      ${found && found.entries.length === 0 && html`<p class="muted small">No change matches.</p>`}
      ${found && html`<ol class="history-entries small">${found.entries.map((e) => html`<li data-testid="history-entry">
        <span class="muted">${e.at.replace('T', ' ').slice(0, 16)}</span> ${author(e.by)}: ${e.label}
        <ul>${e.changes.slice(0, 8).map((c) => html`<li>${c.node
          ? html`<button type="button" class="link" onClick=${() => go({ pageId: c.page, nodeId: c.node })}>${place(c)}</button>`
          : place(c)} · ${c.field}: ${told(c.before)} → ${told(c.after)}</li>`)}
          ${e.changes.length > 8 && html`<li class="muted">and ${e.changes.length - 8} more</li>`}</ul>
      </li>`)}</ol>`}
      ${found && found.next && html`<button type="button" onClick=${() => read(found.next)}>More</button>`}
    </div>
  </details>`;
}

// The shown page's own controls: its name (rename in place), moving it
// up or down, deleting it, and the state colour legend. Each change is
// one op.

import { useState } from '../vendor/hooks.mjs';
import { needsReview, STATE_LABELS } from './scene.js';
import { apply, go, may, setShow, state } from './store.js';
import { html, useAutofocus } from './ui.js';

const LEGEND = [
  ['initial', STATE_LABELS.initial],
  ['machine', 'machine'],
  ['translated', 'by a person'],
  ['reviewed', STATE_LABELS.reviewed],
  ['final', STATE_LABELS.final],
];

export function Legend() {
  const waiting = state.view.index.order.reduce((sum, info) => sum + info.texts.filter((n) => needsReview(n.kind)).length, 0);
  return html`<div class="legend-bar"><ul class="legend" aria-label="Box colours">
    ${LEGEND.map(([shade, label]) => html`<li><span class=${`swatch shade-${shade}`} aria-hidden="true"></span>${label}</li>`)}
  </ul>
  <label class="small show-filter">Show <select data-testid="show" value=${state.show} onChange=${(e) => setShow(e.currentTarget.value)}>
    <option value="all">all segments</option>
    <option value="review">needs review (${waiting})</option>
  </select></label></div>`;
}

function move(info, step) {
  const order = state.view.index.order.map((i) => i.page.id);
  const at = order.indexOf(info.page.id);
  const to = at + step;
  if (to < 0 || to >= order.length) return;
  [order[at], order[to]] = [order[to], order[at]];
  apply({ type: 'ReorderPages', order }, 'Moving the page');
}

async function remove(info) {
  // eslint-disable-next-line no-alert
  if (!window.confirm(`Delete page ${info.number}, “${info.page.name}”? (Undo brings it back.)`)) return;
  const order = state.view.index.order;
  const neighbour = order[info.number] || order[info.number - 2];
  const done = await apply({ type: 'RemovePage', id: info.page.id }, 'Deleting the page');
  if (done) go({ pageId: neighbour ? neighbour.page.id : null, nodeId: null });
}

// Uncontrolled (defaultValue): a scene update arriving while the name
// is typed re-renders this form, and must not put the old name back.
function NameField({ name, onDone }) {
  const field = useAutofocus();
  const submit = (e) => {
    e.preventDefault();
    onDone(new FormData(e.currentTarget).get('name').trim());
  };
  return html`<form class="rename" onSubmit=${submit}>
    <input name="name" aria-label="Page name" defaultValue=${name} maxlength="200" ref=${field}
      onKeyDown=${(e) => e.key === 'Escape' && onDone(null)} onBlur=${(e) => e.currentTarget.form.requestSubmit()} />
  </form>`;
}

function PageName({ info }) {
  const [editing, setEditing] = useState(false);
  if (!may('edit')) {
    return html`<span class="page-title"><span class="muted">${info.number}/${state.view.index.order.length}</span> ${info.page.name}</span>`;
  }
  if (!editing) {
    return html`<button type="button" class="page-title" title="Rename the page"
      aria-label=${`Page ${info.number}: ${info.page.name}. Rename`} onClick=${() => setEditing(true)}>
      <span class="muted">${info.number}/${state.view.index.order.length}</span> ${info.page.name}
    </button>`;
  }
  const done = (name) => {
    setEditing(false);
    if (name && name !== info.page.name) {
      apply({ type: 'UpdatePage', id: info.page.id, patch: { name } }, 'Renaming the page');
    }
  };
  return html`<${NameField} name=${info.page.name} onDone=${done} />`;
}

export function PageTools({ info, children }) {
  if (!state.view) return null;
  const count = state.view.index.order.length;
  return html`<div class="page-tools" role="toolbar" aria-label="Page tools">
    <${PageName} info=${info} key=${info.page.id} />
    ${may('edit') && html`<button type="button" onClick=${() => move(info, -1)} disabled=${info.number === 1}
      aria-label="Move the page up" title="Move the page up">↑</button>
    <button type="button" onClick=${() => move(info, 1)} disabled=${info.number === count}
      aria-label="Move the page down" title="Move the page down">↓</button>
    <button type="button" onClick=${() => remove(info)} title="Delete the page">Delete page</button>`}
    <span class="tools-gap"></span>
    ${children}
  </div>`;
}

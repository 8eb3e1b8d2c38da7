// A text page (a document, subtitles): its text nodes as a list of
// blocks, source beside translation, coloured by state. Only the rows in
// view are built, so a page of thousands of blocks scrolls lightly.

import { warnedNodes } from './jobs.js';
import { Legend, PageTools } from './pagetools.js';
import { clock, needsReview, preview, shadeOf, STATE_LABELS, stateOf } from './scene.js';
import { apply, clearRange, edit, may, select, selectRange, state } from './store.js';
import { html, useWindow } from './ui.js';

const ROW = 72;
const EXTRA = 6;

function Block({ node, number, top, selected, ranged, warned, info }) {
  const k = node.kind;
  const pageId = info.page.id;
  const classes = ['block', `shade-${shadeOf(k)}`, selected && 'selected', ranged && 'ranged', warned && 'warned']
    .filter(Boolean).join(' ');
  return html`<li class="block-row" style=${{ top: `${top}px` }}>
    <button type="button" class=${classes} data-node=${node.id} data-state=${stateOf(k)} aria-pressed=${selected}
      aria-label=${`${k.timing ? 'Cue' : 'Block'} ${number}: ${preview(k.text, 50)} → ${preview(k.translation, 50) || 'untranslated'} (${STATE_LABELS[stateOf(k)]})`}
      onClick=${(e) => {
        if (e.shiftKey) return selectRange(info, node.id);
        if (state.range) clearRange();
        return e.detail === 0 ? edit(pageId, node.id) : select(pageId, node.id);
      }}>
      <span class="block-number">${number}${k.timing ? html`<br /><small>${clock(k.timing.start)}</small>` : ''}</span>
      <span class="block-source" lang=${k.sourceLang || undefined}>${k.text || ''}</span>
      <span class="block-translation">${k.translation || html`<em class="muted">untranslated</em>`}</span>
    </button>
  </li>`;
}

/** What a shift-click selection can do at once: mark its translated blocks. */
function RangeBar({ info, ids }) {
  const mark = (to) => {
    const nodes = ids.map((id) => info.texts.find((n) => n.id === id))
      .filter((n) => n && n.kind.translation && stateOf(n.kind) !== to);
    if (nodes.length === 0) return;
    const ops = nodes.map((n) => ({ type: 'UpdateNode', page: info.page.id, id: n.id, patch: { kind: { type: 'text', state: to } } }));
    const label = `marked ${ops.length} ${ops.length === 1 ? 'block' : 'blocks'} ${to}`;
    apply({ type: 'Batch', label, ops }, `Marking ${ops.length} ${to}`).then(clearRange);
  };
  return html`<div class="range-bar row" role="toolbar" aria-label="Selection" data-testid="range">
    <span>${ids.length} selected</span>
    ${may('review') && html`<button type="button" onClick=${() => mark('reviewed')}>Mark reviewed</button>
    <button type="button" onClick=${() => mark('final')}>Mark final</button>`}
    <button type="button" class="link" onClick=${clearRange}>Clear</button>
  </div>`;
}

export function TextPage({ info }) {
  const warned = warnedNodes();
  // Each block keeps its number when the page shows only some.
  const numbered = info.texts.map((node, i) => ({ node, number: i + 1 }));
  const shown = state.show === 'review' ? numbered.filter(({ node }) => needsReview(node.kind)) : numbered;
  const nodes = shown.map(({ node }) => node);
  const selectedId = state.route.nodeId;
  const rows = useWindow(nodes.length, ROW, nodes.findIndex((n) => n.id === selectedId), EXTRA);
  const range = state.range && state.range.pageId === info.page.id ? state.range.nodeIds : [];
  const ranged = new Set(range);
  const built = [];
  for (let i = rows.first; i < rows.last; i += 1) {
    const node = nodes[i];
    built.push(html`<${Block} key=${node.id} node=${node} number=${shown[i].number} top=${i * ROW} info=${info}
      selected=${node.id === selectedId} ranged=${ranged.has(node.id)} warned=${warned.has(node.id)} />`);
  }
  return html`<div class="text-page">
    <${PageTools} info=${info} />
    ${range.length > 1 && html`<${RangeBar} info=${info} ids=${range} />`}
    <div class="blocks" ref=${rows.ref} onScroll=${rows.onScroll}
      aria-label=${`Text blocks (${nodes.length})`} role="region">
      ${nodes.length === 0 && html`<p class="muted empty">${state.show === 'review' ? 'Nothing on this page awaits review.' : 'This page has no text.'}</p>`}
      <ol class="block-list" style=${{ height: `${nodes.length * ROW}px` }}>${built}</ol>
    </div>
    <${Legend} />
  </div>`;
}

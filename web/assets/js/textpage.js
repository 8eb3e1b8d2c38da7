// A text page (a document, subtitles): its text nodes as a list of
// blocks, source beside translation, coloured by state. Only the rows in
// view are built, so a page of thousands of blocks scrolls lightly.

import { warnedNodes } from './jobs.js';
import { Legend, PageTools } from './pagetools.js';
import { clock, preview, shadeOf, STATE_LABELS, stateOf } from './scene.js';
import { edit, select, state } from './store.js';
import { html, useWindow } from './ui.js';

const ROW = 72;
const EXTRA = 6;

function Block({ node, number, top, selected, warned, pageId }) {
  const k = node.kind;
  const classes = ['block', `shade-${shadeOf(k)}`, selected && 'selected', warned && 'warned'].filter(Boolean).join(' ');
  return html`<li class="block-row" style=${{ top: `${top}px` }}>
    <button type="button" class=${classes} data-node=${node.id} data-state=${stateOf(k)} aria-pressed=${selected}
      aria-label=${`Block ${number}: ${preview(k.text, 50)} → ${preview(k.translation, 50) || 'untranslated'} (${STATE_LABELS[stateOf(k)]})`}
      onClick=${(e) => (e.detail === 0 ? edit(pageId, node.id) : select(pageId, node.id))}>
      <span class="block-number">${number}${k.timing ? html`<br /><small>${clock(k.timing.start)}</small>` : ''}</span>
      <span class="block-source" lang=${k.sourceLang || undefined}>${k.text || ''}</span>
      <span class="block-translation">${k.translation || html`<em class="muted">untranslated</em>`}</span>
    </button>
  </li>`;
}

export function TextPage({ info }) {
  const warned = warnedNodes();
  const nodes = info.texts;
  const selectedId = state.route.nodeId;
  const rows = useWindow(nodes.length, ROW, nodes.findIndex((n) => n.id === selectedId), EXTRA);
  const built = [];
  for (let i = rows.first; i < rows.last; i += 1) {
    const node = nodes[i];
    built.push(html`<${Block} key=${node.id} node=${node} number=${i + 1} top=${i * ROW} pageId=${info.page.id}
      selected=${node.id === selectedId} warned=${warned.has(node.id)} />`);
  }
  return html`<div class="text-page">
    <${PageTools} info=${info} />
    <div class="blocks" ref=${rows.ref} onScroll=${rows.onScroll}
      aria-label=${`Text blocks (${nodes.length})`} role="region">
      ${nodes.length === 0 && html`<p class="muted empty">This page has no text.</p>`}
      <ol class="block-list" style=${{ height: `${nodes.length * ROW}px` }}>${built}</ol>
    </div>
    <${Legend} />
  </div>`;
}

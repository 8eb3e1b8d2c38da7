// The page strip: a thumbnail per page with how many of its text nodes
// are untranslated, machine-translated, translated by a person, reviewed
// and final. Only the rows in
// view (and a few around them) are built, so a thousand pages scroll as
// lightly as ten.

import { useBlobUrl } from './images.js';
import { SHADES, SHADE_LABELS } from './scene.js';
import { go, shownPage, state } from './store.js';
import { html, useWindow } from './ui.js';

const ROW = 96;
const EXTRA = 4;

function StateBar({ counts }) {
  const total = SHADES.reduce((sum, s) => sum + counts[s], 0);
  if (!total) return html`<div class="statebar empty" aria-hidden="true"></div>`;
  return html`<div class="statebar" aria-hidden="true">
    ${SHADES.filter((s) => counts[s]).map((s) => html`<span class=${`seg shade-${s}`}
      style=${{ flexGrow: counts[s] }}></span>`)}
  </div>`;
}

function Thumb({ info }) {
  const url = useBlobUrl(state.sessionId, info.source, 256);
  if (!info.source) return html`<div class="thumb text-thumb" aria-hidden="true">¶</div>`;
  return html`<img class="thumb" src=${url || undefined} alt="" loading="lazy" decoding="async"
    width="64" height="80" />`;
}

function summary(info) {
  const c = info.counts;
  const parts = SHADES.filter((s) => c[s]).map((s) => `${c[s]} ${SHADE_LABELS[s]}`);
  return `Page ${info.number}: ${info.page.name}${parts.length ? `, ${parts.join(', ')}` : ', no text'}`;
}

function Row({ info, top, current }) {
  return html`<li class="strip-row" style=${{ top: `${top}px` }}>
    <button type="button" class=${current ? 'page-button current' : 'page-button'} aria-current=${current ? 'page' : undefined}
      aria-label=${summary(info)} data-page=${info.page.id}
      onClick=${() => go({ pageId: info.page.id, nodeId: null })}>
      <${Thumb} info=${info} />
      <span class="page-meta">
        <span class="page-number">${info.number}</span>
        <span class="page-name">${info.page.name}</span>
        <${StateBar} counts=${info.counts} />
      </span>
    </button>
  </li>`;
}

export function Strip() {
  const order = state.view.index.order;
  const current = shownPage();
  const rows = useWindow(order.length, ROW, current ? current.number - 1 : -1, EXTRA);
  const built = [];
  for (let i = rows.first; i < rows.last; i += 1) {
    const info = order[i];
    built.push(html`<${Row} key=${info.page.id} info=${info} top=${i * ROW} current=${info === current} />`);
  }
  return html`<nav class="strip" aria-label=${`Pages (${order.length})`} ref=${rows.ref} onScroll=${rows.onScroll}>
    <ol class="strip-list" style=${{ height: `${order.length * ROW}px` }}>${built}</ol>
  </nav>`;
}

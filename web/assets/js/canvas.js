// An image page: the picture with every text node's box on it, coloured
// by state. Boxes are buttons (Tab moves between them, Enter edits, the
// arrow keys move a box, Delete removes it); a box is moved or resized by
// dragging, a new one drawn with the draw tool. Each gesture is one op
// when it ends; zoom with the buttons, Ctrl+wheel or + and -, pan by
// dragging the background.

import { useEffect, useLayoutEffect, useRef, useState } from '../vendor/hooks.mjs';
import { call, inSession } from './api.js';
import { useBlobUrl } from './images.js';
import { Legend, PageTools } from './pagetools.js';
import { needsReview, preview, shadeOf, STATE_LABELS, stateOf } from './scene.js';
import { apply, edit, may, select, setCanvas, state } from './store.js';
import { html, typing, useKeys } from './ui.js';
import { FindText, warnedNodes } from './jobs.js';

const MIN_BOX = 4;
const ZOOMS = [0.1, 0.25, 0.33, 0.5, 0.67, 0.75, 1, 1.25, 1.5, 2, 3, 4];

function clampBox(t, w, h) {
  const width = Math.max(MIN_BOX, Math.min(t.width, w));
  const height = Math.max(MIN_BOX, Math.min(t.height, h));
  return {
    ...t,
    x: Math.round(Math.max(0, Math.min(t.x, w - width))),
    y: Math.round(Math.max(0, Math.min(t.y, h - height))),
    width: Math.round(width),
    height: Math.round(height),
  };
}

/** The box a drag of `mode` ('move' or a corner 'nw' 'ne' 'sw' 'se') by (dx, dy) makes of `t`. */
function dragged(t, mode, dx, dy) {
  if (mode === 'move') return { ...t, x: t.x + dx, y: t.y + dy };
  let { x, y, width, height } = t;
  if (mode.includes('w')) {
    x += dx;
    width -= dx;
  }
  if (mode.includes('e')) width += dx;
  if (mode.includes('n')) {
    y += dy;
    height -= dy;
  }
  if (mode.includes('s')) height += dy;
  if (width < MIN_BOX) {
    if (mode.includes('w')) x -= MIN_BOX - width;
    width = MIN_BOX;
  }
  if (height < MIN_BOX) {
    if (mode.includes('n')) y -= MIN_BOX - height;
    height = MIN_BOX;
  }
  return { ...t, x, y, width, height };
}

function label(node, number) {
  const k = node.kind;
  const source = preview(k.text, 40) || 'no source text';
  const translation = preview(k.translation, 40) || 'untranslated';
  return `Box ${number}: ${source} → ${translation} (${STATE_LABELS[stateOf(k)]})`;
}

function Box({ node, number, z, selected, warned, onGesture, onSelect, onEdit }) {
  const t = node.transform;
  const shade = shadeOf(node.kind);
  const dimmed = state.show === 'review' && !needsReview(node.kind);
  const classes = ['box', `shade-${shade}`, selected && 'selected', warned && 'warned', dimmed && 'dimmed'].filter(Boolean).join(' ');
  return html`<button type="button" class=${classes} data-node=${node.id} data-state=${stateOf(node.kind)}
    aria-label=${label(node, number)} aria-pressed=${selected}
    title=${node.kind.translation || node.kind.text || ''}
    style=${{ left: `${t.x * z}px`, top: `${t.y * z}px`, width: `${t.width * z}px`, height: `${t.height * z}px` }}
    onPointerDown=${(e) => onGesture(e, node, 'move')}
    onFocus=${() => !selected && onSelect(node)}
    onClick=${(e) => e.detail === 0 && onEdit(node)}>
    <span class="box-number" aria-hidden="true">${number}</span>
    ${selected && ['nw', 'ne', 'sw', 'se'].map((corner) => html`<span class=${`handle handle-${corner}`}
      aria-hidden="true" onPointerDown=${(e) => onGesture(e, node, corner)}></span>`)}
  </button>`;
}

/** The page's cleaned and rendered images and whether each is current,
 * asked again whenever the page changes. */
function usePageViews(info) {
  const [views, setViews] = useState({});
  useEffect(() => {
    if (!info.cleaned && !info.rendered) {
      setViews({});
      return undefined;
    }
    let live = true;
    call('GET', inSession(state.sessionId, `/pages/${info.page.id}/views`))
      .then((v) => live && setViews(v), () => live && setViews({}));
    return () => {
      live = false;
    };
  }, [info.page, info.cleaned, info.rendered]);
  return views;
}

/** A view's button, marked when its image is out of date. */
function ViewButton({ name, shown, made, title }) {
  const stale = made && made.current === false;
  return html`<button type="button" aria-pressed=${shown === name} onClick=${() => setCanvas({ view: name })}
    title=${stale ? `${title}: out of date, the page changed since (run it again)` : title}>
    ${name[0].toUpperCase() + name.slice(1)}${stale && html`<span class="stale-mark"> (out of date)</span>`}
  </button>`;
}

export function Canvas({ info }) {
  const page = info.page;
  const viewport = useRef(null);
  const surface = useRef(null);
  const gesture = useRef(null);
  const [ghost, setGhost] = useState(null);
  const [natural, setNatural] = useState(null);
  const [fit, setFit] = useState(1);
  const { tool, zoom, view, mask, regions } = state.canvas;
  // The image shown: the one asked for when the page has it, else the source.
  const shown = (view === 'rendered' && info.rendered) ? 'rendered' : (view === 'cleaned' && info.cleaned) ? 'cleaned' : 'source';
  const url = useBlobUrl(state.sessionId, info[shown]);
  const maskUrl = useBlobUrl(state.sessionId, mask ? info.textMask : null);
  const views = usePageViews(info);
  const shownStale = shown !== 'source' && views[shown] && views[shown].current === false;
  const width = page.width || (natural && natural.w) || 1000;
  const height = page.height || (natural && natural.h) || 1400;
  const z = zoom === 'fit' ? fit : zoom;
  const warned = warnedNodes();
  const selectedId = state.route.nodeId;

  useLayoutEffect(() => {
    const el = viewport.current;
    const measure = () => {
      const w = el.clientWidth - 32;
      const h = el.clientHeight - 32;
      if (w > 0 && h > 0) setFit(Math.max(0.05, Math.min(w / width, h / height)));
    };
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(el);
    return () => observer.disconnect();
  }, [width, height]);

  // Ctrl+wheel zooms (a non-passive listener, so the page itself does not zoom).
  useEffect(() => {
    const el = viewport.current;
    const wheel = (e) => {
      if (!e.ctrlKey) return;
      e.preventDefault();
      zoomBy(e.deltaY < 0 ? 1 : -1);
    };
    el.addEventListener('wheel', wheel, { passive: false });
    return () => el.removeEventListener('wheel', wheel);
  });

  function zoomBy(step) {
    const at = ZOOMS.findIndex((v) => v >= z - 1e-9);
    const from = at < 0 ? ZOOMS.length - 1 : at;
    const next = ZOOMS[Math.max(0, Math.min(ZOOMS.length - 1, from + step))];
    setCanvas({ zoom: next });
  }

  function pagePoint(e) {
    const r = surface.current.getBoundingClientRect();
    return { x: (e.clientX - r.left) / z, y: (e.clientY - r.top) / z };
  }

  function onGesture(e, node, mode) {
    if (e.button !== 0 || tool === 'draw') return;
    e.stopPropagation();
    if (node.id !== selectedId) select(page.id, node.id);
    // A reader selects boxes; moving one is an editor's.
    if (!may('edit')) return;
    gesture.current = { kind: 'box', node, mode, start: pagePoint(e), moved: false };
    surface.current.setPointerCapture(e.pointerId);
  }

  function onSelect(node) {
    select(page.id, node.id);
  }

  // Enter on a focused box (a click without a pointer) edits its translation.
  function onEdit(node) {
    edit(page.id, node.id);
  }

  function onPointerDown(e) {
    if (e.button !== 0) return;
    if (tool === 'draw' && may('edit')) {
      const p = pagePoint(e);
      gesture.current = { kind: 'draw', start: p };
      setGhost({ x: p.x, y: p.y, width: 0, height: 0 });
    } else {
      const el = viewport.current;
      gesture.current = { kind: 'pan', x: e.clientX, y: e.clientY, left: el.scrollLeft, top: el.scrollTop };
    }
    surface.current.setPointerCapture(e.pointerId);
  }

  function onPointerMove(e) {
    const g = gesture.current;
    if (!g) return;
    if (g.kind === 'pan') {
      viewport.current.scrollLeft = g.left - (e.clientX - g.x);
      viewport.current.scrollTop = g.top - (e.clientY - g.y);
      return;
    }
    const p = pagePoint(e);
    if (g.kind === 'draw') {
      setGhost({
        x: Math.min(g.start.x, p.x),
        y: Math.min(g.start.y, p.y),
        width: Math.abs(p.x - g.start.x),
        height: Math.abs(p.y - g.start.y),
      });
      return;
    }
    const dx = p.x - g.start.x;
    const dy = p.y - g.start.y;
    if (!g.moved && Math.abs(dx) * z < 3 && Math.abs(dy) * z < 3) return;
    g.moved = true;
    setGhost({ node: g.node.id, ...clampBox(dragged(g.node.transform, g.mode, dx, dy), width, height) });
  }

  // A moved or resized box stays where it was dropped until the scene
  // shows the change (or the change is refused), rather than jumping back
  // to where it was for the moment between the answer and the update.
  useEffect(() => {
    if (!ghost || !ghost.from) return;
    const now = info.texts.find((n) => n.id === ghost.node);
    if (!now || ['x', 'y', 'width', 'height'].some((k) => now.transform[k] !== ghost.from[k])) setGhost(null);
  });

  async function onPointerUp() {
    const g = gesture.current;
    gesture.current = null;
    const box = ghost;
    if (!g || !box) {
      setGhost(null);
      return;
    }
    if (g.kind !== 'box' || !g.moved) setGhost(null);
    if (g.kind === 'draw') {
      if (box.width < MIN_BOX || box.height < MIN_BOX) return;
      const transform = clampBox(box, width, height);
      const node = { transform, visible: true, kind: { type: 'text' } };
      // The draw tool stays on (Esc or v goes back to Select): a page's
      // balloons are drawn one after another.
      const result = await apply({ type: 'AddNode', page: page.id, node }, 'Adding the box');
      if (result && result.created.length) edit(page.id, result.created[0]);
    } else if (g.kind === 'box' && g.moved) {
      const { node: _id, ...t } = box;
      const { x, y, width: w, height: h } = t;
      const transform = { ...g.node.transform, x, y, width: w, height: h };
      setGhost({ ...box, from: g.node.transform });
      const result = await apply({ type: 'UpdateNode', page: page.id, id: g.node.id, patch: { transform } },
        g.mode === 'move' ? 'Moving the box' : 'Resizing the box');
      if (!result) setGhost(null);
    }
  }

  // Keys for the focused box: arrows move it (Shift: by 10), Delete removes it.
  useKeys((e) => {
    const el = e.target;
    if (typing(el) || !el.dataset || !el.dataset.node || e.ctrlKey || e.metaKey || e.altKey) {
      if (!typing(el) && !e.ctrlKey && !e.metaKey) {
        if (e.key === '+' || e.key === '=') zoomBy(1);
        else if (e.key === '-') zoomBy(-1);
        else if (e.key === '0') setCanvas({ zoom: 'fit' });
        else if (e.key === 'Escape' && tool === 'draw') setCanvas({ tool: 'select' });
      }
      return;
    }
    const found = state.view.index.nodes.get(el.dataset.node);
    if (!found || !may('edit')) return;
    const step = e.shiftKey ? 10 : 1;
    const moves = { ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, -step], ArrowDown: [0, step] };
    if (moves[e.key]) {
      e.preventDefault();
      const [dx, dy] = moves[e.key];
      const transform = clampBox({ ...found.node.transform, x: found.node.transform.x + dx, y: found.node.transform.y + dy }, width, height);
      apply({ type: 'UpdateNode', page: page.id, id: found.node.id, patch: { transform } }, 'Moving the box');
    } else if (e.key === 'Delete' || e.key === 'Backspace') {
      e.preventDefault();
      apply({ type: 'RemoveNode', page: page.id, id: found.node.id }, 'Deleting the box');
    } else if (e.key === '+' || e.key === '=') zoomBy(1);
    else if (e.key === '-') zoomBy(-1);
  });

  // A state change of this canvas's own (an image loaded, a drop answered)
  // can land after the project was left: there is no page to draw then.
  if (!state.view) return null;
  const boxes = info.texts.filter((n) => n.visible !== false).map((node, i) => {
    const moving = ghost && ghost.node === node.id;
    const shown = moving ? { ...node, transform: { ...node.transform, x: ghost.x, y: ghost.y, width: ghost.width, height: ghost.height } } : node;
    return html`<${Box} key=${node.id} node=${shown} number=${i + 1} z=${z} selected=${node.id === selectedId}
      warned=${warned.has(node.id)} onGesture=${onGesture} onSelect=${onSelect} onEdit=${onEdit} />`;
  });
  const drawing = ghost && ghost.node === undefined && tool === 'draw';
  const outlined = info.texts.filter((n) => n.visible !== false && n.kind.region);
  const hasRegions = outlined.length > 0;

  return html`<div class="canvas">
    <${PageTools} info=${info}>
      ${info.source && may('edit') && html`<${FindText} page=${page} />`}
      ${may('edit') && html`<div class="segmented" role="group" aria-label="Tool">
        <button type="button" aria-pressed=${tool === 'select'} onClick=${() => setCanvas({ tool: 'select' })}
          title="Select and move boxes (v)">Select</button>
        <button type="button" aria-pressed=${tool === 'draw'} onClick=${() => setCanvas({ tool: 'draw' })}
          title="Draw a new box (b)" data-testid="draw">Draw box</button>
      </div>`}
      <div class="segmented" role="group" aria-label="Zoom">
        <button type="button" onClick=${() => zoomBy(-1)} aria-label="Zoom out" title="Zoom out (-)">−</button>
        <span class="zoom" aria-live="polite">${Math.round(z * 100)} %</span>
        <button type="button" onClick=${() => zoomBy(1)} aria-label="Zoom in" title="Zoom in (+)">+</button>
        <button type="button" onClick=${() => setCanvas({ zoom: 'fit' })} aria-pressed=${zoom === 'fit'} title="Fit the page (0)">Fit</button>
      </div>
      ${(info.rendered || info.cleaned) && html`<div class="segmented" role="group" aria-label="Image">
        <button type="button" aria-pressed=${shown === 'source'} onClick=${() => setCanvas({ view: 'source' })}>Source</button>
        ${info.cleaned && html`<${ViewButton} name="cleaned" shown=${shown} made=${views.cleaned}
          title="The page with its text cleared (clean)" />`}
        ${info.rendered && html`<${ViewButton} name="rendered" shown=${shown} made=${views.rendered}
          title="The page as rendered (render)" />`}
      </div>`}
      ${(info.textMask || hasRegions) && html`<div class="segmented" role="group" aria-label="Overlays">
        ${hasRegions && html`<button type="button" aria-pressed=${regions} onClick=${() => setCanvas({ regions: !regions })}
          title="Outline each balloon region found by detect">Regions</button>`}
        ${info.textMask && html`<button type="button" aria-pressed=${mask} onClick=${() => setCanvas({ mask: !mask })}
          title="Show the text mask (the pixels clean clears)">Mask</button>`}
      </div>`}
    <//>
    ${shownStale && html`<p class="hint view-note" role="status">
      This ${shown} image is out of date: the page changed since. Run <strong>${shown === 'rendered' ? 'render' : 'clean'}</strong> again to remake it.
    </p>`}
    ${info.texts.length === 0 && html`<p class="hint" role="note">
      No text boxes on this page yet: <strong>Find text</strong> finds the balloons and reads them, or click <strong>Draw box</strong> (or press <kbd>b</kbd>) and drag over a balloon or caption, then type its translation.
    </p>`}
    <div class=${`viewport tool-${tool}`} ref=${viewport}>
      <div class="surface" ref=${surface} style=${{ width: `${width * z}px`, height: `${height * z}px` }}
        onPointerDown=${onPointerDown} onPointerMove=${onPointerMove} onPointerUp=${onPointerUp}
        onPointerCancel=${() => { gesture.current = null; setGhost(null); }}>
        <img class="page-image" src=${url || undefined} alt=${`Page ${info.number}: ${page.name}${shown === 'source' ? '' : ` (${shown})`}`} draggable="false"
          width=${Math.round(width * z)} height=${Math.round(height * z)}
          onLoad=${(e) => !page.width && setNatural({ w: e.currentTarget.naturalWidth, h: e.currentTarget.naturalHeight })} />
        ${maskUrl && html`<div class="mask-overlay" aria-hidden="true"
          style=${{ maskImage: `url("${maskUrl}")`, WebkitMaskImage: `url("${maskUrl}")` }}></div>`}
        ${regions && hasRegions && html`<svg class="regions" aria-hidden="true" width=${width * z} height=${height * z}
          viewBox=${`0 0 ${width} ${height}`}>
          ${outlined.map((n) => html`<polygon key=${n.id} data-node=${n.id} points=${n.kind.region.map((p) => p.join(',')).join(' ')} />`)}
        </svg>`}
        ${boxes}
        ${drawing && html`<div class="box drawing" aria-hidden="true" style=${{
          left: `${ghost.x * z}px`, top: `${ghost.y * z}px`, width: `${ghost.width * z}px`, height: `${ghost.height * z}px`,
        }}></div>`}
      </div>
    </div>
    <${Legend} />
  </div>`;
}

// Shared view helpers: `html` (htm over Preact), the hook that re-renders
// on store changes, and small widgets.

import { h } from '../vendor/preact.mjs';
import { useEffect, useLayoutEffect, useReducer, useRef, useState } from '../vendor/hooks.mjs';
import htm from '../vendor/htm.mjs';
import { subscribe } from './store.js';

export const html = htm.bind(h);

/** Re-renders the calling component whenever the store changed. */
export function useStore() {
  const [, bump] = useReducer((n) => n + 1, 0);
  useEffect(() => subscribe(bump), []);
}

/** Whether the focus is somewhere typing goes (so single-key shortcuts stay off). */
export function typing(target) {
  const el = target || document.activeElement;
  if (!el) return false;
  return el.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(el.tagName);
}

/** Calls `handler` for keydown on the window while mounted. */
export function useKeys(handler) {
  const ref = useRef(handler);
  ref.current = handler;
  useEffect(() => {
    const listen = (e) => ref.current(e);
    window.addEventListener('keydown', listen);
    return () => window.removeEventListener('keydown', listen);
  }, []);
}

/**
 * A list of `count` rows of `rowHeight` pixels that builds only the rows in
 * view and a few around them: attach `ref` and `onScroll` to the scrolling
 * element, build rows `first` to `last` (exclusive). The row `shown`
 * (an index, or -1) is scrolled into view when it changes.
 */
export function useWindow(count, rowHeight, shown, extra = 5) {
  const ref = useRef(null);
  const [scroll, setScroll] = useState(0);
  const [height, setHeight] = useState(800);
  useLayoutEffect(() => {
    const el = ref.current;
    const observer = new ResizeObserver(() => setHeight(el.clientHeight || 800));
    observer.observe(el);
    return () => observer.disconnect();
  }, []);
  useEffect(() => {
    const el = ref.current;
    if (!el || shown < 0) return;
    const top = shown * rowHeight;
    if (top < el.scrollTop) el.scrollTop = top;
    else if (top + rowHeight > el.scrollTop + el.clientHeight) el.scrollTop = top + rowHeight - el.clientHeight;
  }, [shown]);
  return {
    ref,
    onScroll: (e) => setScroll(e.currentTarget.scrollTop),
    first: Math.max(0, Math.floor(scroll / rowHeight) - extra),
    last: Math.min(count, Math.ceil((scroll + height) / rowHeight) + extra),
  };
}

/** A ref whose element takes the focus when it mounts (`autofocus` only works at page load). */
export function useAutofocus() {
  const ref = useRef(null);
  useEffect(() => {
    if (ref.current) ref.current.focus();
  }, []);
  return ref;
}

/** A labelled progress bar (0-100) and its figure. */
export function Progress({ value, label }) {
  const pct = Math.max(0, Math.min(100, Math.round(value)));
  return html`<div class="progress-row">
    <div class="progress" role="progressbar" aria-label=${label} aria-valuemin="0" aria-valuemax="100"
      aria-valuenow=${pct}>
      <div class="progress-fill" style=${{ width: `${pct}%` }}></div>
    </div>
    <span class="progress-text" aria-hidden="true">${pct} %</span>
  </div>`;
}

/** A file picker behind a button (drag and drop does the same). */
export function FileButton({ label, accept, multiple = true, onFiles, testId }) {
  const input = useRef(null);
  return html`<span class="file-button">
    <button type="button" onClick=${() => input.current.click()} data-testid=${testId}>${label}</button>
    <input ref=${input} type="file" hidden accept=${accept} multiple=${multiple} aria-label=${label}
      onChange=${(e) => {
        const files = [...e.currentTarget.files];
        e.currentTarget.value = '';
        if (files.length) onFiles(files);
      }} />
  </span>`;
}

/** Date and time of epoch milliseconds, in the browser's locale. */
export function when(ms) {
  return new Date(ms).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

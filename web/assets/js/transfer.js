// Files in and out: what a dropped or picked file is (pages, a
// translation file to merge, a glossary, a project archive) and which
// route takes it; exports saved as downloads; the conflicts a merged file
// left, resolved one by one.

import { useEffect, useRef } from '../vendor/hooks.mjs';
import { call, fileNameOf, inSession, saveBytes } from './api.js';
import { attempt, changed, readUpTo, refreshScene, select, toast } from './store.js';
import { html } from './ui.js';

export const EXPORTS = [
  // A project made from a PO or XLIFF file gets that file back.
  { format: 'xliff', label: 'XLIFF (.xlf)' },
  { format: 'po', label: 'gettext PO (.po)' },
  { format: 'markdown', label: 'Markdown (.md)' },
  { format: 'json', label: 'Scene JSON (.json)' },
  { format: 'cbz', label: 'Rendered pages, CBZ (.cbz)', images: true },
  // What a group publishes: JPEG pages at quality 85 (a tenth of the PNGs).
  { format: 'cbz', options: { imageFormat: 'jpeg' }, label: 'Rendered pages, CBZ of JPEGs (.cbz)', images: true },
  { format: 'cbz', options: { imageFormat: 'webp' }, label: 'Rendered pages, CBZ of WebPs (.cbz)', images: true },
  { format: 'pdf', label: 'Rendered pages, PDF (.pdf)' },
  { format: 'png', label: 'Rendered pages, PNG (.png.zip)', images: true },
  { format: 'archive', label: 'Project archive (.quire.zip)' },
  { format: 'srt', label: 'SubRip (.srt), this page', page: true },
  { format: 'vtt', label: 'WebVTT (.vtt), this page', page: true },
];

export function isArchive(file) {
  return /\.quire\.zip$/i.test(file.name);
}

const TRANSLATIONS = /\.(xlf|xliff|poxliff|po|pot)$/i;
const GLOSSARY = /\.(csv|tbx)$/i;

function form(file) {
  const data = new FormData();
  data.append('file', file, file.name);
  return data;
}

/** Imports files into a session: translations merged, glossary terms added, the rest as pages. */
export async function importFiles(sessionId, files) {
  for (const file of files.filter((f) => TRANSLATIONS.test(f.name))) {
    const report = await attempt(`Importing ${file.name}`, () => call('POST', inSession(sessionId, '/import'), form(file)));
    if (report) {
      readUpTo(report.epoch);
      const kept = report.kept ? `, ${report.kept} kept (changed here since the export)` : '';
      const n = report.conflicts.length;
      const conflicts = n ? `, ${n} ${n === 1 ? 'conflict' : 'conflicts'}` : '';
      const unmatched = report.unmatched.length ? `, ${report.unmatched.length} unknown units` : '';
      toast(`${file.name}: ${report.updated} updated, ${report.unchanged} unchanged${kept}${conflicts}${unmatched}`);
      const open = report.conflicts.filter((c) => !c.applied);
      if (open.length) {
        const format = /\.po$/i.test(file.name) ? 'po' : 'xliff';
        merged = { sessionId, name: file.name, format, content: await file.text(), rows: open.map((c) => ({ ...c, decided: null })) };
        changed();
      }
    }
  }
  for (const file of files.filter((f) => GLOSSARY.test(f.name))) {
    const report = await attempt(`Importing ${file.name}`, () =>
      call('POST', inSession(sessionId, '/glossary/import'), form(file)),
    );
    if (report) toast(`${file.name}: ${report.added} terms added, ${report.updated} updated`);
  }
  const pages = files.filter((f) => !TRANSLATIONS.test(f.name) && !GLOSSARY.test(f.name));
  if (pages.length) {
    const data = new FormData();
    for (const file of pages) data.append('file', file, file.name);
    const result = await attempt('Importing pages', () => call('POST', inSession(sessionId, '/pages'), data));
    if (result) toast(`Imported ${pages.length === 1 ? pages[0].name : `${pages.length} files`}`);
    // A comic archive's pages that could not be read came in as nothing: say which.
    for (const skipped of result?.skipped ?? []) toast(`Skipped ${skipped.name}: ${skipped.reason}`, 'error');
  }
  refreshScene();
}

/** Downloads an export of the session (some pages only, for subtitles;
 * `options` such as the page images' format). */
export async function download(sessionId, format, pages, options = {}) {
  const body = pages ? { format, pages, ...options } : { format, ...options };
  const response = await attempt(`Export ${format}`, () =>
    call('POST', inSession(sessionId, '/export'), body, { raw: true }),
  );
  if (!response) return;
  const blob = await response.blob();
  saveBytes(blob, fileNameOf(response, `export.${format}`));
  // A subtitle or PO file with untranslated segments says how many, and
  // how they were written.
  const untranslated = response.headers.get('quire-untranslated');
  toast(`Saved ${fileNameOf(response, format)}${untranslated ? ` · ${untranslated}` : ''}`, untranslated ? 'warning' : 'info');
}

/** The conflicts of the last merged file still to decide, with the file. */
let merged = null;

/** Takes the file's side for `rows` (one import, one undo step). */
async function takeTheirs(rows) {
  const { sessionId, format, content, name } = merged;
  const body = { format, content, take: rows.map((r) => r.unit) };
  const report = await attempt(`Taking ${name}'s side`, () => call('POST', inSession(sessionId, '/import'), body));
  if (!report) return;
  readUpTo(report.epoch);
  const taken = new Set(report.conflicts.filter((c) => c.applied).map((c) => c.unit));
  for (const row of rows) row.decided = taken.has(row.unit) ? 'theirs' : row.decided;
  toast(`${name}: ${taken.size} taken from the file`);
  refreshScene();
  changed();
}

function decide(row, side) {
  if (side === 'theirs') return takeTheirs([row]);
  row.decided = 'mine';
  changed();
  return undefined;
}

/** The conflicts a merged file left: each row says where, what quire has,
 * what the file has and why, and keeps quire's side or takes the file's. */
export function ImportConflicts() {
  const dialog = useRef(null);
  useEffect(() => {
    const el = dialog.current;
    if (!el) return undefined;
    if (!el.open) el.showModal();
    const closed = () => {
      // Looking at a conflict's page hides the list; closing it ends it.
      if (merged && !merged.hidden) merged = null;
      changed();
    };
    el.addEventListener('close', closed);
    return () => el.removeEventListener('close', closed);
  });
  if (!merged) return null;
  if (merged.hidden) {
    const left = merged.rows.filter((r) => !r.decided).length;
    const reopen = () => {
      merged.hidden = false;
      changed();
    };
    return html`<button type="button" class="conflicts-reopen" onClick=${reopen}>
      ${left} ${left === 1 ? 'conflict' : 'conflicts'} from ${merged.name}…</button>`;
  }
  const open = merged.rows.filter((r) => !r.decided);
  const side = (row) => (row.decided === 'theirs' ? 'the file\'s taken' : 'quire\'s kept');
  const show = (row) => {
    merged.hidden = true;
    dialog.current.close();
    select(row.pageId, row.nodeId);
  };
  return html`<dialog ref=${dialog} class="run-dialog conflicts-dialog" aria-labelledby="conflicts-title">
    <h2 id="conflicts-title">${merged.rows.length} ${merged.rows.length === 1 ? 'conflict' : 'conflicts'} in ${merged.name}</h2>
    <p class="muted small">Each is as it is here until you take the file's side. Taking it is one undo step.</p>
    <ol class="conflict-list">
      ${merged.rows.map((row) => html`<li class="conflict" key=${row.unit} data-unit=${row.unit}>
        <div class="row"><button type="button" class="link" onClick=${() => show(row)}>Page ${row.page}</button>
          <span class="muted">${row.message}</span></div>
        <div class="sides">
          <div><span class="muted small">Here</span><blockquote>${row.mine ?? '(none)'}</blockquote></div>
          <div><span class="muted small">In the file</span><blockquote>${row.theirs ?? '(none)'}</blockquote></div>
        </div>
        ${row.decided
          ? html`<p class="small" role="status">${side(row)}</p>`
          : html`<div class="row end">
              <button type="button" onClick=${() => decide(row, 'mine')}>Keep mine</button>
              <button type="button" onClick=${() => decide(row, 'theirs')}>Take theirs</button>
            </div>`}
      </li>`)}
    </ol>
    <div class="row end">
      ${open.length > 1 && html`<button type="button" onClick=${() => takeTheirs(open)}>Take theirs for all ${open.length}</button>`}
      <button type="button" class="primary" onClick=${() => dialog.current.close()}>${open.length ? 'Keep the rest as here' : 'Done'}</button>
    </div>
  </dialog>`;
}

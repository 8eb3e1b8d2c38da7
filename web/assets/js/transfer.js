// Files in and out: what a dropped or picked file is (pages, a
// translation file to merge, a glossary, a project archive) and which
// route takes it; exports saved as downloads.

import { call, fileNameOf, inSession, saveBytes } from './api.js';
import { attempt, refreshScene, toast } from './store.js';

export const EXPORTS = [
  { format: 'xliff', label: 'XLIFF 2.0 (.xlf)' },
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

const TRANSLATIONS = /\.(xlf|xliff|po)$/i;
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
      const conflicts = report.conflicts.length ? `, ${report.conflicts.length} conflicts left alone` : '';
      const unmatched = report.unmatched.length ? `, ${report.unmatched.length} unknown units` : '';
      toast(`${file.name}: ${report.updated} updated, ${report.unchanged} unchanged${conflicts}${unmatched}`);
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
  toast(`Saved ${fileNameOf(response, format)}`);
}

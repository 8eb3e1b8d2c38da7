// Pipelines: the dialog that starts engines or a named pipeline (steps
// in the order picked, the overwrite policy, the target language, all
// pages, this one or a range; an engine that runs a program shows its
// exact command and asks first), the jobs of the shown session with a
// progress bar each and every job's warnings, and the QA warnings as a
// list; each warning goes to its node.

import { useEffect, useRef, useState } from '../vendor/hooks.mjs';
import { call, inSession } from './api.js';
import { attempt, go as navigate, may, select, state, toast } from './store.js';
import { html, Progress } from './ui.js';

const ACTIVE = new Set(['queued', 'running']);

const STATUS = {
  queued: 'queued',
  running: 'running',
  completed: 'done',
  completedWithErrors: 'done, with warnings',
  cancelled: 'cancelled',
  failed: 'failed',
};

/** The shown session's jobs, newest first. */
export function sessionJobs() {
  return [...state.jobs.values()].filter((j) => j.sessionId === state.sessionId).reverse();
}

/** The newest job that ran `qa`: its warnings are what the page is marked with. */
function qaJob() {
  return sessionJobs().find((j) => j.steps.includes('qa'));
}

export function qaWarnings() {
  const job = qaJob();
  // A node saved here since the run finished has lost its marks.
  const fixed = job && state.changedSinceQa.get(job.id);
  return job ? job.warnings.filter((w) => w.rule !== 'summary' && !(fixed && fixed.has(w.nodeId))) : [];
}

export function warnedNodes() {
  return new Set(qaWarnings().filter((w) => w.nodeId).map((w) => w.nodeId));
}

function percent(job) {
  if (!ACTIVE.has(job.status)) return 100;
  return job.progress ? job.progress.overallPercent : 0;
}

function JobRow({ job: given }) {
  // A step's summary says what it did (shown under the status); it is not a warning.
  const said = given.warnings.filter((w) => w.rule === 'summary');
  const job = { ...given, warnings: given.warnings.filter((w) => w.rule !== 'summary') };
  const active = ACTIVE.has(job.status);
  const p = job.progress;
  const where = active && p ? `${p.step}: page ${p.page} of ${p.totalPages}` : STATUS[job.status] || job.status;
  const cancel = () => attempt('Cancelling', () => call('DELETE', `/api/v1/operations/${job.id}`));
  return html`<li class=${`job status-${job.status}`} data-job=${job.id}>
    <div class="job-head">
      <strong>${job.steps.join(' → ')}</strong>
      <span class="muted small">${job.totalPages} page${job.totalPages === 1 ? '' : 's'}</span>
      ${active && may('edit') && html`<button type="button" class="small" onClick=${cancel} aria-label=${`Cancel ${job.steps.join(', ')}`}>Cancel</button>`}
    </div>
    <${Progress} value=${percent(job)} label=${`${job.steps.join(', ')}: ${where}`} />
    <div class="muted small" aria-live="polite">${where}${job.error ? ` · ${job.error}` : ''}</div>
    ${said.map((w) => html`<div class="small job-summary">${w.stepId}: ${w.message}</div>`)}
    ${job.warnings.length > 0 && given === qaJob() && html`<div class="muted small">${job.warnings.length} warning${job.warnings.length === 1 ? '' : 's'}, listed below</div>`}
    ${job.warnings.length > 0 && given !== qaJob() && html`<details class="job-warnings">
      <summary>${job.warnings.length} warning${job.warnings.length === 1 ? '' : 's'}</summary>
      <${WarningList} warnings=${job.warnings} />
    </details>`}
  </li>`;
}

/** Warnings, each a button that goes to its node (or names its page). */
function WarningList({ warnings }) {
  const pages = state.view ? state.view.index.pages : new Map();
  return html`<ul class="warning-list">
    ${warnings.slice(0, 300).map((w) => {
      const info = w.pageId && pages.get(w.pageId);
      const where = info ? `p. ${info.number}` : `page ${w.pageIndex + 1}`;
      const go = () => (w.nodeId ? select(w.pageId, w.nodeId) : navigate({ pageId: w.pageId, nodeId: null }));
      return html`<li><button type="button" class=${`warning sev-${w.severity}`} disabled=${!info}
        onClick=${go} data-rule=${w.rule}>
        <span class="muted">${where}</span> <strong>${w.rule}</strong> ${w.message}</button></li>`;
    })}
    ${warnings.length > 300 && html`<li class="muted small">…and ${warnings.length - 300} more.</li>`}
  </ul>`;
}

function Warnings() {
  const warnings = qaWarnings();
  if (!warnings.length) return null;
  return html`<div class="warnings">
    <h3>QA warnings (${warnings.length})</h3>
    <${WarningList} warnings=${warnings} />
  </div>`;
}

export function Jobs() {
  const jobs = sessionJobs().slice(0, 8);
  return html`<section class="jobs" aria-label="Jobs">
    <h2>Jobs</h2>
    ${jobs.length === 0 && html`<p class="muted">No jobs yet.${may('edit') ? html` <kbd>r</kbd> or Run… starts engines.` : ''}</p>`}
    <ul class="job-list">${jobs.map((j) => html`<${JobRow} key=${j.id} job=${j} />`)}</ul>
    <${Warnings} />
  </section>`;
}

export function RunDialog({ onClose, page }) {
  const dialog = useRef(null);
  const [steps, setSteps] = useState([]);
  const [overwrite, setOverwrite] = useState('untranslated');
  const [language, setLanguage] = useState((state.view && state.view.scene.project.targetLanguage) || '');
  const [scope, setScope] = useState('all');
  const pageCount = state.view ? state.view.index.order.length : 0;
  const [range, setRange] = useState({ from: 1, to: pageCount });
  const [approved, setApproved] = useState(false);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    const el = dialog.current;
    el.showModal();
    const closed = () => onClose();
    el.addEventListener('close', closed);
    return () => el.removeEventListener('close', closed);
  }, []);
  const engines = state.engines;
  const gated = engines.filter((e) => steps.includes(e.id) && e.requiresApproval);
  const unattended = Boolean(state.config && state.config.engines && state.config.engines.allow_unattended);
  const toggle = (id, on) => setSteps(on ? [...steps, id] : steps.filter((s) => s !== id));
  const submit = async (e) => {
    e.preventDefault();
    if (!steps.length) return;
    setBusy(true);
    const spec = { steps, overwrite };
    if (language.trim()) spec.targetLanguage = language.trim();
    if (scope === 'page' && page) spec.pages = [page.id];
    if (scope === 'range') {
      const from = Math.max(1, Math.min(range.from, range.to));
      const to = Math.min(pageCount, Math.max(range.from, range.to));
      spec.pages = state.view.index.order.slice(from - 1, to).map((i) => i.page.id);
    }
    const started = await attempt('Starting', () => call('POST', inSession(state.sessionId, '/pipelines'), spec));
    setBusy(false);
    if (started) {
      toast(`Started ${steps.join(' → ')}`);
      dialog.current.close();
    }
  };
  const blocked = gated.length > 0 && (!unattended || !approved);
  return html`<dialog ref=${dialog} class="run-dialog" aria-labelledby="run-title">
    <form onSubmit=${submit} method="dialog">
      <h2 id="run-title">Run engines</h2>
      <fieldset>
        <legend>Steps (run in the order you tick them; a pipeline runs its steps)</legend>
        ${engines.map((e) => {
          const at = steps.indexOf(e.id);
          return html`<label class="engine" key=${e.id}>
            <input type="checkbox" name="step" value=${e.id} checked=${at >= 0}
              onChange=${(ev) => toggle(e.id, ev.currentTarget.checked)} />
            <span class="engine-order" aria-hidden="true">${at >= 0 ? at + 1 : ''}</span>
            <span><strong>${e.id}</strong> <span class="muted small">${e.stage}${e.requiresApproval ? ' · runs a program' : ''}</span><br />
            <span class="small">${e.description}</span></span>
          </label>`;
        })}
      </fieldset>
      <div class="row">
        <label>Overwrite
          <select name="overwrite" value=${overwrite} onChange=${(e) => setOverwrite(e.currentTarget.value)}>
            <option value="untranslated">only untranslated nodes</option>
            <option value="machine">also unreviewed machine translations</option>
            <option value="all">everything but final</option>
          </select>
        </label>
        <label>Target language <input name="targetLanguage" size="8" value=${language}
          onInput=${(e) => setLanguage(e.currentTarget.value)} placeholder="en" /></label>
        <label>Pages
          <select name="scope" value=${scope} onChange=${(e) => setScope(e.currentTarget.value)}>
            <option value="all">all pages</option>
            ${page && html`<option value="page">this page (${page.name})</option>`}
            ${pageCount > 1 && html`<option value="range">pages from … to …</option>`}
          </select>
        </label>
        ${scope === 'range' && html`<label>From <input type="number" name="from" min="1" max=${pageCount} size="4"
            value=${range.from} onInput=${(e) => setRange({ ...range, from: Number(e.currentTarget.value) || 1 })} /></label>
          <label>to <input type="number" name="to" min="1" max=${pageCount} size="4"
            value=${range.to} onInput=${(e) => setRange({ ...range, to: Number(e.currentTarget.value) || 1 })} /></label>`}
      </div>
      ${gated.length > 0 && html`<div class="approval" role="alert">
        <p>These engines run a program on this machine:</p>
        ${gated.map((e) => html`<pre key=${e.id}><code>${e.command || e.id}</code></pre>`)}
        ${unattended
          ? html`<label><input type="checkbox" checked=${approved} onChange=${(e) => setApproved(e.currentTarget.checked)} />
              I have read these commands and want to run them</label>`
          : html`<p>This server does not run them for HTTP clients (<code>engines.allow_unattended</code> is off).
              Start them from the TUI, which shows the command and asks, or ask whoever runs this server.</p>`}
      </div>`}
      <div class="row end">
        <button type="button" onClick=${() => dialog.current.close()}>Cancel</button>
        <button type="submit" class="primary" disabled=${busy || !steps.length || blocked}>Start</button>
      </div>
    </form>
  </dialog>`;
}

/** "Find text": detect then ocr, on the shown page or on every page. */
export function FindText({ page }) {
  const run = async (pages, where) => {
    const spec = { steps: ['detect', 'ocr'] };
    if (pages) spec.pages = pages;
    const started = await attempt('Finding text', () => call('POST', inSession(state.sessionId, '/pipelines'), spec));
    if (started) toast(`Finding text ${where}: detect → ocr`);
  };
  const close = (e) => {
    e.currentTarget.closest('details').open = false;
  };
  return html`<details class="menu find-text">
    <summary role="button" title="Find the balloons and read their text (detect, then ocr)">Find text</summary>
    <ul class="menu-list" role="menu">
      <li role="none"><button type="button" role="menuitem" onClick=${(e) => { close(e); run([page.id], 'on this page'); }}>On this page</button></li>
      <li role="none"><button type="button" role="menuitem" onClick=${(e) => { close(e); run(null, 'on every page'); }}>On every page</button></li>
    </ul>
  </details>`;
}

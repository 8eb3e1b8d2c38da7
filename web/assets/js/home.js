// Home: the managed projects and open sessions; create, open, close,
// and import (a project archive, or page or translation files that start
// a project).

import { useEffect, useRef, useState } from '../vendor/hooks.mjs';
import { call } from './api.js';
import { attempt, changed, go, may, refreshProjects, state, toast } from './store.js';
import { FileButton, html, when } from './ui.js';
import { importFiles, isArchive } from './transfer.js';

export function openProject(projectId) {
  go({ view: 'project', projectId, pageId: null, nodeId: null }, { push: true });
}

/** Files dropped or picked on the home screen. */
export async function importOnHome(files) {
  const archives = files.filter(isArchive);
  for (const file of archives) {
    const session = await attempt(`Importing ${file.name}`, () => call('POST', '/api/v1/projects/import', file));
    if (session) {
      toast(`Imported ${session.name}`);
      refreshProjects();
      if (archives.length === 1 && files.length === 1) openProject(session.projectId);
    }
  }
  const pages = files.filter((f) => !isArchive(f));
  if (!pages.length) return;
  // Pages start a project: its name and languages are asked first (a
  // chapter without a source language reads left to right and its
  // engines guess), in the dialog below.
  pending = pages;
  changed();
}

let pending = null;

// A translator's file starts a project of its own: one page, its
// segments keyed as the file keys them, exported back as that file.
const TRANSLATION = /\.(xlf|xliff|poxliff|po|pot)$/i;

async function startFrom(pages, body) {
  if (pages.length === 1 && TRANSLATION.test(pages[0].name)) {
    const data = new FormData();
    data.append('file', pages[0], pages[0].name);
    for (const [key, value] of Object.entries(body)) data.append(key, value);
    const made = await attempt('Creating the project', () => call('POST', '/api/v1/projects/import', data));
    if (!made) return;
    refreshProjects();
    openProject(made.projectId);
    return;
  }
  const session = await attempt('Creating the project', () => call('POST', '/api/v1/projects', body));
  if (!session) return;
  await importFiles(session.id, pages);
  refreshProjects();
  openProject(session.projectId);
}

/** The project that dropped pages start: name and languages, then Create. */
function NewFromFiles({ pages }) {
  const dialog = useRef(null);
  const first = pages[0].name.replace(/\.[^.]+$/, '') || 'Imported pages';
  useEffect(() => {
    const el = dialog.current;
    el.showModal();
    const closed = () => {
      pending = null;
      changed();
    };
    el.addEventListener('close', closed);
    return () => el.removeEventListener('close', closed);
  }, []);
  const submit = (e) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    const body = { name: form.get('name').trim() };
    for (const key of ['sourceLanguage', 'targetLanguage']) {
      const tag = form.get(key).trim();
      if (tag) body[key] = tag;
    }
    dialog.current.close();
    startFrom(pages, body);
  };
  const count = pages.length === 1 ? pages[0].name : `${pages.length} files`;
  return html`<dialog ref=${dialog} class="run-dialog" aria-labelledby="from-files-title">
    <form onSubmit=${submit}>
      <h2 id="from-files-title">New project from ${count}</h2>
      <label>Name <input name="name" required maxlength="200" defaultValue=${uniqueName(first)} /></label>
      <div class="row">
        <label>Source language <input name="sourceLanguage" size="8" placeholder="ja" /></label>
        <label>Target language <input name="targetLanguage" size="8" placeholder="en" /></label>
      </div>
      <p class="muted small">BCP 47 tags (ja, en, pt-BR). A Japanese source reads right to left; both can be left empty and set later${TRANSLATION.test(pages[0].name) ? ' (a PO or XLIFF file says its own)' : ''}.</p>
      <div class="row end">
        <button type="button" onClick=${() => dialog.current.close()}>Cancel</button>
        <button type="submit" class="primary">Create</button>
      </div>
    </form>
  </dialog>`;
}

function uniqueName(name) {
  const taken = new Set(state.projects.map((p) => p.name.toLowerCase()));
  if (!taken.has(name.toLowerCase())) return name;
  for (let i = 2; ; i += 1) {
    const candidate = `${name} ${i}`;
    if (!taken.has(candidate.toLowerCase())) return candidate;
  }
}

function NewProject() {
  const [name, setName] = useState('');
  const [source, setSource] = useState('');
  const [target, setTarget] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (e) => {
    e.preventDefault();
    if (!name.trim()) return;
    setBusy(true);
    const body = { name: name.trim() };
    if (source.trim()) body.sourceLanguage = source.trim();
    if (target.trim()) body.targetLanguage = target.trim();
    const session = await attempt('Creating the project', () => call('POST', '/api/v1/projects', body));
    setBusy(false);
    if (session) {
      setName('');
      refreshProjects();
      openProject(session.projectId);
    }
  };
  return html`<form class="card new-project" onSubmit=${submit} aria-labelledby="new-title">
    <h2 id="new-title">New project</h2>
    <label>Name <input name="name" required maxlength="200" value=${name}
      onInput=${(e) => setName(e.currentTarget.value)} placeholder="Chapter 12" /></label>
    <div class="row">
      <label>Source language <input name="sourceLanguage" value=${source} size="8"
        onInput=${(e) => setSource(e.currentTarget.value)} placeholder="ja" /></label>
      <label>Target language <input name="targetLanguage" value=${target} size="8"
        onInput=${(e) => setTarget(e.currentTarget.value)} placeholder="en" /></label>
    </div>
    <button type="submit" class="primary" disabled=${busy}>Create</button>
  </form>`;
}

function ProjectRow({ project }) {
  const session = state.sessions.find((s) => s.projectId === project.id);
  const close = () =>
    attempt('Closing', () => call('DELETE', `/api/v1/sessions/${session.id}`)).then(refreshProjects);
  return html`<li class="project">
    <a href=${`#/p/${project.id}`} class="project-name">${project.name}</a>
    <span class="muted">${when(project.updatedAtMs)}</span>
    <span class=${session ? 'badge open' : 'badge'}>${session ? (session.busy ? 'open · busy' : 'open') : 'closed'}</span>
    <span class="actions">
      <button type="button" onClick=${() => openProject(project.id)} aria-label=${`Open ${project.name}`}>Open</button>
      ${session && may('admin') && html`<button type="button" onClick=${close} aria-label=${`Close ${project.name}`}>Close</button>`}
    </span>
  </li>`;
}

export function Home() {
  const managed = new Set(state.projects.map((p) => p.id));
  const others = state.sessions.filter((s) => !managed.has(s.projectId));
  const projects = [...state.projects].sort((a, b) => b.updatedAtMs - a.updatedAtMs);
  return html`<main class="home" aria-label="Projects">
    ${may('admin') ? html`<section class="home-side">
      <${NewProject} />
      <div class="card">
        <h2>Import</h2>
        <p class="muted">Drop files anywhere on this page: a project archive (.quire.zip) opens as a new
          project; images, text, subtitles or a comic archive (.cbz) start a new project (its name and
          languages asked first) with a page each.</p>
        <${FileButton} label="Choose files…" onFiles=${importOnHome} testId="home-import" />
      </div>
    </section>` : html`<section class="home-side"><div class="card" data-testid="role-note">
      <h2>Your role: ${state.meta.role}</h2>
      <p class="muted">${may('edit')
        ? 'You may open projects, translate, run engines, import into a project and export.'
        : 'You may open projects and follow them live; changing them needs the edit role.'}
        Creating, importing and closing projects is an admin's.</p>
    </div></section>`}
    <section class="card projects" aria-labelledby="projects-title">
      <h2 id="projects-title">Projects</h2>
      ${projects.length === 0 && html`<p class="muted">No projects yet: create one, or drop page images, subtitles or a PO/XLIFF file here.</p>`}
      <ul class="project-list">${projects.map((p) => html`<${ProjectRow} key=${p.id} project=${p} />`)}</ul>
      ${pending && html`<${NewFromFiles} pages=${pending} />`}
      ${others.length > 0 && html`<h3>Open from elsewhere</h3>
        <ul class="project-list">${others.map((s) => html`<li class="project" key=${s.id}>
          <a href=${`#/p/${s.projectId}`} class="project-name">${s.name}</a>
          <span class="muted">${s.path}</span></li>`)}</ul>`}
    </section>
  </main>`;
}

// The page's state and everything that changes it: API answers and the
// event stream. Views read `state` and call the actions below; they never
// fetch on their own. A change schedules one render per animation frame,
// so a burst of a thousand events is one update, not a thousand.

import { ApiError, call, inSession, onRefusedAddress, onUnauthorized, setToken } from './api.js';
import { follow } from './events.js';
import { indexScene } from './scene.js';

export const state = {
  /** 'checking' | 'login' | 'ok' */
  auth: 'checking',
  loginError: null,
  /** Why the server refuses this page's address (its Origin or Host), once it has. */
  refusedAddress: null,
  meta: null,
  engines: [],
  config: null,
  /** 'connecting' | 'online' | 'offline' | 'unauthorized' */
  link: 'connecting',
  projects: [],
  sessions: [],
  /** id -> JobSummary, as the events describe it */
  jobs: new Map(),
  /** { view: 'home' } | { view: 'project', projectId, pageId, nodeId } */
  route: { view: 'home' },
  /** The shown project's open session, when it is open. */
  sessionId: null,
  /** The highest epoch the stream announced for that session. */
  announced: 0,
  /** { epoch, scene, index } of that session. */
  view: null,
  viewError: null,
  /** The translation being edited: { nodeId, draft, base, conflict } */
  editor: null,
  /** Nodes saved here since a `qa` job ran, by that job's id. */
  changedSinceQa: new Map(),
  /** Shift-click's selection on a text page: { pageId, nodeIds }. */
  range: null,
  /** { tool: 'select' | 'draw', zoom: number | 'fit', view: 'source' | 'cleaned' | 'rendered',
   *    mask: bool (the text mask over the image), regions: bool } */
  canvas: { tool: 'select', zoom: 'fit', view: 'source', mask: false, regions: true },
  toasts: [],
  /** A node whose translation field takes the focus once it shows. */
  focusEdit: null,
  /** Which panel is open on a phone-sized screen: 'page' | 'pages' | 'edit' | 'jobs' */
  pane: 'page',
  // Which segments the page shows: 'all', or 'review' (translated, not yet reviewed).
  show: 'all',
};

const listeners = new Set();
let scheduled = false;

const RANK = { read: 0, suggest: 1, edit: 2, review: 3, admin: 4 };

/** Whether the signed-in user's role allows what needs `role` (`edit`:
 * changing a project, `admin`: creating or closing one). The page offers
 * only that; the server refuses the rest anyway. A server without users
 * lets its machine's person do everything. */
export function may(role) {
  return RANK[(state.meta && state.meta.role) || 'admin'] >= RANK[role];
}

export function subscribe(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Schedules one render for everything changed before the next frame. */
export function changed() {
  if (scheduled) return;
  scheduled = true;
  const run = () => {
    scheduled = false;
    listeners.forEach((l) => l());
  };
  // A hidden tab gets no animation frames; a timer still runs.
  if (document.hidden) setTimeout(run, 0);
  else requestAnimationFrame(run);
}

function set(patch) {
  Object.assign(state, patch);
  changed();
}

let toastId = 0;

/** A short message at the bottom of the screen; errors stay until dismissed. */
export function toast(text, kind = 'info') {
  const id = ++toastId;
  state.toasts = [...state.toasts.slice(-2), { id, text, kind }];
  changed();
  if (kind !== 'error') setTimeout(() => dismiss(id), 5_000);
}

export function dismiss(id) {
  state.toasts = state.toasts.filter((t) => t.id !== id);
  changed();
}

/** Runs an API action; its failure becomes an error toast. */
export async function attempt(what, action) {
  try {
    return await action();
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) return undefined;
    toast(`${what}: ${e.message}`, 'error');
    return undefined;
  }
}

// ---- start, login ------------------------------------------------------

let stream = null;

let connectedOnce = false;

export async function start() {
  onUnauthorized(() => set({ auth: 'login' }));
  onRefusedAddress((message) => set({ refusedAddress: message }));
  window.addEventListener('hashchange', routeChanged);
  window.addEventListener('online', () => stream && stream.reconnect());
  try {
    await loadBasics();
  } catch (e) {
    if (!(e instanceof ApiError && (e.status === 401 || state.refusedAddress))) {
      set({ auth: 'ok', link: 'offline' });
      toast(`quire cannot be reached: ${e.message}`, 'error');
    }
  }
  stream = follow({
    onEvents: receive,
    onStatus: (link) => {
      const back = link === 'online' && state.link !== 'online' && connectedOnce;
      if (link === 'online') connectedOnce = true;
      set({ link });
      // Back after a drop (perhaps a restart with another config): the
      // engines, presets and projects may have changed.
      if (back) loadBasics().catch(() => {});
    },
  });
  routeChanged();
}

async function loadBasics() {
  const meta = await call('GET', '/api/v1/meta');
  const [engines, config, projects] = await Promise.all([
    call('GET', '/api/v1/engines'),
    call('GET', '/api/v1/config'),
    call('GET', '/api/v1/projects'),
  ]);
  set({ auth: 'ok', loginError: null, meta, engines, config, projects });
}

export async function login(token) {
  setToken(token.trim());
  try {
    await loadBasics();
  } catch (e) {
    setToken(null);
    set({ auth: 'login', loginError: e.status === 401 ? 'That token is not the one this quire was started with.' : e.message });
    return;
  }
  if (stream) stream.reconnect();
  routeChanged();
}

export function logout() {
  setToken(null);
  set({ auth: 'login', loginError: null });
  if (stream) stream.reconnect();
}

// ---- routing -------------------------------------------------------------

/** `#/p/<projectId>[/<pageId>[/<nodeId>]]`, else home. */
export function parseRoute(hash) {
  const parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean);
  if (parts[0] === 'p' && parts[1]) {
    return { view: 'project', projectId: parts[1], pageId: parts[2] || null, nodeId: parts[3] || null };
  }
  return { view: 'home' };
}

function routeHash(route) {
  if (route.view !== 'project') return '#/';
  return ['#/p', route.projectId, route.pageId, route.nodeId].filter(Boolean).join('/');
}

/** Moves to `route` (a patch of the current one), as a history entry when `push`. */
export function go(patch, { push = false } = {}) {
  const route = { ...state.route, ...patch };
  const hash = routeHash(route);
  if (hash !== location.hash) {
    if (push) history.pushState(null, '', hash);
    else history.replaceState(null, '', hash);
  }
  applyRoute(route);
}

function routeChanged() {
  applyRoute(parseRoute(location.hash));
}

function applyRoute(route) {
  const before = state.route;
  state.route = route;
  if (route.view === 'project' && (before.view !== 'project' || before.projectId !== route.projectId)) {
    state.view = null;
    state.viewError = null;
    state.sessionId = null;
    state.editor = null;
    state.pane = 'page';
    state.toasts = state.toasts.filter((t) => t.kind === 'error');
    ensureSession();
  }
  if (route.view === 'home') {
    state.sessionId = null;
    state.view = null;
    state.editor = null;
    refreshProjects();
  }
  if (state.editor && state.editor.nodeId !== route.nodeId) state.editor = null;
  openEditor();
  changed();
}

/** Finds the shown project's session, opening the project when it is closed. */
async function ensureSession() {
  const { projectId } = state.route;
  if (state.auth !== 'ok' || !projectId) return;
  const open = state.sessions.find((s) => s.projectId === projectId);
  if (open) {
    useSession(open.id);
    return;
  }
  try {
    // Opened without becoming current: the page addresses its session by
    // id, and another client's `current` routes stay where they were.
    const session = await call('POST', '/api/v1/sessions', { id: projectId });
    if (state.route.projectId !== projectId) return;
    addSession(session);
    useSession(session.id);
  } catch (e) {
    if (state.route.projectId === projectId) set({ viewError: e.message });
  }
}

/** Follows session `id` of the shown project; the view it had stays until the new scene comes. */
function useSession(id) {
  if (state.sessionId === id) return;
  state.sessionId = id;
  state.announced = 0;
  state.viewError = null;
  wanted.all = true;
  changed();
  refreshScene();
}

// ---- the scene -------------------------------------------------------------

let fetching = false;

/**
 * What the shown scene lacks: the pages the stream said changed (its
 * `SceneAdvanced` names them when an op changed only pages' contents), or
 * the whole scene (pages added, removed or reordered, the project changed,
 * a reconnect that missed events, another session).
 */
const wanted = { all: false, pages: new Set() };

/** Notes what an announced change makes stale. */
function want(pages) {
  if (!pages || !state.view) wanted.all = true;
  else if (!wanted.all) pages.forEach((p) => wanted.pages.add(p));
}

/**
 * Reads what the shown scene lacks: the changed pages alone when that is
 * all (`scene.json?pages=`), else the whole scene. One read at a time;
 * what is announced meanwhile is read next, however much it was.
 */
export async function refreshScene() {
  if (fetching || !state.sessionId) return;
  if (!wanted.all && !wanted.pages.size && state.view) return;
  fetching = true;
  const id = state.sessionId;
  const pages = wanted.all || !state.view ? null : [...wanted.pages];
  const announced = state.announced;
  wanted.all = false;
  wanted.pages.clear();
  let fetched = false;
  try {
    const query = pages ? `?pages=${pages.join(',')}` : '';
    const { epoch, scene } = await call('GET', inSession(id, `/scene.json${query}`));
    fetched = true;
    if (state.sessionId !== id) {
      // Another session now: read it whole.
    } else if (pages) {
      showPages(Math.min(epoch, announced), scene);
    } else {
      showScene(epoch, scene);
    }
  } catch (e) {
    if (state.sessionId === id && e instanceof ApiError && e.status === 404 && pages) {
      // A page went meanwhile: its removal is announced too; read it whole.
      wanted.all = true;
      fetched = true;
    } else {
      // Read it whole once the next announcement or reconnect asks.
      wanted.all = true;
      if (state.sessionId === id && !(e instanceof ApiError && e.status === 401)) set({ viewError: e.message });
    }
  } finally {
    fetching = false;
  }
  if (state.sessionId !== id) wanted.all = true;
  // Not again after a failure: the next announcement or reconnect tries.
  if (fetched || state.sessionId !== id) refreshScene();
}

/** Pages read after the view's epoch, put in place of the view's copies. */
function showPages(epoch, partial) {
  const view = state.view;
  if (!view) return;
  const fresh = new Map(partial.pages.map((p) => [p.id, p]));
  const scene = { ...view.scene, pages: view.scene.pages.map((p) => fresh.get(p.id) || p) };
  state.view = { epoch: Math.max(view.epoch, epoch), scene, index: indexScene(scene) };
  afterView();
}

function showScene(epoch, scene) {
  if (state.view && state.view.epoch > epoch) return;
  state.view = { epoch, scene, index: indexScene(scene) };
  state.viewError = null;
  afterView();
}

/** Keeps the route, the editor and the draft true to a new view. */
function afterView() {
  const index = state.view.index;
  const route = state.route;
  if (route.pageId && !index.pages.has(route.pageId)) go({ pageId: null, nodeId: null });
  else if (route.nodeId && !index.nodes.has(route.nodeId)) go({ nodeId: null });
  reconcileEditor();
  openEditor();
  changed();
}

/** Opens the editor on the routed node once the scene has it (a box just drawn, a link). */
function openEditor() {
  const nodeId = state.route.nodeId;
  if (!nodeId || !state.view || (state.editor && state.editor.nodeId === nodeId)) return;
  const found = state.view.index.nodes.get(nodeId);
  if (found && found.node.kind.type === 'text') {
    const value = found.node.kind.translation ?? '';
    // A draft typed before the tab was closed (or the browser died) comes
    // back if the translation is still what it started from.
    const kept = keptDraft(nodeId);
    const back = kept && kept.base === value && kept.draft !== value;
    state.editor = { nodeId, draft: back ? kept.draft : value, base: value, conflict: null, restored: back };
    if (kept && !back) keepDraft(nodeId, null);
  }
}

// ---- drafts kept in the browser ----------------------------------------------
// Every change to a draft is kept in localStorage (per project and node)
// until it is saved or dropped on purpose: a closed tab or a crash loses none.

function draftKey(nodeId) {
  return `quire.draft.${state.route.projectId}.${nodeId}`;
}

function keptDraft(nodeId) {
  try {
    return JSON.parse(localStorage.getItem(draftKey(nodeId)) || 'null');
  } catch {
    return null;
  }
}

function keepDraft(nodeId, editor) {
  try {
    if (editor && editor.draft !== editor.base) {
      localStorage.setItem(draftKey(nodeId), JSON.stringify({ draft: editor.draft, base: editor.base }));
    } else {
      localStorage.removeItem(draftKey(nodeId));
    }
  } catch {
    // Storage full or refused: the draft still lives in the page.
  }
}

/**
 * The person's draft against what the scene now says. A remote change to
 * the node being edited never replaces a draft that differs from what the
 * editing started from: the person is told and chooses.
 */
function reconcileEditor() {
  const editor = state.editor;
  if (!editor) return;
  const found = state.view.index.nodes.get(editor.nodeId);
  if (!found) {
    state.editor = { ...editor, conflict: { deleted: true } };
    return;
  }
  const theirs = found.node.kind.translation ?? '';
  if (theirs === editor.base) return;
  if (editor.draft === editor.base || editor.draft === theirs) {
    state.editor = { ...editor, draft: theirs, base: theirs, conflict: null };
  } else {
    state.editor = { ...editor, conflict: { theirs, origin: found.node.kind.origin ?? null } };
  }
}

// ---- events ------------------------------------------------------------------

function receive(events) {
  for (const e of events) handle(e.body);
  changed();
  refreshScene();
}

function handle(event) {
  switch (event.event) {
    case 'Snapshot': {
      state.sessions = event.sessions;
      state.jobs = new Map(event.jobs.map((j) => [j.id, j]));
      afterSessionsChanged({ reopen: true });
      if (state.sessionId) {
        const mine = state.sessions.find((s) => s.id === state.sessionId);
        if (mine) {
          state.announced = Math.max(state.announced, mine.epoch);
          // Events may have been missed: read the scene whole if it moved.
          if (!state.view || mine.epoch > state.view.epoch) want(null);
        }
      }
      break;
    }
    case 'SessionOpened':
      addSession({
        id: event.sessionId,
        projectId: event.projectId,
        name: event.name,
        path: event.path,
        epoch: event.epoch,
        busy: false,
        current: false,
        openedAt: event.openedAt,
      });
      break;
    case 'SessionClosed':
      state.sessions = state.sessions.filter((s) => s.id !== event.sessionId);
      afterSessionsChanged();
      break;
    case 'CurrentSessionChanged':
      state.sessions = state.sessions.map((s) => ({ ...s, current: s.id === event.sessionId }));
      break;
    case 'SceneAdvanced':
      state.sessions = state.sessions.map((s) =>
        s.id === event.sessionId ? { ...s, epoch: event.epoch, name: event.name } : s,
      );
      if (event.sessionId === state.sessionId) {
        state.announced = Math.max(state.announced, event.epoch);
        if (!state.view || event.epoch > state.view.epoch) want(event.pages);
      }
      break;
    case 'JobStarted':
      state.jobs.set(event.id, {
        id: event.id,
        sessionId: event.sessionId,
        steps: event.steps,
        totalPages: event.totalPages,
        status: 'queued',
        warnings: [],
      });
      markBusy(event.sessionId, true);
      break;
    case 'JobProgress': {
      const job = state.jobs.get(event.jobId);
      if (job) {
        const { jobId, event: _name, ...progress } = event;
        state.jobs.set(jobId, { ...job, status: 'running', progress });
      }
      break;
    }
    case 'JobWarning': {
      const job = state.jobs.get(event.jobId);
      if (job) {
        const { jobId, event: _name, ...warning } = event;
        const warnings = job.warnings.length < 1000 ? [...job.warnings, warning] : job.warnings;
        state.jobs.set(jobId, { ...job, warnings });
      }
      break;
    }
    case 'JobFinished': {
      const job = state.jobs.get(event.id);
      if (job) {
        state.jobs.set(event.id, { ...job, status: event.status, error: event.error });
        const stillBusy = [...state.jobs.values()].some(
          (j) => j.sessionId === job.sessionId && (j.status === 'queued' || j.status === 'running'),
        );
        markBusy(job.sessionId, stillBusy);
      }
      break;
    }
    case 'ConfigChanged':
      loadBasics().catch(() => {});
      break;
    default:
      break;
  }
}

function markBusy(sessionId, busy) {
  state.sessions = state.sessions.map((s) => (s.id === sessionId ? { ...s, busy } : s));
}

function addSession(session) {
  if (!state.sessions.some((s) => s.id === session.id)) state.sessions = [...state.sessions, session];
  afterSessionsChanged();
}

/**
 * The shown project's session may have opened, closed or changed id. After
 * a reconnect (`reopen`: the server may have restarted) a project that is
 * no longer open is opened again, as the TUI's attach mode does; one
 * closed while the page watched (by the TUI, an agent, another browser)
 * stays closed until the person opens it again.
 */
function afterSessionsChanged({ reopen: again = false } = {}) {
  if (state.route.view !== 'project') return;
  const open = state.sessions.find((s) => s.projectId === state.route.projectId);
  if (open && open.id !== state.sessionId) {
    state.sessionId = null;
    useSession(open.id);
  } else if (!open && again) {
    state.sessionId = null;
    ensureSession();
  } else if (!open && state.sessionId) {
    state.sessionId = null;
    state.viewError = 'This project was closed by another client (the TUI, an agent or another browser).';
  }
}

// ---- actions -------------------------------------------------------------------

export async function refreshProjects() {
  if (state.auth !== 'ok') return;
  const projects = await call('GET', '/api/v1/projects').catch(() => null);
  if (projects) set({ projects });
}

export async function reopen() {
  set({ viewError: null });
  await ensureSession();
}

/** Applies an op to the shown session; answers { epoch, created } or undefined. */
export async function apply(op, what = 'The change') {
  const id = state.sessionId;
  if (!id) return undefined;
  const result = await attempt(what, () => call('POST', inSession(id, '/history/apply'), op));
  caughtUp(result);
  return result;
}

export async function undoRedo(which) {
  const id = state.sessionId;
  if (!id) return;
  const result = await attempt(which === 'undo' ? 'Undo' : 'Redo', () =>
    call('POST', inSession(id, `/history/${which}`)),
  );
  if (!result) return;
  if (result.epoch === null) {
    toast(which === 'undo' ? 'Nothing to undo' : 'Nothing to redo');
    return;
  }
  toast(`${which === 'undo' ? 'Undid' : 'Redid'}: ${result.label}${result.by ? ` (${result.by}'s)` : ''}`);
  caughtUp(result);
}

/**
 * After a change of ours that answered with its epoch: if the view is
 * behind it, read the scene, whether or not the stream's announcement has
 * come (or was taken while a read of an older epoch was under way).
 */
export function readUpTo(epoch) {
  if (typeof epoch !== 'number') return;
  state.announced = Math.max(state.announced, epoch);
  if (!state.view || epoch > state.view.epoch) {
    want(null);
    refreshScene();
  }
}

/**
 * After a change of ours: the stream announces it (before the API answers)
 * and the scene follows from that; without a stream, read it whole.
 */
function caughtUp(result) {
  if (result && state.link !== 'online') {
    want(null);
    refreshScene();
  }
}

/** The page the route names, else the first. */
export function shownPage() {
  const view = state.view;
  if (!view) return null;
  return (state.route.pageId && view.index.pages.get(state.route.pageId)) || view.index.order[0] || null;
}

// ---- the editor ------------------------------------------------------------------

/** Selects a node (and its page) and opens its translation for editing. */
export function select(pageId, nodeId) {
  if (state.editor && state.editor.nodeId !== nodeId) commitEditor();
  go({ pageId, nodeId });
}

/** Selects a node and puts the focus in its translation as soon as the editor shows it. */
export function edit(pageId, nodeId) {
  state.focusEdit = nodeId;
  select(pageId, nodeId);
  changed();
}

/** Whether `nodeId`'s translation field was asked for the focus (the request is then spent). */
export function takeFocus(nodeId) {
  if (!nodeId || state.focusEdit !== nodeId) return false;
  state.focusEdit = null;
  return true;
}

export function editDraft(draft) {
  if (!state.editor) return;
  state.editor = { ...state.editor, draft };
  keepDraft(state.editor.nodeId, state.editor);
  changed();
}

/** Saves the draft when it differs from what it started from. */
export async function commitEditor() {
  const editor = state.editor;
  if (!editor || editor.conflict || editor.draft === editor.base || !state.view) return;
  const found = state.view.index.nodes.get(editor.nodeId);
  if (!found) return;
  const translation = editor.draft === '' ? null : editor.draft;
  const patch = { kind: { type: 'text', translation } };
  // A final translation is locked: the person changing it says so by
  // setting the state with it (the API's "force").
  if (found.node.kind.state === 'final') patch.kind.state = translation === null ? 'initial' : 'translated';
  const saving = editor.draft;
  // The core refuses the save if the node changed since the draft began
  // (a change the stream has not brought yet), with both values.
  const basedOn = { translation: editor.base === '' ? null : editor.base };
  const op = { type: 'UpdateNode', page: found.page.id, id: editor.nodeId, patch, basedOn };
  const id = state.sessionId;
  let result;
  try {
    result = await call('POST', inSession(id, '/history/apply'), op);
  } catch (e) {
    if (e instanceof ApiError && e.stale && state.editor && state.editor.nodeId === editor.nodeId) {
      state.editor = { ...state.editor, conflict: { theirs: e.stale.current ?? '', origin: null } };
      changed();
      return;
    }
    if (!(e instanceof ApiError && e.status === 401)) toast(`Saving the translation: ${e.message}`, 'error');
    return;
  }
  caughtUp(result);
  markFixed(editor.nodeId);
  if (state.editor && state.editor.nodeId === editor.nodeId) {
    state.editor = { ...state.editor, base: saving, restored: false };
    keepDraft(editor.nodeId, state.editor);
    changed();
  } else {
    keepDraft(editor.nodeId, null);
  }
}

/** A saved node loses the marks of every finished `qa` run. */
function markFixed(nodeId) {
  for (const job of state.jobs.values()) {
    if (!job.steps.includes('qa')) continue;
    const fixed = state.changedSinceQa.get(job.id) ?? new Set();
    fixed.add(nodeId);
    state.changedSinceQa.set(job.id, fixed);
  }
}

/** Shift-click: the blocks from the selected one to `nodeId` on `info`'s page. */
export function selectRange(info, nodeId) {
  const ids = info.texts.map((n) => n.id);
  const from = ids.indexOf(state.route.nodeId);
  const to = ids.indexOf(nodeId);
  if (from < 0 || to < 0) return;
  const [a, b] = from < to ? [from, to] : [to, from];
  state.range = { pageId: info.page.id, nodeIds: ids.slice(a, b + 1) };
  changed();
}

export function clearRange() {
  state.range = null;
  changed();
}

/** The person's answer to a remote change: keep the draft, or take theirs. */
export function resolveConflict(keepMine) {
  const editor = state.editor;
  if (!editor || !editor.conflict) return;
  if (editor.conflict.deleted) {
    state.editor = null;
  } else if (keepMine) {
    state.editor = { ...editor, base: editor.conflict.theirs, conflict: null };
    commitEditor();
  } else {
    state.editor = { ...editor, draft: editor.conflict.theirs, base: editor.conflict.theirs, conflict: null };
  }
  changed();
}

export function setCanvas(patch) {
  state.canvas = { ...state.canvas, ...patch };
  changed();
}

export function setPane(pane) {
  set({ pane });
}

/** Shows every segment ('all') or only those awaiting review ('review'). */
export function setShow(show) {
  set({ show });
}

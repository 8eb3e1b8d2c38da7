// The web workbench: starts the store and renders the app. Files dropped
// anywhere are imported: on the home screen as new projects, in a
// project into it.

import { render } from '../vendor/preact.mjs';
import { useEffect, useState } from '../vendor/hooks.mjs';
import { hasToken } from './api.js';
import { Home, importOnHome } from './home.js';
import { Workbench } from './session.js';
import { dismiss, login, logout, may, start, state } from './store.js';
import { importFiles } from './transfer.js';
import { html, useAutofocus, useStore } from './ui.js';

const LINK = {
  online: ['online', 'Live: changes from elsewhere show at once'],
  connecting: ['connecting…', 'Connecting to the event stream'],
  offline: ['offline', 'The event stream dropped; reconnecting (changes made meanwhile show when it is back)'],
  unauthorized: ['signed out', 'The server wants its token'],
};

function Header() {
  const [text, title] = LINK[state.link] || LINK.connecting;
  return html`<header class="top">
    <a href="#/" class="brand" aria-label="quire: all projects"><img src="/assets/icon.svg" alt="" width="22" height="22" /> quire</a>
    <span class="version muted small">${state.meta ? state.meta.version : ''}</span>
    <span class="grow"></span>
    ${state.meta && state.meta.user && html`<span class="who small" data-testid="who"
      title=${may('edit') ? `Signed in as ${state.meta.user} (${state.meta.role})` : 'Your role may read and follow, not change'}>
      ${state.meta.user}${may('edit') ? '' : ' · read only'}</span>`}
    <span class=${`link link-${state.link}`} role="status" title=${title} data-testid="link">
      <span class="dot" aria-hidden="true">●</span> ${text}</span>
    ${hasToken() && html`<button type="button" class="small" onClick=${logout}>Sign out</button>`}
  </header>`;
}

function Login() {
  const [value, setValue] = useState('');
  const field = useAutofocus();
  const submit = (e) => {
    e.preventDefault();
    if (value.trim()) login(value);
  };
  return html`<main class="center">
    <form class="card login" onSubmit=${submit} aria-labelledby="login-title">
      <h1 id="login-title">This quire needs its token</h1>
      <p class="muted">The server was started with <code>server.token</code>. Enter it to continue; it is kept
        in this tab only and sent as an Authorization header, never in a URL.</p>
      <label for="token">Token</label>
      <input id="token" type="password" autocomplete="current-password" value=${value} ref=${field}
        onInput=${(e) => setValue(e.currentTarget.value)} />
      ${state.loginError && html`<p class="error" role="alert">${state.loginError}</p>`}
      <button type="submit" class="primary">Continue</button>
    </form>
  </main>`;
}

function Toasts() {
  return html`<div class="toasts" aria-live="polite">
    ${state.toasts.map((t) => html`<div class=${`toast toast-${t.kind}`} key=${t.id} role=${t.kind === 'error' ? 'alert' : 'status'}>
      <span>${t.text}</span>
      <button type="button" class="small" aria-label="Dismiss" onClick=${() => dismiss(t.id)}>×</button>
    </div>`)}
  </div>`;
}

function hasFiles(e) {
  return e.dataTransfer && [...e.dataTransfer.types].includes('Files');
}

function App() {
  useStore();
  const [dragging, setDragging] = useState(false);
  useEffect(() => {
    let depth = 0;
    const enter = (e) => {
      if (!hasFiles(e)) return;
      depth += 1;
      setDragging(true);
    };
    const leave = () => {
      depth = Math.max(0, depth - 1);
      if (!depth) setDragging(false);
    };
    const over = (e) => hasFiles(e) && e.preventDefault();
    const drop = (e) => {
      if (!hasFiles(e)) return;
      e.preventDefault();
      depth = 0;
      setDragging(false);
      const files = [...e.dataTransfer.files];
      if (!files.length || state.auth !== 'ok') return;
      if (state.route.view === 'project' && state.sessionId && may('edit')) importFiles(state.sessionId, files);
      else if (state.route.view === 'home' && may('admin')) importOnHome(files);
    };
    window.addEventListener('dragenter', enter);
    window.addEventListener('dragleave', leave);
    window.addEventListener('dragover', over);
    window.addEventListener('drop', drop);
    return () => {
      window.removeEventListener('dragenter', enter);
      window.removeEventListener('dragleave', leave);
      window.removeEventListener('dragover', over);
      window.removeEventListener('drop', drop);
    };
  }, []);
  let body;
  if (state.auth === 'checking') body = html`<main class="center"><p class="muted" role="status">Connecting…</p></main>`;
  else if (state.auth === 'login') body = html`<${Login} />`;
  else if (state.route.view === 'project') body = html`<${Workbench} />`;
  else body = html`<${Home} />`;
  const offline = state.auth === 'ok' && state.link === 'offline';
  return html`<${Header} />
    ${state.refusedAddress && html`<p class="refused" role="alert" data-testid="refused-address">
      quire refuses this page's requests: ${state.refusedAddress}. Nothing you change here can be
      saved until the server's operator allows this address.</p>`}
    ${offline && html`<p class="offline" role="status">The connection to quire dropped; reconnecting…
      Changes made elsewhere meanwhile show once it is back; your unsaved text stays here.</p>`}
    ${body}<${Toasts} />
    ${dragging && html`<div class="drop-overlay" aria-hidden="true"><p>Drop to import</p></div>`}`;
}

const root = document.getElementById('app');
root.textContent = '';
render(html`<${App} />`, root);
start();

// The HTTP API as the page uses it: every call goes to the public
// /api/v1 routes with the bearer token (kept in sessionStorage, never in
// a URL), and every failure becomes an ApiError with the server's code
// and message.

const TOKEN_KEY = 'quire.token';

let token = sessionStorage.getItem(TOKEN_KEY);
const unauthorizedListeners = new Set();
const refusedListeners = new Set();

export class ApiError extends Error {
  constructor(status, code, message, stale = null) {
    super(message);
    this.status = status;
    this.code = code;
    /** For an edit someone changed meanwhile: { field, basedOn, current }. */
    this.stale = stale;
  }
}

export function setToken(value) {
  token = value || null;
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  else sessionStorage.removeItem(TOKEN_KEY);
}

export function hasToken() {
  return Boolean(token);
}

export function authHeaders(extra = {}) {
  return token ? { ...extra, Authorization: `Bearer ${token}` } : extra;
}

/**
 * Called with the server's message whenever it refuses this page's own
 * request for its address (403 forbidden_origin or forbidden_host): a
 * proxy or an origin the server was not told about, which only its
 * operator can fix, so the page says so and what to set.
 */
export function onRefusedAddress(listener) {
  refusedListeners.add(listener);
  return () => refusedListeners.delete(listener);
}

/** Called with no argument whenever the server answers 401. */
export function onUnauthorized(listener) {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

async function failure(response) {
  let code = `http_${response.status}`;
  let message = `${response.status} ${response.statusText}`;
  let stale = null;
  try {
    const body = await response.json();
    if (body && body.error) {
      code = body.error.code;
      message = body.error.message;
      stale = body.error.stale ?? null;
    }
  } catch {
    // Not the API's JSON error body (a proxy's page, say): keep the status.
  }
  if (response.status === 401) unauthorizedListeners.forEach((l) => l());
  if (response.status === 403 && (code === 'forbidden_origin' || code === 'forbidden_host')) {
    refusedListeners.forEach((l) => l(message));
  }
  return new ApiError(response.status, code, message, stale);
}

/**
 * One API call. `body` is sent as JSON, or as is when it is FormData or a
 * Blob. Answers the parsed JSON, or the Response itself with `raw`.
 */
export async function call(method, path, body, { raw = false, signal } = {}) {
  const headers = authHeaders({ Accept: 'application/json' });
  let payload;
  if (body instanceof FormData || body instanceof Blob) {
    payload = body;
  } else if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    payload = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, { method, headers, body: payload, signal, cache: 'no-store' });
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    throw new ApiError(0, 'offline', 'quire cannot be reached; is it still running?');
  }
  if (!response.ok) throw await failure(response);
  return raw ? response : response.json();
}

/** A route of one session (never the server's "current" one, which other clients move). */
export function inSession(sessionId, rest) {
  return `/api/v1/sessions/${sessionId}${rest}`;
}

/** A blob's URL; `maxSide` asks for a thumbnail. Blob URLs carry no token: see blobUrl in images.js. */
export function blobPath(sessionId, hash, maxSide) {
  const base = inSession(sessionId, `/blobs/${hash}`);
  return maxSide ? `${base}?maxSide=${maxSide}` : base;
}

/** Saves a download the way a link with `download` does. */
export function saveBytes(blob, fileName) {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** The file name a Content-Disposition header gives, else `fallback`. */
export function fileNameOf(response, fallback) {
  const disposition = response.headers.get('Content-Disposition') || '';
  const match = /filename="?([^";]+)"?/i.exec(disposition);
  return match ? match[1] : fallback;
}

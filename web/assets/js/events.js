// The server's event stream (GET /api/v1/events), read with fetch so
// that the bearer token travels in a header (EventSource cannot set one).
// A dropped stream is reconnected with Last-Event-ID, so the server
// replays what was missed (or sends a fresh Snapshot); meanwhile the
// page says it is offline. A stream that stays silent past two keep-alive
// periods is taken for dead and reconnected.

import { authHeaders } from './api.js';

const KEEP_ALIVE_MS = 15_000;
const SILENT_MS = 2 * KEEP_ALIVE_MS + 5_000;

/**
 * Parses server-sent events out of text chunks. `feed` returns the events
 * completed by the chunk: { id, event, data }.
 */
export class SseParser {
  constructor() {
    this.buffer = '';
    this.reset();
  }

  reset() {
    this.id = null;
    this.event = '';
    this.data = [];
  }

  feed(chunk) {
    const text = this.buffer + chunk;
    const out = [];
    const newline = /\r\n|\r|\n/g;
    let start = 0;
    let match;
    while ((match = newline.exec(text)) !== null) {
      // A lone \r at the end may be the first half of a \r\n.
      if (match[0] === '\r' && match.index + 1 === text.length) break;
      this.line(text.slice(start, match.index), out);
      start = match.index + match[0].length;
    }
    this.buffer = text.slice(start);
    return out;
  }

  line(line, out) {
    if (line === '') {
      if (this.data.length) out.push({ id: this.id, event: this.event || 'message', data: this.data.join('\n') });
      this.event = '';
      this.data = [];
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
    else if (field === 'id' && !value.includes('\0')) this.id = value;
  }
}

/**
 * Follows the stream until `stop()` is called. `onEvents(list)` gets each
 * chunk's parsed events ({ seq, name, body }) at once, so a burst is one
 * update; `onStatus(status)` gets 'connecting', 'online', 'offline' or
 * 'unauthorized'.
 */
export function follow({ onEvents, onStatus }) {
  let stopped = false;
  let controller = null;
  let lastId = null;
  let retryMs = 250;
  let wake = null;

  async function once() {
    controller = new AbortController();
    const headers = authHeaders({ Accept: 'text/event-stream' });
    if (lastId !== null) headers['Last-Event-ID'] = lastId;
    const response = await fetch('/api/v1/events', { headers, signal: controller.signal, cache: 'no-store' });
    if (response.status === 401) {
      onStatus('unauthorized');
      return 'unauthorized';
    }
    if (!response.ok || !response.body) throw new Error(`events: ${response.status}`);
    onStatus('online');
    retryMs = 250;
    const parser = new SseParser();
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let silence = setTimeout(() => controller.abort(), SILENT_MS);
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        clearTimeout(silence);
        silence = setTimeout(() => controller.abort(), SILENT_MS);
        const events = [];
        for (const e of parser.feed(value)) {
          if (e.id !== null) lastId = e.id;
          try {
            events.push({ seq: Number(e.id), name: e.event, body: JSON.parse(e.data) });
          } catch {
            // Not JSON: not one of quire's events; skip it.
          }
        }
        if (events.length) onEvents(events);
      }
    } finally {
      clearTimeout(silence);
    }
    return 'ended';
  }

  async function run() {
    while (!stopped) {
      onStatus('connecting');
      let outcome;
      try {
        outcome = await once();
      } catch {
        outcome = 'failed';
      }
      if (stopped) break;
      if (outcome === 'unauthorized') {
        // Wait for a new token (reconnect() wakes us).
        await new Promise((resolve) => { wake = resolve; });
        continue;
      }
      onStatus('offline');
      await new Promise((resolve) => {
        wake = resolve;
        setTimeout(resolve, retryMs);
      });
      retryMs = Math.min(retryMs * 2, 4_000);
    }
  }

  run();
  return {
    stop() {
      stopped = true;
      if (controller) controller.abort();
      if (wake) wake();
    },
    /** Reconnects now (after a login, or when the browser is back online). */
    reconnect() {
      retryMs = 250;
      if (controller) controller.abort();
      if (wake) wake();
    },
  };
}

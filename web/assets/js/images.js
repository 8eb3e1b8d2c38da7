// Image URLs for blobs. Without a token an <img> loads the blob route
// itself (immutable, so the browser caches it for good). With a token the
// image must be fetched with the Authorization header, so it is fetched
// once and shown through an object URL, the last few hundred kept.

import { useEffect, useState } from '../vendor/hooks.mjs';
import { authHeaders, blobPath, hasToken } from './api.js';

const KEEP = 400;
const loaded = new Map();

function load(path) {
  let entry = loaded.get(path);
  if (entry) {
    loaded.delete(path);
    loaded.set(path, entry);
    return entry;
  }
  entry = fetch(path, { headers: authHeaders() }).then((r) => {
    if (!r.ok) throw new Error(`${r.status}`);
    return r.blob();
  }).then((b) => URL.createObjectURL(b));
  entry.catch(() => loaded.delete(path));
  loaded.set(path, entry);
  while (loaded.size > KEEP) {
    const [oldest, url] = loaded.entries().next().value;
    loaded.delete(oldest);
    url.then((u) => URL.revokeObjectURL(u), () => {});
  }
  return entry;
}

/** A URL an <img> can show for the blob (a thumbnail with `maxSide`), or null until it is ready. */
export function useBlobUrl(sessionId, hash, maxSide) {
  const path = sessionId && hash ? blobPath(sessionId, hash, maxSide) : null;
  const [url, setUrl] = useState(path && !hasToken() ? path : null);
  useEffect(() => {
    if (!path) {
      setUrl(null);
      return undefined;
    }
    if (!hasToken()) {
      setUrl(path);
      return undefined;
    }
    let live = true;
    load(path).then((u) => live && setUrl(u), () => live && setUrl(null));
    return () => {
      live = false;
    };
  }, [path]);
  return url;
}

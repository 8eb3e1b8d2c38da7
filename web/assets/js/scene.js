// What the views need to know about a scene, computed once per epoch:
// pages and nodes by id, each page's image and its state counts, and the
// reading order of its text nodes.

export const STATES = ['initial', 'translated', 'reviewed', 'final'];

/** What a box or a strip segment is coloured by: the states, with machine
 * output nobody has reviewed told apart from a person's translation. */
export const SHADES = ['initial', 'machine', 'translated', 'reviewed', 'final'];


export const STATE_LABELS = {
  initial: 'untranslated',
  translated: 'translated',
  reviewed: 'reviewed',
  final: 'final',
};

export const SHADE_LABELS = { ...STATE_LABELS, machine: 'machine-translated', translated: 'translated by a person' };

/** A text node's state; nodes written before states existed infer it. */
export function stateOf(kind) {
  if (kind.state) return kind.state;
  return kind.translation ? 'translated' : 'initial';
}

/** The state a box is coloured by: machine output is told apart from a person's. */
/** Translated but not yet reviewed (a person's, a machine's), or translated before its source changed. */
export function needsReview(kind) {
  return Boolean(kind.translation) && (stateOf(kind) === 'translated' || Boolean(kind.sourceEdit));
}

export function shadeOf(kind) {
  const s = stateOf(kind);
  // An engine's or an agent's (MCP) translation nobody has reviewed.
  if (s === 'translated' && kind.origin && kind.origin.by !== 'human') return 'machine';
  return s;
}

export function indexScene(scene) {
  const pages = new Map();
  const nodes = new Map();
  const order = [];
  for (const page of scene.pages) {
    const texts = [];
    let source = null;
    let rendered = null;
    let cleaned = null;
    let textMask = null;
    const counts = { initial: 0, machine: 0, translated: 0, reviewed: 0, final: 0 };
    for (const node of page.nodes) {
      nodes.set(node.id, { page, node });
      const kind = node.kind;
      if (kind.type === 'text') {
        texts.push(node);
        counts[shadeOf(kind)] += 1;
      } else if (kind.type === 'image' && kind.role === 'source' && !source) {
        source = kind.blob;
      } else if (kind.type === 'image' && kind.role === 'rendered') {
        rendered = kind.blob;
      } else if (kind.type === 'image' && kind.role === 'cleaned') {
        cleaned = kind.blob;
      } else if (kind.type === 'mask' && kind.role === 'text') {
        textMask = kind.blob;
      }
    }
    const info = { page, texts, source, rendered, cleaned, textMask, counts, number: order.length + 1 };
    pages.set(page.id, info);
    order.push(info);
  }
  return { pages, nodes, order };
}

/** The next text node after `nodeId` in reading order (pages, then nodes) that `wanted` accepts. */
export function nextNode(index, pageId, nodeId, wanted, step = 1) {
  const flat = [];
  for (const info of index.order) for (const node of info.texts) flat.push([info.page.id, node]);
  if (!flat.length) return null;
  let at = flat.findIndex(([, n]) => n.id === nodeId);
  if (at < 0) {
    // Nothing selected: start just before the shown page's first node.
    const first = Math.max(0, flat.findIndex(([p]) => p === pageId));
    at = step > 0 ? first - 1 : first;
  }
  for (let i = 1; i <= flat.length; i += 1) {
    const [page, node] = flat[(((at + i * step) % flat.length) + flat.length) % flat.length];
    if (wanted(node)) return { pageId: page, nodeId: node.id };
  }
  return null;
}

/** A one-line preview of a text, at most `max` characters. */
export function preview(text, max = 60) {
  const line = (text || '').replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** A subtitle cue's timing as 00:01:02.345. */
export function clock(ms) {
  const pad = (n, w = 2) => String(n).padStart(w, '0');
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor(ms / 60_000) % 60;
  const s = Math.floor(ms / 1000) % 60;
  return `${pad(h)}:${pad(m)}:${pad(s)}.${pad(ms % 1000, 3)}`;
}

// How a translation is lettered on the page: face, size, weight, italic,
// alignment, colour, outline, rows or columns, and (for one block)
// whether its source is cleaned. The same form edits one block's style
// and the project's house style (what blocks that name nothing are set
// in); an empty field means "as the project / quire decides".

import { useState } from '../vendor/hooks.mjs';
import { apply, may, state } from './store.js';
import { html } from './ui.js';

const WEIGHTS = [[300, 'Light'], [400, 'Regular'], [700, 'Bold'], [900, 'Black']];
const ALIGNS = [['left', 'Left'], ['center', 'Centre'], ['right', 'Right']];

/** A form's fields from a style (strings, '' when unset). */
function fields(style) {
  const s = style || {};
  const text = (v) => (v === undefined || v === null ? '' : String(v));
  return {
    fontFamily: text(s.fontFamily), fontSize: text(s.fontSize), fontWeight: text(s.fontWeight),
    italic: text(s.italic), align: text(s.align), color: text(s.color), stroke: text(s.stroke),
    vertical: text(s.vertical), clean: text(s.clean),
  };
}

/** The style patch that turns `style` into what `form` says: changed fields only, null clears. */
export function stylePatch(style, form, block) {
  const was = fields(style);
  const value = {
    fontFamily: (v) => v.trim(),
    fontSize: (v) => Number(v),
    fontWeight: (v) => Number(v),
    italic: (v) => v === 'true',
    align: (v) => v,
    color: (v) => v,
    stroke: (v) => v,
    vertical: (v) => v === 'true',
    clean: (v) => v === 'true',
  };
  const patch = {};
  for (const key of Object.keys(value)) {
    if (key === 'clean' && !block) continue;
    const v = key === 'fontFamily' ? form[key].trim() : form[key];
    if (v === was[key]) continue;
    patch[key] = v === '' ? null : value[key](v);
  }
  return patch;
}

function Lettering({ style, block, onSave, testId }) {
  const [form, setForm] = useState(fields(style));
  const set = (key) => (e) => setForm({ ...form, [key]: e.currentTarget.value });
  const writable = may('edit');
  const save = (e) => {
    e.preventDefault();
    const patch = stylePatch(style, form, block);
    if (Object.keys(patch).length > 0) onSave(patch);
  };
  const size = form.fontSize !== '' && !(Number(form.fontSize) > 0);
  const choice = (key, options, unset) => html`<select name=${key} value=${form[key]} onChange=${set(key)}>
      <option value="">${unset}</option>
      ${options.map(([v, label]) => html`<option value=${String(v)}>${label}</option>`)}
    </select>`;
  return html`<form class="lettering" data-testid=${testId} onSubmit=${save}>
    <fieldset disabled=${!writable}>
      <label>Face <input name="fontFamily" list="font-faces" value=${form.fontFamily}
        placeholder=${block ? 'as the project' : 'Comic Neue'} onInput=${set('fontFamily')} /></label>
      <datalist id="font-faces"><option value="Comic Neue" /><option value="DejaVu Sans" /><option value="Noto Sans CJK JP" /></datalist>
      <label>Size <input name="fontSize" type="number" min="1" step="0.5" value=${form.fontSize}
        placeholder="fit" aria-invalid=${size} onInput=${set('fontSize')} /></label>
      <label>Weight ${choice('fontWeight', WEIGHTS, block ? 'as the project' : 'Bold')}</label>
      <label>Italic ${choice('italic', [['true', 'Italic'], ['false', 'Upright']], block ? 'as the project' : 'Upright')}</label>
      <label>Align ${choice('align', ALIGNS, block ? 'as the project' : 'Centre')}</label>
      <label>Colour <input name="color" value=${form.color} placeholder="contrasting" pattern="#[0-9a-fA-F]{6}"
        onInput=${set('color')} />${/^#[0-9a-fA-F]{6}$/.test(form.color) && html`<span class="swatch" style=${`background:${form.color}`}></span>`}</label>
      <label>Outline <input name="stroke" value=${form.stroke} placeholder="none" pattern="#[0-9a-fA-F]{6}"
        onInput=${set('stroke')} /></label>
      <label>Direction ${choice('vertical', [['false', 'Rows'], ['true', 'Columns (CJK)']], 'by the balloon')}</label>
      ${block && html`<label title="Whether clean and render clear this block's source">Clean
        ${choice('clean', [['true', 'Always'], ['false', 'Never']], 'when translated')}</label>`}
      <button type="submit" class="primary" disabled=${size}>Set lettering</button>
    </fieldset>
  </form>`;
}

/** The selected block's lettering (image pages only: text pages are not typeset). */
export function BlockLettering({ page, node }) {
  const save = (patch) => apply({ type: 'UpdateNode', page: page.id, id: node.id,
    patch: { kind: { type: 'text', style: patch } } }, 'Setting the lettering');
  return html`<details class="lettering-panel">
    <summary>Lettering</summary>
    <${Lettering} key=${node.id} style=${node.kind.style} block=${true} onSave=${save} testId="block-lettering" />
  </details>`;
}

/** The project's house style, in the project's menu bar. */
export function HouseStyle() {
  const project = state.view.scene.project;
  if (!may('edit')) return null;
  const save = (patch) => apply({ type: 'UpdateProject', patch: { style: patch } }, "Setting the project's lettering");
  return html`<details class="menu">
    <summary role="button" aria-label="Lettering" data-testid="house-style">Lettering</summary>
    <div class="menu-list">
      <${Lettering} key=${JSON.stringify(project.style || {})} style=${project.style} block=${false} onSave=${save} testId="project-lettering" />
    </div>
  </details>`;
}

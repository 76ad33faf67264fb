"""Page-side JavaScript snippets the built-in actions evaluate on an element (state reads, synthetic input,
dropdown options, value serialisation). Kept apart so the Python of each action reads on its own."""

STATE_JS = """(el) => {
  const out = { connected: el.isConnected };
  if (el.localName === 'input' && (el.type === 'checkbox' || el.type === 'radio')) out.checked = el.checked;
  for (const a of ['aria-checked', 'aria-expanded', 'aria-pressed', 'aria-selected']) {
    const v = el.getAttribute(a); if (v !== null) out[a] = v;
  }
  return out;
}"""

# Whether activating ``el`` can start a navigation: a link (or an ancestor link), a submit control of a form,
# or an element (or ancestor, or a label's control) with a handler or a tracked listener that could call
# ``location``/``submit()``. Clicking anything else (a plain checkbox, text) cannot navigate, so the action
# does not wait a grace period for one. Detached elements count as "can navigate" (the page may be gone).
MAY_NAVIGATE_JS = """(el) => {
  if (!el.isConnected) return true;
  const tracked = window[Symbol.for('notebook_agent.handlers')];
  const H = ['onclick', 'onmousedown', 'onmouseup', 'onpointerdown', 'onpointerup', 'onchange', 'oninput'];
  const up = (n) => n.parentElement || (n.getRootNode && n.getRootNode().host) || null;
  const starts = [el];
  if (el.localName === 'label' && el.control) starts.push(el.control);
  for (const s of starts) {
    for (let n = s; n && n.nodeType === 1; n = up(n)) {
      const t = n.localName;
      if ((t === 'a' || t === 'area') && n.hasAttribute('href')) return true;
      for (const h of H) if (n[h]) return true;
      if (tracked && tracked.has(n)) return true;
    }
    const t = s.localName, type = (s.getAttribute('type') || '').toLowerCase();
    if (s.form && ((t === 'button' && (type === '' || type === 'submit')) ||
        (t === 'input' && (type === 'submit' || type === 'image')))) return true;
  }
  return !!(document.onclick || window.onclick || document.body && document.body.onclick);
}"""

SYNTHETIC_CLICK_JS = """(el) => {
  el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
  const r = el.getBoundingClientRect();
  const base = { bubbles: true, cancelable: true, composed: true, view: window, button: 0,
                 clientX: r.left + r.width / 2, clientY: r.top + r.height / 2 };
  const fire = (t) => el.dispatchEvent(t.startsWith('pointer')
      ? new PointerEvent(t, { ...base, pointerId: 1, isPrimary: true, pointerType: 'mouse' })
      : new MouseEvent(t, base));
  ['pointerover', 'pointerenter', 'mouseover', 'mouseenter', 'pointerdown', 'mousedown'].forEach(fire);
  if (el.focus) el.focus({ preventScroll: true });
  ['pointerup', 'mouseup'].forEach(fire);
  el.click();
}"""

SYNTHETIC_HOVER_JS = """(el) => {
  el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
  const r = el.getBoundingClientRect();
  const base = { bubbles: true, cancelable: true, composed: true, view: window,
                 clientX: r.left + r.width / 2, clientY: r.top + r.height / 2 };
  for (const t of ['pointerover', 'pointerenter', 'mouseover', 'mouseenter', 'pointermove', 'mousemove'])
    el.dispatchEvent(t.startsWith('pointer') ? new PointerEvent(t, { ...base, pointerId: 1, isPrimary: true })
                                             : new MouseEvent(t, base));
}"""

EDIT_INFO_JS = """(el) => {
  const tag = el.localName, type = tag === 'input' ? el.type : '';
  const NOT_TEXT = ['checkbox', 'radio', 'submit', 'button', 'reset', 'image', 'file', 'range', 'color', 'hidden'];
  return {
    tag, type,
    editable: (tag === 'input' && !NOT_TEXT.includes(type)) || tag === 'textarea' || el.isContentEditable,
    readonly: !!el.readOnly, disabled: tag === 'input' || tag === 'textarea' ? el.matches(':disabled') : false,
    ce: el.isContentEditable,
  };
}"""

# The focused element, if it lies inside ``el`` (through shadow roots); else null.
ACTIVE_JS = """(el) => {
  let a = document.activeElement;
  while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
  for (let n = a; n; n = n.parentNode || n.host) if (n === el) return a;
  return null;
}"""

SYNTHETIC_INPUT_JS = """(el, text) => {
  el.focus();
  if (el.isContentEditable) {
    el.textContent = text;
    el.dispatchEvent(new InputEvent('input', { bubbles: true, inputType: 'insertText', data: text }));
    return;
  }
  const proto = el.localName === 'textarea' ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
  Object.getOwnPropertyDescriptor(proto, 'value').set.call(el, text);
  el.dispatchEvent(new Event('input', { bubbles: true }));
  el.dispatchEvent(new Event('change', { bubbles: true }));
}"""

VALUE_JS = """(el) => el.isContentEditable ? el.innerText
  : ('value' in el && el.localName !== 'button' && el.localName !== 'li') ? String(el.value)
  : (el.innerText || el.textContent || '').trim()"""

# Finds the options of a dropdown: native <select>, <input list=...>, or ARIA (role=option / menuitem)
# inside the widget, in what it controls/owns, or (once opened) in any visible listbox on the page.
OPTIONS_LIB = """
const SEL = '[role=option],[role=menuitem],[role=menuitemradio],[role=menuitemcheckbox]';
function visible(e) {
  const r = e.getBoundingClientRect();
  if (r.width <= 0 || r.height <= 0) return false;
  const cs = getComputedStyle(e);
  return cs.visibility === 'visible' && cs.display !== 'none' && cs.opacity !== '0';
}
function deepAll(root, sel, out) {
  for (const e of root.querySelectorAll(sel)) out.push(e);
  for (const e of root.querySelectorAll('*')) if (e.shadowRoot) deepAll(e.shadowRoot, sel, out);
  return out;
}
function textOf(e) {
  return (e.getAttribute('aria-label') || e.innerText || e.textContent || '').replace(/\\s+/g, ' ').trim();
}
function customOptions(el, anywhere) {
  const root = el.getRootNode();
  const byId = (id) => (root.getElementById ? root.getElementById(id) : null) || document.getElementById(id);
  const containers = [el];
  for (const a of ['aria-controls', 'aria-owns'])
    for (const id of (el.getAttribute(a) || '').split(/\\s+/)) {
      const c = id && byId(id);
      if (c) containers.push(c);
    }
  let opts = [];
  for (const c of containers) deepAll(c, SEL, opts);
  opts = opts.filter(visible);
  if (!opts.length && anywhere) {
    for (const lb of deepAll(document, '[role=listbox],[role=menu]', [])) if (visible(lb)) deepAll(lb, SEL, opts);
    opts = opts.filter(visible);
  }
  return Array.from(new Set(opts));
}
"""

OPTIONS_INFO_JS = (
    "(el, anywhere) => {"
    + OPTIONS_LIB
    + """
  const tag = el.localName;
  const clean = (s) => (s || '').replace(/\\s+/g, ' ').trim();
  if (tag === 'select')
    return { kind: 'select', multiple: el.multiple,
             options: Array.from(el.options).map((o) => ({ text: clean(o.label || o.text), value: o.value,
                                                           disabled: o.disabled, selected: o.selected })) };
  if (tag === 'input' && el.list)
    return { kind: 'datalist', options: Array.from(el.list.options).map((o) => ({ text: clean(o.label || o.value),
             value: o.value, disabled: o.disabled, selected: false })) };
  const opts = customOptions(el, anywhere);
  // Only something that says it is a dropdown gets clicked open: a plain button is never "opened".
  const popup = el.getAttribute('aria-haspopup') || el.getAttribute('aria-controls') || el.getAttribute('aria-owns')
    || el.getAttribute('aria-expanded') !== null || ['combobox', 'listbox'].includes(el.getAttribute('role'));
  return { kind: 'custom', popup: !!popup, expanded: el.getAttribute('aria-expanded'),
           options: opts.map((o) => ({ text: textOf(o), value: '', disabled: o.getAttribute('aria-disabled') === 'true',
                                        selected: o.getAttribute('aria-selected') === 'true' })) };
}"""
)

OPTION_HANDLE_JS = "(el, k) => {" + OPTIONS_LIB + "return customOptions(el, true)[k] || null; }"

SELECT_FALLBACK_JS = """(el, k) => {
  if (el.multiple) el.options[k].selected = true; else el.selectedIndex = k;
  el.dispatchEvent(new Event('input', { bubbles: true }));
  el.dispatchEvent(new Event('change', { bubbles: true }));
}"""

SHOWN_JS = """(el) => {
  if (el.localName === 'select' && el.multiple)
    return Array.from(el.selectedOptions, (o) => "'" + (o.label || o.text).trim() + "'").join(', ') || 'none';
  if (el.localName === 'select') { const o = el.options[el.selectedIndex]; return o ? (o.label || o.text).trim() : ''; }
  if ('value' in el && el.localName === 'input') return el.value;
  return (el.innerText || el.textContent || '').replace(/\\s+/g, ' ').trim().slice(0, 80);
}"""

JS_SERIALIZE = """(v) => {
  if (v === undefined) return { u: 1 };
  const seen = new WeakSet();
  try {
    return { j: JSON.stringify(v, (k, x) => {
      if (typeof Node !== 'undefined' && x instanceof Node)
        return x.nodeType === 1 ? '<' + x.localName + (x.id ? '#' + x.id : '') + '>' : x.nodeName;
      if (typeof x === 'bigint') return x.toString();
      if (typeof x === 'function') return '[function]';
      if (x && typeof x === 'object') { if (seen.has(x)) return '[circular]'; seen.add(x); }
      return x;
    }) };
  } catch (e) { return { j: JSON.stringify(String(v)) }; }
}"""


def user_script_js(inner: str, key: str) -> str:
    """The wrapper ``execute_javascript`` evaluates in the page's main world: the model's script (``inner``,
    an async arrow function) runs with ``signal``, the signal of a fresh ``AbortController``, in scope, and
    its value comes back serialised by ``JS_SERIALIZE``. The controller is kept on ``globalThis[key]``
    (not enumerable) so that :data:`ABORT_USER_SCRIPT_JS` can abort it when the run is stopped, during the
    script or after it (a ``setInterval`` it left running checks ``signal.aborted``). A script declaring its
    own ``signal`` just shadows it: the script is a function of its own inside the wrapper."""
    return (
        "async () => {\n"
        "  const __ac = new AbortController();\n"
        f"  try {{ Object.defineProperty(globalThis, {key!r}, {{ value: __ac, configurable: true }}); }}\n"
        "  catch (e) {}\n"
        "  const signal = __ac.signal;\n"
        f"  const __v = await ({inner})();\n"
        f"  return ({JS_SERIALIZE})(__v);\n"
        "}"
    )


# Aborts the controller of one ``execute_javascript`` call (see ``user_script_js``); True if it was there.
ABORT_USER_SCRIPT_JS = """([key, reason]) => {
  const c = globalThis[key];
  if (!c) return false;
  if (!c.signal.aborted) c.abort(new DOMException(reason, 'AbortError'));
  return true;
}"""

# What pressing keys would act on: the element (or the focused one, through shadow roots and same-origin
# frames), whether Enter would submit its form, and that form's submit buttons.
KEY_TARGET_JS = """(el) => {
  let a = el || document.activeElement;
  while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
  while (a && (a.localName === 'iframe' || a.localName === 'frame')) {
    try { a = a.contentDocument.activeElement; } catch (e) { break; }
  }
  if (!a || a === document.body || a === document.documentElement) return null;
  const clean = (s) => (s || '').replace(/\\s+/g, ' ').trim().slice(0, 120);
  const attrs = {};
  for (const k of ['type', 'name', 'id', 'aria-label', 'title', 'value', 'href'])
    if (a.getAttribute && a.getAttribute(k)) attrs[k] = clean(a.getAttribute(k));
  const form = a.form || (a.closest && a.closest('form'));
  const SUBMITS = 'button:not([type]), button[type=submit], input[type=submit], input[type=image]';
  const label = (b) => clean(b.innerText || b.value || b.getAttribute('aria-label') || b.title);
  const submits = form ? Array.from(form.querySelectorAll(SUBMITS)).map(label).filter(Boolean) : [];
  const NOT_TEXT = ['checkbox', 'radio', 'submit', 'button', 'reset', 'image', 'file'];
  const textual = a.localName === 'input' && !NOT_TEXT.includes(a.type);
  return { tag: a.localName, text: clean(a.innerText || a.value || ''), attributes: attrs,
           enter_submits: !!form && (textual || a.localName === 'button' || a.type === 'submit'), submits };
}"""
AFTER_ACTION_JS = f"(el) => [({MAY_NAVIGATE_JS})(el), ({STATE_JS})(el)]"

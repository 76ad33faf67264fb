"""The built-in browser actions, one :class:`~notebook_agent.core.tools.Tool` each.

Names and parameters follow page-agent's design note (``done``, ``wait``, ``ask_user``,
``click_element_by_index``, ``input_text``, ``select_dropdown_option``, ``scroll``, ``scroll_horizontally``,
``execute_javascript``) plus ``send_keys``, ``go_to_url``, ``go_back``, ``switch_tab`` and ``hover``.

Where page-agent is weak these do better while keeping the names: input is real Playwright input (trusted
clicks, ``fill``, key presses) with a synthetic JavaScript path only as a fallback; ``input_text`` reports
the field's resulting live value; ``select_dropdown_option`` matches exact, then case-insensitive, then
substring, lists the options on a miss and also drives ARIA listbox/combobox dropdowns; results say when an
action navigated, opened a tab or triggered a dialog.

Every result is text for the model. Failures start with "Error: " and set ``is_error``; an unknown or stale
index is such a result, never an exception.
"""

from __future__ import annotations

import asyncio
import inspect
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeAlias

from playwright.async_api import ElementHandle, Frame, Page
from playwright.async_api import Error as PlaywrightError
from pydantic import BaseModel, ConfigDict, Field

from ..core.abort import AbortSignal
from ..core.tools import OnUpdate, Tool, ToolResult
from .session import ActionError, BrowserSession, _first_line, _short
from .snapshot import ElementInfo, call_page_api

AskUser: TypeAlias = Callable[..., Awaitable[str]]
"""``async def on_ask_user(question: str, signal: AbortSignal) -> str`` (the signal argument is optional)."""


# -- parameter models --------------------------------------------------------------------------------------
class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DoneParams(_Params):
    text: str = Field(description="The final answer or summary for the user.")
    success: bool = Field(True, description="True only if the task was fully completed.")


class WaitParams(_Params):
    seconds: float = Field(1, ge=1, le=10, description="Seconds to wait (1-10).")


class AskUserParams(_Params):
    question: str = Field(description="The question for the user.")


class IndexParams(_Params):
    index: int = Field(ge=0, description="Index of the element in the latest browser state.")


class InputTextParams(_Params):
    index: int = Field(ge=0, description="Index of the text field.")
    text: str = Field(description="Text to type; replaces the current value.")


class SelectParams(_Params):
    index: int = Field(ge=0, description="Index of the <select> or dropdown.")
    text: str = Field(description="Visible text of the option to choose.")


class ScrollParams(_Params):
    down: bool = Field(True, description="True scrolls down, False up.")
    num_pages: float = Field(1.0, ge=0, le=10, description="How far, in viewport heights (e.g. 0.5, 1, 3).")
    pixels: int | None = Field(None, ge=0, description="Exact distance in pixels; takes precedence over num_pages.")
    index: int | None = Field(None, ge=0, description="Scroll the container holding this element instead of the page.")


class ScrollHorizontallyParams(_Params):
    right: bool = Field(True, description="True scrolls right, False left.")
    pixels: int = Field(ge=0, description="Distance in pixels.")
    index: int | None = Field(None, ge=0, description="Scroll the container holding this element instead of the page.")


class ExecuteJavascriptParams(_Params):
    script: str = Field(
        description="JavaScript run in the page. An expression, or statements ending in `return value`; await works."
    )


class SendKeysParams(_Params):
    keys: str = Field(
        description="Keys in Playwright syntax, e.g. 'Enter', 'Tab', 'Escape', 'Control+A', 'ArrowDown'; "
        "several separated by spaces are pressed in turn."
    )
    index: int | None = Field(None, ge=0, description="Focus this element first (else the focused element gets them).")


class GoToUrlParams(_Params):
    url: str = Field(description="Absolute URL to open in the current tab.")


class GoBackParams(_Params):
    pass


class SwitchTabParams(_Params):
    tab_id: int = Field(ge=0, description="Tab id as listed under Tabs in the browser state.")


# -- page-side snippets ------------------------------------------------------------------------------------
_STATE_JS = """(el) => {
  const out = { connected: el.isConnected };
  if (el.localName === 'input' && (el.type === 'checkbox' || el.type === 'radio')) out.checked = el.checked;
  for (const a of ['aria-checked', 'aria-expanded', 'aria-pressed', 'aria-selected']) {
    const v = el.getAttribute(a); if (v !== null) out[a] = v;
  }
  return out;
}"""

_SYNTHETIC_CLICK_JS = """(el) => {
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

_SYNTHETIC_HOVER_JS = """(el) => {
  el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
  const r = el.getBoundingClientRect();
  const base = { bubbles: true, cancelable: true, composed: true, view: window,
                 clientX: r.left + r.width / 2, clientY: r.top + r.height / 2 };
  for (const t of ['pointerover', 'pointerenter', 'mouseover', 'mouseenter', 'pointermove', 'mousemove'])
    el.dispatchEvent(t.startsWith('pointer') ? new PointerEvent(t, { ...base, pointerId: 1, isPrimary: true })
                                             : new MouseEvent(t, base));
}"""

_EDIT_INFO_JS = """(el) => {
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
_ACTIVE_JS = """(el) => {
  let a = document.activeElement;
  while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
  for (let n = a; n; n = n.parentNode || n.host) if (n === el) return a;
  return null;
}"""

_SYNTHETIC_INPUT_JS = """(el, text) => {
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

_VALUE_JS = """(el) => el.isContentEditable ? el.innerText
  : ('value' in el && el.localName !== 'button' && el.localName !== 'li') ? String(el.value)
  : (el.innerText || el.textContent || '').trim()"""

# Finds the options of a dropdown: native <select>, <input list=...>, or ARIA (role=option / menuitem)
# inside the widget, in what it controls/owns, or (once opened) in any visible listbox on the page.
_OPTIONS_LIB = """
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

_OPTIONS_INFO_JS = (
    "(el, anywhere) => {"
    + _OPTIONS_LIB
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
  const popup = el.getAttribute('aria-haspopup') || el.getAttribute('aria-controls') || el.getAttribute('aria-owns')
    || ['combobox', 'listbox', 'button'].includes(el.getAttribute('role')) || tag === 'button';
  return { kind: 'custom', popup: !!popup, expanded: el.getAttribute('aria-expanded'),
           options: opts.map((o) => ({ text: textOf(o), value: '', disabled: o.getAttribute('aria-disabled') === 'true',
                                        selected: o.getAttribute('aria-selected') === 'true' })) };
}"""
)

_OPTION_HANDLE_JS = "(el, k) => {" + _OPTIONS_LIB + "return customOptions(el, true)[k] || null; }"

_SELECT_FALLBACK_JS = """(el, k) => {
  el.selectedIndex = k;
  el.dispatchEvent(new Event('input', { bubbles: true }));
  el.dispatchEvent(new Event('change', { bubbles: true }));
}"""

_SHOWN_JS = """(el) => {
  if (el.localName === 'select') { const o = el.options[el.selectedIndex]; return o ? (o.label || o.text).trim() : ''; }
  if ('value' in el && el.localName === 'input') return el.value;
  return (el.innerText || el.textContent || '').replace(/\\s+/g, ' ').trim().slice(0, 80);
}"""

_JS_SERIALIZE = """(v) => {
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


# -- helpers -----------------------------------------------------------------------------------------------
def _ms(seconds: float) -> float:
    return seconds * 1000.0


async def _title_note(page: Page) -> str:
    """`` (title '...')`` for an action result, or nothing when the page has no title (or is gone)."""
    try:
        title = await page.title()
    except PlaywrightError:
        return ""
    return f" (title {_quote(title)})" if title else ""


def _quote(text: str, limit: int = 80) -> str:
    return "'" + _short(text, limit) + "'"


def match_option(options: list[str], wanted: str) -> tuple[int | None, list[int]]:
    """Index of the option matching ``wanted``: exact, then case-insensitive, then a unique substring.
    Returns (index or None, candidate indices when the substring match was ambiguous)."""
    w = " ".join(wanted.split())
    norm = [" ".join(o.split()) for o in options]
    for i, o in enumerate(norm):
        if o == w:
            return i, []
    lw = w.casefold()
    for i, o in enumerate(norm):
        if o.casefold() == lw:
            return i, []
    if not lw:
        return None, []
    subs = [i for i, o in enumerate(norm) if lw in o.casefold()]
    if len(subs) == 1:
        return subs[0], []
    return None, subs


class BrowserTool(Tool):
    """Base for browser actions: binds the session, turns failures into "Error: ..." results, adds notices."""

    execution_mode = "sequential"
    needs_page = True
    failure = "Failed"

    def __init__(self, browser: BrowserSession) -> None:
        self.browser = browser

    async def run(self, args: Any, signal: AbortSignal) -> str | ToolResult:
        raise NotImplementedError

    async def execute(self, tool_call_id: str, args: Any, signal: AbortSignal, on_update: OnUpdate) -> ToolResult | str:
        try:
            if self.needs_page:
                await signal.race(self.browser.ensure_page())
            out = await self.run(args, signal)
        except ActionError as exc:
            return self.browser.finish(f"Error: {exc}", is_error=True)
        except PlaywrightError as exc:
            return self.browser.finish(f"Error: {self.failure}: {_first_line(exc)}", is_error=True)
        if isinstance(out, ToolResult):
            return out
        return self.browser.finish(out)

    @property
    def timeout_ms(self) -> float:
        return _ms(self.browser.action_timeout)


# -- the built-ins -----------------------------------------------------------------------------------------
class DoneTool(Tool):
    name = "done"
    description = (
        "Finish the task: give the final answer or summary in `text`, and success=false if it could not be "
        "fully completed. Must be the only action in its step."
    )
    parameters = DoneParams
    execution_mode = "sequential"

    async def execute(self, tool_call_id: str, args: Any, signal: AbortSignal, on_update: OnUpdate) -> ToolResult:
        return ToolResult.text(args.text, details={"success": args.success, "text": args.text}, terminate=True)


class WaitTool(BrowserTool):
    name = "wait"
    description = (
        "Wait for the page to finish loading or changing (1-10 seconds); time since the last browser state counts."
    )
    parameters = WaitParams
    needs_page = False

    async def run(self, args: WaitParams, signal: AbortSignal) -> str:
        since = self.browser.seconds_since_snapshot
        already = min(since, args.seconds) if since is not None else 0.0
        await signal.sleep(max(0.0, args.seconds - already))
        return f"Waited for {args.seconds:g} second{'' if args.seconds == 1 else 's'}."


class AskUserTool(BrowserTool):
    name = "ask_user"
    description = "Ask the user a question when information or a decision is missing; returns the answer."
    parameters = AskUserParams
    needs_page = False

    def __init__(self, browser: BrowserSession, on_ask_user: AskUser | None = None) -> None:
        super().__init__(browser)
        self.on_ask_user = on_ask_user

    def unavailable_reason(self) -> str | None:
        return None if self.on_ask_user is not None else "no on_ask_user callback was given"

    async def run(self, args: AskUserParams, signal: AbortSignal) -> str:
        if self.on_ask_user is None:
            raise ActionError("asking the user is not available here (no on_ask_user callback).")
        params = [
            p
            for p in inspect.signature(self.on_ask_user).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)
        ]
        if len(params) >= 2 or any(p.kind is p.VAR_POSITIONAL for p in params):
            answer = await signal.race(self.on_ask_user(args.question, signal))
        else:
            answer = await signal.race(self.on_ask_user(args.question))
        return f"User answered: {answer}"


class ClickTool(BrowserTool):
    name = "click_element_by_index"
    description = "Click the element with this index (a real mouse click). Links with target=_blank open a new tab."
    parameters = IndexParams
    failure = "Failed to click element"

    async def run(self, args: IndexParams, signal: AbortSignal) -> str:
        el, info, _, _ = await signal.race(self.browser.resolve(args.index))
        if info.disabled:
            still = await signal.race(
                el.evaluate("(e) => e.matches(':disabled') || e.getAttribute('aria-disabled') === 'true'")
            )
            if still:
                raise ActionError(f"{info.describe()} is disabled, so clicking it does nothing right now.")
        via = ""
        async with self.browser.watch() as watch:
            try:
                await signal.race(el.click(timeout=self.timeout_ms))
            except PlaywrightError as exc:
                if not await _connected(el):
                    raise ActionError(
                        f"{info.describe()} disappeared before it could be clicked. Use the latest browser state."
                    ) from None
                if "not visible" in _first_line(exc):
                    raise ActionError(
                        f"{info.describe()} is not visible any more, so it cannot be clicked. "
                        "Use the latest browser state."
                    ) from None
                await signal.race(el.evaluate(_SYNTHETIC_CLICK_JS))
                via = f" (a trusted click was not possible: {_first_line(exc)}; a JavaScript click was used instead)"
            target = info.attributes.get("target", "")
            popup = info.tag == "a" and target not in ("", "_self", "_parent", "_top")
            await watch.settle(signal, expect_popup=popup)
            effects = watch.describe()
        parts = [f"Clicked {info.describe()}{via}."]
        state = await _state_after(el)
        if state:
            parts.append(state)
        if info.tag == "select":
            parts.append("To choose an option use select_dropdown_option.")
        if effects:
            parts.append(effects)
        return " ".join(parts)


async def _connected(el: ElementHandle) -> bool:
    try:
        return bool(await el.evaluate("(e) => e.isConnected"))
    except PlaywrightError:
        return False


async def _state_after(el: ElementHandle) -> str:
    """ "It is now checked." and the like, read live after a click."""
    try:
        st = await asyncio.wait_for(el.evaluate(_STATE_JS), 2)
    except (TimeoutError, PlaywrightError):
        return ""
    if not st.get("connected"):
        return ""
    bits = []
    if "checked" in st:
        bits.append("checked" if st["checked"] else "not checked")
    for key, word in (("aria-checked", "checked"), ("aria-pressed", "pressed"), ("aria-selected", "selected")):
        if key in st and "checked" not in st:
            bits.append(f"{word}={st[key]}")
    if "aria-expanded" in st:
        bits.append("expanded" if st["aria-expanded"] == "true" else "collapsed")
    return f"It is now {', '.join(bits)}." if bits else ""


class InputTextTool(BrowserTool):
    name = "input_text"
    description = (
        "Type text into an input, textarea or contenteditable (replaces its value). To submit, follow with "
        "send_keys Enter or click the button."
    )
    parameters = InputTextParams
    failure = "Failed to input text"

    async def run(self, args: InputTextParams, signal: AbortSignal) -> str:
        el, info, frame, _ = await signal.race(self.browser.resolve(args.index))
        kind = await signal.race(el.evaluate(_EDIT_INFO_JS))
        target = el
        if kind["tag"] == "select":
            raise ActionError(f"{info.describe()} is a dropdown; use select_dropdown_option.")
        if kind["tag"] == "input" and kind["type"] in ("checkbox", "radio"):
            raise ActionError(f"{info.describe()} is a {kind['type']}; click it with click_element_by_index.")
        if kind["tag"] == "input" and kind["type"] == "file":
            raise ActionError(f"{info.describe()} is a file input; typing into it is not supported.")
        if not kind["editable"]:
            # Wrappers and custom editors: a click often focuses the real text field inside. Never click
            # buttons or links for this (that would submit or navigate).
            active = None
            if info.tag not in ("button", "a", "input", "summary") and info.role not in ("button", "link"):
                try:
                    await signal.race(el.click(timeout=self.timeout_ms))
                except PlaywrightError:
                    pass
                active = (await signal.race(frame.evaluate_handle(_ACTIVE_JS, el))).as_element()
            inner = await signal.race(active.evaluate(_EDIT_INFO_JS)) if active is not None else None
            if active is None or not inner or not inner["editable"]:
                clicked = " and clicking it did not focus one" if info.tag not in ("button", "a") else ""
                raise ActionError(
                    f"{info.describe()} is not a text field (input, textarea or contenteditable){clicked}."
                )
            target, kind = active, inner
        if kind["disabled"]:
            raise ActionError(f"{info.describe()} is disabled.")
        if kind["readonly"]:
            raise ActionError(f"{info.describe()} is read-only.")
        via = ""
        async with self.browser.watch() as watch:
            try:
                await signal.race(target.fill(args.text, timeout=self.timeout_ms))
            except PlaywrightError as exc:
                message = _first_line(exc)
                if "Malformed value" in message or "Cannot type text into" in message:
                    raise ActionError(f"could not type {_quote(args.text)} into {info.describe()}: {message}") from None
                if not await _connected(target):
                    raise ActionError(
                        f"{info.describe()} disappeared before typing. Use the latest browser state."
                    ) from None
                await signal.race(target.evaluate(_SYNTHETIC_INPUT_JS, args.text))
                via = f" (using a JavaScript fallback: {message})"
            await watch.settle(signal, grace=0.02)
            effects = watch.describe()
        value = ""
        try:
            value = str(await signal.race(target.evaluate(_VALUE_JS)))
        except PlaywrightError:
            pass
        if info.sensitive or kind.get("type") == "password":
            shown = (
                f"Typed {len(args.text)} characters into {info.describe()}{via}; "
                f"it now holds {len(value)} characters (masked)."
            )
        else:
            shown = f"Typed {_quote(args.text)} into {info.describe()}{via}; its value is now {_quote(value, 200)}."
            if value != args.text and value.strip() != args.text.strip():
                shown += " (The page changed or limited the input.)"
        return shown + (" " + effects if effects else "")


class SelectDropdownOptionTool(BrowserTool):
    name = "select_dropdown_option"
    description = (
        "Choose an option by its visible text in a <select>, an input with suggestions, or an ARIA "
        "listbox/combobox dropdown (opened automatically). Matching: exact, then case-insensitive, then substring."
    )
    parameters = SelectParams
    failure = "Failed to select option"

    async def run(self, args: SelectParams, signal: AbortSignal) -> str:
        el, info, _, _ = await signal.race(self.browser.resolve(args.index))
        data = await signal.race(el.evaluate(_OPTIONS_INFO_JS, False))
        opened = False
        if data["kind"] == "custom" and not data["options"]:
            # Open it like a person would, then look for options (they may render elsewhere on the page).
            try:
                await signal.race(el.click(timeout=self.timeout_ms))
                opened = True
            except PlaywrightError:
                pass
            deadline = time.monotonic() + 1.5
            while True:
                data = await signal.race(el.evaluate(_OPTIONS_INFO_JS, True))
                if data["options"] or time.monotonic() > deadline:
                    break
                await signal.sleep(0.1)
        options = data["options"]
        if not options:
            raise ActionError(
                f"{info.describe()} has no options to choose from (not a <select>, and no role=option items appeared"
                f"{' after clicking it' if opened else ''}). Click it to open it, then click the option."
            )
        texts = [o["text"] for o in options]
        k, candidates = match_option(texts, args.text)
        if k is None and data["kind"] in ("select", "datalist"):
            values = [o["value"] for o in options]
            if args.text in values:
                k = values.index(args.text)
        if k is None:
            if candidates:
                listed = ", ".join(_quote(texts[i], 40) for i in candidates[:10])
                raise ActionError(
                    f"{_quote(args.text)} matches several options of {info.describe()}: {listed}. Give the full text."
                )
            listed = ", ".join(_quote(t, 40) for t in texts[:30])
            more = f" and {len(texts) - 30} more" if len(texts) > 30 else ""
            raise ActionError(
                f"no option matching {_quote(args.text)} in {info.describe()}. Available options: {listed}{more}."
            )
        chosen = options[k]
        if chosen.get("disabled"):
            raise ActionError(f"option {_quote(chosen['text'])} of {info.describe()} is disabled.")
        via = ""
        async with self.browser.watch() as watch:
            if data["kind"] == "select":
                try:
                    await signal.race(el.select_option(index=k, timeout=self.timeout_ms))
                except PlaywrightError as exc:
                    await signal.race(el.evaluate(_SELECT_FALLBACK_JS, k))
                    via = f" (using a JavaScript fallback: {_first_line(exc)})"
            elif data["kind"] == "datalist":
                await signal.race(el.fill(chosen["value"], timeout=self.timeout_ms))
            else:
                option = (await signal.race(el.evaluate_handle(_OPTION_HANDLE_JS, k))).as_element()
                if option is None:
                    raise ActionError(f"the options of {info.describe()} changed while selecting; try again.")
                try:
                    await signal.race(option.click(timeout=self.timeout_ms))
                except PlaywrightError as exc:
                    await signal.race(option.evaluate(_SYNTHETIC_CLICK_JS))
                    via = f" (using a JavaScript click: {_first_line(exc)})"
            await watch.settle(signal)
            effects = watch.describe()
        shown = ""
        try:
            shown = str(await signal.race(el.evaluate(_SHOWN_JS)))
        except PlaywrightError:
            pass
        text = f"Selected option {_quote(chosen['text'])} in {info.describe()}{via}."
        if data["kind"] == "select":
            text += f" The selected option is now {_quote(shown)}"
            if chosen["value"] and chosen["value"] != chosen["text"]:
                text += f" (value {_quote(chosen['value'])})"
            text += "."
        elif shown:
            text += f" It now shows {_quote(shown)}."
        return text + (" " + effects if effects else "")


class _ScrollBase(BrowserTool):
    axis = "y"

    async def _scroll(self, index: int | None, px: int | None, pages: float, forward: bool, signal: AbortSignal) -> str:
        if self.axis == "y":
            direction, end, rest = ("down", "bottom", "below") if forward else ("up", "top", "above")
        else:
            direction, end, rest = (
                ("right", "right edge", "to the right") if forward else ("left", "left edge", "to the left")
            )
        page = await self.browser.ensure_page()
        frame: Frame = page.main_frame
        arg: dict[str, Any] = {
            "op": "scroll",
            "axis": self.axis,
            "px": px,
            "pages": pages,
            "sign": 1 if forward else -1,
        }
        info: ElementInfo | None = None
        if index is not None:
            _, info, frame, local = await signal.race(self.browser.resolve(index))
            snap = self.browser.last_snapshot
            arg.update(i=local, id=snap.snapshot_id if snap else None)
        res = await signal.race(call_page_api(frame, arg))
        if "error" in res:
            raise ActionError(
                f"element [{index}] is no longer on the page. Use an index from the latest browser state."
            )
        moved = abs(int(res["moved"]))
        remaining = int(res["remaining"]) if forward else int(res["after"])
        kind = res["kind"]
        ident = " id=" + res["elId"] if res["elId"] else ""
        prefix = ""
        if kind == "container" and info is not None:
            what = (
                info.describe(60)
                if res["self"]
                else f"the scrollable <{res['tag']}{ident}> holding {info.describe(60)}"
            )
        elif kind == "fallback":
            what = f"the largest scrollable area <{res['tag']}{ident}> (the page itself does not scroll)"
        else:
            what = "the frame's page" if frame is not page.main_frame else "the page"
            if kind == "page-from-element" and info is not None:
                prefix = f"No scrollable container holds {info.describe(60)}, so {what} scrolled. "
        if moved == 0:
            return f"{prefix}Already at the {end} of {what}; cannot scroll {direction} further."
        text = f"{prefix}Scrolled {what} {direction} by {moved}px."
        text += f" Reached the {end}." if remaining <= 4 else f" {remaining}px more {rest}."
        return text


class ScrollTool(_ScrollBase):
    name = "scroll"
    description = (
        "Scroll vertically. Without index: scrolls the page. With index: scrolls the scrollable container holding "
        "that element. pixels takes precedence over num_pages."
    )
    parameters = ScrollParams
    failure = "Failed to scroll"

    async def run(self, args: ScrollParams, signal: AbortSignal) -> str:
        return await self._scroll(args.index, args.pixels, args.num_pages, args.down, signal)


class ScrollHorizontallyTool(_ScrollBase):
    name = "scroll_horizontally"
    description = "Scroll horizontally by pixels: the page, or (with index) the container holding that element."
    parameters = ScrollHorizontallyParams
    failure = "Failed to scroll horizontally"
    axis = "x"

    async def run(self, args: ScrollHorizontallyParams, signal: AbortSignal) -> str:
        return await self._scroll(args.index, args.pixels, 0, args.right, signal)


class ExecuteJavascriptTool(BrowserTool):
    name = "execute_javascript"
    description = (
        "Run JavaScript in the current page and get its JSON result: an expression (`document.title`) or statements "
        "with `return`. Use only when no other action can do it."
    )
    parameters = ExecuteJavascriptParams
    failure = "Error executing JavaScript"
    timeout = 30.0
    max_result = 4000

    async def run(self, args: ExecuteJavascriptParams, signal: AbortSignal) -> str:
        page = await self.browser.ensure_page()
        script = args.script.strip()
        expr = script.rstrip(";").strip()
        is_expression = False
        if expr:
            try:
                # compile-only check: defining the function does not run the script
                await signal.race(page.evaluate(f"() => {{ const f = async () => ({expr}\n); return typeof f; }}"))
                is_expression = True
            except PlaywrightError:
                is_expression = False
        inner = f"async () => ({expr}\n)" if is_expression else f"async () => {{\n{script}\n}}"
        wrapper = f"async () => {{ const __v = await ({inner})(); return ({_JS_SERIALIZE})(__v); }}"
        async with self.browser.watch() as watch:
            try:
                out = await signal.race(asyncio.wait_for(page.evaluate(wrapper), self.timeout))
            except TimeoutError:
                raise ActionError(f"the script did not finish within {self.timeout:g} seconds.") from None
            except PlaywrightError as exc:
                raise ActionError(f"JavaScript threw: {_first_line(exc)}") from None
            await watch.settle(signal, grace=0.02)
            effects = watch.describe()
        if out.get("u"):
            result = "undefined" + ("" if is_expression else " (end the script with `return value` to get a result)")
        else:
            result = out.get("j") or "null"
            if len(result) > self.max_result:
                result = result[: self.max_result] + f"… ({len(result)} characters, truncated)"
        return f"Executed JavaScript. Result: {result}" + (" " + effects if effects else "")


class SendKeysTool(BrowserTool):
    name = "send_keys"
    description = (
        "Press keys on the focused element (or on [index] after focusing it): Enter to submit, Tab, Escape, "
        "ArrowDown, Control+A, ... Several keys separated by spaces are pressed in order."
    )
    parameters = SendKeysParams
    failure = "Failed to send keys"

    async def run(self, args: SendKeysParams, signal: AbortSignal) -> str:
        page = await self.browser.ensure_page()
        keys = args.keys.strip()
        if not keys:
            raise ActionError("no keys given.")
        sequence = keys.split() if " " in keys and keys != " " else [keys]
        target = ""
        if args.index is not None:
            el, info, _, _ = await signal.race(self.browser.resolve(args.index))
            await signal.race(el.focus())
            target = f" on {info.describe()}"
        async with self.browser.watch() as watch:
            for key in sequence:
                try:
                    await signal.race(page.keyboard.press(key))
                except PlaywrightError as exc:
                    msg = _first_line(exc)
                    if "Unknown key" in msg:
                        raise ActionError(
                            f"unknown key {_quote(key)}. Use names like Enter, Tab, Escape, ArrowDown, Control+A; "
                            "to type text use input_text."
                        ) from None
                    raise
            await watch.settle(signal)
            effects = watch.describe()
        return f"Pressed {keys}{target}." + (" " + effects if effects else "")


_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


class GoToUrlTool(BrowserTool):
    name = "go_to_url"
    description = "Open a URL in the current tab."
    parameters = GoToUrlParams
    failure = "Failed to open URL"

    async def run(self, args: GoToUrlParams, signal: AbortSignal) -> str:
        page = await self.browser.ensure_page()
        url = args.url.strip()
        if re.match(r"^(localhost|\[::1\]|\d{1,3}(\.\d{1,3}){3})(:\d+)?(/|$)", url):
            url = "http://" + url
        elif not _SCHEME.match(url):
            url = "https://" + url
        scheme = url.split(":", 1)[0].lower()
        if scheme not in ("http", "https", "about", "file", "data"):
            raise ActionError(f"cannot open {_quote(url)}: only http(s), file, data and about URLs are supported.")
        try:
            response = await signal.race(
                page.goto(url, wait_until="domcontentloaded", timeout=_ms(self.browser.navigation_timeout))
            )
        except PlaywrightError as exc:
            raise ActionError(f"could not open {url}: {_first_line(exc)}") from None
        text = f"Navigated to {page.url}{await _title_note(page)}."
        if response is not None and response.status >= 400:
            text += f" The server answered HTTP {response.status}."
        return text


class GoBackTool(BrowserTool):
    name = "go_back"
    description = "Go back to the previous page in the current tab's history."
    parameters = GoBackParams
    failure = "Failed to go back"

    async def run(self, args: GoBackParams, signal: AbortSignal) -> str:
        page = await self.browser.ensure_page()
        before = page.url
        try:
            await signal.race(page.go_back(wait_until="domcontentloaded", timeout=_ms(self.browser.navigation_timeout)))
        except PlaywrightError as exc:
            raise ActionError(f"could not go back: {_first_line(exc)}") from None
        if page.url == before:
            raise ActionError("there is no previous page in this tab's history.")
        return f"Went back to {page.url}{await _title_note(page)}."


class SwitchTabTool(BrowserTool):
    name = "switch_tab"
    description = "Make another open tab the current one (tab ids are listed under Tabs in the browser state)."
    parameters = SwitchTabParams
    failure = "Failed to switch tab"

    async def run(self, args: SwitchTabParams, signal: AbortSignal) -> str:
        page = await self.browser.switch_tab(args.tab_id)
        return f"Switched to tab {args.tab_id}: {page.url}{await _title_note(page)}."


class HoverTool(BrowserTool):
    name = "hover"
    description = "Move the mouse over the element with this index (opens hover menus and tooltips)."
    parameters = IndexParams
    failure = "Failed to hover"

    async def run(self, args: IndexParams, signal: AbortSignal) -> str:
        el, info, _, _ = await signal.race(self.browser.resolve(args.index))
        via = ""
        try:
            await signal.race(el.hover(timeout=self.timeout_ms))
        except PlaywrightError as exc:
            if not await _connected(el):
                raise ActionError(f"{info.describe()} disappeared. Use the latest browser state.") from None
            await signal.race(el.evaluate(_SYNTHETIC_HOVER_JS))
            via = f" (using JavaScript mouse events: {_first_line(exc)})"
        return f"Hovered over {info.describe()}{via}. Elements it revealed are marked * in the next browser state."


def builtin_tools(
    browser: BrowserSession,
    on_ask_user: AskUser | None = None,
    *,
    include_javascript: bool = True,
) -> dict[str, Tool]:
    """All built-in actions bound to ``browser``, in page-agent's order followed by the extra ones.

    ``ask_user`` reports itself unavailable (``unavailable_reason``) without ``on_ask_user``; leave out
    ``execute_javascript`` with ``include_javascript=False``.
    """
    tools: list[Tool] = [
        DoneTool(),
        WaitTool(browser),
        AskUserTool(browser, on_ask_user if on_ask_user is not None else getattr(browser, "on_ask_user", None)),
        ClickTool(browser),
        InputTextTool(browser),
        SelectDropdownOptionTool(browser),
        ScrollTool(browser),
        ScrollHorizontallyTool(browser),
    ]
    if include_javascript:
        tools.append(ExecuteJavascriptTool(browser))
    tools += [
        SendKeysTool(browser),
        GoToUrlTool(browser),
        GoBackTool(browser),
        SwitchTabTool(browser),
        HoverTool(browser),
    ]
    return {t.name: t for t in tools}


__all__ = [
    "AskUser",
    "AskUserTool",
    "BrowserTool",
    "ClickTool",
    "DoneTool",
    "ExecuteJavascriptTool",
    "GoBackTool",
    "GoToUrlTool",
    "HoverTool",
    "InputTextTool",
    "ScrollHorizontallyTool",
    "ScrollTool",
    "SelectDropdownOptionTool",
    "SendKeysTool",
    "SwitchTabTool",
    "WaitTool",
    "builtin_tools",
    "match_option",
]

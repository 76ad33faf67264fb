"""The page script's plumbing: how Python reaches ``snapshot.js`` in every frame, and the main-world tracker.

One job: the channel between this package and the pages it reads. ``snapshot.js`` is registered as a
Playwright content-script selector engine, so it runs in Playwright's isolated script world of each frame
rather than the page's own, where page script can neither see it nor change what it reads (hooked DOM
prototypes, a swapped ``JSON``); one op is one selector query (:func:`call_page_api`,
:func:`page_api_element`). What the isolated world cannot see, listeners and ``on*`` handlers the page added,
is remembered by an init script in the main world (:data:`TRACKER`) and reported when the page script asks.
What the snapshot does with the answers (merging frames, numbering, the budget, the text) is ``snapshot.py``.
"""

from __future__ import annotations

import base64
import itertools
import json
import re
import weakref
from functools import cache
from importlib import resources
from typing import Any

from playwright.async_api import BrowserContext, ElementHandle, Frame, Page, Playwright
from playwright.async_api import Error as PlaywrightError

from ...core import JSONValue

#: The Playwright selector engine the page script is registered as (see :func:`register_page_engine`).
ENGINE = "notebook_agent"

#: Events between the main-world tracker and the page script: the script asks (``pull``) and the tracker
#: answers with one ``listener``/``handler`` event per element it knows of (see ``pullTracked`` in snapshot.js).
TRACKER_EVENTS = {
    "pull": "notebook_agent:pull",
    "listener": "notebook_agent:listener",
    "handler": "notebook_agent:handler",
}

_engine_names: weakref.WeakKeyDictionary[BrowserContext, str] = weakref.WeakKeyDictionary()
_extra_engines = itertools.count(1)


@cache
def engine_script() -> str:
    """The page script (package data) as a selector engine source, read once: ``snapshot.js`` wrapped by
    ``extract.js``, which answers the "extract:..." ops (tables and lists, for extract.py) and hands every other
    op to the page script. One engine, so extraction runs in the same isolated world, registered at launch."""
    files = resources.files(__package__)
    text = files.joinpath("snapshot.js").read_text(encoding="utf-8")
    text = text.replace("__NOTEBOOK_AGENT_EVENTS__", json.dumps(TRACKER_EVENTS))
    extract = files.joinpath("extract.js").read_text(encoding="utf-8")
    return f"{extract.strip()}\n({text.strip()}\n)"


async def register_page_engine(pw: Playwright, reused: BrowserContext | None = None) -> None:
    """Register the page script with ``pw`` as a content-script selector engine, so Playwright runs it in its
    isolated world of every frame (see snapshot.js). Call it before the contexts it serves load pages.

    Playwright sends an engine to the contexts that exist when it is registered and to those created later,
    once per engine name. A context that was already there when we connected (``reused``: ``cdp_url``) and
    meets this Playwright after its first registration (a reconnect) gets an engine of its own name.
    """
    try:
        await pw.selectors.register(ENGINE, engine_script(), content_script=True)
        return
    except PlaywrightError as exc:
        if "already registered" not in str(exc):
            raise
    if reused is not None and reused not in _engine_names:
        name = f"{ENGINE}_{next(_extra_engines)}"
        await pw.selectors.register(name, engine_script(), content_script=True)
        _engine_names[reused] = name


def op_selector(frame: Frame, arg: dict[str, Any]) -> str:
    """The selector that calls the page script's op ``arg`` in ``frame`` (an element op answers with its element),
    to chain with another engine's: ``<engine>=<base64 JSON>``; base64 keeps quotes and ``>>`` in the argument
    away from the selector parser."""
    name = _engine_names.get(frame.page.context, ENGINE)
    return f"{name}={base64.b64encode(json.dumps(arg).encode('ascii')).decode('ascii')}"


# A lone surrogate in page text (JavaScript slices strings by UTF-16 unit) arrives as a \\udXXX escape;
# Python would decode it into a str that cannot be encoded. Scanning left to right, a high+low pair is kept
# as one match and any other surrogate escape is lone: it becomes U+FFFD before decoding.
_SURROGATE_ESCAPES = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|\\u[dD][89a-fA-F][0-9a-fA-F]{2}"
)


def _clean_json(raw: str) -> str:
    if "\\u" not in raw:
        return raw
    return _SURROGATE_ESCAPES.sub(lambda m: m.group(0) if len(m.group(0)) == 12 else "\\ufffd", raw)


async def call_page_api(
    frame: Frame, arg: dict[str, Any], *, timeout: float = 10.0, scope: ElementHandle | None = None
) -> Any:
    """One round trip to the page API in ``frame``'s isolated world: the op's JSON result, decoded. ``scope``,
    an element of ``frame``, reaches the page script as the op's root."""
    if scope is not None:
        answer = await scope.query_selector(op_selector(frame, arg))
        raw = await answer.text_content() if answer is not None else None
    else:
        raw = await frame.locator(op_selector(frame, arg)).text_content(timeout=timeout * 1000)
    return json.loads(_clean_json(raw or "null"))


async def announced_text(page: Page, *, timeout: float) -> list[tuple[str, str]]:
    """The text of the main document's announcing regions (status, alert and live regions, outputs, open
    dialogs: ``"status"``) and headings (``"heading"``), visible ones only, read in the isolated world like the
    snapshot; what a page answers that is not such a list is nothing."""
    return announced_pairs(await call_page_api(page.main_frame, {"op": "announced"}, timeout=timeout))


def announced_pairs(found: JSONValue) -> list[tuple[str, str]]:
    """The page script's answer to "announced" (its own op, or read with a snapshot) as ``(kind, text)`` pairs;
    what is not such a list is nothing."""
    if not isinstance(found, list):
        return []
    return [(str(k), str(t)) for k, t in (f for f in found if isinstance(f, list) and len(f) == 2)]


async def page_api_element(
    frame: Frame, arg: dict[str, Any], *, scope: ElementHandle | None = None
) -> ElementHandle | None:
    """The element an element op ("get", "frame") answers with, as a handle Playwright adopted into the
    page's main world for actions (the same node the isolated world holds), or None. ``scope``, an element of
    ``frame``, reaches the page script as the op's root."""
    selector = op_selector(frame, arg)
    return await (scope.query_selector(selector) if scope is not None else frame.query_selector(selector))


#: Context init script, in the page's main world: remembers elements that get click-like listeners or on*
#: handler properties (which page JS cannot query later and the isolated world cannot see) and reports them
#: when the page script asks; remembers elements with listeners that could start a navigation (a click
#: waits for one only when one can follow; read in the main world by actions/scripts.py).
TRACKER = """(() => {
  const K = Symbol.for('notebook_agent.listeners');
  if (window[K]) return;
  const EVENTS = __EVENTS__;
  const seen = new WeakSet();
  const acting = new WeakSet(); // any listener that could start a navigation after a click or a change
  try {
    Object.defineProperty(window, K, { value: seen });
    Object.defineProperty(window, Symbol.for('notebook_agent.handlers'), { value: acting });
  } catch (e) { return; }
  // Originals, taken before page script runs (it cannot unhook what the answers below use).
  const proto = EventTarget.prototype;
  const original = proto.addEventListener;
  const dispatch = proto.dispatchEvent;
  const Custom = CustomEvent;
  const Ref = WeakRef;
  const rootOf = Node.prototype.getRootNode;
  const connected = Object.getOwnPropertyDescriptor(Node.prototype, 'isConnected').get;
  const TYPES = new Set(['click', 'mousedown', 'mouseup', 'pointerdown', 'pointerup', 'dblclick', 'touchstart']);
  const ACTING = new Set(['click', 'mousedown', 'mouseup', 'pointerdown', 'pointerup', 'change', 'input', 'submit']);
  const HANDLERS = ['onclick', 'onmousedown', 'onmouseup', 'onpointerdown', 'onmouseenter', 'onmouseover'];
  // Weak references (removed elements go away), compacted whenever an answer walks them or they double.
  const listened = { refs: [], limit: 1000 };
  const handled = { refs: [], limit: 1000, set: new WeakSet() };
  const remember = (list, el) => {
    listen();
    list.refs.push(new Ref(el));
    if (list.refs.length > list.limit) {
      list.refs = list.refs.filter((r) => r.deref());
      list.limit = Math.max(1000, 2 * list.refs.length);
    }
  };
  if (__LISTENERS__) {
    proto.addEventListener = function addEventListener(type, listener, options) {
      try {
        if (this && this.nodeType === 1 && TYPES.has(type) && !seen.has(this)) {
          seen.add(this);
          remember(listened, this);
        }
        if (this && this.nodeType === 1 && ACTING.has(type)) acting.add(this);
      } catch (e) {}
      return original.call(this, type, listener, options);
    };
  }
  const getters = [];
  for (const P of [HTMLElement.prototype, SVGElement.prototype]) {
    for (const name of HANDLERS) {
      const d = Object.getOwnPropertyDescriptor(P, name);
      if (!d || !d.set || !d.configurable) continue;
      getters.push(d.get); // each throws on the other kind of element: hasHandler tries them all
      Object.defineProperty(P, name, { ...d, set(v) {
        try {
          if (typeof v === 'function' && !handled.set.has(this)) {
            handled.set.add(this);
            remember(handled, this);
          }
        } catch (e) {}
        return d.set.call(this, v);
      } });
    }
  }
  const closedShadow = (el) => {
    for (let r = rootOf.call(el); r && r.host; r = rootOf.call(r.host)) if (r.mode === 'closed') return true;
    return false;
  };
  const answer = (list, type, live) => {
    list.refs = list.refs.filter((r) => {
      const el = r.deref();
      if (!el) return false;
      try {
        if (connected.call(el) && live(el) && !closedShadow(el)) {
          dispatch.call(el, new Custom(type, { composed: true }));
        }
      } catch (e) {}
      return true;
    });
  };
  const hasHandler = (el) => getters.some((g) => { try { return !!g.call(el); } catch (e) { return false; } });
  const onPull = () => {
    answer(listened, EVENTS.listener, () => true);
    answer(handled, EVENTS.handler, hasHandler);
  };
  // document.open() (Playwright's setContent) erases the window's listeners but keeps this script's state:
  // listening again whenever an element is remembered brings the answer back (adding it twice is a no-op).
  function listen() { original.call(window, EVENTS.pull, onPull, true); }
  listen();
})();""".replace("__EVENTS__", json.dumps(TRACKER_EVENTS))


def tracker_script(*, listeners: bool = True) -> str:
    """The init script; ``listeners=False`` leaves ``addEventListener`` alone (handler properties are still
    reported, since the isolated world cannot read them)."""
    return TRACKER.replace("__LISTENERS__", "true" if listeners else "false")

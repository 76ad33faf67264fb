"""How the offline demo model reads the page agent's state message.

One job: turning the text the page agent sends (the ``<browser_state>`` element lines, the URL and title, the
``<step_info>`` and the ``<agent_history>``) into a :class:`PageState` the demo rules (``model.py``) decide
from. It reads the same text a real model reads, tolerantly (a missing section stays empty), so the rules keep
working whatever the element indices are.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

from ..core.messages import UserMessage
from ..core.model import Context

# -- one state message --------------------------------------------------------------------------------------
_ELEMENT = re.compile(r"^(?P<indent>\s*)(?P<new>\*)?\[(?P<index>\d+)\]<(?P<tag>[a-zA-Z][\w-]*)(?P<rest>.*)$")
_ATTR_KEY = re.compile(r"(?:^|\s)(?P<key>[a-z][a-z0-9-]*)=")
_PRICE = re.compile(r"\$\s?(\d{1,3}(?:,\d{3})*(?:\.\d{1,2})?|\d+(?:\.\d{1,2})?)")
_URL = re.compile(r"https?://[^\s<>\"']+")
_TITLE = re.compile(r"^\s*(?:page\s+)?title\s*[:=]\s*(?P<title>.+?)\s*$", re.IGNORECASE)
_CURRENT_PAGE = re.compile(r"^\s*Current page:\s*\[(?P<title>.*)\]\((?P<url>[^)\s]*)\)\s*$")
_STEP_INFO = re.compile(r"Step\s+(\d+)\s+of\s+(\d+)")
_HISTORY_STEP = re.compile(r"<step_(\d+)>\n(.*?)\n</step_\1>", re.DOTALL)


@dataclass
class Element:
    """One ``[N]<tag attr=value ...>text />`` or ``[N]<tag attr=value ... />label`` line."""

    index: int
    tag: str
    attrs: dict[str, str]
    text: str
    new: bool = False
    line: int = 0
    """Position in ``PageState.lines``."""

    @property
    def label(self) -> str:
        """Everything that names the element, lower-cased (text, placeholder, aria-label, value...)."""
        keys = ("placeholder", "aria-label", "title", "name", "value", "type")
        return " ".join([self.text, *(self.attrs.get(k, "") for k in keys)]).lower()


@dataclass
class HistoryStep:
    index: int
    evaluation: str = ""
    memory: str = ""
    next_goal: str = ""
    action: str | None = None
    args: dict[str, Any] = field(default_factory=dict)
    result: str = ""


@dataclass
class PageState:
    """What the demo model understands of one state message."""

    task: str = ""
    url: str = ""
    title: str = ""
    step: int = 1
    max_steps: int = 0
    lines: list[str] = field(default_factory=list)
    elements: list[Element] = field(default_factory=list)
    history: list[HistoryStep] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    answer_schema: dict[str, Any] | None = None
    """The schema of ``done``'s ``data`` when the agent asks for a typed answer (``output=``), else None."""
    answer_takes_table: bool = False
    """Whether ``done`` can take an extracted table by name."""

    @property
    def page(self) -> str:
        """The file name of the current page (``search.html``); ``index.html`` for the site root."""
        path = urlsplit(self.url).path
        name = path.rsplit("/", 1)[-1]
        return name or "index.html"

    @property
    def query(self) -> dict[str, str]:
        return {k: v[0] for k, v in parse_qs(urlsplit(self.url).query).items() if v}

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    @property
    def last(self) -> HistoryStep | None:
        return self.history[-1] if self.history else None

    def find(self, pattern: str, *, tags: tuple[str, ...] = ()) -> Element | None:
        """The first element whose label matches ``pattern`` (case-insensitive), optionally of given tags."""
        rx = re.compile(pattern, re.IGNORECASE)
        for e in self.elements:
            if (not tags or e.tag in tags) and rx.search(e.label):
                return e
        return None


def _section(text: str, name: str) -> str | None:
    start, end = text.find(f"<{name}>"), text.rfind(f"</{name}>")
    if start < 0:
        return None
    start += len(name) + 2
    return text[start : end if end >= start else len(text)].strip("\n")


def parse_element(line: str, position: int = 0) -> Element | None:
    """Parse one element line; None for a plain text line."""
    m = _ELEMENT.match(line)
    if m is None:
        return None
    rest = m.group("rest").rstrip()
    name = ""  # a control's label follows the tag: <input type=checkbox />I agree
    end = rest.rfind("/>")
    if end >= 0:
        rest, name = rest[:end].rstrip(), rest[end + 2 :].strip()
    text = ""
    close = rest.find(">")
    if close >= 0:
        rest, text = rest[:close], rest[close + 1 :].strip()
    text = text or name
    attrs: dict[str, str] = {}
    keys = list(_ATTR_KEY.finditer(rest))
    for i, k in enumerate(keys):
        end = keys[i + 1].start() if i + 1 < len(keys) else len(rest)
        attrs[k.group("key")] = rest[k.end() : end].strip()
    head = rest[: keys[0].start()] if keys else rest
    for flag in head.split():
        attrs.setdefault(flag, "")
    return Element(
        index=int(m.group("index")),
        tag=m.group("tag").lower(),
        attrs=attrs,
        text=text,
        new=bool(m.group("new")),
        line=position,
    )


def _parse_history(section: str) -> tuple[list[HistoryStep], list[str]]:
    steps: list[HistoryStep] = []
    for m in _HISTORY_STEP.finditer(section):
        step = HistoryStep(index=int(m.group(1)))
        body = m.group(2)
        results = body.find("Action Results:")
        if results >= 0:
            step.result = body[results + len("Action Results:") :].strip()
            body = body[:results]
        for line in body.splitlines():
            key, _, value = line.partition(":")
            value = value.strip()
            if key == "Evaluation of Previous Step":
                step.evaluation = value
            elif key == "Memory":
                step.memory = value
            elif key == "Next Goal":
                step.next_goal = value
            elif key == "Action":
                name, _, raw = value.partition(" ")
                step.action = name or None
                try:
                    parsed = json.loads(raw) if raw.strip() else {}
                except json.JSONDecodeError:
                    parsed = {}
                step.args = parsed if isinstance(parsed, dict) else {}
        steps.append(step)
    notes = re.findall(r"<sys>(.*?)</sys>", section, re.DOTALL)
    return steps, notes


def parse_state(text: str) -> PageState:
    """Understand a page-agent state message (tolerant: missing sections just stay empty)."""
    state = PageState()
    state.task = (_section(text, "user_request") or "").strip()
    info = _STEP_INFO.search(_section(text, "step_info") or "")
    if info:
        state.step, state.max_steps = int(info.group(1)), int(info.group(2))
    history = _section(text, "agent_history")
    if history:
        state.history, state.notes = _parse_history(history)
    browser = _section(text, "browser_state")
    if browser is None:
        return state
    state.lines = browser.splitlines()
    for i, line in enumerate(state.lines):
        element = parse_element(line, i)
        if element is not None:
            state.elements.append(element)
            continue
        if not state.elements and (c := _CURRENT_PAGE.match(line)):
            state.title, state.url = c.group("title"), c.group("url")
            continue
        if not state.url and (m := _URL.search(line)) and not state.elements:
            state.url = m.group(0).rstrip(").,;")
        if not state.title and (t := _TITLE.match(line)) and not state.elements:
            state.title = t.group("title")
    return state


def state_of(context: Context) -> PageState:
    """The :class:`PageState` of the last user message in a model request."""
    state = PageState()
    for message in reversed(context.messages):
        if isinstance(message, UserMessage) and "<browser_state>" in message.text:
            state = parse_state(message.text)
            break
    for tool in context.tools or []:  # the one AgentOutput function: its done member says what done takes
        members = ((tool.parameters.get("properties") or {}).get("action") or {}).get("anyOf") or []
        for member in members:
            done = (member.get("properties") or {}).get("done")
            if isinstance(done, dict) and "data" in (done.get("properties") or {}):
                state.answer_schema = done["properties"]["data"]
                state.answer_takes_table = "table" in done["properties"]
    return state


def parse_price(text: str) -> float | None:
    m = _PRICE.search(text)
    return float(m.group(1).replace(",", "")) if m else None


@dataclass
class Product:
    name: str
    price: float
    element: Element


def listed_products(state: PageState) -> list[Product]:
    """Links followed by a price (in the link text or the plain text lines after it, before the next element)."""
    products: list[Product] = []
    current: Element | None = None
    price: float | None = None
    by_line = {e.line: e for e in state.elements}

    def close() -> None:
        if current is not None and price is not None and current.text:
            products.append(Product(_PRICE.sub("", current.text).strip(" ·-|"), price, current))

    for i, line in enumerate(state.lines):
        element = by_line.get(i)
        if element is not None:
            close()
            current, price = (element, parse_price(element.text)) if element.tag == "a" else (None, None)
        elif current is not None and price is None:
            price = parse_price(line)
    close()
    return products

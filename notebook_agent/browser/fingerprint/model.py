"""An element's fingerprint as data: what a step saw of the element it acted on, and the Playwright locator that
found exactly that element then, with no Playwright in this module.

A fingerprint is saved in a run file and read back for a replay, so a saved file is hostile input: every
``from_dict`` takes what it can use and drops the rest (wrong types, unknown keys, lone surrogates, huge
strings), and a locator is rebuilt from its checked parts, never from saved code. The Python source of a
locator and the live locator (finder.py) come from one list of calls (:meth:`LocatorSpec.calls`), so what
an exported script does is what the replay did. How the parts are compared is score.py; how they
are read from a page and found again is finder.py.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

#: Attributes read as a test id, in this order. Playwright's ``get_by_test_id`` reads the first by default.
TEST_ID_ATTRS = ("data-testid", "data-test-id", "data-test", "data-qa")

#: Locator kinds, in the order they are preferred when each finds exactly the element.
KINDS = ("test_id", "role", "label", "placeholder", "text", "id", "css")

MAX_TEXT = 1000
MAX_FRAMES = 10
_ROLE = re.compile(r"[a-z]{1,40}")
_TAG = re.compile(r"[a-z][a-z0-9-]{0,40}")
_IDENT = re.compile(r"-?[A-Za-z_][A-Za-z0-9_-]*")
# A selector Playwright would hand to another engine (``xpath=``, ``text=``, this package's page scripts) or
# read as XPath or text: not plain CSS, so not accepted from a saved file.
_ENGINE_PREFIX = re.compile(r"\s*[\w-]+\s*=")
_CSS_START = re.compile(r"[A-Za-z#.\[*:]")


def clean_text(value: object, limit: int = MAX_TEXT) -> str:
    """``value`` if it is a string, with lone surrogates replaced (they cannot be encoded or written to a
    file), cut at ``limit`` characters; anything else is ""."""
    if not isinstance(value, str):
        return ""
    text = value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text[:limit]


def py_str(text: str) -> str:
    """A Python string literal for ``text`` (double quotes when that needs no escaping): ``repr`` escapes
    quotes, backslashes, newlines and every unprintable character, so page text cannot end the literal."""
    r = repr(text)
    if r.startswith("'") and '"' not in text:
        r = '"' + r[1:-1] + '"'
    return r


def css_string(text: str) -> str:
    """A CSS string token for ``text``: quotes and backslashes escaped, control characters as hex escapes."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\{ord(ch):x} ")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def id_selector(element_id: str) -> str:
    """``#id`` when the id is a plain CSS identifier, else ``[id="..."]``."""
    return f"#{element_id}" if _IDENT.fullmatch(element_id) else f"[id={css_string(element_id)}]"


def safe_css(selector: object) -> str:
    """``selector`` if it reads as plain CSS for Playwright's css engine, else "": no ``>>`` chaining into another
    engine, no ``engine=`` prefix, no XPath or quoted text selector, at most 1000 characters."""
    text = clean_text(selector, MAX_TEXT + 1)
    if not text or len(text) > MAX_TEXT or ">>" in text or "internal:" in text:
        return ""
    if not _CSS_START.match(text) or _ENGINE_PREFIX.match(text):
        return ""
    return text


def _int(value: object, upper: int) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < upper:
        return None
    return value


def _get(data: Mapping[str, Any], key: str, limit: int = MAX_TEXT) -> str:
    return clean_text(data.get(key), limit)


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


# -- the locator -----------------------------------------------------------------------------------------------


Call = tuple[str, tuple[Any, ...], dict[str, Any]]
"""One locator method call: (method, positional arguments, keyword arguments)."""


@dataclass(frozen=True)
class LocatorSpec:
    """A Playwright locator as data. ``kind`` says which method finds the element; ``frames`` are the CSS
    selectors of the ``<iframe>`` elements from the page down to the element's frame; ``nth`` is set only when
    the locator alone matched more than one element. Which fields a kind uses is in :meth:`to_dict`."""

    kind: str
    role: str = ""
    name: str = ""
    text: str = ""
    attr: str = ""
    value: str = ""
    nth: int | None = None
    frames: tuple[str, ...] = ()

    def calls(self) -> list[Call]:
        """The method calls, from the page object on, that make this locator."""
        out: list[Call] = [("frame_locator", (f,), {}) for f in self.frames]
        k = self.kind
        if k == "test_id":
            if self.attr == TEST_ID_ATTRS[0]:
                out.append(("get_by_test_id", (self.value,), {}))
            else:
                out.append(("locator", (f"[{self.attr}={css_string(self.value)}]",), {}))
        elif k == "role":
            out.append(("get_by_role", (self.role,), {"name": self.name, "exact": True} if self.name else {}))
        elif k in ("label", "placeholder", "text"):
            out.append((f"get_by_{k}", (self.text,), {"exact": True}))
        elif k == "id":
            out.append(("locator", (id_selector(self.value),), {}))
        else:
            out.append(("locator", (self.value,), {}))
        if self.nth is not None:
            out.append(("nth", (self.nth,), {}))
        return out

    def source(self, page_var: str = "page") -> str:
        """The locator as Python source, e.g. ``page.get_by_role("button", name="Add to cart", exact=True)``."""
        if not page_var.isidentifier():
            raise ValueError(f"not a Python name: {page_var!r}")
        parts = [page_var]
        for method, args, kwargs in self.calls():
            rendered = [_py_value(a) for a in args] + [f"{k}={_py_value(v)}" for k, v in kwargs.items()]
            parts.append(f".{method}({', '.join(rendered)})")
        return "".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """``{"kind": ..., <the kind's fields>, ["nth": k], ["frames": [...]], "source": "page...."}``:
        test_id → attr, value; role → role, name, exact; label/placeholder/text → text, exact; id → id;
        css → selector. ``source`` is for reading only: :meth:`from_dict` rebuilds it from the fields."""
        d: dict[str, Any] = {"kind": self.kind}
        if self.kind == "test_id":
            d.update(attr=self.attr, value=self.value)
        elif self.kind == "role":
            d.update(role=self.role, name=self.name, exact=True) if self.name else d.update(role=self.role)
        elif self.kind in ("label", "placeholder", "text"):
            d.update(text=self.text, exact=True)
        elif self.kind == "id":
            d["id"] = self.value
        else:
            d["selector"] = self.value
        if self.nth is not None:
            d["nth"] = self.nth
        if self.frames:
            d["frames"] = list(self.frames)
        d["source"] = self.source()
        return d

    @classmethod
    def from_dict(cls, data: object) -> LocatorSpec | None:
        """The locator ``data`` describes, or None when it is not one this module would have made."""
        d = _mapping(data)
        kind = d.get("kind")
        frames_raw = d.get("frames", [])
        if not isinstance(frames_raw, list) or len(frames_raw) > MAX_FRAMES:
            return None
        frames = tuple(safe_css(f) for f in frames_raw)
        if not all(frames):
            return None
        nth = _int(d.get("nth"), 10_000) if d.get("nth") is not None else None
        if d.get("nth") is not None and nth is None:
            return None
        common: dict[str, Any] = {"nth": nth, "frames": frames}
        if kind == "test_id":
            attr, value = _get(d, "attr"), _get(d, "value")
            return cls("test_id", attr=attr, value=value, **common) if attr in TEST_ID_ATTRS and value else None
        if kind == "role":
            role = _get(d, "role")
            return cls("role", role=role, name=_get(d, "name"), **common) if _ROLE.fullmatch(role) else None
        if kind in ("label", "placeholder", "text"):
            text = _get(d, "text")
            return cls(kind, text=text, **common) if text.strip() else None
        if kind == "id":
            value = _get(d, "id")
            return cls("id", value=value, **common) if value else None
        if kind == "css":
            selector = safe_css(d.get("selector"))
            return cls("css", value=selector, **common) if selector else None
        return None


def _py_value(value: object) -> str:
    if isinstance(value, str):
        return py_str(value)
    if isinstance(value, bool | int):
        return repr(value)
    raise TypeError(f"no literal for {type(value).__name__}")


# -- the fingerprint ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FrameStep:
    """One frame between the page and the element: its ``<iframe>``'s name, id, src (path and query) and title."""

    name: str = ""
    id: str = ""
    src: str = ""
    title: str = ""

    @classmethod
    def from_dict(cls, data: object) -> FrameStep:
        d = _mapping(data)
        return cls(_get(d, "name", 300), _get(d, "id", 300), _get(d, "src", 300), _get(d, "title", 300))

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "id": self.id, "src": self.src, "title": self.title}


@dataclass(frozen=True)
class Landmark:
    """Where the element sits: the nearest landmark or section around it (``kind``: form, nav, main, header,
    footer, aside, dialog, section, search, or ""), its label (a form's name, id or action path when it has no
    aria label), and the nearest heading before the element."""

    kind: str = ""
    label: str = ""
    heading: str = ""

    @classmethod
    def from_dict(cls, data: object) -> Landmark:
        d = _mapping(data)
        return cls(_get(d, "kind", 20), _get(d, "label", 120), _get(d, "heading", 120))

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "label": self.label, "heading": self.heading}


@dataclass(frozen=True)
class Neighbours:
    """Short texts just before and after the element in its parent (a table cell's: the cell before it)."""

    before: str = ""
    after: str = ""

    @classmethod
    def from_dict(cls, data: object) -> Neighbours:
        d = _mapping(data)
        return cls(_get(d, "before", 120), _get(d, "after", 120))

    def to_dict(self) -> dict[str, str]:
        return {"before": self.before, "after": self.after}


_STRINGS = ("role", "name", "label", "tag", "type", "id", "name_attr", "test_id", "placeholder", "href", "text")


@dataclass
class Fingerprint:
    """An element as a step saw it. ``role``/``name`` as Playwright's ``get_by_role`` matches them; ``text``
    is its visible text (collapsed, at most 120 characters); ``href`` a link's path and query; ``frame`` the
    frames from the page down to it (empty: the top frame); ``nth`` its position among the elements with the
    same role and name when it is not the only one; ``locator`` the locator that found exactly it then."""

    role: str = ""
    name: str = ""
    label: str = ""
    tag: str = ""
    type: str = ""
    id: str = ""
    name_attr: str = ""
    test_id: str = ""
    placeholder: str = ""
    href: str = ""
    text: str = ""
    frame: list[FrameStep] = field(default_factory=list)
    landmark: Landmark = field(default_factory=Landmark)
    neighbours: Neighbours = field(default_factory=Neighbours)
    nth: int | None = None
    locator: LocatorSpec | None = None

    @property
    def empty(self) -> bool:
        """Nothing to find an element by (a fingerprint loaded from garbage)."""
        return not (self.tag or self.role)

    def describe(self) -> str:
        """A short description for messages: ``role=button name='Add to cart'`` or ``<input type=text>``."""
        what = f"role={self.role}" if self.role else f"<{self.tag or '?'}{f' type={self.type}' if self.type else ''}>"
        shown = self.name or self.label or self.placeholder or self.text or self.test_id or self.id
        return f"{what} name={shown[:60]!r}" if shown else what

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON: the string parts, ``frame`` as a list of {name, id, src, title}, ``landmark`` as
        {kind, label, heading}, ``neighbours`` as {before, after}, ``nth`` (int or null) and ``locator``
        (see :meth:`LocatorSpec.to_dict`, or null)."""
        d: dict[str, Any] = {k: getattr(self, k) for k in _STRINGS}
        d["frame"] = [f.to_dict() for f in self.frame]
        d["landmark"] = self.landmark.to_dict()
        d["neighbours"] = self.neighbours.to_dict()
        d["nth"] = self.nth
        d["locator"] = self.locator.to_dict() if self.locator else None
        return d

    @classmethod
    def from_dict(cls, data: object) -> Fingerprint:
        """The fingerprint ``data`` describes, keeping only well-formed parts: a missing or garbled part is
        empty, unknown keys are ignored, and a non-mapping gives an empty fingerprint (which finds nothing)."""
        d = _mapping(data)
        parts = {k: _get(d, k, 300 if k not in ("text",) else 120) for k in _STRINGS}
        parts["role"] = parts["role"] if _ROLE.fullmatch(parts["role"]) else ""
        parts["tag"] = parts["tag"].lower() if _TAG.fullmatch(parts["tag"].lower()) else ""
        parts["type"] = parts["type"][:30].lower()
        frames = d.get("frame")
        chain = [FrameStep.from_dict(f) for f in frames[:MAX_FRAMES]] if isinstance(frames, list) else []
        return cls(
            **parts,
            frame=chain,
            landmark=Landmark.from_dict(d.get("landmark")),
            neighbours=Neighbours.from_dict(d.get("neighbours")),
            nth=_int(d.get("nth"), 10_000),
            locator=LocatorSpec.from_dict(d.get("locator")),
        )

"""Where a run's parameters went, and how to put a row's values there instead: the slots of a recipe.

A recipe keeps every string a step used (typed text, a chosen option, a URL it went to, the fingerprint of the
element it acted on, the URL of the page it was on) as a *template*: ``str.format`` syntax over the slot names,
literal braces doubled. A slot is filled as the value (``{item}``), or URL-encoded the way the run's URL had it
(``{item:q}`` for ``quote_plus``, ``{item:u}`` for ``quote``). Values are found at word boundaries only, so a
parameter ``L`` is not found inside ``Large``.

The answer is not a slot: it is read from the last page the way the recorded run read it. An
:class:`Extraction` is the line of the recorded page that held a value of the answer (the model's state text,
which is what the model read), with the value cut out: its literal text, the slots it held, and element
indices left free (they shift between pages). On a row's page the first line matching it, at the same rank
among the matching lines, gives the row's value.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import quote, quote_plus

from pydantic import BaseModel, ConfigDict

from ...core.errors import InputError
from ..safety.row_text import DataFormatter

#: How a slot's value is written where it was found: as it is, or URL-encoded as a query value or a path part.
ENCODINGS: dict[str, Callable[[str], str]] = {
    "": lambda v: v,
    "q": quote_plus,
    "u": lambda v: quote(v, safe=""),
    "l": str.lower,
    "lq": lambda v: quote_plus(v.lower()),
    "lu": lambda v: quote(v.lower(), safe=""),
}
"""``l``, ``lq`` and ``lu``: the value in lower case (a learned call's request may carry it so: calls/)."""
#: What may not be in a slot name (it is a template field name).
BAD_NAME = re.compile(r"[{}:!.\[\]]")
NUMBER = r"[-+]?\d[\d,]*(?:\.\d+)?"
CAPTURES = {"number": f"({NUMBER})", "text": "(.+?)"}
#: An element index of the model's state text (``[12]<a>``): different on every page.
INDEX = re.compile(r"\[\d+\](?=<)")


class RecipeError(InputError):
    """A recipe cannot be made, read or filled (the message says which slot, step or field, and what to do)."""


def escape(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


class _Filler(DataFormatter):
    """Fills slot fields by their whole name (a column may be called ``first name``), encoded as marked; a row's
    value is data, never a secret's placeholder (:class:`DataFormatter`)."""

    def get_field(self, field_name: str, args: Any, kwargs: Any) -> Any:
        if field_name not in kwargs:
            raise RecipeError(f"The recipe needs a value for {field_name!r}; the row has: {', '.join(kwargs)}.")
        return kwargs[field_name], field_name

    def format_field(self, value: Any, format_spec: str) -> str:
        if format_spec not in ENCODINGS:
            raise RecipeError(f"Unknown slot encoding {format_spec!r} (known: {', '.join(map(repr, ENCODINGS))}).")
        return str(ENCODINGS[format_spec](_text(value)))


FILLER = _Filler()


def _text(value: Any) -> str:
    """A row's value as it is typed: whole floats without ``.0`` (a CSV's ``3`` and a DataFrame's 3.0 agree)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return "" if value is None else str(value)


def fill(template: str, values: Mapping[str, Any]) -> str:
    return FILLER.fill(template, dict(values))


def fill_all(node: Any, values: Mapping[str, Any]) -> Any:
    """``node`` with every string in it (dict values, list items) filled; keys are not templates."""
    if isinstance(node, str):
        return fill(node, values)
    if isinstance(node, dict):
        return {k: fill_all(v, values) for k, v in node.items()}
    if isinstance(node, list):
        return [fill_all(v, values) for v in node]
    return node


def check_names(params: Mapping[str, Any]) -> dict[str, str]:
    """The parameters as ``{name: text}``, refusing names that cannot be template fields and empty values."""
    out: dict[str, str] = {}
    for name, value in params.items():
        if not isinstance(name, str) or not name or BAD_NAME.search(name):
            raise RecipeError(f"The parameter name {name!r} cannot name a slot: use letters, digits, _ and spaces.")
        text = _text(value)
        if not text.strip():
            raise RecipeError(f"The parameter {name!r} is empty: a slot is found by its recorded value.")
        out[name] = text
    return out


def _pattern(value: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w]){re.escape(value)}(?![\w])")


def templated(text: str, params: Mapping[str, str], encodings: Iterable[str] = ("",)) -> tuple[str, list[str]]:
    """``text`` as a template with each parameter's value (written in one of ``encodings``) made its slot, and
    the names found. Longer values are taken first, so ``Rain Jacket`` is not cut by a parameter ``Rain``."""
    found: list[str] = []
    pieces: list[tuple[str, str | None]] = [(text, None)]  # (literal text, None) or (field, name)
    for name, value in sorted(params.items(), key=lambda kv: -len(kv[1])):
        for spec in encodings:
            written = ENCODINGS[spec](value)
            pattern = _pattern(written)
            out: list[tuple[str, str | None]] = []
            for piece, slot in pieces:
                if slot is not None:
                    out.append((piece, slot))
                    continue
                at = 0
                for m in pattern.finditer(piece):
                    out.append((piece[at : m.start()], None))
                    out.append(("{" + name + (f":{spec}" if spec else "") + "}", name))
                    at = m.end()
                    found.append(name)
                out.append((piece[at:], None))
            pieces = out
    return "".join(p if slot is not None else escape(p) for p, slot in pieces), list(dict.fromkeys(found))


def templated_all(node: Any, params: Mapping[str, str], encodings: Iterable[str] = ("",)) -> tuple[Any, list[str]]:
    """:func:`templated` over every string of ``node`` (dicts and lists walked; other values kept)."""
    names: list[str] = []
    specs = tuple(encodings)
    if isinstance(node, str):
        return templated(node, params, specs)
    if isinstance(node, dict):
        out = {}
        for k, v in node.items():
            out[k], found = templated_all(v, params, specs)
            names += found
        return out, list(dict.fromkeys(names))
    if isinstance(node, list):
        items = []
        for v in node:
            item, found = templated_all(v, params, specs)
            items.append(item)
            names += found
        return items, list(dict.fromkeys(names))
    return node, []


# -- reading the answer from the page ---------------------------------------------------------------------------
class Extraction(BaseModel):
    """One value of the answer, read from a line of the page (see the module docstring)."""

    model_config = ConfigDict(extra="forbid")
    line: str
    """The recorded line as a template: literal text, ``{slot}`` fields, ``{_index}`` for element indices and
    ``{_value}`` where the value was."""
    kind: str
    """``number`` or ``text``: what the value looks like (a number is read as a number)."""
    rank: int = 0
    """Which of the lines matching ``line`` on the recorded page held the value (0 = the first)."""
    recorded: str = ""
    """The value as the recorded page wrote it (``129.00``)."""

    def regex(self, values: Mapping[str, Any]) -> re.Pattern[str]:
        parts = []
        for literal, name, spec, _ in string.Formatter().parse(self.line):
            parts.append(re.escape(literal))
            if name is None:
                continue
            if name == "_index":
                parts.append(r"\[\d+\]")
            elif name == "_value":
                parts.append(CAPTURES.get(self.kind, CAPTURES["text"]))
            else:
                parts.append(re.escape(FILLER.format_field(FILLER.get_field(name, (), values)[0], spec or "")))
        return re.compile("^" + "".join(parts) + "$", re.M)

    def read(self, page_text: str, values: Mapping[str, Any]) -> str | None:
        """The value on ``page_text`` (the row's page), or None when no line there matches at this rank."""
        found = list(self.regex(values).finditer(page_text))
        return found[self.rank].group(1) if self.rank < len(found) else None


def page_lines(state: str) -> list[str]:
    """The page part of a recorded state message (what the model read of the page), line by line."""
    inside = state.split("<browser_state>", 1)[-1].split("</browser_state>", 1)[0]
    return [line for line in inside.split("\n") if line.strip()]


def _visible(line: str) -> str:
    """A state line's text without its index and tag: ``[7]<a>Rain Jacket />`` → ``Rain Jacket``."""
    return re.sub(r"^\[\d+\]<[^>]*>|/>.*$", "", line).strip()


def find_extraction(
    value: Any, lines: list[str], params: Mapping[str, str], taken: set[str] | None = None
) -> Extraction | None:
    """How the recorded page showed ``value`` (a string or number of the answer), or None when it did not.
    A number is found as a number written any way (``129`` as ``$129.00``); text whole, preferring a line that
    is only that text (a link, a heading) over one that mentions it."""
    if isinstance(value, bool) or value is None:
        return None
    kind = "number" if isinstance(value, (int, float)) else "text"
    best: tuple[int, int, str, int, int] | None = None  # (score, line, written, start, end)
    for i, line in enumerate(lines):
        if kind == "number":
            for m in re.finditer(rf"(?<![\w.]){NUMBER}(?![\w])", line):
                try:
                    same = float(m.group().replace(",", "")) == float(value)
                except ValueError:
                    same = False
                if same and best is None:
                    best = (1, i, m.group(), m.start(), m.end())
        else:
            text = str(value)
            if len(text) < 1 or text not in line:
                continue
            score = 2 if _visible(line) == text else 1
            if best is None or score > best[0]:
                start = line.index(text)
                best = (score, i, text, start, start + len(text))
    if best is None:
        return None
    _, i, written, start, end = best
    line = lines[i]
    others = {k: v for k, v in params.items() if v != written and (taken is None or k not in taken)}
    head, _ = templated(INDEX.sub("\0", line[:start]), others)
    tail, _ = templated(INDEX.sub("\0", line[end:]), others)
    template = (head + "{_value}" + tail).replace("\0", "{_index}")
    rule = Extraction(line=template, kind=kind, recorded=written)
    regex = rule.regex(params)
    matches = [m.start() for m in regex.finditer("\n".join(lines))]
    offset = sum(len(x) + 1 for x in lines[:i])
    rule.rank = matches.index(offset) if offset in matches else 0
    return rule

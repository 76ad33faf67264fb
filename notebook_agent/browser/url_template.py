"""One rule for a start URL with ``{column}`` placeholders: filled per row, each value written for its place in
the address, or refused with a sentence naming the placeholder.

Every front that takes a per-row start page goes through here: ``PageAgent(start_url=...)`` then ``agent.map``,
``agent.map(..., start_url=...)``, ``recipe.map(..., start_url=...)``, ``%%agent --each ROWS --url ...`` and
``notebook-agent map --url ...`` (with or without ``--recipe``). A single run (``agent.run``, ``notebook-agent
run --url``, a cell without ``--each``) has no row, so a placeholder there is refused (:func:`refuse_fields`)
instead of being opened as ``%7Bid%7D``.

Where a placeholder stands decides how its value is written:

- at the very start (``{url}``, ``{site}/about``): as written, so a column can hold whole addresses;
- in the host (``https://{domain}/``, ``https://shop.{tld}/``): as written, and only letters, digits, ``.``,
  ``-`` and ``_`` may be there (a host cannot be percent-encoded);
- in the path: percent-encoded but for ``/`` (a value there is a path: ``products/12.html``), so ``a b``,
  ``?``, ``#`` or ``%`` stay in the path and ``ü`` becomes ``%C3%BC``;
- in the query or the fragment: percent-encoded whole (``quote(value, safe="")``), so ``&``, ``=``, ``/`` or
  ``#`` stay one parameter's value.

A value that is missing, ``None``, NaN or blank is refused (a start page with a hole is another page). A whole
number read as a float (pandas' ``3.0``) is written ``3``. The filled address then passes the rule every typed
URL passes (:func:`~.urls.normalize_url`), and a row whose address that refuses is named with its value.
``{{`` and ``}}`` are literal braces; ``{price:.2f}`` formats before encoding.
"""

from __future__ import annotations

import math
import re
import string
from collections.abc import Mapping, Sequence
from typing import Any, Literal
from urllib.parse import quote

from .urls import URLError, normalize_url

Place = Literal["whole", "host", "path", "query", "fragment"]

_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")
_HOST_PART = re.compile(r"[\w.-]+")
_FORMATTER = string.Formatter()


def url_fields(template: str) -> list[str]:
    """The column each placeholder of ``template`` names, in order, once each; ``[]`` for a plain URL. A
    placeholder that names no column (``{}``, ``{0}``) or a broken brace is a :class:`~.urls.URLError`."""
    names: list[str] = []
    for _, name, _, _ in _parsed(template):
        if name is None:
            continue
        base = name.split(".", 1)[0].split("[", 1)[0]
        if not base or base.isdigit():
            raise URLError(
                f"The start URL template {template!r} has a placeholder {{{name}}} that names no column: write "
                "{column}, or {{ and }} for literal braces."
            )
        names.append(base)
    return list(dict.fromkeys(names))


def _parsed(template: str) -> list[tuple[str, str | None, str | None, str | None]]:
    try:
        return list(_FORMATTER.parse(template))
    except ValueError as exc:
        raise URLError(f"The start URL template {template!r} is not a valid template: {exc}.") from None


def place_of(written: str) -> Place:
    """Where a placeholder after ``written`` (the address so far, earlier values filled) stands."""
    if not written:
        return "whole"
    rest = written[_SCHEME.match(written).end() :] if _SCHEME.match(written) else written  # type: ignore[union-attr]
    if not re.search(r"[/?#]", rest):
        return "host"
    if "#" in rest:
        return "fragment"
    return "query" if "?" in rest else "path"


def _text(value: object) -> str | None:
    """A row's value as it is written, or None when there is none (missing, None, NaN, blank)."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or type(value).__name__ == "NAType":
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = str(value)
    return text if text.strip() else None


def fill_url(template: str, row: Mapping[str, Any]) -> str:
    """``template`` filled with ``row``'s values (see the module docstring), then checked as any typed URL is.
    A :class:`~.urls.URLError` names the placeholder (or the filled address) that cannot be a start page."""
    out = ""
    for literal, name, spec, conversion in _parsed(template):
        out += literal
        if name is None:
            continue
        field = "{" + name + "}"
        base = name.split(".", 1)[0].split("[", 1)[0]
        if base not in row:
            raise URLError(f"There is no {base} for {field} in the start URL template {template!r}.")
        try:
            value, _ = _FORMATTER.get_field(name, (), row)
            value = _FORMATTER.convert_field(value, conversion)
            raw = _text(value)
            text = None if raw is None else format(value if spec else raw, spec or "")
        except (KeyError, IndexError, AttributeError, TypeError, ValueError) as exc:
            raise URLError(f"{field} cannot be filled in the start URL template {template!r}: {exc}.") from None
        if text is None:
            raise URLError(f"{field} is empty, so the start URL template {template!r} has no page to open.")
        where = place_of(out)
        if where == "host" and not _HOST_PART.fullmatch(text):
            raise URLError(
                f"{field} is {text!r}, which cannot be part of a host name (letters, digits, '.' and '-') in the "
                f"start URL template {template!r}."
            )
        out += text.strip() if where in ("whole", "host") else quote(text, safe="/" if where == "path" else "")
    try:
        return normalize_url(out)
    except URLError as exc:
        raise URLError(f"The start URL template {template!r} gives {out!r}: {exc}") from None


def fill_rows(template: str, columns: Sequence[str], rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """Every row's start URL, checked before anything runs: a placeholder naming no column, or a row whose
    value cannot be written there, is a :class:`~.urls.URLError` saying which (and the columns, or the row)."""
    names = url_fields(template)
    missing = [n for n in names if n not in columns]
    if missing:
        raise URLError(
            f"The start URL template names {', '.join('{' + n + '}' for n in missing)}, which "
            f"{'is not a column' if len(missing) == 1 else 'are not columns'}; the columns are: "
            f"{', '.join(columns) or '(none)'}."
        )
    filled = []
    for i, row in enumerate(rows):
        try:
            filled.append(fill_url(template, row) if names else template)
        except URLError as exc:
            raise URLError(f"Row {i}: {exc}") from None
    return filled


def refuse_fields(url: str) -> None:
    """A URL with a placeholder where no row fills it (a single run): a :class:`~.urls.URLError` naming it."""
    try:
        names = url_fields(url)
    except URLError:
        return  # stray braces: an address like any other, for the URL rule to judge
    if names:
        raise URLError(
            f"{url!r} has the placeholder {{{names[0]}}}, which only a map fills, one row at a time "
            "(agent.map, %%agent --each, notebook-agent map): give a whole address to run once."
        )

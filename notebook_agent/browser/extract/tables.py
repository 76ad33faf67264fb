"""Exact extraction of tables and repeated items from the live page, so the model never retypes data.

A model that copies a 1,500-row table into its answer spends tens of thousands of tokens and makes typos. Here
the rows are read from the DOM as shown (``innerText``, whitespace collapsed, numbers exactly as displayed,
nothing parsed) and kept as data, an :class:`ExtractedTable`; the model only reads :meth:`ExtractedTable.summary`.

The DOM is read by ``extract.js``, composed into the page script's selector engine (see page_script.py), so it
runs in Playwright's isolated world where page script cannot change what is read. What arrives from the page is
raw: rows with their cells' spans, or items with their fields. The table model (spans expanded, header rows
joined into column names, link columns, unique names) is worked out here, in Python, where it is tested against
an independent expansion. More pages (a "next" control, or rows loaded on scroll) are pagination.py.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from playwright.async_api import ElementHandle, Frame
from playwright.async_api import Error as PlaywrightError

from ...core.aio import wait_for
from ..errors import ActionError, first_line
from ..page.page_script import call_page_api, page_api_element

#: Most data rows (or items) read from one page; the rest are left out and the source says so.
MAX_ROWS = 50_000
#: Most characters kept of one cell, after collapsing whitespace.
MAX_CELL = 2_000
#: Most columns of one table (a colspan may claim up to 1,000).
MAX_COLUMNS = 200
#: Seconds one read of the page may take (a 50,000-row table takes a few).
READ_TIMEOUT = 30.0
#: Characters of a cell shown in the summary before it is cut there (only there).
SUMMARY_CELL = 60

Kind = Literal["auto", "table", "items"]


class ExtractError(ActionError):
    """Nothing readable at the element, or the table or list is no longer on the page (model-facing text)."""


@dataclass
class ExtractedTable:
    """Rows read exactly from a page: data to hand on, not to edit. Not frozen only so that whoever keeps it
    can replace cells wholesale on the way in (a run scrubs secrets out of ``columns`` and ``rows``).

    ``name`` is how the model refers to it ("t1"), ``source`` says where and how it was read (what was found at
    which index on which URL, how many pages, what was capped), ``pages`` how many pages were read, ``dropped``
    the pages that were reached but not read, each with why (a page whose header differs from the first's):
    the rows hold fewer pages than the site has, and this says so wherever the table goes."""

    name: str
    columns: list[str]
    rows: list[list[str]]
    source: str
    pages: int = 1
    dropped: list[str] = field(default_factory=list)

    def records(self) -> list[dict[str, str]]:
        """One dict per row, column name to cell (names are unique, so nothing is lost)."""
        return [dict(zip(self.columns, row, strict=True)) for row in self.rows]

    def summary(self, first: int = 3) -> str:
        """The short text the model reads instead of the rows: size, column names, the first rows as compact
        lines, a note when a cell was cut here (only here: the table keeps it whole), and the pages left out."""
        n, m = len(self.rows), len(self.columns)
        lines = [
            f"{self.name}: {n} row{'' if n == 1 else 's'} × {m} column{'' if m == 1 else 's'}, "
            f"{self.pages} page{'' if self.pages == 1 else 's'}, from {self.source}.",
            "Columns: " + " | ".join(self.columns),
        ]
        cut = False
        for i, row in enumerate(self.rows[: max(0, first)], 1):
            cells = []
            for cell in row:
                if len(cell) > SUMMARY_CELL:
                    cell, cut = cell[: SUMMARY_CELL - 1] + "…", True
                cells.append(cell)
            lines.append(f"{i}: " + " | ".join(cells))
        rest = n - min(n, max(0, first))
        tail = f"… {rest} more row{'' if rest == 1 else 's'}. " if rest else ""
        if cut:
            tail += f"Cells over {SUMMARY_CELL} characters are cut in this summary only. "
        lines.append(f"{tail}All rows are kept as {self.name}: name it in done instead of copying them.")
        lines += [f"Not read: {why}." for why in self.dropped]
        return "\n".join(lines)


# -- what the page script found ---------------------------------------------------------------------------------
@dataclass
class Target:
    """A table or list found on the page, and how to find it again after the page changed (a token the
    isolated world remembers the element by, and a descriptor: id, child-index path, ordinal)."""

    frame: Frame
    token: str
    desc: dict[str, Any]
    kind: Literal["table", "items"]
    label: str


Slot = tuple[str, str | None]
"""One cell as read: its text and its link (a table cell's first link; None for none, and for an item's field)."""

Record = dict[str, Slot]
"""One row as read, by column name (a table's header names, an item's field names): a column a row lacks is empty."""

EMPTY: Slot = ("", None)


@dataclass
class Read:
    """One page's rows as read, with the notes a reader needs (how many were there, what was capped or cut).

    ``names`` are the page's own columns: a table's header names, or the items' field names. A cell's link is
    kept beside its text and laid out as a "<name> link" column only when the rows are made (:func:`layout`), so
    two pages of one table merge whether or not each has links in a column (see pagination.py)."""

    names: list[str]
    records: list[Record]
    total: int = 0
    capped: bool = False
    cut: int = 0
    dropped_columns: int = 0

    def describe_caps(self) -> list[str]:
        """What was left out or cut, in words for the table's source."""
        out = []
        if self.capped:
            out.append(f"capped at {len(self.records)} of {self.total} rows")
        if self.cut:
            out.append(f"{self.cut} cell{'' if self.cut == 1 else 's'} cut at {MAX_CELL} characters")
        if self.dropped_columns:
            out.append(f"{self.dropped_columns} columns past {MAX_COLUMNS} left out")
        return out


async def page_call(frame: Frame, arg: dict[str, Any], *, timeout: float = READ_TIMEOUT) -> Any:
    """One extract op in ``frame``'s isolated world; a page that went away is an :class:`ExtractError`."""
    try:
        return await wait_for(call_page_api(frame, arg, timeout=timeout), timeout + 1)
    except (PlaywrightError, TimeoutError) as exc:
        raise ExtractError(f"the page could not be read ({first_line(exc)}).") from None


def _limits() -> dict[str, int]:
    return {"maxRows": MAX_ROWS, "maxRaw": 4 * MAX_CELL}


async def find(frame: Frame, element: ElementHandle, kind: Kind = "auto") -> tuple[Target, Read]:
    """The table (``element`` is in it, or holds it) or the repeated list (``element`` is its container or one
    item) at ``element``, read once."""
    token = secrets.token_hex(8)
    try:
        await page_api_element(frame, {"op": "extract:mark", "k": token}, scope=element)
    except PlaywrightError as exc:
        raise ExtractError(f"the element could not be reached ({first_line(exc)}).") from None
    res = await _read_on(frame, {"op": "extract:read", "k": token, "kind": kind, **_limits()})
    if "error" in res:
        if res["error"] == "gone":
            raise ExtractError("the element is no longer on the page.")
        what = {"table": "a table", "items": "a list of repeated items"}.get(kind, "a table or list")
        raise ExtractError(f"the element is not in {what}: there is nothing to read there.")
    read = _parse(res)
    if not read.names:  # items with nothing to read in them (a row of buttons)
        raise ExtractError("the element is not in a table or list: there is nothing to read there.")
    return Target(frame, token, res["desc"], res["kind"], _label(res)), read


async def reread(target: Target) -> Read:
    """The target read again (after a next-page click or loading more), found by token or descriptor."""
    res = await _read_on(target.frame, {"op": "extract:read", "k": target.token, "desc": target.desc, **_limits()})
    if "error" in res:
        raise ExtractError(f"the {target.label} is no longer on the page.")
    return _parse(res)


async def _read_on(frame: Frame, arg: dict[str, Any]) -> dict[str, Any]:
    """A read in as many calls as it takes: the page script hands back after a short time budget (with
    ``next``), so the page stays responsive while a big table is read; the parts are joined here."""
    res: dict[str, Any] = await page_call(frame, arg)
    if "error" in res:
        return res
    key = "rows" if res["kind"] == "table" else "items"
    data = _data_rows(res)
    part = res
    while part.get("next") is not None:
        part = await page_call(frame, {**arg, "desc": res["desc"], "start": part["next"], "data": data})
        if "error" in part:
            raise ExtractError("the table or list left the page while it was read.")
        res[key] += part[key]
        data += _data_rows(part)
        res["capped"], res["total"] = part["capped"], part["total"]
    return res


def _data_rows(part: dict[str, Any]) -> int:
    """Rows of one read that count toward :data:`MAX_ROWS` (a table's visible data rows, or items)."""
    if part["kind"] == "table":
        return sum(1 for _, head, hidden, _ in part["rows"] if not head and not hidden)
    return len(part["items"])


def _label(res: dict[str, Any]) -> str:
    if res["kind"] == "table":
        caption = " ".join(str(res.get("label") or "").split())
        return f'table "{caption[:80]}"' if caption else "table"
    return f"list of {res['total']} {res['label']} items"


def _parse(res: dict[str, Any]) -> Read:
    read = table_model(res["rows"]) if res["kind"] == "table" else items_model(res["items"])
    read.total, read.capped = int(res["total"]), bool(res["capped"])
    return read


async def read_table(frame: Frame, element: ElementHandle) -> tuple[list[str], list[list[str]]]:
    """Columns and rows of the ``<table>`` (or ARIA table/grid) that holds ``element`` (or that it holds)."""
    _, read = await find(frame, element, "table")
    return layout(read.names, read.records)


async def read_items(frame: Frame, element: ElementHandle) -> tuple[list[str], list[list[str]]]:
    """Columns and rows of the repeated items (cards, results) ``element`` contains or is one of."""
    _, read = await find(frame, element, "items")
    return layout(read.names, read.records)


# -- the table model ----------------------------------------------------------------------------------------------


def clean(text: str) -> tuple[str, bool]:
    """Whitespace collapsed and cut at :data:`MAX_CELL`; True when it was cut."""
    text = " ".join(str(text).split())
    return (text[:MAX_CELL], True) if len(text) > MAX_CELL else (text, False)


def expand(rows: Sequence[Sequence[Any]]) -> tuple[list[list[Slot]], int]:
    """The HTML table model, simplified: each row's cells go to the next free columns (slots held by a rowspan
    from above are skipped); a cell covers ``colspan`` columns and ``rowspan`` rows of its row group (0: to the
    group's end), its text repeated in every slot. ``rows`` are ``[group, cells]`` with a cell ``[text]`` or
    ``[text, colspan, rowspan, href]``. Returns the grid, every row as wide as the widest, and how many
    columns past :data:`MAX_COLUMNS` were dropped."""
    grid: list[dict[int, Slot]] = []
    carry: dict[int, tuple[int, Slot]] = {}  # column -> (rows it still covers below this one, -1: all, slot)
    group: Any = object()
    widest = 0
    for sec, cells in rows:
        if sec != group:
            carry, group = {}, sec
        slots = {x: slot for x, (_, slot) in carry.items()}
        new: dict[int, tuple[int, Slot]] = {}
        x = 0
        for cell in cells:
            text, cs, rs, href = (cell[0], 1, 1, None) if len(cell) == 1 else cell
            cs, rs = max(1, int(cs)), max(0, int(rs))
            while x in slots:
                x += 1
            slot: Slot = (text, href)
            for dx in range(cs):
                widest = max(widest, x + dx + 1)
                if x + dx < MAX_COLUMNS:
                    slots.setdefault(x + dx, slot)
                    if rs != 1:
                        new[x + dx] = (rs - 1 if rs else -1, slot)
            x += cs
        carry = {c: (n - 1 if n > 0 else n, s) for c, (n, s) in carry.items() if n != 1}
        carry.update(new)
        grid.append(slots)
    width = min(widest, MAX_COLUMNS)
    empty: Slot = ("", None)
    return [[g.get(c, empty) for c in range(width)] for g in grid], max(0, widest - MAX_COLUMNS)


def unique(names: Sequence[str]) -> list[str]:
    """Names made unique: an empty one becomes "column N" (its position), a repeat "Price 2", "Price 3"."""
    out: list[str] = []
    seen: set[str] = set()
    for i, name in enumerate(names):
        base = name or f"column {i + 1}"
        new, k = base, 2
        while new in seen:
            new, k = f"{base} {k}", k + 1
        seen.add(new)
        out.append(new)
    return out


def header_names(head: Sequence[Sequence[str]], width: int) -> list[str]:
    """One name per column from the header rows, top down: "Group / Sub"; a text repeated by a rowspan once."""
    names = []
    for c in range(width):
        parts: list[str] = []
        for row in head:
            if row[c] and (not parts or parts[-1] != row[c]):
                parts.append(row[c])
        names.append(" / ".join(parts))
    return names


def table_model(raw: Sequence[Sequence[Any]]) -> Read:
    """Column names and records from the page script's raw rows ``[group, isHeader, isHidden, cells]``: spans
    expanded, header rows joined into names, each cell's link kept beside its text, hidden rows left out (after
    expansion, so a rowspan through one still places the cells below it)."""
    cut = 0

    def text(t: str) -> str:
        nonlocal cut
        value, was_cut = clean(t)
        cut += was_cut
        return value

    cells = [[sec, [[text(c[0]), *c[1:]] for c in row]] for sec, _, _, row in raw]
    grid, dropped = expand(cells)
    width = len(grid[0]) if grid else 0
    head = [[t for t, _ in g] for g, r in zip(grid, raw, strict=True) if r[1]]
    names = unique(header_names(head, width))
    body = [dict(zip(names, g, strict=True)) for g, r in zip(grid, raw, strict=True) if not r[1] and not r[2]]
    return Read(names, body, cut=cut, dropped_columns=dropped)


def items_model(items: Sequence[Sequence[Sequence[str]]]) -> Read:
    """Field names (the union of the items' field names, first seen first) and one record per item."""
    cut = 0
    names: dict[str, None] = {}
    records: list[Record] = []
    for item in items:
        record: Record = {}
        for key, value in item:
            text, was_cut = clean(value)
            cut += was_cut
            names.setdefault(str(key))
            record[str(key)] = (text, None)
        records.append(record)
    return Read(list(names), records, cut=cut)


def layout(names: Sequence[str], records: Sequence[Record]) -> tuple[list[str], list[list[str]]]:
    """Columns and rows of ``records``: each name a column, with a "<name> link" column after it when any row's
    cell there holds a link ("" in the rows whose cell has none, and where a row lacks the column); names made
    unique. The one place a table's shape is decided, for one page as for many."""
    linked = {n for n in names if any(r.get(n, EMPTY)[1] for r in records)}
    columns: list[str] = []
    for n in names:
        columns += [n, f"{n} link"] if n in linked else [n]
    rows = []
    for record in records:
        out: list[str] = []
        for n in names:
            text, href = record.get(n, EMPTY)
            out += [text, href or ""] if n in linked else [text]
        rows.append(out)
    return unique(columns), rows

"""More than one page of a table or list: following its "next" control, or scrolling until no more rows load.

One job: turn a first read (extract.py) into an :class:`~notebook_agent.browser.extract.tables.ExtractedTable` of up to
``pages`` pages. The next control is found by the page script in the isolated world (rel=next, a "Next" / "›" /
"»" text or label, ranked by sitting in a pagination element after the table and near it) and clicked by the
caller's ``click``, which goes through the session like a click action does, so the door and the
effect gate see what it starts. After a click the table must change (other rows, more rows, or a new document
holding it); the rows are read again and appended. Paging stops on a disabled or missing next control, a page
that repeats an earlier one, the row cap, or ``pages``. Without a next control, rows loaded on scroll are
fetched by scrolling the table's scroller (or the page) to its end until the count stops growing.

Pages are merged by their columns' names, one rule for every way more rows come (:class:`Pages`): a table's
pages with the same header are one table whatever links each page's cells hold (a "<name> link" column that
only some pages have is empty in the others' rows), a list's items take the union of their fields. A table page
whose header differs is not read, and neither is any after it: the table says so in ``dropped``, which goes
wherever the table goes, not only into what the model reads.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from playwright.async_api import ElementHandle, Frame
from playwright.async_api import Error as PlaywrightError

from ...core.abort import AbortSignal
from ..errors import first_line, short
from ..page.page_script import page_api_element
from .tables import MAX_ROWS, ExtractedTable, ExtractError, Kind, Read, Record, Target, find, layout, page_call, reread

Click = Callable[[ElementHandle], Awaitable[str]]
"""Clicks the next control the way an action does and returns what that caused, in words ("" when nothing)."""
Progress = Callable[[str], Awaitable[None]]

#: Seconds to wait for the table to change after a next click (a server page loads within this too).
CHANGE_TIMEOUT = 10.0
#: Seconds without a new row after scrolling to the end before loading on scroll counts as finished.
SCROLL_IDLE = 1.5
POLL = 0.1


@dataclass
class Pages:
    """What reading more pages gave: every row read (by column name), the columns, how many pages, why it
    stopped, the pages left out, what the clicks caused. :meth:`add` is where a page joins the others."""

    names: list[str]
    records: list[Record]
    kind: str = "table"
    count: int = 1
    notes: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    effects: str = ""
    capped: bool = False

    @classmethod
    def first(cls, target: Target, read: Read) -> Pages:
        return cls(list(read.names), list(read.records), target.kind)

    def fits(self, page: Read, what: str) -> bool:
        """Whether ``page`` (``what``: "page 3 and any after it") belongs with the rows so far: a list's items
        always (their fields join the columns), a table's page when its header names are the same (its link
        columns may differ: links are laid out after the merge). One that does not is noted in :attr:`dropped`."""
        if self.kind != "table":
            self.names += [n for n in page.names if n not in self.names]
            return True
        if page.names == self.names:
            return True
        differs = " | ".join(page.names)
        self.dropped.append(
            f"{what}, since the header differs from page 1's ({differs[:120]} against {' | '.join(self.names)[:120]})"
        )
        return False

    def add(self, records: list[Record]) -> None:
        """Rows of a page that :meth:`fits`, up to :data:`MAX_ROWS` in all."""
        self.records += records
        if len(self.records) > MAX_ROWS:
            del self.records[MAX_ROWS:]
            self.capped = True


async def extract(
    frame: Frame,
    element: ElementHandle,
    *,
    name: str,
    where: str = "",
    pages: int = 1,
    click: Click | None = None,
    kind: Kind = "auto",
    signal: AbortSignal | None = None,
    progress: Progress | None = None,
) -> tuple[ExtractedTable, str]:
    """Read the table or list at ``element``, then up to ``pages - 1`` more pages (next control with ``click``,
    else loading on scroll). Returns the table and what the clicks caused ("The page navigated to …")."""
    signal = signal or AbortSignal()
    url = frame.url
    target, first = await signal.race(find(frame, element, kind))
    more = Pages.first(target, first)
    if pages == 1:  # say when there is more to read, so the model can ask for it
        try:
            info = await signal.race(_next_info(target))
        except ExtractError:
            info = {}
        if info.get("found") and not info.get("disabled"):
            more.notes.append("a next-page control follows: pages>1 reads more pages")
    else:
        more = await follow_next(target, first, pages, click, signal=signal, progress=progress)
        if more.count == 1 and more.notes == ["no next-page control was found"]:
            more = await load_on_scroll(target, first, pages, signal=signal, progress=progress)
    caps = first.describe_caps()
    if more.capped and not first.capped:
        caps.append(f"capped at {MAX_ROWS} rows")
    notes = [n for n in more.notes if n] + caps
    source = f"{target.label} {where} on {url}".replace("  ", " ")
    if notes:
        source += " (" + "; ".join(notes) + ")"
    columns, rows = layout(more.names, more.records)
    return ExtractedTable(name, columns, rows, source, more.count, more.dropped), more.effects


async def _probe(target: Target) -> Any:
    """How many rows the target has and what its first and last say; None while it cannot be found (a page
    loading, a re-render in progress)."""
    try:
        res = await page_call(target.frame, {"op": "extract:probe", "k": target.token, "desc": target.desc}, timeout=3)
    except ExtractError:
        return None
    return None if "error" in res else res


async def _changed(target: Target, before: object, signal: AbortSignal, timeout: float) -> bool:
    """Wait until the target differs from ``before``, then until two probes agree (rows still arriving)."""
    deadline = time.monotonic() + timeout
    now = None
    while time.monotonic() < deadline:
        now = await signal.race(_probe(target))
        if now is not None and now != before:
            break
        await signal.sleep(POLL)
    else:
        return False
    settle = time.monotonic() + 2.0
    while time.monotonic() < settle:
        await signal.sleep(POLL)
        again = await signal.race(_probe(target))
        if again == now:
            break
        now = again
    return True


async def _next_info(target: Target) -> dict[str, Any]:
    arg = {"op": "extract:nextInfo", "k": target.token, "desc": target.desc}
    res: dict[str, Any] = await page_call(target.frame, arg, timeout=5)
    return res


async def follow_next(
    target: Target,
    first: Read,
    pages: int,
    click: Click | None,
    *,
    signal: AbortSignal,
    progress: Progress | None = None,
    timeout: float = CHANGE_TIMEOUT,
) -> Pages:
    """Click the target's next control and read again, up to ``pages`` pages in all (see the module text)."""
    out = Pages.first(target, first)
    prev = first.records
    firsts = {_key(first.records[0])} if first.records else set()
    what = "table" if target.kind == "table" else "list"
    while out.count < pages:
        info = await signal.race(_next_info(target))
        if "error" in info:
            out.notes.append(f"the {what} left the page")
            break
        if not info["found"]:
            out.notes.append("no next-page control was found")
            break
        if info["disabled"]:
            out.notes.append(f"the next-page control '{short(info['text'], 30)}' is disabled (last page)")
            break
        if click is None:
            out.notes.append("more pages were not followed")
            break
        before = await signal.race(_probe(target))
        arg = {"op": "extract:next", "k": target.token, "desc": target.desc}
        try:
            control = await signal.race(page_api_element(target.frame, arg))
        except PlaywrightError as exc:
            out.notes.append(f"the next-page control could not be reached ({first_line(exc)})")
            break
        if control is None:
            out.notes.append("the next-page control went away")
            break
        try:
            out.effects = await click(control) or out.effects
        except PlaywrightError as exc:
            out.notes.append(f"the next-page control could not be clicked ({first_line(exc)})")
            break
        if not await _changed(target, before, signal, timeout):
            out.notes.append(f"the {what} did not change within {timeout:g} s of clicking next")
            break
        try:
            new = await signal.race(reread(target))
        except ExtractError:
            out.notes.append(f"the {what} was not found after clicking next")
            break
        if not out.fits(new, f"page {out.count + 1} and any after it"):
            break
        if len(new.records) > len(prev) and new.records[: len(prev)] == prev:
            added = new.records[len(prev) :]  # a "more" control that appends
        elif not new.records or _key(new.records[0]) in firsts:
            out.notes.append(f"page {out.count + 1} repeated an earlier page")
            break
        else:
            added = new.records
            firsts.add(_key(new.records[0]))
        out.add(added)
        out.count += 1
        prev = new.records
        if progress is not None:
            await progress(f"read page {out.count}: {len(out.records)} rows")
        if out.capped:
            break
    else:
        if pages > 1:
            info = await signal.race(_next_info(target))
            if info.get("found") and not info.get("disabled"):
                out.notes.append(f"more pages follow (pages={pages} reached)")
    if out.count > 1:
        out.notes.insert(0, f"{out.count} pages via the next-page control")
    return out


def _key(record: Record) -> frozenset[tuple[str, tuple[str, str | None]]]:
    """A row as a set of (column, cell): the same row on two reads, whatever order its columns came in."""
    return frozenset(record.items())


async def load_on_scroll(
    target: Target,
    first: Read,
    pages: int,
    *,
    signal: AbortSignal,
    progress: Progress | None = None,
    idle: float = SCROLL_IDLE,
) -> Pages:
    """Scroll the target's scroller (or the page) to the end until no new rows arrive within ``idle`` seconds,
    at most ``pages - 1`` times, then read once: rows loaded on scroll are appended to the same table."""
    before = await signal.race(_probe(target))
    count = before["n"] if before else len(first.records)
    rounds = 0
    while rounds < pages - 1 and count < MAX_ROWS:
        arg = {"op": "extract:end", "k": target.token, "desc": target.desc}
        res = await signal.race(page_call(target.frame, arg, timeout=5))
        if "error" in res:
            break
        deadline = time.monotonic() + idle
        grown = None
        while time.monotonic() < deadline:
            await signal.sleep(POLL)
            now = await signal.race(_probe(target))
            if now is not None and now["n"] > count:
                grown = now["n"]
                break
        if grown is None:
            break
        await _changed(target, None, signal, 2.0)  # let the batch finish arriving
        now = await signal.race(_probe(target))
        count = max(grown, now["n"] if now else grown)
        rounds += 1
        if progress is not None:
            await progress(f"loaded more on scroll: {count} rows")
    out = Pages.first(target, first)
    if not rounds:
        out.notes.append("no next-page control was found, and scrolling to the end loaded no more rows")
        return out
    new = await signal.race(reread(target))  # every row, the first ones again: read in place of the first read
    if out.fits(new, "the rows loaded on scroll"):
        out.records, out.count = [], 1 + rounds
        out.add(new.records)
    out.notes.append(f"scrolled to the end {rounds} time{'' if rounds == 1 else 's'} to load more rows")
    if rounds == pages - 1:
        out.notes.append(f"more may load on scroll (pages={pages} reached)")
    return out


__all__ = ["CHANGE_TIMEOUT", "Click", "Pages", "Progress", "extract", "follow_next", "load_on_scroll"]

"""Which actions a run is offered beyond the everyday ones, decided once when it starts.

Every action offered is read by the model at every step (its schema is part of the fixed prompt), so an action
few tasks need costs every task. ``extract_table`` (and, with a typed answer, ``done``'s ``table`` and
``columns`` fields, which name an extracted table) is offered when the run calls for data: the request asks for
a table, rows or a list, the answer's type is a list of rows, or the page the run starts on shows a table.
A profile's actions offered on request (profiles.py: ``go_to_url``, ``hover``, ``switch_tab``,
``scroll_horizontally``) are offered when the request asks for them, or the start page does: ``switch_tab``
where it has links or buttons that open a new tab, ``scroll_horizontally`` where it is wider than the window.
The choice is made once, from the request and the start page, so the tool list stays byte-identical from step
to step and a provider's prompt cache keeps it.
"""

from __future__ import annotations

import re

from ...browser.page.snapshot import Snapshot
from ...browser.session.browser_session import BrowserSession

Calls = frozenset[str]
"""The actions a start page calls for (:func:`page_calls`)."""

_DATA_WORDS = re.compile(
    r"\b(tables?|tabular|rows?|columns?|spreadsheets?|csv|dataframes?|extract\w*|scrape\w*|lists?|listings?)\b",
    re.IGNORECASE,
)

#: What the start page calls for: a table (extract_table), a new tab (switch_tab), sideways scrolling.
_CALLS_JS = """() => {
  const has = (sel) => !!document.querySelector(sel);
  const calls = [];
  if (has('table, [role=table], [role=grid], [role=treegrid]')) calls.push('extract_table');
  if (has('[target=_blank], [onclick*="window.open"]')) calls.push('switch_tab');
  if (document.documentElement.scrollWidth > window.innerWidth + 8) calls.push('scroll_horizontally');
  return calls;
}"""


def asks_for_data(task: str) -> bool:
    """Whether a request asks for data read off a page (a table, rows, columns, a list, an extraction)."""
    return _DATA_WORDS.search(task) is not None


async def page_calls(browser: BrowserSession) -> frozenset[str]:
    """The actions the tab's page (its main document) calls for: ``extract_table`` where it has a table or a
    grid, ``switch_tab`` where it opens new tabs, ``scroll_horizontally`` where it is wider than the window;
    none when it cannot be asked."""
    try:
        found = await browser.call(lambda: browser.page.evaluate(_CALLS_JS))
    except Exception:  # no page yet, or a page that does not answer: it calls for nothing
        return frozenset()
    return frozenset(str(name) for name in found) if isinstance(found, list) else frozenset()


def calls_for_data(task: str, output_spec: object, page_has_table: bool) -> bool:
    """Whether a run is offered ``extract_table``: the request asks for data, the typed answer is a list of rows
    (``output_spec.takes_tables``), or the start page shows a table."""
    takes_tables = bool(getattr(output_spec, "takes_tables", False))
    return takes_tables or page_has_table or asks_for_data(task)


async def called_for(
    browser: BrowserSession, task: str, output_spec: object, snapshot: Snapshot | None = None
) -> tuple[str | None, bool, frozenset[str]]:
    """What a run starting now on ``browser`` is offered by: the request, for a profile's actions offered on
    request, or None when the tab shows no page yet (see profiles.py); whether it calls for data; the actions
    its start page calls for, as ``snapshot`` (of that page, just taken) read them when it did, else asked
    of the page."""
    try:
        url = browser.page.url
    except Exception:  # no page yet
        url = ""
    if url in ("", "about:blank"):
        return None, calls_for_data(task, output_spec, False), frozenset()
    calls = getattr(snapshot, "calls", None)
    if calls is None:
        calls = await page_calls(browser)
    return task, calls_for_data(task, output_spec, "extract_table" in calls), calls

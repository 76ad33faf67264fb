"""Which actions a run is offered beyond the everyday ones, decided once when it starts.

Every action offered is read by the model at every step (its schema is part of the fixed prompt), so an action
few tasks need costs every task. ``extract_table`` (and, with a typed answer, ``done``'s ``table`` and
``columns`` fields, which name an extracted table) is offered when the run calls for data: the request asks for
a table, rows or a list, the answer's type is a list of rows, or the page the run starts on shows a table. The
choice is made once, from the request and the start page, so the tool list stays byte-identical from step to
step and a provider's prompt cache keeps it (the same rule as the small profile's ``go_to_url``).
"""

from __future__ import annotations

import re
from typing import Any

from ...browser.session.browser_session import BrowserSession

_DATA_WORDS = re.compile(
    r"\b(tables?|tabular|rows?|columns?|spreadsheets?|csv|dataframes?|extract\w*|scrape\w*|lists?|listings?)\b",
    re.IGNORECASE,
)

_HAS_TABLE_JS = "() => !!document.querySelector('table, [role=table], [role=grid], [role=treegrid]')"


def asks_for_data(task: str) -> bool:
    """Whether a request asks for data read off a page (a table, rows, columns, a list, an extraction)."""
    return _DATA_WORDS.search(task) is not None


async def shows_table(browser: BrowserSession) -> bool:
    """Whether the tab's page (its main document) has a table or a grid; False when it cannot be asked."""
    try:
        return bool(await browser.call(lambda: browser.page.evaluate(_HAS_TABLE_JS)))
    except Exception:  # no page yet, or a page that does not answer: nothing calls for data there
        return False


def calls_for_data(task: str, output_spec: Any, page_has_table: bool) -> bool:
    """Whether a run is offered ``extract_table``: the request asks for data, the typed answer is a list of rows
    (``output_spec.takes_tables``), or the start page shows a table."""
    takes_tables = bool(getattr(output_spec, "takes_tables", False))
    return takes_tables or page_has_table or asks_for_data(task)


async def called_for(browser: BrowserSession, task: str, output_spec: Any) -> tuple[str | None, bool]:
    """What a run starting now on ``browser`` is offered by: (the request, for a profile's actions offered on
    request, or None when the tab shows no page yet: see profiles.py; whether it calls for data)."""
    try:
        url = browser.page.url
    except Exception:  # no page yet
        url = ""
    on_page = url not in ("", "about:blank")
    return (task if on_page else None), calls_for_data(task, output_spec, on_page and await shows_table(browser))

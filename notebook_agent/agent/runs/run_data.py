"""A run's data: the tables it read and its checked answer, kept, saved, compared and turned into DataFrames.

Plain functions over plain values, so the run, run files, views, evaluation and the map all read answers the
same way without importing the machinery that checked them (:mod:`notebook_agent.agent.step.typed_output`).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from pydantic import BaseModel

from ...core import JSONValue


class Table(Protocol):
    """What the run's data needs of an extracted table (``browser.extract.ExtractedTable``)."""

    name: str
    columns: list[str]
    rows: list[list[str]]


def to_json(value: object) -> JSONValue:
    """Any answer as plain JSON: pydantic models, dataclasses, TypedDicts and lists of them."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_json(dataclasses.asdict(value))
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def _pandas() -> Any:
    try:
        import pandas
    except ImportError:
        raise ImportError(
            'to_pandas() needs pandas: pip install "notebook-agent[data]" (or pip install pandas)'
        ) from None
    return pandas


def to_pandas(value: object) -> Any:
    """A DataFrame of an answer: one row per item of a list (or of a model's one list field), else one row."""
    pd = _pandas()
    data = to_json(value)
    if isinstance(data, dict):
        lists = [k for k, v in data.items() if isinstance(v, list) and all(isinstance(i, dict) for i in v)]
        data = data[lists[0]] if len(lists) == 1 else [data]
    if not isinstance(data, list):
        data = [{"value": data}]
    return pd.DataFrame([row if isinstance(row, dict) else {"value": row} for row in data])


class RunData:
    """What one run collected as data: the tables ``extract_table`` read (by name) and the checked answer.

    Every cell passes the run's redaction on the way in (a page may show a secret in a table), so what a run
    keeps, shows and saves holds no secret."""

    def __init__(self, scrub: Callable[[str], str]) -> None:
        self.scrub = scrub
        self.tables: dict[str, Any] = {}
        self.output: Any = None

    def action_finished(self, action: str, details: object) -> None:
        if not isinstance(details, dict):
            return
        table = details.get("table")
        if table is not None and isinstance(getattr(table, "name", None), str):
            table.columns = [self.scrub(c) for c in table.columns]
            table.rows = [[self.scrub(c) for c in row] for row in table.rows]
            self.tables[table.name] = table

    def finished(self, answer: object) -> None:
        """The finishing action's checked answer (None: the run has no typed answer)."""
        if answer is not None:
            self.output = answer


def table_frame(table: Table) -> Any:
    """An extracted table as a DataFrame, cells as the page showed them; ``attrs["dropped"]`` lists the pages
    that were reached but not read (a header that differs), so a frame with fewer rows than the site says so."""
    pd = _pandas()
    frame = pd.DataFrame(table.rows, columns=table.columns)
    frame.attrs["dropped"] = list(getattr(table, "dropped", None) or [])
    return frame


def dropped_notes(tables: Mapping[str, Any]) -> list[str]:
    """One line per table that left pages out (``t1 is missing page 3 and any after it, since …``), for views."""
    return [f"{name} is missing {why}" for name, t in tables.items() for why in getattr(t, "dropped", None) or []]


def table_to_dict(table: Table) -> dict[str, Any]:
    """A table as it is kept in a run file."""
    return {
        "columns": list(table.columns),
        "rows": [list(r) for r in table.rows],
        "source": getattr(table, "source", ""),
        "pages": getattr(table, "pages", 1),
        "dropped": list(getattr(table, "dropped", None) or []),
    }


def table_from_dict(name: str, data: Mapping[str, Any]) -> Any:
    """A table read back from a run file (cells as they were read)."""
    from ...browser.extract.tables import ExtractedTable

    if not isinstance(data, Mapping):  # a run file is input too
        data = {}
    return ExtractedTable(
        name=name,
        columns=[str(c) for c in data.get("columns") or []],
        rows=[[str(c) for c in row] for row in data.get("rows") or [] if isinstance(row, list)],
        source=str(data.get("source") or ""),
        pages=int(data.get("pages") or 1),
        dropped=[str(d) for d in data.get("dropped") or [] if isinstance(d, str)],
    )


def field_diff(a: object, b: object, path: str = "output", *, limit: int = 20) -> list[str]:
    """Where two answers differ, field by field: ``output/0/price: 54.99 ≠ 59.99`` (see :func:`differences`)."""
    return [f"{where}: {x} ≠ {y}" for where, x, y in differences(a, b, path, limit=limit)]


def differences(a: object, b: object, path: str = "output", *, limit: int = 20) -> list[tuple[str, str, str]]:
    """(where, value in a, value in b) for each field where two answers differ. Numbers compare by value (2
    equals 2.0, but not True); lists of different lengths say so once; at most ``limit`` entries."""
    out: list[tuple[str, str, str]] = []

    def show(v: object) -> str:
        text = json.dumps(v, ensure_ascii=False, default=str)
        return text if len(text) <= 60 else text[:59] + "…"

    def walk(x: object, y: object, where: str) -> None:
        if len(out) >= limit:
            return
        if isinstance(x, dict) and isinstance(y, dict):
            for key in [*x, *(k for k in y if k not in x)]:
                if key not in x or key not in y:
                    out.append(
                        (
                            f"{where}/{key}",
                            show(x[key]) if key in x else "missing",
                            show(y[key]) if key in y else "missing",
                        )
                    )
                else:
                    walk(x[key], y[key], f"{where}/{key}")
        elif isinstance(x, list) and isinstance(y, list):
            if len(x) != len(y):
                out.append((where, f"{len(x)} items", f"{len(y)} items"))
            for i, (u, v) in enumerate(zip(x, y, strict=False)):
                walk(u, v, f"{where}/{i}")
        elif x != y or (isinstance(x, bool) != isinstance(y, bool)):
            out.append((where, show(x), show(y)))

    walk(to_json(a), to_json(b), path)
    return out

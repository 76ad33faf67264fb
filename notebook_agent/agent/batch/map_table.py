"""What ``agent.map`` reads and what it gives back, as plain data: the rows, the task template, the table.

Rows come as a pandas DataFrame, a list of dicts or a list of plain values (one column, ``value``); they are
normalised once into ``(columns, list of dicts)`` so nothing later asks which kind it was. The template is a
``str.format`` template over the columns; every placeholder is checked against every row before anything runs,
because finding a typo in row 180 of 200 after an hour of browsing is the failure this avoids.

The table (:meth:`MapResult.records`, :meth:`MapResult.to_pandas`) is the input columns, then what each run
gave: ``status``, ``success``, ``answer``, the typed output's fields (one column each), ``steps``, the row's
ledger (``model_calls``, ``tokens`` and its ``input_tokens``, ``cached_tokens``, ``output_tokens``,
``reasoning_tokens``, ``cost``: empty when it is unknown, never 0), ``seconds``, ``run_id``, ``error``. pandas is
needed only for DataFrames in and out.
"""

from __future__ import annotations

import dataclasses
import os
import string
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from pydantic import BaseModel, TypeAdapter

from ...core.errors import InputError
from ...core.text.shown import html_block, shown
from ...llm.ledger import Ledger
from ..runs.result import PageAgentResult, replay_line
from ..safety.row_text import fill_row
from .map_cells import table_value
from .map_counts import MapCounts

Row: TypeAlias = dict[str, Any]

RowStatus: TypeAlias = Literal[
    "not_started", "running", "completed", "failed", "max_steps", "budget", "stopped", "error"
]
"""A run's own status, or ``not_started`` (a stop came first) / ``running`` (while the map runs)."""

KeepRuns: TypeAlias = Literal["all", "exceptions"]
"""Which rows keep their whole run once they end: ``all``, or only the ``exceptions`` (a row without success, or
a recipe's row the model healed); every row keeps its table row (:class:`RowFacts`) either way."""

#: The columns every map table has after the input's, in order; the output's fields go after ``answer``.
RESULT_COLUMNS = ("status", "success", "answer", "steps", *Ledger().columns(), "seconds", "run_id", "error")

#: What a row without success and without a reason of its own says, by its status (:meth:`MapRow.failure`).
ENDED = {
    "not_started": "Not started: the map stopped before this row (a stop, its budget or its estimate: see its note).",
    "failed": "The agent said it failed.",
    "max_steps": "Stopped at max_steps without finishing.",
    "budget": "Stopped at its budget without finishing.",
    "stopped": "Stopped before the run finished.",
    "error": "The run ended with an error.",
}

PANDAS_HINT = 'pip install "notebook-agent[data]" (or pip install pandas)'


class MapInputError(InputError):
    """The rows or the template cannot make tasks (the message says which row or placeholder, and the columns)."""


def pandas_module() -> Any:
    """pandas, or an ImportError that says how to install it (it is an optional extra)."""
    try:
        import pandas
    except ImportError:
        raise ImportError(f"DataFrames need pandas: {PANDAS_HINT}") from None
    return pandas


# -- rows in -------------------------------------------------------------------------------------------------
def normalise_rows(rows: Any) -> tuple[list[str], list[Row]]:
    """``(columns, rows as dicts)`` from a DataFrame, a list of dicts or a list of plain values (column
    ``value``). Column names become strings, since placeholders are."""
    if hasattr(rows, "to_dict") and hasattr(rows, "columns"):  # a DataFrame, without importing pandas
        columns = [str(c) for c in rows.columns]
        if len(set(columns)) != len(columns):
            raise MapInputError(f"The DataFrame has repeated column names: {columns}.")
        records = rows.to_dict("records")
        return columns, [{str(k): v for k, v in r.items()} for r in records]
    if isinstance(rows, (str, bytes, Mapping)) or not isinstance(rows, Iterable):
        raise MapInputError(
            f"rows must be a DataFrame, a list of dicts or a list of values, not {type(rows).__name__}."
        )
    items = list(rows)
    dicts = [isinstance(r, Mapping) for r in items]
    if any(dicts) and not all(dicts):
        raise MapInputError("rows mixes dicts and plain values: give all rows as dicts, or all as plain values.")
    if not all(dicts) or not items:
        return ["value"], [{"value": v} for v in items]
    seen: dict[str, None] = {}
    out: list[Row] = []
    for r in items:
        row = {str(k): v for k, v in r.items()}
        seen.update(dict.fromkeys(row))
        out.append(row)
    return list(seen), out


# -- the template ------------------------------------------------------------------------------------------------
def template_fields(template: str) -> list[str]:
    """The column each placeholder names (``{price:.2f}`` → ``price``, ``{a.b}`` → ``a``), in order; literal
    ``{{`` and ``}}`` are not placeholders."""
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise MapInputError(f"The task template {template!r} is not a valid template: {exc}.") from None
    names: list[str] = []
    for _, name, _, _ in parsed:
        if name is None:
            continue
        base = name.split(".", 1)[0].split("[", 1)[0]
        if not base or base.isdigit():
            raise MapInputError(
                f"The task template {template!r} has a placeholder {{{name}}} that names no column: "
                "write {column}, or {{ and }} for literal braces."
            )
        names.append(base)
    return list(dict.fromkeys(names))


def check_template(template: str, columns: list[str], rows: list[Row], what: str = "task template") -> None:
    """Every placeholder names a column present in every row, or a :class:`MapInputError` listing them."""
    names = template_fields(template)
    missing = [n for n in names if n not in columns]
    if missing:
        raise MapInputError(
            f"The {what} names {', '.join('{' + n + '}' for n in missing)}, which "
            f"{'is not a column' if len(missing) == 1 else 'are not columns'}; the columns are: "
            f"{', '.join(columns) or '(none)'}."
        )
    for i, row in enumerate(rows):
        lacking = [n for n in names if n not in row]
        if lacking:
            raise MapInputError(f"Row {i} has no {', '.join(lacking)} for the {what} (it has: {', '.join(row)}).")
    for i, row in enumerate(rows):
        try:
            template.format_map(row)
        except (KeyError, IndexError, AttributeError, ValueError, TypeError) as exc:
            raise MapInputError(f"Row {i} cannot fill the {what} {template!r}: {exc!r}.") from None


def fill(template: str, row: Row) -> str:
    """A row's task: the template filled with the row's values as data (a value never makes a secret's
    placeholder: agent/safety/row_text.py)."""
    return fill_row(template, row)


# -- one row, and the whole map ------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class RowFacts:
    """What the table shows of a row's run, noted when the row ends: it stays when the run itself is let go
    (``keep_runs="exceptions"``), so a map of 10,000 rows holds its table, not 10,000 runs."""

    success: bool
    answer: str
    error: str | None
    steps: int
    ledger: Ledger
    """What the run cost (its wall time included)."""
    run_id: str
    output: Any = None
    replay: tuple[tuple[str, int], ...] = ()
    """A recipe's row: ``(("replayed", 5), ("healed", 1))``, the step counts by how each went."""

    @classmethod
    def of(cls, result: PageAgentResult) -> RowFacts:
        return cls(
            success=result.success,
            answer=result.answer,
            error=result.error,
            steps=len(result.steps),
            ledger=result.ledger,
            run_id=result.run_id,
            output=getattr(result, "output", None),  # typed answers (absent from older results)
            replay=tuple(result.replay_counts.items()),
        )

    @property
    def tokens(self) -> int:
        return self.ledger.tokens

    @property
    def replay_counts(self) -> dict[str, int]:
        return dict(self.replay)

    @property
    def unusual(self) -> bool:
        """A row worth looking into: no success, or a recipe's step the model healed or that failed."""
        counts = self.replay_counts
        return not self.success or bool(counts.get("healed") or counts.get("failed"))

    def replay_text(self) -> str:
        """``5 replayed, 1 healed · 812 tokens`` for a recipe's row, "" otherwise."""
        return replay_line(self.replay_counts, self.tokens) if self.replay else ""


@dataclass
class MapRow:
    """One input row and what became of it."""

    index: int
    values: Row
    task: str
    start_url: str | None = None
    status: RowStatus = "not_started"
    result: PageAgentResult | None = field(default=None, repr=False)
    error: str | None = None
    """Why the row failed when its run could not say it (an exception before or around the run), else the
    run's own error."""
    seconds: float = 0.0
    worker: str | None = None
    """``host:pid`` of the process that ran it, with an executor."""
    kept: RowFacts | None = field(default=None, repr=False)
    """What the table shows of the run, noted when the row ended (:meth:`settle`)."""

    @property
    def chosen_start(self) -> str | None:
        """The row's start page (the map's, or a recipe's own filled with the row's values)."""
        return self.start_url

    @property
    def facts(self) -> RowFacts | None:
        """What the table shows of the row's run, None for a row that has no run (not started, or an error
        before or around it)."""
        if self.kept is not None:
            return self.kept
        return RowFacts.of(self.result) if self.result is not None else None

    def fresh(self) -> MapRow:
        """This row as it was before it ran (to run it again: a new record, so an earlier result keeps this one)."""
        return dataclasses.replace(
            self, status="not_started", result=None, error=None, seconds=0.0, worker=None, kept=None
        )

    def settle(self, keep: KeepRuns) -> None:
        """The row ended: note what the table shows of its run, and let the run go unless ``keep`` keeps it."""
        if self.result is None:
            self.kept = None
            return
        self.kept = RowFacts.of(self.result)
        if keep == "exceptions" and not self.kept.unusual:
            self.result = None

    @property
    def success(self) -> bool:
        facts = self.facts
        return facts is not None and facts.success

    def failure(self) -> str | None:
        """The table's ``error``: the run's error or the map's reason (an exception around the run), and for a
        row without success that has neither, the agent's own words when it said it failed (done with success
        false), else what its status says; never empty for a row that ended without success, whichever way, so
        ``df[df.error.notna()]`` finds every one of them."""
        f = self.facts
        reason = (f.error if f is not None else None) or self.error
        if reason or self.success or self.status == "running":
            return reason or None
        if f is not None and f.answer and self.status == "failed":
            return f"The agent said it failed: {f.answer}"
        return ENDED.get(self.status, "The row ended without success.")

    @property
    def ledger(self) -> Ledger:
        """What the row cost: its run's ledger (nothing for a row that has no run), over the row's wall time."""
        spent = self.facts.ledger if self.facts is not None else Ledger()
        return dataclasses.replace(spent, seconds=self.seconds)

    def record(self) -> dict[str, Any]:
        """This row's result columns (the output's fields under ``output_fields``)."""
        f = self.facts
        return {
            "status": self.status,
            "success": self.success,
            "answer": f.answer if f is not None else "",
            "steps": f.steps if f is not None else 0,
            **self.ledger.columns(),
            "seconds": round(self.seconds, 3),
            "run_id": f.run_id if f is not None else "",
            "error": self.failure(),
        }


def output_fields(output: Any) -> dict[str, Any]:
    """A typed answer as columns: a pydantic model, dataclass or dict gives one column per field, a list (or
    anything else) one ``output`` column; values are JSON-ready (``TypeAdapter.dump_python(mode="json")``)."""
    if output is None:
        return {}
    try:
        data = TypeAdapter(type(output)).dump_python(output, mode="json")
    except Exception:  # a type pydantic cannot describe: keep the value as it is
        data = output
    structured = isinstance(output, (BaseModel, dict)) or (
        dataclasses.is_dataclass(output) and not isinstance(output, type)
    )
    if structured and isinstance(data, dict):
        return {str(k): v for k, v in data.items()}
    return {"output": data}


@dataclass
class MapResult:
    """Every row of a map, in input order: ``.rows`` (:class:`MapRow`), ``.results``, ``.failed``,
    ``.to_pandas()``, ``await .retry()``."""

    template: str
    columns: list[str]
    """The input's columns."""
    rows: list[MapRow]
    elapsed_s: float = 0.0
    """Wall time of the map, its retries added."""
    options: Any = field(default=None, repr=False, compare=False)
    """How the rows were run (``mapping.MapOptions``), so :meth:`retry` runs the failed ones the same way."""
    agent: Any = field(default=None, repr=False, compare=False)
    """The agent that ran them."""
    note: str = ""
    """Why the map stopped starting rows before the end, when something other than a stop did (its budget, the
    answer to its estimate), or ""."""

    @property
    def results(self) -> list[PageAgentResult | None]:
        """Each row's run result, or None for a row that never got one (not started, or failed before its run)
        or whose run was not kept (``keep_runs="exceptions"``: its table row is in :meth:`records`, its run
        file in the agent's ``runs_dir`` when it has one)."""
        return [r.result for r in self.rows]

    @property
    def failed(self) -> list[int]:
        """Indices of the rows without success: an error, a stop, max steps, the agent saying it failed, and the
        rows a stop left not started. ``retry()`` runs exactly these again."""
        return [r.index for r in self.rows if not r.success]

    @property
    def succeeded(self) -> list[int]:
        return [r.index for r in self.rows if r.success]

    async def retry(self, *, on_event: Callable[[Any], Any] | None = None) -> MapResult:
        """Run the failed rows again (same agent and options) and give the merged result; this one is kept.
        The same as ``await agent.map_retry(result)``."""
        if self.agent is None:
            raise RuntimeError("This MapResult was not made by agent.map: use agent.map_retry(result).")
        retried: MapResult = await self.agent.map_retry(self, on_event=on_event)
        return retried

    def table_columns(self) -> list[str]:
        """The table's columns: the input's, ``status``, ``success``, ``answer``, the output's fields, then the rest.
        A result column whose name the input already uses gets an ``agent_`` prefix, an output field whose name
        is taken an ``output_`` prefix, so no column hides another."""
        return list(self._names().values())

    def _names(self) -> dict[tuple[str, str], str]:
        """``(kind, name) → column``, kind being ``input``, ``result`` or ``output``, in table order."""
        taken = set(self.columns)
        fixed = {name: (f"agent_{name}" if name in taken else name) for name in RESULT_COLUMNS}
        taken |= set(fixed.values())
        outputs: dict[str, None] = {}
        for r in self.rows:
            facts = r.facts
            if facts is not None:
                outputs.update(dict.fromkeys(output_fields(facts.output)))
        out: dict[tuple[str, str], str] = {("input", c): c for c in self.columns}
        for name in RESULT_COLUMNS[:3]:
            out[("result", name)] = fixed[name]
        for name in outputs:
            out[("output", name)] = f"output_{name}" if name in taken else name
        for name in RESULT_COLUMNS[3:]:
            out[("result", name)] = fixed[name]
        return out

    def records(self) -> list[dict[str, Any]]:
        """One dict per row with :meth:`table_columns` as keys (no pandas needed). The table's one writer: every
        other output (:meth:`to_pandas`, :meth:`to_csv`, the terminal's CSV, JSON and parquet) is made of these,
        so here every cell of every column has the agent's secret values replaced by their placeholders, and a
        value no output could hold (a lone surrogate, a huge text) is escaped or cut and marked in its own cell
        (:func:`~.map_cells.table_value`)."""
        names = self._names()
        vault = getattr(self.agent, "secrets", None)
        redact: Callable[[str], str] = vault.redact if vault else str
        table = []
        for r in self.rows:
            values = {("input", k): v for k, v in r.values.items()}
            values |= {("result", k): v for k, v in r.record().items()}
            facts = r.facts
            values |= {("output", k): v for k, v in output_fields(facts.output if facts else None).items()}
            table.append({column: table_value(values.get(key), redact) for key, column in names.items()})
        return table

    def to_pandas(self) -> Any:
        """The table as a DataFrame (pandas is the optional extra ``notebook-agent[data]``)."""
        return pandas_module().DataFrame(self.records(), columns=self.table_columns())

    def to_csv(self, path: str | os.PathLike[str], *, raw_cells: bool = False) -> None:
        """The table as a UTF-8 CSV file (no pandas needed). A text cell beginning with ``=``, ``+``, ``-``, ``@``,
        a tab or a carriage return gets a single quote in front, so a spreadsheet shows it rather than running
        it as a formula; ``raw_cells=True`` writes every cell as it is (see :mod:`.map_cells`). The DataFrame
        and :meth:`records` keep the cells unquoted."""
        from .map_cells import write_csv

        write_csv(os.fspath(path), self.table_columns(), self.records(), raw=raw_cells)

    @property
    def counts(self) -> MapCounts:
        """How many rows succeeded, failed, were stopped, run or never started (they add up to the rows)."""
        return MapCounts.of(self.rows)

    @property
    def ledger(self) -> Ledger:
        """What the map cost: its rows' tokens, model calls and cost (unknown when one row's is), over the map's
        wall time."""
        spent = sum((r.ledger for r in self.rows), Ledger())
        return dataclasses.replace(spent, seconds=self.elapsed_s)

    def summary(self) -> str:
        """``10 rows: 7 succeeded, 1 failed, 2 stopped · 12,400 tokens · 30 calls · $0.0123 · 42.0 s``
        (:meth:`MapCounts.text`, :meth:`Ledger.text`)"""
        return f"{self.counts.text()} · {self.ledger.text()}"

    def __repr__(self) -> str:
        return f"MapResult({self.summary()})"

    def _repr_html_(self) -> str | None:
        try:
            frame = self.to_pandas()
        except ImportError:
            return None
        return html_block(f"<b>{shown(self.summary())}</b>{frame._repr_html_()}")  # MathJax leaves prices alone

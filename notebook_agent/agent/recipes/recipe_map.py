"""A recipe over every row of a table: ``await recipe.map(df, agent, concurrency=8)``.

Each row is a run of the agent that follows the recipe with the row's values (:class:`~.recipe_pilot.RecipePilot`
through the one pilot seam, :mod:`~notebook_agent.agent.step.pilot`): no model call for a step that replays, the agent's
model for a step whose page differs (``heal=True``: counted per row as ``healed``), or the row failed with the reason
(``heal=False``). Every step is a step of an ordinary run, so the approval gate, allowed domains and secrets apply to
each row as to any run, and a row's run file is written when the agent has ``runs_dir``.

It runs on :mod:`~notebook_agent.agent.batch.map_runner`'s engine: ``concurrency`` rows at a time in one browser, each
row in a clean context of a pool reused across rows (:mod:`~notebook_agent.agent.batch.pool`), or on an executor (Dask's
``client.get_executor()``): rows go to the workers as they free up, each worker keeps one browser and one pool, results
come back into input order, and a worker lost mid-map has its rows run again elsewhere by the executor while every
finished row is kept. ``agent.stop()``, Interrupt and Ctrl-C keep every finished row
(:class:`~notebook_agent.agent.batch.map_runner.MapInterrupted`).

When the recipe learned the call behind its page (:mod:`.calls`), ``mode="auto"`` (the default) asks that request
for each row instead of driving the page, once the first rows went both ways and agreed; ``mode="request"`` asks
it for every row, ``mode="page"`` never (:mod:`.calls.rows`). A row the request cannot answer goes by the page.

The result is a map result (:class:`RecipeMapResult`: ``to_pandas()``, ``retry()``) whose table has, after
``steps``, each row's ``replayed``, ``healed`` and ``failed`` step counts, its ``way`` (``request``, ``page``,
``both`` for a row checked both ways, ``fallback`` for a row the request could not answer) and ``way_note``;
``tokens`` is zero for a row nothing healed. A row that replayed as recorded keeps its table row but not its run
(``keep_runs="exceptions"``, the default here: ``keep_runs="all"`` keeps every run), so a long map holds its table and
the rows worth looking into, and memory does not grow with runs nobody reads.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import AsyncGenerator, Callable
from typing import Any

from ..batch.map_options import MapOptions, check_options
from ..batch.map_runner import MapEvent, _consume, _drive, start_pages
from ..batch.map_table import MapInputError, MapResult, MapRow, normalise_rows
from ..step.pilot import Runner
from .answer import READ
from .calls.rows import Mode, RequestWay
from .recipe_pilot import Recipe, RecipeRows, row_values
from .slots import RecipeError, fill

#: The step counts a recipe's table adds after ``steps``, then how each row went.
REPLAY_COLUMNS = ("replayed", "healed", "failed", "way", "way_note")


@dataclasses.dataclass(repr=False)
class RecipeMapResult(MapResult):
    """A map result of a recipe: the table has each row's replayed / healed / failed step counts, and which way it
    went (``way``, ``way_note``); :attr:`way` says which way the map went and why."""

    ways: RequestWay | None = dataclasses.field(default=None, compare=False)

    @property
    def way(self) -> str:
        """``by request: its learned call: 3 rows agreed both ways`` or ``by the page: ...``: the map's way and why."""
        if self.ways is None:
            return ""
        going = {"request": "by request", "check": "checking its call", "page": "by the page"}[self.ways.way]
        return f"{going}: {self.ways.why}"

    def table_columns(self) -> list[str]:
        columns = super().table_columns()
        at = columns.index(self._names()[("result", "steps")]) + 1
        taken = set(columns)
        extra = [f"replay_{c}" if c in taken else c for c in REPLAY_COLUMNS]
        return columns[:at] + extra + columns[at:]

    def records(self) -> list[dict[str, Any]]:
        columns = self.table_columns()
        ways = self.ways.ways if self.ways is not None else {}
        out = []
        for row, record in zip(self.rows, super().records(), strict=True):
            counts = row.facts.replay_counts if row.facts is not None else {}
            way, note = ways.get(row.index, ("page" if row.status != "not_started" else "", ""))
            got = {**counts, "way": way, "way_note": note or None}
            names = [c for c in columns if c not in record]
            record |= {name: got.get(kind, 0) for name, kind in zip(names, REPLAY_COLUMNS, strict=True)}
            out.append({c: record.get(c) for c in columns})
        return out

    def way_counts(self) -> dict[str, int]:
        """How many rows went each way (``{"request": 97, "both": 3}``)."""
        counts: dict[str, int] = {}
        for way, _ in (self.ways.ways if self.ways is not None else {}).values():
            counts[way] = counts.get(way, 0) + 1
        return counts

    @property
    def healed_rows(self) -> list[int]:
        """The rows where the model redid at least one step."""
        return [r.index for r in self.rows if r.facts is not None and r.facts.replay_counts.get("healed")]

    def summary(self) -> str:
        tokens = sum(r.facts.tokens for r in self.rows if r.facts is not None)
        ways = ", ".join(f"{n} {w}" for w, n in self.way_counts().items() if w != "page" or len(self.way_counts()) > 1)
        went = f" · {ways}" if ways else ""
        why = f" · {self.way}" if self.way and self.way != "by the page: mode='page'" else ""
        return f"{super().summary()} · {len(self.healed_rows)} healed · {tokens:,} tokens{went}{why}"


def default_agent() -> Runner:
    """The agent of a recipe map when none is given: the offline demo model heals (give an agent with a real
    model to heal real pages), screenshots off."""
    from ..page_agent import PageAgent

    return PageAgent(model="demo", screenshots=False)


def answer_schema(data: Any) -> dict[str, Any]:
    """A JSON Schema of the recipe's typed answer, for an agent given no ``output=`` (the answer keeps its shape)."""
    if isinstance(data, dict) and READ in data:
        return {"type": "string"} if data.get("kind") == "str" else {"type": "number"}
    if isinstance(data, dict) and "_const" not in data:
        return {"type": "object", "properties": {str(k): answer_schema(v) for k, v in data.items()}}
    if isinstance(data, list):
        return {"type": "array"}
    if isinstance(data, bool):
        return {"type": "boolean"}
    if isinstance(data, (int, float)):
        return {"type": "number"}
    return {"type": "string"} if isinstance(data, str) else {}


def _agent_for(recipe: Recipe, agent: Runner | None) -> Runner:
    """The agent the rows run a copy of: the one given (or the default), given the recipe's answer type when it
    has none."""
    agent = agent if agent is not None else default_agent()
    if agent.output_spec is None and recipe.answer.data is not None:
        return agent.copy(output=answer_schema(recipe.answer.data))
    return agent


def plan_recipe(recipe: Recipe, rows: Any, agent: Runner, options: MapOptions) -> RecipeMapResult:
    """Every row as a record not started yet, after checking that each row has every slot."""
    if not isinstance(recipe, Recipe):
        raise TypeError(
            f"map_recipe needs a Recipe (Recipe.from_run(result, ...), Recipe.load(path)), not {type(recipe)}"
        )
    columns, values = normalise_rows(rows)
    missing = [n for n in recipe.names if n not in columns]
    if missing:
        raise MapInputError(
            f"The recipe's slots {', '.join('{' + n + '}' for n in missing)} are not columns of the rows; the "
            f"columns are: {', '.join(columns) or '(none)'}."
        )
    check_options(agent, options)
    chosen = start_pages(options.start_url or agent.start_url, columns, values)  # the same rule as agent.map's
    records = []
    for i, (row, page) in enumerate(zip(values, chosen, strict=True)):
        try:
            filled = row_values(recipe, row)
        except RecipeError as exc:
            raise MapInputError(f"Row {i}: {exc}") from None
        start = page or (fill(recipe.start_url, filled) if recipe.start_url else None)
        task = fill(recipe.task, filled).strip()
        records.append(MapRow(index=i, values=row, task=task, start_url=start))
    ways = options.ways if isinstance(options.ways, RequestWay) else None
    return RecipeMapResult(template=recipe.task, columns=columns, rows=records, options=options, agent=agent, ways=ways)


def _options(
    recipe: Recipe, heal: bool, url: str | None, kwargs: dict[str, Any], agent: Runner | None = None
) -> MapOptions:
    """A recipe map's options: each row in a context of its own, keeping only the runs worth a look, and the way
    each row goes (``mode``, ``checks``, ``patience``: :mod:`.calls.rows`)."""
    kwargs.setdefault("isolation", "context")
    kwargs.setdefault("keep_runs", "exceptions")
    mode: Mode = kwargs.pop("mode", "auto")
    checks, patience = kwargs.pop("checks", 3), kwargs.pop("patience", 5)
    if kwargs.get("executor") is not None and kwargs.get("model") is None and kwargs.get("model_factory") is None:
        kwargs["model"] = "demo"  # each worker builds the healing model by name; give model= for a real one
    if url is not None and recipe.call is not None and mode == "auto":
        mode = "page"  # the same site on another base URL: its rows replay there, and so drive the page
    ways = RequestWay(
        recipe, mode, checks=checks, patience=patience, executor=kwargs.get("executor") is not None, agent=agent
    )
    return MapOptions(pilots=RecipeRows(recipe, heal, url), ways=ways, **kwargs)


async def map_recipe(
    recipe: Recipe,
    rows: Any,
    agent: Runner | None = None,
    *,
    heal: bool = True,
    url: str | None = None,
    on_event: Callable[[MapEvent], Any] | None = None,
    **options: Any,
) -> RecipeMapResult:
    """``recipe.map(rows, agent, ...)``: options as ``agent.map``'s (``concurrency=4``, ``isolation="context"``
    by default here, ``executor=``, ``model=``/``model_factory=`` for the healing model, ``start_url=`` each
    row's start page, a ``{column}`` template filled as ``agent.map`` fills it; else the agent's ``start_url``;
    else the recorded start with the row's values) plus ``heal``, ``url`` (the same site on another base URL),
    ``mode`` (``auto``, ``request`` or ``page``), ``checks`` (rows checked both ways first, 3) and ``patience``
    (fallbacks in a row before the map goes back to the page, 5).
    A row starting on another site than the recording's replays every recorded URL on that site."""
    given, agent = agent, _agent_for(recipe, agent)
    result = plan_recipe(recipe, rows, agent, _options(recipe, heal, url, options, agent))
    done = await _consume(_drive(agent, result, list(range(len(result.rows))), given), result, on_event)
    assert isinstance(done, RecipeMapResult)
    return done


async def stream_recipe(
    recipe: Recipe, rows: Any, agent: Runner | None = None, *, heal: bool = True, url: str | None = None, **options: Any
) -> AsyncGenerator[MapEvent, None]:
    """:func:`map_recipe` as its events (``RowEvent``, ``MapProgress``, ``MapFinished``), for a view."""
    given, agent = agent, _agent_for(recipe, agent)
    result = plan_recipe(recipe, rows, agent, _options(recipe, heal, url, options, agent))
    async with contextlib.aclosing(_drive(agent, result, list(range(len(result.rows))), given)) as events:
        async for event in events:
            yield event

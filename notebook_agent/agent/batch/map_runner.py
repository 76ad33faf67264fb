"""One task over many inputs: ``await agent.map("Find the CEO of {company}", df)``.

People use notebooks because they work with data; "do this for 200 companies" should not be a hand-written
loop that stops at the first failure, loses what it found when interrupted, and cannot say how long is left.
A map fills the template from each row, runs each row as a run of its own (a copy of the agent: see
:mod:`.map_rows`), ``concurrency`` at a time, in one shared browser (a tab or a context per row) or on an
executor's workers (one browser per worker process), and returns a :class:`~.map_table.MapResult`: every row
in input order, failed ones included, ``to_pandas()``, and ``retry()`` for the failed rows only.

``agent.map_stream(...)`` yields what a view needs: ``RowEvent(row, page_event)`` for each row's own page
events (the live card of any row), :class:`MapProgress` whenever a row starts or ends (one progress bar:
the rows succeeded, failed, stopped, running and not started, rate, time left) and :class:`MapFinished` last.
``map()`` consumes that stream.

While a map runs it holds the agent like a run does: ``agent.stop()`` stops every running row and starts no
new one, and the map returns what finished (the rest ``stopped`` or ``not_started``). Cancelling the map
(``task.cancel()``, Ctrl-C under ``asyncio.run``) does the same and raises :class:`MapInterrupted`, a
cancellation that carries the partial result, so nothing finished is lost either way.

With an executor, a row's page events stay where it runs: the stream carries its ``RunFinished`` and the
progress events, and a stop starts no more rows and stops waiting for the running ones (a generic executor
cannot reach into a running task).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import time
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, replace
from typing import Any, Literal, NamedTuple, TypeAlias

from ...browser.session.browser_session import BrowserSession
from ...browser.url_template import fill_rows
from ...browser.urls import URLError
from ...core.abort import AbortController, AbortedError
from ...core.aio import wait_for
from ...core.errors import error_message
from ...llm.ledger import Ledger
from ..otel.switch import map_trace
from ..runs.events import PageEvent, RunFinished
from ..runs.result import PageAgentResult
from ..step.pilot import Pilot, Runner
from .map_budget import MapEstimated, MapGate
from .map_counts import MapCounts, RowKind, row_kind
from .map_options import MapOptions, check_options, least_row
from .map_rows import (
    RowJob,
    build_model,
    run_row,
    run_row_job,
    shippable_agent,
)
from .map_table import MapInputError, MapResult, MapRow, check_template, fill, normalise_rows

__all__ = [
    "MapCounts",
    "MapEvent",
    "MapFinished",
    "MapInputError",
    "MapInterrupted",
    "MapOptions",
    "MapProgress",
    "MapResult",
    "MapRow",
    "RowEvent",
    "RowMaps",
    "map_rows",
    "retry_rows",
    "stream_rows",
]

#: How long running rows get to finish after a stop before they are cancelled (a run stops within seconds).
SETTLE_S = 15.0


class RowEvent(NamedTuple):
    """One page event of one row: ``row, event = item``."""

    row: int
    event: PageEvent

    @property
    def type(self) -> str:
        return "row_event"


@dataclass(frozen=True)
class MapProgress:
    """Where the map stands, sent when a row starts and when it ends (``ended``); ``record`` is that row (its
    task and values, and once ended its status and result), so a view can show any row's card from its start.

    ``counts`` are the result's rows by kind (:class:`~.map_counts.MapCounts`: succeeded, failed, stopped,
    running, not started, adding up to ``total``), the same counts the finished result gives; ``done`` the rows
    that ended. ``rows_per_minute`` is the rows this map (or retry) ended over its time so far and ``eta_s`` the
    rows left at that rate (None until a row has ended)."""

    counts: MapCounts
    elapsed_s: float
    rows_per_minute: float
    eta_s: float | None
    row: int
    record: MapRow
    ended: bool
    type: Literal["map_progress"] = "map_progress"

    @property
    def total(self) -> int:
        return self.counts.rows

    @property
    def done(self) -> int:
        return self.counts.ended

    @property
    def succeeded(self) -> int:
        return self.counts.succeeded

    @property
    def failed(self) -> int:
        return self.counts.failed

    @property
    def running(self) -> int:
        return self.counts.running


@dataclass(frozen=True)
class MapFinished:
    result: MapResult
    type: Literal["map_finished"] = "map_finished"


MapEvent: TypeAlias = RowEvent | MapProgress | MapEstimated | MapFinished


class MapInterrupted(asyncio.CancelledError):
    """The map was cancelled: its rows were stopped, and ``.result`` holds every row (the finished ones with their
    results). A cancellation, so asyncio code treats it as one."""

    def __init__(self, result: MapResult) -> None:
        super().__init__(f"The map was interrupted: {result.summary()}")
        self.result = result


def plan(agent: Runner, template: str, rows: Any, options: MapOptions) -> MapResult:
    """The rows as records not started yet, after checking the template, every row and the options."""
    if not isinstance(template, str) or not template.strip():
        raise MapInputError("The task template is empty: say what the agent should do for each row.")
    columns, values = normalise_rows(rows)
    check_template(template, columns, values)
    starts = start_pages(options.start_url or agent.start_url, columns, values)
    check_options(agent, options)
    records = [
        MapRow(index=i, values=row, task=fill(template, row).strip(), start_url=start)
        for i, (row, start) in enumerate(zip(values, starts, strict=True))
    ]
    return MapResult(template=template, columns=columns, rows=records, options=options, agent=agent)


class _Clock:
    """The counts of ``rows`` kept up to date as rows move (no count of every row per event), and the rate of
    the rows this drive ended."""

    def __init__(self, rows: list[MapRow]) -> None:
        self.counts = MapCounts.of(rows)
        self.finished = 0
        self.started = time.perf_counter()

    @property
    def elapsed(self) -> float:
        return time.perf_counter() - self.started

    def moved(self, record: MapRow, old: RowKind) -> None:
        new = row_kind(record.status, record.success)
        self.counts = self.counts.moved(old, new)
        self.finished += new in ("succeeded", "failed", "stopped")

    def progress(self, record: MapRow, *, ended: bool) -> MapProgress:
        elapsed = self.elapsed
        per_second = self.finished / elapsed if self.finished and elapsed > 0 else 0.0
        left = self.counts.running + self.counts.not_started
        eta = left / per_second if per_second else None
        return MapProgress(self.counts, elapsed, per_second * 60, eta, record.index, record, ended)


_END = object()


async def _drive(
    agent: Runner, result: MapResult, todo: list[int], holder: Runner | None = None
) -> AsyncGenerator[MapEvent, None]:
    """Run the rows ``todo`` of ``result`` (updating its records in place) and yield the map's events.
    ``holder``: the agent whose ``stop()`` stops the map, when the rows run a copy of it (a recipe's map gives
    its copy the recipe's answer type): the user's agent, which the Stop button and Interrupt reach."""
    options: MapOptions = result.options
    controller = AbortController()
    held = contextlib.ExitStack()  # the map holds the agent as a run does: stop() reaches it
    for holding in dict.fromkeys([agent, holder or agent]):
        try:
            held.enter_context(holding.held_by(controller))
        except BaseException:
            held.close()
            raise
    signal = controller.signal
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[Any] = asyncio.Queue()
    pending = collections.deque(todo)
    running: dict[int, Runner] = {}
    least = least_row(agent, result.rows[todo[0]].task, agent.model) if todo else Ledger()
    least = replace(least, cost=least.cost or 0.0)  # a row's own model's prices show once it has run
    gate = MapGate(options.budget, len(todo), options.concurrency, options.ask_estimate, least, queue.put_nowait)

    def stop_rows(reason: str) -> None:
        for row_agent in list(running.values()):
            row_agent.stop(reason)

    def row_event(i: int, event: PageEvent) -> None:
        queue.put_nowait(RowEvent(i, event))
        over = gate.row_event(i, event)
        if over is not None:  # the map's budget: the rows under way stop within a step, no more start
            stop_rows(over)

    browser: BrowserSession | None = agent.browser
    own_browser = options.executor is None and browser is None and bool(todo)
    shipped = shippable_agent(agent) if options.executor is not None else None
    cdp_url = getattr(agent.browser, "cdp_url", None)
    pool: Any = None  # a recipe's rows reuse clean contexts (agent/pool.py)

    def register(i: int, row_agent: Runner) -> bool:
        if signal.aborted:
            return False
        running[i] = row_agent
        return True

    async def one(i: int) -> None:
        with trace.row(result.rows[i]) as parent:  # the row's span (traced maps): its run nests under it
            await one_row(i, parent)

    async def one_row(i: int, parent: dict[str, str]) -> None:
        rec = result.rows[i]
        was = row_kind(rec.status, rec.success)
        rec.status = "running"
        gate.row_started(i)
        clock.moved(rec, was)
        queue.put_nowait(clock.progress(rec, ended=False))
        began, t0 = True, time.perf_counter()  # False only when a stop came before the run could start

        def started(row_agent: Runner) -> bool:
            nonlocal began
            began = register(i, row_agent)
            return began

        try:
            if options.executor is None:
                assert browser is not None
                own_model = options.model is not None or options.model_factory is not None
                model = build_model(options.model, options.model_factory, rec.values) if own_model else agent.model
                session = browser

                async def by_page() -> PageAgentResult | None:
                    return await run_row(
                        agent,
                        rec.task,
                        session,
                        options.isolation,
                        model=model,
                        start_url=rec.start_url,
                        put=lambda event: row_event(i, event),
                        register=started,
                        interactive=options.interactive,
                        pilot=_pilot(agent, options, rec),
                        pool=pool,
                    )

                ways = options.ways
                rec.result = await (ways(rec, by_page, browser, agent, signal) if ways is not None else by_page())
            else:
                assert shipped is not None
                job = RowJob(i, rec.task, rec.values, rec.chosen_start, shipped, options.model,
                             options.model_factory, options.isolation, cdp_url,
                             options.pilots, parent)  # fmt: skip
                outcome = await signal.race(asyncio.wrap_future(options.executor.submit(run_row_job, job)))
                rec.result, rec.error, rec.worker = outcome.result, outcome.error, outcome.worker
                if rec.result is not None:
                    queue.put_nowait(RowEvent(i, RunFinished(rec.result)))
        except AbortedError as exc:
            rec.error = f"Stopped before the row's worker finished: {exc.reason}"
        except asyncio.CancelledError:
            rec.error = "The row was cancelled"
            raise
        except Exception as exc:
            rec.error = error_message(exc)
        finally:
            running.pop(i, None)
            rec.seconds = time.perf_counter() - t0
            if rec.result is not None:
                rec.status = rec.result.status
                rec.settle(options.keep_runs)
            else:
                rec.status = "not_started" if not began else "stopped" if signal.aborted else "error"
            gate.row_ended(i, rec.facts.ledger if rec.facts is not None else None)
            clock.moved(rec, "running")
            queue.put_nowait(clock.progress(rec, ended=True))

    async def worker() -> None:
        while pending and not signal.aborted:
            if not await gate.admit(signal):  # the budget, or the answer to the estimate, starts no more rows
                return
            if not pending or signal.aborted:  # another worker took the last row meanwhile
                gate.row_ended(-1, None)
                return
            await one(pending.popleft())

    async def all_rows() -> None:
        try:
            await asyncio.gather(*(worker() for _ in range(min(options.concurrency, len(todo)))))
        finally:
            queue.put_nowait(_END)

    for i in todo:
        result.rows[i] = result.rows[i].fresh()
    clock = _Clock(result.rows)
    trace = map_trace(agent.tracing, rows=len(todo), secrets=agent.secrets)
    task: asyncio.Task[None] | None = None

    # abort() may come from any thread (a widget, a signal handler): the rows are stopped on this loop
    def on_abort(reason: str) -> None:
        loop.call_soon_threadsafe(stop_rows, reason)

    remove = signal.add_callback(on_abort)
    try:
        if own_browser:
            browser = BrowserSession()
            await browser.start()
        if options.pilots is not None and options.executor is None and options.isolation == "context":
            from .pool import BrowserPool

            assert browser is not None
            pool = BrowserPool(browser, more=lambda: bool(pending) and not signal.aborted)
        task = asyncio.create_task(all_rows())
        while True:
            item = await queue.get()
            if item is _END:
                break
            yield item
        await task
    finally:
        if task is not None and not task.done():
            controller.abort("The map was stopped")
            with contextlib.suppress(TimeoutError, asyncio.CancelledError, Exception):
                await wait_for(task, SETTLE_S)
        remove()
        if pool is not None:
            with contextlib.suppress(Exception):
                await pool.close()
        held.close()
        if own_browser and browser is not None:
            with contextlib.suppress(Exception):
                await browser.close()
        for i in todo:
            if result.rows[i].status == "running":
                result.rows[i].status = "stopped"
        result.elapsed_s += clock.elapsed
        result.note = gate.note
        trace.finish([result.rows[i] for i in todo])
    yield MapFinished(result)


def start_pages(template: str | None, columns: list[str], values: list[dict[str, Any]]) -> list[str | None]:
    """Each row's start page: ``template`` (``start_url=`` given to the map, else the agent's own) filled from
    the row by the one rule of every front (browser/url_template.py), checked for every row before any runs."""
    if not template:
        return [None] * len(values)
    try:
        return list(fill_rows(template, columns, values))
    except URLError as exc:
        raise MapInputError(str(exc)) from None


def _pilot(agent: Runner, options: MapOptions, row: MapRow) -> Pilot | None:
    """The pilot of a row that follows one, starting at the row's start page when the user chose it (else where
    its recording starts, judged by the gate); None for a map driven by the model."""
    return options.pilots(row.values, agent, row.chosen_start) if options.pilots is not None else None


def _options(**kwargs: Any) -> MapOptions:
    return MapOptions(**kwargs)


async def stream_rows(agent: Runner, template: str, rows: Any, **options: Any) -> AsyncGenerator[MapEvent, None]:
    """``agent.map_stream``: the map's events as they happen (see the module docstring). The checks run, and any
    error is raised, on the first iteration, before any row starts."""
    result = plan(agent, template, rows, _options(**options))
    async with contextlib.aclosing(_drive(agent, result, list(range(len(result.rows))))) as events:
        async for event in events:
            yield event


async def _consume(stream: AsyncGenerator[MapEvent, None], result: MapResult, on_event: Any) -> MapResult:
    try:
        async with contextlib.aclosing(stream):
            async for event in stream:
                if on_event is not None:
                    on_event(event)
    except asyncio.CancelledError as exc:
        if isinstance(exc, MapInterrupted):
            raise
        raise MapInterrupted(result) from exc
    return result


async def map_rows(
    agent: Runner, template: str, rows: Any, *, on_event: Callable[[MapEvent], Any] | None = None, **options: Any
) -> MapResult:
    """``agent.map``: run every row and return the :class:`MapResult` (``on_event`` sees every map event)."""
    result = plan(agent, template, rows, _options(**options))
    return await _consume(_drive(agent, result, list(range(len(result.rows)))), result, on_event)


async def retry_rows(
    agent: Runner, previous: MapResult, *, on_event: Callable[[MapEvent], Any] | None = None
) -> MapResult:
    """Run the failed rows of ``previous`` again, the same way, with ``agent``; the merged result is new (the
    rows that had succeeded keep their records, ``previous`` is unchanged)."""
    options = previous.options if isinstance(previous.options, MapOptions) else MapOptions()
    check_options(agent, options)
    result = replace(previous, rows=list(previous.rows), agent=agent, options=options)
    return await _consume(_drive(agent, result, previous.failed), result, on_event)


class RowMaps:
    """``agent.map``, ``agent.map_stream`` and ``agent.map_retry``: the agent's own API for one task over many
    rows (``PageAgent`` inherits it), run by this module's engine with the agent as a :class:`Runner`."""

    async def map(self: Runner, task_template: str, rows: Any, **options: Any) -> MapResult:
        """Run ``task_template`` (``{column}`` filled from each row) for every row of ``rows`` (a DataFrame, a list
        of dicts, or a list of values: column ``value``); a failed row does not stop the others. Options:
        ``concurrency=4``, ``isolation="tab"`` or ``"context"``, ``executor=`` (e.g. Dask's
        ``client.get_executor()``), ``model=`` a name or ``model_factory=`` a function of the row (for a model that
        keeps state, and with an executor), ``start_url=`` a template, ``interactive``, ``on_event=``,
        ``keep_runs="all"`` or ``"exceptions"`` (only failed rows keep their whole run; every row keeps its table
        row). See :mod:`notebook_agent.agent.batch.map_runner`."""
        return await map_rows(self, task_template, rows, **options)

    def map_stream(self: Runner, task_template: str, rows: Any, **options: Any) -> AsyncGenerator[MapEvent, None]:
        """``map`` as its events: ``RowEvent(row, page_event)``, ``MapProgress`` as rows start and end, then
        ``MapFinished(result)``."""
        return stream_rows(self, task_template, rows, **options)

    async def map_retry(self: Runner, result: MapResult, **options: Any) -> MapResult:
        """Run the failed rows of a map again and merge them into a new result (``on_event=`` as for ``map``)."""
        return await retry_rows(self, result, **options)

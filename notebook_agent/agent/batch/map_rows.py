"""Running one row of ``agent.map``: here, or on an executor's worker with one browser per worker process.

A row is a run of a copy of the agent (:func:`row_agent`): the same settings, approval gate, secrets and
output type, its own model when the model keeps state, its own stop. It acts in a tab of its own of the map's
browser (``isolation="tab"``: shared cookies, never a shared page) or in a context of its own
(``isolation="context"``: nothing shared), and the tab or context is closed when the row ends.

On an executor (a Dask ``client.get_executor()``, a process pool) a row travels as a :class:`RowJob` and comes
back as a :class:`RowOutcome`. Starting Chromium costs more than a short run, so each worker process keeps one
browser (:func:`worker_browser`) and every row it runs gets a tab or context of it. That browser lives on a
thread of its own with its own event loop (``BrowserSession(threaded=True)``, see
:mod:`notebook_agent.browser.session.browser_thread`): each row runs on a fresh event loop in whatever
executor thread picks it up, and the browser's loop outlives them all.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeAlias, TypeVar

from ...browser.session.browser_session import BrowserSession
from ...core.abort import AbortSignal
from ...core.errors import error_message
from ...core.model import Model
from ..otel.switch import row_parent
from ..runs.events import PageEvent, RunFinished
from ..runs.result import PageAgentResult
from ..step.pilot import Pilot, R, Runner, piloted_agent
from .map_table import MapRow, Row
from .pool import BrowserPool

Isolation: TypeAlias = Literal["tab", "context"]
ModelFactory: TypeAlias = Callable[[Row], Model]
T = TypeVar("T")


class PilotFactory(Protocol):
    """Makes the pilot of one row (``pilots(values, agent, start)``): a map whose rows follow pilots (a recipe's
    rows: ``agent/recipes/recipe_pilot.py`` ``RecipeRows``) is given one, and asks it for each row's pilot, so the
    engine knows pilots, not what makes them. It travels to an executor's workers with the rows: plain data."""

    def __call__(self, values: Row, agent: Runner | None = None, start: str | None = None) -> Pilot: ...


class RowWays(Protocol):
    """Decides how a row goes when it need not be a run of the agent (a recipe's learned call: it may ask one
    request instead, agent/recipes/calls/rows.py): given the row, the way to run it as a run (``by_page``), the map's
    browser, the agent and the map's stop signal, it returns the row's result either way."""

    async def __call__(
        self,
        row: MapRow,
        by_page: Callable[[], Awaitable[PageAgentResult | None]],
        browser: BrowserSession,
        agent: Runner,
        signal: AbortSignal,
    ) -> PageAgentResult | None: ...


def row_agent(agent: R, *, model: Model, browser: BrowserSession | None, own_tab: bool, start_url: str | None) -> R:
    """A copy of ``agent`` for one row: every setting shared, but its own run state (an agent runs one task at a
    time, and rows run side by side), model, browser and start URL."""
    return agent.copy(model=model, browser=browser, own_tab=own_tab, start_url=start_url)


async def run_row(
    agent: Runner,
    task: str,
    browser: BrowserSession,
    isolation: Isolation,
    *,
    model: Model,
    start_url: str | None,
    put: Callable[[PageEvent], None],
    register: Callable[[Runner], bool],
    interactive: bool = False,
    pilot: Pilot | None = None,
    pool: BrowserPool | None = None,
) -> PageAgentResult | None:
    """Run one row in a tab or context of its own of ``browser``; every event goes to ``put``.

    ``register(row_agent)`` hands the row's agent to whoever may stop it, just before the run starts; when it
    returns False (a stop came first) the row does not start and None is returned. ``pilot``: the row follows
    it (a recipe's row: pilot.py). ``pool``: the row takes a clean context of the pool (reused by later rows)
    instead of opening one."""
    if pool is not None:
        async with pool.lease() as leased:
            return await _stream(agent, task, leased, False, model, start_url, put, register, interactive, pilot)
    session = await browser.fork() if isolation == "context" else browser
    try:
        return await _stream(agent, task, session, isolation == "tab", model, start_url, put, register, interactive,
                             pilot)  # fmt: skip
    finally:
        if session is not browser:
            with contextlib.suppress(Exception):
                await session.close()


async def _stream(
    agent: Runner,
    task: str,
    session: BrowserSession,
    own_tab: bool,
    model: Model,
    start_url: str | None,
    put: Callable[[PageEvent], None],
    register: Callable[[Runner], bool],
    interactive: bool,
    pilot: Pilot | None,
) -> PageAgentResult | None:
    clone = row_agent(agent, model=model, browser=session, own_tab=own_tab, start_url=start_url)
    if pilot is not None:
        clone = piloted_agent(clone, pilot)
    if not register(clone):
        return None
    result: PageAgentResult | None = None
    async for event in clone.stream(task, interactive=interactive, pilot=pilot):
        put(event)
        if isinstance(event, RunFinished):
            result = event.result
    if pilot is not None and result is not None and result.success:
        forget_replayed_reads(result)
    return result


def forget_replayed_reads(result: PageAgentResult) -> None:
    """A recipe row that succeeded drops what each of its replayed steps read and was given as output: the state
    text no model read and the call the recipe made, the same as the recipe's step with the row's values. A map
    keeps every row's result, and these were most of it (about 4 KB of a demo row's 7, pickled); a healed or
    failed step, and every step of a row that failed, keeps all of it to be looked into."""
    for step in result.steps:
        if step.replay == "replayed":
            step.request = None
            step.output = None


# -- on an executor's worker ------------------------------------------------------------------------------------
@dataclass
class RowJob:
    """One row as it travels to a worker: plain data plus the agent's settings (see :func:`shippable_agent`)."""

    index: int
    task: str
    values: Row
    start_url: str | None
    agent: Runner
    model: str | None
    model_factory: ModelFactory | None
    isolation: Isolation
    cdp_url: str | None = None
    pilots: PilotFactory | None = None
    """A row that follows a pilot (a recipe's row): what makes it, plain data."""
    trace_parent: dict[str, str] = field(default_factory=dict)
    """The row's span as a W3C ``traceparent`` carrier (a traced map), so the row's run nests under it."""


@dataclass
class RowOutcome:
    """What comes back from a worker: the run's result, or why there is none."""

    result: PageAgentResult | None
    error: str | None
    seconds: float
    worker: str


def shippable_agent(agent: R) -> R:
    """The agent's settings without what cannot or must not travel: its model (each worker builds its own), its
    browser (each worker has one) and its run state."""
    return agent.copy(model=None, browser=None)


def build_model(model: str | None, model_factory: ModelFactory | None, values: Row) -> Model:
    """A row's own model: from the factory (given the row) or by name through the model registry."""
    if model_factory is not None:
        return model_factory(dict(values))
    from ...llm import get_model

    return get_model(model)


_lock = threading.Lock()
_browsers: dict[str | None, BrowserSession] = {}
_launches = 0


def _call(work: Callable[[], Awaitable[T]]) -> T:
    """Run a coroutine to completion from plain code: on this thread when it has no running event loop (an
    executor's thread), else on a short-lived thread (``client.run`` may call from a worker's own loop)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_awaited(work))
    box: list[Any] = []
    running: list[tuple[asyncio.AbstractEventLoop, asyncio.Task[Any]]] = []

    async def main() -> T:
        task = asyncio.current_task()
        assert task is not None
        running.append((asyncio.get_running_loop(), task))
        return await work()

    def target() -> None:
        try:
            box.append((True, asyncio.run(main())))
        except BaseException as exc:
            box.append((False, exc))

    thread = threading.Thread(target=target, name="notebook-agent-map-call")
    thread.start()
    try:
        thread.join()
    except KeyboardInterrupt:  # Ctrl-C / Interrupt lands here: cancel the work there, as asyncio.run would here
        for loop, task in running:
            loop.call_soon_threadsafe(task.cancel)
        thread.join()
    ok, value = box[0]
    if not ok:
        raise value
    return value


async def _awaited(work: Callable[[], Awaitable[T]]) -> T:
    return await work()


def worker_browser(cdp_url: str | None = None) -> BrowserSession:
    """This process's browser for map rows, started on first use and kept for every later row (one per
    ``cdp_url``: None launches a local Chromium). It runs on its own thread and loop, so rows on any thread and
    any loop can use it."""
    global _launches
    with _lock:
        browser = _browsers.get(cdp_url)
        if browser is None:
            browser = BrowserSession(cdp_url=cdp_url, threaded=True)
            _call(browser.start)
            _browsers[cdp_url] = browser
            _launches += 1
        return browser


def worker_browser_launches() -> int:
    """How many browsers this process started for map rows (``client.run(worker_browser_launches)`` shows one per
    worker, however many rows each ran)."""
    return _launches


def close_worker_browser() -> int:
    """Close this process's map browsers (``client.run(close_worker_browser)`` on a cluster); returns how many.
    A later row starts a new one."""
    from .pool import forget_worker_pools

    with _lock:
        browsers = list(_browsers.values())
        _browsers.clear()
    forget_worker_pools()
    for browser in browsers:
        with contextlib.suppress(Exception):
            _call(browser.close)
    return len(browsers)


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def run_row_job(job: RowJob) -> RowOutcome:
    """The executor's entry point: run one row in this process's browser, on a fresh event loop."""
    started = time.perf_counter()

    async def main(browser: BrowserSession) -> PageAgentResult | None:
        model = build_model(job.model, job.model_factory, job.values)
        pilot = pool = None
        if job.pilots is not None:
            from .pool import worker_pool

            pilot = job.pilots(job.values, job.agent, job.start_url)
            pool = worker_pool(browser)
        return await run_row(
            job.agent,
            job.task,
            browser,
            job.isolation,
            model=model,
            start_url=job.start_url,
            put=lambda _event: None,
            register=lambda _agent: True,
            pilot=pilot,
            pool=pool,
        )

    try:
        with row_parent(job.trace_parent):
            result = asyncio.run(main(worker_browser(job.cdp_url)))  # started before the row's loop, kept after it
        error = None if result is not None else "The row ended without a result."
    except Exception as exc:
        result, error = None, error_message(exc)
    return RowOutcome(result, error, time.perf_counter() - started, worker_name())

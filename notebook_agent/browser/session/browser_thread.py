"""Running the browser on a thread of its own when the caller's event loop cannot start subprocesses.

Playwright's async API starts its Node driver with ``asyncio.create_subprocess_exec``. On Windows, Jupyter's
kernel runs on a ``SelectorEventLoop`` (ipykernel sets ``WindowsSelectorEventLoopPolicy``), whose subprocess
support is ``NotImplementedError``, so a browser cannot even start there (playwright-python issues 723 and
2720). Rather than change the kernel's loop (which would break the kernel), the browser gets a thread with its
own loop that can spawn: a ``ProactorEventLoop`` on Windows, the default selector loop elsewhere.

Every Playwright object (``Page``, ``ElementHandle``, ...) belongs to the loop that started Playwright, so in
threaded mode all of them live on the browser thread and everything that touches them runs there:

* :class:`~.browser_session.BrowserSession`'s public coroutine methods hop to the browser loop themselves (see
  :func:`on_browser_loop`); callers on the kernel loop await them as usual and get plain data back;
* action tools run whole on the browser loop (:func:`bridge_tools`); their arguments and results are plain
  data, the :class:`~notebook_agent.core.abort.AbortSignal` of their context is thread-safe, and progress
  updates are handed back to the caller's loop;
* anything else that needs the page goes through ``await browser.call(fn, ...)``.

Where the caller's loop can spawn (Linux, macOS, a plain ``asyncio.run`` on Windows) the browser stays on
that loop: no thread, no hop per call. :func:`loop_can_spawn` decides once per loop and remembers it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import subprocess
import sys
import threading
import weakref
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import Any, ParamSpec, TypeVar

from ...core.tools import Tool, ToolCallContext, ToolResult, WrappedTool

T = TypeVar("T")
P = ParamSpec("P")

_can_spawn: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, bool] = weakref.WeakKeyDictionary()


def _surely_refuses(loop: asyncio.AbstractEventLoop) -> bool:
    """True when the loop's class has no subprocess support at all (asyncio's base implementation raises
    NotImplementedError), which is exactly Windows' ``SelectorEventLoop``: no need to try a spawn."""
    make = getattr(type(loop), "_make_subprocess_transport", None)
    return make is getattr(asyncio.BaseEventLoop, "_make_subprocess_transport", object())


def _surely_spawns(loop: asyncio.AbstractEventLoop) -> bool:
    """True for asyncio's own spawning loops used as they are (a Linux or macOS kernel's loop, a script's
    ``asyncio.run`` on Windows): no need to start a process to find out. Subclasses and other loops are probed."""
    if sys.platform == "win32":
        return type(loop) is getattr(asyncio, "ProactorEventLoop", None)
    return type(loop) is asyncio.SelectorEventLoop


async def loop_can_spawn(loop: asyncio.AbstractEventLoop | None = None) -> bool:
    """Whether ``loop`` (default: the running one) can start subprocesses, decided once per loop.

    A loop whose class has no subprocess support is known to refuse, and asyncio's own spawning loop classes
    are known to spawn; for any other loop one trivial subprocess (``python -c ""``) is started and waited for,
    since a subclass or a wrapper may refuse at run time.
    Only ``NotImplementedError`` means "cannot": any other failure (a missing executable, a full process
    table) says nothing about the loop, so the in-loop mode is kept and Playwright reports the real problem.
    """
    loop = loop or asyncio.get_running_loop()
    known = _can_spawn.get(loop)
    if known is not None:
        return known
    if _surely_refuses(loop) or _surely_spawns(loop):
        _can_spawn[loop] = not _surely_refuses(loop)
        return _can_spawn[loop]
    try:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-I",
            "-S",
            "-c",
            "",
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        await proc.wait()
        can = True
    except NotImplementedError:
        can = False
    except Exception:
        can = True
    _can_spawn.setdefault(loop, can)
    return _can_spawn[loop]


def remember_refusal(loop: asyncio.AbstractEventLoop) -> None:
    """Record that ``loop`` refused a subprocess after all (Playwright's own spawn raised NotImplementedError)."""
    _can_spawn[loop] = False


def new_spawning_loop() -> asyncio.AbstractEventLoop:
    """A fresh loop that can spawn subprocesses, built from its class rather than the current policy (the
    policy is what made the caller's loop refuse)."""
    if sys.platform == "win32":
        return asyncio.ProactorEventLoop()  # type: ignore[attr-defined,unused-ignore]
    return asyncio.SelectorEventLoop()


class BrowserThread:
    """A daemon thread running its own event loop, which the browser and all its Playwright objects live on.

    ``await thread.call(coro)`` runs ``coro`` there and hands its result or exception back to the caller's
    loop. Cancelling the caller (Stop, Interrupt, a timeout) cancels the coroutine on the browser loop too.
    The thread is a daemon so a forgotten session never keeps the interpreter alive; :meth:`stop` ends it.
    """

    def __init__(self, name: str = "notebook-agent-browser") -> None:
        self.loop = new_spawning_loop()
        ready = threading.Event()
        self._thread = threading.Thread(target=self._main, args=(ready,), name=name, daemon=True)
        self._thread.start()
        ready.wait()

    def _main(self, ready: threading.Event) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.call_soon(ready.set)
        try:
            self.loop.run_forever()
        finally:
            try:
                pending = asyncio.all_tasks(self.loop)
                for task in pending:
                    task.cancel()
                if pending:
                    self.loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
                self.loop.run_until_complete(self.loop.shutdown_asyncgens())
            finally:
                self.loop.close()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive() and not self.loop.is_closed()

    def on_thread(self) -> bool:
        """Whether the caller already runs on the browser loop (then calls must not hop again)."""
        try:
            return asyncio.get_running_loop() is self.loop
        except RuntimeError:
            return False

    async def call(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the browser loop and await its outcome from the caller's loop."""
        if self.on_thread():
            return await coro
        if not self.alive:
            coro.close()
            raise RuntimeError("The browser thread has stopped: start the browser session again.")
        future: concurrent.futures.Future[T] = asyncio.run_coroutine_threadsafe(coro, self.loop)
        return await asyncio.wrap_future(future)

    async def stop(self) -> None:
        """End the loop and wait (without blocking the caller's loop) for the thread to finish."""
        if self.loop.is_closed():
            return
        if not self.loop.is_running():
            # the thread has not got round to running it yet, or has already finished with it
            await asyncio.to_thread(self._thread.join, 10)
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        if threading.current_thread() is not self._thread:
            await asyncio.to_thread(self._thread.join, 10)


def on_browser_loop(method: Callable[P, Awaitable[T]]) -> Callable[P, Coroutine[Any, Any, T]]:
    """Decorate a ``BrowserSession`` coroutine method so that, in threaded mode, it runs on the browser loop.

    The session keeps one state; only where its coroutines run changes. Called on the browser loop already
    (an action calling ``ensure_page``), it runs in place; called elsewhere, the whole call hops over and the
    caller awaits the outcome.
    """

    closing = method.__name__ == "_close"

    @functools.wraps(method)
    async def hop(*args: P.args, **kwargs: P.kwargs) -> T:
        session = args[0]
        thread: BrowserThread | None = getattr(session, "_thread", None)
        if thread is None and not closing:
            # a session not started yet picks its loop first: whatever it creates must be created there
            await session._choose_mode()  # type: ignore[attr-defined]
            thread = session._thread  # type: ignore[attr-defined]
        if thread is None or thread.on_thread():
            return await method(*args, **kwargs)
        return await thread.call(_run(method, *args, **kwargs))

    return hop


async def _run(fn: Callable[..., Awaitable[T]], *args: Any, **kwargs: Any) -> T:
    return await fn(*args, **kwargs)


class OnBrowserLoop(WrappedTool):
    """A tool whose ``execute`` runs on the browser loop (it touches Playwright objects), while validation and
    everything the agent reads about it (name, schema, risk: see :class:`WrappedTool`) stay where they are.
    The tool gets the caller's context, except that progress updates are handed back to the loop that called
    ``execute``, because that is where the run's event queue lives."""

    def __init__(self, inner: Tool, thread: BrowserThread) -> None:
        super().__init__(inner)
        self.thread = thread

    async def execute(self, args: Any, ctx: ToolCallContext) -> ToolResult | str:
        caller = asyncio.get_running_loop()

        async def update(partial: Any) -> None:
            await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(ctx.progress(partial), caller))

        return await self.thread.call(_run(self.inner.execute, args, ctx.with_update(update)))


def runs_on_browser(tool: Tool) -> bool:
    """Whether a tool drives the browser: the built-in browser actions say so (``runs_on_browser = True``),
    ``ask_user`` and ``done`` and custom tools do not, unless a custom tool sets the attribute itself."""
    return bool(getattr(tool, "runs_on_browser", False))


def bridge_tools(tools: Mapping[str, Tool], thread: BrowserThread | None) -> dict[str, Tool]:
    """``tools`` with every browser-driving one wrapped to execute on ``thread``'s loop (unchanged when the
    browser is on the caller's loop)."""
    if thread is None:
        return dict(tools)
    return {
        n: t if not runs_on_browser(t) or isinstance(t, OnBrowserLoop) else OnBrowserLoop(t, thread)
        for n, t in tools.items()
    }

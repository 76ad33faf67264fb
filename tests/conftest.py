"""Suite-wide: when a test is about to reach the hang guard (pytest-timeout, which ends the whole run and dumps
only thread stacks), first print what every running event loop's tasks are waiting on. An idle loop with a task
stuck in an ``await`` shows nothing in a thread dump; this names the await.

Property tests run without hypothesis's per-example deadline: a test asserts behaviour, never time, and a loaded
machine (CI shares two cores) would otherwise fail a correct example for being slow."""

from __future__ import annotations

import asyncio
import gc
import sys
import threading
from collections.abc import Iterator

import pytest

try:  # the oldest-kernel environment (.venv-floor) runs only the kernel tests and has no hypothesis
    from hypothesis import settings
except ImportError:
    pass
else:
    settings.register_profile("no_deadline", deadline=None)
    settings.load_profile("no_deadline")

#: Seconds before the test's timeout that the tasks are printed.
MARGIN = 30.0


def _timeout(item: pytest.Item) -> float:
    marker = item.get_closest_marker("timeout")
    if marker is not None and marker.args:
        return float(marker.args[0])
    value = item.config.getini("timeout")
    return float(value) if value else 0.0


def dump_tasks(title: str) -> None:
    """Every running loop's tasks and where each one waits, on stderr."""
    out = [f"\n==== {title}: the tasks of every running event loop ===="]
    loops = [o for o in gc.get_objects() if isinstance(o, asyncio.AbstractEventLoop) and o.is_running()]
    for loop in loops:
        for _ in range(5):  # the loop's own thread may change the set meanwhile
            try:
                tasks = list(asyncio.all_tasks(loop))
                break
            except RuntimeError:
                continue
        else:
            tasks = []
        out.append(f"-- {loop!r}: {len(tasks)} tasks")
        for task in tasks:
            out.append(f"   {task.get_name()}")
            out += [f"      {line}" for line in awaiting(task.get_coro())]
    print("\n".join(out), file=sys.stderr, flush=True)


def awaiting(coro: object, limit: int = 40) -> list[str]:
    """Where a coroutine waits: its frame, then the frame of what it awaits, down the chain."""
    lines: list[str] = []
    while coro is not None and len(lines) < limit:
        frame = getattr(coro, "cr_frame", None) or getattr(coro, "ag_frame", None) or getattr(coro, "gi_frame", None)
        if frame is not None:
            lines.append(f"{frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_name}")
        coro = getattr(coro, "cr_await", None) or getattr(coro, "ag_await", None) or getattr(coro, "gi_yieldfrom", None)
    return lines


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    limit = _timeout(item)
    timer = None
    if limit > 2 * MARGIN:
        timer = threading.Timer(limit - MARGIN, dump_tasks, args=(f"{item.nodeid} is about to time out",))
        timer.daemon = True
        timer.start()
    try:
        yield
    finally:
        if timer is not None:
            timer.cancel()

"""Kernel → Interrupt stops every active run, whether or not a cell is running.

ipykernel ignores SIGINT while idle and swaps in its own handler around each message. A handler of ours is
chained in front of both, so an interrupt with no cell running (``%%agent`` cells return at once) stops the
runs, and ipykernel's own behaviour is unchanged: it runs right after ours.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable
from types import FrameType
from typing import Any, TypeAlias

from .kernel_state import STATE

SigintHandler: TypeAlias = "Callable[[int, FrameType | None], Any] | int | None"
"""What ``signal.getsignal(SIGINT)`` returns: a function, ``SIG_DFL`` / ``SIG_IGN``, or None (not set from Python)."""


class RunInterrupted(asyncio.CancelledError):
    """What a cell awaiting a run raises when the kernel is interrupted: a cancellation (so asyncio code
    treats it as one) that IPython shows as one line instead of a traceback through asyncio's internals."""

    def _render_traceback_(self) -> list[str]:
        return [f"\x1b[33m{self}\x1b[0m"]


def _stop_on_interrupt(previous: SigintHandler) -> SigintHandler:
    """A SIGINT handler that stops every active run, then does what ``previous`` did (ipykernel's own
    handler: cancel the awaiting cell or raise KeyboardInterrupt; or nothing while the kernel is idle)."""
    if getattr(previous, "_notebook_agent", False):
        return previous
    loop = asyncio.get_running_loop()

    def handler(signum: int, frame: FrameType | None) -> Any:
        if any(not run.done for run in STATE.runs):
            # signal handlers run between bytecodes on the main thread: hand the stop to the loop
            loop.call_soon_threadsafe(STATE.stop_on_interrupt)
        if callable(previous):
            return previous(signum, frame)
        if previous == signal.SIG_DFL:
            raise KeyboardInterrupt
        return None

    handler._notebook_agent = True  # type: ignore[attr-defined]
    handler._previous = previous  # type: ignore[attr-defined]
    return handler


def _wrap_sigint_for_cell(*_: Any) -> None:
    """``pre_run_cell``: ipykernel has just installed its own handler for this cell; chain ours in front."""
    try:
        signal.signal(signal.SIGINT, _stop_on_interrupt(signal.getsignal(signal.SIGINT)))
    except (ValueError, RuntimeError):  # not the main thread (a subshell), or no running loop
        pass


def install_interrupt(shell: object) -> None:
    """Make Kernel → Interrupt stop every active run, whether or not a cell is running.

    ipykernel ignores SIGINT while idle and swaps in its own handler around each message (restoring the idle
    one from ``kernel.saved_sigint_handler`` afterwards). We chain a handler in front of both: the idle one
    (so an interrupt with no cell running stops the runs, which ``%%agent`` cells leave going) and, through
    ``pre_run_cell``, the one of each running cell (so an interrupt also stops runs the cell does not await).
    ipykernel's own behaviour is unchanged: it runs right after ours.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    kernel = getattr(shell, "kernel", None)
    if kernel is not None and hasattr(kernel, "saved_sigint_handler"):
        kernel.saved_sigint_handler = _stop_on_interrupt(kernel.saved_sigint_handler)
    events = getattr(shell, "events", None)
    if events is not None and _wrap_sigint_for_cell not in events.callbacks.get("pre_run_cell", []):
        events.register("pre_run_cell", _wrap_sigint_for_cell)


def uninstall_interrupt(shell: object) -> None:
    kernel = getattr(shell, "kernel", None)
    current = getattr(kernel, "saved_sigint_handler", None)
    if getattr(current, "_notebook_agent", False):
        kernel.saved_sigint_handler = current._previous  # type: ignore[union-attr]
    events = getattr(shell, "events", None)
    if events is not None and _wrap_sigint_for_cell in events.callbacks.get("pre_run_cell", []):
        events.unregister("pre_run_cell", _wrap_sigint_for_cell)

"""Answering a notebook run's questions from code: the run handle's ``pending_approval``, ``wait_for_approval``,
``approve()`` and ``deny()`` (scripts, tests, "Run All" notebooks), the same answers a click gives.

One job beside the handle (runtime.py), which inherits it: the approval a run asked for is on the
``ApprovalRequested`` event; this finds the one still open and answers it, or waits for the run to ask.
"""

from __future__ import annotations

import asyncio

from ..agent import Approval, PageAgentResult
from ..agent.safety.approval import ApprovalRequest
from .views.run_view import RunView


class RunAnswers:
    """Approve / Deny from code, over the handle's fields (set by its ``__init__``)."""

    approval: Approval | None
    task: asyncio.Task[PageAgentResult | None] | None
    view: RunView
    _asked: asyncio.Event

    # -- answering from code (scripts, tests, "Run All" notebooks) ---------------------------------------
    @property
    def pending_approval(self) -> ApprovalRequest | None:
        """The action waiting for Approve / Deny, if any."""
        approval = self.approval
        return approval.request if approval is not None and not approval.answered else None

    @property
    def asked_for_interrupt(self) -> bool:
        """A panel of this run waits for a person on a kernel that cannot receive the click while a cell awaits
        the run: interrupting that cell is how the click gets through, so an Interrupt must not stop the run."""
        return self.view.waiting_for_person and self.view.blocked_version is not None

    async def wait_for_approval(self, timeout: float = 60.0) -> ApprovalRequest:
        """Wait until the run asks for an approval not yet answered (or finishes: then raise)."""
        task = self.task
        assert task is not None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            request = self.pending_approval
            if request is not None:
                return request
            remaining = deadline - loop.time()
            if task.done() or remaining <= 0:
                state = "finished" if task.done() else f"did not ask within {timeout:g}s"
                raise RuntimeError(f"The run {state} without asking for an approval")
            self._asked.clear()
            asked = asyncio.ensure_future(self._asked.wait())
            await asyncio.wait({asked, task}, timeout=remaining, return_when=asyncio.FIRST_COMPLETED)
            asked.cancel()

    def approve(self) -> None:
        """Same as clicking Approve."""
        self._open_approval().approve()

    def deny(self, reason: str | None = None) -> None:
        """Same as clicking Deny (the model sees ``reason``)."""
        self._open_approval().deny(reason)

    def _open_approval(self) -> Approval:
        approval = self.approval
        if approval is None or approval.answered:
            raise RuntimeError("Nothing is waiting for an approval")
        return approval

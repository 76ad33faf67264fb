"""How a run ends, kept in one place: :class:`RunOutcome`.

It counts unusable outputs in a row (``max_failures`` of them end the run as failed), keeps the finishing
action's verdict (a :class:`~notebook_agent.core.tools.Finished`), decides whether to go on after an unusable
output, and settles the final status with the sentence that explains it (stopped, completed, failed, max_steps,
or an error).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...core.messages import AssistantMessage, Message
from ...core.tools import Finished, ToolResult
from ..runs.result import PageStep, Status


@dataclass
class RunOutcome:
    max_steps: int
    max_failures: int
    failures: int = 0
    """Unusable outputs (or arguments that failed validation) in a row."""
    last_output_error: str | None = None
    """Why the last output could not be used (the next state message tells the model), or None."""
    finished: Finished | None = None
    """The finishing action's verdict, once it ran."""
    status: Status | None = None
    error: str | None = None

    def unusable(self, error: str) -> None:
        self.failures += 1
        self.last_output_error = error

    def usable(self) -> None:
        self.last_output_error = None

    def action_finished(self, step: PageStep, error_kind: str | None, finished: Finished | None = None) -> None:
        """An action ended; ``finished``: its verdict when it finished the run (see :func:`verdict_of`)."""
        if error_kind == "argument-validation":
            self.unusable(step.result)
        else:
            self.failures = 0
        if finished is not None and not step.is_error:
            self.finished = finished

    def may_retry(self, step: PageStep | None, steps: int, aborted: bool) -> bool:
        """Go on after an unusable output (the next state message carries the error)?"""
        return (
            step is not None
            and step.action is None
            and step.output_error is not None
            and self.failures < self.max_failures
            and steps < self.max_steps
            and not aborted
        )

    def should_stop(self, steps: int) -> bool:
        """End the run after this turn?"""
        if self.finished is not None:
            return True
        if self.failures >= self.max_failures:
            self.status = "failed"
            self.error = (
                f"The model produced {self.failures} unusable outputs in a row (max_failures="
                f"{self.max_failures}). Last problem: {self.last_output_error}"
            )
            return True
        return steps >= self.max_steps

    def end(self, status: Status, error: str | None) -> None:
        self.status, self.error = status, error

    def settle(self, messages: list[Message], steps: int, stopped: str | None) -> None:
        """The status once the loop returned (unless one was already set); ``stopped``: the abort reason."""
        if self.status is not None:
            return
        last = next((m for m in reversed(messages) if isinstance(m, AssistantMessage)), None)
        if stopped is not None:
            self.end("stopped", stopped)
        elif self.finished is not None:
            self.status = "completed" if self.finished.success else "failed"
        elif last is not None and last.stop_reason == "error" and last.error_kind != "malformed":
            self.end("error", last.error_message)
        elif steps >= self.max_steps:
            self.end("max_steps", f"Stopped after {self.max_steps} steps without finishing (max_steps).")
        else:
            self.end("error", "The run ended without a done action.")

    def verdict(self) -> dict[str, Any]:
        """The result's status, success, text and error."""
        status: Status = self.status or "error"
        return {
            "status": status,
            "success": bool(self.finished and self.finished.success) and status == "completed",
            "text": self.finished.text if self.finished else (self.error or ""),
            "error": self.error if status != "completed" else None,
        }


def verdict_of(action: str, result: ToolResult, args: Mapping[str, Any]) -> Finished | None:
    """The verdict an action's result carries, or None when it did not finish the run.

    Every built-in finishing action returns one (``ToolResult.finished``). A custom tool that replaces
    ``done`` and returns plain text still finishes the run, as it always has: its verdict is read from the
    step's arguments (``text``, ``success``), the one place the name decides."""
    if result.finished is not None:
        return result.finished
    if action == "done":
        return Finished(str(args.get("text", "")), bool(args.get("success", False)))
    return None

"""How a run ends, kept in one place: :class:`RunOutcome`.

It counts unusable outputs in a row (``max_failures`` of them end the run as failed), notes the ``done``
action's verdict, decides whether to go on after an unusable output, and settles the final status with the
sentence that explains it (stopped, completed, failed, max_steps, or an error).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...core.messages import AssistantMessage, Message
from ..runs.result import PageStep, Status


@dataclass
class RunOutcome:
    max_steps: int
    max_failures: int
    failures: int = 0
    """Unusable outputs (or arguments that failed validation) in a row."""
    last_output_error: str | None = None
    """Why the last output could not be used (the next state message tells the model), or None."""
    done: tuple[bool, str] | None = None
    """``done``'s (success, text), once it ran."""
    status: Status | None = None
    error: str | None = None

    def unusable(self, error: str) -> None:
        self.failures += 1
        self.last_output_error = error

    def usable(self) -> None:
        self.last_output_error = None

    def action_finished(self, step: PageStep, error_kind: str | None) -> None:
        if error_kind == "argument-validation":
            self.unusable(step.result)
        else:
            self.failures = 0
        if step.action == "done" and not step.is_error:
            self.done = (bool(step.args.get("success", False)), str(step.args.get("text", "")))

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
        if self.done is not None:
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
        elif self.done is not None:
            self.status = "completed" if self.done[0] else "failed"
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
            "success": bool(self.done and self.done[0]) and status == "completed",
            "text": self.done[1] if self.done else (self.error or ""),
            "error": self.error if status != "completed" else None,
        }

"""The run file, written from the run's own events: the one exit where a run's record leaves it.

The recorder is a consumer of the page events like any view: the header when the run starts, each step when
``StepFinished`` says it is final (naming its screenshot, which ``ScreenshotTaken`` writes beside it when it
arrives), the closing line when the run ends. Each run is written once, as it happens. A run that ends before
it started (a replay whose recorded start URL is refused, a start URL outside the allowed domains) still
leaves a complete file: the header, written at the close from what the run knew, and the closing line with
the refusal, so the file loads and lists like any other run. Every string passes the
secrets vault's redaction on the way out, whatever field it sits in (an error message, a page title, a URL).
A disk problem is reported once on the result and never ends the run.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from .events import PageEvent, ScreenshotTaken, StepFinished
from .result import PageAgentResult
from .run_file import RunWriter, run_closing, run_head


class Recorder:
    """Writes one run under ``runs_dir`` (nothing when it is None)."""

    def __init__(self, runs_dir: str | None, run_id: str, *, redact: Callable[[str], str], screenshots: bool) -> None:
        self.writer = RunWriter(runs_dir, run_id, redact=redact) if runs_dir else None
        self.screenshots = screenshots
        self.error: str | None = None

    @property
    def path(self) -> Path | None:
        """The run file, once it has been started."""
        return self.writer.path if self.writer is not None and self.error is None else None

    def start(self, head: PageAgentResult) -> None:
        self._write(lambda w: w.start(run_head(head), head.system_prompt))

    def handle(self, event: PageEvent) -> None:
        if isinstance(event, StepFinished):
            self._write(lambda w: w.step(event.step, screenshot_pending=self.screenshots))
        elif isinstance(event, ScreenshotTaken) and event.data:
            self._write(lambda w: w.screenshot(event.step))

    def close(self, result: PageAgentResult) -> None:
        """The closing line (and any step the run ended inside of); a save problem is added to the result. A run
        that ended before its header was written (refused at its start) gets the header first."""
        if self.writer is not None and not self.writer.started:
            self.start(result)
        if self.writer is not None:
            for step in result.steps[self.writer.written :]:
                self._write(lambda w, s=step: w.step(s))  # type: ignore[misc]
        self._write(lambda w: w.end(run_closing(result)))
        if self.error:
            result.error = f"{result.error + ' ' if result.error else ''}{self.error}"

    def _write(self, write: Callable[[RunWriter], None]) -> None:
        if self.writer is None or self.error is not None:
            return
        try:
            write(self.writer)
        except OSError as exc:
            self.error = f"The run could not be saved to {self.writer.folder}: {exc}"

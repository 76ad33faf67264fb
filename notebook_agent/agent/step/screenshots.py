"""The picture of the page after each step, taken off the critical path.

A screenshot starts as a task when a step ends and overlaps the next snapshot and model call; it is collected
before the next action runs (so it never shows a later page), and before the browser may close at the end.
Only one is in flight at a time, in step order. With ``vision`` the same picture serves as the model's image
of the next state, so the page is captured once per step.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import time
from collections.abc import Callable

from ...browser.page.mask import ScreenshotWithheld
from ...browser.session.browser_session import BrowserSession
from ...core.messages import ImageContent
from ..runs.events import ScreenshotTaken
from ..runs.result import PageStep

#: What the view shows for a step without a picture because of hidden values.
WITHHELD = "No screenshot for this step: a hidden value could not be made sure to be painted over."


class StepScreenshots:
    """Takes each step's screenshot in the background and announces it with ``ScreenshotTaken``."""

    def __init__(self, put: Callable[[ScreenshotTaken], None]) -> None:
        self.put = put
        self._task: asyncio.Task[bytes | None] | None = None
        self.withheld: list[str] = []
        """Why each withheld picture was not taken (a hidden value could not be guaranteed painted over)."""

    def start(self, browser: BrowserSession, step: PageStep) -> None:
        """Begin ``step``'s picture (the caller has collected the previous one)."""
        self._task = asyncio.create_task(self._take(browser, step))

    async def _take(self, browser: BrowserSession, step: PageStep) -> bytes | None:
        t0 = time.perf_counter()
        try:
            data = await browser.screenshot(format="jpeg")
        except ScreenshotWithheld as exc:  # a secret could have shown: this step has no picture
            logging.getLogger("notebook_agent.agent").warning("step %s: %s", step.index, exc)
            self.withheld.append(f"step {step.index}: {exc}")
            # the view says so; the reason's details (a frame's URL) stay in the log
            self.put(ScreenshotTaken(step, b"", "image/jpeg", withheld=WITHHELD))
            return None
        except Exception:
            return None
        step.screenshot_ms = (time.perf_counter() - t0) * 1000
        step.screenshot, step.screenshot_mime = data, "image/jpeg"
        self.put(ScreenshotTaken(step, data, "image/jpeg"))
        return data

    async def for_model(self, browser: BrowserSession) -> ImageContent | None:
        """The page as a picture for the model (vision): the view's screenshot of the previous step shows this
        same page, so one picture serves both; None when it cannot be guaranteed free of secrets."""
        try:
            shot = await self.collect() or await browser.screenshot(format="jpeg")
        except ScreenshotWithheld:
            return None
        return ImageContent(data=base64.b64encode(shot).decode("ascii"), mime_type="image/jpeg") if shot else None

    async def collect(self) -> bytes | None:
        """Wait for the picture in flight, if any: its bytes (None if there was none or it failed)."""
        task, self._task = self._task, None
        return await task if task is not None else None

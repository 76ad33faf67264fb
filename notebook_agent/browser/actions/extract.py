"""``extract_table``: read a table or repeated list exactly and hand it on as data, not as text to retype.

The model names an index; the rows are read from the live DOM (browser/extract/tables.py) and kept in the result's
``details`` as an :class:`~notebook_agent.browser.extract.tables.ExtractedTable` named t1, t2, ... (per tool instance,
so per run); the model reads only the summary and names the table in ``done``. A next-page click is made here
like a click action's (a trusted click inside the session's watch), so the guard and the effect gate see it.
"""

from __future__ import annotations

from playwright.async_api import ElementHandle

from ...core.abort import AbortSignal
from ...core.action_facts import ActionFacts
from ...core.tools import ToolResult
from ..errors import ActionError
from ..extract.pagination import extract
from ..extract.tables import ExtractError
from .base import ActionHost, BrowserTool
from .params import ExtractParams


class ExtractTableTool(BrowserTool):
    name = "extract_table"
    description = (
        "Read the table or repeated list at index as data, every row exactly (pages>1: follow next-page links); "
        "name it in done."
    )
    parameters = ExtractParams
    failure = "Failed to read the table"
    risk = "typing"
    facts = ActionFacts(
        on_element=True,
        repeatable=True,
        data=True,
        order=14,
        small="Read the table or list at index as data; name it in done.",
        script=lambda c: ["# The recorded run read a table here (extract_table); its rows are in the run file."],
    )

    def __init__(self, browser: ActionHost) -> None:
        super().__init__(browser)
        self.count = 0
        """Tables read so far: the next one is named t{count + 1}."""

    async def run(self, args: ExtractParams, signal: AbortSignal) -> ToolResult:
        el, info, frame, _ = await signal.race(self.browser.resolve(args.index))
        await self.progress(f"reading element [{args.index}]")

        async def click(control: ElementHandle) -> str:
            return await self._click(control, signal)

        try:
            table, effects = await extract(
                frame,
                el,
                name=f"t{self.count + 1}",
                where=f"[{args.index}]",
                pages=args.pages,
                click=click,
                signal=signal,
                progress=self.progress,
            )
        except ExtractError as exc:  # "the element ..." said with what the model saw at that index
            raise ActionError(str(exc).replace("the element", info.describe(60), 1)) from None
        self.count += 1
        text = table.summary() + (f"\n{effects}" if effects else "")
        return self.browser.finish(text, details={"table": table})

    async def _click(self, control: ElementHandle, signal: AbortSignal) -> str:
        """A trusted click on the next-page control inside the session's watch, as a click action makes it, so
        the guard and the effect gate see what it starts; returns what it caused, in words."""
        async with self.browser.watch() as watch:
            await signal.race(control.click(timeout=self.timeout_ms))
            await watch.settle(signal, may_navigate=True)
            return watch.describe()

"""``extract_table``: read a table or repeated list exactly and hand it on as data, not as text to retype.

The model names a table the state names (``[Table T1]``: a table of data, interactive or not) or the index of
an element in it or holding it (a list of cards has no table name); the rows are read from the live DOM
(browser/extract/tables.py) and kept in the result's ``details`` as an
:class:`~notebook_agent.browser.extract.tables.ExtractedTable` named t1, t2, ... (per tool instance, so per run);
the model reads only the summary and names the table in ``done``. A next-page click is made here like a click
action's (a trusted click inside the session's watch), so the door sees what it starts.
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
        "Read a table or repeated list as data, every row exactly: table=its name from a [Table T1] line, or "
        "index=an element in it (pages>1: follow next-page links); name it in done."
    )
    parameters = ExtractParams
    failure = "Failed to read the table"
    risk = "typing"
    facts = ActionFacts(
        on_element=True,
        repeatable=True,
        data=True,
        order=14,
        small="Read a table by its name (table=T1) or the list at index as data; name it in done.",
        script=lambda c: ["# The recorded run read a table here (extract_table); its rows are in the run file."],
    )

    def __init__(self, browser: ActionHost) -> None:
        super().__init__(browser)
        self.count = 0
        """Tables read so far: the next one is named t{count + 1}."""

    async def run(self, args: ExtractParams, signal: AbortSignal) -> ToolResult:
        if args.table is not None:
            el, frame = await signal.race(self.browser.resolve_table(args.table))
            what, where = f"table {args.table}", args.table
        else:
            assert args.index is not None  # the parameters hold one of the two
            el, info, frame, _ = await signal.race(self.browser.resolve(args.index))
            what, where = info.describe(60), f"[{args.index}]"
        await self.progress(f"reading {what if args.table else f'element {where}'}")

        async def click(control: ElementHandle) -> str:
            return await self._click(control, signal)

        try:
            table, effects = await extract(
                frame,
                el,
                name=f"t{self.count + 1}",
                where=where,
                pages=args.pages,
                click=click,
                signal=signal,
                progress=self.progress,
            )
        except ExtractError as exc:  # "the element ..." said with what the model saw there
            raise ActionError(str(exc).replace("the element", what, 1)) from None
        self.count += 1
        text = table.summary() + (f"\n{effects}" if effects else "")
        return self.browser.finish(text, details={"table": table})

    async def _click(self, control: ElementHandle, signal: AbortSignal) -> str:
        """A trusted click on the next-page control inside the session's watch, as a click action makes it, so
        the door sees what it starts; returns what it caused, in words."""
        async with self.browser.watch() as watch:
            await signal.race(control.click(timeout=self.timeout_ms))
            await watch.settle(signal, may_navigate=True)
            return watch.describe()

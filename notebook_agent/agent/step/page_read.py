"""What a step reads of the page: the snapshot, the text the model reads, the step's URL, title and observations.

A piloted step decided without the page (a recorded navigation) reads nothing first, unless its pilot hands it
to the model after all; then it reads the page as any step does (:func:`page_for_step`). A step read in full
costs one round trip to the page: the snapshot answers with the page's announcing regions and headings too
(the outcome line's facts: ``prompt/outcome.py``).

The first step's read is also what the run's tools are chosen by (``prompt/offers.py``: a table, a link that
opens a tab, a page wider than the window), so :func:`read_start` takes it before the tools are built, and
step 1 uses that very snapshot instead of reading the page again a moment later: nothing acts on the page in
between. A read that failed there fails step 1 the same way, where it always did.
"""

from __future__ import annotations

from collections.abc import Mapping

from ...browser.page.snapshot import Snapshot, without_tables
from ...browser.session.browser_session import BrowserSession
from ...browser.session.page_reads import page_url
from ...core.action_facts import facts_of
from ...core.tools import Tool
from ..prompt.outcome import page_facts
from ..runs.result import PageStep
from .run_state import RunState

#: The page text of a step a pilot decided without reading the page (what its run file shows in its place).
NOT_READ = "(The page was not read for this step: it repeats a recorded navigation.)"


def reads_tables(tools: Mapping[str, Tool]) -> bool:
    """Whether the run offers an action that reads a table by its name (``facts.data``: ``extract_table``)."""
    return any(facts_of(t).data for t in tools.values())


def url_of(browser: BrowserSession) -> str:
    try:
        return page_url(browser)
    except Exception:  # no page yet
        return ""


async def read_start(run: RunState) -> Snapshot | None:
    """The first step's snapshot of the start page, read now (kept on ``run.start_read`` for step 1), or None
    when step 1 will not read the page (a recorded navigation comes first), the tab shows no page, or the run
    is traced (the read then belongs inside the step's trace group). A read that raised is kept to raise in
    step 1."""
    browser = run.browser
    assert browser is not None
    if run.agent.trace or (run.pilot is not None and not run.pilot.needs_page()):
        return None
    if url_of(browser) in ("", "about:blank"):
        return None
    try:
        run.start_read = await browser.snapshot(full_page=run.agent.full_page)
    except Exception as exc:
        run.start_read = exc
        return None
    return run.start_read


async def page_for_step(run: RunState, step: PageStep) -> tuple[str, bool]:
    """What ``step`` shows the model of the page, and whether the page was read for it: a piloted step decided
    without the page (a recorded navigation) reads nothing first, unless its pilot hands it to the model after
    all; then it reads the page as any step does."""
    assert run.browser is not None
    read = run.pilot is None or run.pilot.needs_page()
    page_text = await read_page(run, step) if read else NOT_READ
    if not read:
        step.url, step.title = run.redactor.scrub_text(url_of(run.browser)), ""
    note = await run.pilot.prepare(run.browser, step, page_text) if run.pilot is not None else None
    if note and not read:
        page_text, read = await read_page(run, step), True
    if note:
        step.observations.append(note)
    return page_text, read


async def read_page(run: RunState, step: PageStep) -> str:
    """Snapshot the page for ``step`` of ``run``: its URL, title and observations set; the text the model reads.
    The start page's snapshot (:func:`read_start`) serves step 1 while it is still the browser's latest and the
    tab is still at its URL."""
    assert run.browser is not None
    start, run.start_read = run.start_read, None
    if isinstance(start, Exception):
        raise start
    if start is None or run.browser.last_snapshot is not start or url_of(run.browser) != start.url:
        start = await run.browser.snapshot(full_page=run.agent.full_page)  # (a page that moved on meanwhile)
    snapshot = start
    scrub = run.redactor.scrub_text
    # the tables are named for extract_table: a run without it reads the page without their names
    page_text = scrub(snapshot.text if reads_tables(run.tools) else without_tables(snapshot.text))
    step.url, step.title = scrub(snapshot.url), scrub(snapshot.title)
    facts = await page_facts(run.browser, snapshot, scrub)
    step.observations = run.observer.observe(
        step, run.steps, page_text, run.agent.max_steps, run.outcome.last_output_error, facts
    ) + run.loops.page(page_text)
    return page_text

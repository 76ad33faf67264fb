"""A map's row counts add up, on every front: succeeded + failed + stopped + running + not started = rows.

Each front once counted for itself, and the result's repr said "20 rows: 6 succeeded, 14 failed, 12 not started"
(the rows never started counted again among the failed). Now one place counts (agent/batch/map_counts.py) and
every front says its text. Checked two ways: the counts kept up to date as rows move equal a count of the rows,
over generated moves and interrupts; and a real map on real Chromium, with generated row outcomes and a stop or a
cancellation at any point, whose every front (each progress line of the notebook view and the terminal, the
view's last line, its static record, the result's repr, ``MapInterrupted``) says numbers that add up to the rows.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, event, given, settings
from hypothesis import strategies as st

from notebook_agent.agent import MapInterrupted, MapProgress, MapResult, PageAgent
from notebook_agent.agent.batch.map_table import MapRow
from notebook_agent.agent.prompt.agent_output import agent_output
from notebook_agent.browser import BrowserSession
from notebook_agent.cli.map import row_line
from notebook_agent.demo import serve_demo
from notebook_agent.llm.scripted import ScriptedModel
from notebook_agent.notebook.map_view import MapView, map_record_html

_KIND = re.compile(r"(\d+) (succeeded|failed|stopped|running|not started)\b")
_ROWS = re.compile(r"(\d+) rows?: ")


def said_counts(text: str) -> tuple[int, dict[str, int]]:
    """``(rows, {kind: n})`` from a front's text (``20 rows: 6 succeeded, 2 failed, 12 not started · 3.1 s``)."""
    head = _ROWS.search(text)
    assert head is not None, f"no row count in {text!r}"
    kinds: dict[str, int] = {}
    for n, kind in _KIND.findall(text[head.end() :]):
        assert kind not in kinds, f"{kind} said twice in {text!r}"
        kinds[kind] = int(n)
    return int(head.group(1)), kinds


def assert_adds_up(text: str, rows: int) -> dict[str, int]:
    total, kinds = said_counts(text)
    assert total == rows, f"{text!r} says {total} rows of {rows}"
    assert sum(kinds.values()) == rows, f"{text!r}: {kinds} add up to {sum(kinds.values())}, not {rows}"
    return kinds


# -- the counts kept as rows move, against a count of the rows ----------------------------------------------------
_END = st.sampled_from(["completed+", "completed-", "failed", "max_steps", "stopped", "error", "not_started"])


@given(data=st.data(), ends=st.lists(_END, min_size=1, max_size=12))
def test_counts_kept_as_rows_move_are_the_count_of_the_rows(data: st.DataObject, ends: list[str]) -> None:
    """Rows start and end in any interleaving (an end drawn before its row started is a row still waiting);
    a stop at any point ends the running rows ``stopped`` and starts no more."""
    from notebook_agent.agent.batch.map_counts import MapCounts, row_kind

    rows = [MapRow(index=i, values={}, task="t") for i in range(len(ends))]
    counts = MapCounts.of(rows)
    moves = data.draw(
        st.permutations([(i, "start") for i in range(len(rows))] + [(i, "end") for i in range(len(rows))])
    )
    stop_at = data.draw(st.integers(min_value=0, max_value=len(moves)), label="stop at")

    def move(row: MapRow, status: Any, success: bool = False) -> None:
        nonlocal counts
        was = row_kind(row.status, row.success)
        row.status = status
        if success:
            row.kept = _facts(success=True)
        counts = counts.moved(was, row_kind(row.status, row.success))

    for step, (i, what) in enumerate(moves):
        if step == stop_at:
            for row in rows:
                if row.status == "running":
                    move(row, "stopped")
            break
        row = rows[i]
        if what == "start" and row.status == "not_started":
            move(row, "running")
        elif what == "end" and row.status == "running":
            end = ends[i]
            move(row, end.rstrip("+-"), success=end == "completed+")
        assert counts == MapCounts.of(rows)
    assert counts == MapCounts.of(rows)
    assert counts.succeeded + counts.failed + counts.stopped + counts.running + counts.not_started == len(rows)
    assert_adds_up(counts.text(), len(rows))


def _facts(success: bool) -> Any:
    from notebook_agent.agent.batch.map_table import RowFacts
    from notebook_agent.llm.ledger import Ledger

    return RowFacts(success=success, answer="", error=None, steps=1, ledger=Ledger(), run_id="r")


# -- a real map, stopped or cancelled anywhere ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def shop() -> Iterator[str]:
    with serve_demo() as server:
        yield server.url


OUTCOMES = ["succeed", "fail", "error", "wait"]


def model_for(outcome: str) -> ScriptedModel:
    if outcome == "succeed":
        return ScriptedModel([agent_output("done", {"text": "found it", "success": True})])
    if outcome == "fail":
        return ScriptedModel([agent_output("done", {"text": "not there", "success": False})])
    if outcome == "wait":  # until the stop, or max_steps
        return ScriptedModel([], on_exhausted=agent_output("wait", {"seconds": 0.2}))
    raise RuntimeError("the row's model could not be made")  # an error before the run: status "error"


@settings(
    max_examples=12,
    deadline=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    outcomes=st.lists(st.sampled_from(OUTCOMES), min_size=1, max_size=6),
    concurrency=st.integers(min_value=1, max_value=3),
    interrupt=st.sampled_from(["none", "stop", "cancel"]),
    at=st.integers(min_value=0, max_value=8),
)
async def test_every_front_says_counts_that_add_up(
    shared_browser: BrowserSession, shop: str, outcomes: list[str], concurrency: int, interrupt: str, at: int
) -> None:
    n = len(outcomes)
    agent = PageAgent(
        browser=shared_browser, model=ScriptedModel(), start_url=f"{shop}/", max_steps=3, screenshots=False
    )
    view = MapView("row {value}", n, "scripted")
    progress: list[MapProgress] = []
    task: asyncio.Task[MapResult] | None = None

    def on_event(event: Any) -> None:
        view.handle(event)
        if isinstance(event, MapProgress):
            progress.append(event)
            assert_adds_up(view.progress_line(event), n)
            assert event.done <= event.total == n
            if event.ended:
                count = re.search(r"\[(\d+)/(\d+)\]", row_line(event))
                assert count is not None and int(count.group(1)) <= int(count.group(2)) == n
            if len(progress) == at + 1:
                if interrupt == "stop":
                    agent.stop("enough rows")
                elif interrupt == "cancel" and task is not None:
                    task.cancel()

    def factory(row: dict[str, Any]) -> ScriptedModel:
        return model_for(outcomes[row["value"]])

    task = asyncio.create_task(
        agent.map("row {value}", list(range(n)), concurrency=concurrency, model_factory=factory, on_event=on_event)
    )
    interrupted: MapInterrupted | None = None
    try:
        result = await task
    except MapInterrupted as exc:
        interrupted, result = exc, exc.result
    finally:
        agent.stop("the example is over")
        with contextlib.suppress(BaseException):
            await task

    kinds = assert_adds_up(repr(result), n)
    event(f"{interrupt}: " + ", ".join(sorted(kinds)))
    statuses = [r.status for r in result.rows]
    assert kinds.get("not started", 0) == statuses.count("not_started")
    assert kinds.get("stopped", 0) == statuses.count("stopped")
    assert kinds.get("succeeded", 0) == sum(r.success for r in result.rows)
    assert "running" not in kinds  # a finished map has no running row
    if interrupted is not None:
        assert_adds_up(str(interrupted), n)
    else:
        assert_adds_up(view.line.value, n)
        assert view.bar.value == n - kinds.get("not started", 0)
    assert_adds_up(re.sub(r"<[^>]+>", " ", map_record_html(result)), n)
    assert all(isinstance(r, MapRow) for r in result.rows)

"""Every row of a map without success says why in its ``error`` column, whichever way it failed, on real
Chromium with scripted models: the agent giving up (done with success false), max steps, an exception, a model
error, an HTTP error page the state reported, a stop (and the rows it left not started). The table, the
DataFrame, the CSV and ``records()`` read the same column, so ``df[df.error.notna()]`` is every failed row."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notebook_agent.agent import PageAgent, RowEvent
from notebook_agent.agent.batch.map_table import MapRow
from notebook_agent.agent.prompt.agent_output import agent_output
from notebook_agent.agent.runs.events import ActionStarted
from notebook_agent.browser import BrowserSession
from notebook_agent.core.messages import UserMessage
from notebook_agent.core.model import Context
from notebook_agent.demo import serve_demo
from notebook_agent.llm.scripted import ScriptedModel, error

WAYS = ["ok", "gave_up", "max_steps", "raises", "model_error", "http_error", "stop"]


@pytest.fixture(scope="module")
def shop() -> Iterator[str]:
    with serve_demo() as server:
        yield server.url


def done(text: str, success: bool) -> Any:
    return agent_output("done", {"text": text, "success": success})


def reads_the_state(ctx: Context) -> Any:
    """Answers from the page, unless the state says the server answered with an error: then gives up, saying so."""
    msg = ctx.messages[-1]
    state = msg.text if isinstance(msg, UserMessage) else ""
    if "(the server answered HTTP 404: an error page)" in state:
        return done("The product page is an error page (HTTP 404).", False)
    return done("Read the page: it says Not Found.", True)


def model_for(row: dict[str, Any]) -> ScriptedModel:
    way = row["way"]
    waits = agent_output("wait", {"seconds": 10 if way == "stop" else 1})
    return {
        "ok": lambda: ScriptedModel([done("fine", True)]),
        "gave_up": lambda: ScriptedModel([done("could not find it", False)]),
        "max_steps": lambda: ScriptedModel([], on_exhausted=waits),
        "raises": lambda: (_ for _ in ()).throw(RuntimeError("no model for this row")),
        "model_error": lambda: ScriptedModel([error("the provider broke")]),
        "http_error": lambda: ScriptedModel([reads_the_state]),
        "stop": lambda: ScriptedModel([], on_exhausted=waits),
    }[way]()


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ways=st.lists(st.sampled_from(WAYS), min_size=1, max_size=5))
async def test_a_row_without_success_says_why_in_error_whichever_way_it_failed(
    shared_browser: BrowserSession, shop: str, tmp_path_factory: pytest.TempPathFactory, ways: list[str]
) -> None:
    agent = PageAgent(browser=shared_browser, model=ScriptedModel(), max_steps=2, screenshots=False)
    rows = [{"way": w, "path": "missing-page.html" if w == "http_error" else "index.html"} for w in ways]

    def stop_at_the_stop_row(event: Any) -> None:
        if isinstance(event, RowEvent) and isinstance(event.event, ActionStarted) and ways[event.row] == "stop":
            agent.stop("stopped on purpose")

    result = await agent.map(
        "Row {way}",
        rows,
        concurrency=2,
        start_url=f"{shop}/{{path}}",
        model_factory=model_for,
        on_event=stop_at_the_stop_row,
    )
    records = result.records()
    frame = result.to_pandas()
    path = Path(tmp_path_factory.mktemp("csv")) / "map.csv"
    result.to_csv(path)
    with path.open(encoding="utf-8", newline="") as f:
        written = list(csv.DictReader(f))
    for row, record, line in zip(result.rows, records, written, strict=True):
        if row.success:
            assert record["error"] is None and line["error"] == "", (row.status, record)
            continue
        assert isinstance(record["error"], str) and record["error"].strip(), (ways[row.index], row.status, record)
        assert line["error"] == record["error"]
        if row.status == "failed":  # the agent's own reason, not only in answer
            assert ("HTTP 404" if ways[row.index] == "http_error" else "could not find it") in record["error"]
    assert list(frame.index[frame.error.notna()]) == result.failed
    assert "http_error" not in [ways[i] for i in result.succeeded]  # the state said so, and the model listened


def test_a_row_that_never_started_says_so() -> None:
    row = MapRow(index=0, values={}, task="t")
    assert (
        row.failure()
        == "Not started: the map stopped before this row (a stop, its budget or its estimate: see its note)."
    )
    row.status = "running"
    assert row.failure() is None

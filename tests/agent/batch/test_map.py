"""One task over many rows (``agent.map``) on real Chromium against the demo shop: tabs and contexts side by side,
failures kept per row, retry of only those, the stop, DataFrames in and out, and the terminal command."""

from __future__ import annotations

import asyncio
import concurrent.futures
import csv
import dataclasses
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from notebook_agent.agent import MapInputError, MapInterrupted, MapProgress, MapResult, PageAgent, RowEvent
from notebook_agent.agent.batch.map_table import MapRow, output_fields
from notebook_agent.agent.prompt.agent_output import agent_output
from notebook_agent.agent.runs.events import ActionStarted, RunFinished
from notebook_agent.browser import BrowserSession
from notebook_agent.core.messages import UserMessage
from notebook_agent.core.model import Context
from notebook_agent.demo import DELETE_TASK, PRICE_TASK, serve_demo
from notebook_agent.llm.scripted import ScriptedModel, error

ROOT = Path(__file__).resolve().parents[3]
PAGE = re.compile(r"Current page: \[(.*?)\]\((.*?)\)")
PRODUCTS = {
    "p01": "AeroBeat Wireless Headphones",
    "p03": "TrailSound Wireless Headphones Lite",
    "p06": "Ridgeline Rain Jacket",
    "p09": "Basecamp 28L Daypack",
}
SHOP_TASK = "Find the cheapest {what} on the demo shop, add it to the cart, and tell me its name and price."


@pytest.fixture(scope="module")
def shop() -> Iterator[str]:
    with serve_demo() as server:  # stopped when the module's tests are done
        yield server.url


def seen(ctx: Context) -> tuple[str, str]:
    """The page the run is on, as its state message says: (title, url)."""
    msg = ctx.messages[-1]
    found = PAGE.search(msg.text if isinstance(msg, UserMessage) else "")
    assert found is not None
    return found.group(1), found.group(2)


def report_page(ctx: Context) -> Any:
    title, url = seen(ctx)
    return agent_output("done", {"text": f"{title} @ {url}", "success": True})


def page_reader(row: dict[str, Any]) -> ScriptedModel:
    """Waits a step (so rows overlap), then answers with the page its own state shows."""
    return ScriptedModel([agent_output("wait", {"seconds": 1}), report_page])


@pytest.mark.parametrize("isolation", ["tab", "context"])
async def test_rows_side_by_side_each_see_only_their_own_page(
    shared_browser: BrowserSession, shop: str, isolation: str
) -> None:
    agent = PageAgent(browser=shared_browser, model=ScriptedModel(), screenshots=False)
    rows = [{"id": pid, "name": name} for pid, name in PRODUCTS.items()]
    events: list[Any] = []
    result = await agent.map(
        "Read the product page of {name}",
        rows,
        concurrency=2,
        isolation=isolation,
        start_url=f"{shop}/product.html?id={{id}}",
        model_factory=page_reader,
        on_event=events.append,
    )
    assert [r.status for r in result.rows] == ["completed"] * 4 and result.failed == []
    for rec in result.rows:  # each run's answer is what its own tab showed, throughout its two steps
        assert rec.task == f"Read the product page of {rec.values['name']}"
        assert rec.start_url == f"{shop}/product.html?id={rec.values['id']}"
        assert rec.result is not None and rec.result.answer.startswith(f"{rec.values['name']} · Northwind")
        assert rec.result.answer.endswith(f"product.html?id={rec.values['id']}")
    assert len({r.run_id for r in result.results if r is not None}) == 4
    progress = [e for e in events if isinstance(e, MapProgress)]
    assert max(p.running for p in progress) == 2  # two rows ran at once, never more
    assert progress[0].eta_s is None and progress[-1].done == progress[-1].total == 4
    assert [(p.row, p.ended) for p in progress if p.row == 3] == [(3, False), (3, True)]
    assert all(p.record is result.rows[p.row] for p in progress)  # the live record of that row
    assert progress[-1].rows_per_minute > 0 and progress[-1].eta_s == 0
    finished = [e.row for e in events if isinstance(e, RowEvent) and isinstance(e.event, RunFinished)]
    assert sorted(finished) == [0, 1, 2, 3]
    assert events[-1].type == "map_finished" and events[-1].result is result
    assert not agent.is_running and shared_browser.is_started


async def test_one_stateless_model_serves_every_row_in_a_browser_of_the_maps_own(shop: str) -> None:
    """The demo model answers from each request, so the agent's one model object serves all rows; without a
    browser the map starts one for itself (and closes it)."""
    agent = PageAgent(model="demo", start_url=f"{shop}/", max_steps=12, screenshots=False)
    values = ["wireless headphones", "flight to Oslo", "wireless headphones"]  # plain values: column "value"
    result = await agent.map(SHOP_TASK.replace("{what}", "{value}"), values)
    assert result.columns == ["value"]
    assert [r.status for r in result.rows] == ["completed", "failed", "completed"]
    assert result.failed == [1]
    assert "TrailSound Wireless Headphones Lite at $54.99" in result.rows[0].result.answer  # type: ignore[union-attr]
    assert "only knows the demo tasks" in result.rows[1].result.answer  # type: ignore[union-attr]
    assert {r.model for r in result.results if r is not None} == {"demo:offline"}


async def test_a_model_that_keeps_state_needs_a_factory(shared_browser: BrowserSession) -> None:
    agent = PageAgent(browser=shared_browser, model=ScriptedModel([agent_output("done", {"text": "x"})]))
    with pytest.raises(ValueError, match=r"plays one script in order.*model_factory="):
        await agent.map("do {value}", [1, 2])
    assert not agent.is_running


async def test_failed_rows_do_not_stop_the_others_and_retry_runs_only_them(
    shared_browser: BrowserSession, shop: str
) -> None:
    attempts: dict[str, int] = {}

    def factory(row: dict[str, Any]) -> ScriptedModel:
        name = row["name"]
        attempts[name] = attempts.get(name, 0) + 1
        if attempts[name] > 1 or name == "ok":
            return ScriptedModel([report_page])
        if name == "raises":
            raise RuntimeError("no model for this row")
        if name == "model-error":
            return ScriptedModel([error("the provider broke")])
        return ScriptedModel([], on_exhausted=agent_output("wait", {"seconds": 1}))  # never done: max_steps

    agent = PageAgent(browser=shared_browser, model=ScriptedModel(), max_steps=2, start_url=f"{shop}/")
    rows = [{"name": n} for n in ("ok", "raises", "model-error", "endless", "ok")]
    first = await agent.map("row {name}", rows, concurrency=2, model_factory=factory)
    assert [r.status for r in first.rows] == ["completed", "error", "error", "max_steps", "completed"]
    assert first.failed == [1, 2, 3]
    assert first.results[1] is None and "no model for this row" in (first.rows[1].error or "")
    assert "the provider broke" in (first.rows[2].result.error or "")  # type: ignore[union-attr]
    records = first.records()
    assert records[1]["error"] == "RuntimeError: no model for this row" and records[1]["steps"] == 0
    assert records[3]["status"] == "max_steps" and records[3]["steps"] == 2 and not records[3]["success"]

    retried = await first.retry()
    assert attempts == {"ok": 2, "raises": 2, "model-error": 2, "endless": 2}  # the two "ok" rows ran once each
    assert retried.failed == [] and [r.status for r in retried.rows] == ["completed"] * 5
    assert retried.rows[0] is first.rows[0] and retried.rows[4] is first.rows[4]  # kept, not run again
    assert retried.results[0] is first.results[0]
    assert first.failed == [1, 2, 3]  # the first result is unchanged
    again = await agent.map_retry(retried)
    assert again.failed == [] and again.rows == retried.rows  # nothing failed, so nothing ran


async def test_a_placeholder_naming_no_column_is_said_before_anything_runs(shared_browser: BrowserSession) -> None:
    made: list[Any] = []
    agent = PageAgent(browser=shared_browser, model=ScriptedModel())
    rows = [{"company": "Acme", "city": "Oslo"}]
    with pytest.raises(MapInputError, match=r"\{country\}, which is not a column; the columns are: company, city"):
        await agent.map("Find {company} in {country}", rows, model_factory=made.append)
    with pytest.raises(MapInputError, match=r"start URL template names \{site\}"):
        await agent.map("Find {company}", rows, start_url="https://{site}/", model_factory=made.append)
    with pytest.raises(MapInputError, match="Row 1 has no city"):
        await agent.map("Find {company} in {city}", [*rows, {"company": "B"}], model_factory=made.append)
    with pytest.raises(MapInputError, match="names no column"):
        await agent.map("Find {}", rows, model_factory=made.append)
    events = []
    with pytest.raises(MapInputError, match="is not a column"):
        async for event in agent.map_stream("Find {nope}", rows, model_factory=made.append):
            events.append(event)
    assert made == [] and events == [] and not agent.is_running

    def answer(row: dict[str, Any]) -> ScriptedModel:
        made.append(row)
        return ScriptedModel([agent_output("done", {"text": "ok", "success": True})])

    literal = await agent.map("Reply with {{ and }} for {company}", rows, model_factory=answer)
    assert literal.rows[0].task == "Reply with { and } for Acme" and literal.rows[0].success


async def test_a_stop_keeps_finished_rows_and_cancelling_raises_with_them(
    shared_browser: BrowserSession, shop: str
) -> None:
    def factory(row: dict[str, Any]) -> ScriptedModel:
        if row["value"] == 0:
            return ScriptedModel([report_page])
        return ScriptedModel([], on_exhausted=agent_output("wait", {"seconds": 10}))  # until stopped

    agent = PageAgent(browser=shared_browser, model=ScriptedModel(), start_url=f"{shop}/", max_steps=50)

    def stop_when_row_2_waits(event: Any) -> None:
        if isinstance(event, RowEvent) and event.row == 2 and isinstance(event.event, ActionStarted):
            agent.stop("enough rows")

    result = await agent.map(
        "row {value}", range(5), concurrency=2, model_factory=factory, on_event=stop_when_row_2_waits
    )
    assert [r.status for r in result.rows] == ["completed", "stopped", "stopped", "not_started", "not_started"]
    assert result.rows[0].success and result.results[0] is not None
    assert result.results[1] is not None and result.results[1].error == "enough rows"
    assert result.results[3] is None and result.failed == [1, 2, 3, 4]
    assert not agent.is_running
    assert "5 rows: 1 succeeded, 0 failed, 2 stopped, 2 not started" in repr(result)  # they add up to the rows

    task: asyncio.Task[MapResult] | None = None

    def cancel_when_row_2_waits(event: Any) -> None:
        if isinstance(event, RowEvent) and event.row == 2 and isinstance(event.event, ActionStarted):
            assert task is not None
            task.cancel()

    task = asyncio.create_task(
        agent.map("row {value}", range(5), concurrency=2, model_factory=factory, on_event=cancel_when_row_2_waits)
    )
    with pytest.raises(MapInterrupted) as info:
        await task
    kept = info.value.result
    assert [r.status for r in kept.rows] == ["completed", "stopped", "stopped", "not_started", "not_started"]
    assert kept.rows[0].result is not None and kept.rows[0].result.success
    assert not agent.is_running
    # while a map runs, the agent is busy for anything else
    both_waiting = asyncio.Event()
    waiting: set[int] = set()

    def note_waits(event: Any) -> None:
        if isinstance(event, RowEvent) and isinstance(event.event, ActionStarted):
            waiting.add(event.row)
            if waiting == {0, 1}:
                both_waiting.set()

    busy = asyncio.create_task(agent.map("row {value}", [1, 2], model_factory=factory, on_event=note_waits))
    await both_waiting.wait()
    assert agent.is_running
    with pytest.raises(Exception, match="already active"):
        await agent.run("something else")
    agent.stop()
    assert [r.status for r in (await busy).rows] == ["stopped", "stopped"]


class Product(BaseModel):
    name: str
    price: float


@dataclasses.dataclass
class Point:
    x: int
    y: int


async def test_a_dataframe_in_and_a_dataframe_out(shared_browser: BrowserSession, shop: str) -> None:
    import pandas as pd

    def typed_answer(row: dict[str, Any]) -> ScriptedModel:
        def done(ctx: Context) -> Any:
            title, _ = seen(ctx)
            data = {"name": title.split(" · ")[0], "price": row["price"]}
            return agent_output("done", {"text": f"found {data['name']}", "success": True, "data": data})

        return ScriptedModel([done])

    frame = pd.DataFrame({"id": ["p03", "p06"], "name": ["Trail", "Ridge"], "price": [54.99, 129.0]})
    agent = PageAgent(browser=shared_browser, model=ScriptedModel(), output=Product, screenshots=False)
    result = await agent.map(
        "Name and price of {name}",
        frame,
        concurrency=2,
        start_url=f"{shop}/product.html?id={{id}}",
        model_factory=typed_answer,
    )
    table = result.to_pandas()
    assert list(table.columns) == [
        *("id", "name", "price"),
        *("status", "success", "answer"),
        *("output_name", "output_price"),  # the answer's fields, renamed where an input column has the name
        *("steps", "model_calls", "tokens", "input_tokens", "cached_tokens", "output_tokens", "reasoning_tokens"),
        *("cost", "seconds", "run_id", "error"),
    ]
    assert list(table["output_name"]) == ["TrailSound Wireless Headphones Lite", "Ridgeline Rain Jacket"]
    assert list(table["output_price"]) == [54.99, 129.0] and list(table["success"]) == [True, True]
    assert list(table["answer"]) == ["found TrailSound Wireless Headphones Lite", "found Ridgeline Rain Jacket"]
    assert list(table["id"]) == ["p03", "p06"] and table["error"].isna().all()


def test_typed_answers_become_columns() -> None:
    assert output_fields(Product(name="a", price=1.5)) == {"name": "a", "price": 1.5}
    assert output_fields(Point(1, 2)) == {"x": 1, "y": 2}
    assert output_fields({"a": [1, 2]}) == {"a": [1, 2]}
    assert output_fields([Product(name="a", price=1)]) == {"output": [{"name": "a", "price": 1.0}]}
    assert output_fields(None) == {}
    result = MapResult("t", ["status"], [MapRow(0, {"status": "input"}, "t")])
    assert result.table_columns()[:3] == ["status", "agent_status", "success"]  # an input column is never hidden
    assert result.records()[0]["status"] == "input" and result.records()[0]["agent_status"] == "not_started"


def test_rows_as_plain_values_dicts_and_bad_rows() -> None:
    from notebook_agent.agent.batch.map_table import normalise_rows

    assert normalise_rows(["a", "b"]) == (["value"], [{"value": "a"}, {"value": "b"}])
    assert normalise_rows([{"a": 1}, {"b": 2}]) == (["a", "b"], [{"a": 1}, {"b": 2}])
    with pytest.raises(MapInputError, match="mixes dicts and plain values"):
        normalise_rows([{"a": 1}, 2])
    with pytest.raises(MapInputError, match="not str"):
        normalise_rows("abc")


async def test_what_an_executor_cannot_carry_is_said_before_anything_runs(shared_browser: BrowserSession) -> None:
    agent = PageAgent(browser=shared_browser, model="demo")
    with concurrent.futures.ProcessPoolExecutor(max_workers=1) as pool:  # no process starts before a submit
        with pytest.raises(ValueError, match="each worker builds its own model: pass model='provider:model'"):
            await agent.map("do {value}", [1], executor=pool)
        with pytest.raises(ValueError, match=r"cannot be pickled: model_factory \("):
            await agent.map("do {value}", [1], executor=pool, model_factory=lambda row: ScriptedModel())
    assert not agent.is_running


async def test_an_executor_of_threads_runs_rows_in_one_browser_per_process(shop: str) -> None:
    """The executor path without a cluster: rows go to a thread pool, all of them use this process's one worker
    browser (on a thread of its own), each in its own tab."""
    from notebook_agent.agent.batch.map_rows import close_worker_browser, worker_browser_launches

    agent = PageAgent(model="demo", start_url=f"{shop}/", max_steps=12)
    before = worker_browser_launches()
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            rows = [{"what": "wireless headphones"}] * 3
            result = await agent.map(SHOP_TASK, rows, executor=pool, model="demo")
    finally:
        closed = close_worker_browser()
    assert [r.status for r in result.rows] == ["completed"] * 3
    assert worker_browser_launches() - before == 1 and closed == 1
    assert all("$54.99" in r.answer for r in result.results if r is not None)


def map_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "notebook_agent", "map", *args],
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
        cwd=ROOT,
    )


def test_the_terminal_command_reads_and_writes_tables(shop: str, tmp_path: Path) -> None:
    rows = tmp_path / "rows.csv"
    rows.write_text("what,page\nwireless headphones,index.html\nflight to Oslo,search.html\n")
    out = tmp_path / "out.csv"
    done = map_cli(SHOP_TASK, "--rows", str(rows), "--out", str(out), "--model", "demo", "--url", f"{shop}/{{page}}")
    assert done.returncode == 1, done.stderr  # one row failed
    assert "model: demo:offline" in done.stdout
    assert re.search(r"✓ +\[\d/2\] row 0 +completed .*TrailSound Wireless Headphones Lite at \$54\.99", done.stdout)
    assert re.search(r"✗ +\[\d/2\] row 1 +failed .*only knows the demo tasks", done.stdout)
    assert "2 rows: 1 succeeded, 1 failed" in done.stdout and f"written: {out}" in done.stdout
    with out.open(newline="") as f:
        table = list(csv.DictReader(f))
    assert list(table[0]) == [
        *("what", "page", "status", "success", "answer"),
        *("steps", "model_calls", "tokens", "input_tokens", "cached_tokens", "output_tokens", "reasoning_tokens"),
        *("cost", "seconds", "run_id", "error"),
    ]
    assert [r["status"] for r in table] == ["completed", "failed"] and table[0]["success"] == "True"
    assert table[1]["what"] == "flight to Oslo" and int(table[0]["steps"]) > 1

    # JSON Lines in, parquet out, a typed answer (a JSON Schema) as columns
    jsonl = tmp_path / "rows.jsonl"
    jsonl.write_text("".join(json.dumps({"product": p}) + "\n" for p in ("Lumen 400 Headlamp", "Cascade Hiking Boots")))
    schema = tmp_path / "price.json"
    price = {"name": {"type": "string"}, "price": {"type": "number"}}
    schema.write_text(json.dumps({"title": "Price", "type": "object", "properties": price, "required": list(price)}))
    out2 = tmp_path / "out.parquet"
    args = ["--rows", str(jsonl), "--out", str(out2), "--model", "demo", "--url", f"{shop}/", "--output", str(schema)]
    ok = map_cli(PRICE_TASK, *args)
    assert ok.returncode == 0, ok.stderr
    import pandas as pd

    table = pd.read_parquet(out2)
    assert list(table["status"]) == ["completed", "completed"] and list(table["price"]) == [34.5, 159.0]
    assert list(table.columns[:6]) == ["product", "status", "success", "answer", "name", "price"]


def test_the_terminal_command_checks_before_it_starts(tmp_path: Path) -> None:
    rows = tmp_path / "rows.csv"
    rows.write_text("company\nAcme\n")
    bad = map_cli("Find {compnay}", "--rows", str(rows), "--out", str(tmp_path / "o.csv"), "--model", "demo")
    assert bad.returncode == 2 and "{compnay}, which is not a column; the columns are: company" in bad.stderr
    bad = map_cli("Find {company}", "--rows", str(rows), "--out", str(tmp_path / "o.xlsx"))
    assert bad.returncode == 2 and "one of .csv, .jsonl, .json, .parquet" in bad.stderr
    bad = map_cli("Find {company}", "--rows", str(rows), "--out", str(tmp_path / "o.csv"), "--approve", "ask-all")
    assert bad.returncode == 2 and "unattended" in bad.stderr
    assert not (tmp_path / "o.csv").exists()


async def test_each_row_has_its_own_approval_gate(shop: str) -> None:
    """The policy comes with each row's run: the row whose task deletes the account is refused, the other is not
    held up by it. In a browser of its own: on the session-wide shared browser, after the whole agent suite, this
    map once never ended (a hang still to be found); the guard below fails the test instead of the whole run."""
    async with BrowserSession(viewport=(1280, 800), action_timeout=2.0) as browser:
        agent = PageAgent(model="demo", browser=browser, approval="deny-risky", start_url=f"{shop}/", screenshots=False)
        shop_task = SHOP_TASK.format(what="wireless headphones")
        result = await asyncio.wait_for(agent.map("{value}", [DELETE_TASK, shop_task], concurrency=2), 180)
    delete, buy = result.rows
    assert delete.status == "failed" and buy.status == "completed"
    assert delete.result is not None and buy.result is not None
    refused = [s for s in delete.result.steps if s.approval]
    assert refused and refused[0].approval is not None
    assert refused[0].approval["by"] == "policy" and "Delete account" in refused[0].result
    assert not any(s.approval for s in buy.result.steps)

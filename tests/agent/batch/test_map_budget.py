"""A map's budget and its estimate: real Chromium, each row a run of a scripted model that reports what each call
used. A map with ``max_cost`` stops within one row of it and keeps every finished row (the counts still add up);
each row's own budget ends that row with status ``budget``; a budget smaller than one row is refused before any
row; a big map without a budget runs its first rows and asks whether to go on at their rate."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notebook_agent.agent import MapEstimated, PageAgent
from notebook_agent.agent.batch.map_budget import ESTIMATE_ROWS
from notebook_agent.agent.prompt.agent_output import agent_output
from notebook_agent.agent.safety.budget import BudgetError
from notebook_agent.browser import BrowserSession
from notebook_agent.core.messages import Usage
from notebook_agent.llm.scripted import ScriptedModel
from tests.agent.step.test_budget import PRICES, note


def row_model(row: dict[str, Any]) -> ScriptedModel:
    """Row ``row``: ``steps`` notes, then done; every call reports ``input``/``output`` tokens, at :data:`PRICES`."""
    notes = [agent_output("note", {"n": i}) for i in range(row["steps"])]
    done = agent_output("done", {"text": f"row {row['id']} noted", "success": True})
    usage = Usage(input=row["input"], output=row["output"])
    return ScriptedModel(notes, on_exhausted=done, usage=usage, prices=row.get("prices", PRICES))


def agent_on(browser: BrowserSession, **settings: Any) -> PageAgent[None]:
    model = ScriptedModel(prices=PRICES)  # the agent's own model prices a row's first call before any has run
    notes = {"note": note}
    return PageAgent(model=model, browser=browser, custom_tools=notes, screenshots=False, **settings)


def rows_of(n: int, steps: int = 2, tokens: tuple[int, int] = (20_000, 1_000)) -> list[dict[str, Any]]:
    return [{"id": i, "steps": steps, "input": tokens[0], "output": tokens[1]} for i in range(n)]


def assert_counts_add_up(result: Any) -> None:
    c = result.counts
    assert c.running == 0 and c.succeeded + c.failed + c.stopped + c.not_started == c.rows == len(result.rows)


async def test_a_map_with_max_cost_stops_within_one_row_and_keeps_the_finished_rows(
    shared_browser: BrowserSession,
) -> None:
    rows = rows_of(12)  # a row: 3 calls of 20,000 + 1,000 tokens at $2 / $8 per million: $0.144
    agent = agent_on(shared_browser)
    result = await agent.map("Row {id}", rows, concurrency=1, max_cost=0.5, model_factory=row_model)
    per_row = 3 * (20_000 * 2 + 1_000 * 8) / 1e6
    spent = result.ledger.cost
    assert spent is not None and spent <= 0.5 + per_row
    done = [r for r in result.rows if r.status == "completed"]
    assert len(done) == 3 and all(r.facts is not None and r.facts.answer.endswith("noted") for r in done)
    assert [r.status for r in result.rows[3:]] == ["not_started"] * 9
    assert result.note.startswith("Stopped starting rows: one more would cross the map's max_cost=$0.5 (")
    assert_counts_add_up(result)
    table = result.records()
    assert [t["cost"] for t in table[:3]] == [pytest.approx(per_row)] * 3 and table[3]["cost"] == 0.0
    assert table[0]["model_calls"] == 3 and table[0]["input_tokens"] == 60_000 and table[0]["output_tokens"] == 3_000
    assert result.summary().startswith("12 rows: 3 succeeded, 0 failed, 9 not started · 189,000 tokens · 9 calls · ")


async def test_each_rows_budget_ends_that_row_with_status_budget(shared_browser: BrowserSession) -> None:
    agent = agent_on(shared_browser, max_tokens=50_000)  # each row's: a row of 4 calls of 21,000 crosses it
    result = await agent.map("Row {id}", rows_of(3, steps=3), concurrency=3, model_factory=row_model)
    assert [r.status for r in result.rows] == ["budget"] * 3
    assert result.counts.stopped == 3 and result.failed == [0, 1, 2]  # retry() runs them again
    for row in result.rows:
        assert row.facts is not None and row.facts.ledger.tokens <= 50_000 + 21_000
        assert row.failure() == "Stopped at the budget: 63,000 tokens, $0.1440 spent, more than max_tokens=50,000."


async def test_a_budget_smaller_than_one_row_or_without_prices_is_refused_before_any_row(
    shared_browser: BrowserSession,
) -> None:
    agent = agent_on(shared_browser)
    with pytest.raises(BudgetError, match=r"^The map's budget max_tokens=100 is smaller than one row: a row's first "):
        await agent.map("Row {id}", rows_of(3), max_tokens=100, model_factory=row_model)
    with pytest.raises(BudgetError, match=r"^Each row's budget max_cost=\$1e-06 is smaller than one row: "):
        await agent_on(shared_browser, max_cost=0.000001).map("Row {id}", rows_of(3))
    unpriced = PageAgent(model=ScriptedModel(prices=None), browser=shared_browser)
    with pytest.raises(BudgetError, match=r"^The map's max_cost=2 cannot be kept: the prices of scripted:scripted"):
        await unpriced.map("Row {id}", rows_of(3), max_cost=2)
    with pytest.raises(BudgetError, match=r"^max_cost must be a number of dollars above 0, got -3\.$"):
        await agent.map("Row {id}", rows_of(3), max_cost=-3)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    steps=st.lists(st.integers(0, 3), min_size=1, max_size=10),
    tokens=st.tuples(st.integers(1_000, 30_000), st.integers(0, 2_000)),
    budget=st.integers(5_000, 300_000),
    concurrency=st.integers(1, 3),
)
async def test_a_map_spends_at_most_its_budget_and_a_step_per_row_under_way(
    shared_browser: BrowserSession, steps: list[int], tokens: tuple[int, int], budget: int, concurrency: int
) -> None:
    """Rows of any length, calls of any size, any budget and concurrency: what the map spent is within its budget
    and one call for each row that was under way, the rows it did not start are not_started, and the counts add
    up."""
    rows = [{"id": i, "steps": n, "input": tokens[0], "output": tokens[1]} for i, n in enumerate(steps)]
    try:
        result = await agent_on(shared_browser).map(
            "Row {id}", rows, concurrency=concurrency, max_tokens=budget, model_factory=row_model
        )
    except BudgetError as exc:  # smaller than one row's first call: said before anything ran
        assert "is smaller than one row" in str(exc)
        return
    call = sum(tokens)
    assert result.ledger.tokens <= budget + concurrency * call, (result.ledger.tokens, result.note)
    assert_counts_add_up(result)
    if result.counts.not_started:
        assert result.note.startswith(("Stopped starting rows", "The map's budget"))
    for row in result.rows:
        assert row.status in ("completed", "stopped", "not_started"), (row.status, row.failure())


async def test_a_big_map_without_a_budget_asks_after_its_first_rows(shared_browser: BrowserSession) -> None:
    rows = [{"id": i, "steps": i % 3, "input": 15_000, "output": 500} for i in range(25)]
    asked: list[MapEstimated] = []

    def answer(how: str) -> Any:
        def on_event(event: Any) -> None:
            if isinstance(event, MapEstimated):
                asked.append(event)
                event.question.stop() if how == "stop" else event.question.proceed()

        return on_event

    agent = agent_on(shared_browser)
    stopped = await agent.map(
        "Row {id}", rows, concurrency=2, ask_estimate=True, model_factory=row_model, on_event=answer("stop")
    )
    assert len(asked) == 1
    estimate = asked[0].question.estimate
    assert estimate.rows == 25 and estimate.sampled == ESTIMATE_ROWS == stopped.counts.succeeded
    assert stopped.counts.not_started == 20 and stopped.note.startswith(
        f"Stopped after the first {ESTIMATE_ROWS} rows: ≈ $"
    )
    assert estimate.text().startswith("≈ $") and "for 25 rows at the first 5 rows' rate (≈ " in estimate.text()
    sample = sum((r.ledger for r in stopped.rows[:ESTIMATE_ROWS]), type(stopped.ledger)())
    assert estimate.cost == pytest.approx((sample.cost or 0) / ESTIMATE_ROWS * 25)
    assert_counts_add_up(stopped)

    asked.clear()
    whole = await agent.map(
        "Row {id}", rows, concurrency=2, ask_estimate=True, model_factory=row_model, on_event=answer("go on")
    )
    assert len(asked) == 1 and whole.counts.succeeded == 25 and whole.note == "", [
        r.failure() for r in whole.rows if r.status != "completed"
    ]
    actual = whole.ledger.cost
    assert actual is not None and asked[0].question.estimate.cost == pytest.approx(actual, rel=0.35)

    asked.clear()
    free = [{**r, "prices": {}} for r in rows[:21]]  # the sample cost nothing: nothing to ask
    freely = await agent.map("Row {id}", free, ask_estimate=True, model_factory=row_model, on_event=answer("stop"))
    budgeted = await agent.map(
        "Row {id}", rows[:21], ask_estimate=True, max_cost=100, model_factory=row_model, on_event=answer("stop")
    )
    assert asked == [] and freely.counts.succeeded == budgeted.counts.succeeded == 21

"""What a finished map keeps (``keep_runs``): every row's table row always, the whole run of every row or only of
the rows worth looking into. The table must not depend on which: generated results check that for combinations
of status, replay tags and typed answers nobody listed, and a real map checks it end to end."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from notebook_agent.agent import PageAgent
from notebook_agent.agent.batch.map_table import RESULT_COLUMNS, MapResult, MapRow, output_fields
from notebook_agent.agent.prompt.agent_output import agent_output
from notebook_agent.agent.recipes.recipe_map import REPLAY_COLUMNS, RecipeMapResult
from notebook_agent.agent.runs.result import PageAgentResult, PageStep
from notebook_agent.browser import BrowserSession
from notebook_agent.core.messages import Usage
from notebook_agent.demo import serve_demo
from notebook_agent.llm.scripted import ScriptedModel, error

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)


@st.composite
def results(draw: Any) -> PageAgentResult:
    tags = draw(st.lists(st.sampled_from(["", "replayed", "healed", "failed"]), max_size=5))
    status = draw(st.sampled_from(["completed", "failed", "max_steps", "stopped", "error"]))
    return PageAgentResult(
        task="t",
        status=status,
        success=draw(st.booleans()) and status == "completed",
        text=draw(st.text(max_size=20)),
        steps=[PageStep(index=i + 1, replay=tag) for i, tag in enumerate(tags)],
        usage=Usage(input=draw(st.integers(0, 10_000)), output=draw(st.integers(0, 500))),
        model="scripted",
        duration_s=0.1,
        prompt_version="v",
        error=draw(st.none() | st.text(min_size=1, max_size=20)),
        run_id=draw(st.text(min_size=1, max_size=8)),
        output=draw(JSON),
    )


@settings(max_examples=150, deadline=None)
@given(st.lists(st.none() | results(), min_size=1, max_size=6), st.sampled_from([MapResult, RecipeMapResult]))
def test_the_table_is_the_same_whichever_runs_are_kept(runs: list[PageAgentResult | None], kind: type) -> None:
    def mapped(keep: str | None) -> MapResult:
        rows = []
        for i, run in enumerate(runs):
            row = MapRow(i, {"x": i}, f"task {i}", result=run, status=run.status if run else "error", error="boom")
            if keep is not None:
                row.settle(keep)  # type: ignore[arg-type]
            rows.append(row)
        result: MapResult = kind(template="{x}", columns=["x"], rows=rows)
        return result

    for keep in ("all", "exceptions"):
        settled = mapped(keep)
        for record, row, run in zip(settled.records(), settled.rows, runs, strict=True):
            # the table row, read from the run itself (not through what the map noted of it)
            assert record["success"] == (run is not None and run.success) == row.success
            assert record["answer"] == (run.answer if run else "") and record["steps"] == (len(run.steps) if run else 0)
            assert record["tokens"] == (run.usage.tokens if run else 0) and record["run_id"] == (
                run.run_id if run else ""
            )
            assert record["error"] == ((run.error if run else None) or "boom")
            for name, value in output_fields(run.output if run else None).items():
                column = f"output_{name}" if name in ("x", *RESULT_COLUMNS, *REPLAY_COLUMNS) else name
                assert record[column] == value, (column, record)
            if kind is RecipeMapResult:
                counts = run.replay_counts if run else {}
                assert [record[k] for k in ("replayed", "healed", "failed")] == [
                    counts.get(k, 0) for k in ("replayed", "healed", "failed")
                ]
            counts = run.replay_counts if run is not None else {}
            unusual = run is not None and (not run.success or bool(counts.get("healed") or counts.get("failed")))
            assert (row.result is run) == (keep == "all" or unusual or run is None), (keep, row)
        assert settled.records() == mapped(None).records() and settled.summary() == mapped(None).summary()


@pytest.fixture(scope="module")
def shop() -> Iterator[str]:
    with serve_demo() as server:
        yield server.url


def answers(row: dict[str, Any]) -> ScriptedModel:
    if row["name"] == "broken":
        return ScriptedModel([error("the provider broke")])
    return ScriptedModel([agent_output("done", {"text": f"read {row['name']}", "success": True})])


async def test_a_map_keeping_the_exceptions_gives_the_same_table_and_the_failed_runs(
    shared_browser: BrowserSession, shop: str
) -> None:
    agent = PageAgent(browser=shared_browser, model=ScriptedModel(), start_url=f"{shop}/", screenshots=False)
    rows = [{"name": n} for n in ("a", "broken", "b")]
    with pytest.raises(ValueError, match="keep_runs must be 'all' or 'exceptions'"):
        await agent.map("row {name}", rows, model_factory=answers, keep_runs="failed")
    every = await agent.map("row {name}", rows, model_factory=answers, concurrency=2)  # agent.map keeps all
    lean = await agent.map("row {name}", rows, model_factory=answers, concurrency=2, keep_runs="exceptions")
    assert all(r is not None for r in every.results)
    assert [r is not None for r in lean.results] == [False, True, False]
    assert "the provider broke" in (lean.rows[1].result.error or "")  # type: ignore[union-attr]

    def same(table: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{k: v for k, v in r.items() if k not in ("run_id", "seconds")} for r in table]

    assert same(lean.records()) == same(every.records())
    assert [r["answer"] for r in lean.records()] == ["read a", "", "read b"]
    assert all(r["run_id"] for r in lean.records())
    retried = await lean.retry()  # the options travel with the result: the retried row is kept as it fails again
    assert retried.failed == [1] and retried.rows[0] is lean.rows[0] and retried.results[1] is not None

"""The view of a long map stays light and says where the map stands: rows/min, time left, and for a recipe the
rows healed and what they cost; the terminal's lines say the time left the way a person reads it."""

from __future__ import annotations

from notebook_agent.agent import MapCounts, MapProgress
from notebook_agent.agent.batch.map_table import MapRow
from notebook_agent.agent.runs.result import PageAgentResult, PageStep
from notebook_agent.cli.map import row_line
from notebook_agent.core.messages import Usage
from notebook_agent.notebook.map_view import TABLE_ROWS, MapView


def _result(healed: bool) -> PageAgentResult:
    steps = [PageStep(index=1, action="go_to_url", result="ok", replay="replayed")]
    steps.append(PageStep(index=2, action="done", result="ok", replay="healed" if healed else "replayed"))
    return PageAgentResult(
        task="t", status="completed", success=True, text="ok", steps=steps, model="m", duration_s=0.1,
        prompt_version="", usage=Usage(input=300 if healed else 0, output=20 if healed else 0),
    )  # fmt: skip


def _progress(row: MapRow, done: int, total: int, ended: bool, elapsed: float) -> MapProgress:
    rate = done / elapsed * 60 if done else 0.0
    eta = (total - done) / (done / elapsed) if done else None
    running = 0 if ended else 1
    counts = MapCounts(total, succeeded=done, running=running, not_started=total - done - running)
    return MapProgress(counts, elapsed, rate, eta, row.index, row, ended)


async def test_a_long_recipe_map_keeps_its_view_light_and_says_time_left_and_healing() -> None:
    total = 3 * TABLE_ROWS
    view = MapView("Find {product}", total, "replay")
    for i in range(total):
        row = MapRow(index=i, values={"product": f"p{i}"}, task=f"Find p{i}", status="running")
        view.handle(_progress(row, i, total, False, 1.0 + i))
        row.status, row.result = "completed", _result(healed=i % 100 == 7)
        view.handle(_progress(row, i + 1, total, True, 1.0 + i))
        assert len(view.picker.options) <= TABLE_ROWS + 1 and len(view.labels) <= TABLE_ROWS
    assert view.healed == 6 and view.tokens == 6 * 320
    assert view.line.value.startswith(f"{total} rows: {total} succeeded, 0 failed · 6 healed (1,920 tokens) · ")
    assert "rows/min" in view.line.value
    # the table lists the latest rows, the picker offers them
    assert f">{total}</td>" in view.table.value and ">1</td>" not in view.table.value
    assert view.picker.options[-1][1] == total - 1
    row = MapRow(index=0, values={}, task="t", status="running")
    hours = MapProgress(
        MapCounts(10_000, succeeded=10, running=8, not_started=9_982), 60.0, 10.0, 36_000.0, 0, row, False
    )
    assert "~10.0 h left" in view.progress_line(hours)
    row.result, row.status = _result(healed=False), "completed"
    assert "10.0/min, 10.0 h left" in row_line(hours)

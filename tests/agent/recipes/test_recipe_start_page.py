"""A recipe's rows start where the map says, by the rule of ``agent.map``: ``recipe.map(..., start_url=...)``
(a page, or a ``{column}`` template), else the agent's ``start_url``, else the recorded start with the row's
values. A start page on another site than the recording's moves every recorded address to that site, so a
recipe made on one copy of a site replays on another from a page of it (the terminal's ``map --recipe --url``,
tests/cli/test_map_url.py)."""

from __future__ import annotations

from notebook_agent.agent import PageAgent, Recipe
from notebook_agent.demo import PRICE_TASK, serve_demo

ROWS = [{"product": "Cascade Hiking Boots"}, {"product": "Pebble Wireless Earbuds"}]
ANSWERS = ["Cascade Hiking Boots costs $159.00.", "Pebble Wireless Earbuds costs $29.99."]


async def test_the_start_page_is_the_maps_and_moves_the_recording_to_its_site() -> None:
    with serve_demo() as recorded_on, serve_demo() as elsewhere:
        agent = PageAgent(model="demo", start_url=recorded_on.page("index.html"), screenshots=False)
        recipe = Recipe.from_run(await agent.run(PRICE_TASK.format(product="Lumen 400 Headlamp")), template=PRICE_TASK)
        page = elsewhere.page("index.html")
        for mapped in (
            await recipe.map(ROWS, PageAgent(model="demo", screenshots=False), start_url=page, keep_runs="all"),
            await recipe.map(ROWS, PageAgent(model="demo", start_url=page, screenshots=False), keep_runs="all"),
            await recipe.map(
                [{**row, "page": page} for row in ROWS],
                PageAgent(model="demo", start_url="{page}", screenshots=False),
                keep_runs="all",
            ),
        ):
            assert [r.start_url for r in mapped.rows] == [page, page]
            assert [r.result.answer for r in mapped.rows] == ANSWERS
            assert mapped.healed_rows == []
            for row in mapped.rows:  # every address the row went to is on the site it started on
                assert {s.url.split("/")[2] for s in row.result.steps} == {page.split("/")[2]}
        # without a start page, the recorded one
        mapped = await recipe.map(ROWS, PageAgent(model="demo", screenshots=False))
        assert [r.start_url for r in mapped.rows] == [recorded_on.page("index.html")] * 2
        assert [r.facts.answer for r in mapped.rows] == ANSWERS

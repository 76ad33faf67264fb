"""A recipe reads its answer only on the page the recording read it on, with this row's values: a row left on
another page (an action that failed, a navigation stopped half-way, a site that moved the search) heals or fails
there, and never reads another product's price off a page that happens to show one."""

from __future__ import annotations

from pydantic import BaseModel

from notebook_agent.agent import PageAgent, Recipe
from notebook_agent.browser import BrowserSession
from notebook_agent.demo import PRICE_TASK, serve_demo
from notebook_agent.llm.scripted import ScriptedModel


class Price(BaseModel):
    name: str
    price: float


async def test_the_answer_is_read_only_on_the_recorded_page_for_this_row() -> None:
    with serve_demo() as shop:
        async with BrowserSession() as browser:
            agent = PageAgent(model="demo", browser=browser, start_url=shop.url, output=Price, screenshots=False)
            recorded = await agent.run(PRICE_TASK.format(product="Ridgeline Rain Jacket"))
            recipe = Recipe.from_run(recorded, template=PRICE_TASK)
            assert recipe.steps[0].args["url"].endswith("/search.html?q={product:q}")
            rows = [{"product": "Lumen 400 Headlamp"}]
            healer = PageAgent(model=ScriptedModel([]), browser=browser, screenshots=False)
            good = await recipe.map(rows, healer, heal=False)
            assert good.rows[0].success
            elsewhere = recipe.model_copy(deep=True)  # the row's search goes to the shop's front page instead
            elsewhere.steps[0].args["url"] = shop.url
            moved = await elsewhere.map(rows, healer, heal=False)
            assert moved.rows[0].result is not None and not moved.rows[0].success
            assert "where the recorded answer was read on" in moved.rows[0].result.text
            other = recipe.model_copy(deep=True)  # the search page, but for another product than the row's
            other.steps[0].args["url"] = recipe.steps[0].args["url"].replace("{product:q}", "Cascade+Hiking+Boots")
            wrong = await other.map(rows, healer, heal=False)
            assert wrong.rows[0].result is not None and not wrong.rows[0].success, wrong.records()
            assert "where the recorded answer was read on" in wrong.rows[0].result.text

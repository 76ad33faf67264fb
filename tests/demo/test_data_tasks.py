"""The offline demo model's data tasks: a typed price lookup per product, and the price list read exactly."""

from __future__ import annotations

from pydantic import BaseModel

from notebook_agent.agent import PageAgent
from notebook_agent.browser.session.browser_session import BrowserSession
from notebook_agent.demo import PRICE_TASK, demo_url
from notebook_agent.demo.data_tasks import columns_for, fill
from tests.demo.test_e2e import browser, describe, session  # noqa: F401


class Price(BaseModel):
    name: str
    price: float


async def test_a_price_comes_back_typed(browser: BrowserSession) -> None:  # noqa: F811
    agent = PageAgent(model="demo", browser=browser, start_url=demo_url(), output=Price)
    result = await agent.run(PRICE_TASK.format(product="Lumen 400 Headlamp"))
    assert result.output == Price(name="Lumen 400 Headlamp", price=34.5), describe(result)
    assert [s.action for s in result.steps] == ["go_to_url", "done"]


async def test_a_price_without_a_type_is_text(browser: BrowserSession) -> None:  # noqa: F811
    result = await PageAgent(model="demo", browser=browser, start_url=demo_url()).run(
        PRICE_TASK.format(product="pebble wireless earbuds")
    )
    assert result.success and result.output is None and result.text == "Pebble Wireless Earbuds costs $29.99."


async def test_a_product_the_shop_does_not_sell_fails_honestly(browser: BrowserSession) -> None:  # noqa: F811
    agent = PageAgent(model="demo", browser=browser, start_url=demo_url(), output=Price)
    result = await agent.run(PRICE_TASK.format(product="Flux Capacitor"))
    assert result.status == "failed" and not result.success and result.output is None
    assert "no product called Flux Capacitor" in result.text


def test_fields_are_filled_by_their_names() -> None:
    record = {"Product": "Lamp", "Price": 3.5}
    obj = {"type": "object", "properties": {"product": {"type": "string"}, "cost": {"type": "number"}}}
    assert fill(obj, record) == {"product": "Lamp", "cost": 3.5}
    assert fill({"type": "array", "items": obj}, record) == [{"product": "Lamp", "cost": 3.5}]
    assert columns_for({"type": "array", "items": obj}) == {"product": "Product", "cost": "Price"}
    wrapped = {"type": "object", "properties": {"rows": {"type": "array", "items": obj}}}
    assert columns_for(wrapped) == {"product": "Product", "cost": "Price"}


def test_a_price_lookup_of_headphones_is_not_the_shopping_task() -> None:
    from notebook_agent.demo import task_kind_for

    assert task_kind_for(PRICE_TASK.format(product="AeroBeat Wireless Headphones")) == "price"
    assert task_kind_for("Find the cheapest wireless headphones and add them to the cart") == "shop"

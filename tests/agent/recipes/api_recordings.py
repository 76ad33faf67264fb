"""Recorded runs on the API fixture sites (api_sites.py), made with a scripted model: what the learned-call tests and
the benchmark make recipes of. Each ``record_*`` returns the run; ``RECORDINGS`` names each site's recording with
its parameters and its answer type.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel

from notebook_agent import BrowserSession, PageAgent
from notebook_agent.agent.runs.result import PageAgentResult
from notebook_agent.llm.scripted import ScriptedModel
from tests.agent.recipes.api_sites import PRODUCTS, Sites
from tests.agent.test_page_agent import index_of, step

LAMP = "Lumen 400 Headlamp"
NAMES = ["Grace", "Linus", "Edsger", "Barbara", "Alan", "Ada"]


class Price(BaseModel):
    name: str
    price: float


class Item(BaseModel):
    price: float
    sku: str


class Signup(BaseModel):
    message: str


class First(BaseModel):
    name: str


async def _run(
    browser: BrowserSession, url: str, script: list[Any], task: str, output: Any, **kw: Any
) -> PageAgentResult:
    model = ScriptedModel(script)
    agent = PageAgent(model=model, browser=browser, start_url=url, output=output, screenshots=False, **kw)
    run = await agent.run(task)
    assert run.success, run.text
    return run


def _search(product: str) -> list[Any]:
    _, price, _ = PRODUCTS[product]
    return [
        step("input_text", lambda c: {"index": index_of(c, r"<input"), "text": product}),
        step("click_element_by_index", lambda c: {"index": index_of(c, r"<button id=go")}),
        step("done", {"text": "Found it", "success": True, "data": {"name": product, "price": price}}),
    ]


async def record_catalogue(browser: BrowserSession, site: Sites, product: str = LAMP) -> PageAgentResult:
    return await _run(browser, site.url("/catalogue/"), _search(product), f"Find the price of {product}", Price)


async def record_busy(browser: BrowserSession, site: Sites, product: str = LAMP) -> PageAgentResult:
    return await _run(browser, site.url("/busy/"), _search(product), f"Find the price of {product}", Price)


async def record_guarded(browser: BrowserSession, site: Sites, product: str = LAMP) -> PageAgentResult:
    return await _run(browser, site.url("/guarded/"), _search(product), f"Find the price of {product}", Price)


async def record_ssr(browser: BrowserSession, site: Sites, product: str = LAMP) -> PageAgentResult:
    typed, _, done = _search(product)
    submit = step("click_element_by_index", lambda c: {"index": index_of(c, r"<button")})
    return await _run(browser, site.url("/ssr/"), [typed, submit, done], f"Find the price of {product}", Price)


async def record_product(browser: BrowserSession, site: Sites, product: str = LAMP) -> PageAgentResult:
    _, price, sku = PRODUCTS[product]
    script = [
        step("input_text", lambda c: {"index": index_of(c, r"<input"), "text": product}),
        step("click_element_by_index", lambda c: {"index": index_of(c, r"<button id=go")}),
        step("done", {"text": "Found it", "success": True, "data": {"price": price, "sku": sku}}),
    ]
    return await _run(browser, site.url("/product/"), script, f"Find the price and SKU of {product}", Item)


async def record_order(
    browser: BrowserSession, site: Sites, name: str = "Ada", plan: str = "Pro", **kw: Any
) -> PageAgentResult:
    script = [
        step("input_text", lambda c: {"index": index_of(c, r"<input"), "text": name}),
        step("select_dropdown_option", lambda c: {"index": index_of(c, r"<select"), "text": plan}),
        step("click_element_by_index", lambda c: {"index": index_of(c, r"<button id=go")}),
        step("done", {"text": "Signed up", "success": True, "data": {"message": f"Thanks {name}, plan {plan}"}}),
    ]
    return await _run(browser, site.url("/order/"), script, f"Sign up {name} on the {plan} plan", Signup, **kw)


async def record_cursor(browser: BrowserSession, site: Sites, category: str = "lamps") -> PageAgentResult:
    from tests.agent.recipes.api_sites import CATEGORIES, PAGE

    first = CATEGORIES[category][PAGE]
    script = [
        step("select_dropdown_option", lambda c: {"index": index_of(c, r"<select"), "text": category}),
        step("click_element_by_index", lambda c: {"index": index_of(c, r"<button id=go")}),
        step("click_element_by_index", lambda c: {"index": index_of(c, r">More")}),
        step("done", {"text": "Found it", "success": True, "data": {"name": first}}),
    ]
    return await _run(browser, site.url("/cursor/"), script, f"The first {category} item on page 2", First)


Recording = Callable[[BrowserSession, Sites], Awaitable[PageAgentResult]]
#: Each site's recording, its parameters, the answer type, and rows for a map (name → (record, params, type, rows)).
RECORDINGS: dict[str, tuple[Recording, dict[str, str], type[BaseModel], list[dict[str, str]]]] = {
    "catalogue": (record_catalogue, {"product": "Lumen 400 Headlamp"}, Price, [{"product": p} for p in PRODUCTS]),
    "product": (record_product, {"product": "Lumen 400 Headlamp"}, Item, [{"product": p} for p in PRODUCTS]),
    "order": (
        record_order,
        {"name": "Ada", "plan": "Pro"},
        Signup,
        [{"name": n, "plan": p} for n, p in zip(NAMES, ["Free", "Team", "Pro"] * 2, strict=True)],
    ),
    "guarded": (record_guarded, {"product": "Lumen 400 Headlamp"}, Price, [{"product": p} for p in PRODUCTS]),
    "cursor": (record_cursor, {"category": "lamps"}, First, [{"category": c} for c in ("tools", "packs", "lamps")] * 2),
    "ssr": (record_ssr, {"product": "Lumen 400 Headlamp"}, Price, [{"product": p} for p in list(PRODUCTS)[:4]]),
}

"""Rows by request meeting bad input: a 500 mid-map, an API that answers HTML, answers of another shape, row values
that break the template (quotes, slashes, 10 KB, lone surrogates) and an Interrupt mid-map. Each row ends with a clear
status and which way it went; finished rows are kept; nothing is sent anywhere but the recorded origin."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from notebook_agent import BrowserSession
from notebook_agent.agent import MapProgress, Recipe
from notebook_agent.agent.batch.map_runner import MapInterrupted
from tests.agent.recipes import api_sites
from tests.agent.recipes.api_recordings import Price, record_catalogue
from tests.agent.recipes.api_sites import PRODUCTS, STATE, Sites
from tests.agent.recipes.test_recipe_calls import replayer

ROWS = [{"product": p} for p in PRODUCTS]


@pytest.fixture(scope="module")
def site() -> Iterator[Sites]:
    with api_sites.api_sites() as served:
        yield served


@pytest.fixture(autouse=True)
def fresh_state() -> Iterator[None]:
    api_sites.reset()
    yield
    api_sites.reset()


@pytest.fixture
async def recipe(browser: BrowserSession, site: Sites) -> Recipe:
    made = Recipe.from_run(await record_catalogue(browser, site), params={"product": "Lumen 400 Headlamp"})
    api_sites.reset()
    return made


def prices(result: Any) -> list[float | None]:
    return [r.facts.output.price if r.facts is not None and r.success else None for r in result.rows]


RIGHT = [price for _, price, _ in PRODUCTS.values()]


async def test_a_500_and_an_html_answer_mid_map_fall_back_for_that_row_only(
    browser: BrowserSession, recipe: Recipe
) -> None:
    STATE.fail_once = {"Basecamp 28L Daypack"}
    STATE.html_once = {"Pebble Wireless Earbuds"}
    result = await recipe.map(ROWS, replayer(browser, Price), heal=False)
    records = {r["product"]: r for r in result.records()}
    assert prices(result) == RIGHT  # the fallen-back rows answered by their pages
    assert records["Basecamp 28L Daypack"]["way"] == "fallback"
    assert (
        records["Basecamp 28L Daypack"]["way_note"] == "the site answered 500 to GET api/search?q=Basecamp+28L+Daypack"
    )
    assert records["Pebble Wireless Earbuds"]["way_note"] == "the site answered text/html, not JSON"
    assert [r["way"] for r in result.records()].count("request") == len(ROWS) - 5
    assert result.way.startswith("by request")


async def test_answers_of_another_shape_fall_back_and_the_map_returns_to_the_page(
    browser: BrowserSession, recipe: Recipe
) -> None:
    """Direct answers lose the price (the page's own still have it): no row takes a wrong value."""

    def no_price(data: Any) -> Any:
        for item in data["results"]:
            item.pop("price")
        return data

    STATE.mutate = no_price
    rows = ROWS * 2
    result = await recipe.map(rows, replayer(browser, Price), mode="request", patience=4, heal=False)
    ways = [r["way"] for r in result.records()]
    assert ways == ["fallback"] * 4 + ["page"] * (len(rows) - 4)
    assert result.records()[0]["way_note"] == "the answer lacks results[name={product}].price"
    assert result.way.startswith("by the page: 4 rows in a row could not go by request, the last because the answer")
    assert prices(result) == RIGHT * 2


async def test_row_values_that_break_a_template_end_with_a_clear_status_and_go_nowhere_else(
    browser: BrowserSession, recipe: Recipe, site: Sites
) -> None:
    bad = ["He said \"hi\" & 'bye'", "a/b/../../etc/passwd?x=1#y", "x" * 10_240, "lone \ud800 surrogate", "{product}"]
    rows = [{"product": v} for v in bad] + ROWS[:3]
    result = await recipe.map(rows, replayer(browser, Price), mode="request", patience=100, heal=False)
    records = result.records()
    for record in records[: len(bad)]:
        assert record["way"] == "fallback" and record["way_note"], record
        assert record["status"] in ("failed", "error") and record["error"], record
    assert records[3]["way_note"].startswith("the row's values do not fit the request")  # a lone surrogate
    assert prices(result)[len(bad) :] == RIGHT[:3]
    assert [r["way"] for r in records[len(bad) :]] == ["request"] * 3
    assert result.counts.rows == len(rows) == result.counts.succeeded + result.counts.failed
    # every request reached the recorded site's own paths: the API, or the page (the rows that fell back)
    assert all(p.startswith(("/api/search?", "/catalogue/", "/favicon.ico")) for p in STATE.paths), STATE.paths


async def test_an_interrupt_mid_map_keeps_the_finished_rows_with_clear_statuses(
    browser: BrowserSession, recipe: Recipe
) -> None:
    rows = ROWS * 40
    ended = 0
    task: asyncio.Task[Any] | None = None

    def seen(event: Any) -> None:
        nonlocal ended
        if isinstance(event, MapProgress) and event.ended:
            ended += 1
            if ended == 30 and task is not None:
                task.cancel()  # what Kernel → Interrupt does to a map in a cell

    task = asyncio.ensure_future(
        recipe.map(rows, replayer(browser, Price), mode="request", heal=False, on_event=seen, concurrency=2)
    )
    with pytest.raises(MapInterrupted) as stopped:
        await task
    result = stopped.value.result
    statuses = [r.status for r in result.rows]
    assert "running" not in statuses
    done = [r for r in result.rows if r.status == "completed"]
    assert len(done) >= 30 and all(r.success for r in done)
    # two rows run at once, so the finished ones need not be the first ones: each is right for its own row
    got, right = prices(result), RIGHT * 40
    assert all(got[i] == right[i] for i, r in enumerate(result.rows) if r.status == "completed")
    assert {s for s in statuses if s != "completed"} <= {"not_started", "stopped"}
    assert result.counts.rows == len(rows) == sum(1 for _ in result.records())
    assert {r["way"] for r in result.records()[: len(done)]} == {"request"}


async def test_a_request_that_disagrees_with_the_page_on_a_checked_row_sends_the_map_to_the_page(
    browser: BrowserSession, recipe: Recipe
) -> None:
    """Direct answers say another price (the same shape): the first checked row catches it, no row takes it."""

    def dearer(data: Any) -> Any:
        for item in data["results"]:
            item["price"] += 1
        return data

    STATE.mutate = dearer
    result = await recipe.map(ROWS, replayer(browser, Price), heal=False, concurrency=1)
    records = result.records()
    assert (
        records[0]["way"] == "both"
        and records[0]["way_note"] == "differed: output/price was 130.0 by request and 129.0 by the page"
    )
    assert {r["way"] for r in records[1:]} == {"page"}
    assert result.way == "by the page: row 0 differed: output/price was 130.0 by request and 129.0 by the page"
    assert prices(result) == RIGHT


async def test_a_checked_row_whose_page_fails_checks_nothing_and_another_row_checks_instead(
    browser: BrowserSession, recipe: Recipe
) -> None:
    """The page recipe fails on the first row (its page's own request errs): that row is no check, the next waiting
    row takes the free check, and the map goes on (it never waits for a verdict no row will give)."""
    STATE.page_fail = {"Ridgeline Rain Jacket"}
    done = await asyncio.wait_for(recipe.map(ROWS, replayer(browser, Price), heal=False, concurrency=4), 300)
    records = done.records()
    assert (
        records[0]["way"] == "page" and records[0]["way_note"] == "the page recipe failed, so this row checked nothing"
    )
    ways = [r["way"] for r in records[1:]]
    assert ways.count("both") == 3 and ways.count("request") == len(ROWS) - 4  # whichever row came first checked
    assert prices(done)[1:] == RIGHT[1:] and not records[0]["success"]

"""A recipe that learned the call behind its page: on each fixture site (api_sites.py), which way the map chose and
why, every answer by request identical to the page recipe's, and the call shown and exported."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from notebook_agent import BrowserSession, PageAgent
from notebook_agent.agent import Recipe
from notebook_agent.agent.batch.map_table import MapInputError
from notebook_agent.llm.scripted import ScriptedModel
from tests.agent.recipes import api_sites
from tests.agent.recipes.api_recordings import RECORDINGS, Price, record_busy, record_catalogue, record_order
from tests.agent.recipes.api_sites import STATE, Sites


@pytest.fixture(scope="module")
def site() -> Iterator[Sites]:
    with api_sites.api_sites() as served:
        yield served


@pytest.fixture(autouse=True)
def fresh_state() -> Iterator[None]:
    api_sites.reset()
    yield
    api_sites.reset()


def replayer(browser: BrowserSession, output: Any, **kw: Any) -> PageAgent[Any]:
    return PageAgent(model=ScriptedModel([]), browser=browser, output=output, screenshots=False, approval="auto", **kw)


def answers(result: Any) -> list[Any]:
    return [(r.facts.output if r.facts is not None and r.success else None) for r in result.rows]


@pytest.mark.parametrize("name", ["catalogue", "product", "order", "guarded", "cursor"])
async def test_each_api_site_goes_by_request_once_three_rows_agree_and_every_answer_is_the_page_recipes(
    browser: BrowserSession, site: Sites, name: str
) -> None:
    record, params, output, rows = RECORDINGS[name]
    recipe = Recipe.from_run(await record(browser, site), params=params)
    assert recipe.call is not None, recipe.call_note
    agent = replayer(browser, output)
    by_page = await recipe.map(rows, agent, mode="page", heal=False)
    assert by_page.way == "by the page: mode='page'"
    assert len(by_page.succeeded) == len(rows), by_page.records()
    auto = await recipe.map(rows, agent, heal=False)
    ways = [r["way"] for r in auto.records()]
    assert ways == ["both"] * 3 + ["request"] * (len(rows) - 3), auto.records()
    assert auto.way == "by request: its learned call: 3 rows agreed both ways"
    assert answers(auto) == answers(by_page)  # every answer identical, field by field
    assert {r["way_note"] for r in auto.records()[:3]} == {"agreed"}
    request = await recipe.map(rows, agent, mode="request", heal=False)
    assert [r["way"] for r in request.records()] == ["request"] * len(rows)
    assert answers(request) == answers(by_page)


async def test_what_each_call_learned(browser: BrowserSession, site: Sites) -> None:
    """The request template, the fields' paths, the chain of an id looked up first or of a cursor, the token."""
    learned = {}
    for name in ("catalogue", "product", "order", "guarded", "cursor"):
        record, params, _, _ = RECORDINGS[name]
        call = Recipe.from_run(await record(browser, site), params=params).call
        assert call is not None and call.origin == site.base
        learned[name] = call
    search = learned["catalogue"].steps[0]
    assert (search.method, search.path, search.query) == ("GET", "/api/search", [("q", "{product}")])
    assert learned["catalogue"].fields["_2"].path == ["results", {"where": "name", "is": "{product}"}, "price"]
    lookup, details = learned["product"].steps
    assert lookup.query == [("name", "{product}")] and lookup.binds == {"_v1": ["id"]}
    assert details.path == "/api/items/{_v1:u}"
    order = learned["order"].steps[0]
    assert order.method == "POST" and order.body == {"json": {"name": "{name}", "plan": "{plan}"}}
    token = learned["guarded"].token
    assert token is not None and (token.name, token.where, token.page) == ("x-csrf-token", "header", "/guarded/")
    first, more = learned["cursor"].steps
    assert first.binds == {"_v1": ["next"]} and more.query == [("category", "{category}"), ("cursor", "{_v1}")]
    assert all("cookie" not in s.headers and "referer" not in s.headers for c in learned.values() for s in c.steps)


async def test_a_per_visit_token_is_read_again_for_every_row(browser: BrowserSession, site: Sites) -> None:
    record, params, output, rows = RECORDINGS["guarded"]
    recipe = Recipe.from_run(await record(browser, site), params=params)
    api_sites.reset()
    result = await recipe.map(rows, replayer(browser, output), mode="request", heal=False)
    assert len(result.succeeded) == len(rows)
    assert STATE.hits["/api/guarded"] == len(rows) and STATE.hits["/guarded/"] == len(rows)  # one visit per row


async def test_a_site_rendered_on_the_server_stays_on_the_page_and_says_why(
    browser: BrowserSession, site: Sites
) -> None:
    record, params, output, rows = RECORDINGS["ssr"]
    recipe = Recipe.from_run(await record(browser, site), params=params)
    assert recipe.call is None
    assert recipe.call_note.startswith("the recording kept no fetch or XHR call of the page")
    result = await recipe.map(rows, replayer(browser, output), heal=False)
    assert len(result.succeeded) == len(rows)
    assert {r["way"] for r in result.records()} == {"page"}
    assert result.way == f"by the page: the recipe learned no call: {recipe.call_note}"
    with pytest.raises(MapInputError, match="This recipe cannot go by request: the recipe learned no call"):
        await recipe.map(rows, replayer(browser, output), mode="request")
    assert "No learned call: the recording kept no fetch" in recipe._repr_html_()


async def test_an_api_that_starts_answering_429_backs_off_then_falls_back_then_the_map_returns_to_the_page(
    browser: BrowserSession, site: Sites
) -> None:
    recipe = Recipe.from_run(await record_busy(browser, site), params={"product": "Lumen 400 Headlamp"})
    STATE.busy_limit = 6  # the recording's visitor asked once; three checks and two rows more, then 429
    rows = [{"product": p} for p in api_sites.PRODUCTS] * 2
    result = await recipe.map(rows, replayer(browser, Price), heal=False, patience=3, concurrency=1)
    records = result.records()
    assert [r["way"] for r in records[:5]] == ["both", "both", "both", "request", "request"]
    assert [r["way"] for r in records[5:8]] == ["fallback"] * 3
    said = "the site answered 429 to GET api/busy?q=Insulated+Steel+Bottle+750+ml after 4 tries"
    assert records[5]["way_note"] == said
    assert {r["way"] for r in records[8:]} == {"page"}
    assert result.way == (
        "by the page: 3 rows in a row could not go by request, the last because the site answered 429 to GET "
        "api/busy?q=Summit+2-Person+Tent after 4 tries"
    )
    assert len(result.succeeded) == len(rows)  # every row answered, the late ones by their pages


async def test_an_effect_the_recording_approved_goes_by_request_only_when_the_recipe_approved_it(
    browser: BrowserSession, site: Sites, tmp_path: Any
) -> None:
    from notebook_agent.agent.safety.approval import ApprovalAnswer

    async def yes(request: Any) -> ApprovalAnswer:
        return ApprovalAnswer(True, "fine", by="user")

    ask_clicks = lambda request: "ask" if request.action == "click_element_by_index" else "allow"  # noqa: E731
    run = await record_order(browser, site, approval=ask_clicks, approver=yes)
    rows = RECORDINGS["order"][3]
    plain = Recipe.from_run(run, params={"name": "Ada", "plan": "Pro"})
    assert plain.call is not None and plain.call.effect.startswith("POST /api/signup (step 3:")
    result = await plain.map(rows, replayer(browser, RECORDINGS["order"][2]), heal=False)
    assert {r["way"] for r in result.records()} == {"page"}
    assert "approve the recipe's effects when you make it (Recipe.from_run(..., approve_effects=True))" in result.way
    with pytest.raises(MapInputError, match="its call has an effect the recording approved"):
        await plain.map(rows, replayer(browser, RECORDINGS["order"][2]), mode="request")
    approved = Recipe.from_run(run, params={"name": "Ada", "plan": "Pro"}, approve_effects=True)
    loaded = Recipe.load(approved.save(tmp_path / "order.json"))
    assert loaded.call is not None and loaded.call.approved
    assert '"approved": true' in (tmp_path / "order.json").read_text()
    result = await loaded.map(rows, replayer(browser, RECORDINGS["order"][2]), mode="request", heal=False)
    assert [r["way"] for r in result.records()] == ["request"] * len(rows) and len(result.succeeded) == len(rows)


async def test_the_call_is_shown_and_exported_as_an_httpx_script_that_gives_the_same_answer(
    browser: BrowserSession, site: Sites, tmp_path: Any
) -> None:
    for name in ("catalogue", "product", "guarded", "cursor", "order"):
        record, params, output, _ = RECORDINGS[name]
        recipe = Recipe.from_run(await record(browser, site), params=params)
        html = recipe._repr_html_()
        assert "Learned call" in html and "sample row" in html and "JSON path" in html
        script = tmp_path / f"{name}.py"
        script.write_text(recipe.to_python())
        out = await asyncio.to_thread(
            subprocess.run, [sys.executable, str(script)], capture_output=True, text=True, timeout=60
        )
        assert out.returncode == 0, out.stderr
        said = json.loads(out.stdout)
        row = await recipe.map([params], replayer(browser, output), mode="request", heal=False)
        facts = row.rows[0].facts
        assert facts is not None and said == facts.output.model_dump(), name


async def test_a_recipe_of_a_catalogue_shows_its_request_with_slots_not_values(
    browser: BrowserSession, site: Sites
) -> None:
    recipe = Recipe.from_run(await record_catalogue(browser, site), params={"product": "Lumen 400 Headlamp"})
    assert recipe.call is not None
    assert recipe.call.describe() == f"GET {site.base}/api/search?q={{product}}"
    assert repr(recipe).endswith("learned call)")

"""A recipe: a run shown once, done again for every row with the row's values, zero model calls, healing only
where a page differs; the gate and secrets per row; the recipe file; the terminal's and the notebook's ways in."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import quote_plus

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from notebook_agent.agent import PageAgent, Recipe, RecipeError, RecipeMapResult
from notebook_agent.agent.recipes.recipe_pilot import bind
from notebook_agent.agent.recipes.slots import fill, templated
from notebook_agent.agent.runs.result import PageAgentResult, PageStep
from notebook_agent.browser import BrowserSession
from notebook_agent.core.messages import Usage
from notebook_agent.demo import PRICE_TASK, serve_demo
from notebook_agent.llm.scripted import ScriptedModel
from tests.agent.test_page_agent import index_of, step
from tests.browser.conftest import LOGIN, LOGINS, Servers


class Price(BaseModel):
    name: str
    price: float


class Signup(BaseModel):
    message: str


def _run(steps: list[PageStep], task: str = "t", start: str = "http://shop.test/") -> PageAgentResult:
    return PageAgentResult(
        task=task, status="completed", success=True, text="", steps=steps, usage=Usage(), model="m",
        duration_s=0, prompt_version="", settings={"start_url": start},
    )  # fmt: skip


def test_slots_are_found_where_the_run_typed_chose_and_navigated() -> None:
    run = _run(
        [
            PageStep(
                index=1, action="go_to_url", args={"url": "http://shop.test/s?q=Rain+Jacket&size=Large"}, result="ok"
            ),
            PageStep(
                index=2,
                action="input_text",
                args={"index": 4, "text": "Rain Jacket"},
                result="ok",
                target={"role": "textbox", "name": "Search"},
            ),
            PageStep(index=3, action="select_dropdown_option", args={"index": 6, "text": "Large"}, result="ok"),
            PageStep(
                index=4,
                action="click_element_by_index",
                args={"index": 7},
                result="ok",
                target={"role": "link", "name": "Rain Jacket", "href": "/p/Rain%20Jacket"},
            ),
        ],
        task="Buy Rain Jacket in Large",
    )
    recipe = Recipe.from_run(run, params={"item": "Rain Jacket", "size": "Large"})
    used = {s.name: s.used for s in recipe.slots}
    assert used["item"] == ["step 1: URL", "step 2: typed text", "step 4: the element acted on"]
    assert used["size"] == ["step 1: URL", "step 3: chosen option"]
    assert recipe.steps[0].args["url"] == "http://shop.test/s?q={item:q}&size={size:q}"
    assert recipe.steps[3].target == {"role": "link", "name": "{item}", "href": "/p/{item:u}"}
    assert recipe.task == "Buy {item} in {size}"
    bound = bind(recipe, {"item": "Trail Boots & Co", "size": "XL"})
    assert bound.steps[0].args["url"] == "http://shop.test/s?q=Trail+Boots+%26+Co&size=XL"
    assert bound.steps[1].args["text"] == "Trail Boots & Co" and bound.steps[2].args["text"] == "XL"
    assert bound.steps[3].target == {"role": "link", "name": "Trail Boots & Co", "href": "/p/Trail%20Boots%20%26%20Co"}
    # a value the run never used is not a slot, and says so
    with pytest.raises(RecipeError, match="never typed, chose or went to 'Medium'"):
        Recipe.from_run(run, params={"size": "Medium"})
    # a value is found whole: 'L' is not inside 'Large'
    assert templated("Large L", {"s": "L"}) == ("Large {s}", ["s"])
    assert Recipe.from_run(run, template="Buy {item} in {size}").slots[1].recorded == "Large"


@settings(max_examples=200, deadline=None)
@given(
    recorded=st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=12),
    new=st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=12),
    prefix=st.sampled_from(["", "a=", "q ", "{", "}}", "x/"]),
)
def test_a_template_gives_back_the_recorded_text_and_takes_any_new_value(recorded: str, new: str, prefix: str) -> None:
    """Whatever the value and what surrounds it (braces included): filling the template with the recorded value
    gives the recorded string, and with a new value that value, encoded the same way, where the old one was."""
    if not recorded.strip():
        return
    for written, encode in ((recorded, str), (quote_plus(recorded), quote_plus)):
        text = f"{prefix}{written} |{written}"
        template, found = templated(text, {"v": recorded}, ("q", "") if encode is quote_plus else ("",))
        assert fill(template, {"v": recorded}) == text
        if found:
            assert encode(new) in fill(template, {"v": new}) or not new


def test_a_recipe_file_round_trips_and_a_bad_one_says_why(tmp_path: Path) -> None:
    run = _run([PageStep(index=1, action="go_to_url", args={"url": "http://shop.test/s?q=Boots"}, result="ok")])
    recipe = Recipe.from_run(run, params={"item": "Boots"})
    path = recipe.save(tmp_path / "r.json")
    assert Recipe.load(path) == recipe
    bad = tmp_path / "bad.json"
    for text, said in (
        ("{not json", "is not JSON"),
        ('{"format": "other"}', "is not a recipe"),
        ('{"format": "notebook_agent.recipe", "version": 9}', "version 9"),
        ('{"format": "notebook_agent.recipe", "version": 1, "task": 3, "slots": [], "steps": []}', "at task"),
    ):
        bad.write_text(text)
        with pytest.raises(RecipeError, match=said):
            Recipe.load(bad)
    data = json.loads(path.read_text())
    data["steps"][0]["args"]["url"] = "http://shop.test/s?q={itme}"  # a template naming no slot
    bad.write_text(json.dumps(data))
    with pytest.raises(RecipeError, match="needs a value for 'itme'"):
        Recipe.load(bad)


def signup_script() -> list[Any]:
    return [
        step("input_text", lambda c: {"index": index_of(c, r"name=name"), "text": "Ada"}),
        step("select_dropdown_option", lambda c: {"index": index_of(c, r"<select name=plan"), "text": "Pro"}),
        step("click_element_by_index", lambda c: {"index": index_of(c, r"Create account")}),
        step("done", {"text": "Signed up", "success": True, "data": {"message": "Thanks Ada, plan Pro, terms no"}}),
    ]


async def test_a_recipe_maps_a_form_for_every_row_with_no_model_call(
    browser: BrowserSession, servers: Servers, tmp_path: Path
) -> None:
    agent = PageAgent(
        model=ScriptedModel(signup_script(), usage=Usage(input=500, output=50)),
        browser=browser,
        start_url=servers.url("agent_form.html"),
        output=Signup,
    )
    recorded = await agent.run("Sign up as Ada on the Pro plan")
    assert recorded.success and recorded.usage.tokens > 0
    recipe = Recipe.from_run(recorded, params={"name": "Ada", "plan": "Pro"})
    assert [s.used[0] for s in recipe.slots] == ["step 1: typed text", "step 2: chosen option"]
    healer = ScriptedModel([])
    rows = [{"name": "Grace", "plan": "Team"}, {"name": "Linus", "plan": "Free"}, {"name": "Ada", "plan": "Pro"}]
    mapped = await Recipe.load(recipe.save(tmp_path / "r.json")).map(
        rows, PageAgent(model=healer, browser=browser, output=Signup, screenshots=False), concurrency=2
    )
    assert isinstance(mapped, RecipeMapResult) and healer.requests == []
    table = mapped.records()
    assert [r["message"] for r in table] == [
        "Thanks Grace, plan Team, terms no",
        "Thanks Linus, plan Free, terms no",
        "Thanks Ada, plan Pro, terms no",
    ]
    assert all(r["replayed"] == 4 and r["healed"] == 0 and r["tokens"] == 0 for r in table)


async def test_a_row_whose_page_differs_heals_and_without_healing_fails(tmp_path: Path) -> None:
    with serve_demo() as shop:
        async with BrowserSession() as browser:
            agent = PageAgent(model="demo", browser=browser, start_url=shop.url, output=Price, screenshots=False)
            recorded = await agent.run(PRICE_TASK.format(product="Ridgeline Rain Jacket"))
            recipe = Recipe.from_run(recorded, template=PRICE_TASK)
            rows = [
                {"product": "Cascade Hiking Boots"},
                {"product": "Glacier Parka"},
                {"product": "Lumen 400 Headlamp"},
            ]

            def healer(_row: dict[str, Any]) -> ScriptedModel:  # the model reads what the page did not show
                answer = {"text": "Not sold here.", "success": False, "data": {"name": _row["product"], "price": 0}}
                return ScriptedModel([step("done", answer)], usage=Usage(input=300, output=20))

            healed = await recipe.map(rows, agent, model_factory=healer, concurrency=2)
            table = healed.records()
            assert [r["price"] for r in table] == [159.0, 0, 34.5]
            assert [(r["replayed"], r["healed"]) for r in table] == [(2, 0), (1, 1), (2, 0)]
            assert [r["tokens"] > 0 for r in table] == [False, True, False]
            assert healed.healed_rows == [1]
            # A recipe map keeps the runs worth looking into (keep_runs="exceptions"): the healed row's, not those
            # that replayed as recorded, whose table rows say all they did.
            assert [r.result is not None for r in healed.rows] == [False, True, False]
            assert [r.facts is not None and r.facts.run_id for r in healed.rows] == [r["run_id"] for r in table]
            # What a step sent a model is kept with it; a replayed step sent none, so it keeps no tool schema (a
            # map of 10,000 rows kept one per step), while the healed one keeps what it sent.
            kept_run = healed.rows[1].result
            assert kept_run is not None
            kept = [(s.replay, bool(s.request.tools)) for s in kept_run.steps if s.request]
            assert kept == [("replayed", False), ("healed", True)], kept
            failed = await recipe.map(rows, agent, heal=False, concurrency=2, keep_runs="all")
            # keep_runs="all" keeps every run; one that succeeded by replay alone keeps no step's reads (its steps
            # are the recipe's, filled), the failed one keeps all of its own.
            for row in failed.rows:
                assert row.result is not None
                reads = [s.request is not None and s.output is not None for s in row.result.steps]
                assert reads == ([False, False] if row.success else [True, True]), (row.index, reads)
            bad = failed.rows[1]
            assert [r.success for r in failed.rows] == [True, False, True] and bad.result is not None
            assert bad.result.replay_counts == {"replayed": 1, "failed": 1} and bad.result.usage.tokens == 0
            assert "step 2 (the answer): the page has no line like" in bad.result.text


async def test_the_gate_and_secrets_apply_to_every_row(browser: BrowserSession, servers: Servers) -> None:
    LOGIN.update(username="ada", password="pa55-word-9")
    LOGINS.clear()
    script = [
        step("input_text", lambda c: {"index": index_of(c, r"name=username"), "text": "ada"}),
        step("input_text", lambda c: {"index": index_of(c, r"type=password"), "text": "<secret>pw</secret>"}),
        step("click_element_by_index", lambda c: {"index": index_of(c, r"Sign in")}),
        step("done", {"text": "in", "success": True}),
    ]
    secrets = {servers.main: {"pw": "pa55-word-9"}}
    recorded = await PageAgent(
        model=ScriptedModel(script), browser=browser, start_url=servers.url("login.html"), secrets=secrets
    ).run("Sign in as ada")
    recipe = Recipe.from_run(recorded, params={"user": "ada"})
    assert "pa55" not in recipe.model_dump_json()
    LOGINS.clear()
    rows = [{"user": "grace"}, {"user": "linus"}]
    with_secret = PageAgent(model=ScriptedModel([]), browser=browser, secrets=secrets, screenshots=False)
    mapped = await recipe.map(rows, with_secret, concurrency=1)
    assert [(f["username"], f["password"]) for f in LOGINS] == [("grace", "pa55-word-9"), ("linus", "pa55-word-9")]
    assert all("pa55" not in json.dumps(r) for r in mapped.records())
    # without the secret, every row fails at the step that types it, saying which secret it lacks
    LOGINS.clear()
    without = await recipe.map(rows, PageAgent(model=ScriptedModel([]), browser=browser), heal=False)
    assert LOGINS == [] and all("it types the secret 'pw'" in (r.result.text if r.result else "") for r in without.rows)
    # a risky click is asked of the gate in every row: denied for each under deny-risky (the recipe's own start
    # URL, like a run file's, is judged too: the site is allowed here)
    danger = [
        step("click_element_by_index", lambda c: {"index": index_of(c, r"Delete account")}),
        step("done", {"text": "deleted", "success": True}),
    ]
    deleting = await PageAgent(
        model=ScriptedModel(danger), browser=browser, start_url=servers.url("agent_danger.html") + "?user=ada"
    ).run("Delete ada's account")
    gated = await Recipe.from_run(deleting, params={"user": "ada"}).map(
        rows,
        PageAgent(model=ScriptedModel([]), browser=browser, approval="deny-risky", allowed_domains=[servers.main]),
        heal=False,
        keep_runs="all",
    )
    for row in gated.rows:
        assert row.result is not None
        click = row.result.steps[0]
        assert row.result.steps[0].url.endswith(f"?user={row.values['user']}")
        assert click.replay == "replayed" and click.approval is not None and click.approval["decision"] == "denied"

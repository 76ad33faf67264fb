"""A learned call's safety and its bad input: a recipe file is input (another origin, a path off the origin, a
credential or a secret in a template is refused with a sentence; an old file still loads), the door judges a direct
request before it leaves, and a response of another shape is a fallback, never a wrong value (a property test)."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from notebook_agent import BrowserSession
from notebook_agent.agent import Recipe, RecipeError
from notebook_agent.agent.recipes.calls.rows import read_answer
from notebook_agent.agent.recipes.calls.template import CallMiss
from notebook_agent.agent.runs.result import PageAgentResult, PageStep, StepRequest
from notebook_agent.agent.runs.run_file import load_run, save_run
from notebook_agent.browser.door.direct import DirectRefused, DirectRequest, refusal, send_direct
from notebook_agent.core.messages import Usage
from tests.agent.recipes import api_sites
from tests.agent.recipes.api_recordings import record_catalogue
from tests.agent.recipes.api_sites import STATE, Sites

LAMP = {"product": "Lumen 400 Headlamp"}


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
    made = Recipe.from_run(await record_catalogue(browser, site), params=LAMP)
    assert made.call is not None
    return made


async def test_a_recipe_file_that_names_another_origin_or_carries_a_credential_is_refused(
    recipe: Recipe, tmp_path: Path
) -> None:
    path = recipe.save(tmp_path / "r.json")
    good = json.loads(path.read_text())
    assert good["version"] == 2 and good["call"]["steps"][0]["path"] == "/api/search"
    assert Recipe.load(path) == recipe

    def edited(change: Any) -> Path:
        data = copy.deepcopy(good)
        change(data)
        out = tmp_path / "edited.json"
        out.write_text(json.dumps(data))
        return out

    cases = [
        (lambda d: d["call"].update(origin="http://evil.example:80"), "goes to http://evil.example:80, which is not"),
        (lambda d: d["call"].update(origin=d["call"]["origin"].replace("127.0.0.1", "localhost")), "is not where its"),
        (lambda d: d["call"].update(origin="file:///etc"), "has no valid origin"),
        (lambda d: d["call"]["steps"][0].update(path="//evil.example/x"), "a path on the recorded origin"),
        (lambda d: d["call"]["steps"][0].update(path="http://evil.example/x"), "a path on the recorded origin"),
        (lambda d: d["call"]["steps"][0]["headers"].update(Authorization="Bearer x"), "never keeps a cookie or"),
        (lambda d: d["call"]["steps"][0]["headers"].update(cookie="sid=1"), "never keeps a cookie or credential"),
        (lambda d: d["call"]["steps"][0]["query"].append(["pw", "<secret>pw</secret>"]), "holds a secret"),
        (lambda d: d["call"]["steps"][0]["query"].append(["x", "{nobody}"]), "does not fit the recipe's slots"),
        (lambda d: d["call"]["steps"][0].update(method="CONNECT"), "has the method 'CONNECT'"),
        (lambda d: d["call"].update(origin=3), "at call.origin"),
        (lambda d: d["call"].update(fields={}), "does not give every value its answer reads"),
        (lambda d: d["call"].update(steps=[]), "has no request"),
        (lambda d: d.update(version=1), "says it is of version 1, which has no learned call, yet holds one"),
    ]
    for change, said in cases:
        with pytest.raises(RecipeError, match=said.replace("(", r"\(").replace(")", r"\)")):
            Recipe.load(edited(change))
    old = copy.deepcopy(good)
    for key in ("call", "call_note"):
        old.pop(key)
    old["version"] = 1
    (tmp_path / "old.json").write_text(json.dumps(old))
    loaded = Recipe.load(tmp_path / "old.json")
    assert loaded.call is None and loaded.version == 2 and loaded.steps == recipe.steps


async def test_the_door_judges_a_direct_request_before_it_leaves(browser: BrowserSession, site: Sites) -> None:
    origin = site.base
    here = DirectRequest("GET", f"{origin}/api/search?q=x")
    assert refusal(here, origin) is None
    port = int(origin.rsplit(":", 1)[1])
    for url in (
        f"http://localhost:{port}/api/search",
        f"https://127.0.0.1:{port}/api/search",
        f"http://127.0.0.1:{port + 1}/api/search",
        "file:///etc/passwd",
        "http://user@evil.example/",
    ):
        assert "goes only to the origin the recording called" in str(refusal(DirectRequest("GET", url), origin))
    assert refusal(here, origin, rule=lambda url: "127.0.0.1 is on the blocked domains.") == (
        "127.0.0.1 is on the blocked domains."
    )
    secrets = lambda url: [("pw", "hunter2-secret")]  # noqa: E731
    carried = DirectRequest("POST", f"{origin}/api/search", {"x-note": "aHVudGVyMi1zZWNyZXQ="}, b"")
    assert "carried the secret 'pw'" in str(refusal(carried, origin, secrets=secrets))
    before = dict(STATE.hits)
    with pytest.raises(DirectRefused, match="The recipe's request was not sent: it would go to"):
        await browser.call(send_direct, browser.context, DirectRequest("GET", "http://localhost:1/x"), origin)
    with pytest.raises(DirectRefused, match="carried the secret"):
        await browser.call(send_direct, browser.context, carried, origin, secrets=secrets)
    assert STATE.hits == before  # nothing was sent
    answer = await browser.call(
        send_direct, browser.context, DirectRequest("GET", f"{origin}/api/search?q=Lumen"), origin
    )
    assert answer.status == 200 and json.loads(answer.body)["results"][0]["name"] == "Lumen 400 Headlamp"


# -- responses of another shape: a fallback, never a wrong value ---------------------------------------------------
RECORDED: dict[str, Any] = {"query": "Lumen", "results": [{"name": "Lumen 400 Headlamp", "price": 34.5, "stock": 3}]}
OTHER_TYPES: st.SearchStrategy[Any] = st.sampled_from(["34.50", None, True, [], {}, "", 0, 34.5])


@st.composite
def mutations(draw: st.DrawFn) -> tuple[str, Any]:
    """A change of shape somewhere on the way to the answer's fields (or beside it)."""
    data: Any = copy.deepcopy(RECORDED)
    item: dict[str, Any] = data["results"][0]
    kind = draw(st.sampled_from(["drop", "nest", "retype", "empty", "wrap_list", "rename", "extra", "more_items"]))
    where = draw(st.sampled_from(["price", "name", "results", "top"]))
    if kind == "drop":
        if where == "results" or where == "top":
            data.pop("results")
        else:
            item.pop(where)
    elif kind == "nest":
        if where in ("price", "name"):
            item[where] = {"value": item[where]}
        elif where == "results":
            data["results"] = {"items": data["results"]}
        else:
            data = {"data": data}
    elif kind == "retype":
        other = draw(OTHER_TYPES)
        if where in ("price", "name"):
            same_type = str if where == "name" else (int, float)
            if isinstance(other, same_type) and not isinstance(other, bool):
                other = None  # another type, never another value of the same type
            item[where] = other
        else:
            data["results"] = other
    elif kind == "empty":
        data["results"] = []
    elif kind == "wrap_list":
        data = [data]
    elif kind == "rename":
        item["Name" if where == "name" else "cost"] = item.pop("name" if where == "name" else "price")
    elif kind == "extra":
        data["note"] = draw(st.text(max_size=5))
        item["color"] = "red"
        return "same", data
    else:
        data["results"].insert(0, {"name": "Lumen 400 Headlamp Pro", "price": 99.0})
        return "same", data
    return "miss", data


def saved_run() -> PageAgentResult:
    """A run as a run file keeps it: the search typed, the page's call with its JSON answer, the answer read."""
    call = {
        "method": "GET", "url": "http://shop.test/api/search?q=Lumen%20400%20Headlamp",
        "headers": {"accept": "application/json", "x-csrf-token": "[not kept]"}, "body": "", "status": 200,
        "type": "application/json", "json": RECORDED, "page": "http://shop.test/catalogue/", "order": 1,
    }  # fmt: skip
    state = "<browser_state>\n[0]<input type=text />Search\nLumen 400 Headlamp: $34.50\n</browser_state>"
    steps = [
        PageStep(index=1, action="input_text", args={"index": 0, "text": "Lumen 400 Headlamp"}, result="ok",
                 url="http://shop.test/catalogue/"),
        PageStep(index=2, action="click_element_by_index", args={"index": 1}, result="ok",
                 url="http://shop.test/catalogue/", calls=[call]),
        PageStep(index=3, action="done", result="ok", url="http://shop.test/catalogue/",
                 args={"text": "Found it", "success": True, "data": {"name": "Lumen 400 Headlamp", "price": 34.5}},
                 request=StepRequest("", state, [], None)),
    ]  # fmt: skip
    return PageAgentResult(
        task="Find the price of Lumen 400 Headlamp", status="completed", success=True, text="Found it", steps=steps,
        usage=Usage(), model="m", duration_s=0, prompt_version="", settings={"start_url": "http://shop.test/catalogue/"},
    )  # fmt: skip


def test_a_saved_run_that_kept_its_network_log_makes_a_recipe_with_its_call(tmp_path: Path) -> None:
    path = save_run(saved_run(), tmp_path)
    loaded = load_run(path)
    assert loaded.steps[1].calls[0]["json"] == RECORDED
    recipe = Recipe.from_run(path, params=LAMP)
    assert recipe.call is not None and recipe.call.origin == "http://shop.test:80"
    token = recipe.call.token
    assert token is not None and (token.name, token.where, token.page) == ("x-csrf-token", "header", "/catalogue/")
    assert read_answer(recipe, RECORDED, LAMP) == ("Found it", {"name": "Lumen 400 Headlamp", "price": 34.5})


CATALOGUE = Recipe.from_run(saved_run(), params=LAMP)


@settings(max_examples=300, deadline=None)
@given(mutation=mutations())
def test_a_mutated_response_is_a_fallback_never_a_wrong_value(mutation: tuple[str, Any]) -> None:
    """Whatever changes shape on the way to the fields (a missing field, extra nesting, another type, an empty list,
    a renamed key), the row falls back (:class:`CallMiss`); what does not touch them reads the same answer."""
    expected, data = mutation
    right = read_answer(CATALOGUE, RECORDED, LAMP)
    try:
        got = read_answer(CATALOGUE, data, LAMP)
    except CallMiss:
        assert expected == "miss", data
        return
    assert expected == "same" and got == right, (data, got)


async def test_a_secret_the_page_sent_is_redacted_in_the_run_and_never_in_a_template(
    browser: BrowserSession, site: Sites, tmp_path: Path
) -> None:
    """The page's own call carried a secret the run typed: the run (and its file) keep the placeholder, and no
    call is learned from it, saying why."""
    from notebook_agent import PageAgent
    from notebook_agent.llm.scripted import ScriptedModel
    from tests.agent.test_page_agent import index_of, step

    script = [
        step("input_text", lambda c: {"index": index_of(c, r"<input"), "text": "<secret>code</secret>"}),
        step("click_element_by_index", lambda c: {"index": index_of(c, r"<button id=go")}),
        step("done", {"text": "No results", "success": True}),
    ]
    agent = PageAgent(
        model=ScriptedModel(script), browser=browser, start_url=site.url("/catalogue/"), screenshots=False,
        secrets={site.base: {"code": "Lumen-7741-secret"}}, runs_dir=str(tmp_path),
    )  # fmt: skip
    run = await agent.run("Search for the code")
    calls = [c for s in run.steps for c in s.calls]
    assert calls and "Lumen-7741" not in json.dumps(calls) and "<secret>code</secret>" in calls[0]["url"]
    assert all("Lumen-7741" not in p.read_text() for p in tmp_path.glob("*.jsonl"))
    assert any("/api/search?q=Lumen-7741-secret" in p for p in STATE.paths)  # the page did send it, to its site
    # a call that carried a secret (kept as its placeholder) is never a template
    carried = saved_run()
    carried.steps[1].calls[0]["url"] += "&key=<secret>code</secret>"
    recipe = Recipe.from_run(carried, params=LAMP)
    assert (
        recipe.call is None
        and recipe.call_note == "the call carries a secret or redacted value, which a recipe never keeps"
    )

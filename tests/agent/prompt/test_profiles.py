"""Prompt profiles: which one a model gets, what each offers, and that a run sends what its profile says."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

from notebook_agent.agent import PageAgent
from notebook_agent.agent.prompt.agent_output import MACRO_NAME, agent_output
from notebook_agent.agent.prompt.profiles import PROFILES, resolve_profile
from notebook_agent.browser import BrowserSession
from notebook_agent.core.abort import AbortSignal
from notebook_agent.core.tools import tool
from notebook_agent.llm.providers.openai_chat import OpenAIChatModel
from notebook_agent.llm.scripted import ScriptedModel
from notebook_agent.llm.tokens import count_tokens
from tests.browser.conftest import Servers


async def answer(question: str, signal: AbortSignal) -> str:
    """An ``on_ask_user`` that is never asked: it turns the ask_user action on."""
    return "yes"


def chat(model_id: str, base_url: str, provider: str = "openai") -> OpenAIChatModel:
    return OpenAIChatModel(model_id, base_url=base_url, api_key="not-needed", provider=provider)


@pytest.mark.parametrize(
    "model,expected",
    [
        (ScriptedModel([]), "default"),
        (chat("qwen2.5-coder-1.5b", "http://127.0.0.1:9/v1"), "small"),  # llama-server, vLLM, LM Studio here
        (chat("llama3.2", "http://127.0.0.1:11434/v1", provider="ollama"), "small"),
        (chat("gpt-4o-mini", "http://127.0.0.1:4000/v1"), "default"),  # a local proxy to OpenAI
        (chat("gpt-4o-mini", "https://api.openai.com/v1"), "default"),
    ],
)
def test_auto_picks_small_for_a_model_on_this_machine(model: Any, expected: str) -> None:
    assert resolve_profile("auto", model).name == expected
    assert PageAgent(model=model).profile.name == expected
    assert PageAgent(model=model, profile="default").profile.name == "default"


def test_an_unknown_profile_is_refused_with_the_names() -> None:
    with pytest.raises(ValueError, match="auto, default, small"):
        PageAgent(model=ScriptedModel([]), profile="tiny")


class Price(BaseModel):
    price: float


async def test_small_offers_fewer_shorter_actions_and_keeps_what_was_asked_for(browser: BrowserSession) -> None:
    class Sku(BaseModel):
        sku: str

    @tool(parameters=Sku)
    async def lookup(args: Sku, ctx: Any) -> str:
        """Look up a product by its SKU in the warehouse system."""
        return args.sku

    default = PageAgent(model=ScriptedModel([]), profile="default").tools(browser)
    small = PageAgent(model=ScriptedModel([]), profile="small").tools(browser)
    small_actions = PROFILES["small"].actions
    assert small_actions is not None
    assert list(small) == [n for n in default if n in small_actions]  # same order, fewer
    assert {"hover", "scroll_horizontally", "switch_tab"} <= set(default) - set(small)
    assert small["click_element_by_index"].description == "Click element [index]."
    assert default["click_element_by_index"].description != small["click_element_by_index"].description
    assert browser.tools["click_element_by_index"].description == default["click_element_by_index"].description
    asked = PageAgent(
        model=ScriptedModel([]),
        profile="small",
        enable_javascript=True,
        on_ask_user=answer,
        custom_tools={"lookup": lookup},
        output=Price,
    ).tools(browser)
    assert {"execute_javascript", "ask_user", "lookup", "extract_table"} <= set(asked)
    assert asked["lookup"].description.startswith("Look up a product")


async def test_a_run_sends_its_profiles_prompt_and_actions(browser: BrowserSession) -> None:
    sent = {}
    for name in ("default", "small"):
        model = ScriptedModel([agent_output("done", {"text": "ok", "success": True})])
        agent = PageAgent(model=model, browser=browser, profile=name)
        result = await agent.run("Say ok")
        assert result.status == "completed" and result.settings["profile"] == name
        context, _ = model.requests[0]
        (spec,) = [t for t in context.tools if t.name == MACRO_NAME]
        members = spec.parameters["properties"]["action"]["anyOf"]
        sent[name] = (context.system_prompt or "", [next(iter(m["properties"])) for m in members], spec)
    assert "Example." in sent["small"][0] and "Example." not in sent["default"][0]
    small_actions = PROFILES["small"].actions
    assert small_actions is not None
    assert sent["small"][1] == [n for n in sent["default"][1] if n in small_actions]
    tokens = {n: count_tokens(s[0]) + count_tokens(str(s[2].parameters)) for n, s in sent.items()}
    assert tokens["small"] < tokens["default"], tokens


@pytest.mark.parametrize(
    "task,offered",
    [
        ("Sign in with username ada", False),
        ("Write to grace@example.com about the order", False),  # an e-mail address is not a page
        ("Open example.com/pricing and read the Free plan", True),
        ("Compare with https://127.0.0.1:8000/other", True),
        ("Look at localhost:8000", True),
    ],
)
def test_small_offers_go_to_url_only_when_the_request_names_an_address(
    browser: BrowserSession, task: str, offered: bool
) -> None:
    """Measured: a 1.5B model made up /docs and /account (404s) instead of clicking the link to them."""
    small = PageAgent(model=ScriptedModel([]), profile="small")
    assert ("go_to_url" in small.tools(browser, task)) is offered
    assert "go_to_url" in small.tools(browser)  # no start page: there is nothing to click yet
    assert "go_to_url" in PageAgent(model=ScriptedModel([]), profile="default").tools(browser, task)


async def test_a_run_on_a_page_sends_the_actions_its_request_needs(browser: BrowserSession) -> None:
    sent = []
    for start in ("about:blank", "data:text/html,<p>A page</p>"):
        model = ScriptedModel([agent_output("done", {"text": "ok", "success": True})])
        await PageAgent(model=model, browser=browser, profile="small", start_url=start).run("Say ok")
        (spec,) = model.requests[0][0].tools
        sent.append([next(iter(m["properties"])) for m in spec.parameters["properties"]["action"]["anyOf"]])
    assert "go_to_url" in sent[0] and "go_to_url" not in sent[1]


class Contact(BaseModel):
    name: str
    email: str


@pytest.mark.parametrize("profile", ["default", "small"])
async def test_the_fixed_prompt_as_sent_with_every_capability_fits_its_budget(
    browser: BrowserSession, servers: Servers, profile: str
) -> None:
    """System prompt + AgentOutput schema as a run sends them, with JavaScript, ask_user and a typed answer on,
    for a request on a page that calls for no other action: at most 1,300 o200k tokens, sent every step."""
    model = ScriptedModel([agent_output("done", {"text": "ok", "success": False})])
    agent = PageAgent(
        model=model,
        browser=browser,
        profile=profile,
        enable_javascript=True,
        on_ask_user=answer,
        output=Contact,
        start_url=servers.url("form.html"),
        max_steps=1,
    )
    result = await agent.run("Fill in the form for Ada and submit it")
    request = result.steps[0].request
    assert request is not None
    total = count_tokens(request.system_prompt) + count_tokens(json.dumps(request.tools[0]))
    assert total <= 1300, total


@pytest.mark.parametrize(
    "task,offered",
    [
        ("Fill in the form", set()),
        ("Hover over the menu and open Pricing", {"hover"}),
        ("Open the report in the other tab", {"switch_tab"}),
        ("Scroll the table sideways to the Total column", {"scroll_horizontally"}),
    ],
)
def test_default_offers_rarely_needed_actions_when_the_request_calls_for_them(
    browser: BrowserSession, task: str, offered: set[str]
) -> None:
    rare = {"hover", "switch_tab", "scroll_horizontally"}
    default = PageAgent(model=ScriptedModel([]), profile="default")
    assert rare & set(default.tools(browser, task)) == offered
    assert rare <= set(default.tools(browser))  # no start page: nothing to judge the request by


async def test_the_start_page_calls_for_tabs_sideways_scrolling_and_data(
    browser: BrowserSession, servers: Servers
) -> None:
    from notebook_agent.agent.prompt.offers import called_for

    await browser.page.goto(servers.url("tabs.html"))  # a target=_blank link, a window.open button
    asked, data, page = await called_for(browser, "Read the docs", None)
    assert asked == "Read the docs" and not data and page == {"switch_tab"}
    default = PageAgent(model=ScriptedModel([]), profile="default")
    assert "switch_tab" in default.tools(browser, asked, page=page)
    await browser.page.goto(servers.url("form.html"))
    assert (await called_for(browser, "Fill it in", None))[2] == frozenset()
    await browser.page.evaluate("document.body.style.width = '4000px'")
    assert (await called_for(browser, "Fill it in", None))[2] == {"scroll_horizontally"}
    await browser.page.goto(servers.url("table_spans.html"))
    assert (await called_for(browser, "Sum it up", None))[1:] == (True, frozenset({"extract_table"}))
    await browser.page.goto("about:blank")
    assert await called_for(browser, "Go", None) == (None, False, frozenset())  # no page: everything offered


async def test_the_start_page_read_by_step_one_chooses_the_tools_in_the_same_read(
    browser: BrowserSession, servers: Servers, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A snapshot reads what the page calls for as the page's own call does; a run reads its start page once,
    for its tools and for step 1, and a tab that only that read shows (switch_tab here) is offered."""
    from notebook_agent.agent.prompt import offers
    from notebook_agent.agent.prompt.offers import called_for

    for name, wider in (("tabs.html", False), ("form.html", False), ("form.html", True), ("table_spans.html", False)):
        await browser.page.goto(servers.url(name))
        if wider:
            await browser.page.evaluate("document.body.style.width = '4000px'")
        alone = await called_for(browser, "Read it", None)
        assert await called_for(browser, "Read it", None, await browser.snapshot()) == alone, name
    reads: list[str] = []
    snapshot = BrowserSession.snapshot

    async def counted(self: BrowserSession, *args: Any, **kwargs: Any) -> Any:
        reads.append(self.page.url)
        return await snapshot(self, *args, **kwargs)

    async def asked(_: BrowserSession) -> frozenset[str]:
        reads.append("page_calls")
        return frozenset()

    monkeypatch.setattr(BrowserSession, "snapshot", counted)
    monkeypatch.setattr(offers, "page_calls", asked)
    agent = PageAgent(
        model=ScriptedModel([agent_output("done", {"text": "ok", "success": True})]),
        browser=browser,
        start_url=servers.url("tabs.html"),
        profile="default",
        screenshots=False,
    )
    result = await agent.run("Read the docs")
    assert result.success and reads == [servers.url("tabs.html")]
    request = result.steps[0].request
    assert request is not None and "switch_tab" in json.dumps(request.tools) and "Current page" in request.state

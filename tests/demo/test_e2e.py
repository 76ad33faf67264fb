"""End to end: the page agent, a real BrowserSession and the offline demo model complete the demo tasks."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from notebook_agent.agent import PageAgent, PageAgentResult
from notebook_agent.agent.safety.approval import ApprovalAnswer, ApprovalRequest
from notebook_agent.browser.session.browser_session import BrowserSession
from notebook_agent.demo import DELETE_TASK, DEMO_TASK, UNKNOWN_TASK_TEXT, demo_model, demo_model_for, demo_url
from tests.demo.conftest import CHROMIUM_ARGS

EXPECTED = "Cheapest wireless headphones: TrailSound Wireless Headphones Lite at $54.99"


def describe(result: PageAgentResult) -> str:
    """The run, step by step, for assertion messages."""
    lines = [f"status={result.status} error={result.error!r} text={result.text!r}"]
    for s in result.steps:
        problem = s.output_error or ("error" if s.is_error else "")
        lines.append(f"  {s.index}. {s.url} {s.action} {s.args} -> {s.result[:200]!r} {s.approval or ''} {problem}")
    return "\n".join(lines)


@pytest_asyncio.fixture(scope="module")
async def session(chromium_path: str) -> AsyncIterator[BrowserSession]:
    async with BrowserSession(executable_path=chromium_path, args=CHROMIUM_ARGS) as browser:
        yield browser


@pytest_asyncio.fixture
async def browser(session: BrowserSession) -> BrowserSession:
    """The shared session on the demo shop with empty storage (a fresh customer for every test)."""
    await session.page.goto(demo_url())
    await session.page.evaluate("localStorage.clear()")
    return session


async def test_demo_task_completes(browser: BrowserSession) -> None:
    agent = PageAgent(model=demo_model(), browser=browser, start_url=demo_url(), max_steps=15)
    result = await agent.run(DEMO_TASK)
    trace = describe(result)
    assert result.status == "completed", trace
    assert result.success and result.text == EXPECTED
    assert [s.action for s in result.steps] == [
        "input_text",
        "click_element_by_index",  # Search
        "select_dropdown_option",  # Price: low to high
        "click_element_by_index",  # the cheapest product
        "click_element_by_index",  # Add to cart
        "done",
    ], trace
    assert not any(s.is_error for s in result.steps), trace
    assert all(s.evaluation_previous_goal and s.memory and s.next_goal for s in result.steps)
    assert result.steps[2].args["text"] == "Price: low to high"
    assert result.steps[-1].url.endswith("product.html?id=p03")
    assert result.model == "demo:offline-shop"
    cart = json.loads(await browser.page.evaluate("localStorage.getItem('northwind.cart')"))
    assert cart == [{"id": "p03", "qty": 1}]


async def test_delete_account_is_stopped_by_deny_risky(browser: BrowserSession) -> None:
    agent = PageAgent(model=demo_model("delete_account"), browser=browser, start_url=demo_url(), approval="deny-risky")
    result = await agent.run(DELETE_TASK)
    assert result.status == "failed" and not result.success, describe(result)
    assert result.text.startswith("I did not delete your account") and "denied" in result.text
    click = result.steps[-2]
    assert click.action == "click_element_by_index"
    assert click.approval is not None and click.approval["decision"] == "denied"
    assert "delete" in click.approval["risk"]
    assert browser.page.url.endswith("account.html")


async def test_delete_account_waits_for_the_person(browser: BrowserSession) -> None:
    asked: list[ApprovalRequest] = []

    async def deny(request: ApprovalRequest) -> ApprovalAnswer:
        asked.append(request)
        return ApprovalAnswer(False, "not today")

    agent = PageAgent(
        model=demo_model("delete_account"), browser=browser, start_url=demo_url(), approval="ask-risky", approver=deny
    )
    result = await agent.run(DELETE_TASK)
    trace = describe(result)
    assert result.status == "failed", trace
    assert len(asked) == 1, trace
    assert "denied" in result.text and "not today" in result.text
    assert len(asked) == 1 and asked[0].element is not None and "Delete account" in asked[0].element["text"]
    assert browser.page.url.endswith("account.html")

    async def approve(request: ApprovalRequest) -> ApprovalAnswer:
        return ApprovalAnswer(True)

    agent = PageAgent(
        model=demo_model("delete_account"),
        browser=browser,
        start_url=demo_url(),
        approval="ask-risky",
        approver=approve,
    )
    result = await agent.run(DELETE_TASK)
    assert result.status == "completed" and result.success, describe(result)
    assert browser.page.url.endswith("account-deleted.html")
    assert any("confirm dialog" in s.result for s in result.steps)


async def test_unknown_task_ends_at_once(browser: BrowserSession) -> None:
    agent = PageAgent(model=demo_model_for("Book me a flight to Oslo"), browser=browser, start_url=demo_url())
    result = await agent.run("Book me a flight to Oslo")
    assert result.status == "failed" and result.text == UNKNOWN_TASK_TEXT
    assert len(result.steps) == 1


@pytest.mark.parametrize("task", [DEMO_TASK, DELETE_TASK])
async def test_demo_model_for_plays_the_demo_tasks(browser: BrowserSession, task: str) -> None:
    agent = PageAgent(model=demo_model_for(task), browser=browser, start_url=demo_url(), screenshots=False)
    result = await agent.run(task)
    assert result.status == "completed", describe(result)


async def test_the_model_name_demo_works_from_python(browser: BrowserSession) -> None:
    """`demo` is a model name like any other (the README lists it; --model demo takes it): the registry builds
    the offline model, which reads each run's task, so one agent plays both demo tasks and explains any other."""
    from notebook_agent.config.models import choose_model
    from notebook_agent.config.options import model as check_model_option
    from notebook_agent.llm import ModelConfigError, get_model

    agent = PageAgent(model="demo", browser=browser, start_url=demo_url(), screenshots=False, approval="auto")
    shop = await agent.run(DEMO_TASK)
    assert shop.status == "completed" and shop.text == EXPECTED, describe(shop)
    assert shop.model == "demo:offline"
    other = await agent.run("Book me a flight to Oslo")
    assert other.status == "failed" and other.text == UNKNOWN_TASK_TEXT
    # one rule everywhere: the registry, the option check, the notebook/CLI chooser (and a recorded id reruns)
    assert get_model("demo:shop").id == "offline-shop" and get_model("demo:offline-delete-account").provider == "demo"
    assert check_model_option("demo") == "demo" and choose_model("demo", DEMO_TASK)[0].id == "offline-shop"
    with pytest.raises(ModelConfigError, match="Unknown demo model 'demo:nope'"):
        get_model("demo:nope")

"""A follow-up: a finished run gets a new instruction, with what it did and the page it left."""

from __future__ import annotations

import pytest

from notebook_agent.agent import PageAgent
from notebook_agent.agent.prompt.agent_output import agent_output
from notebook_agent.browser import BrowserSession
from notebook_agent.core.messages import UserMessage
from notebook_agent.llm.scripted import ScriptedModel
from tests.browser.conftest import Servers


def last_state(model: ScriptedModel) -> str:
    message = model.requests[-1][0].messages[-1]
    assert isinstance(message, UserMessage)
    return message.text


@pytest.mark.parametrize("own_tab", [False, True])
async def test_a_follow_up_knows_the_earlier_run_and_its_page(
    browser: BrowserSession, servers: Servers, own_tab: bool
) -> None:
    model = ScriptedModel(
        [
            agent_output("input_text", {"index": 0, "text": "Ada"}, memory="typed the name Ada"),
            agent_output("done", {"text": "Typed Ada", "success": True}),
            agent_output("done", {"text": "It says Ada", "success": True}),
        ]
    )
    agent = PageAgent(model=model, browser=browser, own_tab=own_tab, start_url=servers.url("agent_form.html"))
    first = await agent.run("Type Ada into the name field")
    assert first.success
    second = await agent.follow_up("What does the name field say now?")
    assert second.success and second.follows == first.run_id and second.task == "What does the name field say now?"
    state = last_state(model)
    assert "Earlier request: Type Ada into the name field. It took 2 steps: input_text" in state
    assert "It ended completed: Typed Ada. Its last memory: typed the name Ada" in state
    assert "agent_form.html" in second.steps[0].url  # the page the earlier run left (a new tab opens it)
    if not own_tab:
        assert "value=Ada" in state  # the very same tab, with what was typed


async def test_nothing_to_follow_up_is_said(browser: BrowserSession) -> None:
    with pytest.raises(ValueError, match="no earlier run"):
        await PageAgent(model=ScriptedModel([]), browser=browser).follow_up("and then?")

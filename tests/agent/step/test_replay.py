"""Record once, replay free: no model calls, elements found by what they were, healing, the gate and secrets."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from notebook_agent.agent import PageAgent, load_run
from notebook_agent.browser import BrowserSession
from notebook_agent.core.messages import Usage, UserMessage
from notebook_agent.demo import DEMO_TASK, demo_url, serve_demo
from notebook_agent.llm.scripted import ScriptedModel
from notebook_agent.testing import moved_target
from tests.agent.test_page_agent import index_of, step
from tests.browser.conftest import LOGIN, LOGINS, Servers

TOKENS = Usage(input=500, output=50)


def signup_script() -> list[Any]:
    return [
        step("input_text", lambda c: {"index": index_of(c, r"name=name"), "text": "Ada"}, next_goal="type the name"),
        step("select_dropdown_option", lambda c: {"index": index_of(c, r"<select name=plan"), "text": "Pro"}),
        step("click_element_by_index", lambda c: {"index": index_of(c, r"Create account")}, next_goal="submit"),
        step("done", {"text": "Signed up", "success": True}),
    ]


async def record(browser: BrowserSession, servers: Servers, tmp_path: Path) -> Any:
    agent = PageAgent(
        model=ScriptedModel(signup_script(), usage=TOKENS),
        browser=browser,
        start_url=servers.url("agent_form.html"),
        runs_dir=str(tmp_path),
    )
    result = await agent.run("Sign up as Ada on the Pro plan")
    assert result.success and all(s.target for s in result.steps if s.action != "done")
    return result


async def test_a_replay_makes_no_model_call_and_does_the_same(
    browser: BrowserSession, servers: Servers, tmp_path: Path
) -> None:
    recorded = await record(browser, servers, tmp_path)
    healer = ScriptedModel([])
    agent = PageAgent(model=healer, browser=browser, runs_dir=str(tmp_path))
    replayed = await agent.replay(str(next(tmp_path.glob("*.jsonl"))))  # from the run file
    assert replayed.status == "completed" and replayed.text == "Signed up"
    assert [s.replay for s in replayed.steps] == ["replayed"] * 4 and healer.requests == []
    assert replayed.usage.tokens == 0 and recorded.usage.tokens > 0
    assert await browser.page.inner_text("#msg") == "Thanks Ada, plan Pro, terms no"
    # the replay is itself a recorded run, with fingerprints: replaying it is free too
    again = await agent.replay(load_run(next(p for p in tmp_path.glob("*.jsonl") if replayed.run_id in p.name)))
    assert [s.replay for s in again.steps] == ["replayed"] * 4


async def test_a_changed_page_heals_through_the_model(
    browser: BrowserSession, servers: Servers, tmp_path: Path
) -> None:
    """The variant has a cookie banner above, the fields in another order and the button text in capitals: the
    elements are found by what they are; only what cannot be told apart goes to the model."""
    recorded = await record(browser, servers, tmp_path)
    healer = ScriptedModel([])
    agent = PageAgent(model=healer, browser=browser)
    replayed = await agent.replay(recorded, url=servers.main + "/variant")
    assert replayed.status == "completed", [(s.action, s.replay, s.result) for s in replayed.steps]
    assert [s.replay for s in replayed.steps] == ["replayed"] * 4 and healer.requests == []
    assert await browser.page.inner_text("#msg") == "Thanks Ada, plan Pro, terms no"
    assert replayed.steps[0].url.startswith(servers.main + "/variant/")


async def test_what_cannot_be_told_apart_goes_to_the_model(
    browser: BrowserSession, servers: Servers, tmp_path: Path
) -> None:
    recorded = await record(browser, servers, tmp_path)
    # two identical "Create account" buttons: the third step cannot be replayed with confidence
    recorded.settings["start_url"] = servers.url("twins.html")  # as if it had been recorded there
    for s in recorded.steps:
        s.url = s.url.replace("agent_form.html", "twins.html")
    recorded.steps.pop(1)  # no plan select on that page
    healer = ScriptedModel(
        [step("click_element_by_index", lambda c: {"index": index_of(c, r"Create account")}, next_goal="submit")],
        usage=TOKENS,
    )
    replayed = await PageAgent(model=healer, browser=browser).replay(recorded, url=servers.main + "/variant")
    assert [s.replay for s in replayed.steps] == ["replayed", "healed", "replayed"], [
        (s.action, s.replay, s.result) for s in replayed.steps
    ]
    assert replayed.status == "completed" and len(healer.requests) == 1
    asked = healer.requests[0][0].messages[-1]
    assert isinstance(asked, UserMessage) and "could not be replayed as recorded" in asked.text
    assert "match" in asked.text and "Create account" in asked.text
    assert replayed.usage.tokens == TOKENS.tokens  # only the healed step cost tokens

    stopped = await PageAgent(model=ScriptedModel([]), browser=browser).replay(
        recorded, url=servers.main + "/variant", heal=False
    )
    assert stopped.status == "failed" and stopped.steps[-1].replay == "failed"
    assert stopped.text.startswith(
        "The replay stopped at step 3: the button 'Create account' was not found with confidence: 2 elements match"
    )


async def test_the_gate_applies_to_a_replayed_risky_action(
    browser: BrowserSession, servers: Servers, tmp_path: Path
) -> None:
    script = [
        step("click_element_by_index", lambda c: {"index": index_of(c, r"Delete account")}),
        step("done", {"text": "deleted", "success": True}),
    ]
    recorded = await PageAgent(
        model=ScriptedModel(script), browser=browser, start_url=servers.url("agent_danger.html")
    ).run("Delete my account")
    assert await browser.page.inner_text("#state") == "Account deleted"
    replayed = await PageAgent(model=ScriptedModel([]), browser=browser, approval="deny-risky").replay(recorded)
    assert replayed.steps[0].replay == "replayed" and replayed.steps[0].is_error
    assert replayed.steps[0].approval is not None and replayed.steps[0].approval["decision"] == "denied"
    assert await browser.page.inner_text("#state") == "Account active"


async def test_a_secret_is_replayed_from_its_placeholder(browser: BrowserSession, servers: Servers) -> None:
    LOGIN.update(username="ada", password="pa55-word-9")
    LOGINS.clear()
    script = [
        step("input_text", lambda c: {"index": index_of(c, r"name=username"), "text": "ada"}),
        step("input_text", lambda c: {"index": index_of(c, r"type=password"), "text": "<secret>pw</secret>"}),
        step("click_element_by_index", lambda c: {"index": index_of(c, r"Sign in")}),
        step("done", {"text": "in", "success": True}),
    ]
    secrets = {servers.main: {"pw": "pa55-word-9"}}
    agent = PageAgent(
        model=ScriptedModel(script), browser=browser, start_url=servers.url("login.html"), secrets=secrets
    )
    recorded = await agent.run("Sign in")
    assert recorded.steps[1].args["text"] == "<secret>pw</secret>" and "pa55" not in repr(recorded.steps[1].target)
    LOGINS.clear()
    replayed = await PageAgent(model=ScriptedModel([]), browser=browser, secrets=secrets).replay(recorded)
    assert [s.replay for s in replayed.steps] == ["replayed"] * 4
    assert LOGINS and LOGINS[-1]["password"] == "pa55-word-9"  # the value typed, from the vault
    assert replayed.steps[1].args["text"] == "<secret>pw</secret>"  # and kept as its placeholder


async def test_a_replay_can_target_another_host(tmp_path: Path) -> None:
    async with BrowserSession() as browser:
        recorded = await PageAgent(model="demo", browser=browser, start_url=demo_url()).run(DEMO_TASK)
        with serve_demo() as other:
            replayed = await PageAgent(model=ScriptedModel([]), browser=browser).replay(recorded, url=other.url)
            assert replayed.status == "completed" and all(s.replay == "replayed" for s in replayed.steps)
            assert all(s.url.startswith(other.url.rstrip("/")) for s in replayed.steps)


async def test_nothing_to_replay_is_said(browser: BrowserSession, servers: Servers) -> None:
    recorded = await PageAgent(
        model=ScriptedModel([step("done", {"text": "x", "success": False})]), browser=browser
    ).run("nothing")
    recorded.steps.clear()
    with pytest.raises(ValueError, match="nothing to replay"):
        await PageAgent(model=ScriptedModel([]), browser=browser).replay(recorded)


async def test_what_was_never_saved_is_not_typed_as_if_it_were(browser: BrowserSession, servers: Servers) -> None:
    """A password typed without secrets= is kept only as its length: replaying it would type the marker. And
    a secret's placeholder needs that secret given to the replaying agent."""
    LOGIN.update(username="ada", password="lovelace")
    script = [
        step("input_text", lambda c: {"index": index_of(c, r"name=username"), "text": "ada"}),
        step("input_text", lambda c: {"index": index_of(c, r"type=password"), "text": "lovelace"}),
        step("click_element_by_index", lambda c: {"index": index_of(c, r"Sign in")}),
        step("done", {"text": "in", "success": True}),
    ]
    recorded = await PageAgent(model=ScriptedModel(script), browser=browser, start_url=servers.url("login.html")).run(
        "Sign in"
    )
    assert recorded.steps[1].args["text"] == "[redacted: 8 characters]"
    stopped = await PageAgent(model=ScriptedModel([]), browser=browser).replay(recorded, heal=False)
    assert stopped.status == "failed" and "never saved; give it as a secret" in stopped.text
    assert [s.replay for s in stopped.steps] == ["replayed", "failed"]

    recorded.steps[1].args["text"] = "<secret>pw</secret>"
    stopped = await PageAgent(model=ScriptedModel([]), browser=browser).replay(recorded, heal=False)
    assert "it types the secret 'pw', which this agent was not given" in stopped.text


def test_a_links_recorded_path_moves_under_the_new_base() -> None:
    from notebook_agent.agent.runs.result import PageAgentResult, PageStep
    from notebook_agent.agent.step.replay_pilot import ReplayPilot

    recorded = PageAgentResult(
        "t",
        "completed",
        True,
        "",
        [PageStep(1, action="go_to_url", url="http://a.test/x")],
        Usage(),
        "m",
        0.0,
        "v",
        settings={"start_url": "http://a.test/"},
    )
    pilot = ReplayPilot.of_run(recorded, url="http://b.test/v2")
    assert moved_target(pilot, {"href": "/product.html?id=1"})["href"] == "/v2/product.html?id=1"
    assert moved_target(pilot, {"href": "/v2/x"})["href"] == "/v2/x"
    assert moved_target(ReplayPilot.of_run(recorded, url="http://b.test"), {"href": "/p"})["href"] == "/p"


async def test_a_healed_step_is_told_what_the_replayed_step_before_it_achieved(
    browser: BrowserSession, servers: Servers
) -> None:
    """A step handed to the model reads the outcome line the recorded run's model read at that step: the page
    of every step is read in full, its status regions with it, so a replayed click's "You're on the list."
    is what the healed step after it is told; the replayed steps around it take no model call."""
    script = [
        step("click_element_by_index", lambda c: {"index": index_of(c, r"Subscribe")}),
        step("click_element_by_index", lambda c: {"index": index_of(c, r"Show archive")}),
        step("done", {"text": "Subscribed", "success": True}),
    ]
    agent = PageAgent(model=ScriptedModel(script), browser=browser, start_url=servers.url("outcome.html"))
    recorded = await agent.run("Subscribe to the newsletter")
    assert recorded.success and recorded.steps[1].request is not None
    said = recorded.steps[1].request.state.split("</browser_state>", 1)[1].strip()
    assert "on the list" in said and "Outcome" in said
    recorded.steps[1].url = servers.url("outcome_moved.html")  # its page is not this one: the step heals
    healer = ScriptedModel([step("click_element_by_index", lambda c: {"index": index_of(c, r"Show archive")})])
    replayed = await PageAgent(model=healer, browser=browser).replay(recorded)
    assert [s.replay for s in replayed.steps] == ["replayed", "healed", "replayed"] and len(healer.requests) == 1
    asked = healer.requests[0][0].messages[-1]
    assert isinstance(asked, UserMessage) and "could not be replayed as recorded" in asked.text
    assert asked.text.split("</browser_state>", 1)[1].strip() == said

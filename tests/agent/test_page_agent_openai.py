"""One page-agent run through the real OpenAI SDK against a local server speaking Chat Completions."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from notebook_agent.agent import PageAgent, load_run, save_run
from notebook_agent.browser import BrowserSession
from notebook_agent.llm import get_model
from tests.browser.conftest import Servers
from tests.llm.server import Reply, ScriptedServer, sse_reply
from tests.llm.wire import Call, ChatWire, split


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    srv = ScriptedServer().start()
    yield srv
    srv.stop()


def agent_output(action: str, args: dict[str, object], call_id: str) -> Call:
    payload = json.dumps(
        {"evaluation_previous_goal": "ok", "memory": "", "next_goal": f"{action}", "action": {action: args}}
    )
    return Call(call_id, "AgentOutput", split(payload, 7))  # arguments arrive in many fragments


async def test_a_run_through_the_openai_sdk(browser: BrowserSession, servers: Servers, server: ScriptedServer) -> None:
    wire = ChatWire()
    server.replies.extend(
        [
            sse_reply(wire.tool_calls([agent_output("input_text", {"index": 0, "text": "Ada"}, "call_1")])),
            sse_reply(wire.tool_calls([agent_output("done", {"text": "typed it", "success": True}, "call_2")])),
        ]
    )
    model = get_model("openai:gpt-4o-mini", base_url=server.url + "/v1", api_key="test-key", max_retries=0)
    agent = PageAgent(model=model, browser=browser, start_url=servers.url("agent_form.html"))
    result = await agent.run("Type Ada into the name field")
    assert result.status == "completed" and result.success and result.text == "typed it"
    assert "its value is now 'Ada'" in result.steps[0].result
    assert result.usage.input > 0 and result.usage.cache_read > 0  # usage with cached tokens, per step

    assert len(server.requests) == 2
    body = server.requests[0].body
    assert server.requests[0].path == "/v1/chat/completions"
    assert body["model"] == "gpt-4o-mini" and body["stream"] is True
    assert body["tool_choice"] == {"type": "function", "function": {"name": "AgentOutput"}}
    assert body["parallel_tool_calls"] is False
    assert [t["function"]["name"] for t in body["tools"]] == ["AgentOutput"]
    schema = body["tools"][0]["function"]["parameters"]
    actions = [next(iter(m["properties"])) for m in schema["properties"]["action"]["anyOf"]]
    assert actions[:3] == ["done", "wait", "click_element_by_index"] and "execute_javascript" not in actions
    assert schema["required"] == ["evaluation_previous_goal", "memory", "next_goal", "action"]
    # two messages per request: the system prompt and the state message (the transcript does not grow)
    for request in server.requests:
        roles = [m["role"] for m in request.body["messages"]]
        assert roles == ["system", "user"]
    second_state = server.requests[1].body["messages"][1]["content"]
    assert 'Action: input_text {"index": 0, "text": "Ada"}' in second_state


async def test_malformed_arguments_are_fed_back_not_fatal(
    browser: BrowserSession, servers: Servers, server: ScriptedServer, tmp_path: Path
) -> None:
    """Invalid JSON, a non-object, absurd nesting and a lone surrogate from a real SDK stream: each is one
    unusable step the model hears about, within max_failures; the run then completes and saves."""
    wire = ChatWire()
    bad = ['{"evaluation_previous_goal": "ok", "action": {"wait"', "[1, 2, 3]", "[" * 5000 + "]" * 5000]
    server.replies.extend(
        sse_reply(wire.tool_calls([Call(f"bad_{i}", "AgentOutput", split(b, 50))])) for i, b in enumerate(bad)
    )
    half = json.dumps({"evaluation_previous_goal": "ok \ud83d", "memory": "", "next_goal": "finish"})[:-1]
    done = half + ', "action": {"done": {"text": "done \\ud83d", "success": true}}}'
    server.replies.append(sse_reply(wire.tool_calls([Call("call_done", "AgentOutput", split(done, 7))])))
    model = get_model("openai:gpt-4o-mini", base_url=server.url + "/v1", api_key="test-key", max_retries=0)
    agent = PageAgent(model=model, browser=browser, start_url=servers.url("agent_form.html"), max_failures=4)
    result = await agent.run("Finish")
    assert result.status == "completed", result.error
    assert [s.action for s in result.steps] == [None, None, None, "done"]
    assert all(s.output_error for s in result.steps[:3])
    second_state = server.requests[1].body["messages"][1]["content"]
    assert "Your previous output could not be used" in second_state
    assert result.text == "done \ufffd"  # the lone surrogate was cleaned where the stream entered
    path = save_run(result, tmp_path)  # and nothing breaks saving
    assert load_run(path).text == "done \ufffd"


async def test_constrained_decoding_names_only_this_steps_elements(
    browser: BrowserSession, servers: Servers, server: ScriptedServer
) -> None:
    """In json_schema mode the response_format narrows every ``index`` to the elements of this step's state,
    and leaves what the model reads (its messages) as it was: the prompt cache keeps it."""
    wire = ChatWire()
    done = json.dumps(
        {
            "evaluation_previous_goal": "ok",
            "memory": "",
            "next_goal": "x",
            "action": {"done": {"text": "ok", "success": True}},
        }
    )
    server.replies.append(sse_reply(wire.text_items(split(done, 9))))
    model = get_model(
        "openai:gpt-4o-mini", base_url=server.url + "/v1", api_key="k", max_retries=0, output_mode="json_schema"
    )
    result = await PageAgent(model=model, browser=browser, start_url=servers.url("agent_form.html")).run("look")
    assert result.success
    body = server.requests[0].body
    members = body["response_format"]["json_schema"]["schema"]["properties"]["action"]["anyOf"]
    state = body["messages"][-1]["content"]
    shown = sorted(int(i) for i in re.findall(r"^\s*\*?\[(\d+)\]<", state, re.MULTILINE))
    indexed = {next(iter(m["properties"])): next(iter(m["properties"].values())) for m in members}
    assert indexed["click_element_by_index"]["properties"]["index"]["enum"] == shown

    # the form actions are narrowed further, to the elements they can act on (affordances)
    def lines(pattern: str) -> list[int]:
        return sorted(int(i) for i in re.findall(r"^\s*\*?\[(\d+)\]<" + pattern, state, re.MULTILINE))

    assert indexed["input_text"]["properties"]["index"]["enum"] == lines("input type=text") == [0]
    # a checkbox or a link is never a dropdown; a field (suggestions) or a button (a custom listbox) may be
    chooses = sorted(set(shown) - set(lines("input type=checkbox")) - set(lines("a>")))
    assert indexed["select_dropdown_option"]["properties"]["index"]["enum"] == chooses == [0, 1, 3]
    assert "enum" not in json.dumps(body["messages"])  # the model reads the schema as the prompt states it


async def test_the_last_step_decodes_only_done_and_reads_the_same_prompt(
    browser: BrowserSession, servers: Servers, server: ScriptedServer
) -> None:
    """On the last step an action would run with no step left to report it: where decoding is constrained it may
    only be done. What the model reads keeps the full schema, so the cached prompt holds; earlier steps may act."""
    wire = ChatWire()

    def reply(action: dict[str, object]) -> Reply:
        out = {"evaluation_previous_goal": "ok", "memory": "", "next_goal": "x", "action": action}
        return sse_reply(wire.text_items(split(json.dumps(out), 5)))

    server.replies += [reply({"wait": {"seconds": 0}}), reply({"done": {"text": "ok", "success": True}})]
    model = get_model(
        "openai:gpt-4o-mini", base_url=server.url + "/v1", api_key="k", max_retries=0, output_mode="json_schema"
    )
    agent = PageAgent(model=model, browser=browser, start_url=servers.url("agent_form.html"), max_steps=2)
    result = await agent.run("look")
    assert result.success and [s.action for s in result.steps] == ["wait", "done"]

    def decodable(body: dict[str, object]) -> list[str]:
        members = body["response_format"]["json_schema"]["schema"]["properties"]["action"]["anyOf"]  # type: ignore[index]
        return [next(iter(m["properties"])) for m in members]

    first, last = (r.body for r in server.requests)
    assert {"wait", "click_element_by_index", "done"} <= set(decodable(first))
    assert decodable(last) == ["done"]
    assert first["messages"][0] == last["messages"][0]  # the system prompt, the full schema stated in it
    assert "This is the last step" in last["messages"][-1]["content"]

"""``done`` per the page-agent seed: ``{text: string; success?: boolean}``. Left out, success is a claim not
made (false); the typed-output ``done`` keeps it required."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

from notebook_agent.agent import PageAgent
from notebook_agent.browser import BrowserSession
from tests.llm.server import ScriptedServer, sse_reply
from tests.llm.wire import AnthropicWire, Call, ChatWire, ResponsesWire, Wire, split


class Product(BaseModel):
    name: str


def output(done: dict[str, Any]) -> str:
    return json.dumps({"evaluation_previous_goal": "ok", "memory": "", "next_goal": "finish", "action": {"done": done}})


@pytest.mark.parametrize("wire", [ChatWire(), ResponsesWire(), AnthropicWire()], ids=lambda w: w.name)
async def test_a_done_without_success_ends_the_run_with_its_text(browser: BrowserSession, wire: Wire) -> None:
    """Through the real SDKs and their wire formats: the schema sent says success is optional, a done without
    it is no validation failure, and the run ends at once with the text, success not claimed."""
    await browser.page.set_content("<p>Hello</p>")
    server = ScriptedServer().start()
    try:
        server.replies.append(sse_reply(wire.tool_calls([Call("c1", "AgentOutput", split(output({"text": "Hi"}), 7))])))
        result = await PageAgent(model=wire.model(server.url, max_retries=0), browser=browser).run("read the page")
    finally:
        server.stop()
    assert len(result.steps) == 1 and not result.steps[0].is_error, [s.result for s in result.steps]
    assert result.text == "Hi" and result.success is False and result.status == "failed" and result.error is None
    body = json.dumps(server.requests[0].body)
    members = body.split('"done": {')[1]
    assert '"success": {"default": false, "type": "boolean"}' in members and '"required": ["text"]' in members


async def test_a_done_with_success_true_completes(browser: BrowserSession) -> None:
    await browser.page.set_content("<p>Hello</p>")
    server = ScriptedServer().start()
    wire = ChatWire()
    try:
        call = Call("c1", "AgentOutput", split(output({"text": "Hi", "success": True}), 7))
        server.replies.append(sse_reply(wire.tool_calls([call])))
        result = await PageAgent(model=wire.model(server.url, max_retries=0), browser=browser).run("read the page")
    finally:
        server.stop()
    assert result.status == "completed" and result.success is True and result.text == "Hi"


async def test_the_typed_done_still_requires_success(browser: BrowserSession) -> None:
    await browser.page.set_content("<p>Hello</p>")
    server = ScriptedServer().start()
    wire = ChatWire()
    try:
        first = Call("c1", "AgentOutput", split(output({"text": "A", "data": {"name": "A"}}), 7))
        second = Call("c2", "AgentOutput", split(output({"text": "A", "success": True, "data": {"name": "A"}}), 7))
        server.replies.extend([sse_reply(wire.tool_calls([first])), sse_reply(wire.tool_calls([second]))])
        agent = PageAgent(model=wire.model(server.url, max_retries=0), browser=browser, output=Product)
        result = await agent.run("name it")
    finally:
        server.stop()
    assert "success" in result.steps[0].result and "Field required" in result.steps[0].result
    assert result.status == "completed" and result.output == Product(name="A")

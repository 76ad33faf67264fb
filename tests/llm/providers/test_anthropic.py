"""Anthropic specifics: cache markers, tool_result images, thinking replay, forced tool, in-stream errors."""

from __future__ import annotations

from typing import Any

from notebook_agent.core.messages import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    user,
)
from notebook_agent.core.model import StreamOptions
from tests.llm.conftest import CLICK, TYPE_TEXT, collect, context, final
from tests.llm.server import Cut, ScriptedServer, sse_reply
from tests.llm.wire import AnthropicWire, anth

PNG = "iVBORw0KGgo="
EPHEMERAL = {"type": "ephemeral"}


def model(server: ScriptedServer, **kw: Any) -> Any:
    return AnthropicWire().model(server.url, **kw)


async def test_request_body_cache_markers_and_forced_tool(server: ScriptedServer) -> None:
    server.enqueue(AnthropicWire().text(["ok"]))
    options = StreamOptions(tool_choice="click", parallel_tool_calls=False, temperature=0.1)
    await collect(model(server), context(tools=[CLICK, TYPE_TEXT]), options)
    req = server.requests[0]
    assert req.path == "/v1/messages"
    # the SDK decides the header (x-api-key in older releases, a bearer token in this one)
    assert "test-key" in (req.headers.get("x-api-key", "") + req.headers.get("authorization", ""))
    body = req.body
    assert body["stream"] is True and body["max_tokens"] == 8192 and body["temperature"] == 0.1
    assert body["system"] == [{"type": "text", "text": "You drive a browser.", "cache_control": EPHEMERAL}]
    assert body["tools"][0] == {"name": "click", "description": CLICK.description, "input_schema": CLICK.parameters}
    assert body["tools"][1]["cache_control"] == EPHEMERAL  # only the last tool carries the marker
    assert body["tool_choice"] == {"type": "tool", "name": "click", "disable_parallel_tool_use": True}
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": EPHEMERAL}]}
    ]


async def test_tool_choice_variants(server: ScriptedServer) -> None:
    for _ in range(3):
        server.enqueue(AnthropicWire().text(["ok"]))
    await collect(model(server), context(tools=[CLICK]), StreamOptions(tool_choice="required"))
    await collect(model(server), context(tools=[CLICK]), StreamOptions(tool_choice="none"))
    await collect(model(server), context(tools=[CLICK]), StreamOptions(parallel_tool_calls=False))
    assert [r.body["tool_choice"] for r in server.requests] == [
        {"type": "any"},
        {"type": "none"},
        {"type": "auto", "disable_parallel_tool_use": True},
    ]


async def test_tool_results_with_screenshots_and_thinking_replay(server: ScriptedServer) -> None:
    turn = AssistantMessage(
        provider="anthropic",
        api="anthropic-messages",
        model="claude-sonnet-4-6",
        stop_reason="toolUse",
        content=[
            ThinkingContent(thinking="I should click.", signature="SIG"),
            ThinkingContent(thinking="[Reasoning redacted]", signature="REDACTED", redacted=True),
            TextContent(text="Clicking."),
            ToolCall(id="toolu_1", name="click", arguments={"index": 3}),
            ToolCall(id="toolu_2", name="type_text", arguments={"index": 4, "text": "Oslo"}),
        ],
    )
    results = [
        ToolResultMessage(tool_call_id="toolu_1", tool_name="click", content=[ImageContent(data=PNG)]),
        ToolResultMessage(tool_call_id="toolu_2", tool_name="type_text", content=[], is_error=True),
    ]
    server.enqueue(AnthropicWire().text(["ok"]))
    await collect(model(server), context(user("go"), turn, *results, tools=[CLICK, TYPE_TEXT]))
    messages = server.requests[0].body["messages"]
    assert messages[1]["content"] == [
        {"type": "thinking", "thinking": "I should click.", "signature": "SIG"},
        {"type": "redacted_thinking", "data": "REDACTED"},
        {"type": "text", "text": "Clicking."},
        {"type": "tool_use", "id": "toolu_1", "name": "click", "input": {"index": 3}},
        {"type": "tool_use", "id": "toolu_2", "name": "type_text", "input": {"index": 4, "text": "Oslo"}},
    ]
    # both results in one user turn; the screenshot is an image block inside tool_result
    assert messages[2]["role"] == "user"
    first, second = messages[2]["content"]
    assert first == {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": [
            {"type": "text", "text": "(see attached image)"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
        ],
    }
    assert second == {
        "type": "tool_result",
        "tool_use_id": "toolu_2",
        "content": "[tool error with no output]",
        "is_error": True,
        "cache_control": EPHEMERAL,
    }


async def test_foreign_thinking_becomes_text_and_ids_are_sanitised(server: ScriptedServer) -> None:
    turn = AssistantMessage(
        provider="openai",
        api="openai-responses",
        model="gpt-5",
        stop_reason="toolUse",
        content=[
            ThinkingContent(thinking="plan", signature="{}"),
            ToolCall(id="call_1|fc_1", name="click", arguments={}),
        ],
    )
    result = ToolResultMessage(tool_call_id="call_1|fc_1", tool_name="click", content=[TextContent(text="ok")])
    server.enqueue(AnthropicWire().text(["ok"]))
    await collect(model(server), context(user("go"), turn, result, tools=[CLICK]))
    messages = server.requests[0].body["messages"]
    assert messages[1]["content"][0] == {"type": "text", "text": "plan"}
    assert messages[1]["content"][1]["id"] == "call_1_fc_1"
    assert messages[2]["content"][0]["tool_use_id"] == "call_1_fc_1"


async def test_thinking_budget(server: ScriptedServer) -> None:
    server.enqueue(AnthropicWire().text(["ok"]), AnthropicWire().text(["ok"]))
    await collect(
        model(server), context(tools=[CLICK]), StreamOptions(reasoning="low", max_tokens=1000, temperature=0.5)
    )
    await collect(model(server), context(tools=[CLICK]), StreamOptions(reasoning="low", tool_choice="click"))
    first, second = (r.body for r in server.requests)
    assert first["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert first["max_tokens"] == 3048 and "temperature" not in first
    assert "thinking" not in second  # Anthropic rejects thinking with a forced tool


async def test_redacted_thinking_and_usage_updates(server: ScriptedServer) -> None:
    w = AnthropicWire()
    items = [
        *w.start(),
        anth("content_block_start", index=0, content_block={"type": "redacted_thinking", "data": "OPAQUE"}),
        anth("content_block_stop", index=0),
        *w.text_block(1, ["hi"]),
        anth("message_delta", delta={"stop_reason": "max_tokens"}, usage={"output_tokens": 7, "input_tokens": None}),
        anth("message_stop"),
    ]
    server.enqueue(sse_reply(items))
    msg = final(await collect(model(server), context()))
    assert msg.stop_reason == "length"
    assert msg.content[0] == ThinkingContent(thinking="[Reasoning redacted]", signature="OPAQUE", redacted=True)
    assert msg.usage.input == 60 and msg.usage.output == 7 and msg.usage.cache_read == 40


async def test_overloaded_error_event_mid_stream(server: ScriptedServer) -> None:
    w = AnthropicWire()
    error = anth("error", error={"type": "overloaded_error", "message": "Overloaded"})
    server.enqueue(sse_reply([*w.start(), *w.text_block(0, ["par"]), error]))
    msg = final(await collect(model(server), context()))
    assert msg.error_kind == "server"
    assert "Overloaded" in (msg.error_message or "")
    assert msg.text == "par"


async def test_refusal_stop_reason(server: ScriptedServer) -> None:
    w = AnthropicWire()
    server.enqueue(sse_reply([*w.start(), *w.text_block(0, ["I can't"]), *w.end("refusal")]))
    msg = final(await collect(model(server), context()))
    assert msg.error_kind == "bad_request" and "refusal" in (msg.error_message or "")


async def test_usage_is_kept_when_the_stream_is_cut(server: ScriptedServer) -> None:
    w = AnthropicWire()
    server.enqueue(sse_reply([*w.start(), *w.text_block(0, ["par"]), Cut()]))
    msg = final(await collect(model(server, max_retries=0), context()))
    assert msg.error_kind == "stream_cut"
    assert (msg.usage.input, msg.usage.cache_read) == (60, 40)

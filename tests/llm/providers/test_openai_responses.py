"""Responses API specifics: sorted strict tools, reasoning replay, function_call_output images, in-band errors."""

from __future__ import annotations

import json
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
from notebook_agent.core.model import StreamOptions, ToolSpec
from tests.llm.conftest import CLICK, TYPE_TEXT, collect, context, final
from tests.llm.server import ScriptedServer, sse_reply
from tests.llm.wire import Call, ResponsesWire

PNG = "iVBORw0KGgo="


def model(server: ScriptedServer, **kw: Any) -> Any:
    return ResponsesWire().model(server.url, **kw)


async def test_request_body_tools_sorted_and_forced_choice(server: ScriptedServer) -> None:
    server.enqueue(ResponsesWire().text(["ok"]))
    options = StreamOptions(tool_choice="click", parallel_tool_calls=False, max_tokens=500)
    await collect(model(server), context(tools=[TYPE_TEXT, CLICK]), options)
    req = server.requests[0]
    assert req.path == "/v1/responses"
    body = req.body
    assert body["stream"] is True and body["store"] is False
    assert body["instructions"] == "You drive a browser."
    assert body["input"] == [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}]
    assert [t["name"] for t in body["tools"]] == ["click", "type_text"]  # sorted for a stable cache prefix
    assert body["tools"][0] == {
        "type": "function",
        "name": "click",
        "description": CLICK.description,
        "parameters": CLICK.parameters,
        "strict": False,
    }
    assert body["tool_choice"] == {"type": "function", "name": "click"}
    assert body["parallel_tool_calls"] is False
    assert body["max_output_tokens"] == 500


async def test_strict_normalisation(server: ScriptedServer) -> None:
    nested = ToolSpec(
        "fill",
        "Fill a form.",
        {
            "type": "object",
            "properties": {
                "fields": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"name": {"type": "string"}, "value": {"type": "string"}},
                        "required": ["name", "value"],
                    },
                },
                "options": {"type": "object", "properties": {}},
            },
            "required": ["fields", "options"],
        },
    )
    server.enqueue(ResponsesWire().text(["ok"]))
    await collect(model(server, strict_tools=True), context(tools=[nested]))
    tool = server.requests[0].body["tools"][0]
    assert tool["strict"] is True
    params = tool["parameters"]
    assert params["additionalProperties"] is False
    assert params["properties"]["fields"]["items"]["additionalProperties"] is False
    assert params["properties"]["options"] == {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
        "required": [],
    }


async def test_tool_result_image_and_replay_of_own_items(server: ScriptedServer) -> None:
    reasoning = {"id": "rs_1", "type": "reasoning", "summary": [], "encrypted_content": "ENC"}
    turn = AssistantMessage(
        provider="openai",
        api="openai-responses",
        model="gpt-5-mini",
        stop_reason="toolUse",
        content=[
            ThinkingContent(thinking="", signature=json.dumps(reasoning)),
            TextContent(text="Clicking.", signature=json.dumps({"v": 1, "id": "msg_7", "phase": None})),
            ToolCall(id="call_1|fc_1", name="click", arguments={"index": 3}),
        ],
    )
    result = ToolResultMessage(
        tool_call_id="call_1|fc_1", tool_name="click", content=[TextContent(text="clicked"), ImageContent(data=PNG)]
    )
    server.enqueue(ResponsesWire().text(["ok"]))
    await collect(model(server), context(user("go"), turn, result, tools=[CLICK]))
    items = server.requests[0].body["input"]
    assert items[1] == reasoning  # replayed whole, encrypted content included
    assert items[2]["type"] == "message" and items[2]["id"] == "msg_7"
    assert items[3] == {
        "type": "function_call",
        "call_id": "call_1",
        "name": "click",
        "arguments": '{"index": 3}',
        "id": "fc_1",
    }
    assert items[4] == {
        "type": "function_call_output",
        "call_id": "call_1",
        "output": [
            {"type": "input_text", "text": "clicked"},
            {"type": "input_image", "detail": "auto", "image_url": f"data:image/png;base64,{PNG}"},
        ],
    }


async def test_foreign_turns_drop_reasoning_and_item_ids(server: ScriptedServer) -> None:
    turn = AssistantMessage(
        provider="anthropic",
        api="anthropic-messages",
        model="claude",
        stop_reason="toolUse",
        content=[ThinkingContent(thinking="hmm", signature="sig"), ToolCall(id="toolu_1", name="click", arguments={})],
    )
    result = ToolResultMessage(tool_call_id="toolu_1", tool_name="click", content=[])
    server.enqueue(ResponsesWire().text(["ok"]))
    await collect(model(server), context(user("go"), turn, result, tools=[CLICK]))
    items = server.requests[0].body["input"]
    assert items[1] == {"role": "assistant", "content": "hmm"}
    assert items[2] == {"type": "function_call", "call_id": "toolu_1", "name": "click", "arguments": "{}"}
    assert items[3] == {"type": "function_call_output", "call_id": "toolu_1", "output": "(no output)"}


async def test_tool_call_ids_keep_call_and_item(server: ScriptedServer) -> None:
    server.enqueue(sse_reply(ResponsesWire().tool_calls([Call("call_xyz", "click", ['{"index"', ": 5}"])])))
    msg = final(await collect(model(server), context(tools=[CLICK])))
    [call] = msg.tool_calls
    assert call.id == "call_xyz|fc_0"
    assert msg.stop_reason == "toolUse"


async def test_reasoning_effort_requested(server: ScriptedServer) -> None:
    server.enqueue(ResponsesWire().text(["ok"]))
    await collect(model(server), context(), StreamOptions(reasoning="high"))
    body = server.requests[0].body
    assert body["reasoning"] == {"effort": "high", "summary": "auto"}
    assert body["include"] == ["reasoning.encrypted_content"]


async def test_response_failed_and_error_events(server: ScriptedServer) -> None:
    w = ResponsesWire()
    failed = w.response("failed", usage=False)
    failed["error"] = {"code": "rate_limit_exceeded", "message": "Rate limit reached for gpt-5-mini"}
    server.enqueue(
        sse_reply([*w.start(), w.ev("response.failed", response=failed)]),
        sse_reply(
            [
                *w.start(),
                w.ev(
                    "error", code="context_length_exceeded", message="Your input exceeds the context window", param=None
                ),
            ]
        ),
    )
    first = final(await collect(model(server), context()))
    second = final(await collect(model(server), context()))
    assert first.error_kind == "rate_limit" and "Rate limit reached" in (first.error_message or "")
    assert second.error_kind == "context_length"


async def test_incomplete_is_length(server: ScriptedServer) -> None:
    w = ResponsesWire()
    incomplete = w.response("incomplete")
    incomplete["incomplete_details"] = {"reason": "max_output_tokens"}
    server.enqueue(sse_reply([*w.start(), *w.message(0, ["trunc"]), w.ev("response.incomplete", response=incomplete)]))
    msg = final(await collect(model(server), context()))
    assert msg.stop_reason == "length" and msg.text == "trunc"


async def test_arguments_only_in_done_event(server: ScriptedServer) -> None:
    w = ResponsesWire()
    item = {"id": "fc_9", "type": "function_call", "call_id": "call_9", "name": "click", "arguments": ""}
    done = {**item, "arguments": '{"index": 9}'}
    server.enqueue(
        sse_reply(
            [
                *w.start(),
                w.ev("response.output_item.added", output_index=0, item=item),
                w.ev("response.function_call_arguments.done", item_id="fc_9", output_index=0, arguments='{"index": 9}'),
                w.ev("response.output_item.done", output_index=0, item=done),
                w.ev("response.completed", response=w.response("completed")),
            ]
        )
    )
    msg = final(await collect(model(server), context(tools=[CLICK])))
    assert msg.tool_calls[0].arguments == {"index": 9}

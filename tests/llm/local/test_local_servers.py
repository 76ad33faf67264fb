"""Chat Completions against local OpenAI-compatible servers (llama.cpp, Ollama), through the real openai SDK.

The scripted server stands on 127.0.0.1 and replays what llama-server sends: the request shape for a forced
tool (string ``tool_choice``), schema-constrained JSON turned into the tool call, the fallback when
``response_format`` is refused, the HTTP 500 / in-stream error for output that did not parse, and the
temperature default.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from notebook_agent.core.messages import ToolCall
from notebook_agent.core.model import StreamOptions
from notebook_agent.llm import get_model
from notebook_agent.llm.providers.chat_servers import LOCAL_DEFAULT_TEMPERATURE, detect_server
from notebook_agent.llm.providers.openai_chat import OpenAIChatModel
from tests.llm.conftest import CLICK, TYPE_TEXT, collect, context, final
from tests.llm.server import ScriptedServer, StreamItem, json_reply, sse_reply
from tests.llm.wire import ChatWire, chat_chunk, split

FORCED = StreamOptions(tool_choice="click", parallel_tool_calls=False)
LLAMA_FORMAT_ERROR = "The model produced output that does not match the expected Hermes 2 Pro format"


def local_model(srv: ScriptedServer, **kw: Any) -> OpenAIChatModel:
    kw.setdefault("max_retries", 0)
    kw.setdefault("timeout", 5)
    model = get_model("openai:qwen2.5-coder-0.5b", base_url=srv.url + "/v1", **kw)
    assert isinstance(model, OpenAIChatModel)
    return model


def content_reply(text: str, size: int = 5) -> Any:
    """A plain content stream (what llama-server sends for response_format json_schema)."""
    items: list[Any] = [chat_chunk({"role": "assistant", "content": None})]
    items += [chat_chunk({"content": part}) for part in split(text, size)]
    return sse_reply([*items, *ChatWire().terminal("stop")])


def tool_call_reply(name: str, arguments: str) -> Any:
    from tests.llm.wire import Call

    return sse_reply(ChatWire().tool_calls([Call("call_x", name, split(arguments, 4))]))


def test_which_base_urls_are_local_servers() -> None:
    assert detect_server(None) is None
    assert detect_server("https://api.openai.com/v1", "qwen") is None
    assert detect_server("https://api.together.xyz/v1", "qwen") is None  # remote compatible: OpenAI shape
    assert detect_server("http://127.0.0.1:8080/v1", "qwen2.5") == "local"
    assert detect_server("http://192.168.1.5:8080/v1", "llama3") == "local"
    assert detect_server("http://localhost:11434/v1", "qwen2.5-coder:1.5b") == "ollama"
    assert detect_server("http://127.0.0.1:4000/v1", "gpt-4o-mini") is None  # a local proxy to OpenAI


async def test_forced_tool_goes_to_a_local_server_as_required_with_only_that_tool(server: ScriptedServer) -> None:
    server.enqueue(tool_call_reply("click", '{"index": 3}'))
    model = local_model(server, output_mode="tools")
    msg = final(await collect(model, context(tools=[CLICK, TYPE_TEXT]), FORCED))
    body = server.requests[0].body
    assert body["tool_choice"] == "required"  # llama.cpp ignores the named object
    assert [t["function"]["name"] for t in body["tools"]] == ["click"]
    assert body["parallel_tool_calls"] is False
    assert "response_format" not in body
    assert msg.tool_calls[0].name == "click" and msg.tool_calls[0].arguments == {"index": 3}
    assert msg.output_mode == "tools"


async def test_explicit_openai_server_keeps_the_named_tool_choice(server: ScriptedServer) -> None:
    server.enqueue(tool_call_reply("click", '{"index": 3}'))
    model = local_model(server, server="openai")
    await collect(model, context(tools=[CLICK, TYPE_TEXT]), FORCED)
    body = server.requests[0].body
    assert body["tool_choice"] == {"type": "function", "function": {"name": "click"}}
    assert [t["function"]["name"] for t in body["tools"]] == ["click", "type_text"]
    assert "temperature" not in body and "response_format" not in body


async def test_json_schema_mode_streams_the_content_as_the_forced_tool_call(server: ScriptedServer) -> None:
    arguments = json.dumps({"index": 12, "reason": "the Submit button"})
    server.enqueue(content_reply(arguments))
    model = local_model(server, server="llamacpp")
    events, previews = [], []
    async for event in model.stream(context(tools=[CLICK, TYPE_TEXT]), FORCED):
        events.append(event)
        if event.type == "toolcall_delta":  # the partial message is live: copy what it shows now
            previews.append(dict(event.partial.tool_calls[0].arguments))
    msg = final(events)

    body = server.requests[0].body
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "click", "schema": CLICK.parameters, "strict": True, "description": CLICK.description},
    }
    assert not {"tools", "tool_choice", "parallel_tool_calls"} & set(body)
    assert body["cache_prompt"] is True and body["temperature"] == LOCAL_DEFAULT_TEMPERATURE
    # llama.cpp only constrains decoding with the schema: the model is shown it too (tools would show it).
    system = body["messages"][0]["content"]
    assert system.startswith("You drive a browser.") and json.dumps(CLICK.parameters) in system

    assert msg.stop_reason == "toolUse" and msg.output_mode == "json_schema"
    assert msg.text == ""
    (call,) = msg.tool_calls
    assert call.name == "click" and call.arguments == {"index": 12, "reason": "the Submit button"}
    assert call.id.startswith("call_")
    types = [e.type for e in events]
    assert types[:2] == ["start", "toolcall_start"] and types[-2:] == ["toolcall_end", "done"]
    # Partial-argument previews while the JSON streams, as with a streamed tool call.
    assert len(previews) == len(split(arguments, 5))
    assert {"index": 12} in previews and previews[-1] == call.arguments
    assert any("reason" in p and p["reason"] != call.arguments["reason"] for p in previews)  # a partial string


async def test_auto_mode_falls_back_to_tools_once_when_response_format_is_refused(server: ScriptedServer) -> None:
    refusal = {"error": {"code": 400, "message": "'response_format' of type json_schema is not supported", "type": "x"}}
    server.enqueue(json_reply(400, refusal), tool_call_reply("click", '{"index": 1}'), tool_call_reply("click", "{}"))
    model = local_model(server)
    msg = final(await collect(model, context(tools=[CLICK, TYPE_TEXT]), FORCED))
    first, second = (r.body for r in server.requests)
    assert first["response_format"]["type"] == "json_schema"
    assert "response_format" not in second and second["tool_choice"] == "required"
    assert msg.stop_reason == "toolUse" and msg.tool_calls[0].arguments == {"index": 1}
    assert msg.output_mode == "tools" and model.schema_rejected and "response_format" in model.schema_rejected
    # The choice is remembered by the model instance: the next call asks for tools straight away.
    msg = final(await collect(model, context(tools=[CLICK, TYPE_TEXT]), FORCED))
    assert len(server.requests) == 3 and "tools" in server.requests[2].body
    assert msg.output_mode == "tools"


async def test_explicit_json_schema_mode_does_not_fall_back(server: ScriptedServer) -> None:
    refusal = {"error": {"message": "response_format json_schema is not supported", "type": "invalid_request_error"}}
    server.enqueue(json_reply(400, refusal))
    model = local_model(server, output_mode="json_schema")
    msg = final(await collect(model, context(tools=[CLICK]), FORCED))
    assert msg.stop_reason == "error" and msg.error_kind == "bad_request"
    assert len(server.requests) == 1 and model.schema_rejected is None


async def test_text_mode_sends_the_schema_in_the_prompt_and_keeps_the_text(server: ScriptedServer) -> None:
    server.enqueue(content_reply('{"index": 2}'))
    msg = final(await collect(local_model(server, output_mode="text"), context(tools=[CLICK]), FORCED))
    body = server.requests[0].body
    assert not {"tools", "tool_choice", "response_format"} & set(body)
    system = body["messages"][0]["content"]
    assert system.startswith("You drive a browser.") and json.dumps(CLICK.parameters) in system
    assert msg.text == '{"index": 2}' and msg.tool_calls == [] and msg.output_mode == "text"


async def test_unforced_calls_keep_plain_tools(server: ScriptedServer) -> None:
    server.enqueue(ChatWire().text(["hello"]))
    msg = final(await collect(local_model(server), context(tools=[CLICK, TYPE_TEXT]), StreamOptions()))
    body = server.requests[0].body
    assert [t["function"]["name"] for t in body["tools"]] == ["click", "type_text"]
    assert "tool_choice" not in body and "response_format" not in body
    assert msg.text == "hello" and msg.output_mode is None


async def test_format_error_inside_the_stream_is_malformed_not_overload(server: ScriptedServer) -> None:
    error = {"error": {"code": 500, "message": LLAMA_FORMAT_ERROR, "type": "server_error"}}
    items: list[StreamItem] = [
        chat_chunk({"role": "assistant", "content": '{"index"'}),
        f"data: {json.dumps(error)}\n\n",
    ]
    server.enqueue(sse_reply(items))
    model = local_model(server, output_mode="tools", max_retries=2)
    msg = final(await collect(model, context(tools=[CLICK]), FORCED))
    assert msg.stop_reason == "error" and msg.error_kind == "malformed"
    message = msg.error_message or ""
    assert message.startswith(f"The OpenAI-compatible server at {server.url}/v1")  # not "OpenAI"
    assert LLAMA_FORMAT_ERROR in message and 'output_mode="json_schema"' in message
    assert "not overloaded" in message and "retr" not in message  # one request, no retry to claim
    assert len(server.requests) == 1


async def test_http_500_format_error_counts_the_real_retries(server: ScriptedServer) -> None:
    for _ in range(2):
        server.enqueue(json_reply(500, {"error": {"code": 500, "message": LLAMA_FORMAT_ERROR, "type": "server_error"}}))
        server.replies[-1].headers["retry-after-ms"] = "10"
    msg = final(await collect(local_model(server, output_mode="tools", max_retries=1), context(tools=[CLICK]), FORCED))
    assert msg.error_kind == "malformed"
    assert "(after 1 automatic retry)" in (msg.error_message or "")
    assert [r.headers["x-stainless-retry-count"] for r in server.requests] == ["0", "1"]


async def test_a_single_server_error_claims_neither_retries_nor_overload(server: ScriptedServer) -> None:
    server.enqueue(json_reply(500, {"error": {"message": "Internal error", "type": "server_error"}}))
    msg = final(await collect(local_model(server, max_retries=0), context()))
    message = msg.error_message or ""
    assert msg.error_kind == "server" and "Internal error" in message
    assert "overloaded" not in message and "retr" not in message
    assert len(server.requests) == 1


async def test_overload_is_named_only_for_503(server: ScriptedServer) -> None:
    server.enqueue(json_reply(503, {"error": {"message": "Loading model", "type": "unavailable_error"}}))
    msg = final(await collect(local_model(server, max_retries=0), context()))
    assert msg.error_kind == "server" and "overloaded" in (msg.error_message or "")


@pytest.mark.parametrize(
    ("kw", "options", "expected"),
    [
        ({}, StreamOptions(), LOCAL_DEFAULT_TEMPERATURE),
        ({}, StreamOptions(temperature=0.7), 0.7),
        ({"default_temperature": 0.3}, StreamOptions(), 0.3),
        ({"server": "openai"}, StreamOptions(), None),
    ],
)
async def test_temperature_default_for_local_servers(
    server: ScriptedServer, kw: dict[str, Any], options: StreamOptions, expected: float | None
) -> None:
    server.enqueue(ChatWire().text(["ok"]))
    await collect(local_model(server, **kw), context(), options)
    assert server.requests[0].body.get("temperature") == expected


async def test_ollama_alias(server: ScriptedServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLLAMA_HOST", server.url.removeprefix("http://"))  # Ollama's own host:port form
    server.enqueue(content_reply('{"index": 0}'))
    model = get_model("ollama:qwen2.5-coder:1.5b", max_retries=0)
    assert isinstance(model, OpenAIChatModel) and model.provider == "ollama"
    msg = final(await collect(model, context(tools=[CLICK]), FORCED))
    request = server.requests[0]
    assert request.path == "/v1/chat/completions" and request.body["model"] == "qwen2.5-coder:1.5b"
    assert request.body["response_format"]["json_schema"]["name"] == "click"
    assert json.dumps(CLICK.parameters) in request.body["messages"][0]["content"]
    assert "cache_prompt" not in request.body  # a llama.cpp field
    assert msg.tool_calls == [ToolCall(id=msg.tool_calls[0].id, name="click", arguments={"index": 0})]

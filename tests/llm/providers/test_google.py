"""Gemini specifics: the SSE endpoint, declarations, tool config, images in function responses, ids, signatures."""

from __future__ import annotations

import base64
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
from tests.llm.server import ScriptedServer, sse_reply
from tests.llm.wire import GEMINI_USAGE, GoogleWire, gem

PNG = "iVBORw0KGgo="


def model(server: ScriptedServer, model_id: str | None = None, **kw: Any) -> Any:
    wire = GoogleWire()
    if model_id:
        wire.model_id = model_id
    return wire.model(server.url, **kw)


def pick(obj: dict[str, Any], camel: str) -> Any:
    """google-genai serialises some nested fields in snake_case; the API accepts both spellings."""
    snake = "".join("_" + c.lower() if c.isupper() else c for c in camel)
    return obj[camel] if camel in obj else obj[snake]


def tool_history(model_id: str) -> list[Any]:
    return [
        user("go"),
        AssistantMessage(
            provider="google",
            api="google-generative-ai",
            model=model_id,
            stop_reason="toolUse",
            content=[
                ThinkingContent(thinking="plan", signature=base64.b64encode(b"thought-sig").decode()),
                ToolCall(id="call_1", name="click", arguments={"index": 3}, thought_signature="AAEC"),
                ToolCall(id="call_2", name="type_text", arguments={"index": 4, "text": "Oslo"}),
            ],
        ),
        ToolResultMessage(
            tool_call_id="call_1", tool_name="click", content=[TextContent(text="ok"), ImageContent(data=PNG)]
        ),
        ToolResultMessage(
            tool_call_id="call_2", tool_name="type_text", content=[TextContent(text="bad index")], is_error=True
        ),
    ]


async def test_request_path_declarations_and_forced_tool(server: ScriptedServer) -> None:
    server.enqueue(GoogleWire().text(["ok"]))
    options = StreamOptions(tool_choice="click", max_tokens=300, temperature=0.3)
    await collect(model(server), context(tools=[CLICK, TYPE_TEXT]), options)
    req = server.requests[0]
    assert req.path.endswith("/models/gemini-2.5-flash:streamGenerateContent?alt=sse")
    assert req.headers["x-goog-api-key"] == "test-key"
    body = req.body
    assert body["contents"] == [{"role": "user", "parts": [{"text": "hi"}]}]
    assert body["systemInstruction"]["parts"] == [{"text": "You drive a browser."}]
    declarations = body["tools"][0]["functionDeclarations"]
    assert [d["name"] for d in declarations] == ["click", "type_text"]
    assert pick(declarations[0], "parametersJsonSchema") == CLICK.parameters
    assert body["toolConfig"] == {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["click"]}}
    assert body["generationConfig"]["maxOutputTokens"] == 300
    assert body["generationConfig"]["temperature"] == 0.3


async def test_legacy_parameters_option(server: ScriptedServer) -> None:
    server.enqueue(GoogleWire().text(["ok"]))
    tool = CLICK.__class__("click", "Click.", {**CLICK.parameters, "additionalProperties": False, "$schema": "x"})
    await collect(model(server, legacy_parameters=True), context(tools=[tool]), StreamOptions(tool_choice="required"))
    body = server.requests[0].body
    declaration = body["tools"][0]["functionDeclarations"][0]
    assert "parametersJsonSchema" not in declaration and "parameters_json_schema" not in declaration
    params = declaration["parameters"]
    assert params["required"] == ["index"] and "additionalProperties" not in params
    assert body["toolConfig"] == {"functionCallingConfig": {"mode": "ANY"}}


async def test_tool_results_gemini2_images_in_separate_turn(server: ScriptedServer) -> None:
    server.enqueue(GoogleWire().text(["ok"]))
    await collect(model(server), context(*tool_history("gemini-2.5-flash"), tools=[CLICK, TYPE_TEXT]))
    contents = server.requests[0].body["contents"]
    assert [c["role"] for c in contents] == ["user", "model", "user", "user"]
    thought, call1, call2 = contents[1]["parts"]
    assert thought == {"text": "plan", "thought": True, "thoughtSignature": base64.b64encode(b"thought-sig").decode()}
    assert call1 == {"functionCall": {"name": "click", "args": {"index": 3}}, "thoughtSignature": "AAEC"}
    assert call2 == {"functionCall": {"name": "type_text", "args": {"index": 4, "text": "Oslo"}}}
    responses = contents[2]["parts"]
    assert responses == [
        {"functionResponse": {"name": "click", "response": {"output": "ok"}}},
        {"functionResponse": {"name": "type_text", "response": {"error": "bad index"}}},
    ]
    image_turn = contents[3]["parts"]
    assert image_turn[0] == {"text": "Tool result image:"}
    assert pick(image_turn[1], "inlineData")["data"] == PNG


async def test_tool_results_gemini3_images_nested(server: ScriptedServer) -> None:
    server.enqueue(GoogleWire().text(["ok"]))
    await collect(model(server, "gemini-3-pro-preview"), context(*tool_history("gemini-3-pro-preview"), tools=[CLICK]))
    contents = server.requests[0].body["contents"]
    assert [c["role"] for c in contents] == ["user", "model", "user"]
    # an unsigned call in history gets the documented opt-out signature on Gemini 3
    assert contents[1]["parts"][2]["thoughtSignature"] == "skip_thought_signature_validator"
    nested = contents[2]["parts"][0]["functionResponse"]["parts"][0]
    assert pick(pick(nested, "inlineData"), "mimeType") == "image/png"
    assert pick(nested, "inlineData")["data"] == PNG


async def test_signatures_not_replayed_to_another_model(server: ScriptedServer) -> None:
    server.enqueue(GoogleWire().text(["ok"]))
    await collect(model(server, "gemini-2.5-pro"), context(*tool_history("gemini-2.5-flash"), tools=[CLICK, TYPE_TEXT]))
    parts = server.requests[0].body["contents"][1]["parts"]
    assert parts[0] == {"text": "plan"}
    assert all("thoughtSignature" not in p for p in parts)


async def test_missing_and_duplicate_ids_are_generated(server: ScriptedServer) -> None:
    parts: list[dict[str, Any]] = [
        {"functionCall": {"name": "click", "args": {"index": 1}, "id": "dup"}},
        {"functionCall": {"name": "click", "args": {"index": 2}, "id": "dup"}},
        {"functionCall": {"name": "type_text", "args": {"index": 3, "text": "x"}}, "thoughtSignature": "AAEC"},
    ]
    server.enqueue(sse_reply([gem(parts), gem([], finish="STOP", usage=GEMINI_USAGE)]))
    events = await collect(model(server), context(tools=[CLICK, TYPE_TEXT]))
    msg = final(events)
    ids = [c.id for c in msg.tool_calls]
    assert ids[0] == "dup" and len(set(ids)) == 3 and all(ids)
    assert msg.tool_calls[2].thought_signature == "AAEC"
    assert msg.stop_reason == "toolUse"
    assert [e.type for e in events].count("toolcall_end") == 3


async def test_finish_reasons(server: ScriptedServer) -> None:
    server.enqueue(
        sse_reply([gem([{"text": "cut"}], finish="MAX_TOKENS", usage=GEMINI_USAGE)]),
        sse_reply([gem([{"text": "no"}], finish="SAFETY")]),
        sse_reply([gem([], finish="MALFORMED_FUNCTION_CALL")]),
    )
    length = final(await collect(model(server), context()))
    safety = final(await collect(model(server), context()))
    malformed = final(await collect(model(server), context(tools=[CLICK])))
    assert length.stop_reason == "length" and length.text == "cut"
    assert safety.error_kind == "bad_request" and "SAFETY" in (safety.error_message or "")
    assert malformed.error_kind == "malformed"


async def test_thinking_config_requested(server: ScriptedServer) -> None:
    server.enqueue(GoogleWire().text(["ok"]))
    await collect(model(server), context(), StreamOptions(reasoning="low"))
    thinking = server.requests[0].body["generationConfig"]["thinkingConfig"]
    assert pick(thinking, "includeThoughts") is True and pick(thinking, "thinkingBudget") == 2048


async def test_one_model_answers_from_two_event_loops_through_its_transport(
    server: ScriptedServer, monkeypatch: Any
) -> None:
    """google-genai takes aiohttp whenever it is installed (beside many data tools) unless it is given a
    transport of its HTTP library, and the deadlines cannot watch aiohttp: every request goes through the
    adapter's transport, which keeps one pool per event loop, so the same model also answers from another loop (a
    thread's ``asyncio.run``) after this one used it."""
    import asyncio

    from notebook_agent.llm.loop_transport import transport_class

    loops: list[asyncio.AbstractEventLoop] = []
    transport: Any = transport_class()
    send = transport.handle_async_request

    async def counted(self: Any, request: Any) -> Any:
        loops.append(asyncio.get_running_loop())
        return await send(self, request)

    monkeypatch.setattr(transport, "handle_async_request", counted)
    server.enqueue(
        sse_reply([gem([{"text": "one"}], finish="STOP")]), sse_reply([gem([{"text": "two"}], finish="STOP")])
    )
    m = model(server)
    first = final(await collect(m, context()))
    second = await asyncio.to_thread(lambda: final(asyncio.run(collect(m, context()))))
    assert (first.text, second.text) == ("one", "two") and len(server.requests) == 2
    assert len(loops) == 2 and loops[0] is asyncio.get_running_loop() and loops[1] is not loops[0]


def test_the_transport_takes_the_proxy_the_environment_names(monkeypatch: Any) -> None:
    from notebook_agent.llm.loop_transport import proxy_for

    for name in (
        "HTTPS_PROXY",
        "https_proxy",
        "HTTP_PROXY",
        "http_proxy",
        "ALL_PROXY",
        "all_proxy",
        "NO_PROXY",
        "no_proxy",
    ):
        monkeypatch.delenv(name, raising=False)
    assert proxy_for("https", "generativelanguage.googleapis.com") is None
    monkeypatch.setenv("https_proxy", "http://proxy.internal:3128")
    monkeypatch.setenv("no_proxy", "localhost,127.0.0.1")
    assert proxy_for("https", "generativelanguage.googleapis.com") == "http://proxy.internal:3128"
    assert proxy_for("http", "127.0.0.1") is None
    assert proxy_for("http", "example.org") is None  # no http proxy named

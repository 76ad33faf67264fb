"""Chat Completions and Mistral specifics: the outgoing body, tool-result images, and Mistral's quirks."""

from __future__ import annotations

import json
from typing import Any

from notebook_agent.core.messages import (
    AssistantMessage,
    ImageContent,
    Message,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    user,
)
from notebook_agent.core.model import StreamOptions, ToolSpec
from notebook_agent.llm import ChatCompat, OpenAIChatModel, get_model
from notebook_agent.testing import build_request
from tests.llm.conftest import CLICK, TYPE_TEXT, collect, context, final
from tests.llm.server import ScriptedServer, sse_reply
from tests.llm.wire import ChatWire, MistralWire, chat_chunk

PNG = "iVBORw0KGgo="


def chat_model(server: ScriptedServer, **kw: Any) -> OpenAIChatModel:
    model = ChatWire().model(server.url, **kw)
    assert isinstance(model, OpenAIChatModel)
    return model


def tool_turn(provider: str = "openai", api: str = "openai-completions", model: str = "gpt-4o-mini") -> list[Any]:
    """A user turn, an assistant turn with two calls, and their results (one with a screenshot only)."""
    return [
        user("Find flights to Oslo"),
        AssistantMessage(
            provider=provider,
            api=api,
            model=model,
            stop_reason="toolUse",
            content=[
                TextContent(text="Clicking."),
                ToolCall(id="call_1", name="click", arguments={"index": 3}),
                ToolCall(id="call_2", name="type_text", arguments={"index": 4, "text": "Oslo"}),
            ],
        ),
        ToolResultMessage(
            tool_call_id="call_1",
            tool_name="click",
            content=[TextContent(text="clicked"), ImageContent(data=PNG)],
        ),
        ToolResultMessage(tool_call_id="call_2", tool_name="type_text", content=[ImageContent(data=PNG)]),
    ]


async def test_request_body_and_tools(server: ScriptedServer) -> None:
    server.enqueue(ChatWire().text(["ok"]))
    await collect(chat_model(server), context(tools=[CLICK]), StreamOptions(max_tokens=256, temperature=0.2))
    req = server.requests[0]
    assert req.path == "/v1/chat/completions"
    assert req.headers["authorization"] == "Bearer test-key"
    body = req.body
    assert body["model"] == "gpt-4o-mini" and body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["messages"][0] == {"role": "system", "content": "You drive a browser."}
    assert body["messages"][1] == {"role": "user", "content": "hi"}
    assert body["tools"] == [
        {
            "type": "function",
            "function": {"name": "click", "description": CLICK.description, "parameters": CLICK.parameters},
        }
    ]  # no "strict" unless asked for: not every compatible server accepts it
    assert body["max_tokens"] == 256  # a local base_url gets the universally understood field
    assert body["temperature"] == 0.2
    assert "tool_choice" not in body and "parallel_tool_calls" not in body


async def test_forced_tool_choice_and_no_parallel_calls(server: ScriptedServer) -> None:
    server.enqueue(ChatWire().text(["ok"]))
    options = StreamOptions(tool_choice="click", parallel_tool_calls=False)
    await collect(chat_model(server), context(tools=[CLICK, TYPE_TEXT]), options)
    body = server.requests[0].body
    assert body["tool_choice"] == {"type": "function", "function": {"name": "click"}}
    assert body["parallel_tool_calls"] is False


async def test_required_tool_choice(server: ScriptedServer) -> None:
    server.enqueue(ChatWire().text(["ok"]))
    await collect(chat_model(server), context(tools=[CLICK]), StreamOptions(tool_choice="required"))
    assert server.requests[0].body["tool_choice"] == "required"


async def test_strict_tools_when_requested(server: ScriptedServer) -> None:
    strict_ok = ToolSpec(
        "done", "Finish.", {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    )
    server.enqueue(ChatWire().text(["ok"]), ChatWire().text(["ok"]))
    await collect(chat_model(server, strict_tools=True), context(tools=[strict_ok]))
    fn = server.requests[0].body["tools"][0]["function"]
    assert fn["strict"] is True
    assert fn["parameters"]["additionalProperties"] is False
    # An optional property cannot be expressed in strict mode: fall back to strict=false for the batch.
    await collect(chat_model(server, strict_tools=True), context(tools=[strict_ok, CLICK]))
    assert [t["function"]["strict"] for t in server.requests[1].body["tools"]] == [False, False]


async def test_tool_result_images_follow_as_user_message(server: ScriptedServer) -> None:
    server.enqueue(ChatWire().text(["ok"]))
    await collect(chat_model(server), context(*tool_turn(), tools=[CLICK, TYPE_TEXT]))
    messages = server.requests[0].body["messages"][1:]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool", "user"]
    assistant = messages[1]
    assert assistant["content"] == "Clicking."
    assert assistant["tool_calls"][0] == {
        "id": "call_1",
        "type": "function",
        "function": {"name": "click", "arguments": '{"index": 3}'},
    }
    assert messages[2] == {"role": "tool", "tool_call_id": "call_1", "content": "clicked"}
    assert messages[3] == {"role": "tool", "tool_call_id": "call_2", "content": "(see attached image)"}
    images = messages[4]["content"]
    assert images[0] == {"type": "text", "text": "Attached image(s) from tool result:"}
    assert images[1:] == [{"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}] * 2


async def test_user_images_and_orphaned_call(server: ScriptedServer) -> None:
    history: list[Message] = [
        user("look", ImageContent(data=PNG, mime_type="image/jpeg")),
        AssistantMessage(
            provider="openai",
            api="openai-completions",
            model="gpt-4o-mini",
            stop_reason="toolUse",
            content=[ToolCall(id="call_9", name="click", arguments={"index": 1})],
        ),
        user("never mind"),
    ]
    server.enqueue(ChatWire().text(["ok"]))
    await collect(chat_model(server), context(*history, tools=[CLICK]))
    messages = server.requests[0].body["messages"][1:]
    assert messages[0]["content"][1] == {"type": "image_url", "image_url": {"url": f"data:image/jpeg;base64,{PNG}"}}
    assert messages[2] == {"role": "tool", "tool_call_id": "call_9", "content": "No result provided"}
    assert messages[3] == {"role": "user", "content": "never mind"}


async def test_reasoning_replayed_only_to_same_model(server: ScriptedServer) -> None:
    def turn(model: str) -> AssistantMessage:
        return AssistantMessage(
            provider="openai",
            api="openai-completions",
            model=model,
            content=[ThinkingContent(thinking="think", signature="reasoning_content"), TextContent(text="answer")],
        )

    server.enqueue(ChatWire().text(["ok"]), ChatWire().text(["ok"]))
    await collect(chat_model(server), context(user("q"), turn("gpt-4o-mini"), user("more")))
    await collect(chat_model(server), context(user("q"), turn("other-model"), user("more")))
    same = server.requests[0].body["messages"][2]
    other = server.requests[1].body["messages"][2]
    assert same == {"role": "assistant", "content": "answer", "reasoning_content": "think"}
    assert other == {"role": "assistant", "content": "thinkanswer"}


async def test_errored_turns_are_not_replayed(server: ScriptedServer) -> None:
    bad = AssistantMessage(stop_reason="error", error_message="boom", content=[TextContent(text="half")])
    server.enqueue(ChatWire().text(["ok"]))
    await collect(chat_model(server), context(user("q"), bad, user("again")))
    assert [m["role"] for m in server.requests[0].body["messages"]] == ["system", "user", "user"]


async def test_foreign_responses_ids_are_shortened(server: ScriptedServer) -> None:
    long_id = "call_" + "x" * 60 + "|fc_item"
    history = tool_turn(provider="openai", api="openai-responses", model="gpt-5")
    history[1].content[1] = ToolCall(id=long_id, name="click", arguments={"index": 3})
    history[2] = history[2].model_copy(update={"tool_call_id": long_id})
    server.enqueue(ChatWire().text(["ok"]))
    await collect(chat_model(server), context(*history, tools=[CLICK, TYPE_TEXT]))
    messages = server.requests[0].body["messages"]
    new_id = messages[2]["tool_calls"][0]["id"]
    assert len(new_id) <= 40 and "|" not in new_id
    assert messages[3]["tool_call_id"] == new_id


async def test_official_endpoint_fields() -> None:
    model = get_model("openai:gpt-4o", api_key="sk-test")
    assert isinstance(model, OpenAIChatModel)
    body = build_request(model, context(), StreamOptions(max_tokens=10, reasoning="low"))
    assert body["store"] is False and body["max_completion_tokens"] == 10 and body["reasoning_effort"] == "low"


async def test_compat_override_without_stream_usage(server: ScriptedServer) -> None:
    server.enqueue(ChatWire().text(["ok"], usage=False))
    model = chat_model(server, compat=ChatCompat(stream_usage=False, max_tokens_field="max_tokens"))
    msg = final(await collect(model, context()))
    assert "stream_options" not in server.requests[0].body
    assert msg.text == "ok" and msg.usage.total_tokens == 0


async def test_content_filter_is_an_error(server: ScriptedServer) -> None:
    server.enqueue(
        sse_reply([chat_chunk({"content": "I"}), chat_chunk({}, finish="content_filter"), "data: [DONE]\n\n"])
    )
    msg = final(await collect(chat_model(server), context()))
    assert msg.error_kind == "bad_request" and "content filter" in (msg.error_message or "")


async def test_length_inside_tool_call_says_so(server: ScriptedServer) -> None:
    call = {"index": 0, "id": "call_1", "function": {"name": "click", "arguments": '{"index": 1, "rea'}}
    server.enqueue(sse_reply([chat_chunk({"tool_calls": [call]}), chat_chunk({}, finish="length"), "data: [DONE]\n\n"]))
    msg = final(await collect(chat_model(server), context(tools=[CLICK])))
    assert msg.error_kind == "malformed"
    assert "token limit" in (msg.error_message or "")


async def test_in_stream_error_payload(server: ScriptedServer) -> None:
    error = json.dumps(
        {
            "error": {
                "message": "maximum context length is 8192 tokens",
                "type": "invalid_request_error",
                "code": "context_length_exceeded",
            }
        }
    )
    server.enqueue(sse_reply([chat_chunk({"content": "x"}), f"data: {error}\n\n"]))
    msg = final(await collect(chat_model(server), context()))
    assert msg.error_kind == "context_length"


async def test_parallel_calls_with_same_index_but_new_id_are_split(server: ScriptedServer) -> None:
    # Some servers restart index 0 for every call; a new id means a new call.
    first = {"index": 0, "id": "call_a", "function": {"name": "click", "arguments": '{"index": 1}'}}
    second = {"index": 0, "id": "call_b", "function": {"name": "click", "arguments": '{"index": 2}'}}
    server.enqueue(
        sse_reply(
            [
                chat_chunk({"tool_calls": [first]}),
                chat_chunk({"tool_calls": [second]}),
                *ChatWire().terminal("tool_calls"),
            ]
        )
    )
    msg = final(await collect(chat_model(server), context(tools=[CLICK])))
    assert [(c.id, c.arguments) for c in msg.tool_calls] == [("call_a", {"index": 1}), ("call_b", {"index": 2})]


# -- Mistral -----------------------------------------------------------------------------------------------


async def test_mistral_quirks_object_arguments_and_null_ids(server: ScriptedServer) -> None:
    calls = [
        {"id": "null", "function": {"name": "click", "arguments": {"index": 1}}},
        {"id": "null", "function": {"name": "type_text", "arguments": {"index": 2, "text": "Oslo"}}},
    ]
    again = {"index": 0, "id": "null", "function": {"name": "click", "arguments": {"index": 3}}}
    first = {"index": 0, "id": "null", "function": {"name": "click", "arguments": {"index": 4}}}
    items = [
        chat_chunk({"toolCalls": calls}),
        chat_chunk({"toolCalls": [first]}),
        chat_chunk({"toolCalls": [again]}),
        *MistralWire().terminal("tool_calls"),
    ]
    server.enqueue(sse_reply(items))
    msg = final(await collect(MistralWire().model(server.url), context(tools=[CLICK, TYPE_TEXT])))
    assert msg.stop_reason == "toolUse"
    assert [c.arguments for c in msg.tool_calls] == [
        {"index": 1},
        {"index": 2, "text": "Oslo"},
        {"index": 4},
        {"index": 3},
    ]
    ids = [c.id for c in msg.tool_calls]
    assert len(set(ids)) == 4 and "null" not in ids


async def test_mistral_request_shape(server: ScriptedServer) -> None:
    history = [*tool_turn(provider="anthropic", api="anthropic-messages", model="claude"), user("and now?")]
    history[1].content[1] = ToolCall(id="toolu_01ABCdef-ghi", name="click", arguments={"index": 3})
    history[2] = history[2].model_copy(update={"tool_call_id": "toolu_01ABCdef-ghi"})
    server.enqueue(MistralWire().text(["ok"]))
    await collect(
        MistralWire().model(server.url),
        context(*history, tools=[CLICK, TYPE_TEXT]),
        StreamOptions(max_tokens=50, tool_choice="click", parallel_tool_calls=False),
    )
    body = server.requests[0].body
    assert server.requests[0].headers["authorization"] == "Bearer test-key"
    assert "stream_options" not in body and "store" not in body and body["max_tokens"] == 50
    roles = [m["role"] for m in body["messages"]]
    # a user turn never directly follows tool results on Mistral
    assert roles == ["system", "user", "assistant", "tool", "tool", "assistant", "user", "user"]
    ids = [c["id"] for c in body["messages"][2]["tool_calls"]]
    assert all(len(i) == 9 and i.isalnum() for i in ids)
    assert body["messages"][3]["tool_call_id"] == ids[0] and body["messages"][3]["name"] == "click"
    assert body["messages"][4]["tool_call_id"] == ids[1]
    screenshots = body["messages"][6]["content"]
    assert screenshots[0]["text"] == "Attached image(s) from tool result:"
    assert screenshots[1]["image_url"]["url"] == f"data:image/png;base64,{PNG}"
    assert body["tool_choice"] == {"type": "function", "function": {"name": "click"}}
    assert body["parallel_tool_calls"] is False


async def test_mistral_default_endpoint() -> None:
    model = get_model("mistral:mistral-large-latest", api_key="k")
    assert isinstance(model, OpenAIChatModel)
    assert model.base_url and model.base_url.startswith("https://api.mistral.ai/v1")
    assert model.provider == "mistral" and model.id == "mistral-large-latest"

"""The same scenarios against every adapter, through its real SDK client and a local scripted server."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest

from notebook_agent.core.abort import AbortController
from notebook_agent.core.messages import TextContent, ThinkingContent, ToolCall
from notebook_agent.core.model import StreamOptions
from tests.llm.conftest import CLICK, TYPE_TEXT, collect, context, final
from tests.llm.server import Cut, Hang, ScriptedServer, free_port, sse_reply
from tests.llm.wire import CACHED, OUTPUT, PROMPT, Call, Wire, split
from tests.waits import wait_until


async def test_plain_text(server: ScriptedServer, wire: Wire) -> None:
    server.enqueue(wire.text(["Hel", "lo, ", "world"]))
    events = await collect(wire.model(server.url), context())
    msg = final(events)
    assert events[0].type == "start"
    assert [e.type for e in events if e.type.startswith("text")] == ["text_start"] + ["text_delta"] * 3 + ["text_end"]
    assert events[-1].type == "done"
    assert msg.text == "Hello, world"
    assert msg.stop_reason == "stop"
    assert msg.provider and msg.model == wire.model_id and msg.api
    assert msg.error_message is None


async def test_one_tool_call_in_many_fragments(server: ScriptedServer, wire: Wire) -> None:
    args = '{"index": 12, "reason": "the \\"Search\\" button, ünïcode"}'
    frags = split(args, 2) if wire.fragmented_args else [args]
    server.enqueue(sse_reply(wire.tool_calls([Call("call_abc", "click", frags)], mixed=True)))
    events = await collect(wire.model(server.url), context(tools=[CLICK]))
    msg = final(events)
    assert msg.stop_reason == "toolUse"
    assert msg.text == "Let me act."
    [call] = msg.tool_calls
    assert call.name == "click"
    assert call.arguments == {"index": 12, "reason": 'the "Search" button, ünïcode'}
    assert call.id
    deltas = [e for e in events if e.type == "toolcall_delta"]
    if wire.fragmented_args:
        assert len(deltas) >= len(frags)
        # previews grow while the JSON is still incomplete, never raising
        previews = [e.partial.content[e.content_index or 0] for e in deltas]
        assert all(isinstance(p, ToolCall) for p in previews)
    ends = [e for e in events if e.type == "toolcall_end"]
    assert len(ends) == 1 and ends[0].tool_call is not None
    assert ends[0].tool_call.arguments["index"] == 12


async def test_two_parallel_tool_calls_interleaved(server: ScriptedServer, wire: Wire) -> None:
    a = Call(None, "click", split('{"index": 1}', 2) if wire.fragmented_args else ['{"index": 1}'])
    b = Call(
        None,
        "type_text",
        split('{"index": 2, "text": "Oslo"}', 3) if wire.fragmented_args else ['{"index": 2, "text": "Oslo"}'],
    )
    server.enqueue(sse_reply(wire.tool_calls([a, b])))
    msg = final(await collect(wire.model(server.url), context(tools=[CLICK, TYPE_TEXT])))
    assert msg.stop_reason == "toolUse"
    calls = msg.tool_calls
    assert [c.name for c in calls] == ["click", "type_text"]
    assert calls[0].arguments == {"index": 1}
    assert calls[1].arguments == {"index": 2, "text": "Oslo"}
    assert calls[0].id != calls[1].id and all(c.id for c in calls)


async def test_thinking_then_text(server: ScriptedServer, wire: Wire) -> None:
    server.enqueue(sse_reply(wire.thinking(["Plan: ", "click search."], ["Done", "."], "c2lnbmF0dXJl")))
    events = await collect(wire.model(server.url), context(), StreamOptions(reasoning="low"))
    msg = final(events)
    assert msg.stop_reason == "stop"
    thinking = [p for p in msg.content if isinstance(p, ThinkingContent)]
    assert len(thinking) == 1
    assert thinking[0].thinking == "Plan: click search."
    assert msg.text == "Done."
    assert isinstance(msg.content[-1], TextContent)
    types = [e.type for e in events]
    assert types.index("thinking_end") < types.index("text_start")


async def test_usage_with_cached_tokens(server: ScriptedServer, wire: Wire) -> None:
    server.enqueue(wire.text(["ok"]))
    msg = final(
        await collect(wire.model(server.url, prices={"input": 1.0, "output": 2.0, "cache_read": 0.5}), context())
    )
    u = msg.usage
    assert (u.input, u.output, u.cache_read) == (PROMPT - CACHED, OUTPUT, CACHED)
    assert u.total_tokens == PROMPT + OUTPUT
    assert u.cost is not None and u.cost.total == pytest.approx(
        ((PROMPT - CACHED) * 1.0 + OUTPUT * 2.0 + CACHED * 0.5) / 1e6
    )


async def test_rate_limited_then_success(server: ScriptedServer, wire: Wire) -> None:
    server.enqueue(
        wire.error(429, "rate_limit_exceeded", "Rate limit reached, slow down"),
        wire.text(["after retry"]),
    )
    server.replies[0].headers["retry-after-ms"] = "10"
    msg = final(await collect(wire.model(server.url), context()))
    assert msg.text == "after retry"
    assert len(server.requests) == 2


async def test_server_error_after_retries(server: ScriptedServer, wire: Wire) -> None:
    for _ in range(2):
        server.enqueue(wire.error(500, "server_error", "The server had an error"))
        server.replies[-1].headers["retry-after-ms"] = "10"
    msg = final(await collect(wire.model(server.url, max_retries=1), context()))
    assert msg.stop_reason == "error"
    assert msg.error_kind == "server"
    assert "server error" in (msg.error_message or "")
    assert "retry" in (msg.error_message or "")
    assert len(server.requests) == 2


async def test_stream_cut_mid_arguments(server: ScriptedServer, wire: Wire) -> None:
    call = Call("call_1", "click", split('{"index": 12, "reason": "long"}', 4))
    items = wire.tool_calls([call], mixed=True, terminal=False)
    server.enqueue(sse_reply([*items, Cut()]))
    events = await collect(wire.model(server.url, max_retries=0), context(tools=[CLICK]))
    msg = final(events)
    assert events[-1].type == "error"
    assert msg.error_kind == "stream_cut"
    assert "cut" in (msg.error_message or "") or "ended" in (msg.error_message or "")
    assert msg.tool_calls == []  # unfinished arguments are never executable
    if wire.fragmented_args:
        assert "tool call" in (msg.error_message or "")


async def test_stream_ends_without_terminal_event(server: ScriptedServer, wire: Wire) -> None:
    server.enqueue(sse_reply(wire.text_items(["partial"], terminal=False)))
    msg = final(await collect(wire.model(server.url, max_retries=0), context()))
    assert msg.error_kind == "stream_cut"
    assert msg.text == "partial"


async def test_abort_mid_stream_is_prompt(server: ScriptedServer, wire: Wire) -> None:
    server.enqueue(sse_reply([*wire.text_items(["first ", "chunk"], terminal=False), Hang(10)]))
    controller = AbortController()
    model = wire.model(server.url)
    events = []
    t_abort = 0.0
    async for event in model.stream(context(), StreamOptions(signal=controller.signal)):
        events.append(event)
        if event.type == "text_delta" and not t_abort:
            asyncio.get_running_loop().call_later(0.05, controller.abort, "user pressed stop")
            t_abort = time.monotonic() + 0.05
    elapsed = time.monotonic() - t_abort
    msg = final(events)
    assert elapsed < 1.0, f"abort took {elapsed:.2f}s"
    assert events[-1].type == "error"
    assert msg.stop_reason == "aborted" and msg.error_kind == "aborted"
    assert "user pressed stop" in (msg.error_message or "")
    assert msg.text.startswith("first")


async def test_abort_before_request(server: ScriptedServer, wire: Wire) -> None:
    controller = AbortController()
    controller.abort("cancelled early")
    msg = final(await collect(wire.model(server.url), context(), StreamOptions(signal=controller.signal)))
    assert msg.stop_reason == "aborted"
    assert server.requests == []


async def test_connection_refused(wire: Wire) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    msg = final(await collect(wire.model(url, max_retries=0), context()))
    assert msg.error_kind == "connection"
    text = msg.error_message or ""
    assert "Could not connect" in text and "127.0.0.1" in text and "running" in text


async def test_read_timeout(server: ScriptedServer, wire: Wire) -> None:
    server.enqueue(sse_reply([Hang(5)]))
    msg = final(await collect(wire.model(server.url, max_retries=0, timeout=0.3), context()))
    assert msg.error_kind == "timeout"
    assert "timed out" in (msg.error_message or "")


async def test_auth_error_names_the_key(server: ScriptedServer, wire: Wire) -> None:
    server.enqueue(wire.error(401, "authentication_error", "Incorrect API key provided"))
    msg = final(await collect(wire.model(server.url), context()))
    assert msg.error_kind == "auth"
    text = msg.error_message or ""
    assert "Incorrect API key provided" in text
    assert "_API_KEY" in text
    assert len(server.requests) == 1  # 401 is not retried


async def test_context_length_refusal(server: ScriptedServer, wire: Wire) -> None:
    server.enqueue(
        wire.error(400, "invalid_request_error", "prompt is too long: 250000 tokens > 200000 maximum context length")
    )
    msg = final(await collect(wire.model(server.url), context()))
    assert msg.error_kind == "context_length"
    assert "context window" in (msg.error_message or "")


async def test_malformed_final_arguments(server: ScriptedServer, wire: Wire) -> None:
    if not wire.fragmented_args:
        pytest.skip("Gemini sends parsed arguments; nothing to be malformed")
    server.enqueue(sse_reply(wire.tool_calls([Call("call_1", "click", ['{"index": ', "12,,}"])])))
    events = await collect(wire.model(server.url), context(tools=[CLICK]))
    msg = final(events)
    assert events[-1].type == "error"
    assert msg.error_kind == "malformed"
    assert "click" in (msg.error_message or "") and "malformed" in (msg.error_message or "")
    assert msg.tool_calls == []


async def test_unknown_forced_tool_is_a_clear_error(server: ScriptedServer, wire: Wire) -> None:
    msg = final(await collect(wire.model(server.url), context(tools=[CLICK]), StreamOptions(tool_choice="scroll")))
    assert msg.error_kind == "bad_request"
    assert "scroll" in (msg.error_message or "") and "click" in (msg.error_message or "")
    assert server.requests == []


async def test_abort_during_sdk_retry_backoff(
    server: ScriptedServer, wire: Wire, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)  # each SDK logs "Retrying ..." at INFO right before its backoff sleep
    server.enqueue(wire.error(429, "rate_limit_exceeded", "slow down"), wire.text(["never"]))
    server.replies[0].headers["retry-after-ms"] = "5000"
    extra = {"retry_options": {"initial_delay": 5.0, "jitter": 0.0}} if wire.name == "google" else {}
    model = wire.model(server.url, **extra)
    controller = AbortController()

    async def abort_once_rate_limited() -> float:
        await asyncio.to_thread(server.got_request.wait, 10)
        await wait_until(
            lambda: any(r.getMessage().startswith("Retrying") for r in caplog.records),
            10,
            "the SDK said it is waiting before its retry",
        )
        controller.abort("stop")
        return time.monotonic()

    aborter = asyncio.create_task(abort_once_rate_limited())
    msg = final(await collect(model, context(), StreamOptions(signal=controller.signal)))
    assert time.monotonic() - await aborter < 1.0
    assert msg.stop_reason == "aborted"
    assert len(server.requests) == 1


async def test_a_malformed_event_in_the_stream_is_a_cut_stream(server: ScriptedServer, wire: Wire) -> None:
    """An SSE event whose data is not JSON is a damaged stream, like a cut one: named as such, not as the
    parser's raw text, and the partial answer is kept."""
    server.enqueue(sse_reply([*wire.text_items(["partial"], terminal=False), 'data: {"broken": \n\n']))
    msg = final(await collect(wire.model(server.url, max_retries=0), context()))
    assert msg.error_kind == "stream_cut", (msg.error_kind, msg.error_message)
    assert "Expecting" not in (msg.error_message or "")  # not the JSON parser's own words

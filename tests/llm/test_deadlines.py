"""Deadlines and honest retry counts, by fault injection against the scripted wire servers.

Every faulty server here would hold the call until the SDK's read timeout (set to 60 s, far above the loose
10 s bound asserted) if the deadlines did not end it. Each test checks the error kind and message, that the
partial text is kept, and that the server saw its connection closed by the client (nothing left dangling).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from notebook_agent.core.model import Deadlines, StreamOptions
from notebook_agent.llm import get_model
from tests.llm.conftest import CLICK, collect, context, final
from tests.llm.server import Cut, Drip, Hang, Pause, Reply, ScriptedServer, sse_reply
from tests.llm.wire import WIRES, AnthropicWire, Call, ResponsesWire, Wire, anth, chat_chunk, split

FAST = Deadlines(first_token=0.25, idle=0.25, total=5.0)
BOUND = 10.0
"""Loose upper bound on a call that a deadline ended; the SDK read timeout in these tests is 60 s."""


@pytest.fixture(params=["openai", "openai-responses", "anthropic", "google"])
def any_wire(request: pytest.FixtureRequest) -> Wire:
    return WIRES[request.param]()


@pytest.fixture(params=["openai", "openai-responses", "anthropic"])
def fragment_wire(request: pytest.FixtureRequest) -> Wire:
    """Protocols that stream tool-call arguments in fragments."""
    return WIRES[request.param]()


def slow_sdk_model(wire: Wire, server: ScriptedServer, deadlines: Any = FAST, **kw: Any) -> Any:
    kw.setdefault("max_retries", 0)
    return wire.model(server.url, timeout=60, deadlines=deadlines, **kw)


def keepalive(wire: Wire) -> str:
    """An event each protocol may send while it has nothing to say: not content."""
    if wire.name == "anthropic":
        return anth("ping")
    if isinstance(wire, ResponsesWire):
        return wire.ev("response.in_progress", response=wire.response("in_progress", usage=False))
    return chat_chunk({})


def open_text(wire: Wire) -> list[Any]:
    """Items that open the answer with the text "a" and leave the text block open."""
    if isinstance(wire, ResponsesWire):
        return [*wire.text_items(["a"], terminal=False)[:3], text_delta(wire)]
    if isinstance(wire, AnthropicWire):
        block = {"type": "text", "text": ""}
        return [*wire.start(), anth("content_block_start", index=0, content_block=block), text_delta(wire)]
    return [chat_chunk({"role": "assistant", "content": ""}), text_delta(wire)]


def text_delta(wire: Wire) -> str:
    """One event adding the text "a" to the open text block."""
    if isinstance(wire, ResponsesWire):
        return wire.ev("response.output_text.delta", item_id="msg_1", output_index=0, content_index=0, delta="a")
    if wire.name == "anthropic":
        return anth("content_block_delta", index=0, delta={"type": "text_delta", "text": "a"})
    return chat_chunk({"content": "a"})


async def timed(model: Any, options: StreamOptions | None = None, **ctx: Any) -> tuple[Any, float]:
    started = time.monotonic()
    msg = final(await collect(model, context(**ctx), options))
    return msg, time.monotonic() - started


async def assert_closed(server: ScriptedServer) -> None:
    # A hang guard, not a speed limit: the held replies last 30 s, and a loaded machine (the whole suite on two
    # cores) once took over 5 s to let the cancelled SDK call close its socket.
    closed = await asyncio.to_thread(server.closed_event.wait, 20.0)
    assert closed, "the server never saw the client close the connection"


# -- first token ----------------------------------------------------------------------------------------


async def test_server_that_never_sends_headers(server: ScriptedServer, any_wire: Wire) -> None:
    server.enqueue(Reply(stream=any_wire.text_items(["late"]), hold_headers=30))
    msg, elapsed = await timed(slow_sdk_model(any_wire, server))
    assert 0.25 <= elapsed < BOUND
    assert msg.stop_reason == "error" and msg.error_kind == "timeout"
    text = msg.error_message or ""
    assert "did not answer within 0.25 s (first_token deadline)" in text
    assert "deadlines={'first_token': 0.5}" in text
    assert "retr" not in text  # one request was made
    await assert_closed(server)
    assert len(server.requests) == 1


async def test_stall_after_headers(server: ScriptedServer, any_wire: Wire) -> None:
    server.enqueue(sse_reply([Hang(30)]))
    msg, elapsed = await timed(slow_sdk_model(any_wire, server))
    assert elapsed < BOUND
    assert msg.error_kind == "timeout"
    assert "accepted the request but sent no content within 0.25 s (first_token deadline)" in (msg.error_message or "")
    await assert_closed(server)


async def test_whitespace_drip_is_silence(server: ScriptedServer, fragment_wire: Wire) -> None:
    # SSE comments keep the socket busy, so the SDK read timeout never fires, but carry nothing.
    server.enqueue(sse_reply([Drip(": keepalive\n\n")]))
    msg, elapsed = await timed(slow_sdk_model(fragment_wire, server))
    assert elapsed < BOUND
    assert msg.error_kind == "timeout" and "first_token deadline" in (msg.error_message or "")
    await assert_closed(server)


async def test_protocol_keepalives_are_not_content(server: ScriptedServer, fragment_wire: Wire) -> None:
    start = fragment_wire.text_items([], terminal=False)[:1]
    server.enqueue(sse_reply([*start, Drip(keepalive(fragment_wire))]))
    msg, elapsed = await timed(slow_sdk_model(fragment_wire, server))
    assert elapsed < BOUND
    assert msg.error_kind == "timeout" and "first_token deadline" in (msg.error_message or "")
    await assert_closed(server)


async def test_an_opened_reasoning_item_is_not_the_first_token(server: ScriptedServer) -> None:
    # A Responses reasoning model opens its reasoning item at once and may think for minutes before any
    # text: that wait belongs to first_token, not to idle.
    wire = ResponsesWire()
    reasoning = {"id": "rs_1", "type": "reasoning", "summary": []}
    opened = wire.ev("response.output_item.added", output_index=0, item=reasoning)
    server.enqueue(sse_reply([*wire.start(), opened, Hang(30)]))
    deadlines = Deadlines(first_token=0.6, idle=0.2, total=5.0)
    msg, elapsed = await timed(slow_sdk_model(wire, server, deadlines))
    assert 0.6 <= elapsed < BOUND
    assert "0.6 s (first_token deadline)" in (msg.error_message or "")


# -- idle -----------------------------------------------------------------------------------------------


async def test_silence_mid_answer_keeps_the_partial_text(server: ScriptedServer, any_wire: Wire) -> None:
    server.enqueue(sse_reply([*any_wire.text_items(["Hello, ", "wor"], terminal=False), Hang(30)]))
    msg, elapsed = await timed(slow_sdk_model(any_wire, server))
    assert elapsed < BOUND
    assert msg.stop_reason == "error" and msg.error_kind == "timeout"
    assert msg.text == "Hello, wor"
    text = msg.error_message or ""
    assert "went silent for 0.25 s (idle deadline)" in text
    assert "partial response (10 characters of text) was kept" in text
    await assert_closed(server)


async def test_stall_mid_tool_call(server: ScriptedServer, fragment_wire: Wire) -> None:
    call = Call("call_1", "click", split('{"index": 12, "reason": "x"}', 4))
    items = fragment_wire.tool_calls([call], mixed=True, terminal=False)
    server.enqueue(sse_reply([*items, Hang(30)]))
    msg, elapsed = await timed(slow_sdk_model(fragment_wire, server), tools=[CLICK])
    assert elapsed < BOUND
    assert msg.error_kind == "timeout"
    assert "in the middle of a tool call (idle deadline)" in (msg.error_message or "")
    assert msg.tool_calls == []  # half-streamed arguments are never executable
    assert msg.text == "Let me act."
    await assert_closed(server)


async def test_keepalives_after_content_do_not_reset_idle(server: ScriptedServer, fragment_wire: Wire) -> None:
    server.enqueue(sse_reply([*open_text(fragment_wire), Drip(keepalive(fragment_wire))]))
    msg, elapsed = await timed(slow_sdk_model(fragment_wire, server))
    assert elapsed < BOUND
    assert msg.error_kind == "timeout" and "idle deadline" in (msg.error_message or "")
    assert msg.text == "a"
    await assert_closed(server)


# -- total ----------------------------------------------------------------------------------------------


async def test_tiny_deltas_forever(server: ScriptedServer, fragment_wire: Wire) -> None:
    server.enqueue(sse_reply([*open_text(fragment_wire), Drip(text_delta(fragment_wire), every=0.05)]))
    deadlines = Deadlines(first_token=0.25, idle=0.25, total=0.5)
    msg, elapsed = await timed(slow_sdk_model(fragment_wire, server, deadlines))
    assert 0.5 <= elapsed < BOUND
    assert msg.error_kind == "timeout"
    text = msg.error_message or ""
    assert "still running after 0.5 s (total deadline)" in text and "deadlines={'total': 1}" in text
    assert len(msg.text) > 2 and set(msg.text) == {"a"}
    await assert_closed(server)


# -- what a deadline must not do ------------------------------------------------------------------------


async def test_cut_connection_is_a_cut_not_a_timeout(server: ScriptedServer, fragment_wire: Wire) -> None:
    server.enqueue(sse_reply([*fragment_wire.text_items(["par", "tial"], terminal=False), Cut()]))
    # deadlines a loaded machine cannot reach before the cut: the cut is what this test is about
    msg, elapsed = await timed(slow_sdk_model(fragment_wire, server, Deadlines(first_token=5.0, idle=5.0, total=9.0)))
    assert elapsed < BOUND
    assert msg.error_kind == "stream_cut"
    assert msg.text == "partial"


async def test_pauses_shorter_than_the_deadlines_pass(server: ScriptedServer) -> None:
    wire = WIRES["anthropic"]()
    items = wire.text_items(["one ", "two"])
    paced: list[Any] = [Pause(0.1)]
    for item in items:
        paced += [item, Pause(0.05)]
    server.enqueue(sse_reply(paced))
    deadlines = Deadlines(first_token=2.0, idle=0.5, total=10.0)
    msg, _ = await timed(slow_sdk_model(wire, server, deadlines))
    assert msg.stop_reason == "stop" and msg.text == "one two"


async def test_a_slow_consumer_is_not_server_silence(server: ScriptedServer) -> None:
    wire = WIRES["openai"]()
    server.enqueue(wire.text(["a", "b", "c"]))
    model = slow_sdk_model(wire, server, Deadlines(first_token=2.0, idle=0.2, total=10.0))
    events = []
    async for event in model.stream(context(), StreamOptions()):
        events.append(event)
        if event.type == "text_delta":
            await asyncio.sleep(0.3)  # longer than idle, but the server answered at once
    msg = final(events)
    assert msg.stop_reason == "stop" and msg.text == "abc"


async def test_per_call_deadlines_override_the_model(server: ScriptedServer) -> None:
    wire = WIRES["anthropic"]()
    server.enqueue(sse_reply([Hang(30)]))
    model = slow_sdk_model(wire, server, deadlines=None)
    assert model.deadlines.first_token == 300.0  # 127.0.0.1 is a local server
    msg, elapsed = await timed(model, StreamOptions(deadlines=FAST))
    assert elapsed < BOUND
    assert msg.error_kind == "timeout" and "0.25 s (first_token deadline)" in (msg.error_message or "")
    server.enqueue(sse_reply([*wire.text_items(["so far"], terminal=False), Hang(30)]))
    msg, elapsed = await timed(model, StreamOptions(deadlines={"idle": 0.25}))  # by name, the rest kept
    assert elapsed < BOUND
    assert msg.text == "so far" and "went silent for 0.25 s (idle deadline)" in (msg.error_message or "")


# -- honest retry counts --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["openai", "anthropic", "google"])  # the three SDKs' retry loops
async def test_deadline_after_a_retry_says_so(server: ScriptedServer, name: str) -> None:
    wire = WIRES[name]()
    server.enqueue(wire.error(500, "server_error", "boom"), sse_reply([Hang(30)]))
    server.replies[0].headers["retry-after-ms"] = "10"
    deadlines = Deadlines(first_token=0.8, idle=0.8, total=10.0)
    msg, elapsed = await timed(slow_sdk_model(wire, server, deadlines, max_retries=2))
    assert elapsed < BOUND
    assert len(server.requests) == 2
    assert "(first_token deadline, after 1 retry)" in (msg.error_message or "")


async def test_single_server_error_claims_no_retries(server: ScriptedServer, fragment_wire: Wire) -> None:
    server.enqueue(fragment_wire.error(500, "server_error", "The server had an error"))
    msg = final(await collect(fragment_wire.model(server.url, max_retries=0), context()))
    assert len(server.requests) == 1
    assert msg.error_kind == "server"
    text = msg.error_message or ""
    assert "retr" not in text and "overloaded" not in text
    assert "The server had an error" in text


@pytest.mark.parametrize("name", ["openai", "anthropic"])
async def test_sdk_timeout_counts_the_requests_made(server: ScriptedServer, name: str) -> None:
    # The SDKs retry a request whose headers time out (not a body read that stalls later).
    wire = WIRES[name]()
    never = wire.text_items(["late"])
    server.enqueue(Reply(stream=never, hold_headers=5), Reply(stream=never, hold_headers=5))
    msg = final(await collect(wire.model(server.url, max_retries=1, timeout=0.25), context()))
    assert msg.error_kind == "timeout"
    assert len(server.requests) == 2
    assert "timed out (after 1 automatic retry)" in (msg.error_message or "")


async def test_sdk_timeout_without_retries_says_none(server: ScriptedServer) -> None:
    server.enqueue(sse_reply([Hang(5)]))
    msg = final(await collect(WIRES["openai"]().model(server.url, max_retries=0, timeout=0.3), context()))
    assert msg.error_kind == "timeout" and "timed out" in (msg.error_message or "")
    assert "retr" not in (msg.error_message or "")


# -- the settings themselves ----------------------------------------------------------------------------


def test_defaults_hosted_and_local() -> None:
    hosted = get_model("openai:gpt-4o-mini", api_key="k")
    assert hosted.deadlines == Deadlines(first_token=120.0, idle=60.0, total=600.0)  # type: ignore[attr-defined]
    local = get_model("openai:llama3.1:8b", base_url="http://localhost:11434/v1")
    assert local.deadlines == Deadlines.for_local_server()  # type: ignore[attr-defined]
    tuned = get_model("anthropic:claude-sonnet-4-6", api_key="k", deadlines={"first_token": 30, "total": None})
    assert tuned.deadlines == Deadlines(first_token=30, idle=60.0, total=None)  # type: ignore[attr-defined]
    assert tuned.deadlines.describe() == "first token 30 s, idle 60 s, total off"  # type: ignore[attr-defined]


@pytest.mark.parametrize("bad", [0, -1, float("inf"), float("nan"), "10", True])
def test_invalid_deadline_is_refused(bad: Any) -> None:
    with pytest.raises(ValueError, match="positive number of seconds"):
        Deadlines(idle=bad)


def test_unknown_deadline_name_is_refused() -> None:
    with pytest.raises(ValueError, match="first_token, idle, total"):
        get_model("openai:gpt-4o-mini", api_key="k", deadlines={"first_byte": 3})


async def test_unwatched_client_falls_back_to_the_retry_header(
    server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A client whose HTTP layer cannot be hooked: retries come from the SDK's x-stainless-retry-count header,
    # and the first-token clock runs from the start of the call.
    import notebook_agent.llm.convert as convert

    monkeypatch.setattr(convert, "watch_requests", lambda client, path=("_client",): False)
    wire = WIRES["anthropic"]()
    for _ in range(2):
        server.enqueue(wire.error(500, "api_error", "boom"))
        server.replies[-1].headers["retry-after-ms"] = "10"
    msg = final(await collect(wire.model(server.url, max_retries=1), context()))
    assert len(server.requests) == 2
    assert "(after 1 automatic retry)" in (msg.error_message or "")
    server.enqueue(sse_reply([Hang(30)]))
    msg, elapsed = await timed(slow_sdk_model(wire, server, Deadlines(first_token=1.0, idle=1.0, total=5.0)))
    assert elapsed < BOUND
    assert "sent no content within 1 s (first_token deadline)" in (msg.error_message or "")

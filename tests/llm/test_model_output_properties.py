"""What a misbehaving model streams, through the real SDKs and the scripted wire server, property-tested.

Random tool-call arguments (well-formed, double-encoded, not an object, truncated, 100k levels deep, random
text; lone and split surrogates throughout) are split into random fragments and replayed as each provider's
SSE. The adapter must never raise: it ends either with the intended dict or with a clean ``malformed``
error, and the final message always encodes as UTF-8 JSON (what saving a run and the widgets do).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.llm.conftest import CLICK, collect, context, final
from tests.llm.server import ScriptedServer, sse_reply
from tests.llm.wire import WIRES, Call
from tests.model_outputs import (
    CHARS,
    MALFORMED,
    UNKNOWN,
    Arguments,
    expected_text,
    fragments,
    in_code_units,
    tool_arguments,
)

PROTOCOLS = ["openai", "openai-responses", "anthropic"]
SETTINGS = settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.fixture(scope="module")
def shared_server() -> Iterator[ScriptedServer]:
    srv = ScriptedServer().start()
    yield srv
    srv.stop()


_models: dict[str, Any] = {}


def model_for(name: str, server: ScriptedServer) -> Any:
    """One model per protocol for the whole module: building an SDK client per example is slow."""
    if name not in _models:
        _models[name] = WIRES[name]().model(server.url, max_retries=0)
    return _models[name]


def assert_encodable(message: Any) -> None:
    json.dumps(message.model_dump(mode="json"), ensure_ascii=False).encode("utf-8")


@pytest.mark.parametrize("name", PROTOCOLS)
@SETTINGS
@given(data=st.data())
async def test_random_tool_arguments_never_escape_the_adapter(
    shared_server: ScriptedServer, name: str, data: st.DataObject
) -> None:
    args: Arguments = data.draw(tool_arguments(), label="arguments")
    pieces = data.draw(fragments(args.text), label="fragments")
    wire = WIRES[name]()
    shared_server.enqueue(sse_reply(wire.tool_calls([Call("call_1", "click", pieces)])))
    msg = final(await collect(model_for(name, shared_server), context(tools=[CLICK])))
    assert_encodable(msg)
    if msg.stop_reason == "error":
        assert msg.error_kind == "malformed", msg.error_message
        assert args.expected in (MALFORMED, UNKNOWN), f"{args.mode}: {msg.error_message}"
        assert msg.tool_calls == []
        return
    assert msg.stop_reason == "toolUse"
    [call] = msg.tool_calls
    assert args.expected != MALFORMED, f"{args.mode} parsed as {call.arguments!r}"
    if args.expected != UNKNOWN:
        assert call.arguments == args.expected


@pytest.mark.parametrize("name", PROTOCOLS)
@settings(SETTINGS, max_examples=8)
@given(data=st.data())
async def test_random_answer_text_is_cleaned(shared_server: ScriptedServer, name: str, data: st.DataObject) -> None:
    text = in_code_units(data.draw(st.text(CHARS, min_size=1, max_size=30), label="text"))
    pieces = data.draw(fragments(text), label="fragments")
    shared_server.enqueue(WIRES[name]().text(pieces))
    msg = final(await collect(model_for(name, shared_server), context()))
    assert msg.stop_reason == "stop", msg.error_message
    assert msg.text == expected_text(text)
    assert_encodable(msg)

"""Pure transforms: transcript repair (§5.0), id normalisers, strict schemas, tool choice, prices, errors."""

from __future__ import annotations

from typing import TypedDict

import pytest

from notebook_agent.core.messages import (
    AssistantMessage,
    Message,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    user,
)
from notebook_agent.core.model import compute_cost
from notebook_agent.llm.convert import (
    MistralIdNormalizer,
    check_tool_choice,
    sanitize_id,
    sanitize_text,
    strict_schema,
    transform_messages,
)
from notebook_agent.llm.errors import BadRequestError, ErrorContext, classify_error
from notebook_agent.llm.pricing import prices_for
from tests.llm.conftest import CLICK


class Target(TypedDict):
    """The model a transcript is converted for (``transform_messages``'s keywords)."""

    provider: str
    api: str
    model: str


TARGET: Target = {"provider": "anthropic", "api": "anthropic-messages", "model": "claude-x"}


def assistant(*content: object, stop: str = "toolUse", **origin: str) -> AssistantMessage:
    meta = {**TARGET, **origin}
    return AssistantMessage(content=list(content), stop_reason=stop, **meta)


def test_errored_and_aborted_turns_are_dropped_with_their_results() -> None:
    messages: list[Message] = [
        user("a"),
        assistant(ToolCall(id="t1", name="click"), stop="error"),
        ToolResultMessage(tool_call_id="t1", tool_name="click"),
        assistant(TextContent(text="half"), stop="aborted"),
        user("b"),
    ]
    out = transform_messages(messages, **TARGET)
    assert [m.role for m in out] == ["user", "user"]


def test_orphaned_calls_get_a_synthetic_result_before_the_next_turn() -> None:
    messages: list[Message] = [
        user("a"),
        assistant(ToolCall(id="t1", name="click"), ToolCall(id="t2", name="scroll")),
        ToolResultMessage(tool_call_id="t1", tool_name="click", content=[TextContent(text="ok")]),
        user("b"),
        assistant(ToolCall(id="t3", name="click")),
    ]
    out = transform_messages(messages, **TARGET)
    assert [m.role for m in out] == ["user", "assistant", "toolResult", "toolResult", "user", "assistant"]
    synthetic = out[3]
    assert isinstance(synthetic, ToolResultMessage)
    assert (synthetic.tool_call_id, synthetic.is_error, synthetic.text) == ("t2", True, "No result provided")
    # the call at the very end is still being answered: not patched


def test_foreign_thinking_becomes_text_and_signatures_are_stripped() -> None:
    foreign = assistant(
        ThinkingContent(thinking="reason", signature="s"),
        ThinkingContent(thinking="x", signature="r", redacted=True),
        ThinkingContent(thinking="  "),
        TextContent(text="hi", signature="t"),
        ToolCall(id="call|fc", name="click", thought_signature="sig"),
        provider="openai",
        api="openai-responses",
        model="gpt-5",
    )
    result = ToolResultMessage(tool_call_id="call|fc", tool_name="click")
    out = transform_messages([user("q"), foreign, result], normalize_id=lambda i: sanitize_id(i), **TARGET)
    converted = out[1]
    assert isinstance(converted, AssistantMessage)
    assert converted.content == [
        TextContent(text="reason"),
        TextContent(text="hi"),
        ToolCall(id="call_fc", name="click"),
    ]
    assert isinstance(out[2], ToolResultMessage) and out[2].tool_call_id == "call_fc"


def test_same_model_keeps_signed_empty_thinking() -> None:
    own = assistant(ThinkingContent(thinking="", signature="enc"), ThinkingContent(thinking=""), TextContent(text="a"))
    out = transform_messages([user("q"), own], **TARGET)
    assert isinstance(out[1], AssistantMessage)
    assert out[1].content == [ThinkingContent(thinking="", signature="enc"), TextContent(text="a")]


def test_mistral_ids_are_nine_alphanumerics_stable_and_distinct() -> None:
    normalize = MistralIdNormalizer()
    assert normalize("abcDEF123") == "abcDEF123"
    a = normalize("toolu_01ABC")
    b = normalize("call_xyz|fc_1")
    assert len(a) == len(b) == 9 and a.isalnum() and b.isalnum() and a != b
    assert normalize("toolu_01ABC") == a
    assert normalize("abc-DEF-123") != normalize("abcDEF123")  # collision avoided


def test_sanitize() -> None:
    assert sanitize_id("call|fc.1", 64) == "call_fc_1"
    assert len(sanitize_id("x" * 100, 40)) == 40
    assert sanitize_text("ok \ud83d end") == "ok  end"
    assert sanitize_text("emoji 😀") == "emoji 😀"


def test_strict_schema() -> None:
    schema, ok = strict_schema({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]})
    assert ok and schema["additionalProperties"] is False
    _, ok = strict_schema(CLICK.parameters)  # optional "reason"
    assert not ok
    _, ok = strict_schema({"type": "object", "properties": {"a": {"type": ["string", "null"]}}, "required": ["a"]})
    assert not ok


def test_tool_choice_validation() -> None:
    assert check_tool_choice(None, [CLICK]) is None
    assert check_tool_choice("auto", []) is None
    assert check_tool_choice("click", [CLICK]) == "click"
    with pytest.raises(BadRequestError, match="no tools"):
        check_tool_choice("required", [])
    with pytest.raises(BadRequestError, match="'scroll'"):
        check_tool_choice("scroll", [CLICK])


def test_prices() -> None:
    assert prices_for("gpt-4o-mini-2024-07-18") == prices_for("gpt-4o-mini")
    assert prices_for("gpt-4o-2024-08-06") == prices_for("gpt-4o")
    assert prices_for("claude-sonnet-4-20250514") == prices_for("claude-sonnet-4")
    assert prices_for("my-local-llama") is None
    usage = Usage(input=1_000_000, output=1_000_000, cache_read=1_000_000)
    compute_cost(usage, prices_for("gpt-4o"))
    assert usage.cost is not None and usage.cost.total == pytest.approx(2.5 + 10.0 + 1.25)


def test_classify_plain_exceptions() -> None:
    ctx = ErrorContext(provider="openai", model="m", base_url="http://x")
    assert classify_error(TimeoutError(), ctx)[0] == "timeout"
    assert classify_error(ConnectionRefusedError("refused"), ctx)[0] == "connection"
    kind, message = classify_error(KeyError("oops"), ctx)
    assert kind == "bad_request" and "KeyError" in message

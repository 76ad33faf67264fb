"""The builder's cleaning of model text and its final parse of tool arguments, property-tested.

Whatever a provider streams (lone or split surrogates, arguments that are invalid, not an object,
double-encoded or 100k levels deep), the builder must end with a message that encodes as UTF-8 JSON, and a
tool call is either the intended dict or a MalformedToolCallError, never another exception.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from notebook_agent.core.model import AssistantStreamBuilder, clean_text
from notebook_agent.core.tool_arguments import MAX_ARGUMENT_DEPTH, MalformedToolCallError, parse_tool_arguments
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


def builder() -> AssistantStreamBuilder:
    return AssistantStreamBuilder(api="test", provider="test", model="m")


def assert_encodable(b: AssistantStreamBuilder) -> None:
    json.dumps(b.message.model_dump(mode="json"), ensure_ascii=False).encode("utf-8")


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_streamed_text_is_cleaned_and_split_pairs_rejoined(data: st.DataObject) -> None:
    text = in_code_units(data.draw(st.text(CHARS, max_size=30)))
    pieces = data.draw(fragments(text))
    b = builder()
    events = [e for piece in pieces for e in b.thinking_delta("k", piece)]
    events += [e for piece in pieces for e in b.text_delta("t", piece)]
    b.finish()
    assert b.message.text == expected_text(text)
    assert b.message.content[0].thinking == expected_text(text)  # type: ignore[union-attr]
    for event in events:
        (event.delta or "").encode("utf-8")  # every delta is encodable on its own
    assert_encodable(b)


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_tool_arguments_parse_to_the_intended_dict_or_malformed(data: st.DataObject) -> None:
    args: Arguments = data.draw(tool_arguments())
    b = builder()
    b.tool_call_delta("c", id="call_1", name="click")
    for piece in data.draw(fragments(args.text)):
        b.tool_call_delta("c", arguments=piece)  # previews must never raise either
    try:
        b.finish()
    except MalformedToolCallError as exc:
        assert args.expected in (MALFORMED, UNKNOWN), f"{args.mode}: {exc}"
        str(exc).encode("utf-8")
        return
    [call] = b.message.tool_calls
    assert args.expected != MALFORMED, f"{args.mode} parsed as {call.arguments!r}"
    if args.expected != UNKNOWN:
        assert call.arguments == args.expected
    assert isinstance(call.arguments, dict)
    assert_encodable(b)


@pytest.mark.parametrize(
    ("text", "outcome"),
    [
        ('"{\\"index\\": 3}"', {"index": 3}),  # the whole object double-encoded
        ('"[1]"', "a string"),
        ("[1, 2]", "an array"),
        ("null", "null"),
        ("7", "a number"),
        ('{"a": ' * 100_000, "nest deeper"),  # unterminated too, but the depth is found first
        ('{"a": 1,,}', "not valid JSON"),
        ("[" * 100_000 + "]" * 100_000, "nest deeper"),
        ('{"a": ' + "[" * MAX_ARGUMENT_DEPTH + "]" * MAX_ARGUMENT_DEPTH + "}", "nest deeper"),
        ('{"k": "\\ud800 and \\udc00"}', {"k": "\ufffd and \ufffd"}),
        ('{"\\ud83d\\ude00": 1}', {"😀": 1}),
    ],
)
def test_parse_tool_arguments_examples(text: str, outcome: object) -> None:
    if isinstance(outcome, dict):
        assert parse_tool_arguments("click", text) == outcome
    else:
        with pytest.raises(MalformedToolCallError, match=str(outcome)):
            parse_tool_arguments("click", text)


def test_a_surrogate_pair_split_across_deltas_is_one_character() -> None:
    b = builder()
    first = b.text_delta("t", "smile \ud83d")
    second = b.text_delta("t", "\ude00!")
    b.finish()
    assert [e.delta for e in first + second if e.delta] == ["smile ", "😀!"]
    assert b.message.text == "smile 😀!"


def test_a_lone_surrogate_left_at_the_end_becomes_a_replacement_character() -> None:
    b = builder()
    b.text_delta("t", "cut \ud83d")
    b.fail("connection lost")
    assert b.message.text == "cut \ufffd"
    assert_encodable(b)


def test_names_ids_signatures_and_errors_are_cleaned() -> None:
    b = builder()
    b.thinking_delta("k", "plan")
    b.set_signature("k", "sig\udc00")
    b.tool_call_delta("c", id="call_\ud800", name="cl\udfffick", arguments_object={"k\ud800": ["v\udc00"]})
    b.finish()
    [call] = b.message.tool_calls
    assert (call.id, call.name, call.arguments) == ("call_\ufffd", "cl\ufffdick", {"k\ufffd": ["v\ufffd"]})
    assert clean_text("a\ud800") == "a\ufffd"
    failed = builder()
    failed.fail("bad \udc00 byte")
    assert failed.message.error_message == "bad \ufffd byte"
    assert_encodable(b)


def test_whole_arguments_nested_too_deep_are_malformed() -> None:
    deep: list[object] = []
    for _ in range(MAX_ARGUMENT_DEPTH + 5):
        deep = [deep]
    b = builder()
    b.tool_call_delta("c", id="g1", name="click", arguments_object={"a": deep})
    with pytest.raises(MalformedToolCallError, match="nest deeper"):
        b.end_block("c")

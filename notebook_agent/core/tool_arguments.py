"""Reading the arguments of a tool call that a model wrote: strictly once the call is complete, leniently for
live previews while it streams.

One job, shared by every adapter through the stream builder (``model.py``): whatever text a model sends as
arguments (invalid JSON, not an object, double-encoded, nested 100k levels deep, lone UTF-16 surrogates)
comes out as a clean ``dict`` or as :class:`MalformedToolCallError`, never as another exception, so nothing
downstream (the tool, the transcript, the saved run) meets text it cannot encode or walk.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic_core import from_json

from . import JSONValue
from .errors import ModelOutputError
from .text import clean_text


class MalformedToolCallError(ModelOutputError):
    """A tool call's arguments did not form a JSON object when the stream ended."""


MAX_ARGUMENT_DEPTH = 100
"""Deeper tool arguments are refused as malformed: no tool schema nests this far, and a 100k-deep array from
a misbehaving model would otherwise break the parser and everything that walks the arguments later."""


class _TooDeep(Exception):
    pass


def _clean_value(value: JSONValue, depth: int = 0) -> Any:
    """A parsed JSON value with every string (keys included) cleaned; raises _TooDeep past the limit."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        if depth >= MAX_ARGUMENT_DEPTH:
            raise _TooDeep
        return {clean_text(str(k)): _clean_value(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        if depth >= MAX_ARGUMENT_DEPTH:
            raise _TooDeep
        return [_clean_value(v, depth + 1) for v in value]
    return value


def clean_arguments(arguments: dict[str, Any]) -> dict[str, Any] | None:
    """Tool arguments with their strings cleaned, or None when they nest deeper than MAX_ARGUMENT_DEPTH."""
    try:
        cleaned: dict[str, Any] = _clean_value(arguments)
    except (_TooDeep, RecursionError):
        return None
    return cleaned


def parse_partial_json(text: str) -> dict[str, Any]:
    """Best-effort parse of an incomplete JSON object, for live previews only (never for execution)."""
    if not text.strip():
        return {}
    try:
        value = from_json(text, allow_partial="trailing-strings")
    except Exception:  # a preview is best-effort: whatever the parser dislikes shows as no arguments yet
        return {}
    if not isinstance(value, dict):
        return {}
    return clean_arguments(value) or {}


def _loads(text: str) -> Any:
    """``json.loads`` that reports nesting too deep for the parser as :class:`_TooDeep`."""
    try:
        return json.loads(text)
    except RecursionError:
        raise _TooDeep from None


def _json_type(value: JSONValue) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else type(value).__name__


def parse_tool_arguments(name: str, text: str) -> dict[str, Any]:
    """Strict parse of a finished tool call's arguments; an empty string means no arguments.

    Arguments sent as a JSON string holding the whole object (double-encoded, a common model slip) are
    decoded once more. Anything else that is not an object, or nests deeper than MAX_ARGUMENT_DEPTH, raises
    :class:`MalformedToolCallError`; no other exception leaves this function.
    """
    if not text.strip():
        return {}
    head = f"Provider returned a malformed tool call: arguments of {clean_text(name)!r}"
    too_deep = f"{head} nest deeper than {MAX_ARGUMENT_DEPTH} levels"
    try:
        value = _loads(text)
    except json.JSONDecodeError as exc:
        raise MalformedToolCallError(
            f"{head} are not valid JSON ({exc.msg} at position {exc.pos}): {clean_text(text[:200])!r}"
        ) from None
    except _TooDeep:
        raise MalformedToolCallError(too_deep) from None
    if isinstance(value, str):
        try:
            inner = _loads(value)
        except (json.JSONDecodeError, _TooDeep):
            inner = None
        if isinstance(inner, dict):
            value = inner
    if not isinstance(value, dict):
        raise MalformedToolCallError(f"{head} are {_json_type(value)}, not an object")
    cleaned = clean_arguments(value)
    if cleaned is None:
        raise MalformedToolCallError(too_deep)
    return cleaned

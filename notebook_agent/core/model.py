"""The one protocol between the loop and any model, and the builder adapters use to speak it.

A model has a single method, ``stream(context, options)``, an async iterator of :class:`StreamEvent`. The
contract (kept by :class:`AssistantStreamBuilder`): it never raises once iterated; it ends with exactly one
``done`` or ``error`` event carrying the final :class:`AssistantMessage`. Every adapter feeds its provider's
chunks into the builder, so fragment assembly, partial-JSON previews, the strict final parse and the event
shapes are written once.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeAlias, runtime_checkable

from pydantic_core import from_json

from .abort import AbortSignal
from .messages import (
    AssistantMessage,
    Message,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
    Usage,
)


@dataclass(frozen=True)
class ToolSpec:
    """What a provider needs to declare a tool: a name, a description and a JSON Schema."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass
class Context:
    """Everything one model request is built from."""

    system_prompt: str | None
    messages: list[Message]
    tools: list[ToolSpec] = field(default_factory=list)


ToolChoice: TypeAlias = Literal["auto", "none", "required"] | str
"""``auto``/``none``/``required``, or the name of one tool the model must call."""


@dataclass
class StreamOptions:
    """Per-request options. Adapters map each onto the provider's native field, or ignore it if absent."""

    signal: AbortSignal | None = None
    tool_choice: ToolChoice | None = None
    parallel_tool_calls: bool | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    reasoning: str | None = None
    """Reasoning effort (``minimal``/``low``/``medium``/``high``) where the model supports it."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Provider-specific request fields, merged into the body as-is."""


StreamEventType: TypeAlias = Literal[
    "start",
    "text_start",
    "text_delta",
    "text_end",
    "thinking_start",
    "thinking_delta",
    "thinking_end",
    "toolcall_start",
    "toolcall_delta",
    "toolcall_end",
    "done",
    "error",
]


@dataclass
class StreamEvent:
    """One provider event. ``partial`` is the assistant message accumulated so far (final on done/error)."""

    type: StreamEventType
    partial: AssistantMessage
    content_index: int | None = None
    delta: str | None = None
    tool_call: ToolCall | None = None


@runtime_checkable
class Model(Protocol):
    """Anything that can stream an assistant response. ``provider``/``id`` name it in transcripts."""

    provider: str
    id: str

    def stream(self, context: Context, options: StreamOptions) -> AsyncIterator[StreamEvent]: ...


class MalformedToolCallError(ValueError):
    """A tool call's arguments did not form a JSON object when the stream ended."""


def parse_partial_json(text: str) -> dict[str, Any]:
    """Best-effort parse of an incomplete JSON object, for live previews only (never for execution)."""
    if not text.strip():
        return {}
    try:
        value = from_json(text, allow_partial="trailing-strings")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def parse_tool_arguments(name: str, text: str) -> dict[str, Any]:
    """Strict parse of a finished tool call's arguments; an empty string means no arguments."""
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MalformedToolCallError(
            f"Provider returned a malformed tool call: arguments of {name!r} are not valid JSON "
            f"({exc.msg} at position {exc.pos}): {text[:200]!r}"
        ) from exc
    if not isinstance(value, dict):
        raise MalformedToolCallError(
            f"Provider returned a malformed tool call: arguments of {name!r} are {type(value).__name__}, not an object"
        )
    return value


def new_tool_call_id() -> str:
    """An id for providers that do not give one (Google, some local servers)."""
    return "call_" + uuid.uuid4().hex[:24]


@dataclass
class _OpenBlock:
    index: int
    kind: Literal["text", "thinking", "toolCall"]
    raw_args: str = ""
    args_object: dict[str, Any] | None = None


class AssistantStreamBuilder:
    """Accumulates one assistant message from provider chunks and yields the normalised events.

    Blocks are addressed by a caller-chosen ``key`` (the Chat Completions ``index``, the Anthropic content
    index, a Responses item id), so parallel tool calls that share no id are never merged. Each method
    returns the events to yield, in order.
    """

    def __init__(self, *, api: str, provider: str, model: str) -> None:
        self.message = AssistantMessage(api=api, provider=provider, model=model)
        self._open: dict[object, _OpenBlock] = {}
        self._started = False

    # -- helpers -------------------------------------------------------------------------------------
    def start(self) -> list[StreamEvent]:
        if self._started:
            return []
        self._started = True
        return [StreamEvent("start", self.message)]

    def _ensure_started(self, out: list[StreamEvent]) -> None:
        out.extend(self.start())

    def _close_other_kinds(self, key: object, out: list[StreamEvent]) -> None:
        """Text and thinking blocks end when something else starts (tool calls may interleave)."""
        for other_key, block in list(self._open.items()):
            if other_key != key and block.kind in ("text", "thinking"):
                out.extend(self.end_block(other_key))

    # -- text and thinking ---------------------------------------------------------------------------
    def text_delta(self, key: object, text: str, *, kind: Literal["text", "thinking"] = "text") -> list[StreamEvent]:
        out: list[StreamEvent] = []
        self._ensure_started(out)
        block = self._open.get(key)
        if block is None or block.kind != kind:
            self._close_other_kinds(key, out)
            index = len(self.message.content)
            part: TextContent | ThinkingContent = (
                TextContent(text="") if kind == "text" else ThinkingContent(thinking="")
            )
            self.message.content.append(part)
            block = _OpenBlock(index=index, kind=kind)
            self._open[key] = block
            out.append(StreamEvent(f"{kind}_start", self.message, content_index=index))  # type: ignore[arg-type]
        if text:
            target = self.message.content[block.index]
            if isinstance(target, TextContent):
                target.text += text
            elif isinstance(target, ThinkingContent):
                target.thinking += text
            out.append(StreamEvent(f"{kind}_delta", self.message, content_index=block.index, delta=text))  # type: ignore[arg-type]
        return out

    def thinking_delta(self, key: object, text: str) -> list[StreamEvent]:
        return self.text_delta(key, text, kind="thinking")

    def set_signature(self, key: object, signature: str, *, redacted: bool = False) -> None:
        """Attach a provider signature to an open text/thinking block."""
        block = self._open.get(key)
        if block is None:
            return
        part = self.message.content[block.index]
        if isinstance(part, ThinkingContent):
            part.signature = signature
            part.redacted = part.redacted or redacted
        elif isinstance(part, TextContent):
            part.signature = signature

    def add_thinking(self, thinking: str, signature: str | None, *, redacted: bool = False) -> list[StreamEvent]:
        """A complete thinking block that arrives in one piece (e.g. Anthropic redacted thinking)."""
        out: list[StreamEvent] = []
        self._ensure_started(out)
        index = len(self.message.content)
        self.message.content.append(ThinkingContent(thinking=thinking, signature=signature, redacted=redacted))
        out.append(StreamEvent("thinking_start", self.message, content_index=index))
        out.append(StreamEvent("thinking_end", self.message, content_index=index))
        return out

    # -- tool calls ----------------------------------------------------------------------------------
    def tool_call_delta(
        self,
        key: object,
        *,
        id: str | None = None,
        name: str | None = None,
        arguments: str | None = None,
        arguments_object: dict[str, Any] | None = None,
        thought_signature: str | None = None,
    ) -> list[StreamEvent]:
        """Add to (or open) the tool call at ``key``. ``arguments`` is a raw JSON fragment;
        ``arguments_object`` is for providers that send parsed arguments whole (Google, Mistral)."""
        out: list[StreamEvent] = []
        self._ensure_started(out)
        block = self._open.get(key)
        if block is None:
            self._close_other_kinds(key, out)
            index = len(self.message.content)
            call_id = id if id and id != "null" else new_tool_call_id()
            self.message.content.append(ToolCall(id=call_id, name=name or ""))
            block = _OpenBlock(index=index, kind="toolCall")
            self._open[key] = block
            out.append(StreamEvent("toolcall_start", self.message, content_index=index))
        call = self.message.content[block.index]
        assert isinstance(call, ToolCall)
        if id and id != "null" and call.id.startswith("call_") and id != call.id and not block.raw_args:
            call.id = id
        if name and not call.name:
            call.name = name
        if thought_signature:
            call.thought_signature = thought_signature
        if arguments_object is not None:
            block.args_object = arguments_object
            call.arguments = dict(arguments_object)
            out.append(StreamEvent("toolcall_delta", self.message, content_index=block.index, delta=""))
        if arguments:
            block.raw_args += arguments
            call.arguments = parse_partial_json(block.raw_args)
            out.append(StreamEvent("toolcall_delta", self.message, content_index=block.index, delta=arguments))
        return out

    def end_block(self, key: object) -> list[StreamEvent]:
        """Close one block. A tool call's arguments are parsed strictly here (raises on malformed JSON, and
        the block stays open so a following :meth:`fail` drops the half-built call)."""
        block = self._open.get(key)
        if block is None:
            return []
        part = self.message.content[block.index]
        if block.kind == "toolCall":
            assert isinstance(part, ToolCall)
            if block.args_object is not None and not block.raw_args:
                part.arguments = dict(block.args_object)
            else:
                part.arguments = parse_tool_arguments(part.name, block.raw_args)
            del self._open[key]
            return [StreamEvent("toolcall_end", self.message, content_index=block.index, tool_call=part)]
        del self._open[key]
        return [StreamEvent(f"{block.kind}_end", self.message, content_index=block.index)]  # type: ignore[arg-type]

    @property
    def has_open_tool_call(self) -> bool:
        """True while a tool call is being streamed (a cut now is a cut mid-arguments)."""
        return any(b.kind == "toolCall" for b in self._open.values())

    def end_all(self) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        for key in sorted(self._open, key=lambda k: self._open[k].index):
            out.extend(self.end_block(key))
        return out

    # -- the end -------------------------------------------------------------------------------------
    def set_usage(self, usage: Usage) -> None:
        self.message.usage = usage

    def finish(self, stop_reason: StopReason | None = None) -> list[StreamEvent]:
        """Close every block and emit ``done``. With no explicit reason, tool calls imply ``toolUse``."""
        out: list[StreamEvent] = []
        self._ensure_started(out)
        out.extend(self.end_all())
        if stop_reason is None:
            stop_reason = "toolUse" if self.message.tool_calls else "stop"
        if stop_reason == "stop" and self.message.tool_calls:
            stop_reason = "toolUse"
        self.message.stop_reason = stop_reason
        out.append(StreamEvent("done", self.message))
        return out

    def fail(self, error: BaseException | str, *, aborted: bool = False, kind: str | None = None) -> list[StreamEvent]:
        """End with ``error``: unfinished tool calls are dropped (their arguments cannot be trusted)."""
        out: list[StreamEvent] = []
        self._ensure_started(out)
        open_calls = {b.index for b in self._open.values() if b.kind == "toolCall"}
        self._open.clear()
        if open_calls:
            self.message.content = [p for i, p in enumerate(self.message.content) if i not in open_calls]
        self.message.stop_reason = "aborted" if aborted else "error"
        self.message.error_message = error if isinstance(error, str) else (str(error) or type(error).__name__)
        self.message.error_kind = "aborted" if aborted else kind
        out.append(StreamEvent("error", self.message))
        return out


def compute_cost(usage: Usage, prices: dict[str, float] | None) -> None:
    """Fill ``usage.cost`` from prices in dollars per million tokens (keys: input, output, cache_read,
    cache_write). Unknown models keep a zero cost rather than a guess."""
    if not prices:
        return
    c = usage.cost
    c.input = usage.input * prices.get("input", 0.0) / 1e6
    c.output = usage.output * prices.get("output", 0.0) / 1e6
    c.cache_read = usage.cache_read * prices.get("cache_read", 0.0) / 1e6
    c.cache_write = usage.cache_write * prices.get("cache_write", 0.0) / 1e6
    c.total = c.input + c.output + c.cache_read + c.cache_write

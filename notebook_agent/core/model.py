"""The one protocol between the loop and any model, and the builder adapters use to speak it.

A model has a single method, ``stream(context, options)``, an async iterator of :class:`StreamEvent`. The
contract (kept by :class:`AssistantStreamBuilder`): it never raises once iterated; it ends with exactly one
``done`` or ``error`` event carrying the final :class:`AssistantMessage`. Every adapter feeds its provider's
chunks into the builder, so fragment assembly, partial-JSON previews, the strict final parse, the event
shapes and the cleaning of model text (lone UTF-16 surrogates become U+FFFD, so nothing downstream can fail
to encode it) are written once; how tool arguments are parsed, strictly and for previews, is in
``tool_arguments.py``. :class:`Deadlines` says how long a call may take; the llm layer enforces it.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, ClassVar, Literal, Protocol, TypeAlias, runtime_checkable

from .abort import AbortSignal
from .messages import (
    AssistantMessage,
    Cost,
    Message,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
    Usage,
)
from .text import clean_text
from .tool_arguments import (
    MAX_ARGUMENT_DEPTH,
    MalformedToolCallError,
    clean_arguments,
    parse_partial_json,
    parse_tool_arguments,
)


@dataclass(frozen=True)
class ToolSpec:
    """What a provider needs to declare a tool: a name, a description and a JSON Schema.

    ``decoding``: a tighter schema for schema-constrained decoding only (a grammar, ``response_format``), never
    shown to the model: what changes every call (the element indices on the page) narrows the output there
    without changing the prompt, so a prompt cache keeps it."""

    name: str
    description: str
    parameters: dict[str, Any]
    decoding: dict[str, Any] | None = None


@dataclass
class Context:
    """Everything one model request is built from."""

    system_prompt: str | None
    messages: list[Message]
    tools: list[ToolSpec] = field(default_factory=list)


@dataclass(frozen=True)
class Deadlines:
    """How long one model call may take, in seconds; ``None`` switches a deadline off.

    - ``first_token``: from sending the request to the first content (text, thinking or tool-call data).
      Keepalives and empty events do not count. Covers a server that never answers or stalls after the
      headers, and the SDK's own retries of the request.
    - ``idle``: the longest silence between two pieces of content once content has started.
    - ``total``: the whole call, so a server that drips output forever still ends.

    The defaults fit hosted APIs: 120 s lets a reasoning model think before its first visible token, 60 s
    of silence mid-answer means a stuck server (healthy ones stream every few seconds), and 600 s is the
    SDKs' own read timeout, now applied to the whole call. Local endpoints get :meth:`for_local_server`.
    """

    first_token: float | None = 120.0
    idle: float | None = 60.0
    total: float | None = 600.0

    NAMES: ClassVar[tuple[str, ...]] = ("first_token", "idle", "total")

    def __post_init__(self) -> None:
        for name in self.NAMES:
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
                raise ValueError(f"Deadlines.{name} must be a positive number of seconds or None (off), not {value!r}.")

    @classmethod
    def for_local_server(cls) -> Deadlines:
        """Defaults for a model on this machine or the local network: 300 s to the first token (loading the
        model and reading a long page prompt on a CPU takes minutes), 60 s idle, 900 s in all."""
        return cls(first_token=300.0, idle=60.0, total=900.0)

    def updated(self, changes: Deadlines | Mapping[str, float | None] | None) -> Deadlines:
        """These deadlines with ``changes`` applied: a Deadlines replaces them, a mapping overrides by name."""
        if changes is None:
            return self
        if isinstance(changes, Deadlines):
            return changes
        unknown = set(changes) - set(self.NAMES)
        if unknown:
            raise ValueError(
                f"Unknown deadline {sorted(unknown)[0]!r}: the deadlines are {', '.join(self.NAMES)} (seconds)."
            )
        return replace(self, **dict(changes))

    def as_dict(self) -> dict[str, float | None]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def describe(self) -> str:
        """One line for settings views: ``first token 120 s, idle 60 s, total 600 s``."""

        def show(value: float | None) -> str:
            return "off" if value is None else f"{value:g} s"

        return f"first token {show(self.first_token)}, idle {show(self.idle)}, total {show(self.total)}"


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
    deadlines: Deadlines | Mapping[str, float | None] | None = None
    """Deadlines for this call only: a Deadlines replaces the model's (``model.deadlines``), a mapping such
    as ``{"idle": 120}`` overrides them by name, ``None`` keeps them."""


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


def new_tool_call_id() -> str:
    """An id for providers that do not give one (Google, some local servers)."""
    return "call_" + uuid.uuid4().hex[:24]


@dataclass
class _OpenBlock:
    index: int
    kind: Literal["text", "thinking", "toolCall"]
    raw_args: str = ""
    args_object: dict[str, Any] | None = None
    args_too_deep: bool = False
    carry: str = ""
    """A high surrogate that ended the last fragment: its low half may start the next one."""

    def take(self, fragment: str) -> str:
        """The fragment, cleaned, with a trailing high surrogate held back to pair with the next one."""
        fragment = self.carry + fragment
        self.carry = ""
        if fragment and "\ud800" <= fragment[-1] <= "\udbff":
            self.carry, fragment = fragment[-1], fragment[:-1]
        return clean_text(fragment)

    def flush(self) -> str:
        """What is left held back at the end of the block: a lone surrogate, so U+FFFD."""
        if not self.carry:
            return ""
        self.carry = ""
        return "\ufffd"


class AssistantStreamBuilder:
    """Accumulates one assistant message from provider chunks and yields the normalised events.

    Blocks are addressed by a caller-chosen ``key`` (the Chat Completions ``index``, the Anthropic content
    index, a Responses item id), so parallel tool calls that share no id are never merged. Each method
    returns the events to yield, in order. Every string taken in (text, thinking, tool names, ids,
    arguments, signatures, error messages) is cleaned with :func:`clean_text`, a surrogate pair split
    across two fragments included, so the message can always be encoded, saved and hashed.
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
        text = block.take(text)
        if text:
            out.extend(self._append(block, text))
        return out

    def thinking_delta(self, key: object, text: str) -> list[StreamEvent]:
        return self.text_delta(key, text, kind="thinking")

    def set_signature(self, key: object, signature: str, *, redacted: bool = False) -> None:
        """Attach a provider signature to an open text/thinking block."""
        block = self._open.get(key)
        if block is None:
            return
        part = self.message.content[block.index]
        signature = clean_text(signature)
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
        self.message.content.append(
            ThinkingContent(
                thinking=clean_text(thinking),
                signature=None if signature is None else clean_text(signature),
                redacted=redacted,
            )
        )
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
        id = clean_text(id) if id else id
        name = clean_text(name) if name else name
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
            cleaned = clean_arguments(arguments_object)
            block.args_too_deep = cleaned is None
            block.args_object = cleaned or {}
            call.arguments = dict(block.args_object)
            out.append(StreamEvent("toolcall_delta", self.message, content_index=block.index, delta=""))
        if arguments:
            arguments = block.take(arguments)
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
            block.raw_args += block.flush()
            if block.args_object is not None and not block.raw_args:
                if block.args_too_deep:
                    raise MalformedToolCallError(
                        f"Provider returned a malformed tool call: arguments of {part.name!r} nest deeper "
                        f"than {MAX_ARGUMENT_DEPTH} levels"
                    )
                part.arguments = dict(block.args_object)
            else:
                part.arguments = parse_tool_arguments(part.name, block.raw_args)
            del self._open[key]
            return [StreamEvent("toolcall_end", self.message, content_index=block.index, tool_call=part)]
        out: list[StreamEvent] = []
        rest = block.flush()
        if rest:
            out.extend(self._append(block, rest))
        del self._open[key]
        out.append(StreamEvent(f"{block.kind}_end", self.message, content_index=block.index))  # type: ignore[arg-type]
        return out

    def _append(self, block: _OpenBlock, text: str) -> list[StreamEvent]:
        target = self.message.content[block.index]
        if isinstance(target, TextContent):
            target.text += text
        elif isinstance(target, ThinkingContent):
            target.thinking += text
        return [StreamEvent(f"{block.kind}_delta", self.message, content_index=block.index, delta=text)]  # type: ignore[arg-type]

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
        for block in self._open.values():
            rest = block.flush()
            if rest and block.kind != "toolCall":
                self._append(block, rest)
        self._open.clear()
        if open_calls:
            self.message.content = [p for i, p in enumerate(self.message.content) if i not in open_calls]
        self.message.stop_reason = "aborted" if aborted else "error"
        self.message.error_message = clean_text(
            error if isinstance(error, str) else (str(error) or type(error).__name__)
        )
        self.message.error_kind = "aborted" if aborted else kind
        out.append(StreamEvent("error", self.message))
        return out


def compute_cost(usage: Usage, prices: dict[str, float] | None) -> None:
    """Fill ``usage.cost`` from prices in dollars per million tokens (keys: input, output, cache_read,
    cache_write; a missing key costs nothing). ``prices`` None: the model's prices are unknown, and so is the
    cost (None, never a zero that reads as free); ``{}``: a model that costs nothing (on this machine)."""
    if prices is None:
        usage.cost = None
        return
    c = usage.cost = Cost()
    c.input = usage.input * prices.get("input", 0.0) / 1e6
    c.output = usage.output * prices.get("output", 0.0) / 1e6
    c.cache_read = usage.cache_read * prices.get("cache_read", 0.0) / 1e6
    c.cache_write = usage.cache_write * prices.get("cache_write", 0.0) / 1e6
    c.total = c.input + c.output + c.cache_read + c.cache_write

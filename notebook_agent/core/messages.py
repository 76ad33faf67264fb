"""The transcript model shared by every provider and every layer.

Provider adapters translate their native formats into these types and back; the loop, the page agent and the
notebook only ever see these. They are pydantic models so that a whole run can be written to JSON Lines and
read back without loss.
"""

from __future__ import annotations

import time
from typing import Annotated, Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field


def now_ms() -> int:
    """Wall-clock timestamp in milliseconds, as stored on every message."""
    return int(time.time() * 1000)


class _Part(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TextContent(_Part):
    type: Literal["text"] = "text"
    text: str
    signature: str | None = None
    """Opaque replay metadata some providers attach to text (kept only for the same model)."""


class ThinkingContent(_Part):
    type: Literal["thinking"] = "thinking"
    thinking: str
    signature: str | None = None
    """Provider-specific proof of the reasoning (Anthropic signature, Responses item, ...)."""
    redacted: bool = False


class ImageContent(_Part):
    type: Literal["image"] = "image"
    data: str
    """Base64 without a data: prefix."""
    mime_type: str = "image/png"


class ToolCall(_Part):
    type: Literal["toolCall"] = "toolCall"
    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    thought_signature: str | None = None


UserPart: TypeAlias = Annotated[TextContent | ImageContent, Field(discriminator="type")]
AssistantPart: TypeAlias = Annotated[TextContent | ThinkingContent | ToolCall, Field(discriminator="type")]
ResultPart: TypeAlias = Annotated[TextContent | ImageContent, Field(discriminator="type")]

StopReason: TypeAlias = Literal["stop", "length", "toolUse", "error", "aborted"]


class Cost(BaseModel):
    """Dollars, per bucket; ``total`` is the sum of the four buckets."""

    input: float = 0.0
    output: float = 0.0
    cache_read: float = 0.0
    cache_write: float = 0.0
    total: float = 0.0


class Usage(BaseModel):
    """Token counts for one model call, or the sum of several. ``input`` counts uncached prompt tokens only;
    ``reasoning`` is the part of ``output`` the model spent reasoning (billed as output, so not added again).

    ``cost`` is None when it is unknown (a model with no known prices): a sum with an unknown part is unknown,
    never a number that leaves that part out. ``calls``: the model calls these counts come from (one for a
    call's own usage once the run recorded it; a step a pilot decided made none)."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    reasoning: int = 0
    total_tokens: int = 0
    calls: int = 0
    cost: Cost | None = Field(default_factory=Cost)

    @property
    def tokens(self) -> int:
        """The tokens a call read and wrote, cached or not: the one number every view shows as "tokens".
        (``total_tokens`` is what the provider reported, which some providers leave at 0.)"""
        return self.input + self.output + self.cache_read + self.cache_write

    @property
    def dollars(self) -> float | None:
        """What these calls cost in dollars, None when that is unknown."""
        return self.cost.total if self.cost is not None else None

    def add(self, other: Usage) -> None:
        """Accumulate another call's usage into this one (used for run totals); an unknown cost makes the sum's
        cost unknown."""
        self.input += other.input
        self.output += other.output
        self.cache_read += other.cache_read
        self.cache_write += other.cache_write
        self.reasoning += other.reasoning
        self.total_tokens += other.total_tokens
        self.calls += other.calls
        if self.cost is None or other.cost is None:
            self.cost = None
            return
        self.cost.input += other.cost.input
        self.cost.output += other.cost.output
        self.cost.cache_read += other.cost.cache_read
        self.cost.cache_write += other.cost.cache_write
        self.cost.total += other.cost.total


class UserMessage(BaseModel):
    role: Literal["user"] = "user"
    content: str | list[UserPart]
    timestamp: int = Field(default_factory=now_ms)

    @property
    def text(self) -> str:
        if isinstance(self.content, str):
            return self.content
        return "".join(p.text for p in self.content if isinstance(p, TextContent))


class AssistantMessage(BaseModel):
    role: Literal["assistant"] = "assistant"
    content: list[AssistantPart] = Field(default_factory=list)
    api: str = ""
    provider: str = ""
    model: str = ""
    usage: Usage = Field(default_factory=Usage)
    stop_reason: StopReason = "stop"
    error_message: str | None = None
    error_kind: str | None = None
    """Machine-readable class of the failure: auth, rate_limit, server, timeout, connection, stream_cut,
    context_length, malformed, bad_request, aborted."""
    output_mode: Literal["tools", "json_schema", "text"] | None = None
    """How the adapter asked for a forced tool call: as a tool call (``tools``), as JSON constrained by the
    tool's schema and turned back into the tool call (``json_schema``), or as JSON in plain text (``text``).
    None when the call forced no single tool or the adapter does not say."""
    timestamp: int = Field(default_factory=now_ms)

    @property
    def text(self) -> str:
        """The concatenated text blocks (thinking and tool calls left out)."""
        return "".join(p.text for p in self.content if isinstance(p, TextContent))

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [p for p in self.content if isinstance(p, ToolCall)]


class ToolResultMessage(BaseModel):
    role: Literal["toolResult"] = "toolResult"
    tool_call_id: str
    tool_name: str
    content: list[ResultPart] = Field(default_factory=list)
    details: Any = None
    is_error: bool = False
    timestamp: int = Field(default_factory=now_ms)

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.content if isinstance(p, TextContent))


Message: TypeAlias = Annotated[UserMessage | AssistantMessage | ToolResultMessage, Field(discriminator="role")]


def user(text: str, *images: ImageContent) -> UserMessage:
    """Shorthand for a user message with text and optional images."""
    if not images:
        return UserMessage(content=text)
    return UserMessage(content=[TextContent(text=text), *images])

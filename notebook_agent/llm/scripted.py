"""A model that plays back a script: deterministic runs for tests, demos and users without an API key.

Each model call takes the next response from the script. A response is a string (a text answer), a
:func:`call` (one tool call), a :func:`reply` (several parts), an :func:`error`, or a function of the request
that returns one of those. Text and tool arguments are streamed in small fragments through the same builder
the real adapters use, so consumers see exactly the event shapes a provider produces. Every request is kept in
``model.requests`` for assertions and for the prompt inspector.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from ..core.messages import AssistantMessage, StopReason, TextContent, ThinkingContent, ToolCall, Usage
from ..core.model import AssistantStreamBuilder, Context, StreamEvent, StreamOptions, compute_cost
from .pricing import Prices, prices_for
from .tokens import count_tokens, prompt_tokens

_LISTED: Any = object()
"""``prices=`` not given: the price table's, else free."""


@dataclass
class ScriptedCall:
    name: str
    arguments: dict[str, Any] | str
    """An object, or a raw JSON string (to script malformed output)."""
    id: str | None = None


@dataclass
class ScriptedText:
    text: str
    thinking: bool = False


@dataclass
class ScriptedReply:
    parts: list[ScriptedText | ScriptedCall]
    stop_reason: StopReason | None = None
    usage: Usage | None = None


@dataclass
class ScriptedError:
    message: str
    kind: str = "server"
    after_parts: list[ScriptedText | ScriptedCall] = field(default_factory=list)
    """Parts streamed before the failure (a stream cut mid-response)."""


Response: TypeAlias = "str | ScriptedCall | ScriptedReply | ScriptedError | Callable[[Context], Response]"


def call(
    name: str, arguments: dict[str, Any] | str | None = None, *, id: str | None = None, **kwargs: Any
) -> ScriptedCall:
    """One tool call: ``call("search", {"q": "x"})`` or ``call("search", q="x")``."""
    return ScriptedCall(name, arguments if arguments is not None else kwargs, id)


def reply(
    *parts: str | ScriptedText | ScriptedCall, stop_reason: StopReason | None = None, usage: Usage | None = None
) -> ScriptedReply:
    """A response of several parts (text and calls, in order)."""
    return ScriptedReply([ScriptedText(p) if isinstance(p, str) else p for p in parts], stop_reason, usage)


def thinking(text: str) -> ScriptedText:
    return ScriptedText(text, thinking=True)


def error(message: str, *, kind: str = "server", after: Iterable[str | ScriptedCall] = ()) -> ScriptedError:
    return ScriptedError(message, kind, [ScriptedText(p) if isinstance(p, str) else p for p in after])


class ScriptedModel:
    """``ScriptedModel([call("add", a=1, b=2), "The answer is 3."])``.

    ``chunk`` is the fragment size in characters; ``delay`` is a pause before each fragment (seconds), so a
    test can abort mid-stream; ``usage`` is reported on every response that does not set its own; ``counted``:
    a response with no usage of its own reports the request's and its own tokens counted offline
    (llm/tokens.py), as a model on this machine would. ``prices``: what its tokens cost (dollars per million,
    as llm/pricing.py); not given, what ``set_prices`` set for it (or the table lists for its id), else nothing:
    it runs here. None: unknown. A usage that sets its own ``cost`` keeps it.
    """

    def __init__(
        self,
        script: Iterable[Response] = (),
        *,
        id: str = "scripted",
        provider: str = "scripted",
        chunk: int = 8,
        delay: float = 0.0,
        usage: Usage | None = None,
        on_exhausted: Response | None = None,
        counted: bool = False,
        prices: Prices | None = _LISTED,
    ) -> None:
        self.script: list[Response] = list(script)
        self.id = id
        self.provider = provider
        self.api = "scripted"
        self.chunk = max(1, chunk)
        self.delay = delay
        self.usage = usage
        self.counted = counted
        self.on_exhausted = on_exhausted
        self._prices = prices
        self.requests: list[tuple[Context, StreamOptions]] = []
        self._next = 0

    @classmethod
    def from_messages(cls, messages: Iterable[AssistantMessage], **kwargs: Any) -> ScriptedModel:
        """Replay recorded assistant messages as a script (a saved run becomes a model)."""
        script: list[Response] = []
        for m in messages:
            parts: list[ScriptedText | ScriptedCall] = []
            for p in m.content:
                if isinstance(p, TextContent):
                    parts.append(ScriptedText(p.text))
                elif isinstance(p, ThinkingContent):
                    parts.append(ScriptedText(p.thinking, thinking=True))
                elif isinstance(p, ToolCall):
                    parts.append(ScriptedCall(p.name, dict(p.arguments), p.id))
            if m.stop_reason in ("error", "aborted"):
                script.append(ScriptedError(m.error_message or "recorded error", m.error_kind or "server", parts))
            else:
                script.append(ScriptedReply(parts, m.stop_reason, m.usage.model_copy(deep=True)))
        return cls(script, **kwargs)

    @property
    def prices(self) -> Prices | None:
        """What its tokens cost (see the class): given, set with ``set_prices``/listed, else free."""
        if self._prices is not _LISTED:
            return self._prices
        listed = prices_for(self.id, self.provider)
        return listed if listed is not None else {}

    @property
    def remaining(self) -> int:
        return len(self.script) - self._next

    def add(self, *responses: Response) -> None:
        self.script.extend(responses)

    def _take(self, context: Context) -> ScriptedReply | ScriptedError:
        if self._next < len(self.script):
            response = self.script[self._next]
            self._next += 1
        elif self.on_exhausted is not None:
            response = self.on_exhausted
        else:
            return error(
                f"The scripted model has no response left (it had {len(self.script)}); add more with "
                "model.add(...) or pass on_exhausted=",
                kind="script_exhausted",
            )
        while callable(response):
            response = response(context)
        if isinstance(response, (str, ScriptedCall)):
            return reply(response)
        return response

    async def stream(self, context: Context, options: StreamOptions) -> AsyncIterator[StreamEvent]:
        self.requests.append((context, options))
        b = AssistantStreamBuilder(api=self.api, provider=self.provider, model=self.id)
        response = self._take(context)
        for ev in b.start():
            yield ev
        try:
            if isinstance(response, ScriptedError):
                async for ev in self._parts(b, response.after_parts):
                    yield ev
                for ev in b.fail(response.message, kind=response.kind):
                    yield ev
                return
            async for ev in self._parts(b, response.parts):
                yield ev
            b.set_usage(self._usage(context, response))
            for ev in b.finish(response.stop_reason):
                yield ev
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            for ev in b.fail(exc, kind="malformed" if isinstance(exc, ValueError) else "model"):
                yield ev

    def _usage(self, context: Context, response: ScriptedReply) -> Usage:
        """The response's usage, else the model's, else counted (``counted``) or none; its cost from
        :attr:`prices` unless the usage set its own."""
        given = response.usage or self.usage
        usage = given.model_copy(deep=True) if given is not None else None  # a script's usage is never changed
        if usage is None:
            usage = Usage()
            if self.counted:
                usage.input = prompt_tokens(context)
                usage.output = count_tokens(
                    "".join(p.text if isinstance(p, ScriptedText) else _raw(p.arguments) for p in response.parts)
                )
                usage.total_tokens = usage.input + usage.output
        if "cost" not in usage.model_fields_set:
            compute_cost(usage, self.prices)
        return usage

    async def _parts(
        self, b: AssistantStreamBuilder, parts: list[ScriptedText | ScriptedCall]
    ) -> AsyncIterator[StreamEvent]:
        for i, part in enumerate(parts):
            if isinstance(part, ScriptedText):
                for piece in self._pieces(part.text):
                    await self._pause()
                    for ev in b.text_delta(("t", i), piece, kind="thinking" if part.thinking else "text"):
                        yield ev
                for ev in b.end_block(("t", i)):
                    yield ev
            else:
                raw = _raw(part.arguments)
                await self._pause()
                for ev in b.tool_call_delta(("c", i), id=part.id or f"call_{self._next}_{i}", name=part.name):
                    yield ev
                for piece in self._pieces(raw):
                    await self._pause()
                    for ev in b.tool_call_delta(("c", i), arguments=piece):
                        yield ev
                for ev in b.end_block(("c", i)):
                    yield ev

    def _pieces(self, text: str) -> list[str]:
        return [text[i : i + self.chunk] for i in range(0, len(text), self.chunk)] or [""]

    async def _pause(self) -> None:
        if self.delay:
            await asyncio.sleep(self.delay)
        else:
            await asyncio.sleep(0)


def _raw(arguments: dict[str, Any] | str) -> str:
    """A scripted call's arguments as the JSON the model streams."""
    return arguments if isinstance(arguments, str) else json.dumps(arguments)

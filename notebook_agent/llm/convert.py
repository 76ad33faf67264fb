"""What every adapter shares: the transcript transforms run before conversion, and the stream driver.

The transforms (§5.0 of the provider reference) make any stored transcript safe to send to any model:
errored/aborted assistant turns are dropped, thinking from another model becomes text (its signatures
mean nothing elsewhere), foreign tool-call ids are normalised to what the target accepts, and a tool call
left without a result gets a synthetic error result, because every provider rejects an unanswered call.

:class:`StreamingAdapter` owns the part of ``Model.stream`` that is the same everywhere: racing every SDK
read against the abort signal and the call's deadlines (see ``deadlines.py``), closing the HTTP stream, and
turning any failure into the builder's single ``error`` event, so an adapter only writes request building
and chunk translation.
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import re
from collections.abc import AsyncIterator, Callable
from typing import Any, ClassVar, Generic, TypeVar

from ..core.abort import AbortedError
from ..core.aio import wait_for
from ..core.messages import (
    AssistantMessage,
    ImageContent,
    Message,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from ..core.model import (
    AssistantStreamBuilder,
    Context,
    StreamEvent,
    StreamOptions,
    ToolSpec,
    compute_cost,
)
from ..core.tool_arguments import MalformedToolCallError
from .deadlines import (
    CallClock,
    DeadlineExceeded,
    describe_partial,
    is_progress,
    resolve_deadlines,
    timeout_error,
    watch_requests,
)
from .errors import BadRequestError, ErrorContext, classify_error
from .pricing import Prices, prices_for
from .provider_options import ProviderOptions
from .provider_record import ProviderRecord, record_of

IMAGE_PLACEHOLDER = "(see attached image)"
NO_RESULT_TEXT = "No result provided"
DEFAULT_MAX_RETRIES = 2

IdNormalizer = Callable[[str], str]

# -- small helpers ----------------------------------------------------------------------------------------

_SURROGATES = re.compile("[\ud800-\udfff]")


def sanitize_text(text: str) -> str:
    """Drop unpaired UTF-16 surrogates (from a split emoji, say), which no JSON encoder on the wire accepts."""
    if not _SURROGATES.search(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "ignore")


def data_url(image: ImageContent) -> str:
    return f"data:{image.mime_type};base64,{image.data}"


def result_text(message: ToolResultMessage) -> str:
    """A tool result's text parts joined by newlines (images are sent separately by each adapter)."""
    return sanitize_text("\n".join(p.text for p in message.content if isinstance(p, TextContent)))


def result_images(message: ToolResultMessage) -> list[ImageContent]:
    return [p for p in message.content if isinstance(p, ImageContent)]


def user_parts(message: UserMessage) -> list[TextContent | ImageContent]:
    """A user message as parts, with blank text dropped."""
    if isinstance(message.content, str):
        return [TextContent(text=sanitize_text(message.content))] if message.content.strip() else []
    out: list[TextContent | ImageContent] = []
    for part in message.content:
        if isinstance(part, TextContent):
            if part.text.strip():
                out.append(TextContent(text=sanitize_text(part.text)))
        else:
            out.append(part)
    return out


def sanitize_id(call_id: str, max_len: int = 64) -> str:
    """Keep ``[A-Za-z0-9_-]`` (what Anthropic, OpenAI and Google accept) and cut to ``max_len``."""
    cleaned = re.sub(r"[^A-Za-z0-9_-]", "_", call_id)[:max_len]
    return cleaned or "call"


def short_hash(text: str) -> str:
    return hashlib.sha1(text.encode(), usedforsecurity=False).hexdigest()


class MistralIdNormalizer:
    """Mistral only accepts ids of exactly nine alphanumerics; map others stably, avoiding collisions."""

    def __init__(self) -> None:
        self._by_original: dict[str, str] = {}
        self._used: dict[str, str] = {}

    def __call__(self, call_id: str) -> str:
        if call_id in self._by_original:
            return self._by_original[call_id]
        alnum = re.sub(r"[^A-Za-z0-9]", "", call_id)
        candidate = alnum if len(alnum) == 9 else ""
        attempt = 0
        while not candidate or self._used.get(candidate, call_id) != call_id:
            seed = call_id if attempt == 0 else f"{call_id}:{attempt}"
            candidate = re.sub(r"[^A-Za-z0-9]", "", short_hash(seed))[:9]
            attempt += 1
        self._by_original[call_id] = candidate
        self._used[candidate] = call_id
        return candidate


def check_tool_choice(choice: str | None, tools: list[ToolSpec]) -> str | None:
    """Validate ``StreamOptions.tool_choice`` against the tools sent, before any request.

    Returns the choice to map (None = leave the field out). A forced tool that is not offered, or
    ``required`` with no tools, is a caller bug the provider would reject with a vaguer message.
    """
    if choice is None:
        return None
    names = [t.name for t in tools]
    if choice in ("auto", "none"):
        return choice if tools else None
    if choice == "required":
        if not tools:
            raise BadRequestError("tool_choice='required' was given but no tools were offered to the model.")
        return choice
    if choice not in names:
        offered = ", ".join(names) or "none"
        raise BadRequestError(
            f"tool_choice names the tool {choice!r}, which is not among the tools offered ({offered})."
        )
    return choice


def strict_schema(schema: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """Normalise a tool schema for OpenAI strict mode and say whether the result is strict-compatible.

    Objects get ``additionalProperties: false`` when they leave it open (harmless for tool arguments) and
    ``required: []`` when they have no properties. Making optional properties required would change the
    tool's meaning, so such a schema is reported incompatible and the caller sends ``strict: false``.
    """
    normalised = copy.deepcopy(schema)
    compatible = [True]

    def visit(node: object) -> None:
        if isinstance(node, list):
            for item in node:
                visit(item)
            return
        if not isinstance(node, dict):
            return
        if isinstance(node.get("type"), list) or any(k in node for k in ("oneOf", "allOf", "anyOf")):
            compatible[0] = False
        if node.get("type") == "object" or "properties" in node:
            props = node.get("properties") or {}
            node.setdefault("additionalProperties", False)
            if not props and "required" not in node:
                node["required"] = []
            if node.get("additionalProperties") is not False or set(node.get("required") or []) != set(props):
                compatible[0] = False
        for key, value in node.items():
            if key in ("properties", "$defs", "definitions") and isinstance(value, dict):
                for sub in value.values():
                    visit(sub)
            elif key in ("items", "anyOf", "oneOf", "allOf", "prefixItems", "not"):
                visit(value)

    visit(normalised)
    return normalised, compatible[0]


# -- transcript transform (§5.0) ----------------------------------------------------------------------------


def is_same_model(message: AssistantMessage, *, provider: str, api: str, model: str) -> bool:
    return message.provider == provider and message.api == api and message.model == model


def transform_messages(
    messages: list[Message],
    *,
    provider: str,
    api: str,
    model: str,
    normalize_id: IdNormalizer | None = None,
) -> list[Message]:
    """Make a transcript safe for the target model (see the module docstring). Returns new messages."""
    id_map: dict[str, str] = {}
    kept: list[Message] = []
    for msg in messages:
        if isinstance(msg, AssistantMessage):
            if msg.stop_reason in ("error", "aborted"):
                continue
            same = is_same_model(msg, provider=provider, api=api, model=model)
            parts: list[TextContent | ThinkingContent | ToolCall] = []
            for part in msg.content:
                if isinstance(part, ThinkingContent):
                    if same:
                        if part.signature or part.thinking.strip():
                            parts.append(part)
                    elif not part.redacted and part.thinking.strip():
                        parts.append(TextContent(text=part.thinking))
                elif isinstance(part, TextContent):
                    parts.append(part if same else TextContent(text=part.text))
                else:
                    if same:
                        parts.append(part)
                        continue
                    new_id = normalize_id(part.id) if normalize_id else part.id
                    if new_id != part.id:
                        id_map[part.id] = new_id
                    parts.append(ToolCall(id=new_id, name=part.name, arguments=part.arguments))
            kept.append(msg.model_copy(update={"content": parts}))
        elif isinstance(msg, ToolResultMessage):
            mapped = id_map.get(msg.tool_call_id)
            kept.append(msg.model_copy(update={"tool_call_id": mapped}) if mapped else msg)
        else:
            kept.append(msg)

    # Second pass: answer orphaned tool calls and drop results whose call is gone (e.g. an errored turn).
    out: list[Message] = []
    pending: dict[str, ToolCall] = {}
    known: set[str] = set()

    def flush() -> None:
        for call in pending.values():
            out.append(
                ToolResultMessage(
                    tool_call_id=call.id,
                    tool_name=call.name,
                    content=[TextContent(text=NO_RESULT_TEXT)],
                    is_error=True,
                )
            )
        pending.clear()

    for msg in kept:
        if isinstance(msg, AssistantMessage):
            flush()
            for call in msg.tool_calls:
                pending[call.id] = call
                known.add(call.id)
        elif isinstance(msg, ToolResultMessage):
            if msg.tool_call_id not in known:
                continue
            pending.pop(msg.tool_call_id, None)
        else:
            flush()
        out.append(msg)
    return out


def group_tool_results(messages: list[Message]) -> list[Message | list[ToolResultMessage]]:
    """Collapse each run of consecutive tool results into one list (several providers send them together)."""
    out: list[Message | list[ToolResultMessage]] = []
    for msg in messages:
        if isinstance(msg, ToolResultMessage):
            last = out[-1] if out else None
            if isinstance(last, list):
                last.append(msg)
            else:
                out.append([msg])
        else:
            out.append(msg)
    return out


# -- the stream driver ------------------------------------------------------------------------------------

_END = object()


async def _next_chunk(iterator: AsyncIterator[Any]) -> Any:
    try:
        return await iterator.__anext__()
    except StopAsyncIteration:
        return _END


def has_open_tool_call(builder: AssistantStreamBuilder) -> bool:
    """Whether the builder is inside a tool call (to word a cut stream precisely)."""
    return builder.has_open_tool_call


State = TypeVar("State")
"""An adapter's per-call state (what it has read of the stream so far): made by ``_new_state``, handed to
every hook of the same call."""


class StreamingAdapter(Generic[State]):
    """Base of the adapters: implements ``Model.stream`` around four provider hooks.

    Subclasses set ``api``/``default_provider`` and implement :meth:`_build_request`, :meth:`_open_stream`,
    :meth:`_handle_chunk` and :meth:`_finish` (which raises a ProviderError for an incomplete stream). A chunk
    is the provider SDK's own event object, read by the subclass that knows its shape (hence ``Any``).
    """

    api: ClassVar[str] = ""

    default_provider: ClassVar[str] = ""
    """The provider name the model reports when ``ProviderOptions.provider`` is not given."""

    def __init__(self, model_id: str, options: ProviderOptions) -> None:
        self.options = options
        """The connection settings this adapter was built with (:class:`~.provider_options.ProviderOptions`)."""
        self.provider = options.provider or self.default_provider
        self.id = model_id
        self.base_url = options.base_url
        self.max_retries = DEFAULT_MAX_RETRIES if options.max_retries is None else options.max_retries
        self.on_payload = options.on_payload
        self.deadlines = resolve_deadlines(options.deadlines, options.base_url)
        """First-token, idle and total deadlines of every call (per call: ``StreamOptions.deadlines``)."""
        self._requests_watched = False

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.provider}:{self.id})"

    local: bool = False
    """The model runs locally (a llama-server, Ollama, a compatible server nearby): free unless priced."""

    @property
    def prices(self) -> Prices | None:
        """What this model's tokens cost (dollars per million): ``prices=`` given to it, else the price table
        (llm/pricing.py, read at each call, so ``set_prices`` reaches models already built), else ``{}`` for a
        local model, else None: unknown."""
        if self.options.prices is not None:
            return self.options.prices
        listed = prices_for(self.id, self.provider)
        return listed if listed is not None else ({} if self.local else None)

    @property
    def record(self) -> ProviderRecord | None:
        """The provider's record (llm/provider_record.py): its key variables, SDK, where its client keeps its
        HTTP client; a compatible server's own when the registry knows it, else the adapter's provider's."""
        return record_of(self.provider) or record_of(self.default_provider)

    @property
    def key_env(self) -> str | None:
        """Where the API key goes, as a message says it (the adapter's provider's when this one needs none)."""
        for record in (record_of(self.provider), record_of(self.default_provider)):
            if record is not None and record.key_hint:
                return record.key_hint
        return None

    # -- hooks ---------------------------------------------------------------------------------------
    def _build_request(self, context: Context, options: StreamOptions) -> dict[str, Any]:
        raise NotImplementedError

    async def _open_stream(self, request: dict[str, Any], options: StreamOptions) -> Any:
        raise NotImplementedError

    def _prepare_state(self, state: State, request: dict[str, Any], context: Context, options: StreamOptions) -> None:
        """Tell the per-call state about the request just built (default: nothing to tell)."""

    async def _open(self, state: State, request: dict[str, Any], options: StreamOptions) -> Any:
        """Open the stream; an adapter may retry here with a different request shape and update ``state``."""
        return await self._open_stream(request, options)

    def _new_state(self, builder: AssistantStreamBuilder) -> State:
        raise NotImplementedError

    def _handle_chunk(self, state: State, builder: AssistantStreamBuilder, chunk: Any) -> list[StreamEvent]:
        raise NotImplementedError

    def _finish(self, state: State, builder: AssistantStreamBuilder) -> list[StreamEvent]:
        raise NotImplementedError

    async def _close_stream(self, stream: object) -> None:
        closer = getattr(stream, "close", None) or getattr(stream, "aclose", None)
        if closer is not None:
            result = closer()
            if asyncio.iscoroutine(result):
                await result

    # -- shared --------------------------------------------------------------------------------------
    def _usage(self, usage: Usage) -> Usage:
        compute_cost(usage, self.prices)
        return usage

    def _error_context(self) -> ErrorContext:
        return ErrorContext(
            provider=self.provider,
            model=self.id,
            key_env=self.key_env,
            base_url=self.base_url,
            max_retries=self.max_retries,
        )

    async def stream(self, context: Context, options: StreamOptions | None = None) -> AsyncIterator[StreamEvent]:
        """Stream one assistant message. Never raises: any failure is the final ``error`` event."""
        options = options or StreamOptions()
        builder = AssistantStreamBuilder(api=self.api, provider=self.provider, model=self.id)
        builder.set_usage(self._usage(Usage()))  # a call that reports no usage still has a known or unknown cost
        signal = options.signal
        sdk_stream: Any = None
        closed = False
        ctx = self._error_context()
        if not self._requests_watched:
            record = self.record
            path = record.http_client if record is not None else ("_client",)
            self._requests_watched = watch_requests(getattr(self, "_client", None), path)
        clock = CallClock(self.deadlines.updated(options.deadlines), watched=self._requests_watched)

        async def close() -> None:
            nonlocal closed
            if sdk_stream is None or closed:
                return
            closed = True
            try:
                await wait_for(self._close_stream(sdk_stream), timeout=2.0)
            except Exception:
                pass

        state: State | None = None

        def keep_usage() -> None:
            # A failed call may still have been billed; keep whatever usage the stream reported.
            usage = getattr(state, "usage", None)
            if isinstance(usage, Usage) and usage.input + usage.output + usage.cache_read + usage.cache_write:
                builder.set_usage(self._usage(usage))

        try:
            final: list[StreamEvent]
            try:
                if signal is not None:
                    signal.throw_if_aborted()
                state = self._new_state(builder)
                request = self._build_request(context, options)
                if self.on_payload is not None:
                    request = self.on_payload(request) or request
                self._prepare_state(state, request, context, options)
                sdk_stream = await clock.run(self._open(state, request, options), signal)
                for event in builder.start():
                    yield event
                while True:
                    chunk = await clock.run(_next_chunk(sdk_stream), signal)
                    if chunk is _END:
                        break
                    ctx.in_stream = True
                    events = self._handle_chunk(state, builder, chunk)
                    if any(is_progress(e) for e in events):
                        clock.progress()
                    for event in events:
                        yield event
                final = self._finish(state, builder)
            except DeadlineExceeded as exc:
                keep_usage()
                ctx.in_tool_call = has_open_tool_call(builder)
                msg = builder.message
                thinking = sum(len(p.thinking) for p in msg.content if isinstance(p, ThinkingContent))
                partial = describe_partial(len(msg.text), thinking)
                final = builder.fail(timeout_error(exc, ctx, clock, partial=partial), kind="timeout")
            except AbortedError as exc:
                keep_usage()
                final = builder.fail(f"Request was aborted: {exc.reason}", aborted=True)
            except MalformedToolCallError as exc:
                keep_usage()
                ctx.retries = clock.retries
                kind, message = classify_error(exc, ctx)
                final = builder.fail(message, kind=kind)
                # The call whose arguments failed to parse was already closed; none of them may run.
                builder.message.content = [p for p in builder.message.content if not isinstance(p, ToolCall)]
            except Exception as exc:
                keep_usage()
                ctx.in_tool_call = has_open_tool_call(builder)
                if signal is not None and signal.aborted:
                    final = builder.fail(f"Request was aborted: {signal.reason}", aborted=True)
                else:
                    ctx.retries = clock.retries
                    kind, message = classify_error(exc, ctx)
                    final = builder.fail(message, kind=kind)
            await close()
            for event in final:
                yield event
        finally:
            await close()

"""OpenAI Chat Completions, and every OpenAI-compatible endpoint (local servers, Mistral) through it.

This is the wire adapter: it sends a request and turns the streamed chunks into the normalised events.
Streaming deltas are matched to tool calls by ``index`` so parallel calls that share no id are never
merged; Mistral's quirks (camelCase ``toolCalls``, the id ``"null"``, arguments sent as an object, ids of
nine alphanumerics, no user turn straight after tool results) are handled here rather than in a second
copy of this adapter. Its parts, each in a module of its own beside it:

* ``chat_servers.py``: which server is on the other end (llama.cpp, Ollama, another local server, OpenAI,
  Mistral) and what it accepts, a :class:`ChatCompat` value detected from the provider and base URL, and
  overridable;
* ``chat_messages.py``: the transcript as the request's ``messages`` and ``tools``;
* ``schema_output.py``: the ``output_mode`` of a call that forces one tool, and the ``json_schema`` mode
  (schema-constrained JSON in place of the tool call, read back as that tool call, with a fall back to
  tool calls for good on this model instance if the server rejects ``response_format``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal, Unpack

from ...core import JSONValue
from ...core.messages import Usage
from ...core.model import AssistantStreamBuilder, Context, StreamEvent, StreamOptions, ToolSpec
from ...core.tool_arguments import MalformedToolCallError
from ..convert import DEFAULT_MAX_RETRIES, StreamingAdapter, check_tool_choice, has_open_tool_call
from ..errors import BadRequestError, ModelConfigError, StreamCutError
from ..provider_options import ProviderKeywords, ProviderOptions
from ..provider_record import OLLAMA_DEFAULT_URL
from .chat_messages import REASONING_FIELDS, chat_messages, chat_tools
from .chat_servers import ChatCompat, ServerKind, detect_compat
from .schema_output import (
    OUTPUT_MODES,
    CallMode,
    OutputMode,
    ask_for_json,
    json_as_tool_call,
    plan_output,
    rejects_response_format,
)

OPENAI_BASE_URL = "https://api.openai.com/v1"
MISTRAL_BASE_URL = "https://api.mistral.ai/v1"


def make_openai_client(name: str, *, key_env: str | None, options: ProviderOptions) -> Any:
    """An ``openai.AsyncOpenAI`` for an adapter; a missing key becomes a ModelConfigError naming the env var."""
    import openai

    retries = DEFAULT_MAX_RETRIES if options.max_retries is None else options.max_retries
    kwargs: dict[str, Any] = {"api_key": options.api_key, "max_retries": retries, **options.sdk_kwargs()}
    try:
        return openai.AsyncOpenAI(**kwargs)
    except openai.OpenAIError as exc:
        raise ModelConfigError(f"Cannot create the client for {name}: {exc} Set {key_env} or pass api_key=...") from exc


def chat_usage(raw: dict[str, Any]) -> Usage:
    """Usage of a Chat Completions stream (snake or camel case); ``input`` excludes cached tokens."""
    prompt = int(raw.get("prompt_tokens") or raw.get("promptTokens") or 0)
    completion = int(raw.get("completion_tokens") or raw.get("completionTokens") or 0)
    details = raw.get("prompt_tokens_details") or raw.get("promptTokensDetails") or {}
    cached = int(
        (details.get("cached_tokens") or details.get("cachedTokens") or 0) if isinstance(details, dict) else 0
    ) or int(raw.get("prompt_cache_hit_tokens") or 0)
    uncached = max(prompt - cached, 0)
    out_details = raw.get("completion_tokens_details") or raw.get("completionTokensDetails") or {}
    reasoning = (
        int(out_details.get("reasoning_tokens") or out_details.get("reasoningTokens") or 0)
        if isinstance(out_details, dict)
        else 0
    )
    return Usage(
        input=uncached,
        output=completion,
        cache_read=cached,
        reasoning=reasoning,
        total_tokens=uncached + completion + cached,
    )


_FINISH: dict[str, Literal["stop", "length", "toolUse"]] = {
    "stop": "stop",
    "end": "stop",
    "eos": "stop",
    "length": "length",
    "model_length": "length",
    "tool_calls": "toolUse",
    "function_call": "toolUse",
}


@dataclass
class _ChatState:
    builder: AssistantStreamBuilder
    mode: CallMode | None = None
    """The output mode of this call (None: no single forced tool)."""
    auto: bool = False
    """The mode came from ``output_mode="auto"``: a rejected response_format may fall back to tools."""
    forced: ToolSpec | None = None
    context: Context | None = None
    options: StreamOptions | None = None
    finish_reason: str | None = None
    usage: Usage | None = None
    by_index: dict[int, tuple[Any, ...]] = field(default_factory=dict)
    by_id: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    key_ids: dict[tuple[Any, ...], str] = field(default_factory=dict)
    whole: set[tuple[Any, ...]] = field(default_factory=set)
    """Calls whose arguments came as one object (Mistral): complete, a later delta is a new call."""
    last: tuple[Any, ...] | None = None
    seq: int = 0

    def new_key(self, hint: object) -> tuple[Any, ...]:
        self.seq += 1
        self.last = ("tool", hint, self.seq)
        return self.last


def _as_dict(chunk: Any) -> dict[str, Any]:
    if isinstance(chunk, dict):
        return chunk
    to_dict = getattr(chunk, "to_dict", None)
    if to_dict is not None:
        result: dict[str, Any] = to_dict(warnings=False)
        return result
    return dict(chunk)


class OpenAIChatModel(StreamingAdapter[_ChatState]):
    """``openai:<model>``: Chat Completions through ``openai.AsyncOpenAI``.

    ``server=`` says which kind of server ``base_url`` is (see ``chat_servers.py`` for the detection).
    ``output_mode=`` says how a call that forces one tool asks for it: ``"tools"`` (a forced tool call),
    ``"json_schema"`` (``response_format`` with the tool's parameters as the schema, the JSON turned into the
    tool call), ``"text"`` (no tools; the schema in the system prompt, the JSON left as text for the caller's
    repair), or ``"auto"`` (``json_schema`` for local servers, falling back to ``tools`` once if the server
    rejects ``response_format``; ``tools`` elsewhere). Each message's ``output_mode`` says which was used.
    ``default_temperature=`` replaces the per-server default (local: :data:`~.chat_servers.LOCAL_DEFAULT_TEMPERATURE`).
    """

    api = "openai-completions"
    default_provider = "openai"
    default_base_url: str | None = None

    def __init__(
        self,
        model_id: str,
        options: ProviderOptions | None = None,
        *,
        strict_tools: bool = False,
        compat: ChatCompat | None = None,
        server: ServerKind | None = None,
        output_mode: OutputMode = "auto",
        default_temperature: float | None = None,
        **settings: Unpack[ProviderKeywords],
    ) -> None:
        if output_mode not in OUTPUT_MODES:
            raise ModelConfigError(f"Unknown output_mode={output_mode!r}; use one of {', '.join(OUTPUT_MODES)}.")
        opts = ProviderOptions.of(options, **settings)
        if opts.base_url is None and self.default_base_url is not None:
            opts = ProviderOptions.of(opts, base_url=self.default_base_url)
        super().__init__(model_id, opts)
        self.compat = compat or detect_compat(self.provider, opts.base_url, model_id, server)
        self.local = self.compat.local
        self.strict_tools = strict_tools
        self.output_mode: OutputMode = output_mode
        self.default_temperature = default_temperature
        self.schema_rejected: str | None = None
        """Why the server refused ``response_format`` (set once by ``auto``; later calls use tools)."""
        client = opts.client
        if client is None:
            client = make_openai_client(f"{self.provider}:{model_id}", key_env=self.key_env, options=opts)
        self._client = client
        self.base_url = str(getattr(client, "base_url", opts.base_url) or opts.base_url or "") or None

    # -- request -------------------------------------------------------------------------------------
    def convert_messages(self, context: Context) -> list[dict[str, Any]]:
        """The transcript as Chat Completions ``messages`` (public for tests and debugging)."""
        return chat_messages(context, self.compat, provider=self.provider, api=self.api, model=self.id)

    def convert_tools(self, context: Context) -> list[dict[str, Any]]:
        return chat_tools(context.tools, strict_tools=self.strict_tools)

    def _plan(self, context: Context, options: StreamOptions) -> tuple[ToolSpec | None, CallMode | None, bool]:
        """(forced tool, output mode, chosen by auto) for one call (see ``schema_output.py``)."""
        return plan_output(
            context, options, output_mode=self.output_mode, compat=self.compat, schema_rejected=self.schema_rejected
        )

    def _build_request(
        self, context: Context, options: StreamOptions, *, mode: CallMode | None = None
    ) -> dict[str, Any]:
        choice = check_tool_choice(options.tool_choice, context.tools)
        forced, planned, _ = self._plan(context, options)
        mode = mode or planned
        request: dict[str, Any] = {"model": self.id, "messages": self.convert_messages(context), "stream": True}
        if self.compat.stream_usage:
            request["stream_options"] = {"include_usage": True}
        if self.compat.store:
            request["store"] = False
        if forced is not None and mode in ("json_schema", "text"):
            ask_for_json(request, forced, mode, self.compat)
        elif context.tools:
            tools = self.convert_tools(context)
            if forced is not None and not self.compat.named_tool_choice:
                # llama.cpp/Ollama take only a string tool_choice: "required" over exactly the forced tool.
                tools = [t for t in tools if t["function"]["name"] == forced.name]
                choice = "required"
            request["tools"] = tools
            if options.parallel_tool_calls is not None:
                request["parallel_tool_calls"] = options.parallel_tool_calls
            if choice is not None:
                request["tool_choice"] = (
                    choice
                    if choice in ("auto", "none", "required")
                    else {"type": "function", "function": {"name": choice}}
                )
        if options.max_tokens is not None:
            request[self.compat.max_tokens_field] = options.max_tokens
        temperature = options.temperature
        if temperature is None:
            temperature = (
                self.default_temperature if self.default_temperature is not None else self.compat.default_temperature
            )
        if temperature is not None:
            request["temperature"] = temperature
        if options.reasoning and self.compat.reasoning_effort:
            request["reasoning_effort"] = options.reasoning
        if self.compat.cache_prompt:
            request["cache_prompt"] = True
        request.update(options.extra)
        return request

    def _prepare_state(
        self, state: _ChatState, request: dict[str, Any], context: Context, options: StreamOptions
    ) -> None:
        forced, mode, auto = self._plan(context, options)
        if "response_format" not in request and mode == "json_schema":
            mode = "tools"  # an on_payload hook removed it
        state.forced, state.mode, state.auto = forced, mode, auto
        state.context, state.options = context, options
        state.builder.message.output_mode = state.mode

    async def _open(self, state: _ChatState, request: dict[str, Any], options: StreamOptions) -> Any:
        try:
            return await self._open_stream(request, options)
        except Exception as exc:
            if not (state.auto and state.mode == "json_schema" and rejects_response_format(exc)):
                raise
            # The server cannot constrain output with a schema: use tool calls from now on, for this instance.
            self.schema_rejected = str(getattr(exc, "message", None) or exc)[:300]
            assert state.context is not None and state.options is not None
            retry = self._build_request(state.context, state.options, mode="tools")
            if self.on_payload is not None:
                retry = self.on_payload(retry) or retry
            state.mode = "tools"
            state.builder.message.output_mode = "tools"
            return await self._open_stream(retry, options)

    async def _open_stream(self, request: dict[str, Any], options: StreamOptions) -> Any:
        # Only the required fields go through the SDK's typed parameters; the rest is sent as body so that
        # fields of compatible servers (and newer OpenAI fields) pass through unchanged.
        body = {k: v for k, v in request.items() if k not in ("model", "messages", "stream")}
        return await self._client.chat.completions.create(
            model=request["model"], messages=request["messages"], stream=True, extra_body=body
        )

    # -- response ------------------------------------------------------------------------------------
    def _new_state(self, builder: AssistantStreamBuilder) -> _ChatState:
        return _ChatState(builder=builder)

    def _tool_key(self, state: _ChatState, call: dict[str, Any]) -> tuple[Any, ...]:
        raw_id = call.get("id")
        real_id = raw_id if isinstance(raw_id, str) and raw_id and raw_id != "null" else None
        function = call.get("function") or {}
        index = call.get("index")
        if isinstance(index, int):
            key = state.by_index.get(index)
            known_id = state.key_ids.get(key) if key else None
            if (
                key is None
                or (real_id and known_id and known_id != real_id)
                or (key in state.whole and function.get("name"))
            ):
                key = state.new_key(index)
                state.by_index[index] = key
        elif real_id:
            key = state.by_id.get(real_id) or state.new_key(real_id)
            state.by_id[real_id] = key
        elif function.get("name") or state.last is None or state.last in state.whole:
            key = state.new_key(None)
        else:
            key = state.last
        if real_id:
            state.key_ids.setdefault(key, real_id)
        state.last = key
        return key

    def _handle_chunk(self, state: _ChatState, builder: AssistantStreamBuilder, chunk: Any) -> list[StreamEvent]:
        data = _as_dict(chunk)
        events: list[StreamEvent] = []
        if isinstance(data.get("usage"), dict):
            state.usage = chat_usage(data["usage"])
        for choice in (data.get("choices") or [])[:1]:
            if isinstance(choice.get("usage"), dict):  # some servers (Moonshot) put usage on the choice
                state.usage = chat_usage(choice["usage"])
            delta = choice.get("delta") or choice.get("message") or {}
            for name in REASONING_FIELDS:
                value = delta.get(name)
                if isinstance(value, str) and value:
                    events += builder.thinking_delta("thinking", value)
                    builder.set_signature("thinking", name)
                    break
            content = delta.get("content")
            if isinstance(content, str) and content and state.mode == "json_schema" and state.forced is not None:
                events += json_as_tool_call(builder, state.forced, content)
            elif isinstance(content, str) and content:
                events += builder.text_delta("text", content)
            elif isinstance(content, list):
                for part in content:
                    events += self._content_part(builder, part)
            refusal = delta.get("refusal")
            if isinstance(refusal, str) and refusal:
                events += builder.text_delta("text", refusal)
            for call in delta.get("tool_calls") or delta.get("toolCalls") or []:
                key = self._tool_key(state, call)
                function = call.get("function") or {}
                arguments = function.get("arguments")
                if isinstance(arguments, dict):
                    state.whole.add(key)
                    events += builder.tool_call_delta(
                        key, id=call.get("id"), name=function.get("name"), arguments_object=arguments
                    )
                else:
                    events += builder.tool_call_delta(
                        key,
                        id=call.get("id"),
                        name=function.get("name"),
                        arguments=arguments if isinstance(arguments, str) else None,
                    )
            finish = choice.get("finish_reason") or choice.get("finishReason")
            if finish:
                state.finish_reason = str(finish)
        return events

    @staticmethod
    def _content_part(builder: AssistantStreamBuilder, part: JSONValue) -> list[StreamEvent]:
        """One chunk of an array ``content`` (Mistral): text, or thinking made of text parts."""
        if isinstance(part, str):
            return builder.text_delta("text", part) if part else []
        if not isinstance(part, dict):
            return []
        if part.get("type") == "thinking":
            inner = part.get("thinking")
            text = (
                "".join(p.get("text", "") for p in inner if isinstance(p, dict))
                if isinstance(inner, list)
                else str(inner or "")
            )
            return builder.thinking_delta("thinking", text) if text else []
        value = part.get("text")
        return builder.text_delta("text", value) if isinstance(value, str) and value else []

    def _finish(self, state: _ChatState, builder: AssistantStreamBuilder) -> list[StreamEvent]:
        if state.usage is not None:
            builder.set_usage(self._usage(state.usage))
        reason = state.finish_reason
        if reason is None:
            where = " in the middle of a tool call" if has_open_tool_call(builder) else ""
            raise StreamCutError(
                f"The {self.provider} stream ended{where} without a finish_reason (the connection was closed "
                f"early). The partial response was discarded; run the step again."
            )
        if reason == "content_filter":
            raise BadRequestError(
                f"{self.provider} stopped the response with its content filter (finish_reason=content_filter). "
                f"Rephrase the task or the page content sent."
            )
        if reason == "error":
            raise StreamCutError(
                f"{self.provider} reported an error while generating (finish_reason=error). Run again."
            )
        mapped = _FINISH.get(reason, "stop")
        if mapped == "toolUse" and not builder.message.tool_calls and not has_open_tool_call(builder):
            mapped = "stop"
        try:
            return builder.finish(mapped)
        except MalformedToolCallError as exc:
            if mapped == "length":
                raise MalformedToolCallError(
                    f"{exc}. The output hit the token limit inside the tool call; raise max_tokens"
                ) from exc
            raise


class MistralModel(OpenAIChatModel):
    """``mistral:<model>``: Mistral's OpenAI-compatible endpoint through the openai SDK."""

    default_provider = "mistral"
    default_base_url = MISTRAL_BASE_URL

    def __init__(self, model_id: str, options: ProviderOptions | None = None, **kwargs: Any) -> None:
        base_url = kwargs.get("base_url", options.base_url if options is not None else None)
        compat = kwargs.pop("compat", None) or detect_compat("mistral", base_url)
        super().__init__(model_id, options, compat=compat, **kwargs)


def ollama_model(model_id: str, options: ProviderOptions, **kw: Any) -> OpenAIChatModel:
    """``ollama:MODEL``: Ollama's OpenAI-compatible endpoint at the options' base URL (``$OLLAMA_HOST``, often
    ``host:port``) or 127.0.0.1:11434."""
    root = (options.base_url or OLLAMA_DEFAULT_URL).rstrip("/")
    if "//" not in root:
        root = f"http://{root}"
    base = root if root.endswith("/v1") else root + "/v1"
    kw.setdefault("server", "ollama")
    return OpenAIChatModel(model_id, replace(options, base_url=base, provider="ollama"), **kw)

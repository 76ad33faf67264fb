"""OpenAI Chat Completions, and every OpenAI-compatible endpoint (local servers, Mistral) through it.

Streaming deltas are matched to tool calls by ``index`` so parallel calls that share no id are never
merged; Mistral's quirks (camelCase ``toolCalls``, the id ``"null"``, arguments sent as an object, ids of
nine alphanumerics, no user turn straight after tool results) are handled here rather than in a second
copy of this adapter. Differences between servers are a :class:`ChatCompat` value, detected from the
provider and base URL, and overridable.

Local servers (llama.cpp's llama-server, Ollama, ...) differ from api.openai.com where it matters for an
agent that forces one tool (the page agent's ``AgentOutput``): they accept only a *string* ``tool_choice``
(llama.cpp ignores the named object and falls back to ``auto``), and small models follow a JSON schema far
better when the server constrains decoding with it. How the adapter knows it talks to one: ``server=``
(``"llamacpp"``, ``"ollama"``, ``"local"``; ``"openai"`` for the api.openai.com shape), else a loopback,
private or ``.local`` base_url serving a model whose id is not an OpenAI model name (a local proxy that
serves ``gpt-4o-mini`` is taken to forward to OpenAI). For such a server a forced tool is sent as
``tool_choice: "required"`` with only that tool, no temperature means :data:`LOCAL_DEFAULT_TEMPERATURE`, and
``output_mode="auto"`` asks for schema-constrained JSON (``response_format: json_schema``) instead of a tool
call, turns the streamed JSON back into the same tool call (with the same partial-argument previews), and
falls back to tool calls for good on this model instance if the server rejects ``response_format``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from ..core.messages import AssistantMessage, ImageContent, TextContent, ThinkingContent, ToolCall, Usage, UserMessage
from ..core.model import (
    AssistantStreamBuilder,
    Context,
    MalformedToolCallError,
    StreamEvent,
    StreamOptions,
    ToolSpec,
)
from .convert import (
    IMAGE_PLACEHOLDER,
    MistralIdNormalizer,
    StreamingAdapter,
    check_tool_choice,
    data_url,
    group_tool_results,
    has_open_tool_call,
    is_same_model,
    result_images,
    result_text,
    sanitize_id,
    sanitize_text,
    strict_schema,
    transform_messages,
    user_parts,
)
from .endpoints import is_local_url
from .errors import BadRequestError, ModelConfigError, StreamCutError
from .pricing import Prices

OPENAI_BASE_URL = "https://api.openai.com/v1"
MISTRAL_BASE_URL = "https://api.mistral.ai/v1"
REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_text")
EMPTY_RESULT_TEXT = "(no output)"
TOOL_IMAGES_TEXT = "Attached image(s) from tool result:"
BRIDGE_TEXT = "I have processed the tool results."
LOCAL_DEFAULT_TEMPERATURE = 0.0
"""Temperature sent to local servers when the caller set none (their default, 0.8 for llama.cpp, makes small
models wander): greedy decoding, so a step is reproducible while tuning a prompt."""
OLLAMA_PORT = 11434

OutputMode = Literal["auto", "json_schema", "tools", "text"]
_Mode = Literal["tools", "json_schema", "text"]
ServerKind = Literal["openai", "llamacpp", "ollama", "local"]
OUTPUT_MODES: tuple[str, ...] = ("auto", "json_schema", "tools", "text")
SERVER_KINDS: tuple[str, ...] = ("openai", "llamacpp", "ollama", "local")
TEXT_MODE_INSTRUCTION = (
    "Reply with only one JSON object (no prose, no code fence) holding the arguments of {name} ({description}), "
    "valid against this JSON Schema:\n{schema}"
)


@dataclass(frozen=True)
class ChatCompat:
    """What an OpenAI-compatible server accepts. Detected by :func:`detect_compat`; pass one to override."""

    stream_usage: bool = True
    """Send ``stream_options.include_usage`` (usage arrives in a last, choice-less chunk)."""
    store: bool = False
    """Send ``store: false`` (OpenAI itself only)."""
    max_tokens_field: Literal["max_completion_tokens", "max_tokens"] = "max_completion_tokens"
    reasoning_effort: bool = True
    tool_result_name: bool = False
    """Tool messages carry the tool ``name`` (Mistral)."""
    assistant_after_tool_result: bool = False
    """A user turn may not follow tool results directly; insert a short assistant bridge (Mistral)."""
    id_style: Literal["openai", "mistral"] = "openai"
    named_tool_choice: bool = True
    """A forced tool is sent as ``{"type": "function", "function": {"name": ...}}``; False: as the string
    ``"required"`` with only that tool declared (llama.cpp, Ollama accept only strings)."""
    schema_output: bool = False
    """``output_mode="auto"`` asks for schema-constrained JSON instead of a forced tool call."""
    default_temperature: float | None = None
    """Sent when the caller sets no temperature."""
    cache_prompt: bool = False
    """Send ``cache_prompt: true`` (llama.cpp: reuse the KV cache of the common prompt prefix)."""
    schema_in_prompt: bool = False
    """In ``json_schema`` mode, also state the tool's schema in the system prompt. llama.cpp only constrains
    decoding with it; without seeing it the model cannot know which actions exist (Qwen-1.5B then clicked
    the one action the prompt named as an example, every step). OpenAI shows the schema to the model itself."""


def _is_openai_url(base_url: str | None) -> bool:
    return base_url is None or "api.openai.com" in base_url


_OPENAI_MODEL_PREFIXES = ("gpt-", "o1", "o3", "o4", "chatgpt-", "codex-", "computer-use-")


def _local_compat(kind: str) -> ChatCompat:
    return ChatCompat(
        max_tokens_field="max_tokens",
        named_tool_choice=False,
        schema_output=True,
        schema_in_prompt=True,
        default_temperature=LOCAL_DEFAULT_TEMPERATURE,
        cache_prompt=kind == "llamacpp",
    )


def detect_server(base_url: str | None, model_id: str | None = None) -> ServerKind | None:
    """Which local server ``base_url`` is, or None for OpenAI itself and remote OpenAI-compatible services.

    A loopback/private/``.local`` URL counts as a local server unless the model id is an OpenAI model name
    (then it is taken for a local proxy to OpenAI); port 11434 is Ollama's.
    """
    if _is_openai_url(base_url) or base_url is None or not is_local_url(base_url):
        return None
    if model_id and model_id.startswith(_OPENAI_MODEL_PREFIXES):
        return None
    from urllib.parse import urlparse

    return "ollama" if urlparse(base_url).port == OLLAMA_PORT else "local"


def detect_compat(
    provider: str, base_url: str | None, model_id: str | None = None, server: str | None = None
) -> ChatCompat:
    """The compat for a provider/base_url/model; ``server=`` (one of :data:`SERVER_KINDS`) overrides detection."""
    if server is not None and server not in SERVER_KINDS:
        raise ModelConfigError(f"Unknown server={server!r}; use one of {', '.join(SERVER_KINDS)}.")
    if server is None and provider in ("local", "ollama"):
        server = "llamacpp" if provider == "local" else "ollama"
    if server is None and provider != "mistral":
        server = detect_server(base_url, model_id)
    if server in ("llamacpp", "ollama", "local"):
        return _local_compat(server)
    if provider == "mistral":
        return ChatCompat(
            stream_usage=False,
            max_tokens_field="max_tokens",
            reasoning_effort=False,
            tool_result_name=True,
            assistant_after_tool_result=True,
            id_style="mistral",
        )
    if _is_openai_url(base_url):
        return ChatCompat(store=True)
    # Local and third-party servers: the older, universally understood field names.
    return ChatCompat(max_tokens_field="max_tokens")


def make_openai_client(
    name: str,
    *,
    key_env: str | None,
    api_key: str | None,
    base_url: str | None,
    max_retries: int,
    timeout: float | None,
    default_headers: dict[str, str] | None = None,
    http_client: Any = None,
) -> Any:
    """An ``openai.AsyncOpenAI`` for an adapter; a missing key becomes a ModelConfigError naming the env var."""
    import openai

    kwargs: dict[str, Any] = {"api_key": api_key, "max_retries": max_retries}
    if http_client is not None:
        kwargs["http_client"] = http_client
    if base_url is not None:
        kwargs["base_url"] = base_url
    if timeout is not None:
        kwargs["timeout"] = timeout
    if default_headers:
        kwargs["default_headers"] = default_headers
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
    return Usage(input=uncached, output=completion, cache_read=cached, total_tokens=uncached + completion + cached)


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
    mode: _Mode | None = None
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

    def new_key(self, hint: Any) -> tuple[Any, ...]:
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


_SCHEMA_KEY = ("json_schema",)
"""Builder key of the tool call made from schema-constrained content."""
_RESPONSE_FORMAT_MARKERS = ("response_format", "json_schema", "json schema", "grammar")


def _rejects_response_format(exc: BaseException) -> bool:
    """A 4xx/5xx whose message is about ``response_format``/``json_schema``: the server cannot do schema mode."""
    status = getattr(exc, "status_code", None)
    if not isinstance(status, int) or status < 400:
        return False
    body = getattr(exc, "body", None)
    text = f"{getattr(exc, 'message', '')} {json.dumps(body) if body is not None else ''}".lower()
    return any(marker in text for marker in _RESPONSE_FORMAT_MARKERS)


def _schema_name(name: str) -> str:
    cleaned = "".join(c if c.isalnum() or c in "_-" else "_" for c in name)[:64]
    return cleaned or "output"


class OpenAIChatModel(StreamingAdapter):
    """``openai:<model>``: Chat Completions through ``openai.AsyncOpenAI``.

    ``server=`` says which kind of server ``base_url`` is (see the module docstring for the detection).
    ``output_mode=`` says how a call that forces one tool asks for it: ``"tools"`` (a forced tool call),
    ``"json_schema"`` (``response_format`` with the tool's parameters as the schema, the JSON turned into the
    tool call), ``"text"`` (no tools; the schema in the system prompt, the JSON left as text for the caller's
    repair), or ``"auto"`` (``json_schema`` for local servers, falling back to ``tools`` once if the server
    rejects ``response_format``; ``tools`` elsewhere). Each message's ``output_mode`` says which was used.
    ``default_temperature=`` replaces the per-server default (local: :data:`LOCAL_DEFAULT_TEMPERATURE`).
    """

    api = "openai-completions"
    key_env = "OPENAI_API_KEY"
    default_base_url: str | None = None

    def __init__(
        self,
        model_id: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        max_retries: int | None = None,
        timeout: float | None = None,
        provider: str = "openai",
        client: Any = None,
        prices: Prices | None = None,
        strict_tools: bool = False,
        compat: ChatCompat | None = None,
        default_headers: dict[str, str] | None = None,
        on_payload: Any = None,
        deadlines: Any = None,
        server: ServerKind | None = None,
        output_mode: OutputMode = "auto",
        default_temperature: float | None = None,
        http_client: Any = None,
    ) -> None:
        if output_mode not in OUTPUT_MODES:
            raise ModelConfigError(f"Unknown output_mode={output_mode!r}; use one of {', '.join(OUTPUT_MODES)}.")
        base_url = base_url or self.default_base_url
        super().__init__(
            model_id,
            provider=provider,
            base_url=base_url,
            max_retries=max_retries,
            prices=prices,
            on_payload=on_payload,
            deadlines=deadlines,
        )
        self.compat = compat or detect_compat(provider, base_url, model_id, server)
        self.strict_tools = strict_tools
        self.output_mode: OutputMode = output_mode
        self.default_temperature = default_temperature
        self.schema_rejected: str | None = None
        """Why the server refused ``response_format`` (set once by ``auto``; later calls use tools)."""
        if client is None:
            client = make_openai_client(
                f"{provider}:{model_id}",
                key_env=self.key_env,
                api_key=api_key,
                base_url=base_url,
                max_retries=self.max_retries,
                timeout=timeout,
                default_headers=default_headers,
                http_client=http_client,
            )
        self._client = client
        self.base_url = str(getattr(client, "base_url", base_url) or base_url or "") or None

    # -- request -------------------------------------------------------------------------------------
    def _normalizer(self) -> Any:
        if self.compat.id_style == "mistral":
            return MistralIdNormalizer()

        def openai_id(call_id: str) -> str:
            # A Responses id is "call_id|item_id"; Chat Completions takes the call part, at most 40 chars.
            return sanitize_id(call_id.split("|", 1)[0], 40)

        return openai_id

    def convert_messages(self, context: Context) -> list[dict[str, Any]]:
        """The transcript as Chat Completions ``messages`` (public for tests and debugging)."""
        messages = transform_messages(
            context.messages, provider=self.provider, api=self.api, model=self.id, normalize_id=self._normalizer()
        )
        out: list[dict[str, Any]] = []
        if context.system_prompt:
            out.append({"role": "system", "content": sanitize_text(context.system_prompt)})
        for item in group_tool_results(messages):
            if isinstance(item, list):
                images: list[ImageContent] = []
                for result in item:
                    text = result_text(result)
                    imgs = result_images(result)
                    content = text if text.strip() else (IMAGE_PLACEHOLDER if imgs else EMPTY_RESULT_TEXT)
                    tool_msg: dict[str, Any] = {"role": "tool", "tool_call_id": result.tool_call_id, "content": content}
                    if self.compat.tool_result_name:
                        tool_msg["name"] = result.tool_name
                    out.append(tool_msg)
                    images.extend(imgs)
                if images:
                    if self.compat.assistant_after_tool_result:
                        out.append({"role": "assistant", "content": BRIDGE_TEXT})
                    out.append(
                        {
                            "role": "user",
                            "content": [
                                {"type": "text", "text": TOOL_IMAGES_TEXT},
                                *({"type": "image_url", "image_url": {"url": data_url(i)}} for i in images),
                            ],
                        }
                    )
            elif isinstance(item, UserMessage):
                parts = user_parts(item)
                if not parts:
                    continue
                if self.compat.assistant_after_tool_result and out and out[-1]["role"] == "tool":
                    out.append({"role": "assistant", "content": BRIDGE_TEXT})
                if isinstance(item.content, str):
                    out.append({"role": "user", "content": sanitize_text(item.content)})
                else:
                    out.append(
                        {
                            "role": "user",
                            "content": [
                                {"type": "text", "text": p.text}
                                if isinstance(p, TextContent)
                                else {"type": "image_url", "image_url": {"url": data_url(p)}}
                                for p in parts
                            ],
                        }
                    )
            elif isinstance(item, AssistantMessage):
                msg = self._assistant_message(item)
                if msg is not None:
                    out.append(msg)
        return out

    def _assistant_message(self, message: AssistantMessage) -> dict[str, Any] | None:
        text = "".join(p.text for p in message.content if isinstance(p, TextContent) and p.text.strip())
        calls = [
            {
                "id": p.id,
                "type": "function",
                "function": {"name": p.name, "arguments": json.dumps(p.arguments, ensure_ascii=False)},
            }
            for p in message.content
            if isinstance(p, ToolCall)
        ]
        msg: dict[str, Any] = {"role": "assistant", "content": sanitize_text(text) if text else None}
        same = is_same_model(message, provider=self.provider, api=self.api, model=self.id)
        thinking = [p for p in message.content if isinstance(p, ThinkingContent) and p.thinking.strip()]
        if same and thinking:
            # Servers that stream reasoning in a side field (llama.cpp, vLLM, gpt-oss) want it back there.
            fieldname = thinking[0].signature if thinking[0].signature in REASONING_FIELDS else None
            if fieldname:
                msg[fieldname] = "\n\n".join(p.thinking for p in thinking)
        if calls:
            msg["tool_calls"] = calls
        if not text and not calls:
            return None
        return msg

    def convert_tools(self, context: Context) -> list[dict[str, Any]]:
        normalised = [strict_schema(t.parameters) for t in context.tools] if self.strict_tools else []
        strict = bool(normalised) and all(ok for _, ok in normalised)
        tools = []
        for i, spec in enumerate(context.tools):
            function: dict[str, Any] = {
                "name": spec.name,
                "description": spec.description,
                "parameters": normalised[i][0] if strict else spec.parameters,
            }
            if self.strict_tools:
                function["strict"] = strict
            tools.append({"type": "function", "function": function})
        return tools

    def _forced_tool(self, context: Context, options: StreamOptions) -> ToolSpec | None:
        """The one tool this call must produce (a named tool_choice, or "required" with a single tool)."""
        choice = check_tool_choice(options.tool_choice, context.tools)
        if choice is None or choice in ("auto", "none"):
            return None
        if choice == "required":
            return context.tools[0] if len(context.tools) == 1 else None
        return next((t for t in context.tools if t.name == choice), None)

    def _plan(self, context: Context, options: StreamOptions) -> tuple[ToolSpec | None, _Mode | None, bool]:
        """(forced tool, output mode, chosen by auto) for one call."""
        forced = self._forced_tool(context, options)
        if forced is None:
            return None, None, False
        if self.output_mode != "auto":
            return forced, self.output_mode, False
        if self.compat.schema_output and self.schema_rejected is None:
            return forced, "json_schema", True
        return forced, "tools", True

    def _build_request(self, context: Context, options: StreamOptions, *, mode: _Mode | None = None) -> dict[str, Any]:
        choice = check_tool_choice(options.tool_choice, context.tools)
        forced, planned, _ = self._plan(context, options)
        mode = mode or planned
        request: dict[str, Any] = {"model": self.id, "messages": self.convert_messages(context), "stream": True}
        if self.compat.stream_usage:
            request["stream_options"] = {"include_usage": True}
        if self.compat.store:
            request["store"] = False
        if forced is not None and mode == "json_schema":
            request["response_format"] = self._response_format(forced)
            if self.compat.schema_in_prompt:
                self._add_text_instruction(request["messages"], forced)
        elif forced is not None and mode == "text":
            self._add_text_instruction(request["messages"], forced)
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

    def _response_format(self, tool: ToolSpec) -> dict[str, Any]:
        schema, strict = tool.parameters, True
        if self.compat.named_tool_choice:
            # OpenAI's strict mode needs every property required and no extra properties.
            schema, strict = strict_schema(tool.parameters)
            if not strict:
                schema = tool.parameters
        json_schema: dict[str, Any] = {"name": _schema_name(tool.name), "schema": schema, "strict": strict}
        if tool.description:
            json_schema["description"] = tool.description
        return {"type": "json_schema", "json_schema": json_schema}

    @staticmethod
    def _add_text_instruction(messages: list[dict[str, Any]], tool: ToolSpec) -> None:
        note = TEXT_MODE_INSTRUCTION.format(
            name=tool.name,
            description=tool.description.rstrip(".") or "the output",
            schema=json.dumps(tool.parameters, ensure_ascii=False),
        )
        if messages and messages[0]["role"] == "system" and isinstance(messages[0]["content"], str):
            messages[0]["content"] = f"{messages[0]['content']}\n\n{note}"
        else:
            messages.insert(0, {"role": "system", "content": note})

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
            if not (state.auto and state.mode == "json_schema" and _rejects_response_format(exc)):
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
                # Schema-constrained JSON is the forced tool's arguments: stream it as that tool call.
                events += builder.tool_call_delta(_SCHEMA_KEY, name=state.forced.name, arguments=content)
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
    def _content_part(builder: AssistantStreamBuilder, part: Any) -> list[StreamEvent]:
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

    key_env = "MISTRAL_API_KEY"
    default_base_url = MISTRAL_BASE_URL

    def __init__(self, model_id: str, **kwargs: Any) -> None:
        kwargs.setdefault("provider", "mistral")
        compat = kwargs.pop("compat", None) or detect_compat("mistral", kwargs.get("base_url"))
        super().__init__(model_id, compat=compat, **kwargs)

"""OpenAI Chat Completions, and every OpenAI-compatible endpoint (local servers, Mistral) through it.

Streaming deltas are matched to tool calls by ``index`` so parallel calls that share no id are never
merged; Mistral's quirks (camelCase ``toolCalls``, the id ``"null"``, arguments sent as an object, ids of
nine alphanumerics, no user turn straight after tool results) are handled here rather than in a second
copy of this adapter. Differences between servers are a :class:`ChatCompat` value, detected from the
provider and base URL, and overridable.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from ..core.messages import AssistantMessage, ImageContent, TextContent, ThinkingContent, ToolCall, Usage, UserMessage
from ..core.model import AssistantStreamBuilder, Context, MalformedToolCallError, StreamEvent, StreamOptions
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
from .errors import BadRequestError, ModelConfigError, StreamCutError
from .pricing import Prices

OPENAI_BASE_URL = "https://api.openai.com/v1"
MISTRAL_BASE_URL = "https://api.mistral.ai/v1"
REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_text")
EMPTY_RESULT_TEXT = "(no output)"
TOOL_IMAGES_TEXT = "Attached image(s) from tool result:"
BRIDGE_TEXT = "I have processed the tool results."


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


def _is_openai_url(base_url: str | None) -> bool:
    return base_url is None or "api.openai.com" in base_url


def detect_compat(provider: str, base_url: str | None) -> ChatCompat:
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
) -> Any:
    """An ``openai.AsyncOpenAI`` for an adapter; a missing key becomes a ModelConfigError naming the env var."""
    import openai

    kwargs: dict[str, Any] = {"api_key": api_key, "max_retries": max_retries}
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


class OpenAIChatModel(StreamingAdapter):
    """``openai:<model>``: Chat Completions through ``openai.AsyncOpenAI``."""

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
    ) -> None:
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
        self.compat = compat or detect_compat(provider, base_url)
        self.strict_tools = strict_tools
        if client is None:
            client = make_openai_client(
                f"{provider}:{model_id}",
                key_env=self.key_env,
                api_key=api_key,
                base_url=base_url,
                max_retries=self.max_retries,
                timeout=timeout,
                default_headers=default_headers,
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

    def _build_request(self, context: Context, options: StreamOptions) -> dict[str, Any]:
        choice = check_tool_choice(options.tool_choice, context.tools)
        request: dict[str, Any] = {"model": self.id, "messages": self.convert_messages(context), "stream": True}
        if self.compat.stream_usage:
            request["stream_options"] = {"include_usage": True}
        if self.compat.store:
            request["store"] = False
        if context.tools:
            request["tools"] = self.convert_tools(context)
            if options.parallel_tool_calls is not None:
                request["parallel_tool_calls"] = options.parallel_tool_calls
        if choice is not None:
            request["tool_choice"] = (
                choice if choice in ("auto", "none", "required") else {"type": "function", "function": {"name": choice}}
            )
        if options.max_tokens is not None:
            request[self.compat.max_tokens_field] = options.max_tokens
        if options.temperature is not None:
            request["temperature"] = options.temperature
        if options.reasoning and self.compat.reasoning_effort:
            request["reasoning_effort"] = options.reasoning
        request.update(options.extra)
        return request

    async def _open_stream(self, request: dict[str, Any], options: StreamOptions) -> Any:
        # Only the required fields go through the SDK's typed parameters; the rest is sent as body so that
        # fields of compatible servers (and newer OpenAI fields) pass through unchanged.
        body = {k: v for k, v in request.items() if k not in ("model", "messages", "stream")}
        return await self._client.chat.completions.create(
            model=request["model"], messages=request["messages"], stream=True, extra_body=body
        )

    # -- response ------------------------------------------------------------------------------------
    def _new_state(self, builder: AssistantStreamBuilder) -> _ChatState:
        return _ChatState()

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
            if isinstance(content, str) and content:
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

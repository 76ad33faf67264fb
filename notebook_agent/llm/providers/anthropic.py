"""Anthropic Messages (``anthropic:<model>``) through ``anthropic.AsyncAnthropic``.

Prompt caching is on by default with three ``ephemeral`` markers (the system prompt, the last tool, the
last user turn), under Anthropic's limit of four: an agent resends the same growing prefix every step, so
this is most of the input cost. Thinking is replayed with its signature for the same model only; a
thinking block without a signature (an interrupted stream) goes back as plain text.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Unpack

from ...core.messages import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from ...core.model import AssistantStreamBuilder, Context, StreamEvent, StreamOptions
from ..convert import (
    IMAGE_PLACEHOLDER,
    StreamingAdapter,
    check_tool_choice,
    group_tool_results,
    has_open_tool_call,
    result_images,
    result_text,
    sanitize_id,
    sanitize_text,
    transform_messages,
    user_parts,
)
from ..errors import BadRequestError, ModelConfigError, StreamCutError
from ..provider_options import ProviderKeywords, ProviderOptions

DEFAULT_MAX_TOKENS = 8192
THINKING_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}
EPHEMERAL = {"type": "ephemeral"}
REDACTED_TEXT = "[Reasoning redacted]"
EMPTY_RESULT_TEXT = "(no output)"
EMPTY_ERROR_TEXT = "[tool error with no output]"

_STOP = {
    "end_turn": "stop",
    "pause_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "toolUse",
}


@dataclass
class _AnthState:
    usage: Usage = field(default_factory=Usage)
    stop_reason: str | None = None
    stopped: bool = False
    signatures: dict[int, str] = field(default_factory=dict)


def _update_usage(usage: Usage, raw: dict[str, Any]) -> None:
    """Anthropic reports cumulative counts; a field left out (or null) keeps its earlier value."""
    if raw.get("input_tokens") is not None:
        usage.input = int(raw["input_tokens"])
    if raw.get("output_tokens") is not None:
        usage.output = int(raw["output_tokens"])
    if raw.get("cache_read_input_tokens") is not None:
        usage.cache_read = int(raw["cache_read_input_tokens"])
    if raw.get("cache_creation_input_tokens") is not None:
        usage.cache_write = int(raw["cache_creation_input_tokens"])
    usage.total_tokens = usage.input + usage.output + usage.cache_read + usage.cache_write


def _image_block(image: ImageContent) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": image.mime_type, "data": image.data}}


class AnthropicModel(StreamingAdapter[_AnthState]):
    """``anthropic:<model>``: the Messages API, streamed."""

    api = "anthropic-messages"
    default_provider = "anthropic"

    def __init__(
        self,
        model_id: str,
        options: ProviderOptions | None = None,
        *,
        cache: bool = True,
        default_max_tokens: int = DEFAULT_MAX_TOKENS,
        **settings: Unpack[ProviderKeywords],
    ) -> None:
        opts = ProviderOptions.of(options, **settings)
        super().__init__(model_id, opts)
        self.cache = cache
        self.default_max_tokens = default_max_tokens
        client = opts.client
        if client is None:
            import anthropic

            kwargs: dict[str, Any] = {"max_retries": self.max_retries, **opts.sdk_kwargs()}
            if opts.api_key is not None:
                kwargs["api_key"] = opts.api_key
            if opts.api_key is None and not any(
                os.environ.get(v) for v in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE")
            ):
                raise ModelConfigError(
                    f"No API key for anthropic:{model_id}: set ANTHROPIC_API_KEY or pass api_key=... to get_model()."
                )
            client = anthropic.AsyncAnthropic(**kwargs)
        self._client = client
        self.base_url = str(getattr(client, "base_url", opts.base_url) or opts.base_url or "") or None

    # -- request -------------------------------------------------------------------------------------
    def convert_messages(self, context: Context) -> list[dict[str, Any]]:
        """The transcript as Messages API ``messages`` (cache marker on the last user turn added here)."""
        messages = transform_messages(
            context.messages,
            provider=self.provider,
            api=self.api,
            model=self.id,
            normalize_id=lambda call_id: sanitize_id(call_id, 64),
        )
        out: list[dict[str, Any]] = []
        for item in group_tool_results(messages):
            if isinstance(item, list):
                out.append({"role": "user", "content": [self._tool_result(r) for r in item]})
            elif isinstance(item, UserMessage):
                blocks = [
                    {"type": "text", "text": p.text} if isinstance(p, TextContent) else _image_block(p)
                    for p in user_parts(item)
                ]
                if blocks:
                    out.append({"role": "user", "content": blocks})
            elif isinstance(item, AssistantMessage):
                blocks = self._assistant_blocks(item)
                if blocks:
                    out.append({"role": "assistant", "content": blocks})
        if self.cache:
            for msg in reversed(out):
                if msg["role"] == "user" and msg["content"]:
                    msg["content"][-1] = {**msg["content"][-1], "cache_control": EPHEMERAL}
                    break
        return out

    @staticmethod
    def _tool_result(result: ToolResultMessage) -> dict[str, Any]:
        text = result_text(result)
        images = result_images(result)
        content: str | list[dict[str, Any]]
        if images:
            content = [{"type": "text", "text": text if text.strip() else IMAGE_PLACEHOLDER}]
            content += [_image_block(i) for i in images]
        elif text.strip():
            content = text
        else:
            content = EMPTY_ERROR_TEXT if result.is_error else EMPTY_RESULT_TEXT
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": result.tool_call_id, "content": content}
        if result.is_error:
            block["is_error"] = True
        return block

    @staticmethod
    def _assistant_blocks(message: AssistantMessage) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = []
        for part in message.content:
            if isinstance(part, TextContent):
                if part.text.strip():
                    blocks.append({"type": "text", "text": sanitize_text(part.text)})
            elif isinstance(part, ThinkingContent):
                if part.redacted:
                    if part.signature:
                        blocks.append({"type": "redacted_thinking", "data": part.signature})
                elif part.signature:
                    blocks.append({"type": "thinking", "thinking": part.thinking, "signature": part.signature})
                elif part.thinking.strip():
                    blocks.append({"type": "text", "text": sanitize_text(part.thinking)})
            elif isinstance(part, ToolCall):
                blocks.append({"type": "tool_use", "id": part.id, "name": part.name, "input": part.arguments or {}})
        return blocks

    def convert_tools(self, context: Context) -> list[dict[str, Any]]:
        tools: list[dict[str, Any]] = []
        for spec in context.tools:
            schema = dict(spec.parameters)
            schema.setdefault("type", "object")
            tools.append({"name": spec.name, "description": spec.description, "input_schema": schema})
        if tools and self.cache:
            tools[-1]["cache_control"] = EPHEMERAL
        return tools

    def _build_request(self, context: Context, options: StreamOptions) -> dict[str, Any]:
        choice = check_tool_choice(options.tool_choice, context.tools)
        max_tokens = options.max_tokens or self.default_max_tokens
        request: dict[str, Any] = {
            "model": self.id,
            "max_tokens": max_tokens,
            "messages": self.convert_messages(context),
            "stream": True,
        }
        if context.system_prompt:
            system: dict[str, Any] = {"type": "text", "text": sanitize_text(context.system_prompt)}
            if self.cache:
                system["cache_control"] = EPHEMERAL
            request["system"] = [system]
        forced = choice not in (None, "auto", "none")
        if context.tools:
            request["tools"] = self.convert_tools(context)
            tool_choice: dict[str, Any] | None = None
            if choice == "required":
                tool_choice = {"type": "any"}
            elif choice in ("auto", "none"):
                tool_choice = {"type": choice}
            elif choice is not None:
                tool_choice = {"type": "tool", "name": choice}
            if options.parallel_tool_calls is False and choice != "none":
                tool_choice = {**(tool_choice or {"type": "auto"}), "disable_parallel_tool_use": True}
            if tool_choice is not None:
                request["tool_choice"] = tool_choice
        # Anthropic rejects thinking together with a forced tool; forcing wins (the caller asked for it).
        if options.reasoning and options.reasoning in THINKING_BUDGETS and not forced:
            budget = THINKING_BUDGETS[options.reasoning]
            request["thinking"] = {"type": "enabled", "budget_tokens": budget}
            request["max_tokens"] = max_tokens + budget
        elif options.temperature is not None:
            request["temperature"] = options.temperature
        request.update(options.extra)
        return request

    async def _open_stream(self, request: dict[str, Any], options: StreamOptions) -> Any:
        body = {k: v for k, v in request.items() if k not in ("model", "max_tokens", "messages", "stream")}
        return await self._client.messages.create(
            model=request["model"],
            max_tokens=request["max_tokens"],
            messages=request["messages"],
            stream=True,
            extra_body=body,
        )

    # -- response ------------------------------------------------------------------------------------
    def _new_state(self, builder: AssistantStreamBuilder) -> _AnthState:
        return _AnthState()

    def _handle_chunk(self, state: _AnthState, builder: AssistantStreamBuilder, chunk: Any) -> list[StreamEvent]:
        data: dict[str, Any] = chunk if isinstance(chunk, dict) else chunk.to_dict(warnings=False)
        kind = data.get("type")
        if kind == "message_start":
            _update_usage(state.usage, (data.get("message") or {}).get("usage") or {})
            return []
        if kind == "content_block_start":
            index = int(data.get("index") or 0)
            block = data.get("content_block") or {}
            block_type = block.get("type")
            if block_type == "text":
                return builder.text_delta(index, str(block.get("text") or ""))
            if block_type == "thinking":
                return builder.thinking_delta(index, str(block.get("thinking") or ""))
            if block_type == "redacted_thinking":
                return builder.add_thinking(REDACTED_TEXT, str(block.get("data") or ""), redacted=True)
            if block_type == "tool_use":
                initial = block.get("input")
                return builder.tool_call_delta(
                    index,
                    id=block.get("id"),
                    name=block.get("name"),
                    arguments_object=initial if isinstance(initial, dict) and initial else None,
                )
            return []
        if kind == "content_block_delta":
            index = int(data.get("index") or 0)
            delta = data.get("delta") or {}
            delta_type = delta.get("type")
            if delta_type == "text_delta":
                return builder.text_delta(index, str(delta.get("text") or ""))
            if delta_type == "thinking_delta":
                return builder.thinking_delta(index, str(delta.get("thinking") or ""))
            if delta_type == "signature_delta":
                state.signatures[index] = state.signatures.get(index, "") + str(delta.get("signature") or "")
                builder.set_signature(index, state.signatures[index])
                return []
            if delta_type == "input_json_delta":
                return builder.tool_call_delta(index, arguments=str(delta.get("partial_json") or ""))
            return []
        if kind == "content_block_stop":
            return builder.end_block(int(data.get("index") or 0))
        if kind == "message_delta":
            reason = (data.get("delta") or {}).get("stop_reason")
            if reason:
                state.stop_reason = str(reason)
            _update_usage(state.usage, data.get("usage") or {})
            return []
        if kind == "message_stop":
            state.stopped = True
        return []

    def _finish(self, state: _AnthState, builder: AssistantStreamBuilder) -> list[StreamEvent]:
        builder.set_usage(self._usage(state.usage))
        if not state.stopped and state.stop_reason is None:
            where = " in the middle of a tool call" if has_open_tool_call(builder) else ""
            raise StreamCutError(
                f"The Anthropic stream ended{where} before message_stop (the connection was closed early). "
                f"The partial response was discarded; run the step again."
            )
        reason = state.stop_reason or "end_turn"
        if reason in ("refusal", "sensitive"):
            raise BadRequestError(
                f"Claude declined to continue (stop_reason={reason}). Rephrase the task or the page content sent."
            )
        mapped = _STOP.get(reason, "stop")
        return builder.finish(mapped)  # type: ignore[arg-type]

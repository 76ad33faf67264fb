"""OpenAI Responses API (``openai-responses:<model>``) through ``openai.AsyncOpenAI().responses``.

This is the wire adapter: it sends a request and turns the streamed events into the normalised events,
and translates failed or filtered responses into the package's errors. Requests are stateless
(``store: false``); reasoning is replayed from the encrypted reasoning item kept as the thinking block's
signature, so a multi-turn tool loop keeps its chain of thought without server state. Tool-call ids are
stored as ``"<call_id>|<item_id>"``: the call id pairs results, the item id pairs reasoning with its call on
replay. Its part in a module of its own beside it:

* ``responses_messages.py``: the transcript as the request's ``input`` items and ``tools`` (sorted by name,
  ``strict`` only when asked for and every schema survives strict normalisation).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Unpack

from ...core.messages import TextContent, ThinkingContent, Usage
from ...core.model import AssistantStreamBuilder, Context, StreamEvent, StreamOptions
from ..convert import StreamingAdapter, check_tool_choice, has_open_tool_call, sanitize_text
from ..errors import BadRequestError, StreamCutError, classify_payload, provider_error
from ..provider_options import ProviderKeywords, ProviderOptions
from .openai_chat import make_openai_client
from .responses_messages import responses_input, responses_tools


def responses_usage(raw: dict[str, Any]) -> Usage:
    total_in = int(raw.get("input_tokens") or 0)
    details = raw.get("input_tokens_details") or {}
    cached = int(details.get("cached_tokens") or 0) if isinstance(details, dict) else 0
    out = int(raw.get("output_tokens") or 0)
    out_details = raw.get("output_tokens_details") or {}
    reasoning = int(out_details.get("reasoning_tokens") or 0) if isinstance(out_details, dict) else 0
    uncached = max(total_in - cached, 0)
    return Usage(
        input=uncached, output=out, cache_read=cached, reasoning=reasoning, total_tokens=uncached + out + cached
    )


@dataclass
class _RespState:
    terminal: str | None = None
    usage: Usage | None = None
    keys: dict[int, str] = field(default_factory=dict)
    """output_index -> block key, for events that carry no item id."""
    part_index: dict[str, int] = field(default_factory=dict)
    """block key -> index in the message content, to attach signatures after the block closed."""
    args_seen: dict[str, str] = field(default_factory=dict)
    streamed: set[str] = field(default_factory=set)


class OpenAIResponsesModel(StreamingAdapter[_RespState]):
    """``openai-responses:<model>``: the Responses API, streamed."""

    api = "openai-responses"
    default_provider = "openai"

    def __init__(
        self,
        model_id: str,
        options: ProviderOptions | None = None,
        *,
        strict_tools: bool = False,
        **settings: Unpack[ProviderKeywords],
    ) -> None:
        opts = ProviderOptions.of(options, **settings)
        super().__init__(model_id, opts)
        self.strict_tools = strict_tools
        client = opts.client
        if client is None:
            client = make_openai_client(f"openai-responses:{model_id}", key_env=self.key_env, options=opts)
        self._client = client
        self.base_url = str(getattr(client, "base_url", opts.base_url) or opts.base_url or "") or None

    # -- request -------------------------------------------------------------------------------------
    def convert_input(self, context: Context) -> list[dict[str, Any]]:
        """The transcript as Responses ``input`` items (public for tests and debugging)."""
        return responses_input(context, provider=self.provider, api=self.api, model=self.id)

    def convert_tools(self, context: Context) -> list[dict[str, Any]]:
        return responses_tools(context.tools, strict_tools=self.strict_tools)

    def _build_request(self, context: Context, options: StreamOptions) -> dict[str, Any]:
        choice = check_tool_choice(options.tool_choice, context.tools)
        request: dict[str, Any] = {
            "model": self.id,
            "input": self.convert_input(context),
            "stream": True,
            "store": False,
        }
        if context.system_prompt:
            request["instructions"] = sanitize_text(context.system_prompt)
        if context.tools:
            request["tools"] = self.convert_tools(context)
            if options.parallel_tool_calls is not None:
                request["parallel_tool_calls"] = options.parallel_tool_calls
        if choice is not None:
            request["tool_choice"] = (
                choice if choice in ("auto", "none", "required") else {"type": "function", "name": choice}
            )
        if options.max_tokens is not None:
            request["max_output_tokens"] = max(options.max_tokens, 16)
        if options.temperature is not None:
            request["temperature"] = options.temperature
        if options.reasoning:
            request["reasoning"] = {"effort": options.reasoning, "summary": "auto"}
            request["include"] = ["reasoning.encrypted_content"]
        request.update(options.extra)
        return request

    async def _open_stream(self, request: dict[str, Any], options: StreamOptions) -> Any:
        body = {k: v for k, v in request.items() if k not in ("model", "input", "stream")}
        return await self._client.responses.create(
            model=request["model"], input=request["input"], stream=True, extra_body=body
        )

    # -- response ------------------------------------------------------------------------------------
    def _new_state(self, builder: AssistantStreamBuilder) -> _RespState:
        return _RespState()

    @staticmethod
    def _remember(state: _RespState, key: str, events: list[StreamEvent]) -> None:
        for event in events:
            if event.type.endswith("_start") and event.content_index is not None:
                state.part_index[key] = event.content_index

    def _key(self, state: _RespState, data: dict[str, Any]) -> str:
        item_id = data.get("item_id")
        if isinstance(item_id, str) and item_id:
            return item_id
        return state.keys.get(int(data.get("output_index") or 0), f"out-{data.get('output_index')}")

    def _handle_chunk(self, state: _RespState, builder: AssistantStreamBuilder, chunk: Any) -> list[StreamEvent]:
        data: dict[str, Any] = chunk if isinstance(chunk, dict) else chunk.to_dict(warnings=False)
        kind = data.get("type", "")
        events: list[StreamEvent] = []
        if kind == "response.output_item.added":
            item = data.get("item") or {}
            key = str(item.get("id") or f"out-{data.get('output_index')}")
            state.keys[int(data.get("output_index") or 0)] = key
            events = self._open_item(state, builder, key, item)
        elif kind == "response.reasoning_summary_part.added":
            if int(data.get("summary_index") or 0) > 0:
                events = builder.thinking_delta(self._key(state, data), "\n\n")
        elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            key = self._key(state, data)
            state.streamed.add(key)
            events = builder.thinking_delta(key, str(data.get("delta") or ""))
        elif kind in ("response.output_text.delta", "response.refusal.delta"):
            key = self._key(state, data)
            state.streamed.add(key)
            events = builder.text_delta(key, str(data.get("delta") or ""))
        elif kind == "response.function_call_arguments.delta":
            key = self._key(state, data)
            delta = str(data.get("delta") or "")
            state.args_seen[key] = state.args_seen.get(key, "") + delta
            events = builder.tool_call_delta(key, arguments=delta)
        elif kind == "response.function_call_arguments.done":
            events = self._complete_args(state, builder, self._key(state, data), data.get("arguments"))
        elif kind == "response.output_item.done":
            item = data.get("item") or {}
            key = str(item.get("id") or state.keys.get(int(data.get("output_index") or 0), ""))
            events = self._close_item(state, builder, key, item)
        elif kind in ("response.completed", "response.incomplete", "response.failed"):
            response = data.get("response") or {}
            if isinstance(response.get("usage"), dict):
                state.usage = responses_usage(response["usage"])
            state.terminal = kind
            if kind == "response.failed":
                error = response.get("error") or {}
                if not isinstance(error, dict) or not error:
                    error = {"message": "the response failed without error details"}
                raise provider_error(*classify_payload(error, self._error_context()))
            if kind == "response.incomplete":
                reason = (response.get("incomplete_details") or {}).get("reason")
                if reason == "content_filter":
                    raise BadRequestError(
                        "OpenAI stopped the response with its content filter (incomplete: content_filter). "
                        "Rephrase the task or the page content sent."
                    )
        elif kind == "error":
            raise provider_error(*classify_payload(data, self._error_context()))
        return events

    def _open_item(
        self, state: _RespState, builder: AssistantStreamBuilder, key: str, item: dict[str, Any]
    ) -> list[StreamEvent]:
        item_type = item.get("type")
        if item_type == "reasoning":
            events = builder.thinking_delta(key, "")
        elif item_type == "message":
            events = builder.text_delta(key, "")
        elif item_type == "function_call":
            initial = str(item.get("arguments") or "")
            state.args_seen[key] = initial
            events = builder.tool_call_delta(
                key,
                id=f"{item.get('call_id') or ''}|{item.get('id') or ''}",
                name=item.get("name"),
                arguments=initial or None,
            )
        else:
            return []
        self._remember(state, key, events)
        return events

    def _complete_args(
        self, state: _RespState, builder: AssistantStreamBuilder, key: str, final: object
    ) -> list[StreamEvent]:
        """Feed whatever part of the final arguments string the deltas did not carry."""
        if not isinstance(final, str):
            return []
        seen = state.args_seen.get(key, "")
        if final != seen and final.startswith(seen):
            state.args_seen[key] = final
            return builder.tool_call_delta(key, arguments=final[len(seen) :])
        return []

    def _close_item(
        self, state: _RespState, builder: AssistantStreamBuilder, key: str, item: dict[str, Any]
    ) -> list[StreamEvent]:
        item_type = item.get("type")
        events: list[StreamEvent] = []
        if item_type == "function_call":
            if key not in state.part_index:
                events += self._open_item(state, builder, key, item)
            events += self._complete_args(state, builder, key, item.get("arguments"))
            return events + builder.end_block(key)
        if item_type not in ("reasoning", "message"):
            return []
        if key not in state.streamed:
            # Items that arrive whole (no deltas): take their text from the finished item.
            if item_type == "reasoning":
                text = "\n\n".join(s.get("text", "") for s in item.get("summary") or [] if isinstance(s, dict))
                events += builder.thinking_delta(key, text) if key in state.part_index or text else []
            else:
                text = "".join(
                    c.get("text") or c.get("refusal") or "" for c in item.get("content") or [] if isinstance(c, dict)
                )
                events += builder.text_delta(key, text) if key in state.part_index or text else []
            self._remember(state, key, events)
        index = state.part_index.get(key)
        if index is not None and index < len(builder.message.content):
            part = builder.message.content[index]
            if item_type == "reasoning" and isinstance(part, ThinkingContent):
                part.signature = json.dumps(item)
            elif item_type == "message" and isinstance(part, TextContent):
                part.signature = json.dumps({"v": 1, "id": item.get("id"), "phase": item.get("phase")})
        return events + builder.end_block(key)

    def _finish(self, state: _RespState, builder: AssistantStreamBuilder) -> list[StreamEvent]:
        if state.usage is not None:
            builder.set_usage(self._usage(state.usage))
        if state.terminal is None:
            where = " in the middle of a tool call" if has_open_tool_call(builder) else ""
            raise StreamCutError(
                f"The OpenAI Responses stream ended{where} before response.completed (the connection was "
                f"closed early). The partial response was discarded; run the step again."
            )
        return builder.finish("length" if state.terminal == "response.incomplete" else "stop")

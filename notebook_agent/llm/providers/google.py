"""Google Gemini (``google:<model>``) through the ``google-genai`` SDK's async client.

google-genai is an optional extra (``pip install 'notebook-agent[google]'``), so it is imported only when a
model is built. Gemini sends each function call whole (no argument fragments) and often without an id, so
ids are generated, and a duplicate id in one message is replaced. Thought signatures (bytes in the SDK) are
stored base64-encoded and replayed only to the same model, as Gemini requires.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field
from typing import Any, Unpack

from ...core import JSONValue
from ...core.messages import AssistantMessage, ImageContent, TextContent, ThinkingContent, ToolCall, Usage, UserMessage
from ...core.model import AssistantStreamBuilder, Context, StreamEvent, StreamOptions
from ..convert import (
    IMAGE_PLACEHOLDER,
    StreamingAdapter,
    check_tool_choice,
    group_tool_results,
    is_same_model,
    result_images,
    result_text,
    sanitize_id,
    sanitize_text,
    transform_messages,
    user_parts,
)
from ..deadlines import request_event_hooks
from ..errors import BadRequestError, MalformedResponseError, ModelConfigError, ServerError, StreamCutError
from ..loop_transport import loop_transport
from ..provider_options import ProviderKeywords, ProviderOptions

INSTALL_HINT = "pip install 'notebook-agent[google]'"
KEY_ENVS = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
SKIP_SIGNATURE = "skip_thought_signature_validator"
TOOL_IMAGES_TEXT = "Tool result image:"
THINKING_BUDGETS = {"minimal": 512, "low": 2048, "medium": 8192, "high": 24576}
_BLOCKED = {
    "SAFETY",
    "RECITATION",
    "LANGUAGE",
    "BLOCKLIST",
    "PROHIBITED_CONTENT",
    "SPII",
    "IMAGE_SAFETY",
    "IMAGE_PROHIBITED_CONTENT",
    "IMAGE_RECITATION",
    "IMAGE_OTHER",
    "NO_IMAGE",
}
# Keys of the OpenAPI 3.0 subset accepted by the legacy ``parameters`` field.
_LEGACY_SCHEMA_KEYS = {
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "items",
    "properties",
    "required",
    "anyOf",
    "minItems",
    "maxItems",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "pattern",
    "default",
    "example",
    "propertyOrdering",
}


def legacy_schema(schema: JSONValue) -> Any:
    """A JSON Schema cut down to the OpenAPI subset of Gemini's legacy ``parameters`` field."""
    if isinstance(schema, list):
        return [legacy_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key not in _LEGACY_SCHEMA_KEYS:
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: legacy_schema(sub) for name, sub in value.items()}
        elif key in ("items", "anyOf"):
            out[key] = legacy_schema(value)
        else:
            out[key] = value
    return out


def _decode_signature(signature: str | None) -> bytes | None:
    """Stored signatures are base64 text; Gemini's SDK wants bytes. Anything else is not replayable."""
    if not signature or len(signature) % 4:
        return None
    try:
        return base64.b64decode(signature, validate=True)
    except (binascii.Error, ValueError):
        return None


def _is_gemini3_or_later(model: str) -> bool:
    name = model.rsplit("/", 1)[-1]
    if not name.startswith("gemini-"):
        return True  # non-Gemini models behind the same API take nested images
    major = name.removeprefix("gemini-").split(".", 1)[0].split("-", 1)[0]
    return major.isdigit() and int(major) >= 3


def _inline(image: ImageContent) -> dict[str, Any]:
    return {"inline_data": {"mime_type": image.mime_type, "data": base64.b64decode(image.data)}}


def google_usage(meta: object) -> Usage:
    prompt = int(getattr(meta, "prompt_token_count", None) or 0)
    cached = int(getattr(meta, "cached_content_token_count", None) or 0)
    thoughts = int(getattr(meta, "thoughts_token_count", None) or 0)
    output = int(getattr(meta, "candidates_token_count", None) or 0) + thoughts
    uncached = max(prompt - cached, 0)
    return Usage(
        input=uncached, output=output, cache_read=cached, reasoning=thoughts, total_tokens=uncached + output + cached
    )


@dataclass
class _GemState:
    finish_reason: str | None = None
    usage: Usage | None = None
    seen_ids: set[str] = field(default_factory=set)
    calls: int = 0
    block_reason: str | None = None


class GoogleModel(StreamingAdapter[_GemState]):
    """``google:<model>``: Gemini ``streamGenerateContent`` (SSE) through ``client.aio``."""

    api = "google-generative-ai"
    default_provider = "google"

    def __init__(
        self,
        model_id: str,
        options: ProviderOptions | None = None,
        *,
        legacy_parameters: bool = False,
        send_call_ids: bool | None = None,
        retry_options: dict[str, Any] | None = None,
        **settings: Unpack[ProviderKeywords],
    ) -> None:
        opts = ProviderOptions.of(options, **settings)
        super().__init__(model_id, opts)
        self.legacy_parameters = legacy_parameters
        # Gemini matches responses to calls by name and order; ids are for other models behind this API.
        self.send_call_ids = (not model_id.startswith("gemini")) if send_call_ids is None else send_call_ids
        client = opts.client
        if client is None:
            if opts.http_client is not None:
                raise ModelConfigError(
                    "google: google-genai makes its own HTTP client, so http_client= cannot be used; pass "
                    "client=genai.Client(...) made your way instead."
                )
            try:
                from google import genai
                from google.genai import types
            except ImportError as exc:
                raise ModelConfigError(f"google: models need the google-genai package: {INSTALL_HINT}") from exc
            http: dict[str, Any] = {}
            if opts.base_url:
                http["base_url"] = opts.base_url
            if opts.timeout is not None:
                http["timeout"] = int(opts.timeout * 1000)
            if opts.headers:
                http["headers"] = opts.headers
            # a transport of its own HTTP library keeps the SDK off aiohttp (where the deadlines cannot watch)
            http["async_client_args"] = {"event_hooks": request_event_hooks(), "transport": loop_transport()}
            if self.max_retries > 0:
                # google-genai retries only when asked; attempts count the first try.
                retry = {"attempts": self.max_retries + 1, **(retry_options or {})}
                http["retry_options"] = types.HttpRetryOptions(**retry)
            try:
                client = genai.Client(api_key=opts.api_key, http_options=types.HttpOptions(**http))
            except ValueError as exc:
                raise ModelConfigError(
                    f"Cannot create the Gemini client for google:{model_id}: {exc} Set GEMINI_API_KEY "
                    f"(or GOOGLE_API_KEY) or pass api_key=... to get_model()."
                ) from exc
        self._client = client
        self.base_url = opts.base_url

    # -- request -------------------------------------------------------------------------------------
    def convert_contents(self, context: Context) -> list[dict[str, Any]]:
        """The transcript as Gemini ``contents`` (dicts in the SDK's field names)."""
        messages = transform_messages(
            context.messages,
            provider=self.provider,
            api=self.api,
            model=self.id,
            normalize_id=lambda call_id: sanitize_id(call_id, 64),
        )
        nested_images = _is_gemini3_or_later(self.id)
        out: list[dict[str, Any]] = []
        for item in group_tool_results(messages):
            if isinstance(item, list):
                parts: list[dict[str, Any]] = []
                loose_images: list[ImageContent] = []
                for result in item:
                    text = result_text(result)
                    images = result_images(result)
                    value = text if text.strip() else (IMAGE_PLACEHOLDER if images else "")
                    response: dict[str, Any] = {
                        "name": result.tool_name,
                        "response": {"error": value} if result.is_error else {"output": value},
                    }
                    if self.send_call_ids:
                        response["id"] = result.tool_call_id
                    if images and nested_images:
                        response["parts"] = [_inline(i) for i in images]
                    else:
                        loose_images.extend(images)
                    parts.append({"function_response": response})
                out.append({"role": "user", "parts": parts})
                if loose_images:
                    out.append({"role": "user", "parts": [{"text": TOOL_IMAGES_TEXT}, *map(_inline, loose_images)]})
            elif isinstance(item, UserMessage):
                user = [{"text": p.text} if isinstance(p, TextContent) else _inline(p) for p in user_parts(item)]
                if user:
                    out.append({"role": "user", "parts": user})
            elif isinstance(item, AssistantMessage):
                model_parts = self._model_parts(item)
                if model_parts:
                    out.append({"role": "model", "parts": model_parts})
        return out

    def _model_parts(self, message: AssistantMessage) -> list[dict[str, Any]]:
        same = is_same_model(message, provider=self.provider, api=self.api, model=self.id)
        gemini3 = self.id.startswith("gemini-") and _is_gemini3_or_later(self.id)
        parts: list[dict[str, Any]] = []
        for part in message.content:
            if isinstance(part, TextContent | ThinkingContent):
                text = part.text if isinstance(part, TextContent) else part.thinking
                signature = _decode_signature(part.signature) if same else None
                if not text.strip() and signature is None:
                    continue
                entry: dict[str, Any] = {"text": sanitize_text(text)}
                if isinstance(part, ThinkingContent):
                    entry["thought"] = True
                if signature is not None:
                    entry["thought_signature"] = signature
                parts.append(entry)
            elif isinstance(part, ToolCall):
                call: dict[str, Any] = {"name": part.name, "args": part.arguments or {}}
                if self.send_call_ids:
                    call["id"] = part.id
                entry = {"function_call": call}
                signature = _decode_signature(part.thought_signature) if same else None
                if signature is None and gemini3:
                    # Gemini 3 rejects unsigned function calls in history; this documented value opts out.
                    # The SDK base64-encodes bytes, so pass the bytes that the documented text decodes to.
                    signature = base64.urlsafe_b64decode(SKIP_SIGNATURE)
                if signature is not None:
                    entry["thought_signature"] = signature
                parts.append(entry)
        return parts

    def convert_tools(self, context: Context) -> list[dict[str, Any]]:
        if not context.tools:
            return []
        declarations = []
        for spec in context.tools:
            decl: dict[str, Any] = {"name": spec.name, "description": spec.description}
            if self.legacy_parameters:
                decl["parameters"] = legacy_schema(spec.parameters)
            else:
                decl["parameters_json_schema"] = spec.parameters
            declarations.append(decl)
        return [{"function_declarations": declarations}]

    def _build_request(self, context: Context, options: StreamOptions) -> dict[str, Any]:
        choice = check_tool_choice(options.tool_choice, context.tools)
        config: dict[str, Any] = {"automatic_function_calling": {"disable": True}}
        if context.system_prompt:
            config["system_instruction"] = sanitize_text(context.system_prompt)
        if context.tools:
            config["tools"] = self.convert_tools(context)
            if choice is not None:
                mode = {"auto": "AUTO", "none": "NONE"}.get(choice, "ANY")
                calling: dict[str, Any] = {"mode": mode}
                if mode == "ANY" and choice != "required":
                    calling["allowed_function_names"] = [choice]
                config["tool_config"] = {"function_calling_config": calling}
        if options.max_tokens is not None:
            config["max_output_tokens"] = options.max_tokens
        if options.temperature is not None:
            config["temperature"] = options.temperature
        if options.reasoning:
            thinking: dict[str, Any] = {"include_thoughts": True}
            if _is_gemini3_or_later(self.id) and self.id.startswith("gemini-"):
                thinking["thinking_level"] = "low" if options.reasoning in ("minimal", "low") else "high"
            else:
                thinking["thinking_budget"] = THINKING_BUDGETS.get(options.reasoning, 8192)
            config["thinking_config"] = thinking
        config.update(options.extra)
        return {"model": self.id, "contents": self.convert_contents(context), "config": config}

    async def _open_stream(self, request: dict[str, Any], options: StreamOptions) -> Any:
        return await self._client.aio.models.generate_content_stream(
            model=request["model"], contents=request["contents"], config=request["config"]
        )

    # -- response ------------------------------------------------------------------------------------
    def _new_state(self, builder: AssistantStreamBuilder) -> _GemState:
        return _GemState()

    def _handle_chunk(self, state: _GemState, builder: AssistantStreamBuilder, chunk: Any) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        if getattr(chunk, "usage_metadata", None) is not None:
            state.usage = google_usage(chunk.usage_metadata)
        feedback = getattr(chunk, "prompt_feedback", None)
        if feedback is not None and getattr(feedback, "block_reason", None):
            state.block_reason = _enum_name(feedback.block_reason)
        candidates = getattr(chunk, "candidates", None) or []
        if not candidates:
            return events
        candidate = candidates[0]
        content = getattr(candidate, "content", None)
        for part in getattr(content, "parts", None) or []:
            events += self._part(state, builder, part)
        if getattr(candidate, "finish_reason", None):
            state.finish_reason = _enum_name(candidate.finish_reason)
        return events

    def _part(self, state: _GemState, builder: AssistantStreamBuilder, part: object) -> list[StreamEvent]:
        signature = getattr(part, "thought_signature", None)
        encoded = base64.b64encode(signature).decode() if isinstance(signature, bytes) and signature else None
        call = getattr(part, "function_call", None)
        if call is not None:
            state.calls += 1
            key = ("call", state.calls)
            call_id = getattr(call, "id", None)
            if not call_id or call_id in state.seen_ids:
                call_id = None  # the builder generates one
            events = builder.tool_call_delta(
                key,
                id=call_id,
                name=getattr(call, "name", None) or "",
                arguments_object=dict(call.args or {}),
                thought_signature=encoded,
            )
            tool_call = builder.message.content[events[-1].content_index or 0] if events else None
            if isinstance(tool_call, ToolCall):
                state.seen_ids.add(tool_call.id)
            return events + builder.end_block(key)
        text = getattr(part, "text", None)
        if text is None:
            return []
        text_key = "thinking" if getattr(part, "thought", None) else "text"
        events = (
            builder.text_delta(text_key, text, kind="thinking" if getattr(part, "thought", None) else "text")
            if text
            else []
        )
        if encoded:
            builder.set_signature(text_key, encoded)
        return events

    def _finish(self, state: _GemState, builder: AssistantStreamBuilder) -> list[StreamEvent]:
        if state.usage is not None:
            builder.set_usage(self._usage(state.usage))
        reason = state.finish_reason
        if reason is None:
            if state.block_reason:
                raise BadRequestError(
                    f"Gemini blocked the prompt ({state.block_reason}). Rephrase the task or the page content sent."
                )
            raise StreamCutError(
                "The Gemini stream ended without a finish reason (the connection was closed early). The partial "
                "response was discarded; run the step again."
            )
        if reason in _BLOCKED:
            raise BadRequestError(
                f"Gemini stopped the response ({reason}). Rephrase the task or the page content sent."
            )
        if reason in ("MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL"):
            raise MalformedResponseError(
                f"Gemini produced an invalid function call ({reason}). Run the step again; if it keeps "
                f"happening, simplify the tool schemas or try another model."
            )
        if reason in ("OTHER", "FINISH_REASON_UNSPECIFIED"):
            raise ServerError(f"Gemini stopped without a usable reason ({reason}). Run the step again.")
        return builder.finish("length" if reason == "MAX_TOKENS" else "stop")


def _enum_name(value: object) -> str:
    name = getattr(value, "value", value)
    return str(name)

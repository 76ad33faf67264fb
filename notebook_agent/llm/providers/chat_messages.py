"""A transcript in the Chat Completions request shape: the ``messages`` and ``tools`` every OpenAI-compatible
server reads.

One job: turning the provider-neutral :class:`~notebook_agent.core.model.Context` into the request's
``messages`` and ``tools``, with the differences between servers read from their
:class:`~.chat_servers.ChatCompat` (Mistral's tool-message names, its assistant bridge after tool results and
its nine-character ids). Images in tool results, which Chat Completions tool messages cannot carry, follow in
a user message. The wire adapter (``openai_chat.py``) sends what this builds and reads the stream back.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ...core.messages import AssistantMessage, ImageContent, TextContent, ThinkingContent, ToolCall, UserMessage
from ...core.model import Context, ToolSpec
from ..convert import (
    IMAGE_PLACEHOLDER,
    MistralIdNormalizer,
    data_url,
    group_tool_results,
    is_same_model,
    result_images,
    result_text,
    sanitize_id,
    sanitize_text,
    strict_schema,
    transform_messages,
    user_parts,
)
from .chat_servers import ChatCompat

REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_text")
EMPTY_RESULT_TEXT = "(no output)"
TOOL_IMAGES_TEXT = "Attached image(s) from tool result:"
BRIDGE_TEXT = "I have processed the tool results."


def id_normalizer(compat: ChatCompat) -> Callable[[str], str]:
    if compat.id_style == "mistral":
        return MistralIdNormalizer()

    def openai_id(call_id: str) -> str:
        # A Responses id is "call_id|item_id"; Chat Completions takes the call part, at most 40 chars.
        return sanitize_id(call_id.split("|", 1)[0], 40)

    return openai_id


def chat_messages(context: Context, compat: ChatCompat, *, provider: str, api: str, model: str) -> list[dict[str, Any]]:
    """The transcript as Chat Completions ``messages`` for the model ``provider``/``api``/``model``."""
    messages = transform_messages(
        context.messages, provider=provider, api=api, model=model, normalize_id=id_normalizer(compat)
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
                if compat.tool_result_name:
                    tool_msg["name"] = result.tool_name
                out.append(tool_msg)
                images.extend(imgs)
            if images:
                if compat.assistant_after_tool_result:
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
            if compat.assistant_after_tool_result and out and out[-1]["role"] == "tool":
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
            msg = assistant_message(item, same_model=is_same_model(item, provider=provider, api=api, model=model))
            if msg is not None:
                out.append(msg)
    return out


def assistant_message(message: AssistantMessage, *, same_model: bool) -> dict[str, Any] | None:
    """One assistant turn; its thinking goes back in its side field only to the model that wrote it."""
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
    thinking = [p for p in message.content if isinstance(p, ThinkingContent) and p.thinking.strip()]
    if same_model and thinking:
        # Servers that stream reasoning in a side field (llama.cpp, vLLM, gpt-oss) want it back there.
        fieldname = thinking[0].signature if thinking[0].signature in REASONING_FIELDS else None
        if fieldname:
            msg[fieldname] = "\n\n".join(p.thinking for p in thinking)
    if calls:
        msg["tool_calls"] = calls
    if not text and not calls:
        return None
    return msg


def chat_tools(tools: list[ToolSpec], *, strict_tools: bool) -> list[dict[str, Any]]:
    """The ``tools`` of the request; with ``strict_tools`` they are strict only if every schema can be."""
    normalised = [strict_schema(t.parameters) for t in tools] if strict_tools else []
    strict = bool(normalised) and all(ok for _, ok in normalised)
    out = []
    for i, spec in enumerate(tools):
        function: dict[str, Any] = {
            "name": spec.name,
            "description": spec.description,
            "parameters": normalised[i][0] if strict else spec.parameters,
        }
        if strict_tools:
            function["strict"] = strict
        out.append({"type": "function", "function": function})
    return out

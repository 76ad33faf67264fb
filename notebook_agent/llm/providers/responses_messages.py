"""A transcript in the Responses API request shape: the ``input`` items and ``tools`` of ``openai-responses``.

One job: turning the provider-neutral :class:`~notebook_agent.core.model.Context` into the request's
``input`` and ``tools``, so the wire adapter (``openai_responses.py``) only sends what this builds and reads
the stream back. Reasoning is replayed from the encrypted reasoning item kept as the thinking block's
signature (only to the model that wrote it), and a text block's signature carries its message item id and
phase. Tool-call ids are stored as ``"<call_id>|<item_id>"``: the call id pairs results, the item id pairs
reasoning with its call on replay. Tools are sorted by name (a byte-stable prefix keeps the prompt cache
warm) and declared ``strict`` only when asked for and every schema survives strict normalisation.
"""

from __future__ import annotations

import json
from typing import Any

from ...core.messages import AssistantMessage, TextContent, ThinkingContent, ToolCall, UserMessage
from ...core.model import Context, ToolSpec
from ..convert import (
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

EMPTY_RESULT_TEXT = "(no output)"


def _foreign_id(call_id: str) -> str:
    return sanitize_id(call_id.split("|", 1)[0], 64)


def responses_input(context: Context, *, provider: str, api: str, model: str) -> list[dict[str, Any]]:
    """The transcript as Responses ``input`` items for the model ``provider``/``api``/``model``."""
    messages = transform_messages(context.messages, provider=provider, api=api, model=model, normalize_id=_foreign_id)
    out: list[dict[str, Any]] = []
    for item in group_tool_results(messages):
        if isinstance(item, list):
            for result in item:
                text = result_text(result)
                images = result_images(result)
                output: str | list[dict[str, Any]]
                if images:
                    output = [{"type": "input_text", "text": text}] if text.strip() else []
                    output += [{"type": "input_image", "detail": "auto", "image_url": data_url(i)} for i in images]
                else:
                    output = text if text.strip() else EMPTY_RESULT_TEXT
                out.append(
                    {
                        "type": "function_call_output",
                        "call_id": result.tool_call_id.split("|", 1)[0],
                        "output": output,
                    }
                )
        elif isinstance(item, UserMessage):
            parts = user_parts(item)
            if parts:
                out.append(
                    {
                        "role": "user",
                        "content": [
                            {"type": "input_text", "text": p.text}
                            if isinstance(p, TextContent)
                            else {"type": "input_image", "detail": "auto", "image_url": data_url(p)}
                            for p in parts
                        ],
                    }
                )
        elif isinstance(item, AssistantMessage):
            out.extend(assistant_items(item, same_model=is_same_model(item, provider=provider, api=api, model=model)))
    return out


def assistant_items(message: AssistantMessage, *, same_model: bool) -> list[dict[str, Any]]:
    """One assistant turn as ``input`` items; reasoning and item ids go back only to the model that wrote them."""
    items: list[dict[str, Any]] = []
    for part in message.content:
        if isinstance(part, ThinkingContent):
            # Only our own reasoning items can be replayed; plain thinking has no Responses form.
            if same_model and part.signature:
                try:
                    reasoning = json.loads(part.signature)
                except ValueError:
                    continue
                if isinstance(reasoning, dict) and reasoning.get("type") == "reasoning":
                    reasoning.setdefault("summary", [])
                    items.append(reasoning)
        elif isinstance(part, TextContent):
            if not part.text.strip():
                continue
            meta = _text_signature(part.signature) if same_model else None
            if meta and meta.get("id"):
                msg: dict[str, Any] = {
                    "type": "message",
                    "role": "assistant",
                    "id": meta["id"],
                    "status": "completed",
                    "content": [{"type": "output_text", "text": sanitize_text(part.text), "annotations": []}],
                }
                if meta.get("phase"):
                    msg["phase"] = meta["phase"]
                items.append(msg)
            else:
                items.append({"role": "assistant", "content": sanitize_text(part.text)})
        elif isinstance(part, ToolCall):
            call_id, _, item_id = part.id.partition("|")
            call: dict[str, Any] = {
                "type": "function_call",
                "call_id": call_id,
                "name": part.name,
                "arguments": json.dumps(part.arguments, ensure_ascii=False),
            }
            # The fc_ item id pairs a call with its reasoning item; only valid for the same model.
            if same_model and item_id.startswith("fc"):
                call["id"] = item_id
            items.append(call)
    return items


def responses_tools(tools: list[ToolSpec], *, strict_tools: bool) -> list[dict[str, Any]]:
    """The ``tools`` of the request, sorted by name; with ``strict_tools`` strict only if every schema can be."""
    specs = sorted(tools, key=lambda t: (t.name, t.description))
    normalised = [strict_schema(t.parameters) for t in specs] if strict_tools else []
    strict = bool(normalised) and all(ok for _, ok in normalised)
    return [
        {
            "type": "function",
            "name": spec.name,
            "description": spec.description,
            "parameters": normalised[i][0] if strict else spec.parameters,
            # Always explicit: the Responses API defaults function tools to strict.
            "strict": strict,
        }
        for i, spec in enumerate(specs)
    ]


def _text_signature(signature: str | None) -> dict[str, Any] | None:
    if not signature:
        return None
    try:
        value = json.loads(signature)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None

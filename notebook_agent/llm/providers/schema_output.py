"""The ``json_schema`` output mode of the Chat Completions adapter: schema-constrained JSON in place of a
forced tool call, the request that asks for it and the reading of the JSON back as that tool call.

One job: how a call that forces one tool (the page agent's ``AgentOutput``) asks for it, :data:`OutputMode`.
``"tools"`` is a forced tool call; ``"json_schema"`` sends ``response_format`` with the tool's parameters as
the schema and turns the streamed JSON back into the same tool call (with the same partial-argument
previews); ``"text"`` declares no tools, states the schema in the system prompt and leaves the JSON as text
for the caller's repair; ``"auto"`` is ``json_schema`` for servers that constrain decoding
(``ChatCompat.schema_output``, the local ones: see ``chat_servers.py``) and ``tools`` elsewhere, and falls
back to ``tools`` for good on the model instance if the server rejects ``response_format``
(:func:`rejects_response_format`). The wire adapter (``openai_chat.py``) calls these where the mode matters:
planning a call, shaping its request, reading its content and retrying a rejected request.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from ...core.model import AssistantStreamBuilder, Context, StreamEvent, StreamOptions, ToolSpec
from ..convert import check_tool_choice, strict_schema
from .chat_servers import ChatCompat

OutputMode = Literal["auto", "json_schema", "tools", "text"]
OUTPUT_MODES: tuple[str, ...] = ("auto", "json_schema", "tools", "text")
CallMode = Literal["tools", "json_schema", "text"]
"""The output mode one call uses (``auto`` resolved)."""
TEXT_MODE_INSTRUCTION = (
    "Reply with only one JSON object (no prose, no code fence) holding the arguments of {name} ({description}), "
    "valid against this JSON Schema:\n{schema}"
)

SCHEMA_KEY = ("json_schema",)
"""Builder key of the tool call made from schema-constrained content."""
_RESPONSE_FORMAT_MARKERS = ("response_format", "json_schema", "json schema", "grammar")


def rejects_response_format(exc: BaseException) -> bool:
    """A 4xx/5xx whose message is about ``response_format``/``json_schema``: the server cannot do schema mode."""
    status = getattr(exc, "status_code", None)
    if not isinstance(status, int) or status < 400:
        return False
    body = getattr(exc, "body", None)
    text = f"{getattr(exc, 'message', '')} {json.dumps(body) if body is not None else ''}".lower()
    return any(marker in text for marker in _RESPONSE_FORMAT_MARKERS)


def schema_name(name: str) -> str:
    cleaned = "".join(c if c.isalnum() or c in "_-" else "_" for c in name)[:64]
    return cleaned or "output"


def forced_tool(context: Context, options: StreamOptions) -> ToolSpec | None:
    """The one tool this call must produce (a named tool_choice, or "required" with a single tool)."""
    choice = check_tool_choice(options.tool_choice, context.tools)
    if choice is None or choice in ("auto", "none"):
        return None
    if choice == "required":
        return context.tools[0] if len(context.tools) == 1 else None
    return next((t for t in context.tools if t.name == choice), None)


def plan_output(
    context: Context,
    options: StreamOptions,
    *,
    output_mode: OutputMode,
    compat: ChatCompat,
    schema_rejected: str | None,
) -> tuple[ToolSpec | None, CallMode | None, bool]:
    """(forced tool, output mode, chosen by auto) for one call."""
    forced = forced_tool(context, options)
    if forced is None:
        return None, None, False
    if output_mode != "auto":
        return forced, output_mode, False
    if compat.schema_output and schema_rejected is None:
        return forced, "json_schema", True
    return forced, "tools", True


def ask_for_json(request: dict[str, Any], tool: ToolSpec, mode: CallMode, compat: ChatCompat) -> None:
    """Shape ``request`` to ask for ``tool``'s arguments as one JSON object instead of a tool call:
    ``json_schema`` constrains decoding with ``response_format`` (and states the schema in the system prompt
    where the server does not show it to the model), ``text`` states it in the system prompt only."""
    if mode == "json_schema":
        request["response_format"] = response_format(tool, compat)
        if not compat.schema_in_prompt:
            return
    add_text_instruction(request["messages"], tool)


def response_format(tool: ToolSpec, compat: ChatCompat) -> dict[str, Any]:
    """The ``response_format`` constraining decoding to ``tool``'s arguments: its ``decoding`` schema when it
    has one (narrower than what the prompt states), else its parameters."""
    constraint = tool.decoding or tool.parameters
    schema, strict = constraint, True
    if compat.named_tool_choice:
        # OpenAI's strict mode needs every property required and no extra properties.
        schema, strict = strict_schema(constraint)
        if not strict:
            schema = constraint
    json_schema: dict[str, Any] = {"name": schema_name(tool.name), "schema": schema, "strict": strict}
    if tool.description:
        json_schema["description"] = tool.description
    return {"type": "json_schema", "json_schema": json_schema}


def add_text_instruction(messages: list[dict[str, Any]], tool: ToolSpec) -> None:
    note = TEXT_MODE_INSTRUCTION.format(
        name=tool.name,
        description=tool.description.rstrip(".") or "the output",
        schema=json.dumps(tool.parameters, ensure_ascii=False),
    )
    if messages and messages[0]["role"] == "system" and isinstance(messages[0]["content"], str):
        messages[0]["content"] = f"{messages[0]['content']}\n\n{note}"
    else:
        messages.insert(0, {"role": "system", "content": note})


def json_as_tool_call(builder: AssistantStreamBuilder, tool: ToolSpec, content: str) -> list[StreamEvent]:
    """Schema-constrained JSON is the forced tool's arguments: stream it as that tool call."""
    return builder.tool_call_delta(SCHEMA_KEY, name=tool.name, arguments=content)

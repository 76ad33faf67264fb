"""The ``AgentOutput`` macro tool: many actions offered to the model as one forced function.

Each step the model must call ``AgentOutput`` with its evaluation of the previous goal, its memory, its next
goal and exactly one action, an object with one key naming the action. This module builds that schema from
the planner's visible tools and turns whatever a real model sends back into one real tool call, repairing what
is unambiguous (a JSON answer in the text, the action called directly as a tool, double-encoded JSON, a
one-item list, a bare value for a one-field action) and reporting the rest as a short error for the model.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...core import JSONValue
from ...core.errors import ModelOutputError
from ...core.messages import AssistantMessage, ToolCall
from ...core.model import ToolSpec, parse_partial_json
from ...core.tools import Tool
from ...llm.scripted import ScriptedCall

MACRO_NAME = "AgentOutput"
MACRO_DESCRIPTION = "You MUST call this tool every step!"
REFLECTION_FIELDS = ("evaluation_previous_goal", "memory", "next_goal")


def _closed(schema: dict[str, Any]) -> dict[str, Any]:
    """Mark object schemas closed (``additionalProperties: false``), as strict providers expect."""
    if schema.get("type") == "object" and "additionalProperties" not in schema:
        return {**schema, "additionalProperties": False}
    return schema


def _compact(node: JSONValue, bounds: bool = True) -> Any:
    """The schema with what costs tokens every step but tells a model nothing removed: an optional field's
    ``anyOf: [X, null]`` with ``default: null`` becomes X (leaving it out already means "none"), the bounds of
    an action's numbers (an index or a pixel count is never negative, a wait is 1 to 10 seconds: validation
    still says so; ``bounds=False`` keeps them, as in the answer's own type under ``data``), and
    ``additionalProperties: false`` inside an action (the parameter model still rejects unknown keys)."""
    if isinstance(node, list):
        return [_compact(v, bounds) for v in node]
    if not isinstance(node, dict):
        return node
    out = dict(node)
    variants = out.get("anyOf")
    if (
        isinstance(variants, list)
        and len(variants) == 2
        and {"type": "null"} in variants
        and out.get("default", 0) is None
    ):
        other = next(v for v in variants if v != {"type": "null"})
        del out["anyOf"], out["default"]
        out = {**other, **out}
    if bounds and out.get("type") in ("integer", "number"):
        out.pop("minimum", None)  # bounds (a page count of 1 to 50): the parameter model checks them, and its
        out.pop("maximum", None)  # error says the range; a model picks sensible values unprompted
    if out.get("type") == "object" and out.get("additionalProperties") is False:
        del out["additionalProperties"]  # the parameter model still rejects unknown keys, with a clear error
    fields = out.get("properties")
    return {
        k: {f: _compact(s, bounds and f != "data") for f, s in v.items()}
        if k == "properties" and v is fields and isinstance(v, dict)
        else _compact(v, bounds)
        for k, v in out.items()
    }


def macro_spec(tools: list[Tool]) -> ToolSpec:
    """The one function the provider is offered. ``action`` is an ``anyOf`` of one-key objects, in the
    order given (callers pass a stable order so the payload stays byte-identical between steps). The members
    leave out ``additionalProperties: false`` (six tokens each, every step): a model reads "one key" from
    ``required`` and the prompt, the decoding schema (:func:`with_indices`) puts it back where a server
    enforces it, and a second key sent anyway is dropped with a note (:func:`parse_output`)."""
    members = []
    for t in tools:
        members.append(
            {
                "type": "object",
                "description": t.description,
                "properties": {t.name: _compact(t.json_schema())},
                "required": [t.name],
            }
        )
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "evaluation_previous_goal": {"type": "string"},
            "memory": {"type": "string"},
            "next_goal": {"type": "string"},
            "action": {"anyOf": members},
        },
        "required": ["evaluation_previous_goal", "memory", "next_goal", "action"],
        "additionalProperties": False,
    }
    return ToolSpec(name=MACRO_NAME, description=MACRO_DESCRIPTION, parameters=schema)


def with_indices(
    spec: ToolSpec,
    indices: Iterable[int],
    excluded: Mapping[str, set[int] | None] | None = None,
    tables: Sequence[str] = (),
) -> ToolSpec:
    """``spec`` with a decoding schema in which every ``index`` is one of ``indices`` (the elements of this
    step's state), and every ``table`` one of ``tables`` (the tables it names), for schema-constrained servers:
    a model then cannot name an element or a table that is not there. An action that needs an index is left
    out of it when the page has none. ``excluded`` takes more out, per action: those indices, or (None) the
    whole action (moves the loop guard refused, see step/loop_guard.py). ``done`` always stays. The prompt's schema is
    unchanged."""
    every = sorted(set(indices))
    excluded = excluded or {}
    members = []
    for member in spec.parameters["properties"]["action"]["anyOf"]:
        member = {**member, "additionalProperties": False}  # one key: enforced where decoding is constrained
        ((name, params),) = member["properties"].items()
        props = params.get("properties") or {}
        if name in excluded and excluded[name] is None and name != "done":
            continue
        if "index" not in props:
            members.append(member)
            continue
        allowed = [i for i in every if i not in (excluded.get(name) or set())]
        if not allowed and "index" in (params.get("required") or []):
            continue
        if allowed:
            inner = {**params, "properties": {**props, "index": {**props["index"], "enum": allowed}}}
        elif every:  # an optional index, every one of them excluded: the action without one
            inner = {**params, "properties": {k: v for k, v in props.items() if k != "index"}}
        else:
            inner = params
        if "table" in props:  # a table by its name: one the state names, or none when it names none
            rest = {k: v for k, v in inner["properties"].items() if k != "table"}
            named = {"table": {**props["table"], "enum": list(tables)}} if tables else {}
            inner = {**inner, "properties": {**rest, **named}}
        members.append({**member, "properties": {name: inner}})
    action = {**spec.parameters["properties"]["action"], "anyOf": members}
    decoding = {**spec.parameters, "properties": {**spec.parameters["properties"], "action": action}}
    return dataclasses.replace(spec, decoding=decoding)


@dataclass
class ParsedOutput:
    """One model output, understood. ``call`` is None when it could not be repaired; ``error`` says why."""

    evaluation_previous_goal: str = ""
    memory: str = ""
    next_goal: str = ""
    call: ToolCall | None = None
    error: str | None = None
    repairs: list[str] = field(default_factory=list)
    """What was fixed (shown in the view and, briefly, to the model)."""


class OutputError(ModelOutputError):
    pass


def _maybe_json(value: JSONValue) -> Any:
    """Undo double encoding: a string that holds a JSON object or list becomes that object or list."""
    if isinstance(value, str):
        text = value.strip()
        if text[:1] in ("{", "[") and text[-1:] in ("}", "]"):
            try:
                return json.loads(text)
            except json.JSONDecodeError:
                return value
    return value


def _json_in_text(text: str) -> dict[str, Any] | None:
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        value = json.loads(text[start : end + 1])
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _unwrap_envelope(obj: dict[str, Any]) -> dict[str, Any]:
    """``{"name": "AgentOutput", "arguments": {...}}`` and ``{"type": "function", "function": {...}}``."""
    if obj.get("type") == "function" and isinstance(obj.get("function"), dict):
        obj = obj["function"]
    if obj.get("name") == MACRO_NAME and "arguments" in obj:
        inner = _maybe_json(obj["arguments"])
        if isinstance(inner, dict):
            return inner
    return obj


def parse_output(message: AssistantMessage, tools: dict[str, Tool]) -> ParsedOutput:
    """Turn an assistant message into reflection fields and one real tool call (or an error)."""
    out = ParsedOutput()
    calls = message.tool_calls
    call_id = calls[0].id if calls else "call_text_output"
    args: dict[str, Any] | None = None
    if calls:
        first = calls[0]
        if first.name == MACRO_NAME:
            args = dict(first.arguments)
        elif first.name in tools:
            args = {"action": {first.name: first.arguments}}
            out.repairs.append(f"called {first.name} directly instead of inside {MACRO_NAME}")
        else:
            out.error = f'Unknown function "{first.name}". Call {MACRO_NAME} with one action.'
            return out
        if len(calls) > 1:
            out.repairs.append(f"sent {len(calls)} function calls; only the first was used")
    else:
        found = _json_in_text(message.text)
        if found is None:
            snippet = message.text.strip().replace("\n", " ")[:120]
            out.error = (
                f"No {MACRO_NAME} call in your output"
                + (f' (you wrote: "{snippet}")' if snippet else "")
                + f". Call {MACRO_NAME} with one action."
            )
            return out
        found = _unwrap_envelope(found)
        if not any(k in found for k in ("action", *REFLECTION_FIELDS)):
            found = {"action": found}
        args = found
        out.repairs.append(f"read {MACRO_NAME} from JSON in the text")

    for name in REFLECTION_FIELDS:
        value = args.get(name)
        setattr(out, name, value if isinstance(value, str) else ("" if value is None else json.dumps(value)))
    try:
        name, action_args = _one_action(_maybe_json(args.get("action")), tools, out.repairs)
    except OutputError as exc:
        out.error = str(exc)
        return out
    out.call = ToolCall(id=call_id, name=name, arguments=action_args)
    return out


def partial_output(message: AssistantMessage) -> dict[str, Any] | None:
    """The ``AgentOutput`` arguments written so far in a streaming message, for live previews only: from a
    tool call (its arguments as the adapter parsed them so far) or from JSON being written in the text (the
    ``json_schema`` and text output modes). None while there is nothing to show."""
    calls = message.tool_calls
    if calls:
        first = calls[0]
        args = first.arguments if isinstance(first.arguments, dict) else {}
        if first.name in ("", MACRO_NAME):
            return dict(args) or None
        return {"action": {first.name: args}}
    text = message.text
    start = text.find("{")
    if start < 0:
        return None
    found = _unwrap_envelope(parse_partial_json(text[start:]))
    return found or None


def _one_action(action: JSONValue, tools: dict[str, Tool], repairs: list[str]) -> tuple[str, dict[str, Any]]:
    available = ", ".join(tools)
    if action is None:
        raise OutputError('No action given. Put exactly one action in "action", e.g. {"wait": {"seconds": 1}}.')
    if isinstance(action, list):
        if not action:
            raise OutputError("The action list is empty. Give exactly one action.")
        if len(action) > 1:
            repairs.append(f"sent {len(action)} actions; only the first was run")
        else:
            repairs.append("sent the action inside a list")
        action = _maybe_json(action[0])
    if not isinstance(action, dict):
        raise OutputError(f'"action" must be an object with one key, the action name. Available: {available}')
    # {"name": "click_element_by_index", "arguments": {...}} style.
    if "name" in action and isinstance(action.get("name"), str) and action["name"] in tools:
        inner: Any = next(
            (action[k] for k in ("arguments", "args", "params", "parameters", "input") if k in action), {}
        )
        action = {action["name"]: _maybe_json(inner)}
        repairs.append("named the action in a 'name' field")
    if len(action) != 1:
        keys = ", ".join(action) or "none"
        raise OutputError(f"Exactly one action per step; got keys: {keys}. Available: {available}")
    ((name, value),) = action.items()
    if name not in tools:
        raise OutputError(f'Unknown action "{name}". Available: {available}')
    value = _maybe_json(value)
    if value is None:
        value = {}
    if not isinstance(value, dict):
        schema = tools[name].json_schema()
        required = schema.get("required") or list(schema.get("properties", {}))
        if not required:
            raise OutputError(f'Invalid input for action "{name}": expected an object')
        value = {required[0]: value}
        repairs.append(f"gave {name} a bare value; used it as {required[0]}")
    return name, value


def agent_output(
    action: str,
    args: dict[str, Any] | None = None,
    *,
    evaluation: str = "",
    memory: str = "",
    next_goal: str = "",
) -> ScriptedCall:
    """One scripted step for :class:`~notebook_agent.llm.scripted.ScriptedModel`: an ``AgentOutput`` call
    choosing ``action`` with ``args``. ``ScriptedModel([agent_output("wait", {"seconds": 1}), ...])``."""
    return ScriptedCall(
        MACRO_NAME,
        {
            "evaluation_previous_goal": evaluation,
            "memory": memory,
            "next_goal": next_goal,
            "action": {action: args or {}},
        },
    )

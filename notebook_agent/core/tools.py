"""Tools: what the model can call, how its arguments are validated, and what a call returns.

A tool's parameters are either a pydantic model (arguments arrive at ``execute`` as a validated instance) or a
plain JSON Schema (arguments arrive as a coerced dict). Validation coerces the way models need it to: "5"
becomes 5 for an integer, "true" becomes True for a boolean. A failure becomes a model-facing error that lists
each failing path and echoes the received arguments, so the model can correct itself.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, TypeAlias

import jsonschema
from pydantic import BaseModel, ValidationError

from .abort import AbortSignal
from .messages import ResultPart, TextContent
from .model import ToolSpec

ExecutionMode: TypeAlias = Literal["parallel", "sequential"]
OnUpdate: TypeAlias = Callable[[Any], Awaitable[None] | None]


@dataclass
class ToolResult:
    """What ``execute`` returns. ``terminate`` asks the loop to stop once every call in the batch agrees."""

    content: list[ResultPart] = field(default_factory=list)
    details: Any = None
    terminate: bool = False
    is_error: bool = False

    @classmethod
    def text(cls, text: str, *, details: Any = None, terminate: bool = False, is_error: bool = False) -> ToolResult:
        return cls([TextContent(text=text)], details=details, terminate=terminate, is_error=is_error)

    @property
    def text_content(self) -> str:
        return "".join(p.text for p in self.content if isinstance(p, TextContent))


class ToolArgumentError(ValueError):
    """Arguments failed validation; the message is written for the model."""


Risk: TypeAlias = Literal["safe", "ask"] | Callable[[Any], "str | None"] | None


class Tool:
    """Base class for tools. Subclasses set the class attributes and implement :meth:`execute`.

    ``execute`` may return a :class:`ToolResult`, a string (becomes one text part) or raise (becomes an
    error result the model sees; the loop never crashes on a tool).
    """

    name: str = ""
    description: str = ""
    parameters: type[BaseModel] | dict[str, Any] = {"type": "object", "properties": {}}
    execution_mode: ExecutionMode = "parallel"
    sort_key: str | None = None
    label: str | None = None
    risk: Risk = None
    """For approval policies: "safe" never asks, "ask" always asks, a function of the validated arguments
    returns why a call is risky (or None). Undeclared (None): a policy that asks about risky calls asks."""

    _schema_cache: ClassVar[dict[int, dict[str, Any]]] = {}

    async def execute(self, tool_call_id: str, args: Any, signal: AbortSignal, on_update: OnUpdate) -> ToolResult | str:
        raise NotImplementedError

    def prepare_arguments(self, raw: dict[str, Any]) -> dict[str, Any]:
        """Hook to accept old or sloppy argument shapes before validation. Default: unchanged."""
        return raw

    def unavailable_reason(self) -> str | None:
        """Return a reason to hide the tool from the model this turn, or None when it is available."""
        return None

    # -- schema and validation ---------------------------------------------------------------------
    def json_schema(self) -> dict[str, Any]:
        params = self.parameters
        if isinstance(params, dict):
            return params
        key = id(params)
        cached = Tool._schema_cache.get(key)
        if cached is None:
            cached = model_json_schema(params)
            Tool._schema_cache[key] = cached
        return cached

    def spec(self) -> ToolSpec:
        return ToolSpec(name=self.name, description=self.description, parameters=self.json_schema())

    def validate(self, arguments: dict[str, Any]) -> Any:
        """Validated arguments: a model instance for pydantic parameters, a coerced dict otherwise."""
        params = self.parameters
        if isinstance(params, dict):
            return validate_json_schema(self.name, params, arguments)
        try:
            return params.model_validate(arguments)
        except ValidationError as exc:
            problems = []
            for err in exc.errors():
                path = "/".join(str(p) for p in err["loc"]) or "root"
                problems.append(f"  - {path}: {err['msg']}")
            raise ToolArgumentError(_validation_text(self.name, problems, arguments)) from None


def _validation_text(name: str, problems: list[str], arguments: Any) -> str:
    received = json.dumps(arguments, indent=2, ensure_ascii=False, default=str)
    return f'Validation failed for tool "{name}":\n' + "\n".join(problems) + f"\n\nReceived arguments:\n{received}"


def model_json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """A pydantic model's JSON Schema, inlined (no $defs) and without titles: shorter prompts, and every
    provider accepts it."""
    schema = model.model_json_schema()
    defs = schema.pop("$defs", {})

    def resolve(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                target = defs[node["$ref"].split("/")[-1]]
                merged = {**resolve(target), **{k: v for k, v in node.items() if k != "$ref"}}
                return merged
            return {k: resolve(v) for k, v in node.items() if k != "title"}
        if isinstance(node, list):
            return [resolve(v) for v in node]
        return node

    out = resolve(schema)
    assert isinstance(out, dict)
    return out


def _coerce(value: Any, schema: dict[str, Any]) -> Any:
    """Coerce scalar strings to the schema's type (AJV ``coerceTypes`` behaviour), recursing into objects."""
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind] if kind else []
    if isinstance(value, dict) and (not kinds or "object" in kinds):
        props = schema.get("properties", {})
        return {k: _coerce(v, props[k]) if k in props else v for k, v in value.items()}
    if isinstance(value, list) and "array" in kinds and isinstance(schema.get("items"), dict):
        return [_coerce(v, schema["items"]) for v in value]
    if isinstance(value, str):
        text = value.strip()
        if "integer" in kinds:
            try:
                return int(text)
            except ValueError:
                pass
        if "number" in kinds:
            try:
                return float(text)
            except ValueError:
                pass
        if "boolean" in kinds and text.lower() in ("true", "false"):
            return text.lower() == "true"
    if isinstance(value, (int, float)) and not isinstance(value, bool) and "string" in kinds and "number" not in kinds:
        return str(value)
    if isinstance(value, float) and "integer" in kinds and value.is_integer():
        return int(value)
    return value


def validate_json_schema(name: str, schema: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    """Coerce then validate against a JSON Schema; raises :class:`ToolArgumentError` with every problem."""
    coerced = _coerce(arguments, schema)
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(coerced), key=lambda e: list(e.absolute_path))
    if errors:
        problems = []
        for err in errors:
            path = "/".join(str(p) for p in err.absolute_path) or "root"
            problems.append(f"  - {path}: {err.message}")
        raise ToolArgumentError(_validation_text(name, problems, arguments))
    assert isinstance(coerced, dict)
    return coerced


ToolFunction: TypeAlias = Callable[..., Awaitable[ToolResult | str]]


class FunctionTool(Tool):
    """A tool made from an async function ``fn(args, ctx)`` and a pydantic parameters model."""

    def __init__(
        self,
        fn: Callable[[Any, ToolCallContext], Awaitable[ToolResult | str]],
        *,
        name: str,
        description: str,
        parameters: type[BaseModel] | dict[str, Any],
        execution_mode: ExecutionMode = "parallel",
        sort_key: str | None = None,
        risk: Risk = None,
    ) -> None:
        self._fn = fn
        self.risk = risk
        self.name = name
        self.description = description
        self.parameters = parameters
        self.execution_mode = execution_mode
        self.sort_key = sort_key

    async def execute(self, tool_call_id: str, args: Any, signal: AbortSignal, on_update: OnUpdate) -> ToolResult | str:
        return await self._fn(args, ToolCallContext(tool_call_id, signal, on_update))


@dataclass
class ToolCallContext:
    """What a function tool gets besides its arguments."""

    tool_call_id: str
    signal: AbortSignal
    on_update: OnUpdate


def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    parameters: type[BaseModel] | dict[str, Any],
    execution_mode: ExecutionMode = "parallel",
    risk: Risk = None,
) -> Callable[[Callable[[Any, ToolCallContext], Awaitable[ToolResult | str]]], FunctionTool]:
    """Decorator: ``@tool(parameters=Args) async def lookup(args, ctx): ...``. The docstring is the
    description unless one is given."""

    def wrap(fn: Callable[[Any, ToolCallContext], Awaitable[ToolResult | str]]) -> FunctionTool:
        return FunctionTool(
            fn,
            name=name or fn.__name__,
            description=description or (fn.__doc__ or "").strip(),
            parameters=parameters,
            execution_mode=execution_mode,
            risk=risk,
        )

    return wrap

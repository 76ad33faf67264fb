"""Tools: what the model can call, how its arguments are validated, and what a call returns.

A tool's parameters are either a pydantic model (arguments arrive at ``execute`` as a validated instance) or a
plain JSON Schema (arguments arrive as a coerced dict). Validation coerces the way models need it to: "5"
becomes 5 for an integer, "true" becomes True for a boolean. A failure becomes a model-facing error that lists
each failing path and echoes the received arguments, so the model can correct itself.

Every tool is called the same way: ``await tool.execute(args, ctx)``, where ``ctx`` is one
:class:`ToolCallContext` (the call's id, its abort signal, a way to report progress, and the dependencies the
agent was given, ``ctx.deps``). Layers above the core hand tools a subclass with more in it (the page agent's
``ToolContext`` adds the browser, the tab, secrets and settings); the loop builds it through
``LoopConfig.tool_context``.

The context is generic over the dependencies, as pydantic-ai's ``RunContext``: a tool that declares
``ctx: ToolContext[Shop]`` reads ``ctx.deps`` as a ``Shop``, and ``Tool``/``FunctionTool`` carry the context
type they take, so a type checker refuses a tool whose dependencies are not the agent's.

A tool that adds behaviour to another one (fills secrets in, runs it on another thread) derives from
:class:`WrappedTool`, which carries every attribute of the wrapped tool, so wrapping never changes what the
model is offered, how arguments are validated, or what an approval policy reads (``risk``).
"""

from __future__ import annotations

import dataclasses
import inspect
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, Literal, TypeAlias, cast

import jsonschema
from pydantic import BaseModel, ValidationError
from typing_extensions import TypeVar

from .abort import AbortSignal
from .action_facts import DEFAULT_FACTS, ActionFacts
from .errors import ModelOutputError
from .messages import ResultPart, TextContent
from .model import ToolSpec

Deps = TypeVar("Deps", default=Any)
"""The agent's dependencies (its ``deps=``), as a tool's context carries them."""
Ctx = TypeVar("Ctx", bound="ToolCallContext[Any]", default="ToolCallContext[Any]", contravariant=True)
"""The context a tool takes: contravariant, so a tool that needs only the core context fits any run."""
C = TypeVar("C", bound="ToolCallContext[Any]")

ExecutionMode: TypeAlias = Literal["parallel", "sequential"]
OnUpdate: TypeAlias = Callable[[Any], Awaitable[None] | None]


@dataclass(frozen=True)
class Finished:
    """The finishing action's verdict, as one value: the answer's ``text``, whether the whole task is done
    (``success``) and the checked answer in the run's output type (``data``; None without ``output=``).

    A tool that ends the run returns it in :attr:`ToolResult.finished` (see :meth:`ToolResult.finish`), and
    the run reads its result, success and typed answer from it, whatever the tool is called."""

    text: str
    success: bool
    data: Any = None


@dataclass
class ToolResult:
    """What ``execute`` returns. ``terminate`` asks the loop to stop once every call in the batch agrees;
    ``finished``, set by the action that finishes a run (``done``), is its verdict."""

    content: list[ResultPart] = field(default_factory=list)
    details: Any = None
    terminate: bool = False
    is_error: bool = False
    finished: Finished | None = None

    @classmethod
    def text(
        cls,
        text: str,
        *,
        details: object = None,
        terminate: bool = False,
        is_error: bool = False,
        finished: Finished | None = None,
    ) -> ToolResult:
        return cls([TextContent(text=text)], details=details, terminate=terminate, is_error=is_error, finished=finished)

    @classmethod
    def finish(cls, text: str, finished: Finished, *, details: object = None) -> ToolResult:
        """The result of a finishing action: ``text`` for the model and the record, the verdict, and the loop
        told to stop."""
        return cls.text(text, details=details, terminate=True, finished=finished)

    @property
    def text_content(self) -> str:
        return "".join(p.text for p in self.content if isinstance(p, TextContent))


@dataclass
class ToolCallContext(Generic[Deps]):
    """What every tool gets besides its arguments: which call this is, the run's abort signal, the
    ``on_update`` callback that reports progress (``await ctx.progress("50%")`` is the short way), and
    ``deps``, the dependencies the agent was given (None when it was given none).

    Layers above the core subclass it to give tools more (see ``notebook_agent.agent.step.tool_context.ToolContext``);
    a tool declares the context it needs (``ctx: ToolContext[Shop]``) and reads its fields, typed."""

    tool_call_id: str
    signal: AbortSignal
    on_update: OnUpdate
    deps: Deps = field(default=cast(Any, None), kw_only=True)

    async def progress(self, update: object) -> None:
        """Report progress (any value; views show text). Awaits the callback when it returns an awaitable."""
        out = self.on_update(update)
        if inspect.isawaitable(out):
            await out

    def with_update(self, on_update: OnUpdate) -> ToolCallContext[Deps]:
        """A copy (of the same class, every other field kept) whose progress goes to ``on_update``."""
        return dataclasses.replace(self, on_update=on_update)


def _no_update(_: object) -> None:
    return None


def call_context(
    tool_call_id: str = "call", signal: AbortSignal | None = None, *, deps: Deps = cast(Any, None)
) -> ToolCallContext[Deps]:
    """A plain context for calling a tool directly (outside a run): a fresh signal unless one is given,
    progress that goes nowhere, and ``deps`` as given."""
    return ToolCallContext(tool_call_id, signal if signal is not None else AbortSignal(), _no_update, deps=deps)


class ToolArgumentError(ModelOutputError):
    """Arguments failed validation; the message is written for the model."""


RiskKind: TypeAlias = Literal["safe", "ask", "url", "element", "keys", "typing", "script"]
"""How the approval gate judges an action before it runs (agent/safety/approval.py). ``safe``: it only looks,
waits, scrolls or finishes, and never asks (but under ``ask-all``); ``ask``: it always asks; ``url``: by where
its ``url`` argument goes; ``element``: by its element (a label that reads as destructive or final, a link's
href to another site) and the text it chooses; ``keys``: by what its ``keys`` act on; ``typing``: it only fills
a field, and is judged by what it sends (at the browser's door); ``script``: it runs code in the page, and is
risky whatever the code."""

Risk: TypeAlias = RiskKind | Callable[[Any], "str | None"] | None


class Tool(Generic[Ctx]):
    """Base class for tools. Subclasses set the class attributes and implement :meth:`execute`.

    ``Tool[ToolContext[Shop]]`` is a tool that takes a page-agent context whose ``deps`` is a ``Shop``
    (``execute(self, args, ctx: ToolContext[Shop])``); a bare ``Tool`` takes any context.

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
    """For approval policies: "safe" never asks, "ask" always asks, the other kinds (:data:`RiskKind`) are judged
    as the built-in actions of that kind are, a function of the validated arguments returns why a call is risky
    (or None). Undeclared (None): a policy that asks about risky calls asks."""
    facts: ActionFacts = DEFAULT_FACTS
    """What the rest of the agent knows about the action: replay, export, the prompt, the loop guard
    (:mod:`notebook_agent.core.action_facts`)."""

    _schema_cache: ClassVar[dict[int, dict[str, Any]]] = {}

    async def execute(self, args: Any, ctx: Ctx) -> ToolResult | str:
        """Run the call: ``args`` are the validated arguments, ``ctx`` has the signal and progress reporting.
        ``args`` is typed ``Any`` because its type is each tool's own (an instance of its ``parameters`` model, or
        a dict), which an override names: ``execute(self, args: ClickParams, ctx)``."""
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


class WrappedTool(Tool):
    """A tool that adds behaviour around another one (``inner``) and is otherwise that tool.

    Every attribute is the inner tool's, read when asked (so a tool that changes later is still mirrored):
    ``name``, ``description``, ``parameters``, ``execution_mode``, ``sort_key``, ``label``, ``risk``,
    ``runs_on_browser``, and through ``__getattr__`` anything else a caller reads (``browser``, a custom
    tool's own fields). Setting one of the named attributes on the wrapper overrides it for the wrapper only
    (renaming a tool does not rename the tool it wraps). ``prepare_arguments``, ``unavailable_reason``,
    ``json_schema`` and ``validate`` are the inner tool's; ``execute`` runs it, and subclasses override it.

    Arguments may be a pydantic model or a dict (JSON-Schema parameters): read and replace them with
    :func:`get_argument` and :func:`replace_argument`, which handle both."""

    def __init__(self, inner: Tool) -> None:
        self.inner = inner

    async def execute(self, args: Any, ctx: ToolCallContext) -> ToolResult | str:
        return await self.inner.execute(args, ctx)

    def prepare_arguments(self, raw: dict[str, Any]) -> dict[str, Any]:
        return self.inner.prepare_arguments(raw)

    def unavailable_reason(self) -> str | None:
        return self.inner.unavailable_reason()

    def json_schema(self) -> dict[str, Any]:
        return self.inner.json_schema()

    def validate(self, arguments: dict[str, Any]) -> Any:
        return self.inner.validate(arguments)

    @property
    def innermost(self) -> Tool:
        """The tool at the bottom of a chain of wrappers."""
        tool: Tool = self.inner
        while isinstance(tool, WrappedTool):
            tool = tool.inner
        return tool

    def __getattr__(self, name: str) -> Any:
        # only called for what the wrapper itself lacks; ``inner`` is missing only on a half-built copy (and
        # dunders are looked up by copy/pickle), which must not recurse
        if name == "inner" or name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.inner, name)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.inner!r})"


FORWARDED_ATTRIBUTES = ("name", "description", "parameters", "execution_mode", "sort_key", "label", "risk", "facts")


def _forwarded(attr: str, default: object = None) -> property:
    own = f"_own_{attr}"

    def get(self: WrappedTool) -> Any:
        if own in self.__dict__:
            return self.__dict__[own]
        return getattr(self.inner, attr, default)

    def set(self: WrappedTool, value: object) -> None:
        self.__dict__[own] = value

    return property(get, set, doc=f"The wrapped tool's ``{attr}`` unless set on the wrapper.")


# Installed after the class body so type checkers keep seeing Tool's declared attribute types.
for _attr in FORWARDED_ATTRIBUTES:
    setattr(WrappedTool, _attr, _forwarded(_attr))
WrappedTool.runs_on_browser = _forwarded("runs_on_browser", False)  # type: ignore[attr-defined]


def get_argument(args: object, name: str, default: object = None) -> Any:
    """One validated argument, whether the tool's parameters are a pydantic model or a JSON Schema (dict)."""
    if isinstance(args, dict):
        return args.get(name, default)
    return getattr(args, name, default)


def replace_argument(args: object, name: str, value: object) -> Any:
    """A copy of validated arguments with ``name`` set to ``value`` (a pydantic model or a dict; the
    original is left alone)."""
    if isinstance(args, dict):
        return {**args, name: value}
    if isinstance(args, BaseModel):
        return args.model_copy(update={name: value})
    if dataclasses.is_dataclass(args) and not isinstance(args, type):
        return dataclasses.replace(args, **{name: value})
    raise TypeError(f"cannot replace argument {name!r} in {type(args).__name__}")


def _validation_text(name: str, problems: list[str], arguments: object) -> str:
    received = json.dumps(arguments, indent=2, ensure_ascii=False, default=str)
    return f'Validation failed for tool "{name}":\n' + "\n".join(problems) + f"\n\nReceived arguments:\n{received}"


def model_json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """A pydantic model's JSON Schema, inlined (no $defs) and without titles: shorter prompts, and every
    provider accepts it."""
    return inline_schema(model.model_json_schema())


def inline_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with every ``$ref`` into its ``$defs`` replaced by the definition and titles dropped (some
    providers reject ``$ref``, and a title costs tokens every step). A type that refers to itself cannot be
    inlined: that raises ``ValueError`` naming it."""
    schema = dict(schema)
    defs = schema.pop("$defs", {})

    def resolve(node: object, seen: tuple[str, ...]) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                name = node["$ref"].split("/")[-1]
                if name in seen:
                    raise ValueError(f"{name} refers to itself; a recursive type cannot be given to a model")
                target = defs[name]
                return {**resolve(target, (*seen, name)), **{k: v for k, v in node.items() if k != "$ref"}}
            # a "title" keyword is a string; a property named "title" is a schema (a dict), and stays
            return {k: resolve(v, seen) for k, v in node.items() if not (k == "title" and isinstance(v, str))}
        if isinstance(node, list):
            return [resolve(v, seen) for v in node]
        return node

    out = resolve(schema, ())
    assert isinstance(out, dict)
    return out


def _coerce(value: object, schema: dict[str, Any]) -> Any:
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


class FunctionTool(Tool[Ctx]):
    """A tool made from an async function ``fn(args, ctx)`` and a pydantic parameters model; it takes the
    context ``fn`` declares."""

    def __init__(
        self,
        fn: Callable[[Any, Ctx], Awaitable[ToolResult | str]],
        *,
        name: str,
        description: str,
        parameters: type[BaseModel] | dict[str, Any],
        execution_mode: ExecutionMode = "parallel",
        sort_key: str | None = None,
        risk: Risk = None,
        facts: ActionFacts = DEFAULT_FACTS,
    ) -> None:
        self._fn = fn
        self.risk = risk
        self.facts = facts
        self.name = name
        self.description = description
        self.parameters = parameters
        self.execution_mode = execution_mode
        self.sort_key = sort_key

    async def execute(self, args: Any, ctx: Ctx) -> ToolResult | str:
        return await self._fn(args, ctx)


def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    parameters: type[BaseModel] | dict[str, Any],
    execution_mode: ExecutionMode = "parallel",
    risk: Risk = None,
    facts: ActionFacts = DEFAULT_FACTS,
) -> Callable[[Callable[[Any, C], Awaitable[ToolResult | str]]], FunctionTool[C]]:
    """Decorator: ``@tool(parameters=Args) async def lookup(args, ctx): ...``. The docstring is the
    description unless one is given. The tool takes the context the function declares
    (``ctx: ToolContext[Shop]``: ``ctx.deps`` is the agent's ``Shop``)."""

    def wrap(fn: Callable[[Any, C], Awaitable[ToolResult | str]]) -> FunctionTool[C]:
        return FunctionTool(
            fn,
            name=name or fn.__name__,
            description=description or (fn.__doc__ or "").strip(),
            parameters=parameters,
            execution_mode=execution_mode,
            risk=risk,
            facts=facts,
        )

    return wrap

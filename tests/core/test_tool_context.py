"""One context object per tool call: what the loop hands ``execute``, the factory a layer above supplies, and
``WrappedTool``, which carries every attribute of the tool it wraps."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from notebook_agent.core.abort import AbortController, AbortSignal
from notebook_agent.core.events import AgentEvent, ToolExecutionUpdate
from notebook_agent.core.loop import AgentContext, LoopConfig, run_agent_loop
from notebook_agent.core.messages import ToolCall, UserMessage
from notebook_agent.core.tools import (
    OnUpdate,
    Tool,
    ToolCallContext,
    ToolResult,
    WrappedTool,
    call_context,
    get_argument,
    replace_argument,
    tool,
)
from notebook_agent.llm.scripted import ScriptedModel, call


@dataclass
class RichContext(ToolCallContext):
    extra: list[str] = field(kw_only=True, default_factory=list)


class Echo(Tool):
    name = "echo"
    description = "echo"
    parameters = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}

    def __init__(self) -> None:
        self.contexts: list[ToolCallContext] = []

    async def execute(self, args: Any, ctx: ToolCallContext) -> str:
        self.contexts.append(ctx)
        await ctx.progress(f"echoing {args['text']}")
        return args["text"]


async def drive(tools: list[Tool], **config: Any) -> list[AgentEvent]:
    events: list[AgentEvent] = []

    async def emit(e: AgentEvent) -> None:
        events.append(e)

    model = ScriptedModel([call("echo", text="hi"), "ok"])
    ctx = AgentContext("sys", [], tools)
    await run_agent_loop([UserMessage(content="go")], ctx, LoopConfig(model=model, **config), AbortSignal(), emit)
    return events


async def test_the_loop_gives_each_call_one_context_by_default_or_from_the_factory() -> None:
    echo = Echo()
    events = await drive([echo])
    (ctx,) = echo.contexts
    assert type(ctx) is ToolCallContext and ctx.tool_call_id and not ctx.signal.aborted
    assert [e.partial_result for e in events if isinstance(e, ToolExecutionUpdate)] == ["echoing hi"]

    made: list[str] = []

    def factory(tool_call: ToolCall, signal: AbortSignal, on_update: OnUpdate) -> RichContext:
        made.append(tool_call.name)
        return RichContext(tool_call.id, signal, on_update, extra=["from the factory"])

    echo = Echo()
    events = await drive([echo], tool_context=factory)
    (ctx,) = echo.contexts
    assert made == ["echo"] and isinstance(ctx, RichContext) and ctx.extra == ["from the factory"]
    assert [e.partial_result for e in events if isinstance(e, ToolExecutionUpdate)] == ["echoing hi"]
    # a copy with other progress keeps the class and every other field
    other = ctx.with_update(lambda _: None)
    assert isinstance(other, RichContext) and other.extra == ctx.extra and other.tool_call_id == ctx.tool_call_id


async def test_function_tools_get_the_same_context() -> None:
    seen: list[ToolCallContext] = []

    @tool(parameters={"type": "object", "properties": {"text": {"type": "string"}}}, risk="safe")
    async def echo(args: Any, ctx: ToolCallContext) -> str:
        seen.append(ctx)
        return str(args["text"])

    controller = AbortController()
    assert await echo.execute({"text": "x"}, call_context("c1", controller.signal)) == "x"
    assert seen[0].signal is controller.signal and seen[0].tool_call_id == "c1"


class Args(BaseModel):
    text: str


class Declared(Tool):
    name = "declared"
    description = "A tool that declares everything."
    parameters = Args
    execution_mode = "sequential"
    sort_key = "zz"
    label = "Declared"
    risk = "ask"
    runs_on_browser = True
    own_field = "mine"

    def prepare_arguments(self, raw: dict[str, Any]) -> dict[str, Any]:
        return {"text": raw.get("value", raw.get("text"))}

    def unavailable_reason(self) -> str | None:
        return "not today"

    async def execute(self, args: Any, ctx: ToolCallContext) -> ToolResult:
        return ToolResult.text(f"got {args.text}")


class Shout(WrappedTool):
    async def execute(self, args: Any, ctx: ToolCallContext) -> ToolResult | str:
        text = get_argument(args, "text")
        return await self.inner.execute(replace_argument(args, "text", text.upper()), ctx)


async def test_a_wrapped_tool_is_the_tool_it_wraps_except_for_what_it_adds() -> None:
    inner = Declared()
    wrapped = Shout(inner)
    for attr in ("name", "description", "parameters", "execution_mode", "sort_key", "label", "risk"):
        assert getattr(wrapped, attr) == getattr(inner, attr), attr
    assert wrapped.runs_on_browser is True and wrapped.own_field == "mine"
    assert wrapped.unavailable_reason() == "not today" and wrapped.spec() == inner.spec()
    args = wrapped.validate(wrapped.prepare_arguments({"value": "hi"}))
    assert isinstance(args, Args) and args.text == "hi"
    result = await wrapped.execute(args, call_context())
    assert isinstance(result, ToolResult) and result.text_content == "got HI" and args.text == "hi"
    # renaming the wrapper (PageAgent does it for custom tools) leaves the inner tool alone
    renamed = copy.copy(wrapped)
    renamed.name = "other"
    assert (renamed.name, wrapped.name, inner.name) == ("other", "declared", "declared")
    assert Shout(wrapped).innermost is inner
    # dict arguments (JSON-Schema parameters) are read and replaced the same way
    assert replace_argument({"text": "a", "n": 1}, "text", "b") == {"text": "b", "n": 1}
    assert get_argument({"text": "a"}, "text") == "a" and get_argument(Args(text="a"), "text") == "a"
    plain = WrappedTool(Echo())
    assert getattr(plain, "runs_on_browser", None) is False and plain.risk is None

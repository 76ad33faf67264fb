"""Golden event sequences for the agent loop, driven by the scripted model."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import BaseModel

from notebook_agent.core.abort import AbortController, AbortSignal
from notebook_agent.core.agent import Agent, AgentBusyError
from notebook_agent.core.events import AgentEvent, ToolExecutionEnd, ToolExecutionUpdate, TurnEnd
from notebook_agent.core.loop import (
    AfterToolCall,
    AgentContext,
    BeforeToolCall,
    BlockToolCall,
    DeferredToolRequest,
    LoopConfig,
    ToolCallOverride,
    run_agent_loop,
)
from notebook_agent.core.messages import AssistantMessage, TextContent, ToolResultMessage, UserMessage
from notebook_agent.core.tools import Tool, ToolCallContext, ToolResult
from notebook_agent.llm.scripted import ScriptedModel, call, error, reply
from tests.waits import wait_until


class AddArgs(BaseModel):
    a: int
    b: int


class Add(Tool):
    name = "add"
    description = "Add two integers."
    parameters = AddArgs

    async def execute(self, args: Any, ctx: ToolCallContext) -> str:
        return str(args.a + args.b)


class Gate(Tool):
    """A tool that waits on an event it is given, recording start and finish in a shared log."""

    parameters = {"type": "object", "properties": {}}

    def __init__(self, name: str, log: list[str], gate: asyncio.Event, mode: str = "parallel") -> None:
        self.name = name
        self.description = name
        self.log = log
        self.gate = gate
        self.execution_mode = mode  # type: ignore[assignment]

    async def execute(self, args: Any, ctx: ToolCallContext) -> str:
        self.log.append(f"start {self.name}")
        await ctx.on_update("started")  # type: ignore[misc]
        await self.gate.wait()
        self.log.append(f"end {self.name}")
        return f"{self.name} done"


def short(ev: AgentEvent) -> str:
    match ev.type:
        case "message_start" | "message_end":
            return f"{'ms' if ev.type == 'message_start' else 'me'}({ev.message.role})"
        case "message_update":
            return "upd"
        case "tool_execution_start":
            return f"tes({ev.tool_name})"
        case "tool_execution_update":
            return f"teu({ev.tool_name})"
        case "tool_execution_end":
            return f"tee({ev.tool_name})"
        case _:
            return ev.type


def squash(events: list[AgentEvent]) -> list[str]:
    out: list[str] = []
    for e in events:
        s = short(e)
        if s == "upd" and out and out[-1] == "upd*":
            continue
        out.append("upd*" if s == "upd" else s)
    return out


async def run(
    model: ScriptedModel, tools: list[Tool], prompt: str = "go", **config: Any
) -> tuple[list[AgentEvent], list[Any]]:
    events: list[AgentEvent] = []

    async def emit(e: AgentEvent) -> None:
        events.append(e)

    ctx = AgentContext(system_prompt="sys", messages=[], tools=tools)
    signal = config.pop("signal", None) or AbortController().signal
    msgs = await run_agent_loop([UserMessage(content=prompt)], ctx, LoopConfig(model=model, **config), signal, emit)
    return events, msgs


async def test_text_answer() -> None:
    events, msgs = await run(ScriptedModel(["Hello there"]), [])
    assert squash(events) == [
        "agent_start",
        "turn_start",
        "ms(user)",
        "me(user)",
        "ms(assistant)",
        "upd*",
        "me(assistant)",
        "turn_end",
        "agent_end",
    ]
    assert msgs[-1].text == "Hello there"
    assert msgs[-1].stop_reason == "stop"


async def test_one_tool_then_answer() -> None:
    model = ScriptedModel([call("add", a=2, b=3), "It is 5"])
    events, msgs = await run(model, [Add()])
    assert squash(events) == [
        "agent_start",
        "turn_start",
        "ms(user)",
        "me(user)",
        "ms(assistant)",
        "upd*",
        "me(assistant)",
        "tes(add)",
        "tee(add)",
        "ms(toolResult)",
        "me(toolResult)",
        "turn_end",
        "turn_start",
        "ms(assistant)",
        "upd*",
        "me(assistant)",
        "turn_end",
        "agent_end",
    ]
    result = msgs[2]
    assert isinstance(result, ToolResultMessage) and result.text == "5" and not result.is_error
    # The second request carried the tool result, and the tool was declared.
    ctx, _ = model.requests[1]
    assert [m.role for m in ctx.messages] == ["user", "assistant", "toolResult"]
    assert [t.name for t in ctx.tools] == ["add"]
    assert ctx.tools[0].parameters["properties"]["a"] == {"type": "integer"}


async def test_parallel_batch_finishes_out_of_order_results_in_source_order() -> None:
    log: list[str] = []
    gate_a, gate_b = asyncio.Event(), asyncio.Event()
    tools: list[Tool] = [Gate("a", log, gate_a), Gate("b", log, gate_b)]
    model = ScriptedModel([reply(call("a"), call("b")), "ok"])
    events: list[AgentEvent] = []

    async def emit(e: AgentEvent) -> None:
        events.append(e)
        # Both tools have started before either finishes: release B first, then A.
        if log == ["start a", "start b"] and not gate_b.is_set():
            gate_b.set()
        if isinstance(e, ToolExecutionEnd) and e.tool_name == "b":
            gate_a.set()

    ctx = AgentContext("sys", [], tools)
    await run_agent_loop([UserMessage(content="go")], ctx, LoopConfig(model=model), AbortController().signal, emit)
    seq = [s for s in squash(events) if s.startswith(("tes", "tee", "ms(toolResult"))]
    assert seq == ["tes(a)", "tes(b)", "tee(b)", "tee(a)", "ms(toolResult)", "ms(toolResult)"]
    assert log == ["start a", "start b", "end b", "end a"]
    # Overlap is proven by events: both updates ("started") precede the first end.
    kinds = [short(e) for e in events if e.type.startswith("tool_execution")]
    assert kinds.index("teu(b)") < kinds.index("tee(b)") and kinds.index("teu(a)") < kinds.index("tee(b)")
    results = [e.message for e in events if e.type == "message_end" and e.message.role == "toolResult"]
    assert [r.tool_name for r in results] == ["a", "b"]


async def test_sequential_tool_downgrades_batch() -> None:
    log: list[str] = []
    gate = asyncio.Event()
    gate.set()
    tools: list[Tool] = [Gate("a", log, gate), Gate("b", log, gate, mode="sequential")]
    events, _ = await run(ScriptedModel([reply(call("a"), call("b")), "ok"]), tools)
    seq = [s for s in squash(events) if s.startswith(("tes", "teu", "tee", "ms(toolResult"))]
    assert seq == ["tes(a)", "teu(a)", "tee(a)", "ms(toolResult)", "tes(b)", "teu(b)", "tee(b)", "ms(toolResult)"]
    assert log == ["start a", "end a", "start b", "end b"]


async def test_tool_not_found_is_model_visible() -> None:
    events, msgs = await run(ScriptedModel([call("nope", x=1), "sorry"]), [Add()])
    end = next(e for e in events if isinstance(e, ToolExecutionEnd))
    assert end.is_error and not end.execution_started and end.error_kind == "not-found"
    assert msgs[2].text == "Tool nope not found"
    assert msgs[-1].text == "sorry"


async def test_deferred_resolution_adds_the_tool_to_the_context() -> None:
    model = ScriptedModel([call("add", a=1, b=1), call("add", a=2, b=2), "done"])
    asked: list[str] = []

    async def resolver(req: DeferredToolRequest, signal: AbortSignal) -> Tool | None:
        asked.append(req.tool_call.name)
        return Add()

    _events, msgs = await run(model, [], resolve_deferred_tool=resolver)
    assert [m.text for m in msgs if isinstance(m, ToolResultMessage)] == ["2", "4"]
    assert asked == ["add"]  # resolved once; later requests find it in the context
    assert [t.name for t in model.requests[1][0].tools] == ["add"]


async def test_deferred_resolver_returning_the_wrong_name() -> None:
    async def resolver(req: DeferredToolRequest, signal: AbortSignal) -> Tool | None:
        return Add()

    _, msgs = await run(ScriptedModel([call("multiply", a=1, b=1), "ok"]), [], resolve_deferred_tool=resolver)
    assert msgs[2].is_error
    assert msgs[2].text == 'Deferred tool resolver returned "add" for requested "multiply"'


async def test_validation_coerces_and_reports_failures() -> None:
    model = ScriptedModel([call("add", a="5", b=" 7 "), call("add", a="five"), "ok"])
    events, msgs = await run(model, [Add()])
    results = [m for m in msgs if isinstance(m, ToolResultMessage)]
    assert results[0].text == "12" and not results[0].is_error
    assert results[1].is_error
    text = results[1].text
    assert text.startswith('Validation failed for tool "add":\n')
    assert "  - a: " in text and "  - b: Field required" in text
    assert text.endswith('Received arguments:\n{\n  "a": "five"\n}')
    ends = [e for e in events if isinstance(e, ToolExecutionEnd)]
    assert ends[1].error_kind == "argument-validation" and not ends[1].execution_started


async def test_json_schema_tool_coercion() -> None:
    class Echo(Tool):
        name = "echo"
        description = "echo"
        parameters = {
            "type": "object",
            "properties": {"n": {"type": "integer"}, "flag": {"type": "boolean"}},
            "required": ["n"],
        }

        async def execute(self, args: Any, ctx: ToolCallContext) -> str:
            return repr(args)

    _, msgs = await run(ScriptedModel([call("echo", n="5", flag="true"), call("echo", flag=1), "ok"]), [Echo()])
    assert msgs[2].text == "{'n': 5, 'flag': True}"
    assert msgs[4].is_error and "  - root: 'n' is a required property" in msgs[4].text


@pytest.mark.parametrize("reason", ["Not on a Sunday", None])
async def test_block_with_and_without_reason(reason: str | None) -> None:
    seen: list[Any] = []

    async def before(ctx: BeforeToolCall, signal: AbortSignal) -> BlockToolCall | None:
        seen.append((ctx.tool_call.name, ctx.args))
        return BlockToolCall(reason)

    model = ScriptedModel([call("add", a=1, b=2), "understood"])
    events, msgs = await run(model, [Add()], before_tool_call=before)
    assert seen == [("add", AddArgs(a=1, b=2))]
    assert msgs[2].is_error and msgs[2].text == (reason or "Tool execution was blocked")
    end = next(e for e in events if isinstance(e, ToolExecutionEnd))
    assert end.error_kind == "blocked" and not end.execution_started
    # The model saw the reason in its next request.
    assert model.requests[1][0].messages[-1].text == msgs[2].text


async def test_after_tool_call_overrides_each_field() -> None:
    async def after(ctx: AfterToolCall, signal: AbortSignal) -> ToolCallOverride | None:
        assert ctx.result.text_content == "3" and not ctx.is_error
        return ToolCallOverride(content=[TextContent(text="three")], details={"n": 3}, is_error=True)

    events, msgs = await run(ScriptedModel([call("add", a=1, b=2), "ok"]), [Add()], after_tool_call=after)
    r = msgs[2]
    assert (r.text, r.details, r.is_error) == ("three", {"n": 3}, True)
    end = next(e for e in events if isinstance(e, ToolExecutionEnd))
    assert end.is_error and end.result.details == {"n": 3}


async def test_after_tool_call_none_keeps_everything_and_terminate_override() -> None:
    async def after(ctx: AfterToolCall, signal: AbortSignal) -> ToolCallOverride | None:
        return ToolCallOverride(terminate=True)

    model = ScriptedModel([call("add", a=1, b=2), "never asked"])
    _, msgs = await run(model, [Add()], after_tool_call=after)
    assert msgs[2].text == "3" and not msgs[2].is_error
    assert model.remaining == 1  # terminate on every result: no further model call


class Finish(Tool):
    name = "finish"
    description = "finish"

    async def execute(self, args: Any, ctx: ToolCallContext) -> ToolResult:
        return ToolResult.text("finished", terminate=True)


async def test_terminate_all_vs_some() -> None:
    model = ScriptedModel([reply(call("finish"), call("finish")), "unused"])
    await run(model, [Finish(), Add()])
    assert model.remaining == 1
    model = ScriptedModel([reply(call("finish"), call("add", a=1, b=1)), "continued"])
    _, msgs = await run(model, [Finish(), Add()])
    assert model.remaining == 0 and msgs[-1].text == "continued"


async def test_stop_after_batch() -> None:
    async def after(ctx: AfterToolCall, signal: AbortSignal) -> ToolCallOverride | None:
        return ToolCallOverride(stop_after_batch=ctx.tool_call.arguments.get("a") == 1)

    model = ScriptedModel([reply(call("add", a=1, b=1), call("add", a=5, b=5)), "unused"])
    events, msgs = await run(model, [Add()], after_tool_call=after)
    assert model.remaining == 1
    assert [m.text for m in msgs if isinstance(m, ToolResultMessage)] == ["2", "10"]  # the batch finished
    assert squash(events)[-2:] == ["turn_end", "agent_end"]


async def test_abort_mid_stream() -> None:
    controller = AbortController()
    model = ScriptedModel(["a long answer " * 50], chunk=4, delay=0.01)
    events: list[AgentEvent] = []

    async def emit(e: AgentEvent) -> None:
        events.append(e)
        if sum(1 for x in events if x.type == "message_update") == 3:
            controller.abort("user pressed stop")

    ctx = AgentContext("sys", [], [])
    msgs = await asyncio.wait_for(
        run_agent_loop([UserMessage(content="go")], ctx, LoopConfig(model=model), controller.signal, emit), 5
    )
    last = msgs[-1]
    assert isinstance(last, AssistantMessage)
    assert last.stop_reason == "aborted" and last.error_message == "user pressed stop"
    assert 0 < len(last.text) < 40  # the partial text is kept
    assert squash(events)[-4:] == ["upd*", "me(assistant)", "turn_end", "agent_end"]


async def test_abort_mid_tool_with_a_tool_that_ignores_the_signal() -> None:
    controller = AbortController()

    class Stubborn(Tool):
        name = "slow"
        description = "slow"

        async def execute(self, args: Any, ctx: ToolCallContext) -> str:
            await asyncio.sleep(3600)
            return "never"

    events: list[AgentEvent] = []

    async def emit(e: AgentEvent) -> None:
        events.append(e)
        if e.type == "tool_execution_start":
            asyncio.get_running_loop().call_later(0.05, controller.abort, "stop now")

    ctx = AgentContext("sys", [], [Stubborn()])
    model = ScriptedModel([call("slow"), "unused"])
    cfg = LoopConfig(model=model, abort_grace_seconds=0.1)
    msgs = await asyncio.wait_for(run_agent_loop([UserMessage(content="go")], ctx, cfg, controller.signal, emit), 5)
    assert squash(events)[7:] == [
        "tes(slow)",
        "tee(slow)",
        "ms(toolResult)",
        "me(toolResult)",
        "turn_end",
        "turn_start",
        "ms(assistant)",
        "me(assistant)",
        "turn_end",
        "agent_end",
    ]
    stopped, last = msgs[2], msgs[-1]
    assert isinstance(stopped, ToolResultMessage) and isinstance(last, AssistantMessage)
    assert stopped.is_error and stopped.text == "stop now while the action ran."  # who stopped it, and when
    assert last.stop_reason == "aborted" and model.remaining == 1


async def test_model_error_ends_the_turn() -> None:
    events, msgs = await run(ScriptedModel([error("HTTP 500 from the provider", after=["partial "])]), [])
    last = msgs[-1]
    assert last.stop_reason == "error" and last.error_message == "HTTP 500 from the provider"
    assert last.text == "partial "
    assert squash(events)[-3:] == ["me(assistant)", "turn_end", "agent_end"]


async def test_a_stream_that_raises_becomes_an_error_message() -> None:
    class Broken:
        provider, id = "broken", "b1"

        async def stream(self, context: Any, options: Any):  # type: ignore[no-untyped-def]
            raise ConnectionError("socket closed")
            yield  # pragma: no cover

    events, msgs = await run(Broken(), [])  # type: ignore[arg-type]
    assert msgs[-1].stop_reason == "error" and "socket closed" in msgs[-1].error_message
    assert squash(events)[-4:] == ["ms(assistant)", "me(assistant)", "turn_end", "agent_end"]


async def test_tool_that_throws_and_updates() -> None:
    class Boom(Tool):
        name = "boom"
        description = "boom"

        async def execute(self, args: Any, ctx: ToolCallContext) -> str:
            await ctx.on_update({"progress": 0.5})  # type: ignore[misc]
            raise RuntimeError("disk on fire")

    events, msgs = await run(ScriptedModel([call("boom"), "handled"]), [Boom()])
    assert [short(e) for e in events if e.type.startswith("tool_")] == ["tes(boom)", "teu(boom)", "tee(boom)"]
    upd = next(e for e in events if isinstance(e, ToolExecutionUpdate))
    assert upd.partial_result == {"progress": 0.5}
    assert msgs[2].is_error and msgs[2].text == "disk on fire"
    assert msgs[-1].text == "handled"


async def test_steering_and_follow_up() -> None:
    model = ScriptedModel([call("add", a=1, b=1), "first answer", "answer to follow-up"])
    agent = Agent(model, tools=[Add()])
    types: list[str] = []

    def listen(e: AgentEvent) -> None:
        types.append(short(e))
        if e.type == "tool_execution_start":
            agent.steer("also: be brief")

    agent.subscribe(listen)
    agent.follow_up("one more thing")
    result = await agent.run("add 1 and 1")
    assert result.text == "answer to follow-up"
    # Steering is injected before the next model call; the follow-up when the run would end.
    assert [m.role for m in result.messages] == [
        "user",
        "assistant",
        "toolResult",
        "user",
        "assistant",
        "user",
        "assistant",
    ]
    assert result.messages[3].text == "also: be brief"
    assert result.messages[5].text == "one more thing"
    ctx, _ = model.requests[1]
    assert ctx.messages[-1].text == "also: be brief"
    assert types.count("agent_start") == 1 and types[-1] == "agent_end"


async def test_agent_second_run_while_active_is_an_error_and_abort_works() -> None:
    model = ScriptedModel(["x" * 400], chunk=1, delay=0.005)
    agent = Agent(model)
    task = asyncio.create_task(agent.run("hi"))
    await wait_until(lambda: agent.is_running, message="the first run started")
    with pytest.raises(AgentBusyError, match="already processing"):
        await agent.run("again")
    agent.abort()
    result = await asyncio.wait_for(task, 5)
    assert result.stop_reason == "aborted"
    assert not agent.is_running


async def test_agent_stream_and_usage() -> None:
    from notebook_agent.core.messages import Usage

    model = ScriptedModel([call("add", a=1, b=2), "3"], usage=Usage(input=10, output=2, total_tokens=12))
    agent = Agent(model, tools=[Add()])
    events = [e async for e in agent.stream("sum")]
    assert events[0].type == "agent_start" and events[-1].type == "agent_end"
    result = await Agent(ScriptedModel(["a"], usage=Usage(input=5, output=1)), tools=[]).run("x")
    assert result.usage.input == 5
    turn_ends = [e for e in events if isinstance(e, TurnEnd)]
    assert len(turn_ends) == 2  # the tool turn and the answer turn
    assert [len(e.tool_results) for e in turn_ends] == [1, 0]

"""The loop's control points the design note specifies, each driven through the real loop with a scripted model:
argument preparation, a throwing before-hook, the after-hook only for calls that ran, late progress updates,
sequential execution forced by config, and the Agent's queue modes."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import BaseModel

from notebook_agent.core.abort import AbortController, AbortSignal
from notebook_agent.core.agent import Agent
from notebook_agent.core.events import AgentEvent, ToolExecutionEnd, ToolExecutionUpdate
from notebook_agent.core.loop import (
    AfterToolCall,
    AgentContext,
    BeforeToolCall,
    BlockToolCall,
    LoopConfig,
    run_agent_loop,
)
from notebook_agent.core.messages import ToolResultMessage, UserMessage
from notebook_agent.core.tools import Tool, ToolCallContext, ToolResult
from notebook_agent.llm.scripted import ScriptedModel, call, reply


class PairArgs(BaseModel):
    a: int
    b: int


class Pair(Tool):
    """Takes ``a`` and ``b``; ``prepare_arguments`` also accepts the legacy form ``{"pair": [a, b]}``."""

    name = "pair"
    description = "Add a pair."
    parameters = PairArgs

    def __init__(self) -> None:
        self.executed: list[tuple[int, int]] = []

    def prepare_arguments(self, raw: dict[str, Any]) -> dict[str, Any]:
        if "pair" in raw:
            pair = raw.pop("pair")
            if not isinstance(pair, list) or len(pair) != 2:
                raise ValueError(f"pair must be a list of two numbers, got {pair!r}")
            raw["a"], raw["b"] = pair
        return raw

    async def execute(self, args: Any, ctx: ToolCallContext) -> str:
        self.executed.append((args.a, args.b))
        return str(args.a + args.b)


async def drive(model: ScriptedModel, tools: list[Tool], **config: Any) -> tuple[list[AgentEvent], list[Any]]:
    events: list[AgentEvent] = []

    async def emit(e: AgentEvent) -> None:
        events.append(e)

    ctx = AgentContext(system_prompt="sys", messages=[], tools=tools)
    msgs = await run_agent_loop(
        [UserMessage(content="go")], ctx, LoopConfig(model=model, **config), AbortController().signal, emit
    )
    return events, msgs


def ends(events: list[AgentEvent]) -> list[ToolExecutionEnd]:
    return [e for e in events if isinstance(e, ToolExecutionEnd)]


async def test_prepare_arguments_remaps_before_validation() -> None:
    tool = Pair()
    events, msgs = await drive(ScriptedModel([call("pair", pair=[2, 5]), "done"]), [tool])
    assert tool.executed == [(2, 5)]
    result = msgs[2]
    assert isinstance(result, ToolResultMessage) and result.text == "7" and not result.is_error
    assert ends(events)[0].execution_started and ends(events)[0].error_kind is None


async def test_prepare_arguments_that_throws_is_an_error_result_and_the_tool_never_runs() -> None:
    tool = Pair()
    events, msgs = await drive(ScriptedModel([call("pair", pair="nope"), "recovered"]), [tool])
    assert tool.executed == []
    end = ends(events)[0]
    assert end.is_error and not end.execution_started and end.error_kind == "argument-validation"
    assert msgs[2].text == "pair must be a list of two numbers, got 'nope'"
    assert msgs[-1].text == "recovered"  # the model saw the error and the run went on


async def test_a_before_hook_that_throws_blocks_the_call_with_its_message() -> None:
    tool = Pair()

    async def before(ctx: BeforeToolCall, signal: AbortSignal) -> BlockToolCall | None:
        raise RuntimeError("policy store unreachable")

    events, msgs = await drive(ScriptedModel([call("pair", a=1, b=2), "ok"]), [tool], before_tool_call=before)
    assert tool.executed == []
    end = ends(events)[0]
    assert end.is_error and not end.execution_started and end.error_kind == "hook-error"
    assert msgs[2].text == "policy store unreachable"


async def test_after_hook_runs_only_for_calls_that_started() -> None:
    tool = Pair()
    seen: list[str] = []

    async def before(ctx: BeforeToolCall, signal: AbortSignal) -> BlockToolCall | None:
        return BlockToolCall("not this one") if ctx.args.a == 0 else None

    async def after(ctx: AfterToolCall, signal: AbortSignal) -> None:
        seen.append(ctx.tool_call.id)

    model = ScriptedModel(
        [
            reply(
                call("pair", a=0, b=1, id="blocked"), call("missing", id="unknown"), call("pair", a=1, b=1, id="ran")
            ),
            "ok",
        ]
    )
    events, _ = await drive(model, [tool], before_tool_call=before, after_tool_call=after)
    assert seen == ["ran"]
    assert {e.tool_call_id: (e.execution_started, e.error_kind) for e in ends(events)} == {
        "blocked": (False, "blocked"),
        "unknown": (False, "not-found"),
        "ran": (True, None),
    }


async def test_progress_after_the_tool_settled_is_ignored() -> None:
    ended = asyncio.Event()
    late_sent = asyncio.Event()
    late_result: list[Any] = []
    background: list[asyncio.Future[None]] = []

    class Leaky(Tool):
        name = "leaky"
        description = "Reports progress from a task that outlives it."

        async def execute(self, args: Any, ctx: ToolCallContext) -> str:
            await ctx.on_update("early")  # type: ignore[misc]

            async def later() -> None:
                await ended.wait()
                late_result.append(await ctx.on_update("late"))  # type: ignore[misc]
                late_sent.set()

            background.append(asyncio.ensure_future(later()))
            return "finished"

    events: list[AgentEvent] = []

    async def emit(e: AgentEvent) -> None:
        events.append(e)
        if isinstance(e, ToolExecutionEnd):
            ended.set()
            await late_sent.wait()  # the late update has been attempted before the run goes on

    ctx = AgentContext(system_prompt="sys", messages=[], tools=[Leaky()])
    model = ScriptedModel([call("leaky"), "ok"])
    await run_agent_loop([UserMessage(content="go")], ctx, LoopConfig(model=model), AbortController().signal, emit)
    updates = [e.partial_result for e in events if isinstance(e, ToolExecutionUpdate)]
    assert updates == ["early"]
    assert late_result == [None]  # the late call returned at once, without an event


class Logged(Tool):
    """A parallel-mode tool that waits until the test releases it."""

    parameters = {"type": "object", "properties": {}}

    def __init__(self, name: str, log: list[str], gates: dict[str, asyncio.Event]) -> None:
        self.name = name
        self.description = name
        self.log = log
        self.gate = gates.setdefault(name, asyncio.Event())

    async def execute(self, args: Any, ctx: ToolCallContext) -> ToolResult:
        self.log.append(f"start {self.name}")
        await ctx.on_update("started")  # type: ignore[misc]
        await self.gate.wait()
        self.log.append(f"end {self.name}")
        return ToolResult.text(self.name)


@pytest.mark.parametrize("mode", ["sequential", "parallel"])
async def test_sequential_execution_forced_by_config_runs_parallel_tools_one_by_one(mode: str) -> None:
    log: list[str] = []
    gates: dict[str, asyncio.Event] = {}
    tools: list[Tool] = [Logged("a", log, gates), Logged("b", log, gates)]
    assert all(t.execution_mode == "parallel" for t in tools)

    async def emit(e: AgentEvent) -> None:
        if isinstance(e, ToolExecutionUpdate):
            for _ in range(20):  # let every ready task run: a parallel batch starts b now
                await asyncio.sleep(0)
            gates[e.tool_name].set()  # then release the tool that just reported it started

    ctx = AgentContext("sys", [], tools)
    config = LoopConfig(model=ScriptedModel([reply(call("a"), call("b")), "ok"]), tool_execution=mode)  # type: ignore[arg-type]
    await run_agent_loop([UserMessage(content="go")], ctx, config, AbortController().signal, emit)
    if mode == "sequential":
        assert log == ["start a", "end a", "start b", "end b"]
    else:  # the control: without the config the same tools overlap
        assert log[:2] == ["start a", "start b"]


async def test_queue_mode_all_delivers_every_queued_follow_up_at_once() -> None:
    for mode, expected_roles, requests in (
        ("all", ["user", "assistant", "user", "user", "assistant"], 2),
        ("one-at-a-time", ["user", "assistant", "user", "assistant", "user", "assistant"], 3),
    ):
        model = ScriptedModel(["first", "second", "third"])
        agent = Agent(model, queue_mode=mode)  # type: ignore[arg-type]
        agent.follow_up("one")
        agent.follow_up("two")
        result = await agent.run("start")
        assert [m.role for m in result.messages] == expected_roles, mode
        assert len(model.requests) == requests, mode
        texts = [m.text for m in result.messages if m.role == "user"]
        assert texts == ["start", "one", "two"], mode

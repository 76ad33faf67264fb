"""The agent loop: stream a response, run the tool calls it asks for, repeat.

Semantics follow the user's design note (OpenClaw's function-call loop):

1. build the tool plan (visible tools, stable order);
2. stream the assistant response from the model;
3. find the tool calls; resolve each by name, else through the deferred-tool resolver, else a model-visible
   ``Tool X not found`` error;
4. prepare: ``prepare_arguments``, schema validation, ``before_tool_call`` (may block with a reason);
5. run the batch in parallel, or sequentially when any tool in it is sequential or the config says so;
6. execute with an abort signal and an ``on_update`` callback;
7. ``after_tool_call`` may replace content, details, the error flag or ``terminate``, or ask the loop to stop
   after this batch (``stop_after_batch``);
8. append the results in the assistant's source order and ask the model again, until there are no tool calls,
   every result terminates, a hook stopped the batch, the run is aborted, or the model fails.

The outer loop injects steering messages before the next model call and takes follow-up messages when the run
would otherwise end. Every step is reported as an :mod:`~notebook_agent.core.events` event.

Two hooks exist for layers that project tools (the page agent's single ``AgentOutput`` tool):
``tool_specs`` chooses what the provider is offered from the plan, and ``extract_tool_calls`` maps the
assistant message back to the real calls, so the real action runs through this same pipeline.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from .abort import AbortedError, AbortSignal
from .events import (
    AgentEnd,
    AgentEvent,
    AgentStart,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
    TurnEnd,
    TurnStart,
)
from .messages import AssistantMessage, Message, ResultPart, TextContent, ToolCall, ToolResultMessage
from .model import Context, Model, StreamEvent, StreamOptions, ToolSpec
from .planner import ToolPlan, build_tool_plan
from .tools import Tool, ToolArgumentError, ToolResult

Emit = Callable[[AgentEvent], Awaitable[None]]


# -- hook contexts and results ---------------------------------------------------------------------------
@dataclass
class AgentContext:
    """The mutable state of a run: what the next request is built from."""

    system_prompt: str | None
    messages: list[Message] = field(default_factory=list)
    tools: list[Tool] = field(default_factory=list)


@dataclass
class BeforeToolCall:
    assistant_message: AssistantMessage
    tool_call: ToolCall
    """The call as the model sent it (raw arguments)."""
    tool: Tool
    args: Any
    """The validated arguments the tool will receive."""
    context: AgentContext


@dataclass
class BlockToolCall:
    """Returned by ``before_tool_call`` to stop a call; the model sees ``reason``."""

    reason: str | None = None


@dataclass
class AfterToolCall:
    assistant_message: AssistantMessage
    tool_call: ToolCall
    tool: Tool
    args: Any
    result: ToolResult
    is_error: bool
    context: AgentContext


_UNSET: Any = object()


@dataclass
class ToolCallOverride:
    """Returned by ``after_tool_call``: each field given replaces the result's (``details`` may be None)."""

    content: list[ResultPart] | None = None
    details: Any = _UNSET
    is_error: bool | None = None
    terminate: bool | None = None
    stop_after_batch: bool = False


@dataclass
class DeferredToolRequest:
    assistant_message: AssistantMessage
    tool_call: ToolCall
    context: AgentContext


BeforeHook = Callable[[BeforeToolCall, AbortSignal], Awaitable[BlockToolCall | None]]
AfterHook = Callable[[AfterToolCall, AbortSignal], Awaitable[ToolCallOverride | None]]
DeferredResolver = Callable[[DeferredToolRequest, AbortSignal], Awaitable[Tool | None]]
TransformContext = Callable[[AgentContext, AbortSignal], Awaitable[list[Message]]]
MessageSource = Callable[[], Awaitable[list[Message]]]
TurnHook = Callable[[AssistantMessage, list[ToolResultMessage], AgentContext], Awaitable[bool]]


@dataclass
class LoopConfig:
    """How one run behaves. Only ``model`` is required; every hook is optional."""

    model: Model
    tool_execution: Literal["parallel", "sequential"] = "parallel"
    stream_options: StreamOptions = field(default_factory=StreamOptions)
    before_tool_call: BeforeHook | None = None
    after_tool_call: AfterHook | None = None
    resolve_deferred_tool: DeferredResolver | None = None
    transform_context: TransformContext | None = None
    """Rebuilds the messages sent to the model (the transcript itself is kept)."""
    tool_specs: Callable[[ToolPlan], list[ToolSpec]] | None = None
    """What the provider is offered, from the plan. Default: every visible tool."""
    extract_tool_calls: Callable[[AssistantMessage], list[ToolCall]] | None = None
    """The calls to run, from the assistant message. Default: its tool-call blocks."""
    get_steering_messages: MessageSource | None = None
    get_follow_up_messages: MessageSource | None = None
    should_stop_after_turn: TurnHook | None = None
    abort_grace_seconds: float = 0.5
    """How long a tool may take to stop by itself after an abort before its task is cancelled."""
    continue_on_error: Callable[[AssistantMessage], bool] | None = None
    """For a model error the caller can recover from (e.g. malformed output it feeds back to the model): the
    error ends only the turn, and the run goes on through ``extract_tool_calls`` and the after-turn hooks."""


# -- the run ------------------------------------------------------------------------------------------------
@dataclass
class _Outcome:
    call: ToolCall
    tool: Tool | None
    args: Any
    result: ToolResult
    is_error: bool
    started: bool
    error_kind: str | None = None
    stop_after_batch: bool = False


@dataclass
class _Batch:
    results: list[ToolResultMessage]
    terminate: bool
    stop_after_batch: bool


def _error_result(text: str) -> ToolResult:
    return ToolResult([TextContent(text=text)], details={}, is_error=True)


class _Run:
    def __init__(self, context: AgentContext, config: LoopConfig, signal: AbortSignal, emit: Emit) -> None:
        self.context = context
        self.config = config
        self.signal = signal
        self.emit = emit
        self.new_messages: list[Message] = []
        self._resolved: dict[int, Tool | Exception | None] = {}

    # ---- messages ----
    async def _add_message(self, message: Message) -> None:
        await self.emit(MessageStart(message))
        self.context.messages.append(message)
        self.new_messages.append(message)
        await self.emit(MessageEnd(message))

    async def _aborted_turn(self, turn_open: bool) -> None:
        """Close the run after an abort with a synthetic aborted assistant message."""
        if not turn_open:
            await self.emit(TurnStart())
        msg = AssistantMessage(
            content=[TextContent(text="")],
            provider=self.config.model.provider,
            model=self.config.model.id,
            stop_reason="aborted",
            error_message=self.signal.reason or "Agent run aborted",
            error_kind="aborted",
        )
        await self._add_message(msg)
        await self.emit(TurnEnd(msg, []))
        await self.emit(AgentEnd(self.new_messages))

    # ---- the outer and inner loops ----
    async def run(self, prompts: list[Message]) -> list[Message]:
        await self.emit(AgentStart())
        await self.emit(TurnStart())
        for p in prompts:
            await self._add_message(p)
        pending = await self._poll(self.config.get_steering_messages)
        first = True
        while True:
            more_calls = True
            while more_calls or pending:
                if self.signal.aborted:
                    await self._aborted_turn(turn_open=first)
                    return self.new_messages
                if not first:
                    await self.emit(TurnStart())
                first = False
                for m in pending:
                    await self._add_message(m)
                pending = []
                message = await self._stream_response()
                recoverable = (
                    message.stop_reason == "error"
                    and self.config.continue_on_error is not None
                    and self.config.continue_on_error(message)
                )
                if message.stop_reason in ("error", "aborted") and not recoverable:
                    await self.emit(TurnEnd(message, []))
                    await self.emit(AgentEnd(self.new_messages))
                    return self.new_messages
                calls = self._calls_of(message)
                if calls:
                    batch = await self._execute_batch(message, calls)
                else:
                    batch = _Batch([], False, False)
                await self.emit(TurnEnd(message, batch.results))
                if batch.stop_after_batch:
                    await self.emit(AgentEnd(self.new_messages))
                    return self.new_messages
                more_calls = bool(calls) and not batch.terminate
                if self.signal.aborted:
                    await self._aborted_turn(turn_open=False)
                    return self.new_messages
                hook = self.config.should_stop_after_turn
                if hook is not None and await hook(message, batch.results, self.context):
                    await self.emit(AgentEnd(self.new_messages))
                    return self.new_messages
                pending = await self._poll(self.config.get_steering_messages)
            follow_ups = await self._poll(self.config.get_follow_up_messages)
            if not follow_ups:
                break
            pending = follow_ups
        await self.emit(AgentEnd(self.new_messages))
        return self.new_messages

    async def _poll(self, source: MessageSource | None) -> list[Message]:
        if source is None:
            return []
        return list(await source())

    def _calls_of(self, message: AssistantMessage) -> list[ToolCall]:
        if self.config.extract_tool_calls is not None:
            return self.config.extract_tool_calls(message)
        return message.tool_calls

    # ---- one model call ----
    async def _stream_response(self) -> AssistantMessage:
        model = self.config.model
        if self.config.transform_context is not None:
            messages = await self.config.transform_context(self.context, self.signal)
        else:
            messages = list(self.context.messages)
        plan = build_tool_plan(self.context.tools)
        specs = self.config.tool_specs(plan) if self.config.tool_specs else plan.specs()
        request = Context(system_prompt=self.context.system_prompt, messages=messages, tools=specs)
        options = replace(self.config.stream_options, signal=self.signal)

        partial: AssistantMessage | None = None
        final: AssistantMessage | None = None
        stream = model.stream(request, options)
        try:
            async for event in _until_aborted(stream, self.signal):
                if event.type == "start" or partial is None:
                    partial = event.partial
                    await self.emit(MessageStart(partial))
                    if event.type == "start":
                        continue
                if event.type in ("done", "error"):
                    final = event.partial
                    break
                await self.emit(MessageUpdate(event.partial, event))
        except AbortedError:
            final = partial.model_copy(deep=True) if partial else AssistantMessage()
            final.content = [p for p in final.content if not isinstance(p, ToolCall)]
            final.stop_reason = "aborted"
            final.error_message = self.signal.reason or "Agent run aborted"
            final.error_kind = "aborted"
        except Exception as exc:
            final = partial.model_copy(deep=True) if partial else AssistantMessage()
            final.stop_reason = "aborted" if self.signal.aborted else "error"
            final.error_message = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            final.error_kind = "aborted" if self.signal.aborted else "model"
        finally:
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:
                try:
                    await aclose()
                except Exception:
                    pass
        if final is None:
            final = partial if partial is not None else AssistantMessage()
            if final.stop_reason not in ("error", "aborted"):
                final.stop_reason = "error"
                final.error_message = "The model stream ended without a final event"
                final.error_kind = "model"
        if not final.provider:
            final.provider, final.model = model.provider, model.id
        if partial is None:
            await self.emit(MessageStart(final))
        self.context.messages.append(final)
        self.new_messages.append(final)
        await self.emit(MessageEnd(final))
        return final

    # ---- tools ----
    async def _resolve(self, message: AssistantMessage, call: ToolCall) -> Tool | Exception | None:
        key = id(call)
        if key in self._resolved:
            return self._resolved[key]
        found: Tool | Exception | None = next((t for t in self.context.tools if t.name == call.name), None)
        if found is None and self.config.resolve_deferred_tool is not None:
            try:
                got = await self.config.resolve_deferred_tool(
                    DeferredToolRequest(message, call, self.context), self.signal
                )
                if got is not None and got.name != call.name:
                    found = ValueError(f'Deferred tool resolver returned "{got.name}" for requested "{call.name}"')
                elif got is not None:
                    self.context.tools = [*self.context.tools, got]
                    found = got
            except Exception as exc:
                found = exc
        self._resolved[key] = found
        return found

    async def _prepare(self, message: AssistantMessage, call: ToolCall) -> _Outcome | tuple[Tool, Any]:
        """Either an immediate outcome (an error or block) or the tool and its validated arguments."""
        tool = await self._resolve(message, call)

        def fail(text: str, kind: str | None = None) -> _Outcome:
            return _Outcome(call, None, None, _error_result(text), True, False, kind)

        if isinstance(tool, Exception):
            return fail("Operation aborted" if self.signal.aborted else str(tool), "not-found")
        if tool is None:
            return fail(f"Tool {call.name} not found", "not-found")
        try:
            raw = tool.prepare_arguments(dict(call.arguments))
        except Exception as exc:
            return fail(str(exc) or type(exc).__name__, "argument-validation")
        try:
            args = tool.validate(raw)
        except ToolArgumentError as exc:
            return fail(str(exc), "argument-validation")
        except Exception as exc:
            return fail(f"{type(exc).__name__}: {exc}", "argument-validation")
        if self.config.before_tool_call is not None:
            try:
                decision = await self.config.before_tool_call(
                    BeforeToolCall(message, call, tool, args, self.context), self.signal
                )
            except AbortedError:
                return fail("Operation aborted", "aborted")
            except Exception as exc:
                return fail(str(exc) or type(exc).__name__, "hook-error")
            if self.signal.aborted:
                return fail("Operation aborted", "aborted")
            if decision is not None:
                return fail(decision.reason or "Tool execution was blocked", "blocked")
        if self.signal.aborted:
            return fail("Operation aborted", "aborted")
        return tool, args

    async def _execute(self, message: AssistantMessage, call: ToolCall, tool: Tool, args: Any) -> _Outcome:
        if self.signal.aborted:
            return _Outcome(call, tool, args, _error_result("Operation aborted"), True, False, "aborted")
        settled = False
        pending: list[asyncio.Future[None]] = []

        def on_update(partial: Any) -> asyncio.Future[None]:
            if settled:
                done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
                done.set_result(None)
                return done
            fut = asyncio.ensure_future(self.emit(ToolExecutionUpdate(call.id, call.name, call.arguments, partial)))
            pending.append(fut)
            return fut

        try:
            raw = await self._run_tool(tool, call, args, on_update)
            result = ToolResult.text(raw) if isinstance(raw, str) else raw
            if not isinstance(result, ToolResult):
                result = ToolResult.text(str(result))
            is_error = result.is_error
        except AbortedError as exc:
            result, is_error = _error_result(exc.reason if exc.reason else "Operation aborted"), True
        except Exception as exc:
            result, is_error = _error_result(str(exc) or type(exc).__name__), True
        settled = True
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        outcome = _Outcome(call, tool, args, result, is_error, True)
        return await self._finalize(message, outcome)

    async def _run_tool(self, tool: Tool, call: ToolCall, args: Any, on_update: Any) -> ToolResult | str:
        """Run ``execute``; after an abort the tool gets a short grace period, then its task is cancelled."""
        task = asyncio.ensure_future(tool.execute(call.id, args, self.signal, on_update))
        stop = asyncio.ensure_future(self.signal.wait())
        try:
            done, _ = await asyncio.wait({task, stop}, return_when=asyncio.FIRST_COMPLETED)
            if task not in done:
                done, _ = await asyncio.wait({task}, timeout=self.config.abort_grace_seconds)
                if task not in done:
                    task.cancel()
                    try:
                        await task
                    except (asyncio.CancelledError, Exception):
                        pass
                    raise AbortedError(self.signal.reason or "Operation aborted")
            return task.result()
        except asyncio.CancelledError:
            task.cancel()
            raise
        finally:
            stop.cancel()

    async def _finalize(self, message: AssistantMessage, outcome: _Outcome) -> _Outcome:
        hook = self.config.after_tool_call
        if hook is None or outcome.tool is None:
            return outcome
        try:
            override = await hook(
                AfterToolCall(
                    message, outcome.call, outcome.tool, outcome.args, outcome.result, outcome.is_error, self.context
                ),
                self.signal,
            )
        except Exception as exc:
            outcome.result = _error_result(str(exc) or type(exc).__name__)
            outcome.is_error = True
            return outcome
        if override is None:
            return outcome
        r = outcome.result
        outcome.result = ToolResult(
            content=override.content if override.content is not None else r.content,
            details=r.details if override.details is _UNSET else override.details,
            terminate=override.terminate if override.terminate is not None else r.terminate,
            is_error=override.is_error if override.is_error is not None else r.is_error,
        )
        if override.is_error is not None:
            outcome.is_error = override.is_error
        outcome.stop_after_batch = override.stop_after_batch
        return outcome

    async def _end(self, outcome: _Outcome) -> None:
        await self.emit(
            ToolExecutionEnd(
                outcome.call.id,
                outcome.call.name,
                outcome.result,
                outcome.is_error,
                outcome.started,
                outcome.error_kind,
            )
        )

    def _result_message(self, o: _Outcome) -> ToolResultMessage:
        return ToolResultMessage(
            tool_call_id=o.call.id,
            tool_name=o.call.name,
            content=list(o.result.content),
            details=o.result.details,
            is_error=o.is_error,
        )

    async def _is_sequential(self, message: AssistantMessage, calls: list[ToolCall]) -> bool:
        if self.config.tool_execution == "sequential":
            return True
        for call in calls:
            if self.signal.aborted:
                break
            tool = await self._resolve(message, call)
            if isinstance(tool, Tool) and tool.execution_mode == "sequential":
                return True
        return False

    async def _execute_batch(self, message: AssistantMessage, calls: list[ToolCall]) -> _Batch:
        # The resolution cache spans this batch's pre-scan and preparation only: it is keyed by object id,
        # and ids of calls from earlier turns may be reused by new objects.
        self._resolved = {}
        outcomes: list[_Outcome] = []
        tool_results: list[ToolResultMessage] = []
        if await self._is_sequential(message, calls):
            for call in calls:
                await self.emit(ToolExecutionStart(call.id, call.name, call.arguments))
                prepared = await self._prepare(message, call)
                outcome = prepared if isinstance(prepared, _Outcome) else await self._execute(message, call, *prepared)
                await self._end(outcome)
                outcomes.append(outcome)
                msg = self._result_message(outcome)
                await self._add_message(msg)
                tool_results.append(msg)
                if self.signal.aborted:
                    break
        else:
            slots: list[_Outcome | None] = []
            runnable: list[tuple[int, ToolCall, Tool, Any]] = []
            for call in calls:
                await self.emit(ToolExecutionStart(call.id, call.name, call.arguments))
                prepared = await self._prepare(message, call)
                if isinstance(prepared, _Outcome):
                    await self._end(prepared)
                    slots.append(prepared)
                else:
                    runnable.append((len(slots), call, *prepared))
                    slots.append(None)
                if self.signal.aborted:
                    break

            async def run_one(slot: int, call: ToolCall, tool: Tool, args: Any) -> None:
                outcome = await self._execute(message, call, tool, args)
                slots[slot] = outcome
                await self._end(outcome)

            await asyncio.gather(*(run_one(*r) for r in runnable))
            outcomes = [o for o in slots if o is not None]
            for o in outcomes:
                msg = self._result_message(o)
                await self._add_message(msg)
                tool_results.append(msg)
        terminate = bool(outcomes) and all(o.result.terminate for o in outcomes)
        stop = any(o.stop_after_batch for o in outcomes)
        return _Batch(tool_results, terminate, stop)


async def _until_aborted(stream: AsyncIterator[StreamEvent], signal: AbortSignal) -> AsyncIterator[StreamEvent]:
    """Iterate a model stream, raising AbortedError as soon as the signal fires (even mid-await)."""
    iterator = stream.__aiter__()
    while True:
        try:
            event = await signal.race(iterator.__anext__())
        except StopAsyncIteration:
            return
        yield event


async def run_agent_loop(
    prompts: list[Message],
    context: AgentContext,
    config: LoopConfig,
    signal: AbortSignal,
    emit: Emit,
) -> list[Message]:
    """Run the loop until it ends; returns every message the run created. Never raises for model or tool
    failures (they end the turn or become tool results); raises only for programming errors in hooks that
    run outside a tool call (``transform_context``, the planner)."""
    return await _Run(context, config, signal, emit).run(prompts)

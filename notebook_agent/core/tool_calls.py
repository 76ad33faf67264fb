"""The tool-call pipeline of the agent loop: for one assistant message's calls, resolve each tool, prepare
its arguments, run it with one context object, let ``after_tool_call`` amend the result, and append the
results in the assistant's source order.

Steps 3 to 8 of the loop described in :mod:`.loop`: a tool is found by name, else through the deferred-tool
resolver, else a model-visible ``Tool X not found`` error; ``prepare_arguments``, schema validation and
``before_tool_call`` (which may block with a reason) come before ``execute``; a batch runs in parallel, or
sequentially when any tool in it is sequential or the config says so. A tool never crashes the loop: what it
raises becomes an error result the model reads.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from .abort import STOPPED, AbortedError, AbortSignal, stopped_text
from .events import ToolExecutionEnd, ToolExecutionStart, ToolExecutionUpdate
from .hooks import (
    UNSET,
    AfterToolCall,
    AgentContext,
    BeforeToolCall,
    DeferredToolRequest,
    Emit,
    LoopConfig,
)
from .messages import AssistantMessage, Message, TextContent, ToolCall, ToolResultMessage
from .tools import Tool, ToolArgumentError, ToolResult


@dataclass
class Outcome:
    """How one call ended, before it becomes a tool-result message."""

    call: ToolCall
    tool: Tool | None
    args: Any
    result: ToolResult
    is_error: bool
    started: bool
    error_kind: str | None = None
    stop_after_batch: bool = False


@dataclass
class Batch:
    """What one assistant message's calls produced."""

    results: list[ToolResultMessage]
    terminate: bool
    stop_after_batch: bool


def error_result(text: str) -> ToolResult:
    return ToolResult([TextContent(text=text)], details={}, is_error=True)


BEFORE = "before the action ran"
"""What a call that a stop ended before it started was doing (no hook said more)."""
RUNNING = "while the action ran"
"""What a call that a stop ended while it ran was doing (the tool said nothing more)."""


class ToolCalls:
    """Runs the calls of a run's assistant messages (one :meth:`run_batch` per message)."""

    def __init__(
        self,
        context: AgentContext,
        config: LoopConfig,
        signal: AbortSignal,
        emit: Emit,
        add_message: Callable[[Message], Awaitable[None]],
    ) -> None:
        self.context = context
        self.config = config
        self.signal = signal
        self.emit = emit
        self.add_message = add_message
        self._resolved: dict[int, Tool | Exception | None] = {}

    # ---- finding and preparing ----
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

    async def _prepare(self, message: AssistantMessage, call: ToolCall) -> Outcome | tuple[Tool, Any]:
        """Either an immediate outcome (an error or block) or the tool and its validated arguments."""
        tool = await self._resolve(message, call)

        def fail(text: str, kind: str | None = None) -> Outcome:
            return Outcome(call, None, None, error_result(text), True, False, kind)

        if isinstance(tool, Exception):
            if self.signal.aborted:
                return fail(self._stopped(BEFORE), "aborted")
            return fail(str(tool), "not-found")
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
            except AbortedError as exc:  # a hook that waited (for approval, say) names its wait
                return fail(self._stopped(exc.during or BEFORE, exc.reason), "aborted")
            except Exception as exc:
                return fail(str(exc) or type(exc).__name__, "hook-error")
            if self.signal.aborted:
                return fail(self._stopped(BEFORE), "aborted")
            if decision is not None:
                return fail(decision.reason or "Tool execution was blocked", "blocked")
        if self.signal.aborted:
            return fail(self._stopped(BEFORE), "aborted")
        return tool, args

    def _stopped(self, during: str, reason: str | None = None) -> str:
        """The one wording of a call a stop ended (see :func:`~.abort.stopped_text`)."""
        return stopped_text(reason or self.signal.reason, during)

    # ---- running ----
    async def _execute(self, message: AssistantMessage, call: ToolCall, tool: Tool, args: object) -> Outcome:
        if self.signal.aborted:
            return Outcome(call, tool, args, error_result(self._stopped(BEFORE)), True, False, "aborted")
        settled = False
        pending: list[asyncio.Future[None]] = []

        def on_update(partial: object) -> asyncio.Future[None]:
            if settled:
                done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
                done.set_result(None)
                return done
            fut = asyncio.ensure_future(self.emit(ToolExecutionUpdate(call.id, call.name, call.arguments, partial)))
            pending.append(fut)
            return fut

        kind: str | None = None
        try:
            raw = await self._run_tool(tool, call, args, on_update)
            result = ToolResult.text(raw) if isinstance(raw, str) else raw
            if not isinstance(result, ToolResult):
                result = ToolResult.text(str(result))
            is_error = result.is_error
        except AbortedError as exc:
            if self.signal.aborted:  # the run was stopped: said plainly, with what the action was doing
                result, kind = error_result(self._stopped(exc.during or RUNNING, exc.reason)), "aborted"
            else:
                result = error_result(str(exc))
            is_error = True
        except Exception as exc:
            result, is_error = error_result(str(exc) or type(exc).__name__), True
        settled = True
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        outcome = Outcome(call, tool, args, result, is_error, True, kind)
        return await self._finalize(message, outcome)

    async def _run_tool(
        self, tool: Tool, call: ToolCall, args: object, on_update: Callable[[Any], Any]
    ) -> ToolResult | str:
        """Run ``execute`` with the call's context; after an abort the tool gets a short grace period, then
        its task is cancelled. Building the context is part of the call: if the factory fails, so does it."""
        ctx = self.config.make_tool_context(call, self.signal, on_update)
        task = asyncio.ensure_future(tool.execute(args, ctx))
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
                    raise AbortedError(self.signal.reason or STOPPED)
            return task.result()
        except asyncio.CancelledError:
            task.cancel()
            raise
        finally:
            stop.cancel()

    async def _finalize(self, message: AssistantMessage, outcome: Outcome) -> Outcome:
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
            outcome.result = error_result(str(exc) or type(exc).__name__)
            outcome.is_error = True
            return outcome
        if override is None:
            return outcome
        r = outcome.result
        outcome.result = ToolResult(
            content=override.content if override.content is not None else r.content,
            details=r.details if override.details is UNSET else override.details,
            terminate=override.terminate if override.terminate is not None else r.terminate,
            is_error=override.is_error if override.is_error is not None else r.is_error,
            finished=r.finished,
        )
        if override.is_error is not None:
            outcome.is_error = override.is_error
        outcome.stop_after_batch = override.stop_after_batch
        return outcome

    # ---- reporting ----
    async def _end(self, outcome: Outcome) -> None:
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

    @staticmethod
    def _result_message(o: Outcome) -> ToolResultMessage:
        return ToolResultMessage(
            tool_call_id=o.call.id,
            tool_name=o.call.name,
            content=list(o.result.content),
            details=o.result.details,
            is_error=o.is_error,
        )

    # ---- a batch ----
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

    async def run_batch(self, message: AssistantMessage, calls: list[ToolCall]) -> Batch:
        """Run ``calls`` (from ``message``); their result messages are added to the run in source order."""
        # The resolution cache spans this batch's pre-scan and preparation only: it is keyed by object id,
        # and ids of calls from earlier turns may be reused by new objects.
        self._resolved = {}
        if await self._is_sequential(message, calls):
            outcomes, tool_results = await self._run_sequentially(message, calls)
        else:
            outcomes, tool_results = await self._run_in_parallel(message, calls)
        terminate = bool(outcomes) and all(o.result.terminate for o in outcomes)
        stop = any(o.stop_after_batch for o in outcomes)
        return Batch(tool_results, terminate, stop)

    async def _run_sequentially(
        self, message: AssistantMessage, calls: list[ToolCall]
    ) -> tuple[list[Outcome], list[ToolResultMessage]]:
        """One call after the other, each result added before the next call starts; an abort ends the batch."""
        outcomes: list[Outcome] = []
        tool_results: list[ToolResultMessage] = []
        for call in calls:
            await self.emit(ToolExecutionStart(call.id, call.name, call.arguments))
            prepared = await self._prepare(message, call)
            outcome = prepared if isinstance(prepared, Outcome) else await self._execute(message, call, *prepared)
            await self._end(outcome)
            outcomes.append(outcome)
            msg = self._result_message(outcome)
            await self.add_message(msg)
            tool_results.append(msg)
            if self.signal.aborted:
                break
        return outcomes, tool_results

    async def _run_in_parallel(
        self, message: AssistantMessage, calls: list[ToolCall]
    ) -> tuple[list[Outcome], list[ToolResultMessage]]:
        """Prepare every call in order, run the runnable ones together, then add the results in source order."""
        slots: list[Outcome | None] = []
        runnable: list[tuple[int, ToolCall, Tool, Any]] = []
        for call in calls:
            await self.emit(ToolExecutionStart(call.id, call.name, call.arguments))
            prepared = await self._prepare(message, call)
            if isinstance(prepared, Outcome):
                await self._end(prepared)
                slots.append(prepared)
            else:
                runnable.append((len(slots), call, *prepared))
                slots.append(None)
            if self.signal.aborted:
                break

        async def run_one(slot: int, call: ToolCall, tool: Tool, args: object) -> None:
            outcome = await self._execute(message, call, tool, args)
            slots[slot] = outcome
            await self._end(outcome)

        await asyncio.gather(*(run_one(*r) for r in runnable))
        outcomes = [o for o in slots if o is not None]
        tool_results: list[ToolResultMessage] = []
        for o in outcomes:
            msg = self._result_message(o)
            await self.add_message(msg)
            tool_results.append(msg)
        return outcomes, tool_results

"""The agent loop: stream a response, run the tool calls it asks for, repeat.

Semantics follow the user's design note (OpenClaw's function-call loop):

1. build the tool plan (visible tools, stable order);
2. stream the assistant response from the model;
3. find the tool calls; resolve each by name, else through the deferred-tool resolver, else a model-visible
   ``Tool X not found`` error;
4. prepare: ``prepare_arguments``, schema validation, ``before_tool_call`` (may block with a reason);
5. run the batch in parallel, or sequentially when any tool in it is sequential or the config says so;
6. execute with one context object (``tool.execute(args, ctx)``: the call id, the abort signal and progress
   reporting; ``LoopConfig.tool_context`` lets a layer above hand tools a richer one);
7. ``after_tool_call`` may replace content, details, the error flag or ``terminate``, or ask the loop to stop
   after this batch (``stop_after_batch``);
8. append the results in the assistant's source order and ask the model again, until there are no tool calls,
   every result terminates, a hook stopped the batch, the run is aborted, or the model fails.

The outer loop injects steering messages before the next model call and takes follow-up messages when the run
would otherwise end. Every step is reported as an :mod:`~notebook_agent.core.events` event.

This module is the run itself (the outer and inner loops, one model call); steps 3 to 8, the tool-call
pipeline, are in :mod:`.tool_calls`, and the configuration and hook types in :mod:`.hooks` (all importable
from here).

Two hooks exist for layers that project tools (the page agent's single ``AgentOutput`` tool):
``tool_specs`` chooses what the provider is offered from the plan, and ``extract_tool_calls`` maps the
assistant message back to the real calls, so the real action runs through this same pipeline.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace

from .abort import AbortedError, AbortSignal
from .events import (
    AgentEnd,
    AgentStart,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    TurnEnd,
    TurnStart,
)
from .hooks import (
    AfterHook,
    AfterToolCall,
    AgentContext,
    BeforeHook,
    BeforeToolCall,
    BlockToolCall,
    DeferredResolver,
    DeferredToolRequest,
    Emit,
    LoopConfig,
    MessageSource,
    ToolCallOverride,
    ToolContextFactory,
    TransformContext,
    TurnHook,
    plain_tool_context,
)
from .messages import AssistantMessage, Message, TextContent, ToolCall
from .model import Context, StreamEvent
from .planner import build_tool_plan
from .tool_calls import Batch, ToolCalls
from .tools import ToolCallContext

__all__ = [
    "AfterHook",
    "AfterToolCall",
    "AgentContext",
    "BeforeHook",
    "BeforeToolCall",
    "BlockToolCall",
    "DeferredResolver",
    "DeferredToolRequest",
    "Emit",
    "LoopConfig",
    "MessageSource",
    "ToolCallContext",
    "ToolCallOverride",
    "ToolContextFactory",
    "TransformContext",
    "TurnHook",
    "plain_tool_context",
    "run_agent_loop",
]


class _Run:
    def __init__(self, context: AgentContext, config: LoopConfig, signal: AbortSignal, emit: Emit) -> None:
        self.context = context
        self.config = config
        self.signal = signal
        self.emit = emit
        self.new_messages: list[Message] = []
        self.tool_calls = ToolCalls(context, config, signal, emit, self._add_message)

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
                    batch = await self.tool_calls.run_batch(message, calls)
                else:
                    batch = Batch([], False, False)
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

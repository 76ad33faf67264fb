"""A small stateful wrapper around the loop for users: run, stream, steer, follow up, abort.

The transcript persists across runs, so ``await agent.run("and now?")`` continues the conversation. One run
at a time: a second ``run`` while one is active is an error that says to use ``steer``/``follow_up``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from .abort import AbortController
from .aio import events_of
from .errors import BusyError
from .events import AgentEnd, AgentEvent
from .loop import AfterHook, AgentContext, BeforeHook, DeferredResolver, LoopConfig, run_agent_loop
from .messages import AssistantMessage, Message, ToolResultMessage, Usage, UserMessage
from .model import Model, StreamOptions
from .tools import Tool


class AgentBusyError(BusyError):
    """A run is already active on this agent."""


@dataclass
class RunResult:
    """What ``Agent.run`` returns: every message the run created and the convenient bits of the last one."""

    messages: list[Message] = field(default_factory=list)

    @property
    def last_assistant(self) -> AssistantMessage | None:
        for m in reversed(self.messages):
            if isinstance(m, AssistantMessage):
                return m
        return None

    @property
    def text(self) -> str:
        last = self.last_assistant
        return last.text if last else ""

    @property
    def stop_reason(self) -> str | None:
        last = self.last_assistant
        return last.stop_reason if last else None

    @property
    def error_message(self) -> str | None:
        last = self.last_assistant
        return last.error_message if last else None

    @property
    def usage(self) -> Usage:
        total = Usage()
        for m in self.messages:
            if isinstance(m, AssistantMessage):
                total.add(m.usage)
        return total


Listener = Callable[[AgentEvent], object]


class Agent:
    """``Agent(model, tools=[...], system_prompt=...)``; then ``await agent.run("task")``."""

    def __init__(
        self,
        model: Model,
        *,
        tools: Sequence[Tool] = (),
        system_prompt: str | None = None,
        tool_execution: Literal["parallel", "sequential"] = "parallel",
        before_tool_call: BeforeHook | None = None,
        after_tool_call: AfterHook | None = None,
        resolve_deferred_tool: DeferredResolver | None = None,
        stream_options: StreamOptions | None = None,
        queue_mode: Literal["one-at-a-time", "all"] = "one-at-a-time",
    ) -> None:
        self.model = model
        self.context = AgentContext(system_prompt=system_prompt, messages=[], tools=list(tools))
        self.config = LoopConfig(
            model=model,
            tool_execution=tool_execution,
            before_tool_call=before_tool_call,
            after_tool_call=after_tool_call,
            resolve_deferred_tool=resolve_deferred_tool,
            stream_options=stream_options or StreamOptions(),
            get_steering_messages=self._take_steering,
            get_follow_up_messages=self._take_follow_ups,
        )
        self.queue_mode = queue_mode
        self._steering: list[Message] = []
        self._follow_ups: list[Message] = []
        self._controller: AbortController | None = None
        self._listeners: list[Listener] = []

    @property
    def messages(self) -> list[Message]:
        return self.context.messages

    @property
    def is_running(self) -> bool:
        return self._controller is not None

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(event)`` for every event of every run; returns an unsubscribe function."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def steer(self, message: str | Message) -> None:
        """Queue a message to inject before the next model call of the running run."""
        self._steering.append(_as_message(message))

    def follow_up(self, message: str | Message) -> None:
        """Queue a message to send when the run would otherwise end."""
        self._follow_ups.append(_as_message(message))

    def abort(self, reason: str = "Agent run aborted") -> None:
        if self._controller is not None:
            self._controller.abort(reason)

    async def _take(self, queue: list[Message]) -> list[Message]:
        if not queue:
            return []
        if self.queue_mode == "all":
            taken = list(queue)
            queue.clear()
            return taken
        return [queue.pop(0)]

    async def _take_steering(self) -> list[Message]:
        return await self._take(self._steering)

    async def _take_follow_ups(self) -> list[Message]:
        return await self._take(self._follow_ups)

    async def run(self, prompt: str | Message | Sequence[Message]) -> RunResult:
        """Run to the end and return what the run created."""
        result = RunResult()
        async for event in self.stream(prompt):
            if isinstance(event, AgentEnd):
                result.messages = list(event.messages)
        return result

    async def stream(self, prompt: str | Message | Sequence[Message]) -> AsyncIterator[AgentEvent]:
        """Run and yield each event as it happens. Leaving the loop early aborts the run."""
        if self._controller is not None:
            raise AgentBusyError(
                "Agent is already processing a prompt. Use steer() or follow_up() to queue messages, "
                "or wait for completion."
            )
        prompts = [_as_message(prompt)] if isinstance(prompt, (str, *_MESSAGE_TYPES)) else list(prompt)
        controller = AbortController()
        self._controller = controller

        async def work(put: Callable[[AgentEvent], None]) -> None:
            async def emit(event: AgentEvent) -> None:
                for listener in list(self._listeners):
                    out = listener(event)
                    if asyncio.iscoroutine(out):
                        await out
                put(event)

            await run_agent_loop(prompts, self.context, self.config, controller.signal, emit)

        try:
            async for event in events_of(work, controller, grace=5):
                yield event
        finally:
            self._controller = None


_MESSAGE_TYPES = (UserMessage, AssistantMessage, ToolResultMessage)


def _as_message(message: str | Message | Sequence[Message]) -> Message:
    if isinstance(message, str):
        return UserMessage(content=message)
    if not isinstance(message, _MESSAGE_TYPES):
        raise TypeError(f"expected a string or one message, got {type(message).__name__}")
    return message

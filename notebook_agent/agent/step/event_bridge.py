"""The core loop's events become the run's page events (:mod:`notebook_agent.agent.runs.events`), the only ones that
leave a run.

One job, kept apart from the run's hooks: as the model streams, the reflection so far (parsed and capped, the
same for every output mode); as the action runs, its start, progress and end (the step's result, timing and
data recorded on the way); when the turn ends, the page's fetch and XHR calls taken onto the step (redacted), the
step, and its screenshot started in the background.
"""

from __future__ import annotations

import dataclasses
import time

from ...core.events import (
    AgentEvent,
    MessageEnd,
    MessageUpdate,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
    TurnEnd,
    TurnStart,
)
from ...core.messages import AssistantMessage
from ...core.text import map_strings
from ..prompt.preview import reflection_partial
from ..runs.events import ActionFinished, ActionProgress, ActionStarted, ReflectionPartial, StepFinished
from ..runs.result import PageStep
from .ending import verdict_of
from .run_state import RunState


class LoopEvents:
    """Turns one run's loop events into page events; keeps the timing marks they need."""

    def __init__(self, run: RunState) -> None:
        self.run = run
        self.turn_started = 0.0
        self.action_started = 0.0
        self.partial: ReflectionPartial | None = None
        """The last reflection preview sent (an unchanged one is not sent again)."""

    async def handle(self, event: AgentEvent) -> None:
        run = self.run
        step = run.step
        if isinstance(event, TurnStart):
            self.turn_started = time.perf_counter()
        elif step is None:
            return
        elif isinstance(event, MessageEnd) and isinstance(event.message, AssistantMessage):
            record_call(step, event.message)
        elif isinstance(event, MessageUpdate) and step.output is None:
            partial = reflection_partial(step.index, event.message, run.redactor)
            if partial is not None and partial != self.partial:
                self.partial = partial
                run.put(partial)
        elif isinstance(event, ToolExecutionStart):
            self.action_started = time.perf_counter()
            run.put(ActionStarted(step, event.tool_name, run.redactor.public_args(event.tool_name, event.args)))
        elif isinstance(event, ToolExecutionUpdate):
            progress = map_strings(event.partial_result, run.redactor.scrub_text)
            run.put(ActionProgress(step, event.tool_name, progress))
        elif isinstance(event, ToolExecutionEnd):
            self._action_ended(step, event)
            run.put(ActionFinished(step))
        elif isinstance(event, TurnEnd):
            if step.output is None and step.model_ms == 0 and event.message.stop_reason == "error":
                # a call the provider failed never reaches extract_tool_calls: its time and usage are the step's too
                step.model_ms = (time.perf_counter() - self.turn_started) * 1000
                step.usage = event.message.usage
            await run.screenshots.collect()  # keep one in flight, in step order
            if run.calls is not None and run.browser is not None:
                calls = await run.browser.call(run.calls.take)
                step.calls = [map_strings(call, run.redactor.scrub_text) for call in calls]
            run.put(StepFinished(step))
            if run.agent.screenshots and run.browser is not None:
                run.screenshots.start(run.browser, step)

    def _action_ended(self, step: PageStep, event: ToolExecutionEnd) -> None:
        run = self.run
        step.action_ms = (time.perf_counter() - self.action_started) * 1000
        step.result = run.redactor.scrub_text(event.result.text_content)
        step.is_error = event.is_error
        step.stopped = event.error_kind == "aborted"
        finished = None
        if not event.is_error:
            run.data.action_finished(event.tool_name, event.result.details)
            finished = verdict_of(event.tool_name, event.result, step.args)
        if finished is not None:  # the text is kept and shown: redacted as the step's arguments are
            finished = dataclasses.replace(finished, text=run.redactor.scrub_text(finished.text))
            run.data.finished(finished.data)
        run.outcome.action_finished(step, event.error_kind, finished)
        run.observer.action_finished(event.tool_name, step.args, event.is_error)


def record_call(step: PageStep, message: AssistantMessage) -> None:
    """The step's model call ended (answered, failed or stopped): its usage becomes the step's, counted as one
    call when the model was asked (a step a pilot decided made none). Once per step: a stop's closing message
    after the step's call changes nothing; a step whose request was never sent has no call."""
    if step.request is None or step.usage.calls or step.output is not None:
        return
    usage = message.usage.model_copy(deep=True)
    usage.calls = 1 if step.asks_model else 0
    step.usage = usage

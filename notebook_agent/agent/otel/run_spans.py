"""One run's trace, made from its page events: a consumer of the stream, like the run file's recorder and the views.

The run is an ``invoke_agent`` span (started when the run starts, ended by ``RunFinished`` with the run's status,
steps and token totals), the child of whatever span is current where the run was started (a map's row, a span of
the program's own), and current itself while the run works (so a library's own instrumentation nests under it).
Under it, each step is a span from ``StepStarted`` to ``StepFinished``; under a step, its model call, its approval
wait (``ApprovalRequested`` to ``ApprovalAnswered``) and its action (``ActionStarted`` to ``ActionFinished``).

A model call has no events of its own in the stream: its span is made from the step it belongs to, which carries
the call's measured time (``state_ms``: the page read before it, ``model_ms``: the call itself, the numbers the run
file keeps), its usage and its raw output, so the span and the run file agree to the millisecond. A replayed step
made no model call and has no model span. The consumer is handed each event as it is emitted (it wraps the run's
``put``), so the times are the run's, not a slow reader's.

Every string goes through the run's redactor, the one that keeps secrets out of its events and file. A failure
here is said once and ends this run's tracing; the run itself goes on.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from ...core.model import Model
from ..runs.events import (
    ActionFinished,
    ActionStarted,
    ApprovalAnswered,
    ApprovalRequested,
    ModelOutputParsed,
    PageEvent,
    RunFinished,
    StepFinished,
    StepStarted,
)
from ..runs.result import PageAgentResult, PageStep
from ..safety.secrets import Redactor
from . import attributes as attrs
from . import export
from .settings import warn_once

if TYPE_CHECKING:
    from opentelemetry.context import Context


class RunSpans:
    """The spans of one run (see the module docstring): ``consumer(put)`` is the run's ``put`` with this in front,
    ``around(redactor)`` the run's life."""

    def __init__(self, *, model: Model, kind: str, follows: str, content: bool) -> None:
        self.tracer = export.tracer()
        self.parent = export.current_context()
        self.model, self.kind, self.follows, self.content = model, kind, follows, content
        self.scrub: Callable[[str], str] = lambda text: text
        self.task = ""
        self.root: Any = None
        self.root_context: Any = None
        self.step_context: Any = None
        self.step: Any = None
        self.step_ns = 0
        self.action: Any = None
        self.approval: Any = None
        self.modelled: set[int] = set()
        self.failed_call: tuple[Any, int] | None = None
        self.system: str | None = None
        """The system prompt last sent with a model call's content (the same one is not sent again)."""
        self.broken = False

    def consumer(self, put: Callable[[PageEvent], None]) -> Callable[[PageEvent], None]:
        def both(event: PageEvent) -> None:
            self.handle(event)
            put(event)

        return both

    @contextlib.contextmanager
    def around(self, redactor: Redactor, task: str) -> Iterator[None]:
        """The run's span from here to the end of the block, current inside it; whatever is still open at the end
        (a run that never finished) is ended."""
        self.scrub, self.task = redactor.scrub_text, task
        try:
            start = attrs.run_start(self.model.id, self.model.provider, self.kind, self.follows)
            self.root = self.tracer.start_span("invoke_agent notebook_agent", context=self.parent, attributes=start)
            self.root_context = self.step_context = export.context_of(self.root)
            token = export.attach(self.root_context)
        except Exception as exc:
            self._broke(exc)
            yield
            return
        try:
            yield
        finally:
            export.detach(token)
            self._close(None)

    def handle(self, event: PageEvent) -> None:
        if self.broken or self.root is None:
            return
        try:
            self._handle(event)
        except Exception as exc:
            self._broke(exc)

    def _broke(self, exc: Exception) -> None:
        self.broken = True
        warn_once(f"spans {type(exc).__name__}", f"A run's trace could not be made ({exc}); runs go on untraced.")

    def _handle(self, event: PageEvent) -> None:
        if isinstance(event, StepStarted):
            self._end_step(None)
            self.step_ns = time.time_ns()
            index = {"notebook_agent.step.index": event.step}
            self.step = self._child(self.root_context, f"step {event.step}", self.step_ns, index)
            self.step_context = export.context_of(self.step)  # its children's parent, made once
        elif isinstance(event, ModelOutputParsed):
            self._model_call(event.step)
        elif isinstance(event, ApprovalRequested):
            request = event.request
            facts = {"notebook_agent.approval.action": request.action, "notebook_agent.approval.risk": request.risk}
            if request.reason:
                facts["notebook_agent.approval.reason"] = self.scrub(request.reason)
            self.approval = self._child(self.step_context, f"approval {request.action}", time.time_ns(), facts)
        elif isinstance(event, ApprovalAnswered) and self.approval is not None:
            answer = event.answer
            self.approval.set_attribute("notebook_agent.approval.approved", answer.approved)
            self.approval.set_attribute("notebook_agent.approval.by", answer.by)
            if answer.reason:
                self.approval.set_attribute("notebook_agent.approval.answer", self.scrub(answer.reason))
            self.approval.end()
            self.approval = None
        elif isinstance(event, ActionStarted):
            name, facts = f"execute_tool {event.action}", attrs.action_start(event.action)
            self.action = self._child(self.step_context, name, time.time_ns(), facts)
        elif isinstance(event, ActionFinished):
            self._end_action(event.step)
        elif isinstance(event, StepFinished):
            self._end_step(event.step)
        elif isinstance(event, RunFinished):
            self._close(event.result)

    def _child(
        self, parent: Context | None, name: str, start_ns: int, facts: dict[str, Any], *, client: bool = False
    ) -> Any:
        """A span started at ``start_ns`` under the span whose context is ``parent``."""
        return self.tracer.start_span(
            name,
            context=parent,
            kind=export.kind(client),
            attributes=facts,
            start_time=start_ns,
        )

    def _model_call(self, step: PageStep) -> None:
        """The step's model call, once: none for a replayed step or a step whose call never started."""
        called = step.output is not None or step.model_ms > 0
        if step.index in self.modelled or not called or step.replay == "replayed" or self.step is None:
            return
        self.modelled.add(step.index)
        start = self.step_ns + int(step.state_ms * 1e6)
        end = start + int(step.model_ms * 1e6)
        facts = attrs.model_call(step, self.model.id, self.model.provider)
        name = f"chat {facts['gen_ai.request.model']}"
        span = self._child(self.step_context, name, start, facts, client=True)
        if self.content:
            system = step.request.system_prompt if step.request is not None else self.system
            details = attrs.model_content(step, self.scrub, system=system != self.system)
            self.system = system
            span.add_event(attrs.DETAILS, attributes=details, timestamp=end)
        out = step.output
        if out is None:  # the provider failed the call: the run's error, at its end, says why
            self.failed_call = (span, end)
            return
        if out.stop_reason == "error":
            export.failed(span, self.scrub(out.error_message or "The model call failed."))
        span.end(end_time=end)

    def _end_action(self, step: PageStep | None) -> None:
        if self.action is None:
            return
        if step is not None:
            if self.content:
                self.action.set_attributes(attrs.action_content(step, self.scrub))
            if step.stopped:
                self.action.set_attribute("notebook_agent.step.stopped", True)
            if step.is_error:
                export.failed(self.action, self.scrub(step.result))
        self.action.end()
        self.action = None

    def _end_step(self, step: PageStep | None) -> None:
        if self.approval is not None:
            self.approval.end()
            self.approval = None
        self._end_action(step)
        if self.step is None:
            return
        if step is not None:
            self._model_call(step)  # a call that failed or was stopped had no ModelOutputParsed
            self.step.set_attributes(attrs.step_end(step, self.scrub))
        self.step.end()
        self.step, self.step_context = None, self.root_context

    def _close(self, result: PageAgentResult | None) -> None:
        """End what is open; the run's span last, with the result when there is one."""
        if self.root is None:
            return
        self._end_step(None)
        if self.failed_call is not None:
            span, end = self.failed_call
            self.failed_call = None
            export.failed(span, self.scrub(result.error if result is not None and result.error else "It failed."))
            span.end(end_time=end)
        root, self.root = self.root, None
        if result is not None:
            root.set_attributes(attrs.run_end(result))
            if result.status == "error":
                export.failed(root, self.scrub(result.error or "The run ended with an error."))
        if self.content:
            root.add_event("notebook_agent.run.details", attributes=attrs.run_content(self.task, result, self.scrub))
        root.end()

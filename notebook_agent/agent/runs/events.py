"""The one stream a page-agent run emits, in page terms: what every view consumes and nothing else.

A step starts (``StepStarted``); the model's reflection fills in as it streams (``ReflectionPartial``, already parsed
and capped, the same for every output mode: a tool call, schema-constrained JSON, JSON in text); the output is
understood (``ModelOutputParsed``); the action may wait for a person (``ApprovalRequested`` carries the
:class:`~notebook_agent.agent.safety.approval.Approval` to answer, ``ApprovalAnswered`` its answer), runs
(``ActionStarted``, ``ActionProgress``, ``ActionFinished``); the step ends (``StepFinished``) and its screenshot arrives
(``ScreenshotTaken``, possibly after the next step started); the run ends (``RunFinished``).

The notebook card, the terminal, the run file and evaluation read these; none of them reads the core loop's
events or parses model output. Arguments in events are already redacted (secrets appear as placeholders).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from ..safety.approval import Approval, ApprovalAnswer, ApprovalRequest
from .result import PageAgentResult, PageStep


@dataclass(frozen=True)
class StepStarted:
    step: int
    max_steps: int
    type: Literal["step_started"] = "step_started"


@dataclass(frozen=True)
class ReflectionPartial:
    """The model's output so far, while it streams: each reflection field as far as it has been written
    (capped like the final ones), and the action's name and arguments once they begin."""

    step: int
    evaluation_previous_goal: str = ""
    memory: str = ""
    next_goal: str = ""
    action: str | None = None
    args: dict[str, Any] = field(default_factory=dict)
    type: Literal["reflection_partial"] = "reflection_partial"


@dataclass(frozen=True)
class ModelOutputParsed:
    step: PageStep
    type: Literal["model_output"] = "model_output"


@dataclass(frozen=True)
class ActionStarted:
    step: PageStep
    action: str
    args: dict[str, Any]
    type: Literal["action_started"] = "action_started"


@dataclass(frozen=True)
class ActionProgress:
    step: PageStep
    action: str
    progress: Any
    type: Literal["action_progress"] = "action_progress"


@dataclass(frozen=True)
class ActionFinished:
    step: PageStep
    type: Literal["action_finished"] = "action_finished"


@dataclass(frozen=True)
class StepFinished:
    """The step is over (its action ran, was refused, or its output was unusable); its record is final but
    for the screenshot, which may follow."""

    step: PageStep
    type: Literal["step_finished"] = "step_finished"


@dataclass(frozen=True)
class ScreenshotTaken:
    """The step's picture; or, with ``withheld`` set and no ``data``, why the step has none (a value the run
    hides could not be made sure to be painted over, so no picture left the browser)."""

    step: PageStep
    data: bytes = field(repr=False)
    mime_type: str = "image/jpeg"
    type: Literal["screenshot"] = "screenshot"
    withheld: str = ""


@dataclass(frozen=True)
class ApprovalRequested:
    """A person is asked about the step's action: answer with ``approval.approve()`` / ``approval.deny()``."""

    step: PageStep
    approval: Approval
    type: Literal["approval_requested"] = "approval_requested"

    @property
    def request(self) -> ApprovalRequest:
        return self.approval.request


@dataclass(frozen=True)
class ApprovalAnswered:
    step: PageStep
    request: ApprovalRequest
    answer: ApprovalAnswer
    type: Literal["approval_answered"] = "approval_answered"


@dataclass(frozen=True)
class RunFinished:
    result: PageAgentResult
    type: Literal["run_finished"] = "run_finished"


PageEvent: TypeAlias = (
    StepStarted
    | ReflectionPartial
    | ModelOutputParsed
    | ActionStarted
    | ActionProgress
    | ActionFinished
    | StepFinished
    | ScreenshotTaken
    | ApprovalRequested
    | ApprovalAnswered
    | RunFinished
)
AnyEvent: TypeAlias = PageEvent
"""Everything ``PageAgent.stream`` yields (the page events; the core loop's own events stay inside the run)."""

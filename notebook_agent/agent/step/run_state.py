"""One run's state, as every stage of a step reads and feeds it: :class:`RunState`.

A run is a few stages around the core loop: reading the page (page_read.py), the model's output becoming a
call, the loop guard and the claim check, the gate (gate.py), the action, its events (event_bridge.py),
the screenshot. Each stage takes the state it works on, explicitly, as pydantic-ai's graph nodes take their
state: the steps so far, the history the model reads, the page's observer, the loop guard, how the run is
ending, what it read, and the agent's settings (:class:`RunSpec`). The run itself (run.py) is then only the
loop's hooks, calling the stages with it.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from ...browser.page.call_log import CallLog
from ...browser.page.snapshot import Snapshot
from ...browser.session.browser_session import BrowserSession
from ...core.abort import AbortController
from ...core.loop import AfterHook
from ...core.messages import Usage
from ...core.model import Model, StreamOptions
from ...core.text import map_strings
from ...core.tools import Tool
from ...llm.pricing import prices_of
from ..prompt.profiles import Profile
from ..prompt.state_message import Observer, earlier_run_note
from ..prompt.system_prompt import prompt_hash
from ..runs.events import PageEvent
from ..runs.recorder import Recorder
from ..runs.result import PageAgentResult, PageStep
from ..runs.run_data import RunData
from ..safety.approval import Approver, PolicyFunction, PolicyName
from ..safety.budget import Budget, RunBudget
from ..safety.domains import DomainPattern
from ..safety.secrets import Redactor, SecretVault
from .ending import RunOutcome
from .loop_guard import LoopGuard
from .pilot import Pilot
from .requested_clicks import ClaimCheck
from .screenshots import StepScreenshots
from .typed_output import OutputSpec


class RunSpec(Protocol):
    """What a run reads from the agent that started it (``PageAgent`` provides it)."""

    model: Model
    own_tab: bool
    max_steps: int
    max_failures: int
    max_cost: float | None
    max_tokens: int | None
    start_url: str | None
    vision: bool
    screenshots: bool
    full_page: bool
    trace: bool
    approval: PolicyName | PolicyFunction
    approver: Approver | None
    approval_timeout: float
    after_tool_call: AfterHook | None
    stream_options: StreamOptions
    last_result: PageAgentResult | None
    secrets: SecretVault
    custom_tools: dict[str, Tool | None]
    deps: Any
    allowed_domains: tuple[DomainPattern, ...]
    blocked_domains: tuple[DomainPattern, ...]
    output_spec: OutputSpec | None
    profile: Profile

    @property
    def full_system_prompt(self) -> str: ...

    def tools(
        self, browser: BrowserSession, task: str | None = None, *, data: bool | None = None, page: frozenset[str] = ...
    ) -> dict[str, Tool]: ...

    def settings(self) -> dict[str, Any]: ...


def new_run_id() -> str:
    """A run's id: when it started, then six random hex digits (``20261207-141816-3fa2c1``)."""
    return datetime.now().strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]


@dataclass
class RunState:
    """The state of one run (see the module docstring). ``emit`` receives every page event after the run file
    recorded it (:meth:`put`). ``target`` finds the element a call names (for the redactor), set by the run."""

    agent: RunSpec
    task: str
    controller: AbortController
    emit: Callable[[PageEvent], None]
    interactive: bool = False
    runs_dir: str | None = None
    previous: PageAgentResult | None = None
    """The run this one follows up (its history starts with what that run did)."""
    pilot: Pilot | None = None
    """In a replay or a recipe's row: decides each step before the model is asked (see pilot.py)."""
    target: Callable[[Mapping[str, Any]], dict[str, Any] | None] = lambda args: None
    run_id: str = field(default_factory=new_run_id)
    steps: list[PageStep] = field(default_factory=list)
    history: list[PageStep | str] = field(default_factory=list)
    """What the model reads of the steps so far, with notes between them."""
    tools: dict[str, Tool] = field(default_factory=dict)
    """The actions this run offers (chosen once the start page is read)."""
    browser: BrowserSession | None = None
    start_read: Snapshot | Exception | None = None
    """Step 1's snapshot, read at the start to choose the tools by (page_read.py), until step 1 takes it."""
    trace_path: str | None = None
    calls: CallLog | None = None
    """The page's fetch and XHR calls, taken onto each step as it ends (None for a recipe's row: it learns none)."""

    def __post_init__(self) -> None:
        agent = self.agent
        if self.previous is not None and not self.history:
            self.history.append(earlier_run_note(self.previous))
        self.loops = LoopGuard.of(agent.profile)
        self.claims = ClaimCheck()
        self.redactor = Redactor(agent.secrets, lambda args: self.target(args), self.task)
        self.observer = Observer(task=self.redactor.scrub_text(self.task), offer_done=agent.output_spec is None)
        self.outcome = RunOutcome(agent.max_steps, agent.max_failures)
        self.data = RunData(self.redactor.scrub_text)
        self.recorder = Recorder(
            self.runs_dir, self.run_id, redact=self.redactor.scrub_text, screenshots=agent.screenshots
        )
        self.screenshots = StepScreenshots(self.put)
        self.budget = RunBudget(
            Budget(agent.max_cost, agent.max_tokens), prices_of(agent.model), agent.stream_options.max_tokens
        )

    @property
    def step(self) -> PageStep | None:
        """The step under way (the last one)."""
        return self.steps[-1] if self.steps else None

    def put(self, event: PageEvent) -> None:
        """Emit one page event: the run file records it, then the consumer gets it."""
        self.recorder.handle(event)
        self.emit(event)

    def offer(self, tools: dict[str, Tool]) -> None:
        """The run's actions are chosen: the guard and the observer read their facts from them."""
        self.tools = self.loops.tools = self.observer.tools = tools

    def spent(self) -> Usage:
        """What the run's model calls have used so far (their tokens, calls and cost)."""
        usage = Usage()
        for s in self.steps:
            usage.add(s.usage)
        return usage

    def result(self, duration: float) -> PageAgentResult:
        """The run as a result, as it stands."""
        usage = self.spent()
        agent = self.agent
        return PageAgentResult(
            task=self.task,
            steps=self.steps,
            usage=usage,
            model=f"{agent.model.provider}:{agent.model.id}",
            duration_s=duration,
            prompt_version=prompt_hash(agent.full_system_prompt),
            run_id=self.run_id,
            settings=map_strings(agent.settings(), self.redactor.scrub_text),
            system_prompt=agent.full_system_prompt,
            trace_path=self.trace_path,
            output=self.data.output,
            output_type=agent.output_spec.name if agent.output_spec is not None else "",
            tables=self.data.tables,
            follows=self.previous.run_id if self.previous is not None else "",
            **self.outcome.verdict(),
        )

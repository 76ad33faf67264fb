"""``PageAgent``: the public entry point of the page agent, and what it is configured with.

It holds the settings of a run (model, browser, limits, actions, prompt, approval policy) and puts the
browser's built-in actions together with custom tools in a stable order. Each ``run``/``stream`` call starts
a :class:`~.step.run.PageRun`, which drives the core loop; ``stream`` yields the loop's events plus step-level
events for views, and ``run`` returns a :class:`~.runs.result.PageAgentResult`.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from typing import Any, Generic, TypeAlias

from ..browser.session.browser_session import BrowserSession
from ..core.abort import AbortController, AbortSignal
from ..core.agent import AgentBusyError
from ..core.aio import events_of
from ..core.loop import AfterHook
from ..core.model import Model, StreamOptions
from ..core.tools import Deps, Tool
from .batch.map_runner import RowMaps
from .otel.settings import check_tracing
from .otel.switch import run_spans
from .prompt.offers import Calls
from .prompt.profiles import resolve_profile
from .prompt.toolset import offered_tools
from .runs.events import PageEvent, RunFinished
from .runs.result import PageAgentResult
from .safety.approval import Approver, PolicyFunction, PolicyName, check_policy
from .safety.budget import check_priced, checked_cost, checked_tokens
from .safety.domains import parse_domains
from .safety.secrets import SecretVault
from .step.pilot import Pilot
from .step.replay_pilot import Replays
from .step.run import PageRun
from .step.tool_context import ToolContext
from .step.typed_output import OutputSpec

AskUser: TypeAlias = Callable[[str, AbortSignal], Awaitable[str]]


class PageAgent(RowMaps, Replays, Generic[Deps]):
    """``PageAgent(model=..., browser=browser, max_steps=20)``; ``result = await agent.run("task")``.

    ``model``: a :class:`Model` or a ``provider:model`` name (default ``NOTEBOOK_AGENT_MODEL``). ``browser``: a started
    :class:`BrowserSession`; when omitted the agent starts a headless one per run. ``own_tab``: each run acts in a new
    tab of ``browser`` (same cookies), so runs of several agents sharing one browser never touch each other's pages; the
    tab is closed when the run ends. ``custom_tools``: ``{name: tool}`` adds or overrides an action, ``{name: None}``
    removes one. ``approval``: ``auto`` (default), ``ask-risky``, ``ask-all``, ``deny-risky`` or a function of an
    :class:`~.safety.approval.ApprovalRequest`; ``approver`` answers the ``ask`` cases (no approver: asks are denied).
    ``secrets``: ``{name: value}`` (used on ``allowed_domains``) or ``{"https://site": {name: value}}``; the model types
    ``<secret>name</secret>`` and never sees the value (see :mod:`.safety.secrets`). ``allowed_domains`` /
    ``blocked_domains``: where navigation may go (``github.com``, ``*.github.com``, ``http://127.0.0.1:8000``); a
    navigation elsewhere is refused and the page stays where it was. ``runs_dir``: write each run there as it happens
    (see :class:`~.runs.run_file.RunWriter`). ``output``: the answer's type: a pydantic model, a ``TypedDict``, a
    dataclass, ``list[...]`` of one, or a JSON Schema dict. ``done`` then carries the answer in that shape (checked; a
    wrong one is sent back to the model) and ``result.output`` is the instance (``result.to_pandas()`` for a list). See
    :mod:`.step.typed_output`. ``profile``: ``auto`` (``small`` for a model on this machine), ``default`` or ``small``;
    see :mod:`.prompt.profiles`. ``trace``: record a Playwright trace of each run, one group per step, at
    ``<runs_dir>/<run_id>/trace.zip`` (a temporary folder without ``runs_dir``), given as ``result.trace_path``. Tracing
    is per browser context, so a run refuses to start while another run is tracing the context it shares (see
    :mod:`notebook_agent.browser.session.tracing`); and it is refused with ``secrets`` (its pictures are not masked).
    ``max_cost`` (dollars) and ``max_tokens``: a run's budget; the run stops before a model call that would cross
    it, or at most one step after, with status ``budget`` (see :mod:`.safety.budget`); in a map each row's.
    ``tracing``: send each run (and replay, and map) as an OpenTelemetry trace over OTLP: ``None`` (default) when the
    ``OTEL_EXPORTER_OTLP_*ENDPOINT`` settings name an endpoint, ``True`` always, ``False`` never (see
    :mod:`.otel.settings`; ``pip install "notebook-agent[otel]"``).
    """

    def __init__(
        self,
        model: Model | str | None = None,
        browser: BrowserSession | None = None,
        *,
        own_tab: bool = False,
        max_steps: int = 20,
        max_failures: int = 3,
        custom_tools: Mapping[str, Tool[ToolContext[Deps]] | None] | None = None,
        on_ask_user: AskUser | None = None,
        enable_javascript: bool = False,
        system_prompt: str | None = None,
        instructions: str | None = None,
        approval: PolicyName | PolicyFunction = "auto",
        approver: Approver | None = None,
        approval_timeout: float = 300.0,
        start_url: str | None = None,
        vision: bool = False,
        screenshots: bool = True,
        full_page: bool = False,
        after_tool_call: AfterHook | None = None,
        stream_options: StreamOptions | None = None,
        secrets: Mapping[str, Any] | None = None,
        allowed_domains: Sequence[str] | str | None = None,
        blocked_domains: Sequence[str] | str | None = None,
        allow_javascript_with_secrets: bool = False,
        runs_dir: str | None = None,
        trace: bool = False,
        tracing: bool | None = None,
        output: Any = None,
        profile: str = "auto",
        deps: Deps = None,  # type: ignore[assignment]
        max_cost: float | None = None,
        max_tokens: int | None = None,
    ) -> None:
        if max_steps < 1:
            raise ValueError("max_steps must be at least 1")
        self.max_cost = checked_cost(max_cost)
        self.max_tokens = checked_tokens(max_tokens)
        self.allowed_domains = parse_domains(allowed_domains, option="allowed_domains")
        self.blocked_domains = parse_domains(blocked_domains)
        self.secrets = SecretVault(secrets or {}, default_domains=self.allowed_domains)
        self.secrets.check_settings(
            allowed_domains=self.allowed_domains,
            javascript=enable_javascript,
            allow_javascript=allow_javascript_with_secrets,
            trace=trace,
        )
        check_tracing(tracing)
        self.output_spec = OutputSpec(output) if output is not None else None
        self.model = _resolve_model(model)
        check_priced(self.model, self.max_cost)
        self.browser = browser
        self.own_tab = own_tab
        self.max_steps = max_steps
        self.max_failures = max_failures
        self.custom_tools: dict[str, Tool[Any] | None] = dict(custom_tools or {})
        self.deps = deps
        """Given to every tool as ``ctx.deps`` (a tool declaring ``ctx: ToolContext[Shop]`` reads it typed)."""
        self.on_ask_user = on_ask_user
        self.enable_javascript = enable_javascript
        self.profile = resolve_profile(profile, self.model)
        self.system_prompt = system_prompt if system_prompt is not None else self.profile.system_prompt()
        self.instructions = instructions
        self.approval = check_policy(approval)
        self.approver = approver
        self.approval_timeout = approval_timeout
        self.start_url = start_url
        self.vision = vision
        self.screenshots = screenshots
        self.full_page = full_page
        self.trace = trace
        self.tracing = tracing
        """Send runs as OpenTelemetry traces: None follows the ``OTEL_*`` settings (agent/otel/settings.py)."""
        self.after_tool_call = after_tool_call
        self.stream_options = stream_options or StreamOptions()
        self.runs_dir = runs_dir
        self._controller: AbortController | None = None
        self.last_result: PageAgentResult | None = None

    # -- public -------------------------------------------------------------------------------------------
    @property
    def full_system_prompt(self) -> str:
        """The system prompt as sent: the profile's (or ``system_prompt=``), ``instructions=``, and the secrets."""
        text = self.system_prompt
        if self.instructions:
            text = f"{text.rstrip()}\n\nAdditional instructions:\n{self.instructions.strip()}\n"
        note = self.secrets.prompt_note()
        return f"{text.rstrip()}\n\n{note}" if note else text

    @property
    def output(self) -> Any:
        """The answer's type given as ``output=`` (None: the answer is text)."""
        return self.output_spec.type if self.output_spec is not None else None

    @property
    def is_running(self) -> bool:
        return self._controller is not None

    def stop(self, reason: str = "Stopped by the user") -> None:
        """Abort the running run or map (safe from any thread)."""
        if self._controller is not None:
            self._controller.abort(reason)

    def copy(self, **changes: Any) -> PageAgent[Deps]:
        """A copy of this agent with ``changes`` to its settings (``model=``, ``browser=``, ``start_url=``,
        ``own_tab=``, ``max_steps=``, ``output=`` ...) and a run state of its own (no run under way, no last
        result): how a map gives each row its agent, a pilot its agent and a worker the settings that travel.
        An unknown setting is a TypeError naming it."""
        clone = copy.copy(self)
        clone._controller, clone.last_result = None, None
        if "output" in changes:
            output = changes.pop("output")
            clone.output_spec = output if output is None or isinstance(output, OutputSpec) else OutputSpec(output)
        for name, value in changes.items():
            if name.startswith("_") or name not in vars(self):
                raise TypeError(f"PageAgent.copy() got {name!r}, which is not one of the agent's settings")
            setattr(clone, name, value)
        return clone

    @contextlib.contextmanager
    def held_by(self, controller: AbortController) -> Iterator[None]:
        """Hold this agent for work under ``controller`` (a run, a map) for the block: ``stop()`` aborts it, and
        another run or map on this agent is refused (:class:`~notebook_agent.core.agent.AgentBusyError`)."""
        if self._controller is not None:
            raise AgentBusyError("A run or map is already active on this agent; wait for it or call stop().")
        self._controller = controller
        try:
            yield
        finally:
            if self._controller is controller:
                self._controller = None

    async def run(self, task: str) -> PageAgentResult:
        result: PageAgentResult | None = None
        async for event in self.stream(task):
            if isinstance(event, RunFinished):
                result = event.result
        assert result is not None
        return result

    async def follow_up(self, task: str, *, previous: PageAgentResult | None = None) -> PageAgentResult:
        """A new instruction for the run that just finished (or ``previous``): the model is told the earlier
        request, what it did and how it ended, and acts on the page that run left (the same tab when the agent
        acts in a given browser's tab; otherwise a new tab opened at that run's last page)."""
        earlier = previous if previous is not None else self.last_result
        if earlier is None:
            raise ValueError("There is no earlier run to follow up: run a task first (or pass previous=result).")
        result: PageAgentResult | None = None
        async for event in self.stream(task, continue_from=earlier):
            if isinstance(event, RunFinished):
                result = event.result
        assert result is not None
        return result

    def run_sync(self, task: str) -> PageAgentResult:
        """``run`` for plain scripts. Inside a running event loop (Jupyter) it refuses: use ``%%agent`` or
        ``await agent.run(...)`` there (patching the loop with nest_asyncio loses widget clicks)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.run(task))
        raise RuntimeError(
            "run_sync() cannot run inside a running event loop (a Jupyter kernel has one). "
            "Use `result = await agent.run(task)` or a %%agent cell instead."
        )

    def tools(
        self, browser: BrowserSession, task: str | None = None, *, data: bool | None = None, page: Calls = frozenset()
    ) -> dict[str, Tool]:
        """The actions this agent offers on ``browser`` (:mod:`.prompt.toolset`; ``data``, ``page``:
        :mod:`.prompt.offers`)."""
        return offered_tools(
            browser,
            profile=self.profile,
            custom_tools=self.custom_tools,
            on_ask_user=self.on_ask_user,
            enable_javascript=self.enable_javascript,
            structured_output=bool(self.output),
            secrets=self.secrets,
            task=task,
            data=data,
            page=page,
        )

    async def stream(
        self,
        task: str,
        *,
        browser: BrowserSession | None = None,
        interactive: bool = False,
        runs_dir: str | None = None,
        continue_from: PageAgentResult | None = None,
        pilot: Pilot | None = None,
    ) -> AsyncIterator[PageEvent]:
        """Run ``task`` and yield its page events (:mod:`.runs.events`) as they happen. Leaving early stops the run.

        For this run only: ``browser`` acts in that session instead of the agent's; ``interactive`` says the
        consumer answers ``ApprovalRequested`` events (``event.approval.approve()`` / ``.deny(reason)``), so a
        question waits for it (up to ``approval_timeout``) instead of being denied when there is no
        ``approver``; ``runs_dir`` writes the run file there when the agent has no ``runs_dir`` of its own."""
        if not task or not task.strip():
            raise ValueError("The task is empty: say what the agent should do.")
        check_priced(self.model, self.max_cost)  # a copy may run another model (a map's row, a replay's healer)
        controller = AbortController()

        async def work(put: Callable[[PageEvent], None]) -> None:
            # tracing is one more consumer of the page events (None when off: no OpenTelemetry module is imported)
            follows = continue_from.run_id if continue_from is not None else ""
            spans = run_spans(self.tracing, self.model, kind=_kind(pilot, follows), follows=follows)
            run = PageRun(
                self,
                task.strip(),
                controller,
                spans.consumer(put) if spans is not None else put,
                browser=browser if browser is not None else self.browser,
                interactive=interactive,
                runs_dir=self.runs_dir or runs_dir,
                previous=continue_from,
                pilot=pilot,
            )
            with spans.around(run.state.redactor, task) if spans is not None else contextlib.nullcontext():
                await run.execute()

        with self.held_by(controller):
            async for event in events_of(work, controller):
                yield event

    def settings(self) -> dict[str, Any]:
        """The knobs of this agent, recorded with every run so runs can be compared and repeated."""
        return {
            "profile": self.profile.name,
            "max_steps": self.max_steps,
            "max_failures": self.max_failures,
            "max_cost": self.max_cost,
            "max_tokens": self.max_tokens,
            "approval": self.approval if isinstance(self.approval, str) else "custom",
            "vision": self.vision,
            "full_page": self.full_page,
            "trace": self.trace,
            "enable_javascript": self.enable_javascript,
            "ask_user": self.on_ask_user is not None,
            "custom_tools": sorted(self.custom_tools),
            "start_url": self.start_url,
            "allowed_domains": [d.text for d in self.allowed_domains],
            "blocked_domains": [d.text for d in self.blocked_domains],
            "secrets": sorted(self.secrets.names) if self.secrets else [],
            "output": self.output_spec.name if self.output_spec is not None else None,
        }


def _kind(pilot: Pilot | None, follows: str) -> str:
    """What a trace calls a run: ``replay`` or ``recipe`` (by its pilot), ``follow_up`` or ``run``."""
    if pilot is not None:
        return type(pilot).__name__.removesuffix("Pilot").lower() or "piloted"
    return "follow_up" if follows else "run"


def _resolve_model(model: Model | str | None) -> Model:
    if model is None or isinstance(model, str):
        from ..llm import get_model

        return get_model(model)
    return model

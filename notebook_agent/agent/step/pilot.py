"""The one seam of a run that is not driven by the model alone: a :class:`Pilot` decides each step's action.

Three things decide a step: the model (no pilot), a recorded run (:class:`~.replay_pilot.ReplayPilot`: the same actions
again) and a recipe with a row's parameters (:class:`~notebook_agent.agent.recipes.recipe_pilot.RecipePilot`: the
recorded actions with new values). A pilot is asked after the page was read and before the model would be; it either
names the step's call (no model call, no tokens) or leaves the step to the model with a note saying what the step meant
to do (healing). Whatever it decides, the action then goes through everything a model's action goes through: the
approval gate, allowed domains, secrets and the run file, because it is still a step of a :class:`~.run.PageRun`.

:func:`piloted_agent` is the one place that makes an agent follow a pilot; ``agent.replay``, ``%agent replay``
(through :func:`.replay_pilot.replaying`) and the recipe's rows all use it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol, Self, TypeVar, runtime_checkable

from ...browser.session.targets import target_of
from ...core.model import Context, Model, StreamEvent, StreamOptions
from ...llm.pricing import Prices, prices_of
from ...llm.scripted import ScriptedModel

if TYPE_CHECKING:
    from ...browser.session.browser_session import BrowserSession
    from ...core.abort import AbortController
    from ...core.tools import Tool
    from ..runs.events import PageEvent
    from ..runs.result import PageAgentResult, PageStep
    from ..safety.secrets import SecretVault
    from .typed_output import OutputSpec

#: Room a piloted run keeps beyond its recorded steps, for steps the model heals.
HEAL_ROOM = 5


@runtime_checkable
class Pilot(Protocol):
    """What decides each step of a piloted run (see the module docstring)."""

    decision: Any
    """The decision of the step being taken (``.call``: the call to make, or None: the model decides),
    consumed by the run's model (:class:`PilotModel`)."""
    chosen: bool
    """The start URL was chosen by the user (``url=``), not taken from the recording: a recorded start is judged
    by the gate as the model's ``go_to_url`` would be."""
    stopped: str | None
    """Why the run was stopped by the pilot (a step it could not take and was not allowed to heal), or None."""

    @property
    def start_url(self) -> str | None:
        """Where the piloted run starts (the recorded start, moved to the replay's site)."""
        ...

    @property
    def steps(self) -> Sequence[object]:
        """The steps the pilot will take (their number sizes the run's step limit)."""
        ...

    def needs_page(self) -> bool:
        """Whether deciding the next step reads the page. A recorded navigation does not (its URL is the
        recording's, with the row's values), so the run takes no snapshot before it: a replayed row then costs
        what a hand-written script costs. Finding an element, checking the page's path or reading an answer
        does; and a step the pilot leaves to the model is read in full whatever this said."""
        ...

    async def prepare(self, browser: BrowserSession, step: PageStep, page_text: str = "") -> str | None:
        """Decide ``step`` now that the page is read (``page_text``: what the model would read, secrets
        scrubbed). Returns a note for the model when the step goes to it; marks ``step.replay``."""
        ...

    def known_target(self, index: Any) -> dict[str, Any] | None:
        """The recorded fingerprint of element ``index`` when this step found it exactly as recorded."""
        ...


class PilotModel:
    """The model of a piloted run: the pilot's call (no tokens), or the healing model for a step left to it."""

    def __init__(self, pilot: Pilot, healer: Model) -> None:
        self.pilot = pilot
        self.healer = healer
        self.provider = "replay"
        self.id = f"{healer.provider}:{healer.id}"
        self.api = "replay"

    @property
    def prices(self) -> Prices | None:
        """The healing model's prices: a replayed step costs nothing, a healed one what the healer charges."""
        return prices_of(self.healer)

    async def stream(self, context: Context, options: StreamOptions) -> AsyncIterator[StreamEvent]:
        decision = self.pilot.decision
        self.pilot.decision = None
        if decision is not None and decision.call is not None:
            scripted = ScriptedModel([decision.call], id=self.id, provider="replay", chunk=1 << 20, prices={})
            async for event in scripted.stream(context, options):
                yield event
            return
        async for event in self.healer.stream(context, options):
            yield event


class Runner(Protocol):
    """What the engines that run an agent for others (a map's rows, a replay, a recipe's rows) use of it:
    ``PageAgent`` is one. They copy it with changes (:meth:`copy`), hold it while they work (:meth:`held_by`, so
    ``stop()`` reaches them) and stream its runs; they never reach into it."""

    model: Model
    browser: BrowserSession | None
    start_url: str | None
    max_steps: int
    max_cost: float | None
    max_tokens: int | None
    trace: bool
    tracing: bool | None
    output_spec: OutputSpec | None
    secrets: SecretVault
    custom_tools: dict[str, Tool | None]
    runs_dir: str | None
    last_result: PageAgentResult | None

    @property
    def full_system_prompt(self) -> str: ...

    def copy(self, **changes: Any) -> Self: ...

    def held_by(self, controller: AbortController) -> AbstractContextManager[None]: ...

    def stop(self, reason: str = ...) -> None: ...

    def stream(
        self,
        task: str,
        *,
        browser: BrowserSession | None = None,
        interactive: bool = False,
        runs_dir: str | None = None,
        continue_from: PageAgentResult | None = None,
        pilot: Pilot | None = None,
    ) -> AsyncIterator[PageEvent]: ...


R = TypeVar("R", bound=Runner)


def piloted_agent(agent: R, pilot: Pilot) -> R:
    """A copy of ``agent`` that follows ``pilot``: its model answers from the pilot (the agent's own model
    heals), it starts where the pilot starts, and it has room for every step of the pilot plus a few healed
    ones. Its runs still need ``pilot=`` passed to ``stream`` (the run asks it each step)."""
    healer = agent.model.healer if isinstance(agent.model, PilotModel) else agent.model
    steps = max(agent.max_steps, len(pilot.steps) + HEAL_ROOM)
    return agent.copy(model=PilotModel(pilot, healer), start_url=pilot.start_url, max_steps=steps)


async def read_ahead(
    browser: BrowserSession, pilot: Pilot | None, index: Any
) -> asyncio.Future[dict[str, Any] | None] | None:
    """What an action on element ``index`` acts on, read while the previous picture finishes and the gate judges
    (both before the action changes the page), not after them: the element itself, found for the action
    (browser/page/prefetch.py), and its fingerprint for replay, being read (a replay's recorded one when it has it;
    the run keeps it only when the action goes ahead)."""
    if not isinstance(index, int):
        return None
    await browser.prefetch(index)
    known = pilot.known_target(index) if pilot is not None else None
    return asyncio.ensure_future(_known(known) if known else browser.call(target_of, browser, index))


async def _known(target: dict[str, Any]) -> dict[str, Any]:
    """A target already known (a replay's recorded one), in the shape of a fresh read."""
    return target

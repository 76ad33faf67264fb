"""Record once, replay free: a saved run's actions again, with no model call, finding each element by what it
was, and asking the model only for the steps that cannot be replayed as they are (healing).

A replay is an ordinary page-agent run whose "model" is a :class:`~.pilot.PilotModel`: each step, after the page
was read, the :class:`ReplayPilot` takes the next recorded action; an action on an element (``facts.on_element``)
finds that element again by its recorded fingerprint (browser/session/targets.py) and uses its index in the
current state. The action then goes through everything a model's action goes through (the approval gate,
allowed domains, secrets filled in from their placeholders, the run file). When the element cannot be found with
confidence, or the page is not the one the step saw (for an action replayed on its page: ``facts.replay``), that
step alone goes to the model, told what the recorded step meant to do (``heal``); the run records what the model
did, fingerprints included, so replaying *that* run is free again. Without ``heal`` the replay stops there and
says why.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlsplit

from ...browser.actions import action_facts
from ...browser.session.browser_session import BrowserSession
from ...browser.session.targets import find_target
from ...core.action_facts import ActionFacts
from ...core.model import Model
from ...core.tools import Tool
from ...llm.scripted import ScriptedCall, ScriptedModel
from ..prompt.agent_output import MACRO_NAME
from ..runs.events import PageEvent, RunFinished
from ..runs.result import PageAgentResult, PageStep
from ..runs.run_file import open_run
from ..safety.secrets import PLACEHOLDER
from .pilot import R, Runner, piloted_agent

#: How a run file keeps text typed into a sensitive field (see secrets.Redactor): the value itself is gone.
REDACTED = re.compile(r"\[redacted: \d+ characters\]")

#: What to do when a recording's start URL is refused (a run file is input: it does not choose the site).
REPLAY_HINT = (
    "A run file does not choose the site a replay opens: give the site with replay(url=...) (--url), or allow "
    "it with allowed_domains"
)


def origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else ""


def rebase(value: Any, old: str, new: str) -> Any:
    """``value`` with URLs on ``old`` (an origin) moved to ``new`` (a base URL), in strings and inside dicts."""
    if not old or not new or old == new.rstrip("/"):
        return value
    if isinstance(value, str):
        return new.rstrip("/") + value[len(old) :] if value.startswith(old) else value
    if isinstance(value, dict):
        return {k: rebase(v, old, new) for k, v in value.items()}
    return value


def replayable(recorded: PageAgentResult) -> list[PageStep]:
    """The recorded steps a replay repeats: those whose action ran (no unusable outputs, no refused actions)."""
    return [s for s in recorded.steps if s.action and not s.is_error]


def _describe(target: dict[str, Any] | None) -> str:
    """``the button 'Create account'``: how a person would name the recorded element."""
    if not target:
        return "an element"
    kind = str(target.get("role") or target.get("tag") or "element")
    name = str(target.get("name") or target.get("text") or target.get("label") or "")[:80]
    return f"the {kind} '{name}'" if name else f"the {kind}"


@dataclass
class Decision:
    call: ScriptedCall | None
    """The recorded call to replay now, or None: this step goes to the model (or stops the replay)."""
    note: str = ""


class ReplayStep(Protocol):
    """What a replay reads of a recorded step: a run's :class:`~notebook_agent.agent.runs.result.PageStep`, or a
    recipe's step filled with a row's values (agent/recipes/recipe.py ``RecipeStep``)."""

    @property
    def index(self) -> int: ...
    @property
    def action(self) -> str | None: ...
    @property
    def args(self) -> dict[str, Any]: ...
    @property
    def target(self) -> dict[str, Any] | None: ...
    @property
    def url(self) -> str: ...
    @property
    def next_goal(self) -> str: ...
    @property
    def evaluation_previous_goal(self) -> str: ...
    @property
    def memory(self) -> str: ...


class ReplayPilot:
    """Walks recorded steps one by one, deciding before each model call what the step is.

    ``steps``: the steps to replay (:meth:`of_run` takes a run's, :func:`replayable`); ``recorded_start``: the
    page the recording started on (else its first step's page). ``url``: replay on another base URL; ``start``:
    the page to start on (a map row's); ``typed``: the replaying agent takes a typed answer; ``secrets``: the
    names of its secrets; ``tools``: its custom tools (what a step's action is, its facts, is theirs when they
    have it)."""

    def __init__(
        self,
        steps: Sequence[ReplayStep],
        *,
        recorded_start: str | None = None,
        heal: bool = True,
        url: str | None = None,
        start: str | None = None,
        typed: bool = False,
        secrets: Iterable[str] = (),
        tools: Mapping[str, Tool | None] | None = None,
    ) -> None:
        self.tools = dict(tools or {})
        self.secrets = set(secrets)
        """The names of the secrets the replaying agent has (a placeholder of another cannot be typed)."""
        self.typed = typed
        """Whether the replaying agent takes a typed answer (else a recorded ``done`` keeps only text and success)."""
        self.steps = list(steps)
        self.heal = heal
        self.recorded_start = recorded_start or None
        first = str(self.recorded_start or next((s.url for s in self.steps if s.url), ""))
        self.old_origin = origin(first)
        self.start = start
        """The page to start on (a map's start page for the row), else the recorded start: the recording's other
        URLs move to its site (``start``'s origin) unless ``url`` names the base URL."""
        self.new_base = url.rstrip("/") if url else origin(start) if start else ""
        self.chosen = bool(url or start)
        """The user named the site to replay on (``url=``, a start page): its start URL is theirs, not the
        recording's."""
        self.current: tuple[PageStep, ReplayStep] | None = None
        """(this run's step, the recorded step it replays) for the latest replayed step: the result of the first
        says whether it worked."""
        self.position = 0
        self.decision: Decision | None = None
        self.known: tuple[int, dict[str, Any]] | None = None
        """(index, fingerprint) of this step's element when it was found exactly as recorded: its fingerprint
        need not be taken again (it is what the page has, locator included)."""
        self.stopped: str | None = None
        """Why a replay without healing stopped (the ``done`` it ends with says so)."""

    @classmethod
    def of_run(cls, recorded: PageAgentResult, **options: Any) -> ReplayPilot:
        """A pilot replaying the steps of ``recorded`` that ran (``options``: as the constructor's)."""
        start = recorded.settings.get("start_url")
        return cls(replayable(recorded), recorded_start=start if isinstance(start, str) else None, **options)

    @property
    def start_url(self) -> str | None:
        start = self.start or self.recorded_start
        return rebase(start, self.old_origin, self.new_base) if isinstance(start, str) and start else None

    def url(self, value: str) -> str:
        return str(rebase(value, self.old_origin, self.new_base))

    def needs_page(self) -> bool:
        """See :meth:`.pilot.Pilot.needs_page`: only a recorded ``go_to_url`` is decided without the page (the
        allowed domains and the gate still judge where it goes)."""
        return self.position >= len(self.steps) or self.facts(self.steps[self.position]).replay != "unread"

    def facts(self, step: ReplayStep) -> ActionFacts:
        """What the recorded step's action is (its replay, its element)."""
        return action_facts(step.action or "", self.tools)

    async def prepare(self, browser: BrowserSession, step: PageStep, page_text: str = "") -> str | None:
        """Decide step ``step`` (the page has just been read). Returns a note for the model when the step goes
        to it; marks ``step.replay``. (``page_text`` is for pilots that read the page: see pilot.py.)"""
        if self.position >= len(self.steps):
            self.decision = Decision(None, "The recorded run has no steps left; finish the task from here.")
            step.replay = "healed"
            if not self.heal:
                self._stop(step, "the end of the recorded run")
                return None
            return self.decision.note
        if not self.heal and self.current is not None and self.current[0].is_error:  # its action failed
            ran, was = self.current
            self._stop(step, f"step {was.index}: its action failed ({' '.join(ran.result.split())[:300]})")
            return None
        recorded = self.steps[self.position]
        self.position += 1
        self.current = (step, recorded)
        self.known = None
        args = {k: self.url(v) if isinstance(v, str) else v for k, v in recorded.args.items()}
        facts = self.facts(recorded)
        if facts.finishes and not self.typed:
            args = {k: v for k, v in args.items() if k in ("text", "success")}
        problem = self._wrong_page(browser, recorded) or self._untypeable(args)
        if problem is None and facts.on_element and args.get("index") is not None:
            if not recorded.target:
                problem = "the recorded step kept no fingerprint of its element"
            else:
                found = await browser.call(find_target, browser, self._moved(recorded.target))
                if found.index is None:
                    problem = f"{_describe(recorded.target)} was not found with confidence: {found.why_not.rstrip('.')}"
                else:
                    args["index"] = found.index
                    if found.how == "locator" and found.confidence >= 1.0:  # the very element: its record stands
                        self.known = (found.index, self._moved(recorded.target))
        if problem is None:
            self.decision = Decision(
                ScriptedCall(
                    MACRO_NAME,
                    {
                        "evaluation_previous_goal": recorded.evaluation_previous_goal,
                        "memory": recorded.memory,
                        "next_goal": recorded.next_goal,
                        "action": {recorded.action: args},
                    },
                )
            )
            step.replay = "replayed"
            return None
        action = f"{recorded.action} {json.dumps(args, ensure_ascii=False)} on {_describe(recorded.target)}"
        note = (
            f"This run replays a recorded run. Its step {recorded.index} could not be replayed as recorded: "
            f"{problem}. That step's goal was: {recorded.next_goal or '(not given)'}; it did {action}. Do what that "
            "step did, on this page, in one action; the replay then goes on with the next recorded step."
        )
        self.decision = Decision(None, note)
        step.replay = "healed"
        if not self.heal:
            self._stop(step, f"step {recorded.index}: {problem}")
            return None
        return note

    def _stop(self, step: PageStep, why: str) -> None:
        step.replay = "failed"
        self.stopped = f"The replay stopped at {why}. Replay with healing on to let the model redo that step."
        self.decision = Decision(
            ScriptedCall(
                MACRO_NAME,
                {
                    "evaluation_previous_goal": "The recorded step cannot be replayed here.",
                    "memory": "",
                    "next_goal": "Stop the replay.",
                    "action": {"done": {"text": self.stopped, "success": False}},
                },
            )
        )
        return None

    def known_target(self, index: Any) -> dict[str, Any] | None:
        """The recorded fingerprint of element ``index`` when this step found it exactly as recorded, else None."""
        return self.known[1] if self.known is not None and self.known[0] == index else None

    def _untypeable(self, args: dict[str, Any]) -> str | None:
        """Why the recorded text cannot be typed again: text typed into a sensitive field is never saved (only
        how long it was), and a secret's placeholder needs that secret given to the replaying agent."""
        text = args.get("text")
        if not isinstance(text, str):
            return None
        if REDACTED.fullmatch(text):
            return (
                "it typed a value into a sensitive field, and such a value is never saved; give it as a secret "
                "(secrets=...) when you record, so a replay can type it from the vault"
            )
        missing = [n for n in PLACEHOLDER.findall(text) if n not in self.secrets]
        if missing:
            return f"it types the secret {missing[0]!r}, which this agent was not given (secrets=...)"
        return None

    def _moved(self, target: dict[str, Any]) -> dict[str, Any]:
        """A recorded fingerprint on the replay's site: a link's path moved under the new base's path."""
        prefix = urlsplit(self.new_base).path.rstrip("/") if self.new_base else ""
        href = target.get("href")
        if prefix and isinstance(href, str) and href.startswith("/") and not href.startswith(prefix + "/"):
            return {**target, "href": prefix + href}
        return target

    def _wrong_page(self, browser: BrowserSession, recorded: ReplayStep) -> str | None:
        """Why the current page is not the one the recorded step acted on (its path differs), or None."""
        if not recorded.url or self.facts(recorded).replay != "page":
            return None
        try:
            here = browser.page.url
        except Exception:
            return None
        expected = urlsplit(self.url(recorded.url))
        now = urlsplit(here)
        if (expected.netloc, expected.path) != (now.netloc, now.path):
            return f"the page is {here}, where the recorded step was on {self.url(recorded.url)}"
        return None


def replaying(agent: R, run: PageAgentResult, *, heal: bool = True, url: str | None = None) -> tuple[R, ReplayPilot]:
    """``(agent copy, pilot)`` replaying the recorded ``run`` (a ``PageAgentResult``) with ``agent``'s model to
    heal: the one place a replay is set up (``agent.replay``, ``%agent replay``, the terminal's ``replay``). The
    pilot knows the agent's secrets (a placeholder of another cannot be typed) and whether it takes a typed
    answer. A run with no action that ran is refused here, with the reason."""
    pilot = ReplayPilot.of_run(
        run,
        heal=heal,
        url=url,
        typed=agent.output_spec is not None,
        secrets=agent.secrets.names,
        tools=agent.custom_tools,
    )
    if not pilot.steps:
        raise ValueError(f"Run {run.run_id or run.task!r} has no action that ran, so there is nothing to replay.")
    return piloted_agent(agent, pilot), pilot


def replay_model(run: PageAgentResult) -> Model:
    """A model that answers with ``run``'s recorded outputs, in order (no API key needed): the model's side of a
    run again, for comparing prompts on the same decisions (``--model replay:RUN``). Unlike a replay, nothing
    checks the page: the outputs are sent as they were."""
    return ScriptedModel.from_messages([s.output for s in run.steps if s.output is not None], id=f"replay:{run.model}")


class Replays:
    """``agent.replay``: the agent's own API for doing a saved run again (``PageAgent`` inherits it), set up by
    :func:`replaying` with the agent as a :class:`~.pilot.Runner`."""

    last_result: PageAgentResult | None

    async def replay(
        self: Runner,
        run: PageAgentResult | str,
        *,
        heal: bool = True,
        url: str | None = None,
        runs_dir: str | None = None,
        on_event: Callable[[PageEvent], Any] | None = None,
    ) -> PageAgentResult:
        """Run a saved run's actions again with no model call (see this module's doc). ``run``: a
        result, a run file, or a reference into ``runs_dir`` (a position or the start of a run id, as ``%agent
        compare``). Each element is found by what it was; a step that cannot be replayed goes to this agent's
        model (``heal``) or stops the replay with the reason (``heal=False``). ``url`` replays against another
        base URL (the same site on another host or port). The approval gate, allowed domains and secrets apply
        as to any run; the replay is recorded like any run, so replaying it is free again. ``on_event`` gets
        each page event as it happens (a view)."""
        recorded = open_run(run, runs_dir or self.runs_dir)
        clone, pilot = replaying(self, recorded, heal=heal, url=url)
        result: PageAgentResult | None = None
        async for event in clone.stream(recorded.task, pilot=pilot, runs_dir=runs_dir):
            if on_event is not None:
                on_event(event)
            if isinstance(event, RunFinished):
                result = event.result
        assert result is not None
        self.last_result = result
        return result

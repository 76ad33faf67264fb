"""Prompt profiles: the system prompt, the actions offered and how they are described, chosen for the model.

A frontier model reads the default prompt and its actions (hover, tabs and sideways scrolling only where the
request or the start page calls for them: each action offered is read at every step) and picks well. A 0.5–3B
model on a laptop does better with less to read and less to choose from: the ``small`` profile offers the nine
actions that most tasks need (a dropdown, a key, a scroll and a way back included; hover, sideways scrolling,
tabs and JavaScript left out unless asked for; opening a URL only when the request names an address),
describes each in a few words, and shows a worked example in the prompt (a step in the middle of a task, then
done), so the model sees the output's shape instead of inferring it from a schema.

``profile="auto"`` (the default) picks ``small`` for a model on a local server (``local:``, ``hf:``,
``ollama:``, or any OpenAI-compatible endpoint on this machine) and ``default`` otherwise. A profile is a
starting point, not a cage: ``system_prompt=`` and ``instructions=`` still replace or extend its prompt, custom
tools are always offered, and ``enable_javascript=True`` or ``on_ask_user=`` add their actions back.
``benchmarks/local_model.py --profiles default,small`` compares them on the same tasks with ``evaluate``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, TypeVar

from ...browser.actions import builtin_actions
from ...core.action_facts import ActionFacts, facts_of
from ...llm.providers.chat_servers import detect_server

PROFILE_NAMES = ("auto", "default", "small")

T = TypeVar("T")


@dataclass(frozen=True)
class Profile:
    """What a profile changes: the prompt file, whether actions are described by their few words (and only those
    that have them are offered), and the loop guard's rules. What it offers of each action, and in which
    words, is the action's own (``facts``: ``small``, ``on_request_in``, ``asked_by``, ``opt_in``, ``data``)."""

    name: str
    prompt_file: str
    brief: bool = False
    """Describe each action in its few words (``facts.small``), and offer only the actions that have them (besides
    custom tools, and the actions switched on or called for: ``opt_in``, ``data``)."""
    parameters: dict[str, Any] = field(default_factory=dict)
    """Actions offered with other parameter models: the same fields and checks, fewer words (a field's
    description repeated every step where the action's own description already says it)."""
    guard_repeats: bool = False
    """Refuse once the move the run has just made, made again at once (agent/step/loop_guard.py): a 1.5B model,
    measured, clicked "Save" three times after it had worked instead of calling done."""
    guard_empty_fields: bool = False
    """Refuse once a click on an empty text field (agent/step/loop_guard.py): a 1.5B model, measured, clicked the
    password field again and again to "fill" it, and never typed."""
    guide: bool = False
    """After a rule that names fields to fill, the next step's decoding offers only typing into them (or
    done): a 1.5B model, measured, kept its thoughts and clicked elsewhere instead (agent/step/loop_guard.py)."""
    guard_goals: bool = False
    """Refuse once a click whose stated goal names an element the run already clicked, on another element
    (agent/step/loop_guard.py): a 1.5B model, measured on MiniWoB++, scored with "Submit", copied its goal
    "Click Submit" into the next step and clicked what had taken the button's place (START, a new episode)."""

    def system_prompt(self) -> str:
        """The profile's packaged system prompt (``agent/prompt/prompts/``)."""
        return resources.files(__package__).joinpath("prompts", self.prompt_file).read_text(encoding="utf-8")

    def keeps(self, facts: ActionFacts) -> bool:
        """Whether the profile offers an action with ``facts`` unless told otherwise."""
        return not self.brief or facts.opt_in or (facts.small is not None and not facts.data)

    def on_request(self, facts: ActionFacts) -> bool:
        """Whether the profile offers it only when the request or the start page calls for it."""
        return self.name in facts.on_request_in

    @property
    def actions(self) -> tuple[str, ...] | None:
        """The built-in actions it offers when nothing else is asked for (None: all of them)."""
        if not self.brief:
            return None
        return tuple(c.name for c in builtin_actions() if self.keeps(c.facts) and not c.facts.opt_in)

    def offer(
        self,
        tools: dict[str, T],
        *,
        keep: set[str],
        task: str | None = None,
        custom: set[str] | None = None,
        page: frozenset[str] = frozenset(),
    ) -> dict[str, T]:
        """``tools`` as this profile offers them: its actions (and those in ``keep``, such as custom tools) in
        their order, in its words (on copies: the session's tools are shared) except for ``custom`` tools (None:
        those in ``keep``). ``task``: the request, for a run that starts on a page (None: no start page, or not
        known); ``page``: the actions that start page calls for (offers.py)."""
        own = keep if custom is None else custom
        out: dict[str, T] = {}
        for name, tool in tools.items():
            facts = facts_of(tool)
            if name not in keep and not self.keeps(facts):
                continue
            called = task is None or name in page or asks_for(task, facts)
            if self.on_request(facts) and name not in keep and not called:
                continue
            if self.brief and facts.small is not None and name not in own:
                tool = copy.copy(tool)
                tool.description = facts.small  # type: ignore[attr-defined]
                if name in self.parameters:
                    tool.parameters = self.parameters[name]  # type: ignore[attr-defined]
            out[name] = tool
        return out


PROFILES: dict[str, Profile] = {
    "default": Profile("default", "system_prompt.md"),
    "small": Profile(
        "small",
        "system_prompt_small.md",
        brief=True,
        guard_repeats=True,
        guard_empty_fields=True,
        guide=True,
        guard_goals=True,
    ),
}


def asks_for(task: str, facts: ActionFacts) -> bool:
    """Whether a request calls for an action (its ``facts.asked_by``: ``go_to_url`` when it names an address,
    ``hover`` when it speaks of hovering, menus or tooltips, ...); an action that says nothing: always."""
    return facts.asked_by is None or facts.asked_by(task)


def is_local_model(model: object) -> bool:
    """Whether ``model`` runs on this machine: a managed llama-server, Ollama, or an OpenAI-compatible endpoint
    the package takes for a local server (a loopback or private address serving a model that is not an
    OpenAI model name: see ``llm.chat_servers.detect_server``)."""
    if getattr(model, "provider", "") in ("local", "ollama", "hf"):
        return True
    base_url = getattr(model, "base_url", None)
    if getattr(model, "api", "") != "openai-completions" or not base_url:
        return False
    return detect_server(str(base_url), str(getattr(model, "id", "") or "")) is not None


def resolve_profile(name: str, model: object) -> Profile:
    """The profile ``name`` means for ``model`` ("auto": small for a local model, else default)."""
    if name not in PROFILE_NAMES:
        raise ValueError(f"Unknown profile {name!r}: use one of {', '.join(PROFILE_NAMES)}.")
    if name == "auto":
        name = "small" if is_local_model(model) else "default"
    return PROFILES[name]

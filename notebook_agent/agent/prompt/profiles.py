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
import re
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, TypeVar

from ...llm.providers.chat_servers import detect_server

PROFILE_NAMES = ("auto", "default", "small")

T = TypeVar("T")

#: Actions a profile never drops when they were asked for (their switch is an explicit choice).
OPT_IN = ("execute_javascript", "ask_user")


@dataclass(frozen=True)
class Profile:
    """What a profile changes: the prompt file, the actions kept (None: all), shorter action descriptions."""

    name: str
    prompt_file: str
    actions: tuple[str, ...] | None = None
    descriptions: dict[str, str] = field(default_factory=dict)
    parameters: dict[str, Any] = field(default_factory=dict)
    """Actions offered with other parameter models: the same fields and checks, fewer words (a field's
    description repeated every step where the action's own description already says it)."""
    on_request: tuple[str, ...] = ()
    """Actions offered only when the request calls for them (:func:`asks_for`), or the run starts on no page.
    ``go_to_url`` when it names a web address: a 1.5B model, measured, opened addresses it made up (``/docs``,
    ``/account``: 404s) instead of clicking the link. Each action offered is read at every step, so one few
    tasks need (hovering, another tab, sideways scrolling) waits until a request asks for it."""
    repeat_caution: bool = False
    """Refuse once the move the run has just made, made again at once (agent/step/loop_guard.py): a 1.5B model,
    measured, clicked "Save" three times after it had worked instead of calling done."""
    field_caution: bool = False
    """Refuse once a click on an empty text field (agent/step/loop_guard.py): a 1.5B model, measured, clicked the
    password field again and again to "fill" it, and never typed."""
    guide: bool = False
    """After a caution that names fields to fill, the next step's decoding offers only typing into them (or
    done): a 1.5B model, measured, kept its thoughts and clicked elsewhere instead (agent/step/loop_guard.py)."""
    goal_caution: bool = False
    """Refuse once a click whose stated goal names an element the run already clicked, on another element
    (agent/step/loop_guard.py): a 1.5B model, measured on MiniWoB++, scored with "Submit", copied its goal
    "Click Submit" into the next step and clicked what had taken the button's place (START, a new episode)."""

    def system_prompt(self) -> str:
        """The profile's packaged system prompt (``agent/prompt/prompts/``)."""
        return resources.files(__package__).joinpath("prompts", self.prompt_file).read_text(encoding="utf-8")

    def keeps(self, action: str) -> bool:
        return self.actions is None or action in self.actions or action in OPT_IN

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
        their order, with its descriptions (on copies: the session's tools are shared) except for ``custom``
        tools (None: those in ``keep``). ``task``: the request, for a run that starts on a page (None: no start
        page, or not known); ``page``: the actions that start page calls for (offers.py)."""
        own = keep if custom is None else custom
        out: dict[str, T] = {}
        for name, tool in tools.items():
            if name not in keep and not self.keeps(name):
                continue
            called = task is None or name in page or asks_for(task, name)
            if name in self.on_request and name not in keep and not called:
                continue
            if name in self.descriptions and name not in own:
                tool = copy.copy(tool)
                tool.description = self.descriptions[name]  # type: ignore[attr-defined]
                if name in self.parameters:
                    tool.parameters = self.parameters[name]  # type: ignore[attr-defined]
            out[name] = tool
        return out


PROFILES: dict[str, Profile] = {
    "default": Profile("default", "system_prompt.md", on_request=("hover", "switch_tab", "scroll_horizontally")),
    "small": Profile(
        "small",
        "system_prompt_small.md",
        actions=(
            "done",
            "click_element_by_index",
            "input_text",
            "select_dropdown_option",
            "send_keys",
            "scroll",
            "go_back",
            "go_to_url",
            "wait",
        ),
        descriptions={
            "done": "Finish. text: the answer. success: true only if the whole task is done.",
            "click_element_by_index": "Click element [index].",
            "input_text": "Type text into field [index].",
            "select_dropdown_option": "Choose the option with this text in dropdown [index].",
            "send_keys": "Press keys (Enter, Tab, Escape, ArrowDown, Control+A; several: space between), on [index] "
            "if given.",
            "scroll": "Scroll the page down (or up).",
            "go_back": "Go back one page.",
            "go_to_url": "Open a URL.",
            "wait": "Wait for the page.",
            "ask_user": "Ask the user; returns the answer.",
            "execute_javascript": "Run JavaScript in the page; returns its result.",
            "extract_table": "Read a table by its name (table=T1) or the list at index as data; name it in done.",
        },
        on_request=("go_to_url",),
        repeat_caution=True,
        field_caution=True,
        guide=True,
        goal_caution=True,
    ),
}

_ADDRESS = re.compile(
    r"[a-z][a-z0-9+.-]*://|\bwww\.|\blocalhost\b|\b\d{1,3}(\.\d{1,3}){3}\b"
    r"|(?<![@\w.-])[a-z0-9-]+(\.[a-z0-9-]+)*\.[a-z]{2,}(?![\w@])",
    re.IGNORECASE,
)


_ASKED_BY = {
    "hover": re.compile(r"\b(hover\w*|mouse\s*over|tool-?tips?|menus?|drop-?downs?)\b", re.IGNORECASE),
    "switch_tab": re.compile(r"\b(tabs?|windows?|pop-?ups?)\b", re.IGNORECASE),
    "scroll_horizontally": re.compile(
        r"\b(horizontal\w*|sideways|scroll\w*\s+(to\s+the\s+)?(left|right)|carousels?|sliders?|wide)\b", re.IGNORECASE
    ),
}


def asks_for(task: str, action: str) -> bool:
    """Whether a request calls for an action offered on request: ``go_to_url`` when it names an address,
    ``hover`` when it speaks of hovering, menus or tooltips, ``switch_tab`` of tabs, windows or popups,
    ``scroll_horizontally`` of sideways scrolling, carousels or sliders. Any other action: always."""
    if action == "go_to_url":
        return names_an_address(task)
    pattern = _ASKED_BY.get(action)
    return pattern is None or pattern.search(task) is not None


def names_an_address(task: str) -> bool:
    """Whether a request names a web address (a URL, ``www.``, a domain, an IP, localhost); an e-mail address
    is not one."""
    return _ADDRESS.search(task) is not None


def is_local_model(model: Any) -> bool:
    """Whether ``model`` runs on this machine: a managed llama-server, Ollama, or an OpenAI-compatible endpoint
    the package takes for a local server (a loopback or private address serving a model that is not an
    OpenAI model name: see ``llm.chat_servers.detect_server``)."""
    if getattr(model, "provider", "") in ("local", "ollama", "hf"):
        return True
    base_url = getattr(model, "base_url", None)
    if getattr(model, "api", "") != "openai-completions" or not base_url:
        return False
    return detect_server(str(base_url), str(getattr(model, "id", "") or "")) is not None


def resolve_profile(name: str, model: Any) -> Profile:
    """The profile ``name`` means for ``model`` ("auto": small for a local model, else default)."""
    if name not in PROFILE_NAMES:
        raise ValueError(f"Unknown profile {name!r}: use one of {', '.join(PROFILE_NAMES)}.")
    if name == "auto":
        name = "small" if is_local_model(model) else "default"
    return PROFILES[name]

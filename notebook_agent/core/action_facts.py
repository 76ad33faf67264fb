"""What the rest of the agent knows about an action, declared on the action itself.

A run does more with an action than call it. The approval gate judges it (its ``risk``, on
:class:`~notebook_agent.core.tools.Tool`); the loop guard decides whether it may repeat; the prompt orders it,
and a profile describes it in a few words or offers it only when a request calls for it; a replay finds its
element again and checks the page before it; a recipe finds the row's values in its arguments; the Playwright
export writes it as statements. Each of those reads the action's :class:`ActionFacts` (``tool.facts``), never a
table of action names, so an action is first-class by declaring them on its class: a built-in action is its
class and one line in the registry (``notebook_agent.browser.actions.BUILTINS``), and a custom tool that
declares the same facts replays and exports like a built-in.

The Playwright statements are a function of one recorded call (:class:`ScriptCall`, given by
``notebook_agent.agent.runs.playwright_export``), so the action that knows what it did also says how a script
does it; it raises :class:`NotScriptable` for a call a script cannot repeat with confidence.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeAlias

from .errors import InputError

Replay: TypeAlias = Literal["page", "unread", "anywhere"]
"""How a recorded call is replayed. ``page``: on the page it was on (a replay and a script check that page's
path first; it acts on the page's elements, focus or scroll). ``unread``: without reading the page first, since
its arguments say everything (a navigation to a recorded URL). ``anywhere``: wherever the run is (waiting,
switching tabs, finishing)."""

Slot: TypeAlias = Literal["text", "option", "url"]
"""What an argument holds, for a recipe that puts a row's values into it: text typed, an option chosen, a URL
opened (a URL's slots are also found URL-encoded)."""


class NotScriptable(InputError):
    """Raised by an action's script for a recorded call that a Playwright script cannot do with confidence; the
    export writes the call as a comment and a ``raise`` saying why."""


class ScriptCall(Protocol):
    """One recorded call, as an action's :attr:`ActionFacts.script` writes it as Playwright statements. The
    statements use ``page`` (the script's current page), ``target`` (the call's element, found by its recorded
    fingerprint before the statements run: reading :attr:`target` asks for it) and the script's own helpers."""

    @property
    def args(self) -> Mapping[str, Any]:
        """The recorded arguments (hostile input: write them with :meth:`literal`)."""
        ...

    @property
    def result(self) -> str:
        """What the action answered when it ran."""
        ...

    @property
    def tag(self) -> str:
        """The tag of the element it acted on, as recorded ("" without one)."""
        ...

    @property
    def next_url(self) -> str:
        """The page the next recorded step was on ("" when none says)."""
        ...

    @property
    def aw(self) -> str:
        """``"await "`` in an async script, ``""`` in a sync one: put it before every Playwright call."""
        ...

    @property
    def with_(self) -> str:
        """``"async with"`` or ``"with"``."""
        ...

    @property
    def target(self) -> str:
        """The name of the call's element in the script; reading it makes the export find that element first
        (by its recorded locator, checked visible), or write the call as one it cannot do."""
        ...

    def literal(self, value: object) -> str:
        """A Python literal of a recorded string (any other value: of its text, or "")."""
        ...

    def typed(self, value: object) -> str:
        """The expression for text a call typed: a literal, each ``<secret>NAME</secret>`` read from the
        environment variable NAME."""
        ...

    def comment(self, value: object) -> str:
        """A recorded value as one line of a ``#`` comment."""
        ...

    def number(self, value: object, default: float, low: float, high: float) -> float:
        """A finite number between ``low`` and ``high`` (``default`` for anything else)."""
        ...


Script: TypeAlias = Callable[[ScriptCall], Sequence[str]]


@dataclass(frozen=True)
class ActionFacts:
    """The facts an action declares (``facts = ActionFacts(...)`` on its class); every default is what an
    action nobody described gets: it acts on the page, may not repeat, is offered after the built-ins and
    cannot be exported."""

    on_element: bool = False
    """Its ``index`` argument, when given, names an element of the page: the gate reads that element, a run keeps
    its fingerprint, a replay finds it again by that fingerprint, a script by its locator."""
    replay: Replay = "page"
    repeatable: bool = False
    """It may rightly be made again with nothing new on the page (waiting, scrolling, reading, finishing): the
    loop guard never refuses it."""
    quiet: bool = False
    """It leaves the page's text as it was (it moves the view, waits or finishes): text that shows up after it is
    not news about what it did."""
    finishes: bool = False
    """It ends the run with the answer (``done``): a replay keeps only what the replaying agent can take of its
    arguments, a recipe reads the answer there, a script prints it."""
    order: int = 1000
    """Its place in the list of actions the prompt shows (the list is stable, so a provider's prompt cache keeps
    it); custom tools come after the built-ins in the order given."""
    small: str | None = None
    """Its description in the small profile (agent/prompt/profiles.py), a few words; None: the small profile
    leaves it out unless it is switched on (:attr:`opt_in`) or is a custom tool."""
    opt_in: bool = False
    """It is offered only when switched on (``enable_javascript``, ``on_ask_user``), and then by every profile."""
    data: bool = False
    """It reads data off the page: offered only when the run calls for data (the request, the answer's type or
    the start page: agent/prompt/offers.py), and then by every profile."""
    on_request_in: frozenset[str] = frozenset()
    """The profiles that offer it only when the request or the start page calls for it (:attr:`asked_by`)."""
    asked_by: Callable[[str], bool] | None = None
    """Whether a request calls for it (None: every request does)."""
    slots: Mapping[str, Slot] = field(default_factory=dict)
    """Its arguments that hold values a recipe may take from a row, and what each holds."""
    script: Script | None = None
    """Its Playwright statements for one recorded call (None: a script cannot do it)."""


DEFAULT_FACTS = ActionFacts()
"""The facts of an action that declares none."""


def facts_of(tool: object) -> ActionFacts:
    """``tool.facts`` when it declares them (a wrapper reads its inner tool's), else :data:`DEFAULT_FACTS`."""
    facts = getattr(tool, "facts", None)
    return facts if isinstance(facts, ActionFacts) else DEFAULT_FACTS

"""Runs that break their own loops: noticing a model going round in circles by what it does.

Measured with a 1.5B model on a page that alternated between two states on each click: it clicked the same
button for the rest of the run, the page "changed" every step (so a rule about an unchanged page never fired)
and a note about the repetition was ignored. So the rule here is about moves, not pages:

- a *move* is an action on an element, the element known by what it is (tag, text, id, name, href, label,
  icon) and, among elements that read the same, by which of them it is (the second "Even" button is not the
  first: ``twin``), not by its index, which shifts when the page changes; plus the action's other arguments;
- a page is *new* when the run has not seen it before (indices and "new" markers aside, so two states of an
  alternating page are each seen once);
- a move made twice in the last few steps, with the same moves in between each time (a cycle) and no new
  page since the last time, is refused the third time, with what it did before and what else can be done (so
  A-A-A and A-B-A-B-A are refused alike, while clicking "Next" through new pages of results, or going back to a
  list to do something else there, is not);
- a click whose stated goal names an element the run already clicked, made on another element, is refused once
  (``guard_goals``): the goal was copied from the step before, and the click it names has happened;
- a move that cannot change anything is refused the first time: typing into a field the text it already
  holds, opening the URL the tab is already on (the 1.5B model's commonest wasted steps);
- steps with no new page are pointed out after a while, and a run refused ``budget`` times ends as stuck,
  saying what it tried.

Every refusal is advice, never a wall: the move refused last, made again as the model's next move, runs (the
model insists; it may know better: a task can ask to click into an empty field, or to open the same page
again). That rule is decided in one place, :meth:`LoopGuard.refusal`, for every kind of refusal here (a loop,
a move that changes nothing, a rule), and the decoding schema of the step after a refusal still offers the
refused move (:meth:`LoopGuard.exclusions`, :meth:`LoopGuard.expected`). A refusal the model insisted on does
not count towards ``budget``: a model whose every move is right (and so insists on every refused one) is never
ended as stuck. A refused move the model turned away from is left out of decoding until a new page.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ...browser.actions import action_facts
from ...browser.page.actionable import TEXT_INPUTS
from ...browser.page.snapshot import element_look
from ...browser.urls import navigation_target, site

_INDEX = re.compile(r"^(\s*)\*?\[\d+\]", re.MULTILINE)


def page_key(page_text: str) -> str:
    """A page's identity for "have I seen this?": its text with element indices and new-markers removed."""
    return hashlib.sha1(_INDEX.sub(r"\1[]", page_text).encode("utf-8", "replace")).hexdigest()


def element_key(element: Mapping[str, Any]) -> list[str]:
    """An element by what it is (tag, text, identifying attributes) and which of the elements that read the
    same it is (the snapshot's ``twin``: 0 for the first), not by its index. Measured on MiniWoB++'s
    odd-or-even: a row of "Odd"/"Even" buttons, one pair per number, where marking the second number right after
    the first was taken for the same click made again."""
    attrs = {str(k): str(v) for k, v in (element.get("attributes") or {}).items()}
    twin = element.get("twin") or 0
    look = element_look(str(element.get("tag", "")), str(element.get("text", "")), attrs)
    return [*look, *([f"#{twin}"] if twin else [])]


def move_key(action: str, args: Mapping[str, Any], element: Mapping[str, Any] | None) -> str:
    """A move's identity: the action, the element by what it is (not its index), the other arguments."""
    rest = {k: v for k, v in args.items() if k != "index"}
    who = element_key(element) if element is not None else [f"index={args['index']}"] if "index" in args else []
    return json.dumps([action, who, rest], sort_keys=True, ensure_ascii=False, default=str)


def same_page(url: str, here: str) -> bool:
    """Whether ``go_to_url(url)`` would load the page the tab shows (``here``): the URL as the action reads it
    (``localhost:8000/x`` is http), fragment and a trailing slash aside."""

    def key(u: str) -> tuple[object, ...]:
        p = urlsplit(u)
        return (p.scheme.lower(), site(u) or p.netloc.lower(), p.path.rstrip("/"), p.query)

    try:
        return key(navigation_target(url)) == key(here)
    except ValueError:
        return False


def _no_effect(action: str, args: Mapping[str, Any], element: Mapping[str, Any] | None, here: str) -> str | None:
    if action == "input_text" and element is not None:
        value = (element.get("attributes") or {}).get("value")
        text = args.get("text")
        if isinstance(text, str) and text and value == text:
            return (
                f"Not done: [{args.get('index')}] already contains {text!r}. Go on with the next field, or the button "
                "or key that submits, or call done if the task is complete."
            )
    if action == "go_to_url" and here and isinstance(args.get("url"), str) and same_page(args["url"], here):
        return (
            "Not done: the tab is already on that page; opening it again changes nothing. Act on its elements, "
            "or call done if the task is complete."
        )
    return None


def _is_toggle(element: Mapping[str, Any]) -> bool:
    """A checkbox or switch, or a label that toggles one: clicking it a second time undoes the first."""
    attrs = element.get("attributes") or {}
    role = str(attrs.get("role") or element.get("role") or "")
    return (
        (element.get("tag") == "input" and attrs.get("type") == "checkbox")
        or (element.get("tag") == "label" and attrs.get("for") == "checkbox")
        or role in ("checkbox", "switch")
    )


#: Input types a person types text into (an input without a type is a text field).
TEXT_TYPES = TEXT_INPUTS | {""}


def _empty_field(element: Mapping[str, Any] | None) -> bool:
    """A text field (an input one types into, a textarea) with nothing in it yet."""
    if element is None:
        return False
    attrs = element.get("attributes") or {}
    tag = element.get("tag")
    kind = str(attrs.get("type") or "").lower()
    return (tag == "textarea" or (tag == "input" and kind in TEXT_TYPES)) and not attrs.get("value")


def fields_of(element: Any) -> Mapping[str, Any]:
    """An element as a mapping (the snapshot's ElementInfo, or a dict already)."""
    return element if isinstance(element, Mapping) else vars(element)


def _describe(action: str, args: Mapping[str, Any], element: Mapping[str, Any] | None) -> str:
    text = " ".join(str((element or {}).get("text", "")).split())[:60]
    target = f" on '{text}'" if text else (f" on [{args['index']}]" if "index" in args else "")
    extra = {k: v for k, v in args.items() if k != "index"}
    return f"{action}{target}" + (f" {json.dumps(extra, ensure_ascii=False)}" if extra else "")


@dataclass(frozen=True)
class _Refused:
    action: str
    element: tuple[str, ...] | None
    """The element it acted on, by what it is; None for an action without one (go_to_url, send_keys)."""
    pages_seen: int
    key: str = ""
    """The move, by :func:`move_key`."""
    said: str = ""
    """The move as the history says it."""
    counted: bool = False
    """Whether it counts towards the stuck budget (a loop, a move that changes nothing; not a rule)."""


@dataclass
class _Move:
    key: str
    said: str
    step: int
    pages_seen: int
    """How many distinct pages the run had seen when the move was made."""
    name: str = ""
    """A click's element by its visible text (what a goal names it by)."""
    action: str = ""


#: The ways out the guard names for a move that led nowhere, each with the action it would be ("" for any).
WAYS = (
    ("", "the next field or button the task needs"),
    ("go_back", "go_back"),
    ("scroll", "scroll to look for another way"),
)

#: The ways out named when several steps showed nothing new.
STALE_WAYS = (("", "another element"), ("go_back", "go_back"), ("", "a search"), ("scroll", "scroll to find more"))


def other_ways(action: str, ways: tuple[tuple[str, str], ...] = WAYS) -> str:
    """The ways out to name after ``action`` led nowhere, never ``action`` itself: a model that went back and
    back, told to try go_back among the ways out, goes back again."""
    return ", ".join(text for name, text in ways if name != action)


def _name(element: Mapping[str, Any] | None) -> str:
    return " ".join(str((element or {}).get("text", "")).split())[:60]


def _look(element: Mapping[str, Any] | None) -> str:
    text = _name(element)
    return f"'{text}'" if text else f"a <{(element or {}).get('tag', 'element')}> with no text"


def _named_before(goal: str, element: Mapping[str, Any] | None, moves: Sequence[_Move]) -> _Move | None:
    """The earlier click whose element the goal names while ``element`` is another one (its own text not named
    there either), or None. Names of two characters or more, as whole words: "Click Submit" names "Submit",
    not "Sub"; a goal that names both elements ("after Next, click Save") is not against the click."""
    folded = " ".join(goal.split()).casefold()
    mine = _name(element).casefold()
    if not folded or (mine and names(folded, mine)):
        return None
    for move in reversed(moves):
        name = move.name.casefold()
        if len(name) >= 2 and name != mine and names(folded, name):
            return move
    return None


def names(goal: str, name: str) -> bool:
    """Whether the (folded) text names ``name`` as whole words."""
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", goal) is not None


@dataclass
class LoopGuard:
    """One run's moves and pages. ``page()`` each step, ``refusal()`` before a move, ``made()`` when it ran."""

    window: int = 6
    budget: int = 3
    quiet_after: int = 3
    guard_repeats: bool = False
    """Refuse once a move made again right after itself (the small profile: see ``_profile_rule``)."""
    guard_empty_fields: bool = False
    """Refuse once a click on an empty text field (the small profile: see ``_profile_rule``)."""
    guard_goals: bool = False
    """Refuse once a click on one element whose goal names another the run clicked before (see ``_profile_rule``)."""
    guide: bool = False
    """After a rule that names the fields to fill, let the next step decode only typing into them (or done):
    the small profile (see :meth:`expected`)."""
    moves: list[_Move] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)
    stale: int = 0
    """Steps in a row whose page the run had seen before."""
    refused: list[str] = field(default_factory=list)
    warned: set[str] = field(default_factory=set)
    """Moves refused once with a rule (undoing a toggle, submitting empty fields): made again, they run."""
    blocked: list[_Refused] = field(default_factory=list)
    """Refused moves, kept out of what the model can decode until a page it had not seen appears."""
    _expect: tuple[str, list[tuple[str, ...]], int] | None = None
    """What the last rule said to do instead: (action, the elements, pages seen then); for one step."""
    pending: _Refused | None = None
    """The move refused last, until the model's next move: made again then, it runs (see the module's doc)."""
    insisted: list[str] = field(default_factory=list)
    """Refused moves the model made again at once, so they ran."""
    tools: Mapping[str, Any] = field(default_factory=dict)
    """The run's actions: whether one may repeat is its own fact (``facts.repeatable``: waiting, scrolling,
    reading a table, finishing); a name not here is a built-in's."""

    def repeatable(self, action: str) -> bool:
        """Whether ``action`` may rightly be made again with nothing new: never refused, never a move."""
        return action_facts(action, self.tools).repeatable

    @classmethod
    def of(cls, profile: Any) -> LoopGuard:
        """The guard a prompt profile asks for (agent/prompt/profiles.py: its rules and guide)."""
        return cls(
            guard_repeats=profile.guard_repeats,
            guard_empty_fields=profile.guard_empty_fields,
            guide=profile.guide,
            guard_goals=profile.guard_goals,
        )

    def page(self, page_text: str) -> list[str]:
        """Note the page this step shows; returns the notes for the model (after the page, where it reads last)."""
        key = page_key(page_text)
        if key in self.seen:
            self.stale += 1
        else:
            self.seen.add(key)
            self.stale = 0
        if self.stale >= self.quiet_after and self.moves:
            last = self.moves[-1].action
            ways = other_ways(last, STALE_WAYS)
            return [
                f"The last {self.stale} steps showed no page you had not seen before: what you are doing is not "
                f"working. Try something different ({ways}) or call done with success=false and what you found."
            ]
        return []

    def refusal(
        self,
        action: str,
        args: Mapping[str, Any],
        element: Mapping[str, Any] | None,
        step: int,
        here: str = "",
        unfilled: Sequence[Mapping[str, Any]] = (),
        goal: str = "",
    ) -> str | None:
        """Why this move should not run (a sentence for the model), or None. ``here``: the tab's URL;
        ``unfilled``: the fields a click would submit empty although its form needs them (their lines under
        "line"); ``goal``: the model's stated next goal. The one place a refusal is decided: the move refused
        last, made again now, runs."""
        self._expect = None  # a guide holds for the one step after its rule
        if self.repeatable(action):
            return None
        key = move_key(action, args, element)
        pending, self.pending = self.pending, None
        if pending is not None and pending.key == key:  # the model insists: it runs, and is not held against it
            if pending.counted and pending.said in self.refused:
                self.refused.remove(pending.said)
            self.blocked = [b for b in self.blocked if b is not pending]
            self.insisted.append(pending.said)
            return None
        found = self._judge(key, action, args, element, step, here, unfilled, goal)
        if found is None:
            return None
        said, counted = found
        who = tuple(element_key(element)) if element is not None and "index" in args else None
        refused = _Refused(action, who, len(self.seen), key, _describe(action, args, element), counted)
        if counted:
            self.refused.append(refused.said)
        self.blocked.append(refused)
        self.pending = refused
        return said

    def _judge(
        self,
        key: str,
        action: str,
        args: Mapping[str, Any],
        element: Mapping[str, Any] | None,
        step: int,
        here: str,
        unfilled: Sequence[Mapping[str, Any]],
        goal: str = "",
    ) -> tuple[str, bool] | None:
        """(why not, whether it counts towards the stuck budget) for a move, or None when nothing is against it."""
        pointless = _no_effect(action, args, element, here)
        if pointless is not None:
            return pointless, True
        rule = self._profile_rule(key, action, args, element, unfilled, goal)
        if rule is not None:
            return rule, False
        window = self.moves[-self.window :]
        at = [i for i, m in enumerate(window) if m.key == key]
        if len(at) < 2 or len(self.seen) > window[at[-1]].pages_seen:
            return None
        between = [m.key for m in window[at[-2] + 1 : at[-1]]]
        since = [m.key for m in window[at[-1] + 1 :]]
        if between != since:  # not a cycle: other moves led back here (another script, another item)
            return None
        first, last = window[at[-2]], window[at[-1]]
        said = last.said
        others = list(dict.fromkeys(m.said for m in window[at[-2] + 1 : at[-1]]))[-2:]
        cycle = f" (with {' and '.join(others)} in between)" if others else ""
        return (
            f"Not done: {said} is what you did in steps {first.step} and {last.step}{cycle}, and no page "
            "you had not seen before came of it. Doing it again will not help. Choose a different element or action "
            f"({other_ways(action)}), or call done with success=false if you cannot go further. If you are sure it "
            "is right, make it again: it will run."
        ), True

    def _profile_rule(
        self,
        key: str,
        action: str,
        args: Mapping[str, Any],
        element: Mapping[str, Any] | None,
        unfilled: Sequence[Mapping[str, Any]],
        goal: str = "",
    ) -> str | None:
        """A move that is likely a slip, refused once with why (not counted as a loop) and left out of decoding
        until a new page: made again, it runs. Measured with a 1.5B model: it clicked a checkbox it had just
        checked (unchecking it), clicked "Sign in" before it had typed the password, (``guard_empty_fields``) clicked an
        empty password field again and again instead of typing into it, and (``guard_repeats``) clicked "Save"
        again and again after it had worked, instead of calling done; (``guard_goals``) its goal still read "Click
        Submit" after Submit had worked, and it clicked what had taken the button's place."""
        if key in self.warned:
            return None
        index = args.get("index")
        last = self.moves[-1] if self.moves else None
        goal_clicked = self.guard_goals and action == "click_element_by_index"
        earlier = _named_before(goal, element, self.moves) if goal_clicked else None
        said: str | None = None
        if action == "click_element_by_index" and element is not None and _is_toggle(element):
            before = next((m for m in reversed(self.moves[-self.window :]) if m.key == key), None)
            if before is not None:
                state = (element.get("attributes") or {}).get("checked")
                now = f" (it is now checked={state})" if state in ("true", "false") else ""
                said = (
                    f"Not done: you already clicked [{index}] in step {before.step}{now}; clicking it again undoes "
                    "that. If it is as the task wants, go on with the next part (another box, the button that saves), "
                    f"or call done if the task is complete. Click [{index}] again only to undo it."
                )
        elif action == "click_element_by_index" and unfilled:
            lines = "; ".join(str(f.get("line", "")) for f in unfilled[:3])
            self._expect = ("input_text", [tuple(element_key(f)) for f in unfilled], len(self.seen))
            said = (
                f"Not done: [{index}] would submit its form with these fields still empty: {lines}. "
                f"Fill them first with input_text (the task may give their values), then click [{index}]. Click it "
                "again only if they must stay empty."
            )
        elif self.guard_empty_fields and action == "click_element_by_index" and _empty_field(element):
            assert element is not None
            self._expect = ("input_text", [tuple(element_key(element))], len(self.seen))
            said = (
                f"Not done: [{index}] is a text field, and clicking it types nothing. To fill it, use input_text "
                f"with index {index} and the text (the task may give it). Click it again only to open what it "
                "offers (suggestions, a date picker)."
            )
        elif earlier is not None:
            said = (
                f"Not done: your goal names '{earlier.name}', which you clicked in step {earlier.step}, but "
                f"[{index}] is {_look(element)}. If that click did what the task asked (read the page), call done. "
                f"To click '{earlier.name}' again, use its index if the page lists it; click [{index}] again if it "
                "is the one."
            )
        elif self.guard_repeats and last is not None and last.key == key and action != "go_back":
            said = (
                f"Not done: {last.said} is what you did in step {last.step}, just now; doing it again repeats it. "
                "Read the page: if it shows what the task asked for, call done with success=true and the answer; "
                "otherwise do the next part of the task."
            )
        if said is not None:
            self.warned.add(key)
        return said

    def expected(self, elements: Mapping[int, Any]) -> dict[str, set[int]] | None:
        """With ``guide``, right after a rule that named fields to fill (a submit with them empty, a click on
        one): the only moves the next step may decode besides done, as {action: this page's indices}: typing into
        those fields, or the refused move again (the model may insist); None otherwise, or when the page changed
        or none of the fields is on it. A 1.5B model, measured, answered "fill the password first" by clicking the
        username field, then Home, step after step, with the same thoughts each time; typing is what it had to be
        shown."""
        if not self.guide or self._expect is None:
            return None
        action, keys, pages_seen = self._expect
        if pages_seen != len(self.seen):
            return None
        hit = {i for i, e in elements.items() if tuple(element_key(fields_of(e))) in keys}
        if not hit:
            return None
        out = {action: hit}
        again = self.pending
        if again is not None and again.element is not None:
            same = {i for i, e in elements.items() if tuple(element_key(fields_of(e))) == again.element}
            out[again.action] = out.get(again.action, set()) | same
        return out

    def exclusions(self, elements: Mapping[int, Any]) -> dict[str, set[int] | None]:
        """What a schema-constrained model may not decode this step: per action, the indices of this page's
        elements (dicts, or the snapshot's ElementInfo) a refused move acted on (None: the whole action, for one
        without an element). The move refused last stays decodable (the model may insist, and then it runs);
        one the model turned away from stays out until a page it had not seen appears, so a model that ignores
        "Not done" cannot write it again and again."""
        live = [b for b in self.blocked if b.pages_seen == len(self.seen)]
        self.blocked = live
        live = [b for b in live if b is not self.pending]
        if not any(b.element is not None for b in live):  # the common step: no element to look for on the page
            return {b.action: None for b in live}
        elements = {i: fields_of(e) for i, e in elements.items()}
        out: dict[str, set[int] | None] = {}
        for b in live:
            if b.element is None:
                out[b.action] = None
                continue
            hit = {i for i, e in elements.items() if tuple(element_key(e)) == b.element}
            current = out.get(b.action, set())
            if current is not None:
                out[b.action] = current | hit
        return out

    def made(self, action: str, args: Mapping[str, Any], element: Mapping[str, Any] | None, step: int) -> None:
        """A move ran (before the page it leads to is seen)."""
        if self.repeatable(action):
            return
        said = _describe(action, args, element)
        name = _name(element) if action == "click_element_by_index" else ""
        self.moves.append(_Move(move_key(action, args, element), said, step, len(self.seen), name, action))

    @property
    def stuck(self) -> str | None:
        """The reason to end the run, once the model turned from ``budget`` refused moves to other ones; None
        before. The move refused last does not count yet: the model may still insist on it."""
        waiting = 1 if self.pending is not None and self.pending.counted else 0
        if len(self.refused) - waiting < self.budget:
            return None
        tried = "; ".join(dict.fromkeys(m.said for m in self.moves[-self.window :]))
        return (
            f"Stuck: the model repeated moves that led nowhere {len(self.refused)} times (refused: "
            f"{'; '.join(dict.fromkeys(self.refused))}). Tried lately: {tried}."
        )

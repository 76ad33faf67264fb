"""A claim of success checked against the one thing a run can know it did not do: a click the request asked for.

"Select hv and click Submit", "Press submit when done", "click on the "previous" button": when the request names
a control to click, the page lists exactly one control of that name, and no step of the run clicked one of that
name (nor pressed a key, which can submit without a click), a ``done`` that claims success has not done what was
asked. Measured with a 1.5B model on MiniWoB++: on its last step it claimed success on a checkbox task, a radio
task and a sum with Submit never clicked (the reward was 0). What the page shows cannot tell a right answer from
a wrong one; a click the request named and the run never made can.

The check is advice like the loop guard's: before the last step it refuses the claim once, saying which control
and where (made again, the claim stands: the model may know better); on the last step, where no step is left to
click it, the run ends failed with the same reason instead of claiming a success it did not reach.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from .loop_guard import fields_of, names

#: "click Submit", "press 'OK'", "tap on the "previous" button": the verb, then the name (quoted, or one word).
_ASKED = re.compile(
    r"\b(?:click|press|tap|hit|push)\s+(?:on\s+)?(?:the\s+)?"
    r"(?:\"([^\"\n]{1,40})\"|'([^'\n]{1,40})'|“([^”\n]{1,40})”|([^\W\d_][\w-]{1,30}))",
    re.IGNORECASE,
)
#: Words after the verb that name no control: keys, pronouns, kinds of element.
_NOT_NAMES = frozenset({
    "enter", "return", "tab", "escape", "space", "backspace",
    "it", "them", "this", "that", "here", "one",
    "button", "buttons", "link", "links", "element",
})  # fmt: skip
_CLICKABLE_TAGS = frozenset({"button", "a", "summary"})
_CLICKABLE_ROLES = frozenset({"button", "link", "tab", "menuitem"})


def asked_names(task: str) -> list[str]:
    """The controls the request asks to click, by name, in order (``"Select hv and click Submit"`` → Submit)."""
    names = []
    for match in _ASKED.finditer(task):
        name = " ".join(next(g for g in match.groups() if g).split())
        if name.casefold() not in _NOT_NAMES:
            names.append(name)
    return list(dict.fromkeys(names))


def name_of(element: Any) -> str:
    """An element's name as a request says it: its text, else its value, label or title (folded)."""
    fields = fields_of(element)
    attrs = fields.get("attributes") or {}
    text = fields.get("text") or attrs.get("value") or attrs.get("aria-label") or attrs.get("title") or ""
    return " ".join(str(text).split()).casefold()


def _clickable(element: Any) -> bool:
    fields = fields_of(element)
    attrs = fields.get("attributes") or {}
    kind = str(attrs.get("type") or "").lower()
    return (
        fields.get("tag") in _CLICKABLE_TAGS
        or fields.get("role") in _CLICKABLE_ROLES
        or (fields.get("tag") == "input" and kind in ("submit", "button", "image", "reset"))
    )


def unclicked(
    task: str, elements: Mapping[int, Any], clicked: Iterable[str], keys_sent: bool
) -> tuple[str, int] | None:
    """``(name, index)`` of a control the request asks to click that the page lists once and no step clicked
    (``clicked``: the visible names of what the run clicked), or None. None too once the run pressed keys (Enter
    submits without a click)."""
    if keys_sent:
        return None
    done = [" ".join(c.split()).casefold() for c in clicked]
    for name in asked_names(task):
        folded = name.casefold()
        if any(names(c, folded) for c in done):
            continue
        hits = [i for i, e in elements.items() if _clickable(e) and name_of(e) == folded]
        if len(hits) == 1:
            return name, hits[0]
    return None


def refusal(name: str, index: int, last: bool) -> str:
    """What the model (or, on the last step, the run's end) is told."""
    if last:
        return (
            f"The model called done with success=true on its last step, but the request asks to click '{name}' "
            f"([{index}] on the page), and no step clicked it: the task is not finished."
        )
    return (
        f"Not done: the request asks to click '{name}', which is [{index}] on this page, and no step clicked it. "
        f"Click [{index}] now; call done again only if the task is complete without it."
    )


class ClaimCheck:
    """One run's check of its success claims: it refuses (or, on the last step, ends the run over) one claim."""

    def __init__(self) -> None:
        self.used = False
        self.clicked: list[str] = []
        self.keys_sent = False

    def made(self, action: str, element: Any) -> None:
        """An action ran: a click's element is noted by name; keys pressed may have submitted without a click."""
        if action == "click_element_by_index" and element is not None:
            self.clicked.append(name_of(element))
        self.keys_sent = self.keys_sent or action == "send_keys"

    def judge(self, task: str, page: Any, last: bool) -> str | None:
        """Why this claim of success stands on a click never made, or None (always None after the first time).
        ``page``: the step's snapshot (its ``elements``), or the elements by index."""
        elements = page if isinstance(page, Mapping) or page is None else page.elements
        if self.used or elements is None:
            return None
        asked = unclicked(task, elements, self.clicked, self.keys_sent)
        if asked is None:
            return None
        self.used = True
        return refusal(*asked, last=last)

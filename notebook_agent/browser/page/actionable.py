"""Which elements an action certainly cannot act on, known from the snapshot alone.

A schema-constrained model may only name the elements of the step's state (``agent/macro.with_indices``). It
can still name the wrong kind: a 1.5B model, measured, typed the search words into the Search button three
times and the message into the Send button. These rules take out, per action, the elements the action would
refuse without trying (see ``actions/forms.py``): so the model cannot decode them, and has to choose among
what can work. They are certain, not guesses: anything that might hold an editor (a ``<div>``, a custom
widget) stays in.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .snapshot import ElementInfo

#: Input types ``fill`` refuses (and input_text reports as not a text field).
UNTYPABLE_INPUTS = frozenset({"checkbox", "radio", "file", "submit", "button", "reset", "image", "range", "color"})
#: Input types that can never be a dropdown.
NOT_DROPDOWN_INPUTS = UNTYPABLE_INPUTS | {"password", "hidden"}
#: Explicit roles whose elements input_text refuses without clicking them (a click could submit or navigate).
ACTIVATING_ROLES = frozenset({"button", "link", "checkbox", "radio", "switch", "tab", "menuitem"})


def _type(e: ElementInfo) -> str:
    return (e.attributes.get("type") or "text").strip().lower() if e.tag == "input" else ""


def _role(e: ElementInfo) -> str:
    return (e.role or e.attributes.get("role") or "").strip().split(" ")[0].lower()


def cannot_type_into(e: ElementInfo) -> bool:
    """``input_text`` would refuse it: a button, link, dropdown, checkbox or other control that holds no text."""
    if e.attributes.get("contenteditable") not in (None, "false"):
        return False
    if e.tag in ("button", "a", "select", "summary", "option") or _type(e) in UNTYPABLE_INPUTS:
        return True
    return e.tag not in ("input", "textarea") and _role(e) in ACTIVATING_ROLES


def cannot_choose_in(e: ElementInfo) -> bool:
    """``select_dropdown_option`` would refuse it: a link, a text area, a plain field or a checkbox. (A button may
    open a custom listbox, and an input may have suggestions: those stay.)"""
    if e.tag == "select" or _role(e) in ("combobox", "listbox"):
        return False
    if e.tag in ("a", "textarea", "summary", "option"):
        return True
    return _type(e) in NOT_DROPDOWN_INPUTS


def unfit(elements: Iterable[ElementInfo]) -> dict[str, set[int]]:
    """Per form action, the indices of ``elements`` it cannot act on."""
    out: dict[str, set[int]] = {"input_text": set(), "select_dropdown_option": set()}
    for e in elements:
        if cannot_type_into(e):
            out["input_text"].add(e.index)
        if cannot_choose_in(e):
            out["select_dropdown_option"].add(e.index)
    return out


#: Input types that hold typed text.
TEXT_INPUTS = frozenset({"text", "email", "password", "tel", "number", "search", "url"})


def unfilled(elements: Mapping[int, ElementInfo], index: int) -> list[ElementInfo]:
    """What a click on ``index`` would submit empty although its form needs it: the empty, enabled password and
    required text fields of the form that ``index`` submits (none when it submits no form). A 1.5B model,
    measured, clicked "Sign in" before it had typed the password."""
    button = elements.get(index)
    if button is None or not button.submits or button.form < 0:
        return []
    return [
        e
        for e in elements.values()
        if e.form == button.form
        and e.frame_index == button.frame_index
        and not e.disabled
        and "value" not in e.attributes
        and (e.tag == "textarea" or _type(e) in TEXT_INPUTS)
        and (e.required or _type(e) == "password")
    ]

"""The oracle's plan for each MiniWoB++ task: the right next action, read off the state message alone.

A plan is a function of the state (``miniwob_oracle.State``: the instruction in ``query``, the indexed elements,
the page's text lines) and of the oracle's own earlier moves in the episode (``Memory``). It acts as a careful
person would on what the state shows, and raises :class:`GiveUp` when the state does not show what the move
needs (an icon with no name, a value cut short), so such a failure names its cause instead of guessing.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from miniwob_oracle import Action, Element, GiveUp, Memory, Plan, State, click, select, type_text

PLANS: dict[str, Plan] = {}


def plan(*names: str) -> Callable[[Plan], Plan]:
    def register(fn: Plan) -> Plan:
        for name in names:
            PLANS[name] = fn
        return fn

    return register


def quoted(s: State, n: int = 0) -> str:
    found = re.findall(r'"([^"]*)"', s.query)
    if len(found) <= n:
        raise GiveUp(f"no quoted text in the instruction {s.query!r}")
    return found[n]


def need(e: Element | None, what: str) -> Element:
    if e is None:
        raise GiveUp(f"the state shows no {what}")
    return e


def submit(s: State) -> Action:
    for label in ("Submit", "submit", "Search", "Login", "OK", "Go!"):
        e = s.find(label)
        if e is not None:
            return click(e)
    raise GiveUp("the state shows no submit button")


def ordinal(text: str) -> int:
    m = re.search(r"(\d+)(?:st|nd|rd|th)", text)
    if not m:
        raise GiveUp(f"no ordinal in {text!r}")
    return int(m.group(1))


def fields(s: State) -> list[Element]:
    return [e for e in s.elements if e.tag in ("input", "textarea") and e.attr("type") not in ("checkbox", "radio")]


def fill_then(s: State, m: Memory, values: list[tuple[Element, str]], then: Callable[[], Action]) -> Action:
    """Type each value once (in order), then ``then()``."""
    for e, text in values:
        if m.once(f"type {e.index}"):
            return type_text(e, text)
    return then()


@plan("click-button", "unicode-test", "click-test-2")
def click_named(s: State, m: Memory) -> Action:
    click_test_2 = s.query.startswith("Click button ")  # "Click button ONE."
    label = s.query.removeprefix("Click button ").rstrip(".") if click_test_2 else quoted(s)
    return click(need(s.find(label, tag="button"), f"button {label!r}"))


@plan("click-test")
def click_test(s: State, m: Memory) -> Action:
    return click(need(s.find(tag="button"), "button"))


@plan("click-button-sequence")
def button_sequence(s: State, m: Memory) -> Action:
    one, two = need(s.find("ONE"), "button ONE"), need(s.find("TWO"), "button TWO")
    return click(one) if not m.clicked(one.index) else click(two)


@plan("click-checkboxes", "click-checkboxes-large", "click-checkboxes-transfer")
def checkboxes(s: State, m: Memory) -> Action:
    head = re.match(r"Select (.*) and click Submit", s.query)
    if not head:
        raise GiveUp(f"unexpected instruction {s.query!r}")
    wanted = set() if head.group(1) == "nothing" else {w.strip() for w in head.group(1).split(",")}
    for e in s.all(tag="input", type="checkbox"):
        if (e.name.strip() in wanted) != (e.attr("checked") == "true"):
            return click(e)
    return submit(s)


@plan("click-option")
def option(s: State, m: Memory) -> Action:
    target = re.match(r"Select (.*) and click Submit", s.query)
    if not target:
        raise GiveUp(f"unexpected instruction {s.query!r}")
    e = need(
        next((e for e in s.all(tag="input", type="radio") if e.name.strip() == target.group(1)), None), "the radio"
    )
    return click(e) if e.attr("checked") != "true" else submit(s)


@plan("click-collapsible")
def collapsible(s: State, m: Memory) -> Action:
    head = need(s.find(tag="h3"), "section header")
    if head.attr("aria-expanded") != "true":
        return click(head)
    return submit(s)


@plan("click-collapsible-2", "click-tab-2", "click-tab-2-hard", "click-tab-2-medium", "click-tab-2-easy")
def find_link_in_sections(s: State, m: Memory) -> Action:
    word = quoted(s)
    link = s.find(word, tag="span") or s.find(word, tag="a")
    if link is not None and link.attr("role") != "presentation":
        return click(link)
    if "tab" in s.query:
        opener = [e for e in s.all(tag="a", role="presentation")]
    else:
        opener = [e for e in s.all(tag="h3") if e.attr("aria-expanded") != "true"]
    if m.notes.get("opened") and m.once(f"wait {m.notes['opened']}"):  # the section may still be opening
        return "wait", {"seconds": 1}
    for e in opener:
        if m.once(f"open {e.label}"):
            m.notes["opened"] = e.label
            return click(e)
    raise GiveUp(f"no section shows the link {word!r}")


@plan("click-dialog", "click-dialog-2")
def dialog(s: State, m: Memory) -> Action:
    label = quoted(s) if '"' in s.query else "x"
    if label.lower() == "x":
        return click(need(s.find(tag="button", title="Close"), "close button of the dialog"))
    return click(need(s.find(label, tag="button"), f"button {label!r}"))


@plan("click-link")
def link(s: State, m: Memory) -> Action:
    word = quoted(s)
    return click(need(s.find(word, tag="span") or s.find(word, tag="a"), f"link {word!r}"))


@plan("click-tab")
def tab(s: State, m: Memory) -> Action:
    name = re.search(r"Tab #\d+", s.query)
    return click(need(s.find(name.group(0) if name else "?", tag="a"), "the tab"))


WIDGETS = {
    "button": lambda e: e.tag == "button",
    "text": lambda e: e.tag == "input" and e.attr("type") == "text",
    "textarea": lambda e: e.tag == "textarea",
    "checkbox": lambda e: e.tag == "input" and e.attr("type") == "checkbox",
    "radio": lambda e: e.tag == "input" and e.attr("type") == "radio",
}


@plan("click-widget")
def widget(s: State, m: Memory) -> Action:
    kind = quoted(s)
    test = WIDGETS.get(kind)
    if test is None:
        raise GiveUp(f"unknown widget kind {kind!r}")
    return click(need(next((e for e in s.elements if test(e)), None), f"{kind} widget"))


@plan("choose-list")
def choose_list(s: State, m: Memory) -> Action:
    target = re.match(r"Select (.*) from the list", s.query)
    box = need(s.find(tag="select"), "list")
    if target and m.once("select"):
        return select(box, target.group(1))
    return submit(s)


@plan("click-scroll-list")
def scroll_list(s: State, m: Memory) -> Action:
    target = re.match(r"Select (.*) from the scroll list", s.query)
    box = need(s.find(tag="select"), "list")
    for name in [t.strip() for t in target.group(1).split(",")] if target else []:
        if m.once(f"select {name}"):
            return select(box, name)
    return submit(s)


@plan("enter-text", "enter-text-dynamic", "enter-text-2")
def enter_text(s: State, m: Memory) -> Action:
    text = quoted(s)
    if "lower case" in s.query:
        text = text.lower()
    elif "upper case" in s.query:
        text = text.upper()
    box = need(s.find(tag="input", type="text"), "text field")
    return fill_then(s, m, [(box, text)], lambda: submit(s))


@plan("enter-password")
def enter_password(s: State, m: Memory) -> Action:
    word = quoted(s)
    boxes = s.all(tag="input", type="password")
    return fill_then(s, m, [(e, word) for e in boxes], lambda: submit(s))


@plan("login-user", "login-user-popup")
def login(s: State, m: Memory) -> Action:
    popup = s.find(tag="div", role="dialog")
    if popup is not None:  # login-user-popup: a dialog may cover the form; close it
        close = s.find("Cancel", tag="button") or s.find(tag="button", title="Close")
        return click(need(close, "button closing the popup"))
    user, password = quoted(s, 0), quoted(s, 1)
    values = [(need(s.find(tag="input", id="username"), "username field"), user)]
    values.append((need(s.find(tag="input", id="password"), "password field"), password))
    return fill_then(s, m, values, lambda: submit(s))


@plan("focus-text")
def focus_text(s: State, m: Memory) -> Action:
    return click(need(s.find(tag="input"), "text field"))


@plan("focus-text-2")
def focus_text_2(s: State, m: Memory) -> Action:
    boxes = s.all(tag="input")
    n = ordinal(s.query)
    if len(boxes) < n:
        raise GiveUp(f"fewer than {n} text fields")
    return click(boxes[n - 1])


# The plans of the multi-step tasks (trees, searches, forms, reading values) and of the inbox (icons)
# register themselves from there.
import miniwob_plans_icons  # noqa: E402, F401
import miniwob_plans_more  # noqa: E402, F401

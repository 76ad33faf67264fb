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
    if s.query.startswith("Click button "):  # click-test-2: Click button ONE.
        label = s.query.removeprefix("Click button ").rstrip(".")
    else:
        label = quoted(s)
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
    for e in opener:
        if m.once(f"open {e.label}"):
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


@plan("navigate-tree")
def navigate_tree(s: State, m: Memory) -> Action:
    name = quoted(s)
    target = next((e for e in s.elements if e.label == name and e.tag in ("li", "span")), None)
    if target is not None:
        return click(target)
    for folder in s.all(tag="span"):  # folders are <li><div/><span>Name</span>; open each once
        if m.once(f"open {folder.label}"):
            return click(folder)
    raise GiveUp(f"no folder shows {name!r}")


@plan("use-autocomplete", "use-autocomplete-nodelay")
def autocomplete(s: State, m: Memory) -> Action:
    start = quoted(s)
    end = quoted(s, 1) if "ends with" in s.query else ""
    box = need(s.find(tag="input", id="tags"), "text field")
    if m.once("type"):
        return type_text(box, start)
    for e in s.elements:
        if e.tag in ("li", "div", "a") and e.label.startswith(start) and e.label.endswith(end) and e.label != start:
            if m.once("pick"):
                return click(e)
    if m.notes.get("pick"):
        return submit(s)
    if m.once("wait"):  # the suggestions appear after a delay
        return "wait", {"seconds": 1}
    raise GiveUp(f"the state shows no suggestion starting with {start!r} and ending with {end!r}")


@plan("email-inbox-delete", "email-inbox-important")
def email_icon(s: State, m: Memory) -> Action:
    who = re.search(r"email by (\S+)", s.query)
    icon = "trash" if "trash" in s.query else "star"
    if not who:
        raise GiveUp(f"unexpected instruction {s.query!r}")
    row = need(next((e for e in s.elements if e.label.startswith(who.group(1) + " ")), None), "the email")
    named = [e for e in s.elements if e.line > row.line and icon in " ".join([e.label, *e.attrs.values()]).lower()]
    if not named:
        raise GiveUp(f"the email's icons are shown as unnamed elements; none says {icon!r}")
    return click(named[0])


@plan("search-engine")
def search_engine(s: State, m: Memory) -> Action:
    word = quoted(s)
    n = ordinal(s.query)
    box = need(s.find(tag="input", id="search-text"), "search field")
    if m.once("type"):
        return type_text(box, word)
    if m.once("search"):
        return click(need(s.find("Search", tag="button"), "Search button"))
    page = m.notes.get("page", 1)
    results = [e for e in s.all(tag="a") if not e.label.isdigit() and e.label not in ("<", ">", "Next", "Prev")]
    per_page = m.notes.setdefault("per_page", len(results))
    if not per_page:
        raise GiveUp("the state shows no search results")
    want_page = (n - 1) // per_page + 1
    if want_page == page:
        return click(results[(n - 1) % per_page])
    pager = need(s.find(str(want_page), tag="a"), f"link to results page {want_page}")
    m.notes["page"] = want_page
    return click(pager)


MOVIE = re.compile(r"Search for (\S+) movies directed by (.+) from year (\d+)\.")


@plan("multi-layouts", "multi-orderings")
def movie_search(s: State, m: Memory) -> Action:
    found = MOVIE.match(s.query)
    if not found:
        raise GiveUp(f"unexpected instruction {s.query!r}")
    genre, director, year = found.groups()
    values = []
    for e in s.all(tag="input"):
        label = " ".join([s.label_before(e), e.attr("placeholder"), e.attr("aria-label")]).lower()
        text = director if "director" in label else genre if "genre" in label else year if re.search(
            "year|date", label
        ) else None
        if text is None:
            raise GiveUp(f"field [{e.index}] has no label the state shows")
        values.append((e, text))
    go = s.find("Go!") or s.find("Submit") or s.find("Search")
    return fill_then(s, m, values, lambda: click(need(go, "submit button")))


@plan("form-sequence-2")
def form_sequence_2(s: State, m: Memory) -> Action:
    found = re.match(r'Check the (\d+)\w\w radio button and enter the number "(\d+)" into the (\d+)\w\w textbox', s.query)
    if not found:
        raise GiveUp(f"unexpected instruction {s.query!r}")
    radio, number, box = int(found.group(1)), found.group(2), int(found.group(3))
    radios, boxes = s.all(tag="input", type="radio"), s.all(tag="input", type="text")
    if radios[radio - 1].attr("checked") != "true":
        return click(radios[radio - 1])
    return fill_then(s, m, [(boxes[box - 1], number)], lambda: submit(s))


@plan("read-table", "read-table-2")
def read_table(s: State, m: Memory) -> Action:
    keys = re.findall(r"value of (.+?)(?: and| into)", s.query)
    table = dict(t.split(" | ", 1) for _, t in s.text_lines() if " | " in t)
    boxes = s.all(tag="input", type="text")
    if not keys:  # read-table-2: each field is labelled with a row's key
        keys = [s.label_before(e).rstrip(":").strip() for e in boxes]
    if not keys or any(k not in table for k in keys):
        raise GiveUp(f"the state's table has no row {keys!r}")
    return fill_then(s, m, list(zip(boxes, [table[k] for k in keys], strict=False)), lambda: submit(s))


@plan("find-word")
def find_word(s: State, m: Memory) -> Action:
    box = need(s.find(tag="input", id="answer-input"), "answer field")
    paragraph = s.label_before(box)
    words = paragraph.split()
    n = ordinal(s.query)
    if len(words) < n:
        raise GiveUp(f"the paragraph shown has {len(words)} words")
    return fill_then(s, m, [(box, words[n - 1].strip(".,;:!?"))], lambda: submit(s))


@plan("simple-arithmetic", "simple-algebra")
def arithmetic(s: State, m: Memory) -> Action:
    box = need(s.find(tag="input", id="math-answer"), "answer field")
    problem = next((t for _, t in s.text_lines() if re.fullmatch(r"[-\dx +*/=]+", t) and re.search(r"\d", t)), "")
    left, _, right = problem.partition("=")
    if not re.fullmatch(r"[-\dx +*/]+", left) or not re.fullmatch(r"[-\dx +*/]*", right):
        raise GiveUp(f"no problem in the state ({problem!r})")

    def value(x: int) -> int:
        side = lambda t: eval(re.sub(r"(?<=\d) ?x ?(?=\d)", "*", t).replace("x", f"({x})") or "0")  # noqa: E731, S307
        return int(side(left) - (side(right) if right.strip() else 0))

    answer = value(0) if not right.strip() else -value(0) // (value(1) - value(0))
    return fill_then(s, m, [(box, str(answer))], lambda: submit(s))


def textarea_value(s: State, e: Element) -> str:
    """A textarea's full value as the state line shows it (attribute values are not quoted: read up to the
    next attribute the snapshot puts after value)."""
    raw = s.lines[e.line]
    found = re.search(r" value=(.*?)(?: scrollable=| disabled| id=| />)", raw)
    if not found:
        raise GiveUp(f"the state shows no value for [{e.index}]")
    if "…" in found.group(1):
        raise GiveUp(f"the state shows the text of [{e.index}] cut short ('…')")
    return found.group(1)


@plan("copy-paste", "copy-paste-2")
def copy_paste(s: State, m: Memory) -> Action:
    """Copied with the keyboard, as a person would: the state trims a value's outer spaces, which the task's
    exact comparison counts."""
    areas = s.all(tag="textarea")
    n = ordinal(s.query) if re.search(r"\d+(st|nd|rd|th)", s.query) else 1
    box = need(s.find(tag="input", id="answer-input"), "answer field")
    if len(areas) < n:
        raise GiveUp(f"fewer than {n} text areas")
    if m.once("copy"):
        return "send_keys", {"index": areas[n - 1].index, "keys": "Control+A Control+C"}
    if m.once("paste"):
        return "send_keys", {"index": box.index, "keys": "Control+V"}
    return submit(s)


@plan("scroll-text-2")
def scroll_text_2(s: State, m: Memory) -> Action:
    area = need(s.find(tag="textarea"), "text area")
    if m.once("scroll"):
        return "scroll", {"index": area.index, "down": True, "num_pages": 10}
    return submit(s)


@plan("scroll-text")
def scroll_text(s: State, m: Memory) -> Action:
    area = need(s.find(tag="textarea"), "text area")
    words = textarea_value(s, area).split()
    box = need(s.find(tag="input", id="answer-input"), "answer field")
    return fill_then(s, m, [(box, words[-1].strip(".,;:!?"))], lambda: submit(s))


@plan("enter-date")
def enter_date(s: State, m: Memory) -> Action:
    found = re.search(r"(\d\d)/(\d\d)/(\d{4})", s.query)
    box = need(s.find(tag="input", type="date"), "date field")
    if not found:
        raise GiveUp(f"no date in {s.query!r}")
    if "its value is now ''" in s.last_result and m.once("iso"):  # the field took nothing: its own format
        return type_text(box, f"{found.group(3)}-{found.group(1)}-{found.group(2)}")
    return fill_then(s, m, [(box, found.group(0))], lambda: submit(s))


@plan("enter-time")
def enter_time(s: State, m: Memory) -> Action:
    found = re.search(r"(\d+):(\d\d) ?([AP]M)", s.query)
    box = need(s.find(tag="input", type="time"), "time field")
    if not found:
        raise GiveUp(f"no time in {s.query!r}")
    if "its value is now ''" in s.last_result and m.once("iso"):  # the field took nothing: its own format
        hour = int(found.group(1)) % 12 + (12 if found.group(3) == "PM" else 0)
        return type_text(box, f"{hour:02d}:{found.group(2)}")
    return fill_then(s, m, [(box, found.group(0))], lambda: submit(s))


@plan("odd-or-even")
def odd_or_even(s: State, m: Memory) -> Action:
    texts = dict(s.text_lines())
    for e in s.all("Odd", tag="button"):
        number = next((texts[i] for i in range(e.line + 1, e.line + 3) if i in texts), None)
        if number is None or not re.fullmatch(r"-?\d+", number):
            raise GiveUp(f"no number shown after [{e.index}]")
        even = next(x for x in s.all("Even", tag="button") if x.line > e.line)
        pick = even if int(number) % 2 == 0 else e
        if m.once(f"mark {e.index}"):
            return click(pick)
    return submit(s)


@plan("guess-number")
def guess_number(s: State, m: Memory) -> Action:
    low, high = m.notes.get("range", (0, 9))
    feedback = " ".join(t for _, t in s.text_lines())
    last = m.notes.get("guess")
    if last is not None and m.notes.get("submitted"):
        if "higher" in feedback:
            low = last + 1
        elif "lower" in feedback:
            high = last - 1
        m.notes["range"] = (low, high)
        m.notes["submitted"] = False
        guess = (low + high) // 2
        m.notes["guess"] = guess
        return type_text(need(s.find(tag="input", id="tt"), "guess field"), str(guess))
    if last is None:
        m.notes["guess"] = (low + high) // 2
        return type_text(need(s.find(tag="input", id="tt"), "guess field"), str(m.notes["guess"]))
    m.notes["submitted"] = True
    return submit(s)


@plan("phone-book")
def phone_book(s: State, m: Memory) -> Action:
    found = re.match(r"Find (.+) in the contact book and click on their (\w+)", s.query)
    if not found:
        raise GiveUp(f"unexpected instruction {s.query!r}")
    name, field_name = found.groups()
    texts = s.text_lines()
    shown = [t for _, t in texts]
    if name in shown:
        label_line = next(i for i, t in texts if t.lower().rstrip(":") == field_name.lower())
        return click(need(next((e for e in s.elements if e.line > label_line), None), f"{field_name} link"))
    return click(need(s.find(">", tag="a"), "next page link"))


@plan("use-spinner")
def spinner(s: State, m: Memory) -> Action:
    found = re.search(r"Select (-?\d+) with the spinner", s.query)
    box = need(s.find(tag="input", role="spinbutton"), "spinner")
    if not found:
        raise GiveUp(f"unexpected instruction {s.query!r}")
    return fill_then(s, m, [(box, found.group(1))], lambda: submit(s))

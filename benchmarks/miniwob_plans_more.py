"""The oracle's plans for the multi-step MiniWoB++ tasks: trees, suggestions, searches, forms, reading values.

Registered into ``miniwob_plans.PLANS`` like the others; see that module for what a plan may read.
"""

from __future__ import annotations

import re

from miniwob_oracle import Action, Element, GiveUp, Memory, State, click, type_text
from miniwob_plans import fill_then, need, ordinal, plan, quoted, submit


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
        fits = e.tag in ("li", "div", "a") and e.label.startswith(start) and e.label.endswith(end)
        if fits and e.label != start and m.once("pick"):
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
    inputs = s.all(tag="input")
    lines = [e.line for e in s.elements]
    texts = s.text_lines()

    def between(a: int, b: int) -> str:
        return " ".join(t for i, t in texts if a < i < b)

    # a label sits above its field, or (one layout) right after it: then the first field has none above
    after = bool(inputs) and not between(max([x for x in lines if x < inputs[0].line] or [0]), inputs[0].line)
    for e in inputs:
        nxt = min([x for x in lines if x > e.line] or [len(s.lines)])
        prev = max([x for x in lines if x < e.line] or [0])
        near = between(e.line, nxt) if after else between(prev, e.line)
        label = " ".join([near, e.attr("placeholder"), e.attr("aria-label")]).lower()
        text = (
            director
            if "director" in label
            else genre
            if "genre" in label
            else year
            if re.search("year|date", label)
            else None
        )
        if text is None:
            raise GiveUp(f"field [{e.index}] has no label the state shows")
        values.append((e, text))
    go = s.find("Go!") or s.find("Submit") or s.find("Search")
    return fill_then(s, m, values, lambda: click(need(go, "submit button")))


@plan("form-sequence-2")
def form_sequence_2(s: State, m: Memory) -> Action:
    found = re.match(
        r'Check the (\d+)\w\w radio button and enter the number "(\d+)" into the (\d+)\w\w textbox', s.query
    )
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
        # only digits, x, spaces and + - * / reach eval (checked above): page text cannot run code here
        side = lambda t: eval(re.sub(r"(?<=\d) ?x ?(?=\d)", "*", t).replace("x", f"({x})") or "0")  # noqa: E731
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
    if found.group(1).endswith("…"):  # a long value shows its start and its end around " … ": the end is read
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
        return "scroll", {"index": area.index, "down": "top" not in s.query, "num_pages": 10}
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

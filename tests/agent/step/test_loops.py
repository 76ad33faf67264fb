"""Runs that break their own loops: moves judged by what they are, pages by whether they are new."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from notebook_agent.agent import PageAgent
from notebook_agent.agent.prompt.profiles import PROFILES
from notebook_agent.agent.step.loop_guard import LoopGuard, page_key, same_page
from notebook_agent.browser import BrowserSession
from notebook_agent.llm.scripted import ScriptedModel
from tests.agent.test_page_agent import index_of, step

BUTTON = {"tag": "button", "text": "Click Me!", "attributes": {"id": "go"}}
OTHER = {"tag": "a", "text": "Home", "attributes": {"href": "/"}}


def play(guard: LoopGuard, moves: list[tuple[dict[str, Any], int, str]]) -> list[str | None]:
    """Each (element, index, page after) in turn: the refusal (or None) of the move."""
    out = []
    for n, (element, index, page) in enumerate(moves, 1):
        refusal = guard.refusal("click_element_by_index", {"index": index}, element, n)
        out.append(refusal)
        if refusal is None:
            guard.made("click_element_by_index", {"index": index}, element, n)
        guard.page(page)
    return out


def test_the_same_move_with_nothing_new_is_refused_the_third_time() -> None:
    guard = LoopGuard()
    guard.page("start")
    refusals = play(guard, [(BUTTON, 0, "start"), (BUTTON, 0, "start"), (BUTTON, 0, "start")])
    assert refusals[:2] == [None, None] and refusals[2] is not None
    assert refusals[2].startswith("Not done: click_element_by_index on 'Click Me!' is what you did in steps 1 and 2")


def test_an_alternating_page_does_not_hide_a_loop() -> None:
    """The measured case: each click flips the page between two states, so the page always 'changed'."""
    guard = LoopGuard()
    guard.page("state A")
    pages = ["state B", "state A", "state B", "state A"]
    refusals = play(guard, [(BUTTON, i % 2, pages[i]) for i in range(4)])  # the index shifts too
    assert refusals[:2] == [None, None] and refusals[2] is not None


def test_a_b_a_b_is_caught() -> None:
    guard = LoopGuard()
    guard.page("p")
    refusals = play(guard, [(BUTTON, 0, "p"), (OTHER, 1, "q"), (BUTTON, 0, "p"), (OTHER, 1, "q"), (BUTTON, 0, "p")])
    assert (
        refusals[:4] == [None] * 4
        and refusals[4] is not None
        and "with click_element_by_index on 'Home'" in (refusals[4])
    )


def test_a_refused_move_the_model_turned_from_cannot_be_decoded_until_a_new_page_appears() -> None:
    """The step right after a refusal may still write the refused move (the model may insist); once it made
    another move instead, the refused one is out of decoding until a new page."""
    guard = LoopGuard()
    guard.page("p")
    elements = {0: BUTTON, 1: OTHER, 7: BUTTON}  # the same button listed twice (a sticky header, say)
    assert guard.exclusions(elements) == {}
    play(guard, [(BUTTON, 0, "p"), (BUTTON, 0, "p"), (BUTTON, 0, "p")])
    assert guard.exclusions(elements) == {}  # the model may insist on it
    assert guard.refusal("go_to_url", {"url": "/a"}, None, 4) is None  # it did something else
    assert guard.exclusions(elements) == {"click_element_by_index": {0, 7}}
    guard.made("go_to_url", {"url": "/a"}, None, 4)
    guard.page("p")
    guard.made("go_to_url", {"url": "/a"}, None, 5)
    guard.page("p")
    assert guard.refusal("go_to_url", {"url": "/a"}, None, 6) is not None
    assert guard.exclusions(elements) == {"click_element_by_index": {0, 7}}
    assert guard.refusal("scroll", {}, None, 7) is None  # waiting and scrolling do not turn away from it
    assert guard.refusal("click_element_by_index", {"index": 1}, OTHER, 7) is None
    assert guard.exclusions(elements) == {"click_element_by_index": {0, 7}, "go_to_url": None}
    guard.page("a page not seen before")
    assert guard.exclusions(elements) == {}


def test_going_back_to_a_page_to_do_something_else_is_not_a_loop() -> None:
    """The list page again and again, each time for another item: the moves in between differ."""
    guard = LoopGuard()
    guard.page("list")
    items = [{"tag": "a", "text": f"Item {n}", "attributes": {}} for n in range(3)]
    moves: list[tuple[dict[str, Any], int, str]] = []
    for item in items:
        moves += [(OTHER, 0, "list"), (item, 1, "list")]  # the same pages: nothing new to see
    assert play(guard, moves) == [None] * 6


def test_next_through_new_pages_is_never_refused() -> None:
    guard = LoopGuard()
    guard.page("results page 1")
    refusals = play(guard, [(BUTTON, 3, f"results page {n}") for n in range(2, 12)])
    assert refusals == [None] * 10


def test_three_refusals_end_the_run_as_stuck_saying_what_was_tried() -> None:
    """Three loops refused, the model turning from each to the next: stuck."""
    guard = LoopGuard(budget=3)
    guard.page("p")
    third = {"tag": "a", "text": "About", "attributes": {"href": "/about"}}
    play(guard, [(BUTTON, 0, "p")] * 3)
    assert guard.stuck is None
    play(guard, [(OTHER, 1, "p")] * 3)
    assert guard.stuck is None
    play(guard, [(third, 2, "p")] * 3)
    assert guard.stuck is None  # it may still insist on the last one
    play(guard, [(BUTTON, 0, "p")])
    assert guard.stuck is not None and guard.stuck.startswith("Stuck: the model repeated moves that led nowhere 3")
    assert "click_element_by_index on 'Click Me!'" in guard.stuck


def test_a_refused_move_made_again_at_once_runs_and_is_not_held_against_the_run() -> None:
    """The documented override, for every kind of refusal: a loop, a move that changes nothing, a rule."""
    guard = LoopGuard(budget=1, guard_repeats=True, guard_empty_fields=True)
    guard.page("p")
    refusals = play(guard, [(BUTTON, 0, "p")] * 7)
    assert [r is None for r in refusals] == [True, False, True, False, True, False, True]  # a rule, then loops
    assert refusals[1] is not None and "just now" in refusals[1]
    assert refusals[3] is not None and "make it again: it will run" in refusals[3]
    assert guard.stuck is None and guard.refused == [] and len(guard.insisted) == 3
    assert guard.refusal("input_text", {"index": 1, "text": "ada"}, FIELD, 8) is not None
    assert guard.refusal("input_text", {"index": 1, "text": "ada"}, FIELD, 9) is None
    assert guard.refusal("go_to_url", {"url": "http://a.test/"}, None, 10, "http://a.test/") is not None
    assert guard.refusal("go_to_url", {"url": "http://a.test/"}, None, 11, "http://a.test/") is None
    assert guard.stuck is None


def test_no_new_page_for_a_while_is_said() -> None:
    guard = LoopGuard(quiet_after=3)
    assert guard.page("a") == []
    guard.made("click_element_by_index", {"index": 0}, BUTTON, 1)
    assert guard.page("b") == [] and guard.page("a") == [] and guard.page("b") == []
    notes = guard.page("a")
    assert notes and notes[0].startswith("The last 3 steps showed no page you had not seen before")


def test_indices_and_new_markers_do_not_make_a_page_new() -> None:
    assert page_key("[3]<a>Home />\ntext") == page_key("*[7]<a>Home />\ntext")
    assert page_key("[3]<a>Home />") != page_key("[3]<a>About />")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([BUTTON, OTHER]), st.integers(0, 5), st.integers(0, 30)), max_size=20))
def test_a_move_is_only_refused_after_two_like_it_with_nothing_new_since(moves: list[Any]) -> None:
    guard = LoopGuard()
    guard.page("page 0")
    history: list[tuple[str, int]] = []  # (element text, distinct pages seen when made)
    refused_last = None  # the element text of the move refused last, if the model has not moved since
    for n, (element, index, page) in enumerate(moves, 1):
        refusal = guard.refusal("click_element_by_index", {"index": index}, element, n)
        window = history[-6:]
        at = [i for i, (text, _) in enumerate(window) if text == element["text"]]
        expected = (
            refused_last != element["text"]
            and len(at) >= 2
            and len(guard.seen) <= window[at[-1]][1]
            and [t for t, _ in window[at[-2] + 1 : at[-1]]] == [t for t, _ in window[at[-1] + 1 :]]
        )
        assert (refusal is not None) == expected
        refused_last = element["text"] if refusal is not None else None
        if refusal is None:
            guard.made("click_element_by_index", {"index": index}, element, n)
            history.append((element["text"], len(guard.seen)))
        guard.page(f"page {page}")


FIELD = {"tag": "input", "text": "Username", "attributes": {"id": "user", "type": "text", "value": "ada"}}


def test_a_move_that_cannot_change_anything_is_refused_the_first_time() -> None:
    guard = LoopGuard()
    guard.page("p")
    said = guard.refusal("input_text", {"index": 1, "text": "ada"}, FIELD, 1)
    assert said is not None and said.startswith("Not done: [1] already contains 'ada'")
    assert guard.refusal("input_text", {"index": 1, "text": "ada lovelace"}, FIELD, 2) is None
    empty = FIELD | {"attributes": {"id": "user", "type": "text"}}
    assert guard.refusal("input_text", {"index": 1, "text": "ada"}, empty, 2) is None
    here = "http://127.0.0.1:8000/login.html"
    assert guard.refusal("go_to_url", {"url": "127.0.0.1:8000/login.html#top"}, None, 3, here) is not None
    assert guard.refusal("go_to_url", {"url": "http://127.0.0.1:8000/index.html"}, None, 3, here) is None
    assert guard.exclusions({1: FIELD}) == {"input_text": {1}, "go_to_url": None}  # until a new page
    guard.page("a page not seen before")
    assert guard.exclusions({1: FIELD}) == {}


PATHS = st.sampled_from(["", "/", "/a", "/a/", "/a/b", "/A"])
QUERIES = st.sampled_from(["", "?q=1", "?q=2"])


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["http", "https"]),
    st.sampled_from(["127.0.0.1", "localhost", "example.com"]),
    st.sampled_from([None, 80, 443, 8000]),
    PATHS,
    QUERIES,
    st.sampled_from(["", "#x"]),
    st.data(),
)
def test_same_page_is_what_the_browser_would_load_again(
    scheme: str, host: str, port: int | None, path: str, query: str, fragment: str, data: st.DataObject
) -> None:
    """Spellings of the tab's own URL (explicit default port, trailing slash, fragment, no scheme for a local
    address) are the same page; any other scheme, host, port, path or query is not."""
    netloc = host + (f":{port}" if port else "")
    here = f"{scheme}://{netloc}{path}{query}"
    default = {"http": 80, "https": 443}[scheme]
    same_netloc = data.draw(st.sampled_from([netloc, f"{host}:{port or default}"]))
    assert same_page(f"{scheme}://{same_netloc}{path.rstrip('/') or '/'}{query}{fragment}", here)
    other_path = data.draw(PATHS.filter(lambda p: p.rstrip("/") != path.rstrip("/")))
    other_query = data.draw(QUERIES.filter(lambda q: q != query))
    other_scheme = "https" if scheme == "http" else "http"
    for url in (
        f"{scheme}://{netloc}{other_path}{query}",
        f"{scheme}://{netloc}{path}{other_query}",
        f"{scheme}://{host}:9{path}{query}",
        f"{other_scheme}://{host}:{port or default}{path}{query}" if port else f"{other_scheme}://{host}{path}{query}",
    ):
        assert not same_page(url, here), url
    assert not same_page("", here) and not same_page("http://[bad", here)


async def test_retyping_what_a_field_holds_is_refused_and_the_run_goes_on(browser: BrowserSession) -> None:
    await browser.page.set_content("<input id=user placeholder=Username><button>Sign in</button>")
    field = step("input_text", lambda c: {"index": index_of(c, r"Username"), "text": "ada"})
    model = ScriptedModel([field, field, step("done", {"text": "typed", "success": True})])
    result = await PageAgent(model=model, browser=browser, max_steps=5).run("type ada")
    assert [s.result.startswith("Not done:") for s in result.steps] == [False, True, False]
    assert "already contains 'ada'" in result.steps[1].result and result.status == "completed"
    assert await browser.page.input_value("#user") == "ada"


ALTERNATING = """<p id=s>State A</p>
<button onclick="flip()">Click Me!</button>
<script>
function flip() {
  const p = document.getElementById('s');
  p.textContent = p.textContent === 'State A' ? 'State B' : 'State A';
}
</script>"""


THREE = ALTERNATING + "<button>Other</button><a href='#' onclick='return false'>Third</a>"


async def test_a_model_going_from_loop_to_loop_ends_stuck(browser: BrowserSession) -> None:
    """Refused three times, turning each time to another move that leads nowhere: stuck, saying what it tried."""
    await browser.page.set_content(THREE)
    click, other, third = (
        step("click_element_by_index", lambda c, n=name: {"index": index_of(c, n)})
        for name in (r"Click Me", r"Other", r"Third")
    )
    agent = PageAgent(model=ScriptedModel([click] * 3 + [other] * 3 + [third] * 3 + [click] * 5), browser=browser)
    result = await agent.run("click until it works")
    assert result.status == "failed" and result.error is not None and result.error.startswith("Stuck:")
    assert len(result.steps) == 10  # the tenth turned from the third refusal too
    refused = [s for s in result.steps if s.result.startswith("Not done:")]
    assert len(refused) == 3 and await browser.page.inner_text("#s") in ("State A", "State B")


async def test_a_model_that_insists_is_never_ended_stuck(browser: BrowserSession) -> None:
    """The same click forever on an alternating page: each refusal is insisted on, so the click runs every
    other step and the run ends at max_steps, not as stuck (a guard never ends a run on a move it cannot know
    is wrong)."""
    await browser.page.set_content(ALTERNATING)
    click = step("click_element_by_index", lambda c: {"index": index_of(c, r"Click Me")})
    result = await PageAgent(model=ScriptedModel([click] * 8), browser=browser, max_steps=8).run("click it")
    assert result.status == "max_steps"
    assert [s.result.startswith("Not done:") for s in result.steps] == [False, False, True] + [False, True] * 2 + [
        False
    ]


async def test_after_a_refusal_the_next_request_cannot_name_that_button(browser: BrowserSession) -> None:
    """The decoding schema (what a schema-constrained server lets the model write) of the step after a refusal
    has no index for that button; the prompt's schema is the same as every other step's (the cache keeps it)."""
    await browser.page.set_content(THREE)
    click = step("click_element_by_index", lambda c: {"index": index_of(c, r"Click Me")})
    other = step("click_element_by_index", lambda c: {"index": index_of(c, r"Other")})
    model = ScriptedModel([click] * 3 + [other, step("done", {"text": "gave up", "success": False})])
    result = await PageAgent(model=model, browser=browser, max_steps=6).run("click until it works")
    assert result.steps[2].result.startswith("Not done:")
    button = result.steps[2].args["index"]

    def clickable(request: int) -> list[int]:
        (spec,) = model.requests[request][0].tools
        assert spec.decoding is not None
        members = {next(iter(m["properties"])): m["properties"] for m in spec.decoding["properties"]["action"]["anyOf"]}
        inner = members.get("click_element_by_index", {}).get("click_element_by_index", {})
        return list(inner.get("properties", {}).get("index", {}).get("enum", []))

    # the step right after the refusal may insist; after the model turned to another button, it cannot
    assert button in clickable(2) and button in clickable(3) and button not in clickable(4)
    assert model.requests[2][0].tools[0].parameters == model.requests[4][0].tools[0].parameters


async def test_the_decoding_schema_offers_each_form_action_only_what_it_can_act_on(browser: BrowserSession) -> None:
    """Measured: a 1.5B model typed its search words into the Search button. With the schema, it cannot."""
    await browser.page.set_content(
        "<input placeholder=Search><button>Search</button><select><option>A</option><option>B</option></select>"
    )
    model = ScriptedModel([step("done", {"text": "ok", "success": True})])
    await PageAgent(model=model, browser=browser, max_steps=2).run("search")
    (spec,) = model.requests[0][0].tools
    assert spec.decoding is not None
    members = {next(iter(m["properties"])): m["properties"] for m in spec.decoding["properties"]["action"]["anyOf"]}

    def indices(action: str) -> list[int]:
        return list(members[action][action]["properties"]["index"]["enum"])

    snapshot = browser.last_snapshot
    assert snapshot is not None
    text = snapshot.text
    field, button, dropdown = (index_of_text(text, n) for n in ("Search />", "<button>Search", "<select"))
    assert indices("input_text") == [field]
    assert indices("click_element_by_index") == sorted([field, button, dropdown])
    assert dropdown in indices("select_dropdown_option") and field in indices("select_dropdown_option")


def index_of_text(text: str, needle: str) -> int:
    line = next(line for line in text.splitlines() if needle in line)
    return int(line.split("[", 1)[1].split("]", 1)[0])


async def test_clicking_a_box_just_checked_is_refused_once_then_runs(browser: BrowserSession) -> None:
    """A 1.5B model checked "Email" and then clicked it again, unchecking it: the second click is refused once,
    saying it undoes the first; a third (the model means it) runs."""
    await browser.page.set_content("<label><input type=checkbox id=e> Email</label><button>Save</button>")
    box = step("click_element_by_index", lambda c: {"index": index_of(c, r"type=checkbox")})
    model = ScriptedModel([box, box, box, step("done", {"text": "ok", "success": True})])
    result = await PageAgent(model=model, browser=browser, max_steps=6).run("turn on Email")
    assert [s.result.startswith("Not done:") for s in result.steps] == [False, True, False, False]
    assert "clicking it again undoes that" in result.steps[1].result
    assert "checked=true" in result.steps[1].result
    assert await browser.page.is_checked("#e") is False  # the model insisted: two clicks ran
    assert result.status == "completed"


LOGIN = """<form onsubmit="event.preventDefault(); document.getElementById('out').textContent =
  (document.getElementById('p').value === 'lovelace' ? 'Welcome' : 'Wrong password')">
<input id=u aria-label=Username><input id=p type=password aria-label=Password><button>Sign in</button></form>
<p id=out></p>"""


async def test_submitting_a_form_with_an_empty_password_is_refused_once(browser: BrowserSession) -> None:
    await browser.page.set_content(LOGIN)
    user = step("input_text", lambda c: {"index": index_of(c, r"Username"), "text": "ada"})
    password = step("input_text", lambda c: {"index": index_of(c, r"type=password"), "text": "lovelace"})
    sign_in = step("click_element_by_index", lambda c: {"index": index_of(c, r"Sign in")})
    model = ScriptedModel([user, sign_in, password, sign_in, step("done", {"text": "in", "success": True})])
    result = await PageAgent(model=model, browser=browser, max_steps=8).run("sign in as ada / lovelace")
    assert [s.result.startswith("Not done:") for s in result.steps] == [False, True, False, False, False]
    assert "with these fields still empty" in result.steps[1].result and "Password" in result.steps[1].result
    assert await browser.page.inner_text("#out") == "Welcome"


async def test_a_model_that_means_to_submit_empty_fields_can(browser: BrowserSession) -> None:
    await browser.page.set_content(LOGIN)
    sign_in = step("click_element_by_index", lambda c: {"index": index_of(c, r"Sign in")})
    model = ScriptedModel([sign_in, sign_in, step("done", {"text": "tried", "success": False})])
    result = await PageAgent(model=model, browser=browser, max_steps=5).run("press sign in")
    assert [s.result.startswith("Not done:") for s in result.steps] == [True, False, False]
    assert await browser.page.inner_text("#out") == "Wrong password"


def test_the_small_profile_refuses_once_a_move_made_again_at_once() -> None:
    """A 1.5B model clicked "Save" three times after it had worked: with ``guard_repeats`` (the small profile) the
    second click in a row is refused once, kept out of decoding until a new page, and runs when insisted on."""
    save = {"tag": "button", "text": "Save", "attributes": {}}
    guard = LoopGuard(guard_repeats=True)
    guard.page("form")
    refusals = play(guard, [(save, 5, "saved"), (save, 5, "saved"), (save, 5, "saved")])
    assert refusals[0] is None and refusals[2] is None
    assert refusals[1] is not None and "call done with success=true" in refusals[1]
    assert LoopGuard().refusal("click_element_by_index", {"index": 5}, save, 1) is None
    plain = LoopGuard()
    plain.page("form")
    assert play(plain, [(save, 5, "saved"), (save, 5, "saved")]) == [None, None]  # other profiles: no rule
    blocked = LoopGuard(guard_repeats=True)
    blocked.page("form")
    play(blocked, [(save, 5, "saved"), (save, 5, "saved")])
    assert blocked.exclusions({5: save}) == {}  # the next step may insist
    play(blocked, [(OTHER, 1, "saved")])
    assert blocked.exclusions({5: save, 1: OTHER}) == {"click_element_by_index": {5}}
    blocked.page("a new page")
    assert blocked.exclusions({5: save}) == {}


def test_the_small_profile_refuses_once_a_click_on_an_empty_text_field() -> None:
    """A 1.5B model clicked the empty password field again and again to "fill" it: with ``guard_empty_fields`` (the
    small profile) such a click is refused once with how to type instead, and runs when insisted on. A field that
    holds text, a field that is not for text, and other profiles are not refused."""
    password = {"tag": "input", "text": "", "attributes": {"type": "password", "name": "pw"}}
    typed = {"tag": "input", "text": "", "attributes": {"type": "password", "name": "pw", "value": "[masked]"}}
    note = {"tag": "textarea", "text": "", "attributes": {"name": "note"}}
    box = {"tag": "input", "text": "", "attributes": {"type": "checkbox", "name": "ok"}}
    guard = LoopGuard(guard_empty_fields=True)
    guard.page("sign in")
    refusals = play(guard, [(password, 4, "clicked"), (password, 4, "clicked")])
    assert refusals[0] is not None and "use input_text with index 4" in refusals[0] and refusals[1] is None
    for element in (typed, box):
        fresh = LoopGuard(guard_empty_fields=True)
        fresh.page("sign in")
        assert play(fresh, [(element, 4, "clicked")]) == [None]
    textarea = LoopGuard(guard_empty_fields=True)
    textarea.page("contact")
    assert play(textarea, [(note, 2, "clicked")])[0] is not None
    plain = LoopGuard()
    plain.page("sign in")
    assert play(plain, [(password, 4, "clicked")]) == [None]
    assert PROFILES["small"].guard_empty_fields and not PROFILES["default"].guard_empty_fields


async def test_after_a_rule_naming_fields_the_small_profile_decodes_only_typing_into_them(
    browser: BrowserSession,
) -> None:
    """The small profile's guide: right after "fill the password first" (a submit with it empty) or "type, do
    not click" (a click on the empty field), the next step's decoding schema offers only input_text on that
    field, and done; the prompt is unchanged. The step after that is free again. The default profile has no
    guide."""
    await browser.page.set_content(LOGIN)
    user = step("input_text", lambda c: {"index": index_of(c, r"Username"), "text": "ada"})
    password = step("input_text", lambda c: {"index": index_of(c, r"type=password"), "text": "lovelace"})
    pw_click = step("click_element_by_index", lambda c: {"index": index_of(c, r"type=password")})
    sign_in = step("click_element_by_index", lambda c: {"index": index_of(c, r"Sign in")})
    done = step("done", {"text": "in", "success": True})

    def offered(request: Any) -> dict[str, Any]:
        (spec,) = request[0].tools
        schema = spec.decoding or spec.parameters
        members = schema["properties"]["action"]["anyOf"]
        return {next(iter(m["properties"])): next(iter(m["properties"].values())) for m in members}

    for profile, moves in (("small", [user, sign_in, password, sign_in, done]), ("small", [pw_click, password, done])):
        await browser.page.set_content(LOGIN)
        model = ScriptedModel(moves)
        result = await PageAgent(model=model, browser=browser, max_steps=8, profile=profile).run("sign in")
        assert result.steps[-2].result.startswith("Clicked") or result.steps[-2].result.startswith("Typed")
        refused = next(i for i, s in enumerate(result.steps) if s.result.startswith("Not done:"))
        guided = offered(model.requests[refused + 1])
        assert set(guided) == {"input_text", "click_element_by_index", "done"}, guided
        field = index_of(model.requests[refused + 1][0], r"type=password")
        assert guided["input_text"]["properties"]["index"]["enum"] == [field]
        again = result.steps[refused].args["index"]  # the refused click itself: the model may insist
        assert guided["click_element_by_index"]["properties"]["index"]["enum"] == [again]
        assert "click_element_by_index" in offered(model.requests[refused + 2])  # for one step only
    await browser.page.set_content(LOGIN)
    model = ScriptedModel([user, sign_in, password, sign_in, done])
    await PageAgent(model=model, browser=browser, max_steps=8, profile="default").run("sign in")
    assert "click_element_by_index" in offered(model.requests[2])


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(
        [
            ("go_back", {}, None),
            ("click_element_by_index", {"index": 0}, BUTTON),
            ("go_to_url", {"url": "http://a.test/x"}, None),
            ("send_keys", {"keys": "Enter"}, None),
        ]
    ),
    st.integers(min_value=1, max_value=3),
)
def test_the_ways_out_never_name_the_move_that_led_nowhere(move: Any, quiet_after: int) -> None:
    """A model going back and back was told "Doing it again will not help ... go_back" and went back again: the
    refusal and the no-new-page note name other ways out, never the move they are about."""
    action, args, element = move
    guard = LoopGuard(quiet_after=quiet_after)
    guard.page("p")
    notes: list[str] = []
    refusal = None
    for n in range(1, 4):
        refusal = guard.refusal(action, args, element, n)
        if refusal is None:
            guard.made(action, args, element, n)
        notes += guard.page("p")
    assert refusal is not None and notes
    ways = refusal.split("Choose a different element or action (", 1)[1].split(")", 1)[0]
    assert action not in ways.split(", ") and "the next field or button the task needs" in ways
    said = notes[0].split("Try something different (", 1)[1].split(")", 1)[0]
    assert action not in said.split(", ") and "another element" in said

"""No guard blocks a right move: a model that insists on every refused move (makes it again at once, the
documented override) always gets it run, can always write it under constrained decoding, and is never ended as
stuck, whatever the moves and pages, with every rule and the guide on."""

from __future__ import annotations

import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from notebook_agent.agent import PageAgent
from notebook_agent.agent.prompt.agent_output import agent_output
from notebook_agent.agent.prompt.profiles import PROFILES
from notebook_agent.agent.step.loop_guard import LoopGuard
from notebook_agent.browser import BrowserSession
from notebook_agent.llm.scripted import ScriptedModel
from tests.agent.test_page_agent import index_of, state

HERE = "http://127.0.0.1:8000/form.html"
ELEMENTS: dict[int, dict[str, Any]] = {
    0: {"tag": "button", "text": "Submit", "attributes": {"id": "go"}},
    1: {"tag": "a", "text": "Home", "attributes": {"href": "/"}},
    2: {"tag": "input", "text": "", "attributes": {"type": "text", "name": "q"}},
    3: {"tag": "input", "text": "", "attributes": {"type": "text", "name": "user", "value": "ada"}},
    4: {"tag": "input", "text": "", "attributes": {"type": "checkbox", "name": "ok"}},
    5: {"tag": "input", "text": "", "attributes": {"type": "password", "name": "pw"}},
    6: {"tag": "textarea", "text": "", "attributes": {"name": "note"}},
}
MOVES: st.SearchStrategy[tuple[str, dict[str, Any]]] = st.one_of(
    st.tuples(st.just("click_element_by_index"), st.sampled_from(sorted(ELEMENTS)).map(lambda i: {"index": i})),
    st.tuples(
        st.just("input_text"),
        st.builds(lambda i, t: {"index": i, "text": t}, st.sampled_from([2, 3, 5, 6]), st.sampled_from(["ada", "x"])),
    ),
    st.tuples(
        st.just("go_to_url"), st.sampled_from([HERE, "http://127.0.0.1:8000/other.html"]).map(lambda u: {"url": u})
    ),
    st.tuples(st.just("send_keys"), st.sampled_from(["Enter", "ArrowDown"]).map(lambda k: {"keys": k})),
    st.tuples(st.just("scroll"), st.just({})),
)

#: Goals a model states: none, naming an element (rightly or not), naming two.
GOALS = st.sampled_from(["", "Click Submit.", "Click the Home link", "Go Home, then Submit", "Type ada", "submitted"])


def decodable(guard: LoopGuard, action: str, args: dict[str, Any]) -> bool:
    """Whether a schema-constrained model could write this move now (as run.py builds the decoding schema)."""
    expected = guard.expected(ELEMENTS)
    index = args.get("index")
    if expected is not None:
        return action in expected and (index is None or index in expected[action])
    excluded = guard.exclusions(ELEMENTS)
    if action not in excluded:
        return True
    hit = excluded[action]
    return hit is not None and index not in hit


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.tuples(MOVES, st.integers(0, 3), st.booleans(), GOALS), max_size=30),
    st.sampled_from(["small", "default"]),
    st.integers(1, 3),
)
def test_a_model_that_insists_on_every_refused_move_is_never_blocked(
    moves: list[Any], profile: str, budget: int
) -> None:
    guard = LoopGuard.of(PROFILES[profile])
    guard.budget = budget
    shown = "page 0"
    guard.page(shown)
    step = 0
    for (action, args), page, submits_empty, goal in moves:
        element = ELEMENTS.get(args["index"]) if "index" in args else None
        line = {"line": "[5]<input type=password />"}
        unfilled = [ELEMENTS[5] | line] if submits_empty and action == "click_element_by_index" else []
        for attempt in (1, 2):
            step += 1
            assert decodable(guard, action, args), (attempt, action, args)
            refusal = guard.refusal(action, args, element, step, HERE, unfilled, goal)
            if refusal is None:
                break
            assert attempt == 1, f"insisting on {action} {args} was refused again: {refusal}"
            assert guard.stuck is None, guard.stuck
            guard.page(shown)  # a refused move changes nothing: the same page again
        guard.made(action, args, element, step)
        assert guard.stuck is None, guard.stuck
        shown = f"page {page}"
        guard.page(shown)


def constrained(action: str, pattern: str, **args: Any) -> Any:
    """A scripted step that, like a schema-constrained model, can only write what this step's decoding schema
    allows: it fails the test if the move is not decodable."""

    def make(ctx: Any) -> Any:
        index = index_of(ctx, pattern)
        (spec,) = ctx.tools
        members = (spec.decoding or spec.parameters)["properties"]["action"]["anyOf"]
        offered = {next(iter(m["properties"])): next(iter(m["properties"].values())) for m in members}
        assert action in offered, f"{action} is not decodable: {sorted(offered)}"
        allowed = offered[action]["properties"]["index"].get("enum")
        assert allowed is None or index in allowed, f"[{index}] is not decodable for {action}: {allowed}"
        return agent_output(action, {"index": index, **args})

    return make


FOCUS = """<p>Focus into the textbox.</p><input id=tt type=text>
<script>document.getElementById('tt').addEventListener('focus', () => { document.title = 'focused' })</script>"""


async def test_a_task_that_asks_to_click_into_an_empty_text_box_is_done(browser: BrowserSession) -> None:
    """The small profile rules a click on an empty text field (small models click to "fill" one); a task that
    asks for exactly that click insists, and the click runs: the guide of the next step offers it again."""
    await browser.page.set_content(FOCUS)
    click = constrained("click_element_by_index", r"<input")
    model = ScriptedModel([click, click, agent_output("done", {"text": "focused", "success": True})])
    result = await PageAgent(model=model, browser=browser, profile="small", max_steps=5).run("Focus into the textbox.")
    assert [s.result.startswith("Not done:") for s in result.steps] == [True, False, False]
    assert result.status == "completed" and await browser.page.title() == "focused"


LOOKALIKES = """<p>3</p><button onclick="mark(this)">Odd</button><button onclick="mark(this)">Even</button>
<p>8</p><button onclick="mark(this)">Odd</button><button onclick="mark(this)">Even</button>
<p>5</p><button onclick="mark(this)">Odd</button><button onclick="mark(this)">Even</button>
<script>const marks = []; function mark(b) { marks.push(b.textContent); document.title = marks.join(' '); }</script>"""


def nth(action: str, pattern: str, n: int) -> Any:
    """A step acting on the ``n``-th element line matching ``pattern`` (0: the first)."""

    def make(ctx: Any) -> Any:
        lines = re.finditer(r"^\s*\*?\[(\d+)\]<[^\n]*" + pattern, state(ctx), re.MULTILINE)  # the page's, not history's
        hits = [int(m.group(1)) for m in lines]
        return agent_output(action, {"index": hits[n]})

    return make


async def test_look_alike_buttons_are_different_moves(browser: BrowserSession) -> None:
    """MiniWoB++'s odd-or-even: one "Odd"/"Even" pair per number. Marking the second number "Odd" right after the
    first is another button, not the same click made again: no rule, with every rule on. Clicking the very
    same button again still is one."""
    await browser.page.set_content(LOOKALIKES)
    odd = [nth("click_element_by_index", r">Odd />", n) for n in range(3)]
    script = [odd[0], odd[1], odd[2], odd[2], agent_output("done", {"text": "marked", "success": True})]
    result = await PageAgent(model=ScriptedModel(script), browser=browser, profile="small", max_steps=6).run(
        "Mark the numbers below as odd or even."
    )
    assert [s.result.startswith("Not done:") for s in result.steps] == [False, False, False, True, False], [
        s.result for s in result.steps
    ]
    assert await browser.page.title() == "Odd Odd Odd"


@settings(max_examples=200, deadline=None)
@given(st.permutations(range(4)), st.sampled_from(["small", "default"]))
def test_each_of_several_look_alikes_once_is_never_refused(order: list[int], profile: str) -> None:
    """Elements that read the same (tag, text, attributes) but are different ones (``twin``), each acted on once
    in any order, on a page that does not change: never a refusal, under any profile."""
    guard = LoopGuard.of(PROFILES[profile])
    guard.page("four look-alike buttons")
    for step_no, twin in enumerate(order, 1):
        element = {"tag": "button", "text": "Even", "attributes": {}, "twin": twin}
        args = {"index": 10 + 2 * twin}
        assert guard.refusal("click_element_by_index", args, element, step_no, HERE) is None, (order, twin)
        guard.made("click_element_by_index", args, element, step_no)
        guard.page("four look-alike buttons")
    assert guard.stuck is None


START = {"tag": "div", "text": "START", "attributes": {"id": "sync-task-cover"}}


def test_a_goal_copied_from_the_step_before_is_questioned_once() -> None:
    """Measured with a 1.5B model on MiniWoB++: Submit scored and ended the episode; the next step's goal still
    read "Click Submit", and it clicked what had taken the button's place (START: a new episode). The click is
    refused once saying what happened; made again, it runs."""
    guard = LoopGuard.of(PROFILES["small"])
    guard.page("the form")
    assert guard.refusal("click_element_by_index", {"index": 0}, ELEMENTS[0], 1, HERE, (), "Click Submit.") is None
    guard.made("click_element_by_index", {"index": 0}, ELEMENTS[0], 1)
    guard.page("covered")
    said = guard.refusal("click_element_by_index", {"index": 0}, START, 2, HERE, (), "Click Submit.")
    assert said is not None and "names 'Submit', which you clicked in step 1" in said and "'START'" in said
    assert "call done" in said
    guard.page("covered")
    assert guard.refusal("click_element_by_index", {"index": 0}, START, 3, HERE, (), "Click Submit.") is None
    default = LoopGuard.of(PROFILES["default"])  # the rules are the small profile's
    default.page("the form")
    default.made("click_element_by_index", {"index": 0}, ELEMENTS[0], 1)
    assert default.refusal("click_element_by_index", {"index": 0}, START, 2, HERE, (), "Click Submit.") is None


NAMES = st.sampled_from(["Submit", "Home", "Next", "Sub", "Yes", "No", "OK", "Cancel", "START", "Save draft"])


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(NAMES, st.sampled_from(["Click {}", "Press the {} button", "{}", "Click '{}' now"])), max_size=12
    )
)
def test_a_goal_that_names_the_element_clicked_is_never_questioned(clicks: list[tuple[str, str]]) -> None:
    """A model whose goal names what it clicks (in any of the ways goals are written) is never refused for its
    goal, whatever it clicked before: the rule needs a goal naming another element, clicked earlier."""
    guard = LoopGuard.of(PROFILES["small"])
    for step, (name, how) in enumerate(clicks, 1):
        guard.page(f"page {step}")
        element = {"tag": "button", "text": name, "attributes": {}}
        said = guard.refusal("click_element_by_index", {"index": 1}, element, step, HERE, (), how.format(name))
        assert said is None or "your goal names" not in said, said
        if said is not None:  # another rule (a repeat): the model insists
            assert (
                guard.refusal("click_element_by_index", {"index": 1}, element, step, HERE, (), how.format(name)) is None
            )
        guard.made("click_element_by_index", {"index": 1}, element, step)


def test_a_goal_naming_both_elements_or_part_of_a_word_is_not_questioned() -> None:
    guard = LoopGuard.of(PROFILES["small"])
    guard.page("one")
    guard.made("click_element_by_index", {"index": 1}, ELEMENTS[1], 1)  # Home
    guard.page("two")
    assert (
        guard.refusal("click_element_by_index", {"index": 0}, ELEMENTS[0], 2, HERE, (), "Go Home, then Submit") is None
    )
    assert guard.refusal("click_element_by_index", {"index": 0}, ELEMENTS[0], 2, HERE, (), "Open the Homepage") is None

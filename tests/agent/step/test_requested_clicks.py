"""A success claimed with a click the request asked for never made: refused once (made again, it stands), and on
the last step the run ends failed saying which click. Generated requests and runs check that the check never
stands in the way of a run that did click what was asked, or pressed keys, or insists."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from notebook_agent.agent import PageAgent
from notebook_agent.agent.prompt.agent_output import agent_output
from notebook_agent.agent.step.requested_clicks import ClaimCheck, asked_names, unclicked
from notebook_agent.browser import BrowserSession
from notebook_agent.llm.scripted import ScriptedModel
from tests.agent.test_page_agent import index_of

PAGE: dict[int, dict[str, Any]] = {
    0: {"tag": "input", "role": "", "text": "", "attributes": {"type": "text"}},
    1: {"tag": "button", "role": "", "text": "Submit", "attributes": {}},
    2: {"tag": "a", "role": "", "text": "previous", "attributes": {"href": "#"}},
    3: {"tag": "input", "role": "", "text": "", "attributes": {"type": "submit", "value": "Save draft"}},
    4: {"tag": "div", "role": "", "text": "Cancel", "attributes": {}},  # not a control: never named as one
    5: {"tag": "button", "role": "", "text": "OK", "attributes": {}},
    6: {"tag": "button", "role": "", "text": "OK", "attributes": {}},  # two OKs: which one cannot be said
}


def test_what_a_request_asks_to_click() -> None:
    assert asked_names("Select hv and click Submit.") == ["Submit"]
    assert asked_names('Click on the "previous" button.') == ["previous"]
    assert asked_names("Type 7 and press submit when done; then tap 'Save draft'") == ["submit", "Save draft"]
    assert asked_names('Click the button in the dialog box labeled "x".') == []  # "button" names no control
    assert asked_names("Press Enter, then click it") == []
    assert asked_names("Find the price of the Rain Jacket") == []


def test_which_asked_click_is_missing() -> None:
    ask = "Type 4 and click Submit"
    assert unclicked(ask, PAGE, [], False) == ("Submit", 1)
    assert unclicked(ask, PAGE, ["submit"], False) is None
    assert unclicked(ask, PAGE, [], True) is None  # keys pressed: Enter submits without a click
    assert unclicked("Press 'Save draft' now", PAGE, [], False) == ("Save draft", 3)  # an input's value names it
    assert unclicked("click Cancel", PAGE, [], False) is None  # not a control
    assert unclicked("click OK", PAGE, [], False) is None  # two of them
    assert unclicked("click Home", PAGE, [], False) is None  # not on the page


NAMES = st.sampled_from(["Submit", "previous", "Save draft", "OK", "Cancel", "Home", "submit"])
PHRASES = st.sampled_from(["click {}", 'Click on the "{}" button', "press '{}' when done", "tap the {}", "hit {}"])


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(PHRASES, NAMES), max_size=3),
    st.lists(st.sampled_from(sorted(PAGE)), max_size=4),
    st.booleans(),
    st.lists(st.booleans(), min_size=1, max_size=4),
)
def test_a_claim_is_refused_at_most_once_and_never_after_the_asked_click(
    asks: list[tuple[str, str]], clicks: list[int], keys: bool, lasts: list[bool]
) -> None:
    task = " and ".join(phrase.format(name) for phrase, name in asks) or "Do the task"
    check = ClaimCheck()
    for index in clicks:
        check.made("click_element_by_index", PAGE[index])
    if keys:
        check.made("send_keys", None)
    said = [check.judge(task, PAGE, last) for last in lasts]
    assert sum(s is not None for s in said) <= 1  # the model insisting (claiming again) is never refused again
    refused = next((s for s in said if s is not None), None)
    if refused is None:
        return
    assert not keys
    clicked = {PAGE[i]["text"].casefold() or PAGE[i]["attributes"].get("value", "").casefold() for i in clicks}
    named = next(name for name in asked_names(task) if f"'{name}'" in refused)
    assert named.casefold() not in clicked, (task, clicks, refused)
    index = int(refused.split("[", 1)[1].split("]", 1)[0])
    assert PAGE[index]["text"].casefold() == named.casefold() or PAGE[index]["attributes"].get("value") == named


FORM = """<p>Type 4 and click Submit.</p><input id=a type=text>
<button onclick="document.title = 'sent ' + document.getElementById('a').value">Submit</button>"""


def typed() -> Any:
    return lambda ctx: agent_output("input_text", {"index": index_of(ctx, r"<input"), "text": "4"})


DONE = agent_output("done", {"text": "Typed 4.", "success": True})


async def test_a_claim_before_the_asked_click_is_refused_once(browser: BrowserSession) -> None:
    await browser.page.set_content(FORM)
    submit = lambda ctx: agent_output("click_element_by_index", {"index": index_of(ctx, r">Submit")})  # noqa: E731
    model = ScriptedModel([typed(), DONE, submit, DONE])
    result = await PageAgent(model=model, browser=browser, max_steps=5).run("Type 4 and click Submit.")
    assert result.steps[1].result.startswith("Not done: the request asks to click 'Submit', which is [")
    assert result.status == "completed" and result.success and await browser.page.title() == "sent 4"


async def test_insisting_on_the_claim_stands(browser: BrowserSession) -> None:
    await browser.page.set_content(FORM)
    model = ScriptedModel([typed(), DONE, DONE])
    result = await PageAgent(model=model, browser=browser, max_steps=5).run("Type 4 and click Submit.")
    assert (
        result.status == "completed"
        and result.success
        and [s.is_error for s in result.steps]
        == [
            False,
            True,
            False,
        ]
    )


async def test_a_claim_on_the_last_step_without_the_asked_click_ends_the_run_failed(browser: BrowserSession) -> None:
    await browser.page.set_content(FORM)
    model = ScriptedModel([typed(), DONE])
    result = await PageAgent(model=model, browser=browser, max_steps=2).run("Type 4 and click Submit.")
    assert result.status == "failed" and not result.success
    assert "asks to click 'Submit'" in (result.error or "") and "no step clicked it" in result.text
    # a claim of failure is never questioned, and nor is a request that names no click
    model = ScriptedModel([typed(), agent_output("done", {"text": "could not", "success": False})])
    result = await PageAgent(model=model, browser=browser, max_steps=2).run("Type 4 and click Submit.")
    assert result.status == "failed" and result.text == "could not"
    model = ScriptedModel([typed(), DONE])
    result = await PageAgent(model=model, browser=browser, max_steps=2).run("Type 4 into the box.")
    assert result.status == "completed" and result.success

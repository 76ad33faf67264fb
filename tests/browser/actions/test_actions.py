"""Each built-in action's success and failure texts, against real pages."""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any

import pytest

from notebook_agent.browser import BrowserSession, builtin_tools, match_option
from notebook_agent.core.abort import AbortController, AbortedError
from notebook_agent.core.tools import ToolResult, call_context
from notebook_agent.testing import set_snapshot_time
from tests.waits import wait_until

MISSING = "Error: no element [{}] in the current page snapshot. Use an index from the latest browser state."


def idx(text: str, needle: str) -> int:
    for line in text.splitlines():
        if needle in line:
            m = re.search(r"\[(\d+)\]", line)
            assert m
            return int(m.group(1))
    raise AssertionError(f"{needle!r} not in:\n{text}")


async def snap_text(b: BrowserSession, **kw: Any) -> str:
    return (await b.snapshot(**kw)).text


def ok(res: ToolResult) -> str:
    assert not res.is_error, res.text_content
    return res.text_content


def err(res: ToolResult) -> str:
    assert res.is_error, res.text_content
    assert res.text_content.startswith("Error: ")
    return res.text_content


# -- index handling ----------------------------------------------------------------------------------------
async def test_index_before_snapshot_and_missing(load: Any) -> None:
    b: BrowserSession = await load("form.html")
    for action in ("click_element_by_index", "hover"):
        assert err(await b.act({action: {"index": 3}})) == MISSING.format(3)
    assert err(await b.act({"input_text": {"index": 3, "text": "x"}})) == MISSING.format(3)
    await b.snapshot()
    assert err(await b.act({"click_element_by_index": {"index": 12345}})) == MISSING.format(12345)
    assert err(await b.act({"select_dropdown_option": {"index": 999, "text": "x"}})) == MISSING.format(999)
    assert err(await b.act({"scroll": {"index": 999}})) == MISSING.format(999)


async def test_stale_index_after_removal_and_navigation(load: Any) -> None:
    b: BrowserSession = await load("dynamic.html")
    text = await snap_text(b)
    victim = idx(text, "Victim")
    ok(await b.act({"click_element_by_index": {"index": idx(text, "Remove victim")}}))
    msg = err(await b.act({"click_element_by_index": {"index": victim}}))
    assert msg == (
        f"Error: element [{victim}] [{victim}]<button>Victim /> is no longer on the page: it was removed from the "
        "page since the last browser state. Use an index from the latest browser state."
    )
    await b.page.goto(b.page.url.replace("dynamic.html", "nav.html"))
    msg = err(await b.act({"click_element_by_index": {"index": 0}}))
    assert "is no longer on the page: the page changed (navigated or reloaded)" in msg


# -- click -------------------------------------------------------------------------------------------------
async def test_click_falls_back_to_javascript_when_covered(load: Any) -> None:
    b: BrowserSession = await load("dynamic.html")
    text = await snap_text(b)
    ok(await b.act({"click_element_by_index": {"index": idx(text, "Cover page")}}))
    victim = idx(text, "Victim")  # an overlay now intercepts every trusted click
    b.action_timeout = 0.5
    try:
        res = ok(await b.act({"click_element_by_index": {"index": idx(text, "Add button")}}))
        assert res == (
            'Clicked [0]<button id=add>Add button /> (a trusted click was not possible: <div id="overlay"></div> '
            "intercepts pointer events; a JavaScript click was used instead)."
        )
        assert await b.page.inner_text("#box") == "Added 1"
        await b.page.evaluate("document.getElementById('victim').style.visibility = 'hidden'")
        assert err(await b.act({"click_element_by_index": {"index": victim}})) == (
            f"Error: [{victim}]<button>Victim /> is not visible any more, so it cannot be clicked. "
            "Use the latest browser state."
        )
    finally:
        b.action_timeout = 2.0


async def test_click_texts_and_state(load: Any) -> None:
    b: BrowserSession = await load("form.html")
    text = await snap_text(b)
    i = idx(text, "name=terms")
    assert ok(await b.act({"click_element_by_index": {"index": i}})) == (
        f"Clicked [{i}]<input type=checkbox name=terms />I accept the terms. It is now checked."
    )
    pro = idx(text, "type=radio name=plan checked=false")
    assert ok(await b.act({"click_element_by_index": {"index": pro}})).endswith("It is now checked.")
    assert await b.page.is_checked("input[value=pro]") and not await b.page.is_checked("input[value=free]")
    d = idx(text, "Disabled")
    assert err(await b.act({"click_element_by_index": {"index": d}})) == (
        f"Error: [{d}]<button type=button disabled>Disabled /> is disabled, so clicking it does nothing right now."
    )
    # A native dropdown is not clicked (its list is outside the page): the error says what to call instead.
    s = idx(text, "name=country")
    refused = err(await b.act({"click_element_by_index": {"index": s}}))
    assert refused.startswith(f"Error: [{s}]<select name=country") and "chooses nothing" in refused
    assert f"Use select_dropdown_option with index {s} and the text of the option to choose (options: " in refused


async def test_click_aria_widgets(load: Any) -> None:
    b: BrowserSession = await load("aria.html")
    text = await snap_text(b)
    assert ok(await b.act({"click_element_by_index": {"index": idx(text, "Press me")}})) == (
        "Clicked [0]<div role=button id=rb>Press me />."
    )
    assert await b.page.inner_text("#rb") == "Pressed"
    sw = idx(text, "Dark mode")
    assert ok(await b.act({"click_element_by_index": {"index": sw}})).endswith("It is now checked=true.")
    menu = idx(text, "Actions")
    assert ok(await b.act({"click_element_by_index": {"index": menu}})).endswith("It is now expanded.")
    text = await snap_text(b)
    ok(await b.act({"click_element_by_index": {"index": idx(text, "Delete")}}))
    assert await b.page.inner_text("#status") == "Deleted"


async def test_click_navigates(load: Any, servers: Any) -> None:
    b: BrowserSession = await load("nav.html")
    text = await snap_text(b)
    res = ok(await b.act({"click_element_by_index": {"index": idx(text, "Next page")}}))
    assert res == f"Clicked [0]<a id=link>Next page />. The page navigated to {servers.url('nav2.html')}."
    assert b.page.url == servers.url("nav2.html")
    await b.page.goto(servers.url("nav.html"))
    text = await snap_text(b)
    res = ok(await b.act({"click_element_by_index": {"index": idx(text, "Go by script")}}))
    assert res.endswith(f"The page navigated to {servers.url('nav2.html?via=button')}.")
    await b.page.goto(servers.url("nav.html"))
    text = await snap_text(b)
    res = ok(await b.act({"click_element_by_index": {"index": idx(text, "Next step")}}))
    assert res.endswith(f"The page navigated to {servers.url('nav.html#step2')}.")
    # a slow navigation is waited for (bounded), not reported half-way
    text = await snap_text(b)
    started = time.monotonic()
    res = ok(await b.act({"click_element_by_index": {"index": idx(text, "Slow")}}))
    assert res.endswith(f"The page navigated to {servers.url('slow?ms=300')}.")
    assert await b.page.title() == "Slow"
    assert time.monotonic() - started < 5


async def test_a_navigation_that_fails_ends_the_wait_for_its_commit(load: Any, servers: Any) -> None:
    """A navigation refused at the network (the approval door, a blocked domain, a dead host) never commits: the
    action's watch ends when it fails, instead of waiting out its whole bound for a commit. Its bound here is
    far beyond the test's hang guard, so a watch that waits for the commit fails the test."""
    from notebook_agent.browser.page.action_watch import ActionWatch

    b: BrowserSession = await load("nav.html")
    page = b.page
    # "aborted", as the door refuses: no error page commits, the tab stays where it was
    await page.route("**/nav2.html*", lambda route: route.abort("aborted"))
    try:
        for via in ("#link", "text=Go by script"):  # a link, and a button whose handler sets location
            watch = ActionWatch(page, lambda p: (0, True))
            try:
                await page.click(via)
                await asyncio.wait_for(watch.settle(timeout=600), 60)
                assert watch.nav_started and not watch.committed
                assert page.url == servers.url("nav.html") and watch.describe() == ""
            finally:
                watch.close()
    finally:
        await page.unroute("**/nav2.html*")


async def test_click_waits_for_a_navigation_only_where_one_can_follow(load: Any) -> None:
    """The click skips its navigation grace for elements that cannot navigate; these are the elements that
    keep it (links, submit controls, handlers and tracked listeners on the element, an ancestor or a label's
    control)."""
    from notebook_agent.browser.actions.scripts import MAY_NAVIGATE_JS

    b: BrowserSession = await load("nav.html")
    await b.page.evaluate(
        """() => document.body.insertAdjacentHTML('beforeend', `
        <input type=checkbox id=plain><label for=plain id=plain-label>Plain</label>
        <input type=checkbox id=listened><label for=listened id=listened-label>Listened</label>
        <div id=delegate><span id=inner>Inner</span></div>
        <form><input type=checkbox id=in-form><button type=button id=typed>Typed</button></form>
        <button id=loose>Loose</button>`)
        || document.getElementById('listened').addEventListener('change', () => {})
        || document.getElementById('delegate').addEventListener('click', () => {})"""
    )
    expected = {
        "#link": True,
        "#go": True,  # onclick
        "form button": True,  # submits its form
        "#plain": False,
        "#plain-label": False,
        "#listened": True,
        "#listened-label": True,  # its control has a change listener
        "#inner": True,  # a click listener on an ancestor
        "#in-form": False,  # a checkbox does not submit its form
        "#typed": False,  # type=button does not submit
        "#loose": False,  # a button outside any form
    }
    got = {sel: await b.page.eval_on_selector(sel, MAY_NAVIGATE_JS) for sel in expected}
    assert got == expected
    snap = await b.snapshot()
    plain = next(e for e in snap.elements.values() if e.attributes.get("id") == "plain")
    res = ok(await b.act({"click_element_by_index": {"index": plain.index}}))
    assert res == f"Clicked {plain.describe()}. It is now checked."  # the state read with the barrier


async def test_select_waits_for_a_navigation_only_with_a_handler(load: Any, servers: Any) -> None:
    """A select with an onchange that navigates still reports the navigation; a plain select does not wait."""
    b: BrowserSession = await load("nav.html")
    await b.page.evaluate(
        """() => document.body.insertAdjacentHTML('beforeend', `
        <select name=plain><option>One</option><option>Two</option></select>
        <select name=jump onchange="location.href = 'nav2.html?to=' + this.value">
          <option>stay</option><option>go</option></select>`)"""
    )
    text = await snap_text(b)
    res = ok(await b.act({"select_dropdown_option": {"index": idx(text, "name=plain"), "text": "Two"}}))
    assert res.endswith("The selected option is now 'Two'.")
    res = ok(await b.act({"select_dropdown_option": {"index": idx(text, "name=jump"), "text": "go"}}))
    assert res.endswith(f"The page navigated to {servers.url('nav2.html?to=go')}.")


async def test_typing_waits_for_a_navigation_only_with_a_handler(load: Any, servers: Any) -> None:
    """A text field whose input handler navigates (an attribute handler, or a listener added by script) still
    reports the navigation; a plain field reads its value without a grace wait. (A navigation a timer starts
    later is only caught within the short grace, so it is not asserted here: on a loaded machine the timer
    can fire after it, and the next snapshot then reads the new document.)"""
    b: BrowserSession = await load("nav.html")
    await b.page.evaluate(
        """() => {
        document.body.insertAdjacentHTML('beforeend', `
          <input name=plain> <input name=later>`);
        document.querySelector('[name=later]').addEventListener('input', (e) => {
          location.href = 'nav2.html?later=' + e.target.value;
        });
        }"""
    )
    from notebook_agent.browser.actions.scripts import MAY_NAVIGATE_JS

    # what decides the grace, read deterministically: only the field with a listener keeps it
    got = {n: await b.page.eval_on_selector(f"[name={n}]", MAY_NAVIGATE_JS) for n in ("plain", "later")}
    assert got == {"plain": False, "later": True}
    text = await snap_text(b)
    res = ok(await b.act({"input_text": {"index": idx(text, "name=plain"), "text": "stay"}}))
    assert res.endswith("its value is now 'stay'.")
    res = ok(await b.act({"input_text": {"index": idx(text, "name=later"), "text": "x"}}))
    assert res.endswith(f"The page navigated to {servers.url('nav2.html?later=x')}.")
    await b.open(servers.url("nav.html"))
    await b.page.evaluate(
        """() => document.body.insertAdjacentHTML('beforeend',
        `<input name=jump oninput="location.href = 'nav2.html?q=' + this.value">`)"""
    )
    assert await b.page.eval_on_selector("[name=jump]", MAY_NAVIGATE_JS) is True
    text = await snap_text(b)
    res = ok(await b.act({"input_text": {"index": idx(text, "name=jump"), "text": "go"}}))
    assert res.endswith(f"The page navigated to {servers.url('nav2.html?q=go')}.")


async def test_click_target_blank_and_popup_tabs(load: Any, servers: Any) -> None:
    b: BrowserSession = await load("tabs.html")
    first = b.page
    first_id = b.tab_id(first)
    text = await snap_text(b)
    res = ok(await b.act({"click_element_by_index": {"index": idx(text, "Open docs")}}))
    new_id = b.tab_id(b.page)
    assert res == (
        "Clicked [0]<a target=_blank id=blank>Open docs />. "
        f"It opened a new tab (tab {new_id}: {servers.url('target.html')}) "
        "and is now the current tab."
    )
    assert b.page is not first and b.page.url == servers.url("target.html")
    assert err(await b.act({"click_element_by_index": {"index": 1}})).startswith(
        "Error: element [1] belongs to a tab that is no longer current."
    )
    res = ok(await b.act({"switch_tab": {"tab_id": first_id}}))
    assert res == f"Switched to tab {first_id}: {servers.url('tabs.html')} (title 'Tabs')."
    assert b.page is first
    text = await snap_text(b)
    res = ok(await b.act({"click_element_by_index": {"index": idx(text, "Open popup")}}))
    assert "It opened a new tab" in res and "target.html?via=open" in res
    msg = err(await b.act({"switch_tab": {"tab_id": 99}}))
    assert msg.startswith("Error: there is no tab 99. Open tabs: ")
    # a tab the site closes itself: the next use falls back to the newest open tab and says so
    text = await snap_text(b)
    popup = b.page
    await popup.evaluate("window.close()")
    await wait_until(popup.is_closed, 10, "the tab the site closed is closed")
    snap = await b.snapshot()
    assert b.page is not popup
    assert f"Note: Tab {b.tab_id(popup)} was closed; tab" in snap.text


# -- input_text --------------------------------------------------------------------------------------------
async def test_input_text_reports_live_value(load: Any) -> None:
    b: BrowserSession = await load("form.html")
    text = await snap_text(b)
    i = idx(text, "name=name")
    assert ok(await b.act({"input_text": {"index": i, "text": "Ada"}})) == (
        f"Typed 'Ada' into [{i}]<input type=text name=name placeholder=Full name />Name; its value is now 'Ada'."
    )
    assert "input:name" in await b.page.evaluate("window.__events")
    # replaces, does not append
    ok(await b.act({"input_text": {"index": i, "text": "Grace"}}))
    assert await b.page.input_value("input[name=name]") == "Grace"
    short = idx(text, "name=short")
    res = ok(await b.act({"input_text": {"index": short, "text": "abcdef"}}))
    assert res.endswith("its value is now 'abc'. (The page changed or limited the input.)")
    pw = idx(text, "name=password")
    res = ok(await b.act({"input_text": {"index": pw, "text": "hunter2"}}))
    expected = f"Typed 7 characters into [{pw}]<input type=password name=password placeholder=Password />; "
    assert res == expected + "it now holds 7 characters (masked)."
    assert "hunter2" not in res
    ce = idx(text, "contenteditable")
    assert ok(await b.act({"input_text": {"index": ce, "text": "Hello editor"}})).endswith(
        "its value is now 'Hello editor'."
    )
    date = idx(text, "name=birthday")
    assert ok(await b.act({"input_text": {"index": date, "text": "2024-05-06"}})).endswith(
        "its value is now '2024-05-06'."
    )
    bio = idx(text, "name=bio")
    assert ok(await b.act({"input_text": {"index": bio, "text": "line one\nline two"}})).endswith(
        "its value is now 'line one line two'."
    )
    assert await b.page.input_value("textarea[name=bio]") == "line one\nline two"
    text = await snap_text(b)
    assert "value=Grace" in text and "<div contenteditable id=editor>Hello editor />" in text


async def test_input_text_failures(load: Any) -> None:
    b: BrowserSession = await load("form.html")
    text = await snap_text(b)
    cb = idx(text, "name=terms")
    assert err(await b.act({"input_text": {"index": cb, "text": "x"}})) == (
        f"Error: [{cb}]<input type=checkbox name=terms />I accept the terms is a checkbox; "
        "click it with click_element_by_index."
    )
    sel = idx(text, "name=country")
    assert "is a dropdown; use select_dropdown_option." in err(await b.act({"input_text": {"index": sel, "text": "x"}}))
    ro = idx(text, "name=ro")
    assert err(await b.act({"input_text": {"index": ro, "text": "x"}})).endswith("is read-only.")
    btn = idx(text, "Sign up />")
    assert err(await b.act({"input_text": {"index": btn, "text": "x"}})) == (
        f"Error: [{btn}]<button>Sign up /> is not a text field (input, textarea or contenteditable)."
    )
    assert b.page.url.endswith("form.html")  # the submit button was not clicked
    num = idx(text, "name=age")
    assert "Cannot type text into input[type=number]" in err(await b.act({"input_text": {"index": num, "text": "abc"}}))


# -- select_dropdown_option --------------------------------------------------------------------------------
async def test_select_native(load: Any) -> None:
    b: BrowserSession = await load("form.html")
    text = await snap_text(b)
    s = idx(text, "name=country")
    # The result names the element without the value it had before (the new one follows).
    line = f"[{s}]<select name=country options=United States|Canada|Mexico|United Kingdom|Ukraine />"
    assert ok(await b.act({"select_dropdown_option": {"index": s, "text": "Canada"}})) == (
        f"Selected option 'Canada' in {line}. The selected option is now 'Canada' (value 'ca')."
    )
    assert "change:country" in await b.page.evaluate("window.__events")
    assert ok(await b.act({"select_dropdown_option": {"index": s, "text": "Canada"}})) == (
        f"Option 'Canada' is already selected in {line}; nothing changed. Go on with the next part of the task."
    )
    ok(await b.act({"select_dropdown_option": {"index": s, "text": "mexico"}}))  # case-insensitive
    assert await b.page.input_value("select[name=country]") == "mx"
    ok(await b.act({"select_dropdown_option": {"index": s, "text": "kingdom"}}))  # unique substring
    assert await b.page.input_value("select[name=country]") == "gb"
    ok(await b.act({"select_dropdown_option": {"index": s, "text": "ua"}}))  # option value
    assert await b.page.input_value("select[name=country]") == "ua"
    msg = err(await b.act({"select_dropdown_option": {"index": s, "text": "United"}}))
    assert "'United' matches several options" in msg and "'United States', 'United Kingdom'" in msg
    msg = err(await b.act({"select_dropdown_option": {"index": s, "text": "Narnia"}}))
    assert msg.endswith(
        "Available options: 'United States', 'Canada', 'Mexico', 'United Kingdom', 'Ukraine'."
    ) and msg.startswith("Error: no option matching 'Narnia' in ")
    text = await snap_text(b)
    assert "<select name=country value=Ukraine options=" in text
    btn = idx(text, "Sign up />")
    msg = err(await b.act({"select_dropdown_option": {"index": btn, "text": "x"}}))
    assert "is not a dropdown" in msg and "so nothing was clicked" in msg
    assert b.page.url.endswith("form.html")  # the submit button was not pressed


async def test_select_aria_listbox_and_custom_dropdown(load: Any) -> None:
    b: BrowserSession = await load("aria.html")
    text = await snap_text(b)
    lb = idx(text, "role=listbox id=lb1 />Fruit")
    res = ok(await b.act({"select_dropdown_option": {"index": lb, "text": "banana"}}))
    assert res.startswith(f"Selected option 'Banana' in [{lb}]<ul role=listbox id=lb1 />Fruit.")
    assert await b.page.inner_text("#status") == "Fruit: Banana"
    combo = idx(text, "role=combobox")
    res = ok(await b.act({"select_dropdown_option": {"index": combo, "text": "dark"}}))
    assert res == (
        f"Selected option 'Dark Blue' in [{combo}]<div role=combobox aria-expanded=false aria-haspopup=listbox "
        "id=combo>Choose a color />. It now shows 'Dark Blue'."
    )
    text = await snap_text(b)
    combo = idx(text, "role=combobox")
    msg = err(await b.act({"select_dropdown_option": {"index": combo, "text": "Blue"}}))
    assert "'Blue' matches several options" in msg and "'Dark Blue', 'Light Blue'" in msg


def test_match_option_rules() -> None:
    opts = ["United States", "united kingdom", "Canada", " Canada (French) "]
    assert match_option(opts, "Canada") == (2, [])
    assert match_option(opts, "UNITED KINGDOM") == (1, [])
    assert match_option(opts, "french") == (3, [])
    assert match_option(opts, "united") == (None, [0, 1])
    assert match_option(opts, "Narnia") == (None, [])


# -- scroll ------------------------------------------------------------------------------------------------
async def test_scroll_page_and_containers(load: Any) -> None:
    b: BrowserSession = await load("scroll.html")
    text = await snap_text(b)
    assert ok(await b.act({"scroll": {"down": False}})) == ("Already at the top of the page; cannot scroll up further.")
    res = ok(await b.act({"scroll": {}}))
    assert res.startswith("Scrolled the page down by 800px.") and res.endswith("px more below.")
    assert ok(await b.act({"scroll": {"pixels": 100, "num_pages": 5}})).startswith("Scrolled the page down by 100px.")
    assert await b.page.evaluate("window.scrollY") == 900
    res = ok(await b.act({"scroll": {"num_pages": 10}}))
    assert res.startswith("Scrolled the page down by") and res.endswith("Reached the bottom.")
    assert ok(await b.act({"scroll": {}})) == "Already at the bottom of the page; cannot scroll down further."
    res = ok(await b.act({"scroll": {"down": False, "num_pages": 0.5}}))
    assert res.startswith("Scrolled the page up by 400px.")
    # containers
    lst = idx(text, "id=list")
    res = ok(await b.act({"scroll": {"index": lst, "pixels": 100}}))
    assert res == f"Scrolled [{lst}]<div scrollable=down:900 id=list /> down by 100px. 800px more below."
    pick = idx(text, "Pick 3")
    res = ok(await b.act({"scroll": {"index": pick, "pixels": 50}}))
    assert (
        res
        == f"Scrolled the scrollable <div id=list> holding [{pick}]<button>Pick 3 /> down by 50px. 750px more below."
    )
    res = ok(await b.act({"scroll": {"index": lst, "num_pages": 10}}))
    assert res.endswith("Reached the bottom.")
    wide = idx(text, "id=wide")
    res = ok(await b.act({"scroll_horizontally": {"index": wide, "pixels": 200}}))
    assert res == f"Scrolled [{wide}]<div scrollable=right:700 id=wide /> right by 200px. 500px more to the right."
    res = ok(await b.act({"scroll_horizontally": {"index": wide, "pixels": 500, "right": False}}))
    assert res.endswith("left by 200px. Reached the left edge.")
    static = idx(text, "Static button")
    res = ok(await b.act({"scroll": {"index": static, "pixels": 50}}))
    assert res.startswith(
        f"No scrollable container holds [{static}]<button id=static>Static button />, so the page scrolled."
    )
    assert ok(await b.act({"scroll_horizontally": {"pixels": 100}})) == (
        "Already at the right edge of the page; cannot scroll right further."
    )


async def test_scroll_validation(load: Any) -> None:
    b: BrowserSession = await load("scroll.html")
    msg = err(await b.act({"scroll": {"num_pages": 50}}))
    assert msg.startswith('Error: Validation failed for tool "scroll":') and "num_pages" in msg
    assert err(await b.act({"scroll_horizontally": {}})).startswith(
        'Error: Validation failed for tool "scroll_horizontally"'
    )


# -- execute_javascript ------------------------------------------------------------------------------------
async def test_execute_javascript(load: Any) -> None:
    b: BrowserSession = await load("nav.html")
    js = "execute_javascript"
    assert ok(await b.act({js: {"script": "document.title"}})) == 'Executed JavaScript. Result: "Navigation"'
    assert ok(await b.act({js: {"script": "document.title;"}})) == 'Executed JavaScript. Result: "Navigation"'
    assert ok(await b.act({js: {"script": "const n = 2; return {n, list: [1, 'a', null]}"}})) == (
        'Executed JavaScript. Result: {"n":2,"list":[1,"a",null]}'
    )
    assert ok(await b.act({js: {"script": "await new Promise(r => setTimeout(r, 10)); return 7"}})) == (
        "Executed JavaScript. Result: 7"
    )
    assert ok(await b.act({js: {"script": "document.querySelector('#s')"}})) == 'Executed JavaScript. Result: "<p#s>"'
    assert ok(await b.act({js: {"script": "let x = 1"}})) == (
        "Executed JavaScript. Result: undefined (end the script with `return value` to get a result)"
    )
    msg = err(await b.act({js: {"script": "throw new Error('boom')"}}))
    assert msg.startswith("Error: JavaScript threw: ") and "boom" in msg
    msg = err(await b.act({js: {"script": "return ((("}}))
    assert msg.startswith("Error: JavaScript threw: ") and "SyntaxError" in msg
    res = ok(await b.act({js: {"script": "location.href = 'nav2.html'; return 1"}}))
    assert res.startswith("Executed JavaScript. Result: 1") and "navigated" in res


# -- wait, ask_user, done ----------------------------------------------------------------------------------
async def test_wait_counts_time_since_snapshot(load: Any) -> None:
    b: BrowserSession = await load("nav.html")
    await b.snapshot()
    set_snapshot_time(b, time.monotonic() - 5)  # the model took 5 s to answer
    started = time.monotonic()
    assert ok(await b.act({"wait": {"seconds": 2}})) == "Waited for 2 seconds."
    assert time.monotonic() - started < 1.5  # not the 2 s again (a margin for a loaded machine)
    assert ok(await b.act({"wait": 1})) == "Waited for 1 second."  # bare value coerced onto `seconds`
    msg = err(await b.act({"wait": {"seconds": 20}}))
    assert msg.startswith('Error: Validation failed for tool "wait":')


async def test_wait_honours_abort(browser: BrowserSession) -> None:
    tool = browser.tools["wait"]
    controller = AbortController()
    set_snapshot_time(browser, None)
    waiting = asyncio.Event()  # set by the action's first progress line, just before it starts waiting
    ctx = call_context("c1", controller.signal).with_update(lambda _: waiting.set())
    task = asyncio.ensure_future(tool.execute(tool.validate({"seconds": 10}), ctx))
    await asyncio.wait_for(waiting.wait(), 10)
    controller.abort("stop")
    started = time.monotonic()
    with pytest.raises(AbortedError):
        await task
    assert time.monotonic() - started < 5  # not the 10 s wait


async def test_ask_user_and_done(browser: BrowserSession) -> None:
    msg = err(await browser.act({"ask_user": {"question": "Which colour?"}}))
    assert msg == "Error: action 'ask_user' is not available: no on_ask_user callback was given."
    asked: list[str] = []

    async def answer(question: str, signal: Any) -> str:
        asked.append(question)
        return "blue"

    tools = builtin_tools(browser, on_ask_user=answer)
    assert tools["ask_user"].unavailable_reason() is None
    res = await tools["ask_user"].execute(
        tools["ask_user"].validate({"question": "Which colour?"}), call_context("c", AbortController().signal)
    )
    assert isinstance(res, ToolResult) and res.text_content == "User answered: blue" and asked == ["Which colour?"]

    async def one_arg(question: str) -> str:
        return "green"

    browser.on_ask_user = one_arg  # the tools follow the new callback
    assert ok(await browser.act({"ask_user": {"question": "?"}})) == "User answered: green"
    res = await browser.act({"done": {"text": "All set", "success": True}})
    assert res.terminate and res.text_content == "All set" and res.details == {"success": True, "text": "All set"}
    res = await browser.act("done", {"text": "Gave up", "success": False})
    assert res.terminate and res.details["success"] is False


# -- keys, navigation, tabs, hover ------------------------------------------------------------------------
async def test_send_keys(load: Any, servers: Any) -> None:
    b: BrowserSession = await load("nav.html")
    text = await snap_text(b)
    q = idx(text, "name=q")
    ok(await b.act({"input_text": {"index": q, "text": "shoes"}}))
    res = ok(await b.act({"send_keys": {"keys": "Enter"}}))
    assert res == f"Pressed Enter. The page navigated to {servers.url('nav2.html?q=shoes')}."
    await b.page.goto(servers.url("form.html"))
    text = await snap_text(b)
    name = idx(text, "name=name")
    ok(await b.act({"input_text": {"index": name, "text": "abc"}}))
    assert ok(await b.act({"send_keys": {"keys": "Control+A Backspace", "index": name}})) == (
        f"Pressed Control+A Backspace on [{name}]<input type=text name=name placeholder=Full name />Name."
    )
    assert await b.page.input_value("input[name=name]") == ""
    assert "keydown:name" in await b.page.evaluate("window.__events")
    msg = err(await b.act({"send_keys": {"keys": "Foo"}}))
    assert (
        msg == "Error: unknown key 'Foo'. Use names like Enter, Tab, Escape, ArrowDown, Control+A; "
        "to type text use input_text."
    )


async def test_go_back_does_not_leave_for_the_empty_tab(browser: BrowserSession, servers: Any) -> None:
    """Measured: a 1.5B model went back from its start page to about:blank, where nothing was left to do."""
    await browser.page.goto("about:blank")
    await browser.page.goto(servers.url("nav.html"))
    msg = err(await browser.act({"go_back": {}}))
    assert msg == "Error: there is no earlier page to go back to: before this one the tab was empty."
    assert browser.page.url == servers.url("nav.html")
    await browser.page.goto(servers.url("nav2.html"))
    assert ok(await browser.act({"go_back": {}})).startswith(f"Went back to {servers.url('nav.html')}")


async def test_go_to_url_and_back(browser: BrowserSession, servers: Any) -> None:
    b = browser
    assert err(await b.act({"go_back": {}})) == "Error: there is no previous page in this tab's history."
    url = servers.url("nav.html")
    assert ok(await b.act({"go_to_url": {"url": url}})) == f"Navigated to {url} (title 'Navigation')."
    res = ok(await b.act({"go_to_url": {"url": url.removeprefix("http://").replace("nav.html", "nav2.html")}}))
    assert res == f"Navigated to {servers.url('nav2.html')} (title 'Second page')."
    assert ok(await b.act({"go_back": {}})) == f"Went back to {url} (title 'Navigation')."
    res = ok(await b.act({"go_to_url": {"url": servers.url("status?code=404")}}))
    assert res.endswith("The server answered HTTP 404.")
    msg = err(await b.act({"go_to_url": {"url": "javascript:alert(1)"}}))
    assert msg == "Error: Cannot open 'javascript:alert(1)': only http(s), file, data and about URLs are supported."
    msg = err(await b.act({"go_to_url": {"url": "http://127.0.0.1:9/"}}))  # 9 (discard) is an unsafe port
    assert msg == (
        "Error: Chromium refuses to open http://127.0.0.1:9/: port 9 is on its list of unsafe ports (ports of "
        "other protocols, such as 6000 for X11). Serve the page on another port, e.g. 8000."
    )
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    msg = err(await b.act({"go_to_url": {"url": f"127.0.0.1:{port}/x"}}))
    assert msg == f"Error: Nothing answers at http://127.0.0.1:{port}/: is the server running, and on that port?"
    msg = err(await b.act({"go_to_url": {"url": "example"}}))
    assert msg == "Error: 'example' is not a URL: write the whole address, e.g. https://example.com/ or " + (
        "http://localhost:8000/."
    )


async def test_hover_reveals_menu(load: Any) -> None:
    b: BrowserSession = await load("hover.html")
    text = await snap_text(b)
    assert "Laptops" not in text
    p = idx(text, "Products")
    assert ok(await b.act({"hover": {"index": p}})) == (
        f"Hovered over [{p}]<a>Products />. Elements it revealed are marked * in the next browser state."
    )
    text = await snap_text(b)
    assert re.search(r"\*\[\d+\]<a>Laptops />", text)
    tip = idx(text, "Hover for help")
    ok(await b.act({"hover": {"index": tip}}))
    assert "Help text shown" in await snap_text(b)


async def test_act_errors(browser: BrowserSession) -> None:
    msg = err(await browser.act({"fly": {}}))
    assert msg.startswith("Error: unknown action 'fly'. Available: done, wait, ask_user, click_element_by_index,")
    assert err(await browser.act({"wait": {}, "done": {}})) == "Error: give exactly one action, got 2: wait, done."
    msg = err(await browser.act({"click_element_by_index": {"index": -1}}))
    assert 'Validation failed for tool "click_element_by_index"' in msg
    msg = err(await browser.act({"click_element_by_index": {"index": 1, "extra": True}}))
    assert "extra" in msg


def test_tool_specs() -> None:
    tools = builtin_tools(None)  # type: ignore[arg-type]
    assert list(tools)[:9] == [
        "done",
        "wait",
        "ask_user",
        "click_element_by_index",
        "input_text",
        "select_dropdown_option",
        "scroll",
        "scroll_horizontally",
        "execute_javascript",
    ]
    assert set(tools) >= {"send_keys", "go_to_url", "go_back", "switch_tab", "hover"}
    scroll = tools["scroll"].json_schema()
    assert set(scroll["properties"]) == {"down", "num_pages", "pixels", "index"}
    assert scroll["properties"]["num_pages"]["maximum"] == 10
    wait = tools["wait"].json_schema()["properties"]["seconds"]
    assert (wait["minimum"], wait["maximum"], wait["default"]) == (1, 10, 1)
    assert all(t.execution_mode == "sequential" for t in tools.values())
    assert "execute_javascript" not in builtin_tools(None, include_javascript=False)  # type: ignore[arg-type]

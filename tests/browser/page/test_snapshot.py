"""Snapshot content and format on real pages: live form state, masking, ARIA, shadow DOM, iframes, visibility,
viewport vs full page, new-element marks, budgets and size."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.async_api import ElementHandle, Frame, Locator

from notebook_agent.browser import BrowserSession
from notebook_agent.llm.tokens import count_tokens
from notebook_agent.testing import frame_tokens


def line_of(text: str, needle: str) -> str:
    for line in text.splitlines():
        if needle in line:
            return line
    raise AssertionError(f"{needle!r} not in snapshot:\n{text}")


def index_of(text: str, needle: str) -> int:
    match = re.search(r"\[(\d+)\]", line_of(text, needle))
    assert match, needle
    return int(match.group(1))


async def test_form_controls_and_format(load: Any) -> None:
    b: BrowserSession = await load("form.html")
    snap = await b.snapshot()
    text = snap.text
    assert text.startswith("Current page: [Form](http://127.0.0.1:")
    assert "[Start of page]" in text and "[End of page]" in text
    # a control's label is printed after its tag, and not again as page text
    assert line_of(text, "name=name").endswith("<input type=text name=name placeholder=Full name />Name")
    assert "\nName\n" not in text and text.count("I accept the terms") == 1
    assert "<input type=number name=age min=0 max=120 />" in text
    assert "<input type=range name=volume value=3 min=0 max=10 />" in text
    assert "<input type=tel name=phone value=555-1234 />" in text
    assert "<input type=text name=ro value=fixed readonly />" in text
    assert "<input type=text name=req placeholder=Required required />" in text
    assert (
        "<select name=country value=United States options=United States|Canada|Mexico|United Kingdom|Ukraine />" in text
    )
    assert "<select name=colors selected=Red|Blue options=Red|Green|Blue multiple />" in text
    assert "<input type=checkbox name=terms checked=false />I accept the terms" in text  # label for=, id=name
    assert "<input type=checkbox name=news checked=true />" in text
    assert "<input type=radio name=plan checked=true />" in text
    # the hidden custom checkbox is reached through its label, which shows the state
    assert "<label for=checkbox checked=false>Fancy toggle />" in text
    assert "<div contenteditable id=editor>Edit me />" in text
    assert "<button type=button disabled>Disabled />" in text
    assert "<button>Sign up />" in text
    assert "token" not in text and "xyz" not in text  # hidden input
    # free text between elements, one indexed element per line
    assert "\nSign up\n[0]<input" in text and "/>\nNews\n" in text
    first_lines = [ln for ln in text.splitlines() if re.match(r"\*?\[\d+\]", ln)]
    assert [int(re.search(r"\[(\d+)\]", ln).group(1)) for ln in first_lines] == list(range(len(first_lines)))  # type: ignore[union-attr]
    assert "*[" not in text  # nothing is "new" on a page's first snapshot


async def test_live_values_not_attributes(load: Any) -> None:
    b: BrowserSession = await load("form.html")
    page = b.page
    await page.fill("input[name=name]", "Ada Lovelace")
    await page.fill("textarea[name=bio]", "Mathematician")
    await page.select_option("select[name=country]", "ca")
    await page.check("input[name=terms]")
    await page.check("input[name=fancy]", force=True)
    await page.fill("input[name=password]", "hunter2")
    await page.fill("input[name=card]", "4111111111111111")
    await page.fill("input[name=code]", "123456")
    text = (await b.snapshot()).text
    assert "<input type=text name=name placeholder=Full name value=Ada Lovelace />" in text
    assert "<textarea name=bio placeholder=About you value=Mathematician />" in text
    assert "<select name=country value=Canada options=" in text
    assert "<input type=checkbox name=terms checked=true />" in text
    assert "<label for=checkbox checked=true>Fancy toggle />" in text
    # sensitive fields are masked
    assert "<input type=password name=password placeholder=Password value=[masked] />" in text
    assert "<input type=text name=card placeholder=Card number value=[masked] />" in text
    assert "<input type=text name=code placeholder=Code value=[masked] />" in text
    for secret in ("hunter2", "4111111111111111", "123456"):
        assert secret not in text
    info = b.element(index_of(text, "name=password"))
    assert info is not None and info.sensitive


async def test_element_map(load: Any, servers: Any) -> None:
    b: BrowserSession = await load("form.html")
    assert b.element(0) is None  # no snapshot yet for this tab
    snap = await b.snapshot()
    assert b.last_snapshot is snap
    i = index_of(snap.text, "Sign up />")
    info = b.element(i)
    assert info is not None
    assert (info.tag, info.role, info.text) == ("button", "button", "Sign up")
    assert info.frame == servers.url("form.html")
    assert info.box is not None and info.box[2] > 0 and info.box[3] > 0
    assert info.in_viewport and not info.disabled
    assert info.describe() == f"[{i}]<button>Sign up />"
    assert b.element(10_000) is None
    assert snap.to_dict()["elements"][0]["index"] == 0


async def test_control_names_and_readable_ids(load: Any) -> None:
    """A control's accessible name follows its tag (aria-labelledby, aria-label, wrapping or for= label), the
    label's text is not printed again, and only ids that read as names are shown."""
    b: BrowserSession = await load("nav.html")
    await b.page.evaluate(
        """() => { document.body.innerHTML = `
        <span id=cap>Delivery date</span><input id=d1 aria-labelledby=cap>
        <input aria-label="Coupon code" name=coupon>
        <label>Plan <select name=plan><option>Free</option><option>Pro</option></select></label>
        <label for=hf2>HF2</label><input type=checkbox id=hf2>
        <input type=text id=email name=email>
        <button id=":r3:">A</button><button id=ember123>B</button>
        <button id="3f2b8c1e-9a4d-4e5f-8b6a-1c2d3e4f5a6b">C</button><button id=x8f3k2a9>D</button>
        <button id=save-draft>E</button>`; }"""
    )
    text = (await b.snapshot()).text
    assert "Delivery date\n[0]<input type=text />Delivery date" in text  # aria-labelledby: target text stays
    assert "<input type=text name=coupon />Coupon code" in text
    assert "<select name=plan value=Free options=Free|Pro />Plan" in text  # not "Plan Free Pro"
    assert "<input type=checkbox checked=false />HF2" in text and text.count("HF2") == 1  # id=hf2 repeats it
    assert "<input type=text name=email />" in text  # id equal to name: said once
    for generated in ("A", "B", "C", "D"):
        assert f"]<button>{generated} />" in text
    assert "<button id=save-draft>E />" in text


async def test_aria_widgets(load: Any) -> None:
    b: BrowserSession = await load("aria.html")
    text = (await b.snapshot()).text
    assert "<div role=button id=rb>Press me />" in text
    assert "<div role=switch aria-checked=false>Dark mode />" in text
    assert "<button aria-expanded=false aria-haspopup=menu id=menubtn>Actions />" in text
    assert "Rename" not in text  # closed menu
    assert "<ul role=listbox id=lb1 />Fruit" in text  # an ARIA field's aria-label is its name
    assert "\t[" in line_of(text, "Apple")  # options nest under the listbox
    assert "<li role=option aria-selected=false>Banana />" in text
    assert "<div role=combobox aria-expanded=false aria-haspopup=listbox id=combo>Choose a color />" in text
    assert "<span role=tab aria-selected=true>Overview />" in text
    await b.act({"click_element_by_index": {"index": index_of(text, "Actions")}})
    text = (await b.snapshot()).text
    assert "<button aria-expanded=true aria-haspopup=menu id=menubtn>Actions />" in text
    assert re.search(r"\*\[\d+\]<li role=menuitem>Rename />", text)  # revealed items are new


async def test_shadow_dom(load: Any) -> None:
    b: BrowserSession = await load("shadow.html")
    text = (await b.snapshot()).text
    assert "Card title" in text
    assert "<button id=sb>Shadow button />" in text
    assert "<a>Slotted link />" in text
    assert "<input type=text placeholder=Deep input />" in text
    assert "Hidden in closed root" not in text  # closed roots cannot be read (documented)
    # flat-tree order: shadow content, then the slotted light child where the slot is
    assert text.index("Shadow button") < text.index("Slotted link") < text.index("Deep input")
    result = await b.act({"click_element_by_index": {"index": index_of(text, "Shadow button")}})
    assert not result.is_error, result.text_content
    assert await b.page.evaluate(
        "document.querySelector('fancy-card').shadowRoot.querySelector('#sb').textContent"
    ) == ("Shadow clicked")


async def test_same_and_cross_origin_iframes(load: Any, servers: Any) -> None:
    b: BrowserSession = await load("frames.html")
    snap = await b.snapshot()
    text = snap.text
    assert f"Frame on {servers.main}" in text
    assert f"Frame on {servers.other}" in text
    buttons = [e for e in snap.elements.values() if e.text == "Frame button"]
    assert len(buttons) == 2
    same, cross = buttons
    assert same.frame == servers.url("frame_inner.html")
    assert cross.frame == servers.other_url("frame_inner.html")
    top = next(e for e in snap.elements.values() if e.text == "Top button")
    # body margin 8 + iframe margin 30 + border 5 + padding 3 + the inner body margin 8
    assert same.box is not None and top.box is not None and cross.box is not None
    assert abs(same.box[0] - 54) <= 1
    assert same.box[1] > top.box[1] + top.box[3]
    assert cross.box[1] > same.box[1] + 140
    frame_box = await b.page.locator("#cross").bounding_box()
    assert frame_box is not None and frame_box["y"] < cross.box[1] < frame_box["y"] + frame_box["height"]
    # act inside the cross-origin frame
    res = await b.act({"click_element_by_index": {"index": cross.index}})
    assert res.text_content == f"Clicked [{cross.index}]<button>Frame button />."
    frame = next(f for f in b.page.frames if f.url.startswith(servers.other))
    assert await frame.inner_text("#where") == "Frame clicked"
    inputs = [e for e in snap.elements.values() if e.tag == "input"]
    res = await b.act({"input_text": {"index": inputs[1].index, "text": "cross"}})
    assert res.text_content.endswith("its value is now 'cross'.")


async def test_one_call_per_frame(load: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    b: BrowserSession = await load("frames.html")
    await b.snapshot()  # registers each iframe element with its parent's page script, once
    calls: list[str] = []
    original = Locator.text_content

    async def counting(self: Locator, timeout: float | None = None) -> Any:
        calls.append(self.page.url)
        return await original(self, timeout=timeout)

    monkeypatch.setattr(Locator, "text_content", counting)
    setup_calls: list[str] = []
    original_fe = Frame.frame_element
    original_qs = ElementHandle.query_selector

    async def counting_fe(self: Frame) -> Any:
        setup_calls.append(self.url)
        return await original_fe(self)

    async def counting_qs(self: ElementHandle, selector: str) -> Any:
        setup_calls.append(selector)
        return await original_qs(self, selector)

    monkeypatch.setattr(Frame, "frame_element", counting_fe)
    monkeypatch.setattr(ElementHandle, "query_selector", counting_qs)
    await b.snapshot()
    assert len(calls) == 3  # main page and two iframes, one round trip each
    assert setup_calls == []


async def test_a_child_frame_its_parent_forgot_is_registered_again(load: Any) -> None:
    """A token the parent's page script does not know (its isolated world was made anew) is registered again."""
    b: BrowserSession = await load("frames.html")
    first = (await b.snapshot()).text
    tokens = frame_tokens(b)
    children = [f for f in b.page.frames if f is not b.page.main_frame]
    assert len(children) == 2 and all(f in tokens for f in children)
    for frame in children:
        tokens[frame] = 10**9  # never registered anywhere
    again = await b.snapshot()
    assert again.text.count("Frame button") == first.count("Frame button") == 2
    assert all(tokens[f] != 10**9 for f in children)


async def test_hidden_and_covered(load: Any) -> None:
    b: BrowserSession = await load("visibility.html")
    text = (await b.snapshot()).text
    for hidden in ("Display none", "Visibility hidden", "Opacity zero", "Aria hidden", "Screen reader only"):
        assert hidden not in text
    assert "[0]<button>OK />" in text
    assert "Under the modal />" not in text  # covered by the modal: not clickable, so not indexed
    res = await b.act({"click_element_by_index": {"index": 0}})
    assert not res.is_error
    text = (await b.snapshot()).text
    assert "<button id=under>Under the modal />" in text


async def test_viewport_mode_full_page_and_scroll_hints(load: Any) -> None:
    b: BrowserSession = await load("scroll.html")
    snap = await b.snapshot()
    assert snap.pixels_above == 0 and snap.pixels_below > 2000
    assert "Bottom button" not in snap.text
    assert snap.text.endswith(
        f"... {snap.pixels_below} pixels below ({snap.pixels_below / 800:.1f} pages) - scroll down to see more ..."
    )
    assert "<div scrollable=down:900 id=list />" in snap.text
    assert "<div scrollable=right:700 id=wide />" in snap.text
    assert "\tRow 1" in snap.text and "Row 20" not in snap.text  # clipped by the list's own scroll box
    full = await b.snapshot(full_page=True)
    assert "Bottom button" in full.text and "Row 50" in full.text and full.text.endswith("[End of page]")
    assert next(e for e in full.elements.values() if e.text == "Bottom button").in_viewport is False
    await b.page.evaluate("window.scrollTo(0, 1000)")
    snap = await b.snapshot()
    assert "... 1000 pixels above (1.2 pages) - scroll up to see more ..." in snap.text
    assert snap.scroll == (0, 1000)


async def test_new_elements_are_marked(load: Any) -> None:
    b: BrowserSession = await load("dynamic.html")
    text = (await b.snapshot()).text
    assert "*[" not in text
    await b.act({"click_element_by_index": {"index": index_of(text, "Add button")}})
    text = (await b.snapshot()).text
    starred = [ln for ln in text.splitlines() if ln.lstrip().startswith("*[")]
    assert len(starred) == 1 and starred[0].endswith("<button>Added 1 />")
    text = (await b.snapshot()).text
    assert "*[" not in text  # only new since the previous snapshot


async def test_pointer_cards_and_listeners(load: Any) -> None:
    b: BrowserSession = await load("dynamic.html")
    text = (await b.snapshot()).text
    card = line_of(text, "Blue Hat")
    assert card.endswith("<div id=card>Blue Hat Warm wool />")
    assert re.search(r"\n\t\[\d+\]<button>Buy />", text)  # nested under the card
    assert "<div id=listener>Listener div />" in text  # addEventListener('click') on a plain div


async def test_budget_truncation_viewport_first(load: Any) -> None:
    b: BrowserSession = await load("huge.html")
    snap = await b.snapshot(full_page=True, max_elements=50)
    assert len(snap.elements) == 50 and snap.truncated
    assert snap.omitted_elements == 2950
    assert "... 2950 more elements below are not listed (snapshot budget) ..." in snap.text
    assert "[Snapshot truncated (max_elements=50): showing 50 of 3000 elements" in snap.text
    await b.page.evaluate("window.scrollTo(0, 20000)")
    snap = await b.snapshot(full_page=True, max_elements=20)
    assert "more elements above are not listed" in snap.text and "more elements below are not listed" in snap.text
    assert all(e.in_viewport for e in snap.elements.values())
    snap = await b.snapshot(full_page=True, max_chars=1500)
    assert len(snap.text) <= 1500 and snap.truncated
    # full-page mode has a default budget, and says what it cut and how to see more
    snap = await b.snapshot(full_page=True)
    assert snap.truncated and len(snap.text) <= 40_000 < len((await b.snapshot(full_page=True, max_chars=10**7)).text)
    assert f"[Snapshot truncated (max_chars=40000): showing {len(snap.elements)} of 3000 elements" in snap.text
    assert "Scroll to bring the others into view." in snap.text
    # viewport mode of a huge page stays small without any budget
    snap = await b.snapshot()
    assert len(snap.elements) < 120 and not snap.truncated


async def test_viewport_skips_rows_below_the_fold_but_not_what_shows_from_them(load: Any) -> None:
    """Rows below the fold are walked without measuring each one; a fixed element inside one still shows,
    and scrolling to rows the walk skipped does not mark them new."""
    b: BrowserSession = await load("huge.html")
    await b.page.evaluate(
        """() => { const cell = document.querySelectorAll('#t tbody tr')[200].cells[1];
        cell.insertAdjacentHTML('beforeend', '<button style="position:fixed;left:600px;top:10px">Pinned</button>'); }"""
    )
    await b.page.evaluate(
        """() => document.body.insertAdjacentHTML('afterbegin', `<div style="height:40px;overflow:auto">
        <div style="height:400px"><button style="position:fixed;left:600px;top:300px">Fixed in scroller</button>
        </div></div>`)"""
    )
    text = (await b.snapshot()).text
    assert "<button>Pinned />" in text
    assert "<button>Fixed in scroller />" in text  # outside its container's clip, but fixed escapes it
    assert "Open 100" not in text and "Open 1 />" in text
    await b.page.evaluate("window.scrollTo(0, 20000)")
    text = (await b.snapshot()).text
    assert "Open 1 />" not in text and "<button>Pinned />" in text
    assert "*[" not in text  # rows seen (off screen) before are not new


async def test_small_page_is_compact(load: Any) -> None:
    b: BrowserSession = await load("nav.html")
    text = (await b.snapshot()).text
    assert count_tokens(text) <= 130, (count_tokens(text), text)


async def test_tabs_and_notices_in_header(load: Any) -> None:
    b: BrowserSession = await load("tabs.html")
    text = (await b.snapshot()).text
    res = await b.act({"click_element_by_index": {"index": index_of(text, "Open docs")}})
    assert "It opened a new tab" in res.text_content, res.text_content
    snap = await b.snapshot()
    assert len(snap.tabs) == 2 and snap.tabs[1].current and snap.tabs[1].title == "Docs"
    assert re.search(r"^Tabs: \d+ Tabs \| \d+ Docs \(current\)$", snap.text, re.M)

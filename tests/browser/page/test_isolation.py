"""The page script runs in Playwright's isolated world: a page that hooks DOM prototypes and builtins in its own
world, or goes looking for the page API, changes neither what the snapshot reports nor which element an index
points to, in the top document, a same-origin iframe and a cross-site (out-of-process) iframe.

``pages/hooks.js`` holds the hooks; each test first shows they really do fool main-world code (the control),
so a page script that ran in the page's world again would fail these tests."""

from __future__ import annotations

from typing import Any

from playwright.async_api import Frame

from notebook_agent.browser import BrowserSession
from notebook_agent.browser.page.snapshot import ElementInfo, Snapshot

# What main-world code reads with the hooks in place: labels swapped, the real Continue button zero-sized,
# pushes of it replaced by the Delete button, every notebook_agent symbol the page's own, JSON rewritten.
CONTROL_JS = """() => {
  const c = document.getElementById('cont'), d = document.getElementById('delete');
  const pushed = []; pushed.push(c);
  return {
    text: c.textContent, inner: c.innerText, width: c.getBoundingClientRect().width, pushed: pushed[0] === d,
    symbol: Symbol.for('notebook_agent.a') === Symbol.for('notebook_agent.b'),
    json: JSON.stringify({els: [{text: 'Continue'}]}),
  };
}"""
HOOKED = {
    "text": "Delete account",
    "inner": "Delete account",
    "width": 0,
    "pushed": True,
    "symbol": True,
    "json": '{"els":[{"text":"Delete account"}]}',
}


def _frames(b: BrowserSession, servers: Any) -> list[Frame]:
    """The top document, the same-origin iframe and the cross-site one."""
    page = b.page
    inner = [f for f in page.frames if f.url.endswith("/hooked_inner.html")]
    same = next(f for f in inner if f.url.startswith(servers.main))
    cross = next(f for f in inner if f.url.startswith(servers.other))
    return [page.main_frame, same, cross]


def _button(snap: Snapshot, frame: Frame, label: str) -> ElementInfo:
    for el in snap.elements.values():
        if el.tag == "button" and el.text == label and el.frame == frame.url:
            return el
    raise AssertionError(f"no <button>{label} /> of {frame.url} in:\n{snap.text}")


async def test_hooked_prototypes_change_neither_the_snapshot_nor_the_index(load: Any, servers: Any) -> None:
    b: BrowserSession = await load("hooked.html")
    frames = _frames(b, servers)
    for frame in frames:  # the control: these hooks fool main-world code in every frame
        assert await frame.evaluate(CONTROL_JS) == HOOKED, frame.url
    for frame in frames:
        await frame.evaluate("() => { window.mutations = 0; window.asked = []; }")
    snap = await b.snapshot()
    assert "fake" not in snap.text
    for frame in frames:
        cont, delete = _button(snap, frame, "Continue"), _button(snap, frame, "Delete account")
        assert cont.box is not None and cont.box[2] > 0 and cont.box[3] > 0  # measured, not zero-sized
        assert cont.box[0] < delete.box[0]  # type: ignore[index]  # in their true places
        # the page saw nothing of the snapshot: no mutation, no notebook_agent symbol asked for
        assert await frame.evaluate("() => [window.mutations, window.asked]") == [0, []], frame.url
    for frame in frames:
        snap = await b.snapshot()
        res = await b.act({"click_element_by_index": {"index": _button(snap, frame, "Continue").index}})
        assert not res.is_error, res.text_content
        assert await frame.title() == "continued", frame.url


async def test_the_page_cannot_find_or_tamper_with_the_page_api(load: Any, servers: Any) -> None:
    b: BrowserSession = await load("hooked.html")
    frames = _frames(b, servers)
    snap = await b.snapshot()
    for frame in frames:
        found = await frame.evaluate("() => window.tamper()")
        # only the main-world tracker's own sets (which elements got listeners) are there to find
        assert set(found) <= {"notebook_agent.listeners", "notebook_agent.handlers"}, (frame.url, found)
    for frame in frames:
        res = await b.act({"click_element_by_index": {"index": _button(snap, frame, "Continue").index}})
        assert not res.is_error, res.text_content
        assert await frame.title() == "continued", frame.url
        snap = await b.snapshot()


async def test_handlers_and_listeners_set_by_page_script_still_count(browser: BrowserSession) -> None:
    """Handler properties and listeners live in the page's world; the main-world tracker reports them to the
    isolated one (handler content attributes it reads itself)."""
    await browser.page.set_content(
        "<div id=prop>Property handler</div><div id=attr onclick='1'>Attribute handler</div>"
        "<div id=cleared>Cleared handler</div><div id=listened>Listened</div><div id=plain>Plain</div>"
        "<div id=host></div><svg id=shape width=40 height=20><rect width=40 height=20 /></svg><script>"
        "const $ = (id) => document.getElementById(id);"
        "$('prop').onclick = () => { document.title = 'prop'; };"
        "$('cleared').onclick = () => {}; $('cleared').onclick = null;"
        "$('listened').addEventListener('mousedown', () => {});"
        "$('shape').onclick = () => {};"
        "const root = $('host').attachShadow({mode: 'open'});"
        "root.innerHTML = '<span>In shadow</span>';"
        "root.firstChild.addEventListener('click', () => {});"
        "</script>"
    )
    snap = await browser.snapshot()
    lines = {el.text or el.tag: el for el in snap.elements.values()}
    assert {"Property handler", "Attribute handler", "Listened", "In shadow", "svg"} <= set(lines), snap.text
    assert "Cleared handler" not in lines and "Plain" not in lines, snap.text
    res = await browser.act({"click_element_by_index": {"index": lines["Property handler"].index}})
    assert not res.is_error and await browser.page.title() == "prop"

"""A click goes straight to a point as a trusted mouse event when the page script finds the element itself hit
there (browser/actions/pointer.py ``aimed_click``), and through Playwright's click otherwise. Every combination
of where the element is, what covers it (from after the state was read) and whether it moves is tried: the
element gets exactly one click and nothing that covers it ever gets a press, whichever path was taken; the fast
path is taken exactly where nothing is in the way."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from playwright.async_api import ElementHandle

from notebook_agent.browser import BrowserSession

WHERE = ("view", "below", "scroller", "shadow", "iframe")
COVER = ("none", "passthrough", "overlay", "decoy")
MOTION = ("still", "animating")

LOG = "window.__log = window.__log || []"
RECORD = "(e) => (top.__log = top.__log || []).push('target:' + e.type + ':' + e.isTrusted)"

# What covers the page once the state has been read: nothing; a layer the pointer passes through; a layer
# that takes every press; a decoy slid under the pointer the moment the mouse arrives.
COVERS = {
    "passthrough": "const c = document.createElement('div'); c.id = 'cover'; "
    "c.style.cssText = 'position:fixed;inset:0;z-index:9;pointer-events:none;background:rgba(0,0,0,.1)'; "
    "document.body.append(c);",
    "overlay": "const c = document.createElement('div'); c.id = 'cover'; "
    "c.style.cssText = 'position:fixed;inset:0;z-index:9;background:rgba(0,0,0,.1)'; document.body.append(c); "
    "for (const t of ['pointerdown', 'mousedown', 'click']) c.addEventListener(t, () => __log.push('cover:' + t));",
    "decoy": "document.addEventListener('pointermove', () => { if (document.getElementById('cover')) return; "
    "const c = document.createElement('div'); c.id = 'cover'; "
    "c.style.cssText = 'position:fixed;inset:0;z-index:9;background:rgba(0,0,0,.1)'; document.body.append(c); "
    "for (const t of ['pointerdown', 'mousedown', 'click']) c.addEventListener(t, () => __log.push('cover:' + t)); "
    "}, true);",
}


def page_html(where: str, motion: str) -> str:
    spin = "@keyframes sway { from { transform: translateX(0) } to { transform: translateX(40px) } }"
    moving = "animation: sway 0.4s infinite alternate linear;" if motion == "animating" else ""
    button = f"<button id=target style='{moving}'>Press me</button>"
    if where == "view":
        body = f"<p>{button}</p>"
    elif where == "below":
        body = f"<div style='height:2500px'>tall</div><p>{button}</p>"
    elif where == "scroller":
        body = f"<div style='height:150px;overflow:auto'><div style='height:900px'>inner</div>{button}</div>"
    elif where == "shadow":
        body = (
            "<div id=host></div><script>const r = document.getElementById('host').attachShadow({mode: 'open'});"
            f'r.innerHTML = "<style>{spin}</style>{button}";</script>'
        )
    else:  # a same-site frame: its coordinates are not the page's, so Playwright's click maps them
        body = f"<iframe style='width:400px;height:200px' srcdoc=\"<style>{spin}</style>{button}\"></iframe>"
    return f"<!doctype html><style>{spin}</style><body>{body}</body>"


async def target_handle(b: BrowserSession, where: str) -> ElementHandle:
    frame = b.page.frames[1] if where == "iframe" else b.page.main_frame
    handle = await frame.evaluate_handle(
        "() => document.getElementById('target') || document.getElementById('host').shadowRoot.getElementById('target')"
    )
    element = handle.as_element()
    assert element is not None
    return element


CASES = list(itertools.product(WHERE, COVER, MOTION))


@pytest.mark.parametrize(("where", "cover", "motion"), CASES, ids=["-".join(c) for c in CASES])
async def test_a_click_reaches_its_element_once_and_never_what_covers_it(
    browser: BrowserSession, where: str, cover: str, motion: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    b = browser
    await b.page.set_content(page_html(where, motion))
    await b.page.evaluate(LOG)
    target = await target_handle(b, where)
    for event in ("pointerdown", "click"):
        await target.evaluate(f"(t) => t.addEventListener('{event}', {RECORD})")
    text = (await b.snapshot(full_page=True)).text
    index = next(int(line.split("[")[1].split("]")[0]) for line in text.splitlines() if "Press me" in line)
    if cover != "none":
        await b.page.evaluate(COVERS[cover])
    through_playwright: list[Any] = []
    original = ElementHandle.click

    async def spy(self: ElementHandle, *args: Any, **kwargs: Any) -> None:
        through_playwright.append(1)
        await original(self, *args, **kwargs)

    monkeypatch.setattr(ElementHandle, "click", spy)
    res = await b.act({"click_element_by_index": {"index": index}})
    assert not res.is_error, res.text_content
    log: list[str] = await b.page.evaluate("window.__log")
    assert not [e for e in log if e.startswith("cover")], (log, res.text_content)
    clicks = [e for e in log if e.startswith("target:click")]
    assert len(clicks) == 1, (log, res.text_content)
    clear = cover in ("none", "passthrough") and motion == "still"
    if clear:  # a trusted click, and straight to the point unless the element is in a frame
        assert clicks == ["target:click:true"] and "JavaScript click" not in res.text_content, (log, res.text_content)
        assert bool(through_playwright) == (where == "iframe"), (where, through_playwright)
    else:  # in the way or moving: the aimed click stood back, Playwright's took over (and its JavaScript fallback)
        assert through_playwright, (where, cover, motion)

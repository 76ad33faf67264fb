"""Session behaviour: dialogs, closed/crashed tabs and browsers, screenshots, lifecycle."""

from __future__ import annotations

import asyncio
import os
import re
import signal
from pathlib import Path
from typing import Any

from notebook_agent.browser import DEFAULT_ARGS, BrowserSession, DialogInfo, find_browser
from notebook_agent.browser.session.launch import sandbox_possible
from notebook_agent.testing import close_tab, launched
from tests.waits import wait_until


def idx(text: str, needle: str) -> int:
    for line in text.splitlines():
        if needle in line:
            m = re.search(r"\[(\d+)\]", line)
            assert m
            return int(m.group(1))
    raise AssertionError(needle)


async def test_confirm_accepted_by_default_and_reported(load: Any) -> None:
    b: BrowserSession = await load("dialog.html")
    text = (await b.snapshot()).text
    res = await b.act({"click_element_by_index": {"index": idx(text, "Delete")}})
    assert res.text_content == (
        "Clicked [0]<button id=del>Delete />. A confirm dialog said 'Delete item?'; it was accepted."
    )
    assert await b.page.inner_text("#r") == "deleted"
    assert b.log[-1] == "A confirm dialog said 'Delete item?'; it was accepted."
    res = await b.act({"click_element_by_index": {"index": idx(text, "Save")}})
    assert res.text_content.endswith("An alert dialog said 'Saved!'; it was accepted.")


async def test_dialog_policies(load: Any) -> None:
    b: BrowserSession = await load("dialog.html")
    text = (await b.snapshot()).text
    b.dialog_policy = "dismiss"
    res = await b.act({"click_element_by_index": {"index": idx(text, "Delete")}})
    assert res.text_content.endswith("A confirm dialog said 'Delete item?'; it was dismissed.")
    assert await b.page.inner_text("#r") == "kept"
    seen: list[DialogInfo] = []

    async def policy(info: DialogInfo) -> bool | str:
        seen.append(info)
        return "Bob" if info.type == "prompt" else False

    b.dialog_policy = policy
    res = await b.act({"click_element_by_index": {"index": idx(text, "Name")}})
    assert res.text_content.endswith("A prompt dialog said 'Your name?'; it was answered with 'Bob'.")
    assert await b.page.inner_text("#r") == "name=Bob"
    assert seen[0].default_value == "Anon" and seen[0].url.endswith("dialog.html")
    b.dialog_policy = lambda info: None  # None: accept
    res = await b.act({"click_element_by_index": {"index": idx(text, "Delete")}})
    assert res.text_content.endswith("it was accepted.")


async def test_late_dialog_reported_in_next_snapshot(load: Any) -> None:
    b: BrowserSession = await load("dialog.html")
    text = (await b.snapshot()).text
    res = await b.act({"click_element_by_index": {"index": idx(text, "Later")}})
    note = "An alert dialog said 'Later alert'; it was accepted."
    await wait_until(lambda: note in b.log, 10, "the late alert was answered")
    snap = await b.snapshot()
    assert note in res.text_content or f"Note: {note}" in snap.text
    assert b.notices == []


async def test_closed_tab_is_replaced_with_a_notice(browser: BrowserSession) -> None:
    await browser.page.close()
    snap = await browser.snapshot()
    assert "Note: The browser tab was closed; a new tab was opened at about:blank." in snap.text
    assert browser.page.url == "about:blank"


async def test_a_tab_that_never_confirms_it_closed_is_closed_by_force_and_never_listed_again(load: Any) -> None:
    """A tab whose close Chromium never confirms in time (a page reloading itself forever, a busy renderer) is
    closed through DevTools and dropped from the tabs, so no later tab list or clean-up keeps meeting it. The
    normal close is given no time at all here, so only the forced path can close it."""
    b: BrowserSession = await load("nav.html")
    stuck = b.page
    await b.new_tab()
    before = [t.id for t in await b.tab_infos()]
    await close_tab(b, stuck, timeout=0)
    assert [t.id for t in await b.tab_infos()] == before[1:]
    for _ in range(100):  # the target closes a moment after DevTools is asked
        if stuck.is_closed():
            break
        await asyncio.sleep(0.05)
    assert stuck.is_closed() and stuck not in b.context.pages
    assert await b.close_popups(frozenset()) == 0


async def test_crashed_page_is_replaced(load: Any) -> None:
    b: BrowserSession = await load("nav.html")
    await b.snapshot()
    crashed = b.page
    cdp = await b.context.new_cdp_session(crashed)
    async with crashed.expect_event("crash"):  # the session's own "crash" listener runs before this one
        crash = asyncio.ensure_future(cdp.send("Page.crash"))  # never answers: the renderer is gone
    crash.cancel()
    res = await b.act({"click_element_by_index": {"index": 0}})
    assert res.is_error
    assert re.fullmatch(
        r"Error: no element \[0\] in the current page snapshot\. Use an index from the latest browser state\. "
        r"The page in tab \d+ crashed; it was reopened at about:blank \(tab \d+\)\.",
        res.text_content,
    ), res.text_content
    assert b.page is not crashed and b.page.url == "about:blank"


async def test_screenshot_plain_and_highlighted(load: Any) -> None:
    b: BrowserSession = await load("frames.html")
    png = await b.screenshot()
    assert png.startswith(b"\x89PNG")
    jpeg = await b.screenshot(format="jpeg")
    assert jpeg.startswith(b"\xff\xd8")
    marked = await b.screenshot(highlight=True)  # takes a snapshot first
    assert b.last_snapshot is not None and marked.startswith(b"\x89PNG") and marked != png
    assert await b.page.evaluate("document.getElementById('__notebook_agent_overlay__')") is None
    full = await b.screenshot(full_page=True, highlight=True)
    assert full.startswith(b"\x89PNG")


async def test_own_session_lifecycle_and_relaunch(servers: Any) -> None:
    async with BrowserSession(viewport=(800, 600)) as b:
        assert b.page.viewport_size == {"width": 800, "height": 600}
        await b.page.goto(servers.url("nav.html"))
        await b.snapshot()
        await b.browser.close()  # the user (or a crash) closed the whole browser
        res = await b.act({"click_element_by_index": {"index": 0}})
        assert res.text_content == (
            "Error: no element [0] in the current page snapshot. Use an index from the latest browser state. "
            "The browser was closed; it was relaunched at about:blank."
        )
        assert b.browser.is_connected() and b.page.url == "about:blank"
        await b.page.goto(servers.url("nav.html"))
        assert (await b.snapshot()).elements[0].text == "Next page"
    assert launched(b) == (None, None)
    await b.close()  # twice is fine


async def test_connect_over_cdp(servers: Any, tmp_path: Path) -> None:
    """cdp_url attaches to a Chrome someone else started (and leaves it running on close)."""
    proc = await asyncio.create_subprocess_exec(
        find_browser(),
        "--headless",
        "--remote-debugging-port=0",
        f"--user-data-dir={tmp_path}",
        *DEFAULT_ARGS,
        *([] if sandbox_possible() else ["--no-sandbox"]),  # root needs it; nobody else gets it
        "about:blank",
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        port_file = tmp_path / "DevToolsActivePort"
        await wait_until(
            lambda: port_file.exists() and port_file.read_text().strip(), 30, "Chromium wrote DevToolsActivePort"
        )
        port = port_file.read_text().split()[0]
        async with BrowserSession(cdp_url=f"http://127.0.0.1:{port}") as b:
            assert b.browser_path == ""
            res = await b.act({"go_to_url": {"url": servers.url("nav.html")}})
            assert res.text_content.startswith("Navigated to ")
            assert (await b.snapshot()).elements[0].text == "Next page"
            # A lost connection is made again to the same context, which this Playwright has not met: the page
            # script is registered for it under a name of its own.
            await b.browser.close()
            res = await b.act({"go_to_url": {"url": servers.url("nav.html")}})
            assert res.text_content.startswith("Navigated to "), res.text_content
            snap = await b.snapshot()
            assert snap.elements[0].text == "Next page"
            assert not (await b.act({"click_element_by_index": {"index": 0}})).is_error
        assert proc.returncode is None  # still running: we only disconnected
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        await proc.wait()


def test_the_sandbox_is_dropped_only_for_root(monkeypatch: Any) -> None:
    import os
    import sys

    from notebook_agent.browser.session import launch

    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    assert launch.sandbox_possible() is False
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert launch.sandbox_possible() is True
    assert "--no-sandbox" not in launch.DEFAULT_ARGS


async def test_tab_sessions_keep_to_their_own_tabs(browser: BrowserSession, servers: Any) -> None:
    """Two tab sessions of one browser act at the same time; each one's popups stay its own."""
    await browser.page.goto(servers.url("nav.html"))
    a = await browser.tab_session(servers.url("tabs.html"))
    b = await browser.tab_session(servers.url("form.html"))
    try:
        assert a.is_tab_session and not browser.is_tab_session
        assert a.context is browser.context  # same cookies and storage
        ids = {browser.tab_id(browser.page), a.tab_id(a.page), b.tab_id(b.page)}
        assert len(ids) == 3  # tab ids are unique across the browser
        # a and b navigate concurrently: neither interrupts the other, the session's own tab is untouched
        await asyncio.gather(a.page.goto(servers.url("nav2.html")), b.page.goto(servers.url("scroll.html")))
        assert a.page.url.endswith("/nav2.html") and b.page.url.endswith("/scroll.html")
        assert browser.page.url.endswith("/nav.html")
        await a.page.goto(servers.url("tabs.html"))
        snap = await a.snapshot()
        result = (await a.act("click_element_by_index", {"index": idx(snap.text, "Open docs")})).text_content
        assert "It opened a new tab" in result and "is now the current tab" in result, result
        assert a.page.url.endswith("/target.html")  # the popup is a's current tab ...
        assert b.page.url.endswith("/scroll.html") and browser.page.url.endswith("/nav.html")  # ... nobody else's
        assert [t.url.rsplit("/", 1)[-1] for t in await a.tab_infos()] == ["tabs.html", "target.html"]
        assert len(await b.tab_infos()) == 1 and len(await browser.tab_infos()) == 1
        assert not browser.take_notices() and not b.take_notices()  # no "a new tab was opened" elsewhere
        popup = a.page
    finally:
        await a.close()
        await b.close()
    assert popup.is_closed()  # closing a tab session closes its tabs (and its popups), nothing else
    assert not browser.page.is_closed() and browser.page.url.endswith("/nav.html")
    # a tab the user opens from outside the sessions belongs to the session itself, with a notice
    outside = await browser.context.new_page()
    await wait_until(lambda: browser.page is outside, 10, "the tab opened from outside became the current tab")
    await browser.ensure_page()
    assert browser.page is outside and any("new tab" in n for n in browser.take_notices())

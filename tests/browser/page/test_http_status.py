"""An HTTP error page is said as one in the state, on real Chromium: the top document's 4xx or 5xx, however the
tab got there (the start page, go_to_url, a link, a form, a redirect), and nothing for a page that loaded fine,
an error in a frame, or a page that changed its address in place after loading fine."""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notebook_agent.browser import BrowserSession
from tests.browser.conftest import MADE, Servers

_made = itertools.count(1)
WAYS = ["start", "go_to_url", "link", "form", "redirect"]
CODES = st.sampled_from([200, 201]) | st.integers(400, 599).filter(lambda c: c != 407)  # 407: a proxy's to answer


def said(code: int) -> str:
    return f"(the server answered HTTP {code}: an error page)"


async def arrive(b: BrowserSession, servers: Servers, way: str, code: int) -> None:
    """Open ``/status?code=CODE`` in the tab ``way``'s way."""
    target = f"/status?code={code}"
    if way == "start":
        await b.page.goto(servers.url(target.lstrip("/")))
        return
    if way == "go_to_url":
        res = await b.act({"go_to_url": {"url": servers.url(target.lstrip("/"))}})
        assert not res.is_error, res.text_content
        return
    if way == "redirect":
        await b.page.goto(servers.url(f"redirect?to={target}"))
        return
    key = f"way{next(_made)}.html"
    MADE[key] = (
        f'<!doctype html><title>From</title><a href="{target}">go on</a>'
        if way == "link"
        else f'<!doctype html><title>From</title><form method=post action="{target}"><button>Send</button></form>'
    )
    await b.page.goto(servers.url(f"made/{key}"))
    snap = await b.snapshot()
    assert "HTTP" not in snap.text.splitlines()[0]
    (index,) = snap.elements
    res = await b.act({"click_element_by_index": {"index": index}})
    assert not res.is_error, res.text_content


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(way=st.sampled_from(WAYS), code=CODES)
async def test_the_state_says_an_error_page_is_one_however_it_was_reached(
    browser: BrowserSession, servers: Servers, way: str, code: int
) -> None:
    await arrive(browser, servers, way, code)
    snap = await browser.snapshot()
    head = snap.text.splitlines()[0]
    assert head.startswith(f"Current page: [Status {code}](")
    if code >= 400:
        assert head.endswith(said(code)) and snap.status == code
    else:
        assert "HTTP" not in head and snap.status == 0


async def test_an_error_only_in_a_frame_or_before_a_change_in_place_is_not_said(
    browser: BrowserSession, servers: Servers
) -> None:
    key = f"framed{next(_made)}.html"
    MADE[key] = '<!doctype html><title>Fine</title><p>fine</p><iframe src="/status?code=500"></iframe>'
    await browser.page.goto(servers.url(f"made/{key}"), wait_until="load")
    assert (await browser.snapshot()).status == 0
    await browser.page.goto(servers.url("status?code=404"))
    assert (await browser.snapshot()).status == 404
    await browser.page.evaluate("history.pushState({}, '', '/elsewhere')")  # the same document: still its answer
    assert (await browser.snapshot()).status == 404
    await browser.page.goto(servers.url(f"made/{key}"))
    assert (await browser.snapshot()).status == 0
    await browser.page.go_back()  # the error page again, from history
    snap: Any = await browser.snapshot()
    assert snap.status == 404 and snap.text.splitlines()[0].endswith(said(404))

"""The pool of contexts a recipe map's rows run in, on real Chromium: a context handed to the next row keeps
nothing of the last one (storage, even where the page hooked ``Storage.prototype.clear``; cookies, including
one an unload handler sets; extra tabs; the page itself), and a context whose row ends when no row is left to
start is not cleaned for nobody, only closed with the pool."""

from __future__ import annotations

from notebook_agent.agent.batch.pool import BrowserPool
from notebook_agent.browser import BrowserSession
from notebook_agent.browser.session.reset import reset_context
from tests.browser.conftest import Servers

#: What a row leaves behind: storage the page keeps from being cleared in its own world, a cookie, a cookie set
#: as the page goes away, and a second tab.
LEAVE = """() => {
  localStorage.setItem("row", "1");
  sessionStorage.setItem("row", "1");
  document.cookie = "row=1; path=/";
  Storage.prototype.clear = function () {};
  addEventListener("pagehide", () => { document.cookie = "late=1; path=/"; });
}"""


async def _what_is_left(session: BrowserSession, url: str) -> tuple[int, int, list[str]]:
    page = await session.ensure_page()
    await page.goto(url)
    local, tab = await page.evaluate("() => [localStorage.length, sessionStorage.length]")
    return local, tab, sorted(c["name"] for c in await page.context.cookies())


async def test_a_cleaned_context_keeps_nothing_of_its_row(browser: BrowserSession, servers: Servers) -> None:
    session = await browser.fork()
    try:
        await (await session.ensure_page()).context.new_page()
        page = await session.ensure_page()  # the tab the row ends on
        await page.goto(servers.url("form.html"))
        await page.evaluate(LEAVE)
        assert len(page.context.pages) == 2
        assert await reset_context(session)
        tab = await session.ensure_page()
        assert tab.url == "about:blank" and tab.context.pages == [tab]
        assert await tab.context.cookies() == []  # "late", set by the page's pagehide handler, included
        assert await _what_is_left(session, servers.url("form.html")) == (0, 0, [])
    finally:
        await session.close()


async def test_a_context_no_row_will_take_is_closed_with_the_pool_not_cleaned(
    browser: BrowserSession, servers: Servers
) -> None:
    rows_left = [True]
    pool = BrowserPool(browser, more=lambda: rows_left[0])
    async with pool.lease() as first:
        page = await first.ensure_page()
        await page.goto(servers.url("form.html"))
    assert page.url == "about:blank"  # another row may come: cleaned, and taken again
    async with pool.lease() as second:
        assert second is first
        await page.goto(servers.url("form.html"))
        rows_left[0] = False
    assert page.url == servers.url("form.html")  # no row is left: not cleaned
    assert pool.opened == 1 and not page.is_closed()
    await pool.close()
    assert page.is_closed()

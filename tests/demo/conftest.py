"""Fixtures for the demo tests: one demo server per session, a real Chromium via Playwright (whichever the package's
own :func:`~notebook_agent.browser.find_browser` finds; the tests that need it skip, with its message, when it
finds none)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
import pytest_asyncio
from playwright.async_api import Browser, Page, async_playwright

from notebook_agent.browser import BrowserNotFoundError, find_browser
from notebook_agent.demo import DemoServer, serve_demo

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


@pytest.fixture(scope="session")
def demo_server() -> Iterator[DemoServer]:
    with serve_demo() as server:
        yield server


@pytest.fixture(scope="session")
def chromium_path() -> str:
    try:
        return find_browser()
    except BrowserNotFoundError as exc:
        pytest.skip(str(exc))


@pytest_asyncio.fixture(scope="session")
async def chromium(chromium_path: str) -> AsyncIterator[Browser]:
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS, headless=True)
        yield browser
        await browser.close()


@pytest_asyncio.fixture
async def page(chromium: Browser) -> AsyncIterator[Page]:
    """A fresh page in its own context (empty localStorage), failing the test on any page script error."""
    context = await chromium.new_context(viewport={"width": 1280, "height": 800})
    page = await context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    await context.close()
    assert not errors, f"JavaScript errors on the demo site: {errors}"

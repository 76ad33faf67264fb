"""The fixed parts of an exported Playwright script (export.py writes the steps): its header, its helpers and
its entry point, in the sync and the async flavour of Playwright's API.

They are kept as text apart from the code that writes the steps so the script reads as one file a person could
have written, and so that what the script does besides the steps (launch a browser, rebase URLs, check
secrets, run in a notebook cell) is reviewed in one place. Nothing from a run is ever pasted into these texts
except the constants, which export.py makes into literals first. The script imports only Playwright: it must
run where notebook_agent is not installed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_HEADER = '''#!/usr/bin/env python3
# A notebook_agent run exported as a Playwright script: the recorded steps again, with no model.
#
#     pip install playwright            (this script needs nothing else)
#     python SCRIPT.py [--base-url URL] [--headed]
#
# Each element is found by the locator that found exactly it when the run was recorded. Before each action on an
# element the script checks what the step saw: the page it was on (its path) and the element, visible.
# --base-url replays against another host: the recorded origin in every URL is replaced by it.
# In a notebook cell it runs as it is (on a thread of its own, since the notebook's event loop is running).

import argparse
import asyncio
import concurrent.futures
import os
import re
import shutil
import sys
from urllib.parse import urlsplit

from playwright.@api@ import Error, expect, @playwright@

RUN_ID = @RUN_ID@
TASK = @TASK@
RECORDED_ORIGIN = @RECORDED_ORIGIN@
START_URL = @START_URL@
BASE_URL = @BASE_URL@  # where the recorded origin is now (--base-url overrides it)
SECRETS = @SECRETS@  # environment variables holding the secrets the run typed (never their values)
PAGE_HEIGHT = @PAGE_HEIGHT@  # the agent's window: 1280 x PAGE_HEIGHT
STEP = 0  # the step being replayed, for the message when one fails


def find_chromium():
    """A Chromium or Chrome of this system: chromium, chromium-browser or google-chrome on PATH."""
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    sys.exit(
        "No Chromium found: run `python -m playwright install chromium`, or set CHROMIUM_PATH to a Chromium "
        "or Chrome executable."
    )


@def@ launch(chromium, headed):
    """$CHROMIUM_PATH when it is set, else Playwright's own Chromium when installed, else the system's."""
    path = os.environ.get("CHROMIUM_PATH")
    if not path:
        try:
            return @aw@chromium.launch(headless=not headed)
        except Error as exc:
            if "Executable doesn't exist" not in str(exc):
                raise
        path = find_chromium()
    return @aw@chromium.launch(headless=not headed, executable_path=path)


def at(url):
    """``url`` with the recorded origin replaced by BASE_URL; a URL of another site stays as recorded."""
    origin = RECORDED_ORIGIN
    if origin and (url == origin or (url.startswith(origin) and url[len(origin)] in "/?#")):
        return BASE_URL.rstrip("/") + url[len(origin) :]
    return url


def url_re(url, query=False):
    """The page a step was on, as a pattern: ``url`` rebased, up to its path (and query, with ``query``)."""
    parts = urlsplit(at(url))
    head = f"{parts.scheme}://{parts.netloc}{parts.path or '/'}"
    if query and parts.query:
        head += "?" + parts.query
    escaped = re.sub(r"[.*+?^${}()|\\[\\]\\\\]", lambda m: "\\\\" + m.group(0), head)  # valid in Python and JS
    return re.compile("^" + escaped + (r"(#.*)?$" if query else r"([?#].*)?$"))


def step(number):
    global STEP
    STEP = number


def say_where_it_failed():
    where = f"step {STEP} (see the comment # Step {STEP} in this script)" if STEP else "the start URL"
    print(f"The replay of run {RUN_ID} failed at {where}.", file=sys.stderr)


def site_gone(error):
    """One line when a page of the site cannot be opened (nothing answers, no such host, ...), else None: the
    browser's network error is the answer, not a traceback."""
    found = re.search(r"net::(ERR_\\w+)", str(error))
    if found is None:
        return None
    url = re.search(r" at (\\S+)", str(error))
    parts = urlsplit(url.group(1) if url else at(START_URL) or BASE_URL)
    site = f"{parts.scheme}://{parts.netloc}/"
    where = f"step {STEP}" if STEP else "the start URL"
    if found.group(1) == "ERR_NAME_NOT_RESOLVED":
        why = f"the host {parts.hostname} was not found"
    elif found.group(1) in ("ERR_CONNECTION_REFUSED", "ERR_ADDRESS_UNREACHABLE"):
        why = f"nothing answers at {site}"
    else:
        why = f"{url.group(1) if url else site} could not be opened ({found.group(1)})"
    return (
        f"The replay of run {RUN_ID} stopped at {where}: {why}. Start the site (or check the address), or give "
        "where it is now with --base-url URL."
    )


@def@ tab_at(page, pattern):
    """The open tab showing ``pattern`` (a recorded switch_tab: the agent's tab ids are its own)."""
    for _ in range(50):
        for tab in page.context.pages:
            if pattern.search(tab.url):
                @aw@tab.bring_to_front()
                return tab
        @aw@page.wait_for_timeout(100)
    raise AssertionError(f"No open tab matches {pattern.pattern}")


@def@ run_js(page, script):
    """Run a script the recorded run ran, as the agent ran it: an expression when it is one, else statements."""
    expression = script.strip().rstrip(";").strip()
    try:  # only compiles the expression: defining the function runs nothing
        @aw@page.evaluate("() => { const f = async () => (" + expression + "\\n); return typeof f; }")
    except Error:
        return @aw@page.evaluate("async () => {\\n" + script + "\\n}")
    return @aw@page.evaluate("async () => (" + expression + "\\n)")


def check_secrets():
    missing = [name for name in SECRETS if not os.environ.get(name)]
    if missing:
        sys.exit(
            "The recorded run typed secrets that this script reads from the environment; set "
            + ", ".join(missing)
            + " first."
        )


def arguments(argv):
    parser = argparse.ArgumentParser(description="Replays a recorded notebook_agent run with Playwright.")
    parser.add_argument("--base-url", default=BASE_URL, help="where the recorded site is now")
    parser.add_argument("--headed", action="store_true", help="show the browser window")
    return parser.parse_args(argv)


@def@ replay(page):
    """The recorded steps; returns the exit code (1 when the recorded run said it did not finish)."""
    if START_URL:
        @aw@page.goto(at(START_URL))
'''

_SYNC_MAIN = """

def main(argv=None):
    global BASE_URL
    args = arguments(argv)
    BASE_URL = args.base_url
    check_secrets()
    with sync_playwright() as pw:
        browser = launch(pw.chromium, args.headed)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": PAGE_HEIGHT})
            return replay(page)
        except Error as exc:
            gone = site_gone(exc)
            if gone is None:
                say_where_it_failed()
                raise
            sys.exit(gone)
        except Exception:
            say_where_it_failed()
            raise
        finally:
            browser.close()
"""

_ASYNC_MAIN = """

async def replay_all(argv):
    global BASE_URL
    args = arguments(argv)
    BASE_URL = args.base_url
    check_secrets()
    async with async_playwright() as pw:
        browser = await launch(pw.chromium, args.headed)
        try:
            page = await browser.new_page(viewport={"width": 1280, "height": PAGE_HEIGHT})
            return await replay(page)
        except Error as exc:
            gone = site_gone(exc)
            if gone is None:
                say_where_it_failed()
                raise
            sys.exit(gone)
        except Exception:
            say_where_it_failed()
            raise
        finally:
            await browser.close()


def main(argv=None):
    return asyncio.run(replay_all(argv))
"""

_ENTRY = """

def in_event_loop():
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


if __name__ == "__main__":
    if in_event_loop():  # a notebook cell: its loop is running, so the replay gets a thread (and no argv) of its own
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            pool.submit(main, []).result()
    else:
        sys.exit(main())
"""


@dataclass(frozen=True)
class Flavour:
    """One of Playwright's two APIs, as the script uses it."""

    mode: str
    with_: str
    """How a context manager is entered: ``with`` or ``async with``."""

    def render(self, constants: dict[str, str], steps: list[str]) -> str:
        """The whole script: ``constants`` (name → a Python literal already) and the lines of the replay
        function's body after its start (without their indent)."""
        asynchronous = self.mode == "async"
        words = {
            **constants,
            "api": "async_api" if asynchronous else "sync_api",
            "playwright": "async_playwright" if asynchronous else "sync_playwright",
            "def": "async def" if asynchronous else "def",
            "aw": "await " if asynchronous else "",
        }
        # One pass: a literal that happens to hold "@TASK@" is never read as a placeholder.
        head = re.sub(r"@(\w+)@", lambda m: words[m.group(1)], _HEADER)
        body = "\n".join(("    " + line) if line else "" for line in steps)
        return head + body + "\n" + (_ASYNC_MAIN if asynchronous else _SYNC_MAIN) + _ENTRY


SYNC = Flavour("sync", "with")
ASYNC = Flavour("async", "async with")

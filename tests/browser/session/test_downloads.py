"""Downloads and the approval policy: a link marked ``download`` is asked about before the click; a download
the page starts on its own is kept only under ``auto`` (or when a person approved the action), otherwise it is
cancelled, the model is told, and doing the same action again asks first."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from notebook_agent import BrowserSession, PageAgent
from notebook_agent.agent.prompt.agent_output import agent_output
from notebook_agent.agent.safety.approval import ApprovalAnswer, ApprovalRequest
from notebook_agent.core.model import Context
from notebook_agent.llm.scripted import ScriptedModel


def idx(text: str, label: str) -> int:
    for line in text.splitlines():
        if label in line and line.lstrip().lstrip("*").startswith("["):
            return int(line.split("[", 1)[1].split("]", 1)[0])
    raise AssertionError(f"{label!r} not in:\n{text}")


def click(label: str) -> Any:
    def make(ctx: Context) -> Any:
        return agent_output("click_element_by_index", {"index": idx(ctx.messages[-1].text, label)})

    return make


class Person:
    """Answers approval requests from a list, and keeps what it was asked."""

    def __init__(self, *answers: bool) -> None:
        self.answers = list(answers)
        self.asked: list[ApprovalRequest] = []

    async def __call__(self, request: ApprovalRequest) -> ApprovalAnswer:
        self.asked.append(request)
        return ApprovalAnswer(self.answers.pop(0))


async def run(browser: BrowserSession, servers: Any, tmp_path: Path, steps: list[Any], **kw: Any) -> Any:
    browser.downloads_dir = tmp_path
    model = ScriptedModel([*steps, agent_output("done", {"text": "ok", "success": True})])
    agent = PageAgent(model=model, browser=browser, start_url=servers.url("downloads.html"), **kw)
    return await agent.run("get the files")


async def test_a_download_link_is_shown_as_one_and_asked_about(
    browser: BrowserSession, servers: Any, tmp_path: Path
) -> None:
    person = Person(True)
    result = await run(browser, servers, tmp_path, [click("Get hello")], approval="ask-risky", approver=person)
    assert "<a download=hello.txt>Get hello />" in result.steps[0].request.state
    (asked,) = person.asked
    assert asked.reason == "downloads a file (hello.txt)"
    assert "A file was downloaded: hello.txt (11 bytes)" in result.steps[0].result
    assert (tmp_path / "hello.txt").read_text() == "hello there"


async def test_a_denied_download_link_downloads_nothing(browser: BrowserSession, servers: Any, tmp_path: Path) -> None:
    person = Person(False)
    result = await run(browser, servers, tmp_path, [click("Get hello")], approval="ask-risky", approver=person)
    assert result.steps[0].is_error and "denied" in result.steps[0].result
    assert list(tmp_path.iterdir()) == []


async def test_a_download_the_page_starts_is_cancelled_then_asked_about(
    browser: BrowserSession, servers: Any, tmp_path: Path
) -> None:
    person = Person(True)
    result = await run(
        browser, servers, tmp_path, [click("Export"), click("Export")], approval="ask-risky", approver=person
    )
    first, second = result.steps[0].result, result.steps[1].result
    assert "The page started a download of export.csv; it was cancelled: no approved action asked for a download" in (
        first
    )
    assert "do the same action again: the user will be asked first" in first
    (asked,) = person.asked  # the first click was not risky to look at; the second one was
    assert asked.reason == "downloads a file (the page started a download the last time this was done)"
    assert "A file was downloaded: export.csv (8 bytes)" in second
    assert [p.name for p in tmp_path.iterdir()] == ["export.csv"]


async def test_deny_risky_refuses_downloads_and_auto_keeps_them(
    browser: BrowserSession, servers: Any, tmp_path: Path
) -> None:
    denied = await run(browser, servers, tmp_path / "deny", [click("Export")], approval="deny-risky")
    assert "it was cancelled: downloads are refused under the approval policy deny-risky." in denied.steps[0].result
    assert not (tmp_path / "deny").exists() or list((tmp_path / "deny").iterdir()) == []
    kept = await run(browser, servers, tmp_path / "auto", [click("Export")], approval="auto")
    assert "A file was downloaded: export.csv" in kept.steps[0].result
    assert browser.download_filter is None  # each run puts back what it found


async def test_a_policy_function_decides_downloads(browser: BrowserSession, servers: Any, tmp_path: Path) -> None:
    seen: list[ApprovalRequest] = []

    def policy(request: ApprovalRequest) -> Any:
        seen.append(request)
        return "deny" if request.action == "download" else "allow"

    result = await run(browser, servers, tmp_path, [click("Export")], approval=policy)
    assert "it was cancelled: the approval policy did not allow it." in result.steps[0].result
    assert [(r.action, r.args["file"]) for r in seen if r.action == "download"] == [("download", "export.csv")]


async def test_go_to_url_to_an_attachment_is_a_download_not_a_raw_error(
    browser: BrowserSession, servers: Any, tmp_path: Path
) -> None:
    """Issue 20, item 4a: a URL answered with ``Content-Disposition: attachment`` is handled like a download
    the page started (kept under ``auto``, cancelled when the policy refuses it), in a sentence."""
    from notebook_agent.browser.urls import URLError

    go = agent_output("go_to_url", {"url": servers.url("attachment")})
    kept = await run(browser, servers, tmp_path / "auto", [go], approval="auto")
    step = kept.steps[0]
    assert not step.is_error, step.result
    assert "Download is starting" not in step.result
    assert step.result.startswith(f"{servers.url('attachment')} is a file to download, not a page, so the tab ")
    assert "stayed at " + servers.url("downloads.html") in step.result
    assert "A file was downloaded: report.csv (16 bytes)" in step.result
    assert (tmp_path / "auto" / "report.csv").read_text() == "id,total\n1,9.50\n"

    denied = await run(browser, servers, tmp_path / "deny", [go], approval="deny-risky")
    assert "is a file to download, not a page" in denied.steps[0].result
    assert "The page started a download of report.csv; it was cancelled" in denied.steps[0].result
    assert not (tmp_path / "deny" / "report.csv").exists()

    try:
        await browser.open(servers.url("attachment"))
    except URLError as exc:
        assert str(exc).startswith(f"{servers.url('attachment')} is a file to download, not a page")
    else:
        raise AssertionError("opening a file to download as a page must fail")

"""An OTLP endpoint that refuses, or accepts and never answers: the run goes on, the problem is said once (one
:class:`TracingWarning` naming the endpoint, none of the exporter's own log lines), and no run waits for the
export. Real sockets on loopback, real Chromium, the real OpenTelemetry SDK and OTLP exporter."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import threading
import warnings
from typing import Any

import pytest

from notebook_agent.agent import PageAgent, PageAgentResult, RunFinished
from notebook_agent.agent.otel.settings import TracingWarning
from notebook_agent.browser import BrowserSession
from notebook_agent.core.messages import Usage
from notebook_agent.llm.scripted import ScriptedModel
from tests.agent.test_page_agent import index_of, step
from tests.browser.conftest import Servers

pytest.importorskip("opentelemetry.sdk", reason="the [otel] extra (in the dev extra)")


class Hanging:
    """A socket that accepts every connection and never answers a byte."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.accepted = threading.Event()
        self.connections: list[socket.socket] = []
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections.append(conn)
            self.accepted.set()

    def close(self) -> None:
        self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        for conn in self.connections:
            conn.close()


def refusing_port() -> int:
    """A loopback port nothing listens on: a connection there is refused at once."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def send_spans_to(monkeypatch: pytest.MonkeyPatch, port: int, **more: str) -> str:
    for name in [n for n in os.environ if n.startswith("OTEL_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{port}")
    for name, value in more.items():
        monkeypatch.setenv(name, value)
    return f"http://127.0.0.1:{port}/v1/traces"


def agent_for(browser: BrowserSession, servers: Servers) -> PageAgent[Any]:
    script = [
        step("input_text", lambda c: {"index": index_of(c, r"name=name"), "text": "Ada"}),
        step("click_element_by_index", lambda c: {"index": index_of(c, r"Create account")}),
        step("done", {"text": "Signed up", "success": True}),
    ]
    return PageAgent(
        model=ScriptedModel(script, usage=Usage(input=10, output=2)),
        browser=browser,
        start_url=servers.url("agent_form.html"),
        screenshots=False,
    )


def said(recorded: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in recorded if issubclass(w.category, TracingWarning)]


async def test_an_endpoint_that_refuses_is_said_once_and_the_runs_go_on(
    browser: BrowserSession, servers: Servers, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from notebook_agent.agent.otel.export import flush

    caplog.set_level(logging.DEBUG)
    endpoint = send_spans_to(monkeypatch, refusing_port(), OTEL_EXPORTER_OTLP_TRACES_TIMEOUT="2")
    with warnings.catch_warnings(record=True) as recorded:
        warnings.simplefilter("always")
        for _ in range(2):  # the second run's spans find the endpoint known to fail: nothing new is said
            result = await agent_for(browser, servers).run("Sign up as Ada")
            assert result.success, result.error
            await asyncio.to_thread(flush)
    (warning,) = said(recorded.copy())
    assert endpoint in warning and "runs go on" in warning
    assert [r.getMessage() for r in caplog.records if r.name.startswith("opentelemetry")] == []


async def test_an_endpoint_that_never_answers_holds_up_no_run(
    browser: BrowserSession, servers: Servers, monkeypatch: pytest.MonkeyPatch
) -> None:
    from notebook_agent.agent.otel.export import flush

    hanging = Hanging()
    # spans leave a millisecond after they end, so an export is under way while the runs still work
    endpoint = send_spans_to(monkeypatch, hanging.port, OTEL_BSP_SCHEDULE_DELAY="1")
    try:
        with warnings.catch_warnings(record=True) as recorded:
            warnings.simplefilter("always")
            first = await agent_for(browser, servers).run("Sign up as Ada")
            assert first.success, first.error
            assert await asyncio.to_thread(hanging.accepted.wait, 60)  # an export now waits on the silent socket
            at_end: list[str] | None = None
            result: PageAgentResult | None = None
            async for event in agent_for(browser, servers).stream("Sign up as Ada"):
                if isinstance(event, RunFinished):
                    at_end, result = said(recorded.copy()), event.result
            # the second run finished while the export still waited (the exporter's timeout had not come)
            assert result is not None and result.success, result
            assert at_end == []
            await asyncio.to_thread(flush)  # the waiting export gives up at its timeout: said once
            (warning,) = said(recorded.copy())
            assert endpoint in warning
    finally:
        hanging.close()

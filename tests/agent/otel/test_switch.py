"""When a run is traced, decided one way for every front and without importing OpenTelemetry: ``tracing=`` and the
standard ``OTEL_*`` settings, for any combination of them (a property test); a fresh interpreter that runs with
tracing off has no OpenTelemetry module loaded and sends nothing; ``tracing=True`` without the packages is refused
before anything runs, and the automatic choice goes on untraced, saying so once."""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import threading
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from notebook_agent.agent import PageAgent, RunOptions
from notebook_agent.agent.otel.settings import TracingUnavailable, TracingWarning, traces_endpoint, tracing_on
from notebook_agent.agent.otel.switch import run_spans
from notebook_agent.cli.main import build_parser
from notebook_agent.config.run_flags import run_options
from notebook_agent.llm.scripted import ScriptedModel

ROOT = Path(__file__).resolve().parents[3]

SETTINGS = {
    "OTEL_EXPORTER_OTLP_ENDPOINT": st.sampled_from(["", " ", "http://127.0.0.1:4318", "http://collector:4318/"]),
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": st.sampled_from(["", "http://127.0.0.1:6006/v1/traces"]),
    "OTEL_SDK_DISABLED": st.sampled_from(["", "true", "TRUE", "false", "1"]),
    "OTEL_TRACES_EXPORTER": st.sampled_from(["", "otlp", "none", "console,none", " None "]),
}


@given(
    choice=st.sampled_from([None, True, False]),
    env=st.fixed_dictionaries({}, optional=SETTINGS),
)
def test_whether_a_run_is_traced_for_any_choice_and_settings(choice: bool | None, env: dict[str, str]) -> None:
    disabled = env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true"
    named = any(env.get(k, "").strip() for k in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
    no_exporter = "none" in [e.strip().lower() for e in env.get("OTEL_TRACES_EXPORTER", "").split(",")]
    expected = not disabled and (choice is True or (choice is None and named and not no_exporter))
    assert tracing_on(choice, env) is expected
    endpoint = traces_endpoint(env)
    assert endpoint.startswith("http") and endpoint.endswith("/v1/traces")
    if env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):  # the traces setting is taken verbatim
        assert endpoint == env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]
    assert "//v1" not in endpoint


def test_the_flag_is_a_run_option_of_every_front() -> None:
    for command, positional in (("run", ["task"]), ("map", ["task {n}", "--rows", "r.csv", "--out", "o.csv"])):
        args = build_parser().parse_args([command, *positional, "--tracing"])
        assert run_options(args).tracing is True
    assert run_options(build_parser().parse_args(["replay", "-1", "--tracing"])).tracing is True
    assert run_options(build_parser().parse_args(["run", "task"])).tracing is None  # the OTEL_* settings decide
    agent = RunOptions(tracing=False).make_agent(ScriptedModel())
    assert agent.tracing is False and agent.copy().tracing is False  # a map's rows and workers keep it


def without_otel(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str, *args: Any) -> Any:
        return None if name.startswith("opentelemetry") else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)


def test_tracing_true_without_the_packages_is_refused_before_anything_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    without_otel(monkeypatch)
    monkeypatch.delenv("OTEL_SDK_DISABLED", raising=False)
    with pytest.raises(TracingUnavailable, match=r'pip install "notebook-agent\[otel\]"'):
        PageAgent(model=ScriptedModel(), tracing=True)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
    with warnings.catch_warnings(record=True) as recorded:
        warnings.simplefilter("always")
        assert run_spans(None, ScriptedModel()) is None  # the automatic choice: the run goes on untraced
        assert run_spans(None, ScriptedModel()) is None
    assert [w.category for w in recorded] == [TracingWarning]  # once


OFF = """
import asyncio, sys
from notebook_agent import PageAgent
from notebook_agent.agent.prompt.agent_output import agent_output
from notebook_agent.llm.scripted import ScriptedModel
import notebook_agent.cli.main, notebook_agent.agent.batch.map_runner, notebook_agent.errors


def finish(row=None):
    return ScriptedModel([agent_output("done", {"text": "ok", "success": True})])


async def main():
    agent = PageAgent(model=finish(), tracing=TRACING, screenshots=False)
    assert (await agent.run("finish")).success
    mapped = await agent.map("finish {n}", [{"n": 1}, {"n": 2}], model_factory=finish)
    assert [r.status for r in mapped.rows] == ["completed", "completed"]


asyncio.run(main())
print(sorted(m for m in sys.modules if m.split(".")[0] == "opentelemetry"))
"""


class Listener:
    """A loopback socket that counts the connections made to it."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            conn.close()


@pytest.mark.parametrize(
    ("tracing", "settings"),
    [
        ("None", {}),  # the default, and no OTEL_* endpoint
        ("False", {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:{port}"}),  # off, whatever the settings say
    ],
)
def test_a_run_and_a_map_with_tracing_off_import_no_opentelemetry_and_send_nothing(
    tracing: str, settings: dict[str, str]
) -> None:
    listener = Listener()
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env.update({k: v.format(port=listener.port) for k, v in settings.items()}, PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-c", OFF.replace("TRACING", tracing)],
        capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL, cwd=ROOT, env=env,
    )  # fmt: skip
    listener.sock.close()
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"
    assert listener.connections == 0

"""A real tracing backend on loopback for the tracing tests: MLflow's tracking server (the dev extra's ``mlflow``),
which takes OTLP/HTTP at ``/v1/traces`` (an experiment per ``x-mlflow-experiment-id`` header) and gives traces back
through its own client, spans, attributes and events as it stored them.

The server runs on a free port with a SQLite store in a temporary folder, without its job runner (whose worker
processes only serve features these tests do not use). Each test gets an experiment of its own, so it reads back
exactly the traces it sent.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: A hang guard for the server's start (it migrates its database first), not a timing threshold.
START_S = 300.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Backend:
    url: str

    def experiment(self) -> str:
        from mlflow import MlflowClient

        return str(MlflowClient(self.url).create_experiment(f"notebook-agent-{uuid.uuid4().hex[:8]}"))

    def traces(self, experiment: str) -> list[Any]:
        """Every trace of ``experiment``, oldest first, with its spans."""
        from mlflow import MlflowClient

        found = MlflowClient(self.url).search_traces(locations=[experiment], include_spans=True, max_results=100)
        return sorted(found, key=lambda t: t.info.timestamp_ms)

    def settings(self, experiment: str) -> dict[str, str]:
        """The standard OTLP settings that send spans to ``experiment``."""
        return {
            "OTEL_EXPORTER_OTLP_ENDPOINT": self.url,
            "OTEL_EXPORTER_OTLP_TRACES_HEADERS": f"x-mlflow-experiment-id={experiment}",
        }


@contextlib.contextmanager
def mlflow_server(folder: Path) -> Iterator[Backend]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env["MLFLOW_SERVER_ENABLE_JOB_EXECUTION"] = "false"
    command = [
        sys.executable, "-m", "mlflow", "server",
        "--backend-store-uri", f"sqlite:///{folder / 'mlflow.db'}",
        "--default-artifact-root", str(folder / "artifacts"),
        "--host", "127.0.0.1", "--port", str(port), "--workers", "1",
    ]  # fmt: skip
    log_path = folder / "server.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        url = f"http://127.0.0.1:{port}"
        try:
            _wait_until_up(url, proc, log_path)
            yield Backend(url)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def _wait_until_up(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + START_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"mlflow server exited ({proc.returncode}):\n{log.read_text()[-3000:]}")
        with contextlib.suppress(OSError), urllib.request.urlopen(f"{url}/health", timeout=5) as answer:
            if answer.status == 200:
                return
        time.sleep(0.25)
    raise RuntimeError(f"mlflow server did not answer in {START_S:.0f} s:\n{log.read_text()[-3000:]}")


def spans(trace: Any) -> list[Any]:
    """A trace's spans in the order they started."""
    return sorted(trace.data.spans, key=lambda s: s.start_time_ns)


def children(all_spans: list[Any], parent: Any, prefix: str = "") -> list[Any]:
    return [s for s in all_spans if s.parent_id == parent.span_id and s.name.startswith(prefix)]


def root(all_spans: list[Any]) -> Any:
    (top,) = [s for s in all_spans if s.parent_id is None]
    return top


def tokens(trace: Any) -> dict[str, int]:
    """The token usage the backend itself added up for a trace."""
    return dict(trace.info.token_usage or {})

"""Costs in the terminal, run as a user would: a run's budget and its last line; a big map without a budget asks
at the prompt after its first rows (a real pseudo-terminal), goes on without asking with ``--yes``, and without a
terminal and without ``--yes`` does not start, saying so in one line (never a question nobody can answer).

The map's model is ``openai:gpt-4o-mini`` (a priced model) served by a local scripted server speaking the Chat
Completions wire, which finishes every row at its first call."""

from __future__ import annotations

import csv
import json
import os
import pty
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from notebook_agent.demo import DEMO_TASK, demo_url
from tests.cli.test_cli import ROOT, cli
from tests.llm.server import Recorded, Reply, ScriptedServer, sse_reply
from tests.llm.wire import Call, ChatWire, split

ROWS = 21  # one more than a map may have without asking


@pytest.fixture(scope="module")
def openai_server() -> Iterator[ScriptedServer]:
    """Every call answers ``done``, with the wire's usage (so each row costs something at gpt-4o-mini's prices)."""
    server = ScriptedServer().start()
    done = json.dumps(
        {
            "evaluation_previous_goal": "",
            "memory": "",
            "next_goal": "",
            "action": {"done": {"text": "ok", "success": True}},
        }
    )

    def answer(_request: Recorded) -> Reply:
        return sse_reply(ChatWire().tool_calls([Call("c1", "AgentOutput", split(done, 9))]))

    server.responder = answer
    yield server
    server.stop()


def rows_file(tmp_path: Path, n: int = ROWS) -> Path:
    path = tmp_path / "rows.csv"
    path.write_text("id\n" + "".join(f"{i}\n" for i in range(n)), encoding="utf-8")
    return path


def env_for(server: ScriptedServer) -> dict[str, str]:
    return {"OPENAI_API_KEY": "test-key", "OPENAI_BASE_URL": f"{server.url}/v1"}


def map_args(tmp_path: Path, *more: str) -> list[str]:
    out = tmp_path / "out.csv"
    return [
        "map",
        "Note row {id}",
        "--rows",
        str(rows_file(tmp_path)),
        "--out",
        str(out),
        "--model",
        "openai:gpt-4o-mini",
        *more,
    ]


def test_a_run_with_max_tokens_ends_with_status_budget_and_says_what_it_spent() -> None:
    out = cli("run", DEMO_TASK, "--model", "demo", "--url", demo_url(), "--max-tokens", "6000")
    assert out.returncode == 1, out.stderr
    last = [line for line in out.stdout.splitlines() if line.startswith("budget: ")]
    assert len(last) == 1 and last[0].startswith("budget: success=False · ") and " tokens · " in last[0]
    assert "calls · " in last[0] and "cost unknown" not in last[0] and "$" not in last[0]  # the demo is free
    assert "Stopped before step " in out.stdout and "would cross max_tokens=6,000 after " in out.stdout


def test_a_big_map_without_a_terminal_and_without_yes_does_not_start(
    tmp_path: Path, openai_server: ScriptedServer
) -> None:
    calls = len(openai_server.requests)
    out = cli(*map_args(tmp_path), env=env_for(openai_server))
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr == (
        f"error: This map of {ROWS} rows has no budget, and there is no terminal to ask whether to go on once its "
        "first rows show what it costs: pass --yes to run every row, or --max-cost / --max-tokens to bound it.\n"
    )
    assert len(openai_server.requests) == calls and not (tmp_path / "out.csv").exists()  # nothing ran


def test_yes_runs_every_row_without_asking(tmp_path: Path, openai_server: ScriptedServer) -> None:
    out = cli(*map_args(tmp_path, "--yes"), env=env_for(openai_server), timeout=300)
    assert out.returncode == 0, out.stderr
    assert "go on with the rest" not in out.stdout
    summary = [line for line in out.stdout.splitlines() if line.startswith(f"{ROWS} rows: ")]
    assert len(summary) == 1 and summary[0].startswith(f"{ROWS} rows: {ROWS} succeeded, 0 failed · ")
    assert f" · {ROWS} calls · $0.0" in summary[0]  # gpt-4o-mini's prices: the map's cost, on its last line
    with (tmp_path / "out.csv").open(encoding="utf-8", newline="") as f:
        table = list(csv.DictReader(f))
    assert len(table) == ROWS and all(float(r["cost"]) > 0 and r["model_calls"] == "1" for r in table)


def test_on_a_terminal_the_map_asks_after_its_first_rows_and_stops_when_told(
    tmp_path: Path, openai_server: ScriptedServer
) -> None:
    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")} | env_for(openai_server)
    proc = subprocess.Popen(
        [sys.executable, "-m", "notebook_agent", *map_args(tmp_path, "--concurrency", "2")],
        stdin=slave,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    )
    os.close(slave)
    said = ""
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + 180
        while "go on with the rest?" not in said and "rows/min" not in said:  # the prompt has no newline
            assert time.monotonic() < deadline, said
            ready, _, _ = select.select([proc.stdout], [], [], 1.0)
            if ready:
                chunk = os.read(proc.stdout.fileno(), 4096).decode()
                assert chunk, said
                said += chunk
        os.write(master, b"n\n")
        rest, err = proc.communicate(timeout=120)
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
    said += rest
    assert proc.returncode == 1, err  # rows not started count as without success
    assert "≈ $" in said and f"for {ROWS} rows at the first 5 rows' rate" in said, said
    assert "Stopped after the first 5 rows: ≈ $" in said
    assert f"{ROWS} rows: 5 succeeded, 0 failed, {ROWS - 5} not started · " in said
    with (tmp_path / "out.csv").open(encoding="utf-8", newline="") as f:
        statuses = [r["status"] for r in csv.DictReader(f)]
    assert statuses.count("completed") == 5 and statuses.count("not_started") == ROWS - 5

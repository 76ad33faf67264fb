"""The terminal command, run as a user would: a subprocess with no terminal attached."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from notebook_agent import __version__
from tests.bad_inputs import BAD_BUDGETS, BAD_OPTIONS, BAD_URL, UNSAFE_PORT

ROOT = Path(__file__).resolve().parents[2]
#: Where the commands' runs are saved (not in the checkout); removed when the test process ends.
RUNS = tempfile.TemporaryDirectory(prefix="cli-runs-")


def cli(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "NOTEBOOK_AGENT_MODEL"}
    if args and args[0] in ("run", "demo") and "--runs-dir" not in args and "--help" not in args:
        args = (*args, "--runs-dir", tempfile.mkdtemp(dir=RUNS.name))  # runs are saved: not in the checkout
    return subprocess.run(
        [sys.executable, "-m", "notebook_agent", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**base, **(env or {})},
        stdin=subprocess.DEVNULL,
        cwd=ROOT,
    )


def test_help_and_version() -> None:
    out = cli("--help")
    assert out.returncode == 0
    for command in ("snapshot", "run", "demo", "eval", "doctor"):
        assert command in out.stdout
    assert cli("--version").stdout.strip() == f"notebook-agent {__version__}"


def test_demo_runs_offline_and_says_which_model() -> None:
    out = cli("demo")
    assert out.returncode == 0, out.stderr
    assert "model: offline demo model (no API key needed)" in out.stdout
    assert "completed: success=True" in out.stdout and "TrailSound Wireless Headphones Lite at $54.99" in out.stdout
    assert "── step 1/12" in out.stdout and "action: input_text" in out.stdout
    # the wait for the model is said, and how long it was
    assert "── step 1/12\n  waiting for the model…\n  model:  answered in " in out.stdout


def test_run_without_a_terminal_denies_risky_actions_and_prints_json() -> None:
    from notebook_agent.demo import DELETE_TASK

    out = cli("run", DELETE_TASK, "--model", "demo", "--json", "--url", _demo_url())
    assert out.returncode == 1  # the task did not succeed: the deletion was denied
    result = json.loads(out.stdout)
    blocked = [s for s in result["steps"] if s["approval"]]
    assert blocked[0]["approval"]["by"] == "policy" and "Delete account" in blocked[0]["result"]
    assert result["status"] == "failed" and result["settings"]["approval"] == "deny-risky"


def _demo_url() -> str:
    """The demo shop served by this test process (the CLI subprocess reaches it on loopback)."""
    from notebook_agent.demo import demo_url

    return demo_url()


def test_missing_key_is_a_clear_error_before_any_request() -> None:
    out = cli("run", "anything", "--model", "openai:gpt-4o-mini")
    assert out.returncode == 2
    assert "OPENAI_API_KEY" in out.stderr and "Traceback" not in out.stderr


def test_missing_browser_is_a_clear_error(tmp_path: Path) -> None:
    out = cli("doctor", env={"NOTEBOOK_AGENT_BROWSER": str(tmp_path / "no-such-chrome")})
    assert out.returncode == 1
    assert "NOT FOUND" in out.stdout and "apt-get install chromium" in out.stdout


def test_eval_prints_a_table() -> None:
    out = cli("eval", "examples/demo_suite.yaml", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    rates = {row["variant"]: row["success_rate"] for row in data["summary"]}
    assert rates == {"cautious": 0.5, "trusting": 1.0}


@pytest.mark.parametrize("flag", [[], ["--json"]])
def test_snapshot(flag: list[str]) -> None:
    out = cli("snapshot", _demo_url(), *flag)
    assert out.returncode == 0, out.stderr
    text = json.loads(out.stdout)["text"] if flag else out.stdout
    assert "Northwind Outfitters" in text and "<input type=search" in text


@pytest.mark.parametrize("args,message", [*BAD_OPTIONS, *BAD_BUDGETS, BAD_URL])
def test_bad_options_are_one_sentence_and_exit_2(args: list[str], message: str) -> None:
    out = cli("run", "anything", "--model", "demo", *args)
    assert out.returncode == 2
    assert out.stderr.startswith(f"error: {message}") and out.stderr.count("\n") == 1, out.stderr
    assert out.stdout == ""


def test_url_rule_and_unreachable_pages() -> None:
    snap = cli("snapshot", "example")  # the same rule as run --url: a word is not a URL
    assert snap.returncode == 2 and snap.stderr == f"error: {BAD_URL[1].removeprefix('--url: ')}\n"
    run = cli("run", "look", "--model", "demo", "--url", "http://127.0.0.1:9/")
    assert run.returncode == 1 and "Traceback" not in run.stderr + run.stdout
    assert (run.stdout + run.stderr).count(UNSAFE_PORT) == 1, run.stdout + run.stderr
    snap = cli("snapshot", "127.0.0.1:9/")
    assert snap.returncode == 2 and snap.stderr == f"error: {UNSAFE_PORT}\n"


def test_eval_input_errors_name_the_file(tmp_path: Path) -> None:
    missing = cli("eval", str(tmp_path / "nope.yaml"))
    assert missing.returncode == 2
    assert (
        missing.stderr
        == f"error: There is no suite file {str(tmp_path / 'nope.yaml')!r}: give the path of a YAML or JSON suite.\n"
    )
    bad_yaml = tmp_path / "suite.yaml"
    bad_yaml.write_text("tasks:\n  - id: a\n    task: [unclosed\n")
    out = cli("eval", str(bad_yaml))
    assert out.returncode == 2 and out.stderr.startswith(f"error: The suite {bad_yaml} is not valid YAML: ")
    assert "line" in out.stderr and out.stderr.count("\n") == 1, out.stderr
    bad_json = tmp_path / "suite.json"
    bad_json.write_text('{"tasks": [}')
    out = cli("eval", str(bad_json))
    assert out.returncode == 2 and out.stderr.count("\n") == 1
    assert out.stderr.startswith(f"error: The suite {bad_json} is not valid JSON: Expecting value at line 1, column 12")
    empty = tmp_path / "empty.json"
    empty.write_text("{}")
    out = cli("eval", str(empty))
    assert out.returncode == 2 and out.stderr.startswith(f"error: The suite {empty}: a suite needs a non-empty")


def test_replay_a_saved_run_from_the_terminal(tmp_path: Path) -> None:
    import asyncio

    from notebook_agent.agent import PageAgent
    from notebook_agent.demo import DEMO_TASK, serve_demo

    with serve_demo() as shop:
        recorded = asyncio.run(PageAgent(model="demo", start_url=shop.url, runs_dir=str(tmp_path)).run(DEMO_TASK))
        assert recorded.success
        # a run file does not choose the site: under the default policy the replay is told where it runs
        refused = cli("replay", "-1", "--runs-dir", str(tmp_path), "--json", "--no-heal")
        assert refused.returncode == 1 and "give the site with replay(url=...) (--url)" in refused.stderr
        out = cli("replay", "1", "--runs-dir", str(tmp_path), "--json", "--no-heal", "--url", shop.url)
        assert out.returncode == 0, out.stderr
        result = json.loads(out.stdout)
        assert [s["replay"] for s in result["steps"]] == ["replayed"] * len(recorded.steps)
        assert f"replay: {len(recorded.steps)} replayed · 0 tokens" in out.stderr
        assert len(list(tmp_path.glob("*.jsonl"))) == 3  # the replays are saved beside the recording
        missing = cli("replay", "nope", "--runs-dir", str(tmp_path))
        assert missing.returncode == 2 and missing.stderr.startswith("error: No run matches 'nope'")


def test_demo_server_options_need_a_local_model_file() -> None:
    out = cli("demo", "--threads", "2")
    assert out.returncode == 2 and out.stderr.startswith("error: --threads, --context and --server-port are for")
    out = cli("demo", "--local", "ollama:qwen2.5", "--context", "4096")
    assert out.returncode == 2 and "--local MODEL.gguf" in out.stderr

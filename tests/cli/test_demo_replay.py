"""A terminal demo run replays and exports after its command has ended.

The demo shop of ``notebook-agent demo`` lived on a random port for the life of the command, so its run file
named a site that was gone: ``notebook-agent replay 1`` was refused by the approval policy (a run file does not
choose the site it opens), and the exported script died with Playwright's traceback. Now the terminal's shop has
one address (``NOTEBOOK_AGENT_DEMO_PORT``, here a free port, so a test never meets a shop of another), a replay
serves it there again for its own life, ``demo --serve`` keeps it up for a script, and a script whose site does
not answer says so in one line.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ANSWER = "Cheapest wireless headphones: TrailSound Wireless Headphones Lite at $54.99"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def answers(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def test_a_demo_run_replays_and_exports_after_the_demo_ended(tmp_path: Path) -> None:
    port = free_port()
    base = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "NOTEBOOK_AGENT_MODEL"}
    env = {**base, "PYTHONPATH": str(ROOT), "NOTEBOOK_AGENT_DEMO_PORT": str(port)}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "notebook_agent", *args], capture_output=True, text=True, timeout=300,
            env=env, cwd=tmp_path, stdin=subprocess.DEVNULL,
        )  # fmt: skip

    demo = cli("demo")
    assert demo.returncode == 0, demo.stdout + demo.stderr
    assert f"demo shop: http://127.0.0.1:{port}/\n" in demo.stdout and ANSWER in demo.stdout
    assert not answers(port)  # the shop ended with the command

    replay = cli("replay", "1", "--no-heal")  # no --url, no --approve: as the guide says it
    assert replay.returncode == 0, replay.stdout + replay.stderr
    assert f"demo shop: served again at http://127.0.0.1:{port}/ while this command runs" in replay.stdout
    assert "replay: 6 replayed · 0 tokens" in replay.stdout and ANSWER in replay.stdout
    assert not answers(port)

    export = cli("export", "1", "--to", "demo_run.py")
    assert export.returncode == 0, export.stderr
    assert "serve it with `notebook-agent demo --serve`" in export.stdout
    script = tmp_path / "demo_run.py"

    def run_script(*args: str) -> subprocess.CompletedProcess[str]:
        alone = {k: v for k, v in base.items() if k != "PYTHONPATH"}  # the script needs only Playwright
        return subprocess.run(
            [sys.executable, str(script), *args], capture_output=True, text=True, timeout=120, env=alone,
            cwd=tmp_path, stdin=subprocess.DEVNULL,
        )  # fmt: skip

    gone = run_script()
    assert gone.returncode == 1 and gone.stdout == ""
    assert gone.stderr.count("\n") == 1 and "Traceback" not in gone.stderr, gone.stderr
    assert f"stopped at the start URL: nothing answers at http://127.0.0.1:{port}/. Start the site" in gone.stderr
    unknown = run_script("--base-url", "http://shop.invalid/")
    assert unknown.returncode == 1 and unknown.stderr.count("\n") == 1, unknown.stderr
    assert "the host shop.invalid was not found" in unknown.stderr

    serving = subprocess.Popen(
        [sys.executable, "-m", "notebook_agent", "demo", "--serve"], stdout=subprocess.PIPE, text=True, env=env,
        cwd=tmp_path, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        assert serving.stdout is not None
        assert serving.stdout.readline() == f"demo shop: http://127.0.0.1:{port}/  (serving until Ctrl-C)\n"
        again = cli("demo", "--serve")  # a second one finds it there
        assert again.returncode == 0 and again.stdout == f"the demo shop already answers at http://127.0.0.1:{port}/\n"
        done = run_script()
        assert done.returncode == 0, done.stderr
        assert done.stdout == ANSWER + "\n"
    finally:
        serving.terminate()
        serving.wait(timeout=30)

"""``notebook-agent map --url``: one meaning, with or without ``--recipe``: each row's start page.

Before, ``map TASK --recipe RUN --url URL`` with the very page the run was recorded on failed every row at step
1: there ``--url`` was a base URL that every recorded address was moved under (``.../index.html/search.html``),
while without ``--recipe`` it was the start page.
"""

from __future__ import annotations

import asyncio
import csv
import os
import subprocess
import sys
from pathlib import Path

from notebook_agent import PageAgent
from notebook_agent.demo import PRICE_TASK, serve_demo

ROOT = Path(__file__).resolve().parents[2]


def map_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "NOTEBOOK_AGENT_MODEL"}
    return subprocess.run(
        [sys.executable, "-m", "notebook_agent", "map", PRICE_TASK, *args],
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
        cwd=cwd,
        env={**env, "PYTHONPATH": str(ROOT)},
    )


def answers(table: Path) -> list[tuple[str, str]]:
    with table.open(newline="") as f:
        return [(row["status"], row["answer"]) for row in csv.DictReader(f)]


def test_url_is_the_start_page_with_or_without_a_recipe(tmp_path: Path) -> None:
    rows = tmp_path / "rows.csv"
    rows.write_text("product\nCascade Hiking Boots\nPebble Wireless Earbuds\n")
    want = [
        ("completed", "Cascade Hiking Boots costs $159.00."),
        ("completed", "Pebble Wireless Earbuds costs $29.99."),
    ]
    runs = tmp_path / "runs"
    with serve_demo() as shop, serve_demo() as elsewhere:
        page = shop.page("index.html")  # a page, not the site's root: a base URL would have broken every address
        agent = PageAgent(model="demo", start_url=page, runs_dir=str(runs), screenshots=False)
        recorded = asyncio.run(agent.run(PRICE_TASK.format(product="Lumen 400 Headlamp")))
        assert recorded.success
        for name, extra in (("model", ["--model", "demo"]), ("recipe", ["--recipe", "1", "--runs-dir", str(runs)])):
            out = tmp_path / f"{name}.csv"
            done = map_cli("--rows", str(rows), "--out", str(out), "--url", page, *extra, cwd=tmp_path)
            assert done.returncode == 0, done.stdout + done.stderr
            assert answers(out) == want, name
        # the same recipe started on another site's page: the recording's addresses move to that site
        out = tmp_path / "elsewhere.csv"
        keep = ["--runs-dir", str(runs), "--recipe", "1"]
        done = map_cli(
            "--rows", str(rows), "--out", str(out), "--url", elsewhere.page("index.html"), *keep, cwd=tmp_path
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert answers(out) == want
        with out.open(newline="") as f:
            assert [r["replayed"] for r in csv.DictReader(f)] == ["2", "2"]  # no step had to heal
        # a template names the row's page; a placeholder naming no column is said before any browser starts
        out = tmp_path / "template.csv"
        done = map_cli("--rows", str(rows), "--out", str(out), "--url", shop.url + "{pge}", *keep, cwd=tmp_path)
        assert done.returncode == 2
        assert done.stderr == (
            "error: The start URL template names {pge}, which is not a column; the columns are: product.\n"
        )

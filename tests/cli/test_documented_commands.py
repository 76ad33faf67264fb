"""Every command the documentation names starts: each ``python benchmarks/X.py``, ``python scripts/X.py`` and
``notebook-agent COMMAND`` written in README.md, docs/**/*.md or a benchmark's or script's docstring is run here
with ``--help``, as a person following the text would run it from a clone: from a folder that is not the
checkout, with the package importable and nothing else of the checkout (``tests`` included) on the path.

``benchmarks/recipe_map.py``, run as its docstring said, failed from a clone with ``No module named 'tests'``;
a benchmark that read ``sys.argv`` by hand ran in full when asked for ``--help``.
"""

from __future__ import annotations

import concurrent.futures
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: ``python benchmarks/x.py``, ``.venv/bin/python scripts/y.py``: a script run by the project's Python. The peer
#: harness (benchmarks/peer/) runs in a virtualenv of its own with browser-use, so it is not one of these.
SCRIPT = re.compile(r"\bpython3?\s+((?:benchmarks|scripts)/\w+\.py)\b")
COMMAND = re.compile(r"\bnotebook-agent\s+([a-z]+)\b")


def documents() -> list[Path]:
    texts = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    return texts + sorted((ROOT / "benchmarks").glob("*.py")) + sorted((ROOT / "scripts").glob("*.py"))


def documented() -> tuple[set[str], set[str]]:
    scripts: set[str] = set()
    commands: set[str] = set()
    for path in documents():
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".py":  # a module's docstring, not its code
            text = text.split('"""')[1] if text.count('"""') >= 2 else ""
        scripts.update(SCRIPT.findall(text))
        commands.update(COMMAND.findall(text))
    return scripts, commands


SCRIPTS, COMMANDS = documented()


@pytest.fixture(scope="module")
def package_only(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """An environment whose path holds this checkout's package and nothing else of the checkout."""
    shim = tmp_path_factory.mktemp("path")
    (shim / "notebook_agent").symlink_to(ROOT / "notebook_agent", target_is_directory=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSTARTUP")}
    return {**env, "PYTHONPATH": str(shim)}


ENTRY = Path(sys.executable).with_name("notebook-agent")
"""The installed ``notebook-agent`` entry point, as a person types it."""


def argv(item: str) -> list[str]:
    return [str(ENTRY), item, "--help"] if "/" not in item else [sys.executable, str(ROOT / item), "--help"]


@pytest.fixture(scope="module")
def helped(package_only: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every documented command started with ``--help`` from a folder outside the checkout, a few at a time
    (each is a Python start-up; one after the other they take a minute)."""
    elsewhere = tmp_path_factory.mktemp("elsewhere")

    def start(item: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            argv(item), capture_output=True, text=True, env=package_only, cwd=elsewhere, stdin=subprocess.DEVNULL,
            timeout=300,
        )  # fmt: skip

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        items = sorted(SCRIPTS | COMMANDS)
        return dict(zip(items, pool.map(start, items), strict=True))


def test_the_documents_name_the_commands_this_checks() -> None:
    """The collection itself: what the brief's cases were is found (a broken pattern would check nothing)."""
    assert {"benchmarks/recipe_map.py", "benchmarks/miniwob.py", "scripts/fetch_test_model.py"} <= SCRIPTS
    assert {"run", "map", "replay", "export", "demo", "eval", "snapshot", "doctor", "models"} <= COMMANDS


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_every_documented_script_answers_help_from_a_clone(script: str, helped: dict[str, Any]) -> None:
    out = helped[script]
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.startswith("usage:") and "Traceback" not in out.stderr, out.stdout[:500] + out.stderr[-2000:]


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_documented_terminal_command_answers_help(command: str, helped: dict[str, Any]) -> None:
    assert ENTRY.exists(), f"{ENTRY}: the package's console script is not installed (pip install -e .)"
    out = helped[command]
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"usage: notebook-agent {command}"), out.stdout[:300]

"""A type checker holds a custom tool to the agent's dependencies: ``PageAgent(deps=A(), custom_tools=...)`` with a
tool declared on ``ToolContext[B]`` is a mypy error, the same tool on ``ToolContext[A]`` (or on the plain
context, which fits any run) is clean. Run through mypy itself on a small program."""

from __future__ import annotations

from pathlib import Path

import pytest

mypy_api = pytest.importorskip("mypy.api")

ROOT = Path(__file__).resolve().parents[3]

HEAD = """\
from typing import Any

from notebook_agent.agent import PageAgent
from notebook_agent.agent.step.tool_context import ToolContext
from notebook_agent.core.tools import ToolCallContext, tool


class Shop: ...
class Bank: ...
"""

CASE = """

@tool(parameters={{"type": "object", "properties": {{}}}})
async def uses_{n}(args: Any, ctx: {context}) -> str:
    return "ok"


agent_{n} = PageAgent(model="demo", deps=Shop(), custom_tools={{"uses": uses_{n}}})
typed_{n}: PageAgent[Shop] = PageAgent(model="demo", deps=Shop(), custom_tools={{"uses": uses_{n}}})
"""

CONTEXTS = ["ToolContext[Shop]", "ToolContext", "ToolCallContext[Any]", "ToolContext[Bank]"]
"""The tool's context in each case: the agent's dependencies, any (twice), and other dependencies."""


def test_a_tool_on_other_dependencies_than_the_agents_is_a_mypy_error(tmp_path: Path) -> None:
    program = HEAD + "".join(CASE.format(n=n, context=c) for n, c in enumerate(CONTEXTS))
    path = tmp_path / "program.py"
    path.write_text(program, encoding="utf-8")
    out, err, _ = mypy_api.run(
        [str(path), "--config-file", str(ROOT / "pyproject.toml"), "--follow-imports=silent", "--no-error-summary"]
    )
    assert not err, err
    errors = [line for line in out.splitlines() if ": error:" in line]
    lines = program.splitlines()
    wrong = {i + 1 for i, text in enumerate(lines) if text.startswith(("agent_3 ", "typed_3:"))}
    assert {int(e.split(":")[1]) for e in errors} == wrong, out  # both agents, their type inferred or written
    assert any("ToolContext[Bank]" in e for e in errors), out

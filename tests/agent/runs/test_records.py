"""Records leave a run at one exit, where secrets are redacted by value: wherever a secret shows up (the task,
a URL, a page title, the page, the model's own words, an action's arguments or result), neither the run file
nor the page events carry it."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

from hypothesis import given, settings
from hypothesis import strategies as st

from notebook_agent.agent import PageAgent, PageAgentResult, PageStep, RunFinished, StepFinished, save_run
from notebook_agent.agent.prompt.agent_output import agent_output
from notebook_agent.agent.runs.run_file import RunWriter, load_run
from notebook_agent.agent.safety.secrets import SecretVault
from notebook_agent.browser import BrowserSession
from notebook_agent.core.messages import Usage
from notebook_agent.llm.scripted import ScriptedModel
from tests.browser.conftest import Servers

SECRET = "s3cr3t-Value-42"


def strings(node: Any) -> list[str]:
    """Every string inside an event: dataclass fields, dicts, lists, pydantic models (bytes left out)."""
    if isinstance(node, str):
        return [node]
    if isinstance(node, Usage):
        return []
    if hasattr(node, "model_dump"):
        return strings(node.model_dump())
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        return [s for f in dataclasses.fields(node) for s in strings(getattr(node, f.name))]
    if isinstance(node, dict):
        return [s for k, v in node.items() for s in strings(k) + strings(v)]
    if isinstance(node, (list, tuple)):
        return [s for v in node for s in strings(v)]
    return []


async def test_a_secret_that_shows_up_anywhere_is_kept_out_of_the_run_file_and_the_events(
    browser: BrowserSession, servers: Servers, tmp_path: Path
) -> None:
    echo = servers.url(f"echo.html?t={quote(SECRET)}")
    script = [
        # the model repeats the secret in its own words and in an action's arguments
        agent_output("scroll", {"down": True}, memory=f"the token is {SECRET}", next_goal=f"use {SECRET}"),
        agent_output("go_to_url", {"url": echo}, evaluation=f"saw {SECRET}"),
        agent_output("click_element_by_index", {"index": 9999}),  # an error result
        agent_output("done", {"text": f"done with {SECRET}", "success": True}),
    ]
    agent = PageAgent(
        model=ScriptedModel(script),
        browser=browser,
        start_url=echo,  # the URL, the title and the page all carry it
        secrets={servers.main: {"token": SECRET}},
        runs_dir=str(tmp_path),
        max_steps=6,
    )
    events = [e async for e in agent.stream(f"Use the token {SECRET} on the echo page")]
    result = next(e for e in events if isinstance(e, RunFinished)).result
    assert result.status == "completed", result.error
    assert any(SECRET in (s.result or "") or "<secret>token</secret>" in s.url for s in result.steps)

    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert files and all(SECRET.encode() not in p.read_bytes() for p in files)
    run_file = next(p for p in files if p.suffix == ".jsonl")
    kinds = [json.loads(line)["kind"] for line in run_file.read_text(encoding="utf-8").splitlines()]
    assert kinds == ["run", *["step"] * len(result.steps), "end"]  # written once: one header, one line a step
    assert "<secret>token</secret>" in run_file.read_text(encoding="utf-8")

    shown = [s for e in events if not isinstance(e, RunFinished) for s in strings(e)]
    shown += strings(dataclasses.replace(result, task="", system_prompt=""))
    leaks = [s for s in shown if SECRET in s]
    assert shown and not leaks, leaks
    assert sum(isinstance(e, StepFinished) for e in events) == len(result.steps)


_text = st.text(st.characters(exclude_categories=["Cs"]), max_size=12)
_record = st.recursive(
    st.one_of(_text, st.integers(), st.none(), st.booleans()),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_text, inner, max_size=4)),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(
    secret=st.text(st.characters(whitelist_categories=("L", "N", "P", "S", "Zs")), min_size=4, max_size=16).filter(
        lambda s: s.strip() == s and s not in "<secret>k</secret>"
    ),
    record=st.dictionaries(_text, _record, min_size=1, max_size=5),
    where=st.lists(st.tuples(st.integers(0, 100), _text, _text), min_size=1, max_size=4),
)
def test_the_writer_never_writes_a_secret_wherever_it_sits(
    tmp_path_factory: Any, secret: str, record: dict[str, Any], where: list[tuple[int, str, str]]
) -> None:
    """Property: a secret embedded in any string of any line (keys too), at any depth, never reaches disk."""
    vault = SecretVault({"x": {"k": secret}})
    planted = dict(record)
    for n, before, after in where:
        planted[f"{before}{secret}{after}"] = [f"{before}{secret}", {"deep": {str(n): secret + after}}]
    folder = tmp_path_factory.mktemp("runs")
    writer = RunWriter(folder, "r", redact=vault.redact)
    writer.start({"prompt_version": "v", "task": f"task {secret}", **planted}, f"prompt {secret}")
    writer.end({"text": secret, **planted})
    run_file = folder / "r.jsonl"
    lines = run_file.read_text(encoding="utf-8").split("\n")
    written = [s for line in lines if line for s in strings(json.loads(line))]
    assert written and not [s for s in written if secret in s]
    assert secret not in (folder / "prompts" / "v.md").read_text(encoding="utf-8")


def test_a_run_whose_text_holds_unicode_line_breaks_loads_back(tmp_path: Path) -> None:
    """JSON keeps U+0085, U+2028, U+2029 and \\x1c raw inside strings: the loader splits lines at "\\n" only."""
    step = PageStep(index=1, result="a\x85b\u2028c\x1cd", memory="m\u2029n")
    result = PageAgentResult(
        task="t\u2029u",
        status="completed",
        success=True,
        text="x\x85y",
        steps=[step],
        usage=Usage(),
        model="scripted:x",
        duration_s=1.0,
        prompt_version="v",
    )
    back = load_run(save_run(result, tmp_path))
    assert (back.task, back.text, back.steps[0].result, back.steps[0].memory) == (
        result.task,
        result.text,
        step.result,
        step.memory,
    )

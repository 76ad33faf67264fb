"""Saved runs: lossless round trip, half-written files, lookup by reference, and comparison."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path

import pytest

from notebook_agent.agent import PageAgentResult, PageStep, StepRequest
from notebook_agent.agent.runs import compare_runs, find_run, list_runs, load_run, result_to_dict, save_run
from notebook_agent.core.messages import AssistantMessage, Cost, TextContent, ToolCall, Usage


def make_result(
    run_id: str, actions: list[tuple[str, dict, str]], *, prompt: str = "You are a browser agent.\n"
) -> PageAgentResult:
    steps = []
    for i, (name, args, res) in enumerate(actions, 1):
        steps.append(
            PageStep(
                index=i,
                evaluation_previous_goal=f"eval {i}",
                memory="m",
                next_goal=f"goal {i}",
                action=name,
                args=args,
                result=res,
                is_error=res.startswith("Error"),
                url="http://x/",
                title="X",
                started_at=1700000000.0 + i,
                state_ms=3.5,
                model_ms=120.0,
                action_ms=40.0,
                usage=Usage(input=100, output=20, cache_read=50, total_tokens=170, cost=Cost(total=0.001)),
                screenshot=b"\xff\xd8jpeg-bytes-%d" % i,
                repairs=["read AgentOutput from JSON in the text"] if i == 2 else [],
                observations=["Page navigated to → http://x/"] if i == 1 else [],
                approval={"decision": "denied", "reason": "no", "by": "user", "risk": "r"} if name == "click" else None,
                request=StepRequest(
                    system_prompt=prompt,
                    state=f"<agent_state>{i}</agent_state>",
                    tools=[{"name": "AgentOutput", "parameters": {"type": "object"}}],
                    tool_choice="AgentOutput",
                ),
                output=AssistantMessage(
                    content=[
                        TextContent(text="t"),
                        ToolCall(id=f"c{i}", name="AgentOutput", arguments={"action": {name: args}}),
                    ]
                ),
            )
        )
    usage = Usage()
    for s in steps:
        usage.add(s.usage)
    return PageAgentResult(
        task="find it",
        status="completed",
        success=True,
        text="found",
        steps=steps,
        usage=usage,
        model="scripted:scripted",
        duration_s=1.25,
        prompt_version="abc123def456",
        run_id=run_id,
        settings={"max_steps": 5, "approval": "ask-risky", "start_url": "http://x/"},
        system_prompt=prompt,
    )


ACTIONS = [
    ("input_text", {"index": 1, "text": "a"}, "Typed 'a'"),
    ("click", {"index": 2}, "Clicked"),
    ("done", {"text": "found"}, "found"),
]


def test_save_and_load_is_lossless(tmp_path: Path) -> None:
    original = make_result("20261130-101010-aaaaaa", ACTIONS)
    path = save_run(copy.deepcopy(original), tmp_path)
    assert path.name == "20261130-101010-aaaaaa.jsonl"
    assert (tmp_path / "20261130-101010-aaaaaa" / "step_1.jpg").read_bytes() == original.steps[0].screenshot
    loaded = load_run(path)
    before, after = result_to_dict(original), result_to_dict(loaded)
    for s in before["steps"]:
        s.pop("screenshot_ref")
    for s in after["steps"]:
        assert s.pop("screenshot_ref").endswith(".jpg")
    assert after == before
    assert [s.screenshot for s in loaded.steps] == [s.screenshot for s in original.steps]
    assert loaded.system_prompt == original.system_prompt
    assert dataclasses.asdict(loaded.steps[0].request) == dataclasses.asdict(original.steps[0].request)  # type: ignore[arg-type]
    assert loaded.steps[1].output == original.steps[1].output


def test_a_run_file_cut_short_still_loads(tmp_path: Path) -> None:
    path = save_run(make_result("r1", ACTIONS), tmp_path)
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:-1]) + "\n")  # lose the closing line
    loaded = load_run(path)
    assert loaded.status == "error" and len(loaded.steps) == 3
    assert loaded.error == "The run file ends before the run did."
    (tmp_path / "junk.jsonl").write_text('{"kind": "step"}\n')
    with pytest.raises(ValueError, match="not a notebook_agent run file"):
        load_run(tmp_path / "junk.jsonl")


def test_find_run_by_id_prefix_suffix_and_position(tmp_path: Path) -> None:
    for rid in ("20261130-090000-aaaaaa", "20261130-100000-bbbbbb"):
        save_run(make_result(rid, ACTIONS), tmp_path)
    assert find_run(tmp_path, "bbbbbb").stem.endswith("bbbbbb")
    assert find_run(tmp_path, "20261130-09").stem.endswith("aaaaaa")
    assert find_run(tmp_path, "1").stem.endswith("aaaaaa") and find_run(tmp_path, "-1").stem.endswith("bbbbbb")
    with pytest.raises(ValueError, match="More than one run matches"):
        find_run(tmp_path, "20261130")
    with pytest.raises(ValueError, match="out of range"):
        find_run(tmp_path, "7")
    assert [r.run_id for r in list_runs(tmp_path)] == ["20261130-090000-aaaaaa", "20261130-100000-bbbbbb"]


def test_compare_finds_the_first_divergence() -> None:
    a = make_result("a", ACTIONS)
    same = compare_runs(a, make_result("b", ACTIONS))
    assert same.first_divergence is None
    different_result = [ACTIONS[0], ("click", {"index": 2}, "Error: element gone"), ACTIONS[2]]
    c = compare_runs(a, make_result("b", different_result))
    assert (c.first_divergence, c.divergence_kind) == (2, "result")
    different_action = [ACTIONS[0], ACTIONS[1], ("scroll", {"down": True}, "Scrolled"), ACTIONS[2]]
    c = compare_runs(a, make_result("b", different_action))
    assert (c.first_divergence, c.divergence_kind) == (3, "action")
    assert len(c.steps) == 4 and c.steps[3].a is None
    summary = dict((k, (x, y)) for k, x, y in c.summary())
    assert summary["steps"] == (3, 4) and summary["status"] == ("completed", "completed")

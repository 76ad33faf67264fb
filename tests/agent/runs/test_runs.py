"""Saved runs: lossless round trip, half-written files, lookup by reference, and comparison."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from notebook_agent.agent import PageAgentResult, PageStep, StepRequest
from notebook_agent.agent.runs.run_file import compare_runs, find_run, list_runs, load_run, result_to_dict, save_run
from notebook_agent.core.messages import AssistantMessage, Cost, TextContent, ToolCall, Usage

#: One step of a made-up run: the action, its arguments (JSON) and its result.
Action = tuple[str, dict[str, Any], str]


def make_result(run_id: str, actions: list[Action], *, prompt: str = "You are a browser agent.\n") -> PageAgentResult:
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
                usage=Usage(input=100, output=20, cache_read=50, total_tokens=170, calls=1, cost=Cost(total=0.001)),
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


ACTIONS: list[Action] = [
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


# -- run files are written as the run happens, and read as untrusted input ---------------------------------------
async def test_steps_reach_the_file_as_they_finish(tmp_path: Path, browser: Any, servers: Any) -> None:
    import asyncio
    import json

    from notebook_agent.agent import PageAgent
    from notebook_agent.agent.prompt.agent_output import agent_output
    from notebook_agent.core.model import Context
    from notebook_agent.llm.scripted import ScriptedModel

    reached_third = asyncio.Event()
    release = asyncio.Event()

    async def third(ctx: Context) -> Any:
        reached_third.set()
        await release.wait()
        return agent_output("done", {"text": "ok", "success": True})

    class Waiting(ScriptedModel):
        async def stream(self, context: Any, options: Any) -> Any:
            if len(self.requests) == 2:
                await third(context)
            async for event in super().stream(context, options):
                yield event

    model = Waiting(
        [
            agent_output("scroll", {"down": True}),
            agent_output("wait", {"seconds": 1}),
            agent_output("done", {"text": "ok", "success": True}),
        ]
    )
    agent = PageAgent(model=model, browser=browser, start_url=servers.url("nav.html"), runs_dir=str(tmp_path))
    task = asyncio.ensure_future(agent.run("look around"))
    await asyncio.wait_for(reached_third.wait(), 30)
    files = list(tmp_path.glob("*.jsonl"))
    assert len(files) == 1
    kinds = [json.loads(line)["kind"] for line in files[0].read_text().splitlines()]
    assert kinds == ["run", "step", "step"]  # a kernel killed now keeps both finished steps
    cut = load_run(files[0])
    assert [s.action for s in cut.steps] == ["scroll", "wait"] and cut.status == "error"
    release.set()
    result = await task
    assert load_run(files[0]).status == result.status == "completed"
    assert [json.loads(line)["kind"] for line in files[0].read_text().splitlines()][-1] == "end"


def test_load_run_reads_only_inside_its_folder(tmp_path: Path) -> None:
    import json

    outside = tmp_path / "outside.txt"
    outside.write_text("SECRET FILE")
    runs = tmp_path / "runs"
    path = save_run(make_result("r1", [("wait", {"seconds": 1}, "ok"), ("done", {"text": "x"}, "x")]), runs)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    lines[0]["prompt_version"] = "../../outside.txt"
    lines[1]["screenshot_ref"] = str(outside)
    lines[2]["screenshot_ref"] = "../outside.txt"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    (tmp_path / "outside.txt.md").write_text("You are evil.")
    loaded = load_run(path)
    assert loaded.system_prompt == ""
    assert [s.screenshot for s in loaded.steps] == [None, None]
    assert [s.screenshot_ref for s in loaded.steps] == [None, None]


def test_one_unreadable_file_does_not_hide_the_others(tmp_path: Path) -> None:
    from notebook_agent.agent.runs.run_file import scan_runs

    save_run(make_result("a", [("done", {"text": "x"}, "x")]), tmp_path)
    (tmp_path / "broken.jsonl").write_text("this is not json\n")
    save_run(make_result("b", [("done", {"text": "y"}, "y")]), tmp_path)
    runs, bad = scan_runs(tmp_path)
    assert [r.run_id for r in runs] == ["a", "b"]
    assert [(p.name, "not valid JSON" in why) for p, why in bad] == [("broken.jsonl", True)]
    assert [r.run_id for r in list_runs(tmp_path)] == ["a", "b"]


def test_unserialisable_values_and_hostile_ids_do_not_lose_the_run(tmp_path: Path) -> None:
    deep: Any = "bottom"
    for _ in range(5000):
        deep = {"x": deep}
    result = make_result("../../escape", [("done", {"text": "x"}, "x")])
    result.steps[0].args = {"text": deep}
    path = save_run(result, tmp_path)
    assert path.parent == tmp_path and path.name == "_.._escape.jsonl"
    loaded = load_run(path)
    assert loaded.text == result.text and len(loaded.steps) == 1
    assert loaded.steps[0].args == {"unserialisable": "dict too deep or cyclic to save"}


def test_a_small_number_is_a_position_before_any_id_match(tmp_path: Path) -> None:
    """`%agent compare 1 2`: ids start with the date (2...) and may end in a digit; a number within the count of
    runs is always a position, anything else the start of one id, and every failure names the candidates."""
    ids = ("20261130-090000-aaaaa1", "20261130-100000-bbbbb2", "20261130-110000-ccccc2")
    for rid in ids:
        save_run(make_result(rid, ACTIONS), tmp_path)
    assert [find_run(tmp_path, ref).stem for ref in ("1", "2", "3", "-1", "-3")] == [*ids, ids[2], ids[0]]
    assert find_run(tmp_path, "20261130-10").stem == ids[1]
    assert find_run(tmp_path, "ccc").stem == ids[2]
    with pytest.raises(ValueError, match="More than one run matches '2026'") as many:
        find_run(tmp_path, "2026")
    assert all(rid in str(many.value) for rid in ids) and "1 to 3" in str(many.value)
    with pytest.raises(ValueError, match="There are 3 runs; 4 is out of range") as out:
        find_run(tmp_path, "4")
    assert ids[2] in str(out.value)
    with pytest.raises(ValueError, match="No run matches 'zzz'"):
        find_run(tmp_path, "zzz")


def test_a_full_disk_leaves_no_truncated_screenshot_or_prompt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 20, item 4b: pictures and prompt files are written whole or not at all (temp file + rename)."""
    import errno
    import os

    from notebook_agent.agent.runs.run_file import RunWriter

    writer = RunWriter(tmp_path, "run-1")
    writer.start({"prompt_version": "v1"}, "old prompt")
    step = PageStep(index=1, screenshot=b"\xff\xd8" + b"x" * 5000)
    writer.screenshot(step)
    shot = tmp_path / "run-1" / "step_1.jpg"
    assert shot.read_bytes() == step.screenshot
    real_write = os.write

    def full_disk(fd: int, data: Any) -> int:  # the first chunk lands, then the disk is full
        if len(data) > 100:
            return real_write(fd, bytes(data[:100]))
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", full_disk)
    with pytest.raises(OSError, match="No space left"):
        writer.screenshot(PageStep(index=1, screenshot=b"\xff\xd8" + b"y" * 5000))
    with pytest.raises(OSError, match="No space left"):
        writer.screenshot(PageStep(index=2, screenshot=b"\xff\xd8" + b"z" * 5000))
    with pytest.raises(OSError, match="No space left"):
        RunWriter(tmp_path, "run-2").start({"prompt_version": "v2"}, "new prompt " * 50)
    monkeypatch.undo()
    assert shot.read_bytes() == step.screenshot  # the earlier picture is intact
    assert not (tmp_path / "run-1" / "step_2.jpg").exists()  # no empty or half picture
    assert not (tmp_path / "prompts" / "v2.md").exists()
    assert (tmp_path / "prompts" / "v1.md").read_text() == "old prompt"
    leftovers = [p.name for p in tmp_path.rglob("*.tmp")]
    assert leftovers == []


@settings(max_examples=25, deadline=None)
@given(depth=st.integers(0, 400), limit=st.sampled_from([1_000, 20_000]), in_list=st.booleans())
def test_how_deep_a_value_may_be_saved_does_not_hang_on_the_recursion_limit(
    depth: int, limit: int, in_list: bool
) -> None:
    """A value nested up to MAX_SAVED_DEPTH is saved as it is, a deeper one as the note, whatever the recursion
    limit (another library may raise it): a file saved under a raised limit still loads under the usual one."""
    import sys
    import tempfile

    from notebook_agent.agent.runs.run_file import MAX_SAVED_DEPTH

    value: Any = "bottom"
    for _ in range(depth):
        value = [value] if in_list else {"x": value}
    result = make_result("deep", [("done", {"text": "x"}, "x")])
    result.steps[0].args = {"text": value}  # the args dict itself is one level
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(limit)
    try:
        with tempfile.TemporaryDirectory() as folder:
            path = save_run(result, Path(folder))
            sys.setrecursionlimit(before)
            loaded = load_run(path)
    finally:
        sys.setrecursionlimit(before)
    if depth + 1 <= MAX_SAVED_DEPTH:
        assert loaded.steps[0].args == {"text": value}
    else:
        assert loaded.steps[0].args == {"unserialisable": "dict too deep or cyclic to save"}

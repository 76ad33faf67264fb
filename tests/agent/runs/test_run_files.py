"""Run files are input, not trusted state: every line is checked on load (a clear error naming the line, step and
field, never a raw exception), a replay's start URL and recorded navigations pass the gate as a model's
``go_to_url`` would, and a replay without healing whose step failed ends ``failed`` naming it. Real Chromium on
two local sites; a generator mutates valid run files in ways nobody listed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notebook_agent.agent import PageAgent, load_run, save_run
from notebook_agent.agent.runs.run_schema import RunFileError
from notebook_agent.agent.step.replay_pilot import ReplayPilot
from notebook_agent.browser import BrowserSession
from notebook_agent.llm.scripted import ScriptedModel
from tests.agent.test_page_agent import index_of, step
from tests.browser.conftest import Servers


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]


def write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


async def record(browser: BrowserSession, servers: Servers, runs: Path, script: list[Any], page: str) -> Path:
    agent = PageAgent(model=ScriptedModel(script), browser=browser, start_url=servers.url(page), runs_dir=str(runs))
    result = await agent.run("do it")
    assert result.status == "completed", result.error
    return runs / f"{result.run_id}.jsonl"


TICK = [
    step("click_element_by_index", lambda c: {"index": index_of(c, r"type=checkbox")}),
    step("done", {"text": "ticked", "success": True}),
]


async def test_a_wrong_type_is_a_clear_error_naming_the_line_step_and_field(
    browser: BrowserSession, servers: Servers, tmp_path: Path
) -> None:
    path = await record(browser, servers, tmp_path / "runs", TICK, "agent_form.html")
    records = lines(path)
    records[1]["args"] = ["index", 3]  # a list where the arguments were
    write(path, records)
    with pytest.raises(RunFileError, match=r"\.jsonl:2 \(step 1\): the step's field 'args' is not valid") as caught:
        load_run(path)
    assert "found list ['index', 3]" in str(caught.value) and "edited or damaged" in str(caught.value)
    with pytest.raises(RunFileError, match="field 'args'"):
        await PageAgent(model=ScriptedModel([]), browser=browser).replay(str(path))

    records[1]["args"] = {"index": 1}
    records[1]["target"] = "a string"
    records[0]["settings"] = {"start_url": 42}
    write(path, records)
    with pytest.raises(RunFileError, match=r":1: the header's field 'settings.start_url' is not valid"):
        load_run(path)


async def test_an_edited_start_url_on_another_site_is_not_opened(
    browser: BrowserSession, servers: Servers, tmp_path: Path
) -> None:
    path = await record(browser, servers, tmp_path / "runs", TICK, "agent_form.html")
    records = lines(path)
    records[0]["settings"]["start_url"] = servers.other_url("agent_form.html")  # another site
    write(path, records)
    here = browser.page.url
    replayed = await PageAgent(model=ScriptedModel([]), browser=browser, approval="deny-risky").replay(str(path))
    assert replayed.status == "error" and "start URL" in (replayed.error or ""), replayed.error
    assert "another site" in (replayed.error or "") and "replay(url=...)" in (replayed.error or "")
    assert browser.page.url == here and not replayed.steps

    guarded = PageAgent(model=ScriptedModel([]), browser=browser, allowed_domains=[servers.main])
    replayed = await guarded.replay(str(path))
    assert replayed.status == "error" and "allowed" in (replayed.error or ""), replayed.error
    assert browser.page.url == here

    # the person names the site: the recording's path on it
    chosen = await PageAgent(model=ScriptedModel([]), browser=browser, approval="deny-risky").replay(
        str(path), url=servers.main
    )
    assert chosen.status == "completed", chosen.error
    assert chosen.steps[0].url == servers.url("agent_form.html")


async def test_a_refused_replay_leaves_a_complete_run_file(
    browser: BrowserSession, servers: Servers, tmp_path: Path
) -> None:
    """A run refused at its start writes its header with the refusal (never a closing line alone, which no
    reader can load): the file loads, lists and says why."""
    path = await record(browser, servers, tmp_path / "runs", TICK, "agent_form.html")
    records = lines(path)
    records[0]["settings"]["start_url"] = servers.other_url("agent_form.html")
    write(path, records)
    out = tmp_path / "runs"  # the recording's folder: it exists, as a runs_dir used before does
    refused = [
        PageAgent(model=ScriptedModel([]), browser=browser, approval="deny-risky", runs_dir=str(out)),
        PageAgent(model=ScriptedModel([]), browser=browser, allowed_domains=[servers.main], runs_dir=str(out)),
    ]
    for agent in refused:
        replayed = await agent.replay(str(path))
        assert replayed.status == "error" and "start URL" in (replayed.error or ""), replayed.error
        saved = out / f"{replayed.run_id}.jsonl"
        kinds = [r["kind"] for r in lines(saved)]
        assert kinds == ["run", "end"], kinds
        loaded = load_run(saved)
        assert loaded.status == "error" and loaded.error == replayed.error and loaded.task == replayed.task
        assert not loaded.steps
    # a run refused at a start URL it was given (not a replay) leaves a complete file too
    agent = PageAgent(
        model=ScriptedModel([]),
        browser=browser,
        start_url=servers.other_url("agent_form.html"),
        allowed_domains=[servers.main],
        runs_dir=str(out),
    )
    result = await agent.run("go")
    assert result.status == "error", result.error
    assert load_run(out / f"{result.run_id}.jsonl").error == result.error
    assert len(list(out.glob("*.jsonl"))) == 4  # the recording and the three refused runs


async def test_a_recorded_navigation_passes_the_gate_and_a_failed_step_ends_the_replay(
    browser: BrowserSession, servers: Servers, tmp_path: Path
) -> None:
    script = [
        step("go_to_url", {"url": servers.url("agent_thanks.html")}),
        step("done", {"text": "went there", "success": True}),
    ]
    path = await record(browser, servers, tmp_path / "runs", script, "agent_form.html")
    records = lines(path)
    records[1]["args"]["url"] = servers.other_url("agent_thanks.html")  # the edited file goes elsewhere
    write(path, records)
    await browser.page.goto(servers.url("agent_form.html"))
    agent = PageAgent(model=ScriptedModel([]), browser=browser, approval="deny-risky")
    replayed = await agent.replay(str(path), heal=False)
    assert replayed.steps[0].is_error and replayed.steps[0].approval is not None
    assert replayed.steps[0].approval["decision"] == "denied"
    assert not browser.page.url.startswith(servers.other)
    assert replayed.status == "failed" and not replayed.success  # not the recorded "went there"
    assert replayed.text.startswith("The replay stopped at step 1: its action failed"), replayed.text


async def test_without_healing_a_denied_step_ends_failed(browser: BrowserSession, servers: Servers) -> None:
    script = [
        step("click_element_by_index", lambda c: {"index": index_of(c, r"Delete account")}),
        step("done", {"text": "deleted", "success": True}),
    ]
    recorded = await PageAgent(
        model=ScriptedModel(script), browser=browser, start_url=servers.url("agent_danger.html")
    ).run("Delete my account")
    agent = PageAgent(model=ScriptedModel([]), browser=browser, approval="deny-risky")
    replayed = await agent.replay(recorded, heal=False)
    assert replayed.steps[0].is_error
    assert replayed.status == "failed" and replayed.text.startswith("The replay stopped at step 1"), replayed.text
    assert "deleted" not in replayed.text


# -- the generator: valid run files, mutated ----------------------------------------------------------------------
def valid_file(folder: Path) -> Path:
    """A run file as a run writes it (header, steps with outputs and requests, closing line)."""
    from notebook_agent.agent.runs.result import PageAgentResult, PageStep, StepRequest
    from notebook_agent.core.messages import AssistantMessage, TextContent, ToolCall, Usage

    out = AssistantMessage(content=[TextContent(text="ok"), ToolCall(id="c1", name="AgentOutput", arguments={"a": 1})])
    steps = [
        PageStep(
            1,
            next_goal="click",
            action="click_element_by_index",
            args={"index": 3},
            result="Clicked",
            url="http://127.0.0.1:1/a",
            target={"tag": "button", "name": "Go", "href": "/x"},
            request=StepRequest("sys", "state", [], "AgentOutput"),
            output=out,
            observations=["seen"],
        ),
        PageStep(2, action="done", args={"text": "fine", "success": True}, url="http://127.0.0.1:1/a"),
    ]
    result = PageAgentResult(
        task="t",
        status="completed",
        success=True,
        text="fine",
        steps=steps,
        usage=Usage(),
        model="scripted:x",
        duration_s=1.0,
        prompt_version="abcdef12",
        run_id="20260101-000000-aaaaaa",
        settings={"start_url": "http://127.0.0.1:1/a"},
    )
    return save_run(result, folder)


def paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON value, as key paths."""
    found = [prefix]
    if isinstance(node, dict):
        for k, v in node.items():
            found += paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            found += paths(v, (*prefix, i))
    return found


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)
lone = st.sampled_from(["\ud800", "\udfff", "a\udc00b", "\ud83d"])


def mutate(records: list[Any], data: st.DataObject) -> list[Any]:
    line = data.draw(st.integers(0, len(records) - 1))
    record = records[line]
    where = data.draw(st.sampled_from(paths(record)))
    how = data.draw(st.sampled_from(["replace", "delete", "extra", "surrogate", "line"]))
    if how == "line":
        records[line] = data.draw(json_values)
        return records
    if not where:
        where = (data.draw(st.sampled_from(list(record))),) if isinstance(record, dict) and record else ()
    parent: Any = record
    for part in where[:-1]:
        parent = parent[part]
    last = where[-1] if where else None
    if last is None:
        return records
    if how == "replace":
        parent[last] = data.draw(json_values)
    elif how == "delete":
        del parent[last]
    elif how == "surrogate":
        parent[last] = data.draw(st.text(max_size=4)) + data.draw(lone)
    elif isinstance(parent, dict):
        parent[data.draw(st.text(max_size=8))] = data.draw(json_values)
    return records


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_a_mutated_run_file_loads_or_says_what_is_wrong(tmp_path: Path, data: st.DataObject) -> None:
    folder = tmp_path / f"m{len(list(tmp_path.iterdir()))}"
    path = valid_file(folder)
    records = lines(path)
    for _ in range(data.draw(st.integers(1, 3))):
        records = mutate(records, data)
    # json.dumps writes a lone surrogate as an escape: valid JSON that decodes to one
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    try:
        loaded = load_run(path)
    except RunFileError as exc:
        assert str(exc) and "Traceback" not in str(exc)
        return
    # what loaded is usable: replay reads it, and it can be written again
    pilot = ReplayPilot.of_run(loaded, heal=False, url="http://127.0.0.1:2")
    assert pilot.start_url is None or isinstance(pilot.start_url, str)
    for s in pilot.steps:
        assert isinstance(s.args, dict) and isinstance(s.index, int)
        assert s.target is None or isinstance(s.target, dict)
    save_run(loaded, folder / "again")

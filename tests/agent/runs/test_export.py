"""A recorded run exported as a Playwright script: the script runs with plain ``python`` where notebook_agent
cannot be imported, on another host, with secrets from the environment; any run gives valid Python."""

from __future__ import annotations

import ast
import asyncio
import io
import json
import os
import re
import subprocess
import sys
import tokenize
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from IPython.core.interactiveshell import InteractiveShell

from notebook_agent.agent import PageAgent, load_run
from notebook_agent.agent.runs.playwright_export import to_playwright, write_script
from notebook_agent.agent.runs.result import PageAgentResult, PageStep
from notebook_agent.browser import BrowserSession
from notebook_agent.cli.main import main as cli_main
from notebook_agent.core.messages import Usage
from notebook_agent.demo import DEMO_TASK, demo_url, serve_demo
from notebook_agent.llm.scripted import ScriptedModel
from notebook_agent.notebook.runtime import STATE
from tests.agent.test_page_agent import index_of, state, step
from tests.browser.conftest import LOGIN, LOGINS, Servers

ANSWER = "Cheapest wireless headphones: TrailSound Wireless Headphones Lite at $54.99"


@pytest.fixture(scope="module")
def no_notebook_agent(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder that, first on PYTHONPATH, makes ``import notebook_agent`` fail: a script run with it proves it
    needs only Playwright."""
    folder = tmp_path_factory.mktemp("blocker")
    (folder / "notebook_agent").mkdir()
    (folder / "notebook_agent" / "__init__.py").write_text(
        "raise ImportError('an exported script needs only playwright')"
    )
    return folder


def run_script(
    path: Path, *args: str, blocker: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``python SCRIPT ARGS`` as a user would run it, where notebook_agent cannot be imported."""
    base = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        [sys.executable, str(path), *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=path.parent,
        env={**base, "PYTHONPATH": str(blocker), **(env or {})},
        stdin=subprocess.DEVNULL,
    )


async def run_script_async(path: Path, *args: str, **kw: Any) -> subprocess.CompletedProcess[str]:
    return await asyncio.to_thread(run_script, path, *args, **kw)


def imported(script: str) -> set[str]:
    tree = ast.parse(script)
    names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    return names | {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def demo_run(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[PageAgentResult]:
    """The demo task recorded with the demo model on a demo server that is gone afterwards (so a script that
    does not go to its --base-url fails), loaded back from its run file."""
    runs = tmp_path_factory.mktemp("runs")
    with serve_demo() as shop:
        recorded = await PageAgent(model="demo", start_url=shop.url, runs_dir=str(runs)).run(DEMO_TASK)
    assert recorded.success and recorded.text == ANSWER
    yield load_run(next(runs.glob("*.jsonl")))


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_the_demo_run_replays_as_a_script_on_another_host(
    demo_run: PageAgentResult, mode: str, tmp_path: Path, no_notebook_agent: Path
) -> None:
    script = to_playwright(demo_run, mode=mode)  # type: ignore[arg-type]
    assert f"playwright.{mode}_api" in imported(script) and not any("notebook_agent" in m for m in imported(script))
    elements = [s for s in demo_run.steps if s.target]
    assert script.count("expect(target).to_be_visible()") == len(elements) == 5
    assert script.count("expect(page).to_have_url(url_re(") == len(elements)
    assert 'target = page.get_by_role("button", name="Add to cart", exact=True)' in script
    assert 'target.select_option(label="Price: low to high")' in script
    path = write_script(script, tmp_path / "replay.py")
    with serve_demo() as other:  # another server, another port: the recorded one is gone
        out = await run_script_async(path, "--base-url", other.url, blocker=no_notebook_agent)
    assert out.returncode == 0, out.stderr
    assert out.stdout == ANSWER + "\n"


async def test_the_script_stops_at_the_step_whose_page_is_not_the_recorded_one(
    demo_run: PageAgentResult, servers: Servers, tmp_path: Path, no_notebook_agent: Path
) -> None:
    path = write_script(to_playwright(demo_run), tmp_path / "replay.py")
    out = await run_script_async(path, "--base-url", servers.main, blocker=no_notebook_agent)  # not the shop
    assert out.returncode == 1 and out.stdout == ""
    assert f"The replay of run {demo_run.run_id} failed at step 1 " in out.stderr
    assert "to_be_visible" in out.stderr  # the searchbox the step typed into is not there


def tab_id(ctx: Any, title: str) -> int:
    """The id of the tab titled ``title`` in the browser state's tab list."""
    found = re.search(rf"Tabs: .*?(\d+) {title}\b", state(ctx))
    assert found, state(ctx)
    return int(found.group(1))


async def test_every_kind_of_step_is_written_and_replays(
    browser: BrowserSession, servers: Servers, tmp_path: Path, no_notebook_agent: Path
) -> None:
    """A popup the run went on in, a tab switch, frames, keys, going back, hover, scrolls and a wait."""
    script = [
        step("click_element_by_index", lambda c: {"index": index_of(c, r"Open docs")}, next_goal="open the docs"),
        step("switch_tab", lambda c: {"tab_id": tab_id(c, "Tabs")}, next_goal="back to the first tab"),
        step("go_to_url", {"url": servers.url("frames.html")}),
        step("input_text", lambda c: {"index": index_of(c, r"Frame input"), "text": "hello"}),
        step("click_element_by_index", lambda c: {"index": index_of(c, r"Frame button")}),
        step("send_keys", {"keys": "Tab"}),
        step("go_back", {}),
        step("go_to_url", {"url": servers.url("hover.html")}),
        step("hover", lambda c: {"index": index_of(c, r"Hover for help")}),
        step("go_to_url", {"url": servers.url("scroll.html")}),
        step("scroll", lambda c: {"down": True, "pixels": 60, "index": index_of(c, r"Pick 3")}),
        step("scroll", {"down": True, "pixels": 300}),
        step("wait", {"seconds": 1}),
        step("done", {"text": "all done", "success": True}),
    ]
    recorded = await PageAgent(model=ScriptedModel(script), browser=browser, start_url=servers.url("tabs.html")).run(
        "everything: tabs, frames, keys, hover menus, scrolls"
    )
    assert recorded.success and not any(s.is_error for s in recorded.steps), [s.result for s in recorded.steps]
    source = to_playwright(recorded)
    for expected in (
        "with page.expect_popup() as popup:",
        'page = tab_at(page, url_re("' + servers.url("tabs.html"),
        'page.frame_locator("#same").get_by_role("textbox", name="Frame input", exact=True)',
        'target.fill("hello")',
        'page.keyboard.press("Tab")',
        "page.go_back()",
        "target.hover()\n    page.mouse.wheel(0, 60)",
        "page.mouse.wheel(0, 300)",
        "page.wait_for_timeout(1000)",
        'print("all done")',
    ):
        assert expected in source
    out = await run_script_async(write_script(source, tmp_path / "all.py"), blocker=no_notebook_agent)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "all done\n"


async def test_a_secret_is_read_from_the_environment_and_never_written(
    browser: BrowserSession, servers: Servers, tmp_path: Path, no_notebook_agent: Path
) -> None:
    LOGIN.update(username="ada", password="pa55-word-9")
    LOGINS.clear()
    script = [
        step("input_text", lambda c: {"index": index_of(c, r"name=username"), "text": "ada"}),
        step("input_text", lambda c: {"index": index_of(c, r"type=password"), "text": "<secret>pw</secret>"}),
        step("click_element_by_index", lambda c: {"index": index_of(c, r"Sign in")}),
        step("done", {"text": "signed in", "success": True}),
    ]
    secrets = {servers.main: {"pw": "pa55-word-9"}}
    agent = PageAgent(
        model=ScriptedModel(script), browser=browser, start_url=servers.url("login.html"), secrets=secrets
    )
    recorded = await agent.run("Sign in")
    assert recorded.success and LOGINS[-1]["password"] == "pa55-word-9"
    source = to_playwright(recorded, mode="async")
    assert 'await target.fill(os.environ["pw"])' in source and 'SECRETS = ["pw"]' in source
    assert "pa55" not in source
    path = write_script(source, tmp_path / "login.py")

    LOGINS.clear()
    missing = await run_script_async(path, blocker=no_notebook_agent, env={"pw": ""})
    assert missing.returncode == 1 and "set pw first" in missing.stderr and LOGINS == []  # before any browser

    out = await run_script_async(path, blocker=no_notebook_agent, env={"pw": "pa55-word-9"})
    assert out.returncode == 0, out.stderr
    assert out.stdout == "signed in\n" and LOGINS[-1] == {"username": "ada", "password": "pa55-word-9"}


def test_a_step_that_cannot_be_written_raises_naming_it(demo_run: PageAgentResult) -> None:
    """An old run file without fingerprints, a fingerprint with no locator, an action a script cannot do: a
    comment and a raise for that step, never a guessed locator; the rest is written as usual."""
    run = load_run_copy(demo_run)
    run.steps[1].target = None  # the Search button, as an old run file has it
    assert run.steps[4].target is not None
    run.steps[4].target = {**run.steps[4].target, "locator": None}  # no locator matched exactly that element
    run.steps.insert(5, PageStep(index=6, action="print_label", args={"copies": 2}, url=run.steps[4].url))
    source = to_playwright(run)
    compile(source, "replay.py", "exec")
    assert (
        'raise NotImplementedError("Step 2 (click_element_by_index) cannot be replayed by this script: the run file'
        in source
    )
    assert 'name="Search"' not in source  # no guess at it
    no_locator = "no locator found exactly its element (role=button name='Add to cart')"
    assert f"Step 5 (click_element_by_index) cannot be replayed by this script: {no_locator}" in source
    assert "Step 6 (print_label) cannot be replayed by this script: it used the action 'print_label'" in source
    assert '# It did: print_label {"copies": 2}' in source
    assert 'target.select_option(label="Price: low to high")' in source  # the other steps are still there


def load_run_copy(run: PageAgentResult) -> PageAgentResult:
    import copy

    return copy.deepcopy(run)


# -- hostile run files -------------------------------------------------------------------------------------------

HOSTILE = [
    "quote \" and ' and \\ backslash",
    "new\nline\r\nand\u2028separator\x85next\x0bv\x0cf",
    "\"\"\"triple\"\"\" and '''triple'''",
    "lone \ud800 surrogate \udfff",
    "</script><script>alert(1)</script>",
    "# -*- coding: latin-1 -*-",
    "\x00 nul and \x1b[31m escape and \u202e override",
    "@TASK@ @aw@ {BASE_URL} %s {0}",
    "'); import os; os.system('echo pwned'); ('",
]


def hostile_run(text: str, url: str = "http://127.0.0.1:9/page?q=1") -> PageAgentResult:
    """A run whose every string from the page or the model is ``text``."""
    target = {
        "role": "button",
        "name": "x" + text,
        "tag": "button",
        "text": text,
        "locator": {"kind": "role", "role": "button", "name": "x" + text, "frames": ["#f"]},
    }
    field = {**target, "role": "textbox", "tag": "input", "locator": {"kind": "label", "text": "x" + text}}
    steps = [
        PageStep(1, next_goal=text, action="input_text", args={"index": 1, "text": text}, url=url, target=field),
        PageStep(
            2,
            next_goal=text,
            action="select_dropdown_option",
            args={"index": 2, "text": text},
            url=url,
            target={**target, "tag": "select"},
        ),
        PageStep(
            3, next_goal=text, action="click_element_by_index", args={"index": 3}, url=url, target=target, result=text
        ),
        PageStep(4, next_goal=text, action="go_to_url", args={"url": url + text}, url=url),
        PageStep(5, next_goal=text, action="execute_javascript", args={"script": text}, url=url),
        PageStep(6, next_goal=text, action="ask_user", args={"question": text}, url=url, result=text),
        PageStep(7, next_goal=text, action="hover", args={"index": 4}, url=url, target=None),
        PageStep(
            8, next_goal=text, action="done", args={"text": text, "success": True, "data": {text: [text]}}, url=url
        ),
    ]
    return PageAgentResult(
        task=text,
        status="completed",
        success=True,
        text=text,
        steps=steps,
        usage=Usage(),
        model="m",
        duration_s=0.0,
        prompt_version="p",
        run_id=text,
        settings={"start_url": url},
    )


def shape(source: str) -> str:
    """The script's syntax tree with every constant blanked: what it does, not which strings it uses."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant):
            node.value = None
    return ast.dump(tree)


def literal_args(source: str, name: str) -> list[Any]:
    """The constant arguments (keywords too) of every call of ``name(...)`` or ``x.name(...)`` in ``source``."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if called == name:
                values = [*node.args, *(k.value for k in node.keywords)]
                out += [a.value for a in values if isinstance(a, ast.Constant)]
    return out


def comments(source: str) -> list[str]:
    return [t.string for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type == tokenize.COMMENT]


@pytest.mark.parametrize("text", HOSTILE)
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_hostile_strings_stay_literals(text: str, mode: str) -> None:
    source = to_playwright(hostile_run(text), mode=mode, base_url=text)  # type: ignore[arg-type]
    compile(source, "replay.py", "exec")
    source.encode("utf-8")  # a file can hold it
    assert shape(source) == shape(to_playwright(hostile_run("benign"), mode=mode, base_url="benign"))  # type: ignore[arg-type]
    kept = text.replace("\ud800", "\ufffd").replace("\udfff", "\ufffd")
    assert literal_args(source, "fill") == [kept] and literal_args(source, "run_js") == [kept]
    assert literal_args(source, "print") == [kept, json.dumps({kept: [kept]}, ensure_ascii=False)]
    assert literal_args(source, "select_option") == [kept]
    notes = comments(source)
    assert (
        all(c.isprintable() for c in notes)
        and "# Step 3: " + " ".join("".join(ch if ch.isprintable() else " " for ch in kept).split()) in notes
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=60))
def test_any_text_only_changes_the_script_s_constants(text: str) -> None:
    if "<secret>" in text:  # a placeholder is meant to change the script: os.environ[...]
        return
    for mode in ("sync", "async"):
        source = to_playwright(hostile_run(text), mode=mode)
        assert shape(source) == shape(to_playwright(hostile_run("benign"), mode=mode))


def test_a_run_file_with_wrong_types_is_refused_before_export(tmp_path: Path) -> None:
    """Numbers where strings go, strings where numbers go, lists for dicts: the file is checked on load, so nothing
    in it reaches the exporter, let alone becomes code."""
    evil = "1); import os; os.system('evil'); (1"
    lines = [
        {"kind": "run", "task": ["t"], "run_id": 7, "settings": ["start_url"], "model": "m", "prompt_version": "p"},
        {"kind": "step", "index": evil, "action": "wait", "args": {"seconds": evil}, "url": 5, "next_goal": {"g": 1}},
        {"kind": "step", "index": 2, "action": "scroll", "args": {"pixels": evil, "num_pages": "2", "down": "no"}},
        {"kind": "step", "index": 3, "action": "send_keys", "args": {"keys": ["Enter"], "index": evil}, "target": evil},
        {"kind": "step", "index": 4, "action": "go_back", "args": [evil]},
        {"kind": "step", "index": 5, "action": ["done"], "args": {}},
        {
            "kind": "step",
            "index": 6,
            "action": "click_element_by_index",
            "args": {"index": 1},
            "target": {"locator": evil},
        },
        {"kind": "step", "index": 7, "action": "done", "args": {"text": 3, "success": "yes", "data": {"k": evil}}},
    ]
    file = tmp_path / "run.jsonl"
    file.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    # A run file is input: the wrong types are refused on load, naming the field, before any export can see them.
    from notebook_agent.errors import RunFileError

    with pytest.raises(RunFileError, match="'task'"):
        load_run(file)


# -- the terminal and the notebook -------------------------------------------------------------------------------


def test_the_terminal_saves_runs_and_exports_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = tmp_path / "runs"
    assert cli_main(["demo", "--runs-dir", str(runs)]) == 0
    saved = next(runs.glob("*.jsonl"))
    assert f"run saved: {saved}\n" in capsys.readouterr().out
    assert cli_main(["run", DEMO_TASK, "--model", "demo", "--url", demo_url(), "--json", "--runs-dir", str(runs)]) == 0
    out = capsys.readouterr()
    newest = json.loads(out.out)["run_id"]
    assert f"run saved: {runs / newest}.jsonl\n" in out.err  # stdout stays JSON

    target = tmp_path / "scripts" / "replay.py"
    assert cli_main(["export", "-1", "--runs-dir", str(runs), "--async", "--to", str(target)]) == 0
    assert capsys.readouterr().out.startswith(f"wrote {target}  (run {newest}, async API)\n")
    assert target.read_text(encoding="utf-8") == to_playwright(load_run(runs / f"{newest}.jsonl"), mode="async")
    assert os.access(target, os.X_OK)

    assert cli_main(["export", "nope", "--runs-dir", str(runs), "--to", str(target)]) == 2
    assert capsys.readouterr().err.startswith("error: No run matches 'nope'")


@pytest.fixture
def shell(tmp_path: Path) -> Iterator[InteractiveShell]:
    sh = InteractiveShell.instance()
    sh.run_line_magic("load_ext", "notebook_agent")
    old = STATE.config.runs_dir
    STATE.config.runs_dir = str(tmp_path / "runs")
    yield sh
    STATE.config.runs_dir = old
    sh.rl_next_input = None


async def test_agent_export_writes_a_file_or_fills_the_next_cell(
    shell: InteractiveShell, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recorded = await PageAgent(model="demo", start_url=demo_url(), runs_dir=STATE.config.runs_dir).run(DEMO_TASK)
    assert recorded.success

    shell.run_line_magic("agent", f"export -1 --to {tmp_path / 'replay.py'}")
    assert (
        capsys.readouterr().out
        == f"Wrote {tmp_path / 'replay.py'}: run it with python {tmp_path / 'replay.py'} [--base-url URL] [--headed]\n"
    )
    assert (tmp_path / "replay.py").read_text(encoding="utf-8") == to_playwright(recorded)

    shell.run_line_magic("agent", f"export {recorded.run_id[-6:]} --async")
    assert shell.rl_next_input == to_playwright(recorded, mode="async")
    assert "is in the next cell" in capsys.readouterr().out

    # the next cell runs as it is, though the notebook's event loop is running here
    shell.run_line_magic("agent", "export -1")
    cell = shell.run_cell(shell.rl_next_input)
    assert cell.success, cell.error_in_exec
    assert capsys.readouterr().out.endswith(ANSWER + "\n")

    for line, said in [
        ("export", "usage: %agent export RUN [--sync|--async] [--to FILE]\n"),
        ("export -1 --sync --async", "usage: %agent export RUN [--sync|--async] [--to FILE]\n"),
        ("export -1 --too x", "%agent export: Unknown option '--too'. Did you mean --to? Options: --to.\n"),
        ("export 99", "%agent export: There are 1 runs; 99 is out of range"),
    ]:
        shell.run_line_magic("agent", line)
        assert capsys.readouterr().out.startswith(said), line

"""The magics in an in-process IPython shell, on a running event loop, against the demo shop in real Chromium."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Iterator
from html import escape as html_escape
from pathlib import Path
from typing import Any

import ipywidgets as widgets
import pytest
import pytest_asyncio
from IPython.core.interactiveshell import InteractiveShell

from notebook_agent.demo import DELETE_TASK, DEMO_TASK, demo_url
from notebook_agent.notebook.runtime import STATE, NotebookRun
from notebook_agent.notebook.views.tuning import short_task
from tests.bad_inputs import BAD_BUDGETS, BAD_OPTIONS, BAD_URL, UNSAFE_PORT


@pytest.fixture(scope="module")
def shell(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InteractiveShell]:
    sh = InteractiveShell.instance()
    sh.run_line_magic("load_ext", "notebook_agent")
    sh.run_line_magic("load_ext", "notebook_agent")  # loading twice is harmless
    old = STATE.config.runs_dir
    STATE.config.runs_dir = str(tmp_path_factory.mktemp("runs"))
    yield sh
    STATE.config.runs_dir = old


@pytest_asyncio.fixture(loop_scope="session", autouse=True)
async def _close_kernel_browser() -> AsyncIterator[None]:
    yield
    STATE.stop_all()
    await STATE.close_browser()


def with_class(root: widgets.Widget, cls: str) -> list[widgets.Widget]:
    found = []

    def walk(x: Any) -> None:
        if cls in getattr(x, "_dom_classes", ()):
            found.append(x)
        for child in getattr(x, "children", ()):
            walk(child)

    walk(root)
    return found


async def start(shell: InteractiveShell, line: str, body: str, out: str = "agent_run") -> NotebookRun:
    shell.user_ns["url"] = demo_url()
    shell.run_cell_magic("agent", f"--url {demo_url()} --out {out} {line}", body)
    run = shell.user_ns[out]
    assert isinstance(run, NotebookRun)
    return run


async def test_agent_cell_returns_at_once_and_renders_every_step(shell: InteractiveShell) -> None:
    run = await start(shell, "--model demo", f"# a comment line is not part of the task\n{DEMO_TASK}")
    assert not run.done  # the cell returned while the run goes on
    assert run.task_text == DEMO_TASK
    result = await run
    assert result is not None and result.status == "completed" and result.success
    assert "TrailSound Wireless Headphones Lite" in result.text and "$54.99" in result.text
    view = run.view
    assert len(with_class(view.root, "na-step")) == len(result.steps)
    assert "completed" in view.status.value
    shots = with_class(view.root, "na-screenshot")
    assert shots and all(isinstance(s, widgets.Image) and s.value[:2] == b"\xff\xd8" for s in shots)  # JPEG
    assert "54.99" in with_class(view.root, "na-result")[0].value
    # old cards collapse, the last stays open
    bodies = with_class(view.root, "na-step-body")
    assert [b.layout.display for b in bodies[:-1]] == ["none"] * (len(bodies) - 1)
    assert bodies[-1].layout.display != "none"


async def test_approval_deny_reaches_the_model(shell: InteractiveShell) -> None:
    run = await start(shell, "--model demo --approve ask-risky", DELETE_TASK, out="run_deny")
    request = await run.wait_for_approval(timeout=30)
    assert request.action == "click_element_by_index" and "delete" in request.reason
    action_line = run.view.card().action.value  # type: ignore[union-attr]
    assert "waiting for approval" in action_line and "running" not in action_line
    panel = with_class(run.view.root, "na-approval")
    assert len(panel) == 1 and with_class(panel[0], "na-approve") and with_class(panel[0], "na-deny")
    crop = with_class(panel[0], "na-approval-crop")  # the target element, outlined, for the person
    assert crop and crop[0].value[:8] == b"\x89PNG\r\n\x1a\n"
    # nothing has executed yet: the account page still offers the button
    assert "Delete account" in (await STATE.browser.page.content())  # type: ignore[union-attr]
    reason_box = with_class(panel[0], "na-deny-reason")[0]
    reason_box.value = "Keep my account"
    deny = with_class(panel[0], "na-deny")[0]
    deny.click()  # the same path as a click in the browser: the callback hands the answer to the loop
    result = await run
    assert result is not None
    blocked = [s for s in result.steps if s.approval]
    approval = blocked[0].approval
    assert approval is not None
    assert approval["decision"] == "denied" and approval["reason"] == "Keep my account"
    assert "Keep my account" in blocked[0].result
    # the model's next request carried the reason
    assert "Keep my account" in (result.steps[-1].request.state if result.steps[-1].request else "")
    assert not result.success and result.status == "failed"
    assert not with_class(run.view.root, "na-approval")  # the panel is gone once answered


async def test_approval_approve_runs_the_action(shell: InteractiveShell) -> None:
    run = await start(shell, "--model demo --approve ask-risky", DELETE_TASK, out="run_ok")
    await run.wait_for_approval(timeout=30)
    with_class(run.view.root, "na-approve")[0].click()
    result = await run
    assert result is not None and result.status == "completed" and result.success
    assert "deleted" in (await STATE.browser.page.content()).lower()  # type: ignore[union-attr]


async def test_approval_timeout_denies(shell: InteractiveShell) -> None:
    run = await start(shell, "--model demo --approve ask-risky --timeout 0.3", DELETE_TASK, out="run_to")
    result = await run
    assert result is not None
    blocked = next(s for s in result.steps if s.approval)
    assert blocked.approval is not None
    assert blocked.approval == {
        "decision": "denied",
        "reason": "Denied: no answer within 0.3 seconds.",
        "by": "timeout",
        "risk": blocked.approval["risk"],
    }


async def test_stop_button_and_agent_stop(shell: InteractiveShell) -> None:
    run = await start(shell, "--model demo --approve ask-all", DEMO_TASK, out="run_stop")
    await run.wait_for_approval(timeout=30)
    with_class(run.view.root, "na-stop")[0].click()
    result = await asyncio.wait_for(run, 5)
    assert result is not None and result.status == "stopped"
    run2 = await start(shell, "--model demo --approve ask-all", DEMO_TASK, out="run_stop2")
    await run2.wait_for_approval(timeout=30)
    shell.run_line_magic("agent", "stop")
    result2 = await asyncio.wait_for(run2, 5)
    assert result2 is not None and result2.status == "stopped"


async def test_interrupting_an_awaiting_cell_cancels_the_run(shell: InteractiveShell) -> None:
    run = await start(shell, "--model demo --approve ask-all", DEMO_TASK, out="run_int")
    await run.wait_for_approval(timeout=30)
    awaiting = asyncio.Event()
    waiting = asyncio.ensure_future(_await(run, awaiting))
    await awaiting.wait()  # the task set it and went on into `await run` before this wakes: it is blocked there
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    waiting.cancel()  # what Interrupt does to a cell blocked in `await agent_run`
    with pytest.raises(asyncio.CancelledError) as raised:  # still a cancellation, for asyncio code ...
        await waiting
    # ... that IPython shows as one line (no traceback through asyncio)
    assert raised.value._render_traceback_() == [  # type: ignore[attr-defined]
        "\x1b[33mInterrupted: run_int was stopped; 0 finished steps kept in run_int.result, saved to "
        f"{run.saved_path}.\x1b[0m"
    ]
    assert run.task is not None
    await asyncio.wait({run.task}, timeout=5)
    assert run.task.done()
    assert "stopped" in run.view.status.value
    assert run.result is not None and run.result.status == "stopped" and run.saved_path is not None
    print(f"interrupt to stopped run: {loop.time() - t0:.2f}s")


async def _await(run: NotebookRun, awaiting: asyncio.Event | None = None) -> Any:
    """``await run`` as a cell does; ``awaiting`` is set just before, in the same turn of the loop."""
    if awaiting is not None:
        awaiting.set()
    return await run


async def test_a_kernel_that_cannot_receive_clicks_while_a_cell_awaits(
    shell: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cell awaits first, then the approval appears: the panel says why the click cannot arrive. (The real
    old-kernel case, the other order, is in test_kernel.py, run on the oldest supported ipykernel.)"""
    from notebook_agent.notebook import runtime
    from notebook_agent.notebook.kernel import blocked_wait_message

    monkeypatch.setattr(runtime, "blocked_kernel_version", lambda: "6.17.1")
    run = await start(shell, "--model demo --approve ask-risky", DELETE_TASK, out="run_old_kernel")
    waiting = asyncio.ensure_future(_await(run))
    await run.wait_for_approval(timeout=30)
    panel = with_class(run.view.root, "na-approval")[0]
    warning = with_class(panel, "na-wait-warning")[0]
    assert blocked_wait_message("6.17.1", "click") in warning.value.replace("&#x27;", "'")
    assert warning.layout.display != "none"
    waiting.cancel()  # Interrupt, as the panel says: the cell is released and the run keeps waiting
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert warning.value == "" and warning.layout.display == "none"
    assert not run.done and run.pending_approval is not None
    with_class(panel, "na-approve")[0].click()
    result = await run
    assert result is not None and result.status == "completed"
    assert run.view.blocked_version is None


def test_which_kernels_cannot_receive_a_click_while_a_cell_awaits() -> None:
    from notebook_agent.notebook.kernel import clicks_blocked_while_awaiting as blocked

    assert blocked("6.17.1", 0) and blocked("6.31.0", 0) and blocked("6.31.0", 3)  # no subshells in 6.x
    assert blocked("7.0.1", 0) and blocked("7.3.0", 0)  # 7.0-7.3: only through front-end subshells
    assert not blocked("7.3.0", 1) and not blocked("7.1.0", 2)
    assert not blocked("7.4.0", 0) and not blocked("7.10.0", 0) and not blocked("8.0.0a1", 0)


async def test_config_runs_and_errors(shell: InteractiveShell, capsys: pytest.CaptureFixture[str]) -> None:
    shell.run_line_magic("agent", "config --max-steps 7 --approve deny-risky")
    out = capsys.readouterr().out
    assert "max_steps         7" in out and "approve           deny-risky" in out
    shell.run_line_magic("agent", "config --approve sometimes")
    assert "Unknown approval policy 'sometimes'" in capsys.readouterr().out
    shell.run_line_magic("agent", "config --max-steps 20 --approve ask-risky")
    capsys.readouterr()
    shell.run_cell_magic("agent", "--model openai:gpt-4o-mini", "do something")
    assert "OPENAI_API_KEY" in capsys.readouterr().out
    shell.run_cell_magic("agent", "--model nosuch:model", "do something")
    assert "nosuch" in capsys.readouterr().out
    shell.run_cell_magic("agent", "", "# only a comment")
    assert "The cell body is the task" in capsys.readouterr().out
    from IPython.utils.capture import capture_output

    from notebook_agent.agent.runs.run_file import list_runs

    saved = list_runs(STATE.config.runs_dir)  # the runs the tests above saved
    assert saved
    with capture_output() as captured:
        shell.run_line_magic("agent", "runs")
    html = captured.outputs[-1].data["text/html"]
    body = html.split("<tbody>", 1)[1]
    rows = re.findall(r"<tr>(.*?)</tr>", body)
    assert len(rows) == len(saved)
    for row, run in zip(rows, saved, strict=True):
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row)
        assert cells[0] == f"<code>{run.run_id}</code>" and cells[1] == run.status
        assert cells[2] == str(len(run.steps)) and cells[-1] == html_escape(short_task(run.task))
        shown = cells[-1].removesuffix(" …")  # cut at a word boundary, never mid-word
        assert run.task.startswith(shown) and run.task[len(shown) : len(shown) + 1] in ("", " ", ",", ".")
    shell.run_line_magic("agent", "frobnicate")
    assert "Unknown %agent command 'frobnicate'" in capsys.readouterr().out


async def test_ask_user_in_the_view(shell: InteractiveShell) -> None:
    from notebook_agent.agent import PageAgent
    from notebook_agent.agent.prompt.agent_output import agent_output
    from notebook_agent.llm.scripted import ScriptedModel
    from notebook_agent.notebook.runtime import watch

    browser = await STATE.get_browser()
    script = [
        agent_output("ask_user", {"question": "Which size?"}),
        agent_output("done", {"text": "ok", "success": True}),
    ]
    agent = PageAgent(model=ScriptedModel(script), browser=browser)
    run = watch(agent, "ask me", ask_user=True)
    for _ in range(200):
        boxes = with_class(run.view.root, "na-ask-input")
        if boxes:
            break
        await asyncio.sleep(0.01)
    boxes[0].value = "Large"  # what pressing Enter in the text box does
    result = await run
    assert result is not None and result.steps[0].result == "User answered: Large"


async def run_cell(shell: InteractiveShell, code: str) -> Any:
    """What the kernel does with a cell: transform it, then run it (awaiting it if it has a top-level await)."""
    transformed = shell.transform_cell(code)
    assert shell.should_run_async(code, transformed_cell=transformed, preprocessing_exc_tuple=None)
    return await shell.run_cell_async(code, store_history=False, transformed_cell=transformed)


async def test_browser_and_snapshot_commands_display_in_their_own_cell(shell: InteractiveShell) -> None:
    """The cell stays busy until the output is there (nbclient keeps only output sent while a cell runs)."""
    from IPython.utils.capture import capture_output

    with capture_output() as captured:
        result = await run_cell(shell, f"%agent browser {demo_url()}/account.html")
    assert result.success and not STATE.tasks
    assert STATE.browser is not None and STATE.browser.page.url.endswith("/account.html")
    # static HTML, not a widget: the page's picture and the tabs and their runs, as saved notebooks keep them
    data = captured.outputs[0].data
    assert "application/vnd.jupyter.widget-view+json" not in data
    html = data["text/html"]
    assert "account.html" in html and "<i>no run</i>" in html and 'src="data:image/jpeg;base64,' in html
    with capture_output() as captured:
        result = await run_cell(shell, "%agent snapshot")
    assert result.success and "Delete account" in captured.outputs[0].data["text/html"]
    with capture_output() as captured:
        await run_cell(shell, "%agent browser example")
    assert captured.stdout == f"%agent browser: URL: {BAD_URL[1].removeprefix('--url: ')}\n"
    with capture_output() as captured:
        result = await run_cell(shell, "%agent browser --close")
    assert result.success and STATE.browser is None
    assert "The browser is closed" in captured.outputs[0].data["text/plain"]


async def test_two_overlapping_runs_each_act_in_their_own_tab(shell: InteractiveShell) -> None:
    """Two %%agent cells back to back: the second gets a tab of its own, and the runs interleave step by step
    (each waits for an approval in turn) without touching each other's page."""
    from notebook_agent.notebook.views.run_view import tabs_html

    first = await start(shell, "--model demo --approve ask-all", DEMO_TASK, out="run_a")
    await first.wait_for_approval(timeout=30)
    account = f"--url {demo_url()}/account.html"
    second = await start(shell, f"--model demo --approve ask-all {account}", DELETE_TASK, out="run_b")
    await second.wait_for_approval(timeout=30)
    assert first.session is STATE.browser and second.session is not None and second.session.is_tab_session
    main_tab = STATE.browser.tab_id(STATE.browser.page)  # type: ignore[union-attr]
    own_tab = second.session.tab_id(second.session.page)
    assert f"tab {main_tab} (the kernel browser" in first.view.where.value
    assert f"its own tab {own_tab} (run_a is using" in second.view.where.value
    owners = {tab.id: owner for tab, owner in await STATE.tab_owners()}
    assert owners[main_tab].startswith("run_a: ") and owners[own_tab].startswith("run_b: ")
    assert "run_b: " in tabs_html(await STATE.tab_owners())
    # approve the two runs in turn: each step of one happens between two steps of the other
    order = []
    while not (first.done and second.done):
        for run in (first, second):
            if run.done:
                continue
            if run.pending_approval is None:
                try:
                    await run.wait_for_approval(timeout=30)
                except RuntimeError:  # it finished
                    continue
            order.append(run.name)
            run.approve()
            await asyncio.sleep(0)
    a, b = await first, await second
    assert a is not None and b is not None
    # both completed, each on its own pages: neither saw the other's page nor had its navigation interrupted
    assert (a.status, a.success, b.status, b.success) == ("completed", True, "completed", True), (a.error, b.error)
    assert "$54.99" in a.text and "deleted" in b.text.lower()
    assert not [s.url for s in a.steps if "account" in s.url]
    assert all("/account" in s.url for s in b.steps), [s.url for s in b.steps]
    assert order[:4] == ["run_a", "run_b", "run_a", "run_b"]
    assert not second.session.is_started  # its tab was closed when it ended
    assert STATE.main_tab_run is None
    assert len(await STATE.browser.tab_infos()) == 1  # type: ignore[union-attr]


@pytest.mark.parametrize("args,message", BAD_BUDGETS)
async def test_a_bad_budget_in_a_cell_is_one_sentence(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    """A run's budget has the terminal's rules and messages; nothing starts."""
    runs = len(STATE.runs)
    shell.run_cell_magic("agent", " ".join(args), "do something")
    out = capsys.readouterr().out
    assert out.startswith(f"%%agent: {message}") and out.count("\n") == 1, out
    assert len(STATE.runs) == runs


@pytest.mark.parametrize("args,message", [*BAD_OPTIONS, BAD_URL])
async def test_bad_options_in_a_cell_and_in_config(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    """The same rules and messages as the terminal; nothing starts and nothing is stored."""
    runs = len(STATE.runs)
    shell.run_cell_magic("agent", " ".join(args), "do something")
    out = capsys.readouterr().out
    assert out.startswith(f"%%agent: {message}") and out.count("\n") == 1, out
    assert len(STATE.runs) == runs
    if args[0] == "--url":
        return
    before = STATE.config.describe()
    shell.run_line_magic("agent", "config " + " ".join(args))
    out = capsys.readouterr().out
    assert out.startswith(f"%agent config: {message}") and out.rstrip().endswith("Nothing was changed."), out
    assert STATE.config.describe() == before


async def test_undefined_names_and_unknown_options(shell: InteractiveShell, capsys: pytest.CaptureFixture[str]) -> None:
    shell.user_ns.pop("undefined_variable", None)
    shell.run_cell_magic("agent", "--url {undefined_variable}", "do something")
    assert capsys.readouterr().out == (
        "%%agent: --url {undefined_variable}: 'undefined_variable' is not defined in the notebook; define it in a "
        "cell above (or write the value itself).\n"
    )
    shell.run_line_magic("agent", "config --max-steps 5 --timeout 0")
    out = capsys.readouterr().out
    assert out.startswith("%agent config: --timeout must be a number of seconds greater than 0 (got '0').")
    assert STATE.config.max_steps == 20  # nothing stored: the valid option before the bad one neither
    shell.run_line_magic("agent", "config --colour blue")
    assert capsys.readouterr().out.startswith("%agent config: Unknown option '--colour' for %agent config.")
    shell.run_line_magic("agent", "rerun -1 --max-steps 0")
    assert capsys.readouterr().out.startswith("%agent rerun: --max-steps must be at least 1 (got 0)")


async def test_an_unopenable_url_is_one_sentence_in_the_view(shell: InteractiveShell) -> None:
    shell.run_cell_magic("agent", "--model demo --url http://127.0.0.1:9/ --out run_port", "look")
    run = shell.user_ns["run_port"]
    result = await run
    assert result is not None and result.status == "error" and result.error == UNSAFE_PORT
    view_text = with_class(run.view.root, "na-result")[0].value
    assert view_text.count("unsafe ports") == 1 and "Error:" not in view_text and "Traceback" not in view_text


async def test_the_card_fills_in_while_the_model_writes(shell: InteractiveShell) -> None:
    """Streamed AgentOutput arguments show in the current card (evaluation, memory, next goal, then the action)
    before the action runs; the header keeps one live picture; the end shows a summary."""
    from notebook_agent.agent import PageAgent
    from notebook_agent.agent.prompt.agent_output import agent_output
    from notebook_agent.llm.scripted import ScriptedModel
    from notebook_agent.notebook.runtime import watch

    browser = await STATE.get_browser()
    goal = "Open the account page to read the e-mail address shown there"
    script = [
        agent_output(
            "go_to_url",
            {"url": f"{demo_url()}/account.html"},
            evaluation="Nothing done yet",
            memory="Task: read the e-mail",
            next_goal=goal,
        ),
        agent_output("done", {"text": "found it", "success": False}, next_goal="Report"),
    ]
    agent = PageAgent(model=ScriptedModel(script, chunk=8), browser=browser)
    run = watch(agent, "read the e-mail")
    seen: list[tuple[str, str, str]] = []
    handle = run.view.handle

    def recording(event: Any) -> None:
        handle(event)
        card = run.view.card()
        if card is not None and card.index == 1:
            seen.append((event.type, card.reflection.value, card.header.description))

    run.view.handle = recording  # type: ignore[method-assign]
    result = await run
    assert result is not None
    types = [t for t, _, _ in seen]
    first_action = types.index("action_started")
    streamed = [(v, h) for t, v, h in seen[:first_action] if t == "reflection_partial" and "Next goal" in v]
    assert len(streamed) > 2  # the next goal grew over several updates before the action ran
    partial = [v for v, _ in streamed if goal not in v]
    assert partial and "Evaluation</span> Nothing done yet" in partial[0]
    assert any("go_to_url" in v and "being written" in v for v, _ in streamed)
    assert streamed[-1][1].startswith("Step 1/20 · Open the account page")
    # one live picture in the header: the latest screenshot
    assert run.view.live.value == result.steps[-1].screenshot
    # the end: a failed done is not a "Result ✓", the summary says it all, Stop is gone, the bar is full
    card = run.view.cards[-1]
    assert "Failed</span>" in card.result.value and "na-bad" in card.result.value
    summary = with_class(run.view.root, "na-result")[0].value
    assert "<b>failed</b> · no success · 2 steps · 0 tokens · " in summary and "found it" in summary
    assert run.view.stop_button.layout.display == "none"
    assert run.view.bar.value == run.view.bar.max
    # no symbol that needs an emoji font anywhere in the view
    texts = [getattr(x, "value", "") for x in run.view.widgets()] + [
        getattr(x, "description", "") for x in run.view.widgets()
    ]
    emoji = [c for t in texts if isinstance(t, str) for c in t if ord(c) >= 0x1F000 or 0x2600 <= ord(c) <= 0x27BF]
    assert not emoji, emoji


def test_the_wait_for_the_model_is_shown_with_its_length() -> None:
    from notebook_agent.agent import ReflectionPartial
    from notebook_agent.notebook.views.run_view import StepCard, plural

    card = StepCard(3, 20)
    assert card.waiting_since is not None
    card.wait_tick(card.waiting_since + 4.2)
    assert card.header.description == "Step 3/20 · waiting for the model · 4 s"
    assert "waiting for the answer · 4 s" in card.progress.value
    assert card.preview(ReflectionPartial(3, memory="half a thou"))  # the first streamed text ends the wait
    card.wait_tick(100.0)
    assert "4 s" not in card.progress.value and card.header.description == "Step 3/20 · the model is answering"
    assert (plural(1, "step"), plural(2, "step")) == ("1 step", "2 steps")


async def test_every_question_of_ask_all_can_be_answered_from_code(shell: InteractiveShell) -> None:
    """``approve()`` then ``await wait_for_approval()``, step after step: each wait returns the next question
    (never the one just answered, never "did not ask" while the card shows one), until the run ends."""
    run = await start(shell, "--model demo --approve ask-all", DELETE_TASK, out="run_all")
    asked: list[int] = []
    while True:
        try:
            request = await run.wait_for_approval(timeout=30)
        except RuntimeError as exc:
            assert "finished" in str(exc)
            break
        assert request.step not in asked  # a new question each time
        asked.append(request.step)
        assert with_class(run.view.root, "na-approval")  # the card shows it
        run.approve()
        assert run.pending_approval is None  # answered at once, from the loop's thread
        with pytest.raises(RuntimeError, match="Nothing is waiting"):
            run.deny("twice")
    result = await run
    assert result is not None
    assert result.status == "completed", result.error
    assert len(asked) == len(result.steps) and all(s.approval and s.approval["by"] == "user" for s in result.steps)
    assert not with_class(run.view.root, "na-approval")  # no panel left open
    # the run file was written once, as the run happened: one header, one line a step, one closing line
    assert run.saved_path is not None
    lines = Path(run.saved_path).read_text(encoding="utf-8").split("\n")
    assert [json.loads(line)["kind"] for line in lines if line] == ["run", *["step"] * len(result.steps), "end"]


def test_cell_magic_help_shows_two_percent_signs(shell: InteractiveShell) -> None:
    # what `%%agent?` and `%%agent_prompt?` show: the usage line of a cell magic, with its "%%"
    for name in ("agent", "agent_prompt"):
        doc = shell.object_inspect(f"%%{name}")["docstring"]
        usage = doc.removeprefix("::").strip()
        assert usage.startswith(f"%%{name} ["), doc[:120]
        assert f"\n  %{name} " not in doc


async def test_a_finished_run_can_be_followed_up(shell: InteractiveShell) -> None:
    from notebook_agent.demo import PRICE_TASK

    first = await start(shell, "--model demo", PRICE_TASK.format(product="Lumen 400 Headlamp"), out="priced")
    earlier = await first
    assert earlier is not None and earlier.success
    shell.run_cell_magic(
        "agent", "--model demo --continue --out priced", PRICE_TASK.format(product="Pebble Wireless Earbuds")
    )
    second = shell.user_ns["priced"]
    assert isinstance(second, NotebookRun) and second is not first
    later = await second
    assert later is not None and later.success and later.follows == earlier.run_id
    request = later.steps[0].request
    assert request is not None and "Earlier request: Find the price of Lumen 400 Headlamp" in request.state
    assert "search.html?q=Lumen" in later.steps[0].url  # it went on from the page the earlier run left
    # the handle's own follow_up does the same from code
    third = second.follow_up(PRICE_TASK.format(product="Wireless Charging Pad"))
    last = await third
    assert last is not None and last.follows == later.run_id and "Wireless Charging Pad costs $25.00" in last.text
    with pytest.raises(RuntimeError, match="not finished"):
        NotebookRun(third.agent, "x", third.view).follow_up("y")


async def test_a_saved_run_replays_in_the_view(shell: InteractiveShell) -> None:
    first = await start(shell, "--model demo", DEMO_TASK, out="recorded")
    recorded = await first
    assert recorded is not None and recorded.success
    shell.run_line_magic("agent", "replay -1 --out replayed")
    run = shell.user_ns["replayed"]
    assert isinstance(run, NotebookRun) and run is not first
    result = await run
    assert result is not None and result.status == "completed" and result.text == recorded.text
    assert result.replay_counts == {"replayed": len(recorded.steps)}
    headers = [c.description for c in with_class(run.view.root, "na-step-header")]
    assert headers and all(" · replayed · " in h for h in headers), headers
    shown = " ".join(str(getattr(x, "value", "")) for x in run.view.widgets())
    assert f"replay: {len(recorded.steps)} replayed · 0 tokens" in shown


async def test_model_aliases(shell: InteractiveShell, capsys: pytest.CaptureFixture[str]) -> None:
    shell.run_line_magic("agent", "config --alias offline=demo")
    assert "aliases           offline=demo" in capsys.readouterr().out
    run = await start(shell, "--model offline", DEMO_TASK, out="aliased")
    result = await run
    assert result is not None and result.success and result.model.startswith("demo:")
    shell.run_line_magic("agent", "config --alias bad=nosuchprovider:x")
    assert "Nothing was changed" in capsys.readouterr().out
    shell.run_line_magic("agent", "config --alias has:colon=demo")
    assert "--alias needs NAME=provider:model" in capsys.readouterr().out
    shell.run_line_magic("agent", "models")
    assert "Aliases: offline = demo" in capsys.readouterr().out
    shell.run_line_magic("agent", "config --alias offline=")
    assert "aliases           none" in capsys.readouterr().out


async def test_each_runs_the_task_for_every_row_in_one_view(shell: InteractiveShell) -> None:
    from pydantic import BaseModel

    from notebook_agent.agent import MapResult
    from notebook_agent.notebook.map_view import MapRun

    class Price(BaseModel):
        name: str
        price: float

    shell.user_ns.update(
        url=demo_url(),
        Price=Price,
        products=["Lumen 400 Headlamp", "Pebble Wireless Earbuds", "Flux Capacitor"],
        value="not this",  # a notebook variable named like the column must not fill the template
    )
    shell.run_cell_magic(
        "agent",
        "--model demo --url {url} --each products --concurrency 2 --output Price --out priced_all",
        "Find the price of {value} on the demo shop.",
    )
    run = shell.user_ns["priced_all"]
    assert isinstance(run, MapRun)
    result = await run
    assert isinstance(result, MapResult), run.error
    assert [r.status for r in result.rows] == ["completed", "completed", "failed"]
    assert [r.result.output for r in result.rows[:2]] == [  # type: ignore[union-attr]
        Price(name="Lumen 400 Headlamp", price=34.5),
        Price(name="Pebble Wireless Earbuds", price=29.99),
    ]
    view = run.view
    assert view.bar.value == 3 and view.line.value.startswith("3 rows: 2 succeeded, 1 failed")
    assert "Flux Capacitor" in view.table.value and "no product called" in view.table.value
    view.picker.value = 1  # a row's live card, built from every event it sent
    card = view.views[1]
    assert len(card.cards) == len(result.rows[1].result.steps)  # type: ignore[union-attr]
    frame = result.to_pandas()
    assert list(frame["price"][:2]) == [34.5, 29.99] and list(frame["value"]) == shell.user_ns["products"]

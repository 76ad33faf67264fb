"""Prompt tuning in the notebook: edit the prompt, see the exact request, runs saved, rerun, compare, replay."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
from IPython.core.interactiveshell import InteractiveShell

from notebook_agent.agent import default_system_prompt, prompt_hash
from notebook_agent.agent.runs import list_runs
from notebook_agent.demo import DEMO_TASK, demo_url
from notebook_agent.notebook.runtime import STATE, NotebookRun
from tests.notebook.test_magics import with_class


@pytest.fixture
def shell(tmp_path: Path) -> Iterator[InteractiveShell]:
    sh = InteractiveShell.instance()
    sh.run_line_magic("load_ext", "notebook_agent")
    old = STATE.config.runs_dir
    STATE.config.runs_dir = str(tmp_path / "runs")
    yield sh
    STATE.config.runs_dir = old
    STATE.config.prompt = "default"
    STATE.prompts.clear()


@pytest_asyncio.fixture(loop_scope="session", autouse=True)
async def _close_kernel_browser() -> AsyncIterator[None]:
    yield
    STATE.stop_all()
    await STATE.close_browser()


async def agent_cell(shell: InteractiveShell, line: str, body: str = DEMO_TASK, out: str = "agent_run") -> NotebookRun:
    shell.run_cell_magic("agent", f"--url {demo_url()} --out {out} {line}", body)
    run = shell.user_ns[out]
    assert isinstance(run, NotebookRun)
    return run


async def test_prompt_edit_inspect_save_rerun_compare_replay(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    # 1. a baseline run with the default prompt, saved to the runs folder
    first = await agent_cell(shell, "--model demo", out="base")
    base = await first
    assert base is not None and base.success
    assert first.saved_path is not None and Path(first.saved_path).exists()
    assert base.prompt_version == prompt_hash(default_system_prompt())

    # 2. the inspector shows exactly what the model saw
    card = first.view.cards[0]
    card.inspect_button.click()
    html = card.inspector.value
    assert "System prompt" in html and "State message" in html and "Tool schema" in html
    assert "AgentOutput" in html and "&lt;user_request&gt;" in html and "Tokens" in html
    assert base.steps[0].request is not None and base.steps[0].request.state[:40] in html.replace("&lt;", "<").replace(
        "&gt;", ">"
    )

    # 3. edit the prompt in a cell (append), see it and its diff
    shell.run_cell_magic("agent_prompt", "--name terse --append", "Prefer the search box over browsing.")
    out = capsys.readouterr().out
    assert "Prompt 'terse' is active" in out
    shell.run_line_magic("agent", "prompt")
    assert "Active prompt: 'terse'" in capsys.readouterr().out

    # 4. a run with the new prompt records the new version
    second = await agent_cell(shell, "--model demo", out="tuned")
    tuned = await second
    assert tuned is not None and tuned.prompt_version != base.prompt_version
    assert "Prefer the search box" in (tuned.steps[0].request.system_prompt if tuned.steps[0].request else "")
    saved = list_runs(STATE.config.runs_dir)
    assert [r.prompt_version for r in saved] == [base.prompt_version, tuned.prompt_version]

    # 5. the runs table and a comparison render
    shell.run_line_magic("agent", "runs")
    shell.run_line_magic("agent", "compare 1 2")
    capsys.readouterr()

    # 6. rerun the first run with the default prompt, and replay the second as a model (no key)
    shell.run_line_magic("agent", "prompt default")
    capsys.readouterr()
    shell.run_line_magic("agent", f"rerun {base.run_id} --prompt default --out again")
    again = await shell.user_ns["again"]
    assert again is not None and again.prompt_version == base.prompt_version
    assert [s.action for s in again.steps] == [s.action for s in base.steps]
    replay = await agent_cell(shell, f"--model replay:{tuned.run_id}", out="replayed")
    replayed = await replay
    assert replayed is not None and replayed.model.startswith("scripted:replay:")
    assert [(s.action, s.args) for s in replayed.steps] == [(s.action, s.args) for s in tuned.steps]
    assert "replaying run" in replay.view.title.value


async def test_tuning_commands_explain_bad_input(shell: InteractiveShell, capsys: pytest.CaptureFixture[str]) -> None:
    shell.run_line_magic("agent", "compare 1")
    assert "usage: %agent compare RUN_A RUN_B" in capsys.readouterr().out
    shell.run_line_magic("agent", "compare nope1 nope2")
    assert "No saved runs" in capsys.readouterr().out
    shell.run_line_magic("agent", "rerun")
    assert "usage: %agent rerun" in capsys.readouterr().out
    shell.run_line_magic("agent", "prompt nonexistent")
    assert "No prompt named 'nonexistent'" in capsys.readouterr().out
    shell.run_cell_magic("agent_prompt", "--name default", "x")
    assert "choose another --name" in capsys.readouterr().out
    shell.run_line_magic("agent", "runs")
    assert "No saved runs" in capsys.readouterr().out


def test_inspector_widget_has_a_stable_hook() -> None:
    from notebook_agent.notebook.view import StepCard

    card = StepCard(1, 5)
    assert with_class(card.box, "na-inspect") and with_class(card.box, "na-inspector")
    card.toggle_inspect()
    assert "No request was recorded" not in card.inspector.value  # no step yet: stays empty
    assert card.inspector.layout.display is None

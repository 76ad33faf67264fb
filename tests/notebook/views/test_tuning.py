"""Prompt tuning in the notebook: edit the prompt, see the exact request, runs saved, rerun, compare, replay."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
from IPython.core.interactiveshell import InteractiveShell

from notebook_agent.agent import default_system_prompt, prompt_hash
from notebook_agent.agent.runs.run_file import list_runs
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


async def test_every_magic_error_line_fails_a_notebook_cell(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The notebooks run under --nbval-lax, where a printed error passed (`%agent compare 1 2` in
    prompt_tuning.ipynb): notebooks/conftest.py fails a cell whose output has a magic error line, and every error
    the magics print is such a line."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "nb_conftest", Path(__file__).parents[3] / "notebooks" / "conftest.py"
    )
    assert spec is not None and spec.loader is not None
    conftest = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conftest)
    mistakes = [
        ("line", "agent", "compare 1"),
        ("line", "agent", "compare nope1 nope2"),
        ("line", "agent", "rerun"),
        ("line", "agent", "rerun 1 --colour red"),
        ("line", "agent", "prompt nonexistent"),
        ("line", "agent", "frobnicate"),
        ("line", "agent", "config --max-steps 0"),
        ("cell", "agent", "--max-steps 0"),
        ("cell", "agent", ""),
        ("cell", "agent_prompt", "--name default"),
    ]
    capsys.readouterr()
    for kind, magic, line in mistakes:
        if kind == "line":
            shell.run_line_magic(magic, line)
        else:
            shell.run_cell_magic(magic, line, "x" if line else "# only a comment")
        out = capsys.readouterr().out
        nbval_outputs = [{"output_type": "stream", "name": "stdout", "text": out}]
        assert conftest.magic_errors(nbval_outputs), (magic, line, out)
    ok = [{"output_type": "stream", "name": "stdout", "text": "Stopped 0 running run(s).\n"}]
    assert conftest.magic_errors(ok) == []


def test_inspector_widget_has_a_stable_hook() -> None:
    from notebook_agent.notebook.views.run_view import StepCard

    card = StepCard(1, 5)
    assert with_class(card.box, "na-inspect") and with_class(card.box, "na-inspector")
    card.toggle_inspect()
    assert "No request was recorded" not in card.inspector.value  # no step yet: stays empty
    assert card.inspector.layout.display is None

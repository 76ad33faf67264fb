"""A notebook executed headless (nbclient, a real kernel), saved, and read back without a kernel: the finished
run's output is a static HTML record (no widget view, which needs the kernel that made it), and %agent snapshot
printed into its own cell."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from notebook_agent.demo import DEMO_TASK


def test_the_saved_notebook_shows_the_run_without_a_kernel(tmp_path: Path) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            "%load_ext notebook_agent\nfrom notebook_agent.demo import demo_url\nurl = demo_url()\n"
            "%agent config --max-steps 12"
        ),
        nbformat.v4.new_code_cell(f"%%agent --model demo --approve auto --url {{url}}\n{DEMO_TASK}"),
        nbformat.v4.new_code_cell("r = await agent_run\nprint(r.status)"),
        nbformat.v4.new_code_cell("%agent snapshot"),
    ]
    env = {k: v for k, v in os.environ.items() if k != "NOTEBOOK_AGENT_MODEL" and not k.endswith("_API_KEY")}
    client = NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}})
    client.km_env = env  # type: ignore[attr-defined]
    client.execute(env=env)
    saved = tmp_path / "run.ipynb"
    nbformat.write(nb, saved)

    # no kernel from here on: only the file
    read = nbformat.read(saved, as_version=4)
    agent_outputs = read.cells[1].outputs
    assert len(agent_outputs) == 1
    data = agent_outputs[0]["data"]
    # A finished run's output is its record, with no widget view: a widget view needs the kernel that made it,
    # and a saved notebook reopened later showed "Error displaying widget: model not found" for every run.
    widget_views = [
        (i, o["data"]["application/vnd.jupyter.widget-view+json"])
        for i, cell in enumerate(read.cells)
        for o in cell.get("outputs", [])
        if "application/vnd.jupyter.widget-view+json" in o.get("data", {})
    ]
    assert widget_views == []
    assert sorted(data) == ["text/html", "text/plain"] and data["text/plain"].startswith("PageAgentResult(completed")
    record = data["text/html"]  # the whole run, for everyone
    assert "completed" in record and "success" in record and "$54.99" in record
    assert "Next goal" in record and "input_text" in record and "Result" in record
    assert record.count("<tr>") >= 3 and 'src="data:image/jpeg;base64,' in record
    assert read.cells[2].outputs[0]["text"] == "completed\n"
    snapshot = read.cells[3].outputs
    assert snapshot and "Northwind Outfitters" in snapshot[0]["data"]["text/html"]


@pytest.fixture(autouse=True)
def _no_runs_dir_in_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)

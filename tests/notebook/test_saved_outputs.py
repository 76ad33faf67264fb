"""Every widget the package shows carries its static form, checked where it matters: a notebook executed on a real
kernel (nbclient), saved, then read with no kernel, and exported to HTML by nbconvert.

A widget alone, saved, is "Error displaying widget: model not found" in JupyterLab, a blank in exported HTML and
``VBox(...)`` in an untrusted notebook. The notebook below shows every live view the package has (a run, with an
approval panel open, a map of rows, a Python-built agent under ``watch``, an evaluation) and its static outputs
(``%agent browser``, ``%agent snapshot``, ``%agent runs``). Saved while a run waits for approval, each widget
output has its static form beside it; saved at the end, no widget is left and each output is its record, pictures
included. The source check makes sure nothing shows a widget any other way (notebook/views/display.py)."""

from __future__ import annotations

import ast
import copy
import os
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient
from nbconvert import HTMLExporter

import notebook_agent
from notebook_agent.demo import DELETE_TASK, DEMO_TASK

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
DISPLAY_MODULE = Path(notebook_agent.__file__).parent / "notebook" / "views" / "display.py"

CELLS = [
    "%load_ext notebook_agent\nfrom notebook_agent.demo import demo_url\nurl = demo_url()\n"
    "%agent config --max-steps 12",
    # 1: a run that stops at an approval panel (the notebook is saved while it waits)
    f"%%agent --model demo --approve ask-risky --url {{url}}account.html --out pending\n{DELETE_TASK}",
    "await pending.wait_for_approval(timeout=60)",
    # 3: answered from code, then awaited: the record takes the view's place
    "pending.approve()\nr1 = await pending\nprint(r1.status)",
    # 4: a run to the end
    f"%%agent --model demo --approve auto --url {{url}} --out done\n{DEMO_TASK}",
    "r2 = await done\nprint(r2.status)",
    # 6: a map over rows
    "rows = [{'product': 'Lumen 400 Headlamp'}, {'product': 'Wireless Charging Pad'}]",
    "%%agent --model demo --url {url} --each rows --concurrency 2 --out priced\n"
    "Find the price of {product} on the demo shop.",
    "m = await priced\nprint(m.summary())",
    # 9: a Python-built agent shown with watch()
    "from notebook_agent import PageAgent\nfrom notebook_agent.notebook.runtime import STATE, watch\n"
    f"agent = PageAgent(model='demo', browser=await STATE.get_browser(), start_url=url)\n"
    f"watched = watch(agent, {DEMO_TASK!r})",
    "r3 = await watched\nprint(r3.status)",
    # 11: an evaluation
    "from notebook_agent.notebook.evaluate import evaluate\n"
    "suite = {'name': 's', 'tasks': [{'id': 't', 'url': url + '/', 'task': "
    f"{DEMO_TASK!r}, 'check': {{'result': '54.99'}}}}]}}\n"
    "report = await evaluate(suite, [{'name': 'demo', 'model': 'demo'}], concurrency=1)",
    # 12: the static outputs
    "%agent browser",
    "%agent snapshot",
    "%agent runs",
]
LIVE = {1: "run", 4: "run", 7: "map", 9: "watch", 11: "evaluation"}
"""The cells whose output is a live widget while it works."""
PICTURES = {1, 4, 9, 12}
"""The cells whose static form at the end embeds pictures (runs' steps, the browser's page)."""


def _outputs(nb: Any, index: int) -> list[dict[str, Any]]:
    return [o for o in nb.cells[index].get("outputs", []) if "data" in o]


def _exported(nb: Any) -> str:
    body, _ = HTMLExporter(template_name="lab").from_notebook_node(nb)
    return str(body)


def test_nothing_shows_a_widget_but_the_display_module() -> None:
    """``display`` and a widget's mime bundle appear only in notebook/views/display.py, which always puts the
    static form beside the widget: a new widget shown any other way fails here."""
    offenders = []
    for path in Path(notebook_agent.__file__).parent.rglob("*.py"):
        if path == DISPLAY_MODULE:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, (ast.expr, ast.stmt)):
                continue
            name = ""
            if isinstance(node, ast.Call):
                func = node.func
                name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            elif isinstance(node, ast.Attribute) and node.attr == "_repr_mimebundle_":
                name = node.attr
            elif isinstance(node, ast.ImportFrom) and node.module == "IPython.display":
                name = "IPython.display"
            if name in ("display", "_repr_mimebundle_", "IPython.display", "update_display"):
                offenders.append(f"{path.relative_to(DISPLAY_MODULE.parents[2])}:{node.lineno} {name}")
    assert offenders == [], "show outputs through notebook/views/display.py (static form beside every widget)"


def test_every_widget_has_its_static_form_saved_and_exported(tmp_path: Path) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in CELLS]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    env = {k: v for k, v in os.environ.items() if k != "NOTEBOOK_AGENT_MODEL" and not k.endswith("_API_KEY")}
    client = NotebookClient(nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}})
    client.km_env = env  # type: ignore[attr-defined]
    with client.setup_kernel(env=env):
        for index, cell in enumerate(nb.cells):
            client.execute_cell(cell, index)
            if index == 2:  # saved while the run waits for Approve / Deny
                waiting = copy.deepcopy(nb)
    saved = tmp_path / "saved.ipynb"
    nbformat.write(nb, saved)
    nbformat.write(waiting, tmp_path / "waiting.ipynb")

    # -- saved while a run waits: the live view carries its static form; nothing shows as VBox(...) ----------
    waiting = nbformat.read(tmp_path / "waiting.ipynb", as_version=4)
    (live,) = _outputs(waiting, 1)
    assert WIDGET_VIEW in live["data"], "the run is live while it waits"
    static = live["data"]["text/html"]
    assert "Open my account page" in static and "mathjax_ignore" in static
    assert not live["data"]["text/plain"].startswith(("VBox(", "HBox(")), live["data"]["text/plain"]
    exported = _exported(waiting)  # nbconvert takes the static form where no widget state was saved
    assert "Open my account page" in exported and "Error displaying widget" not in exported

    # -- saved at the end, read with no kernel: every output static, each live one its record ---------------
    final = nbformat.read(saved, as_version=4)
    for index, cell in enumerate(final.cells):
        for output in _outputs(final, index):
            if output["output_type"] != "display_data":
                continue  # a cell's own value (``await pending.wait_for_approval()``), not the package's output
            data = output["data"]
            assert WIDGET_VIEW not in data, f"cell {index} still holds a widget: {cell.source[:60]!r}"
            assert "text/html" in data and "mathjax_ignore" in data["text/html"], (index, sorted(data))
            assert not data["text/plain"].startswith(("VBox(", "HBox(")), (index, data["text/plain"])
    for index, what in LIVE.items():
        (record,) = _outputs(final, index)
        html = record["data"]["text/html"]
        assert "its record takes this place" not in html, (what, html[:300])  # the record, not the waiting form
    assert "approved by" in _outputs(final, 1)[0]["data"]["text/html"]
    assert "2 rows" in _outputs(final, 7)[0]["data"]["text/html"]
    assert "<td>completed</td>" in _outputs(final, 11)[0]["data"]["text/html"]  # the report, each run in it
    for index in PICTURES:
        assert 'src="data:image/jpeg;base64,' in _outputs(final, index)[0]["data"]["text/html"], index
    exported = _exported(final)
    assert exported.count('src="data:image/jpeg;base64,') >= len(PICTURES)
    assert "Error displaying widget" not in exported and "VBox(" not in exported


@pytest.fixture(autouse=True)
def _no_runs_dir_in_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)

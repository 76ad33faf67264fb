"""A recipe from the notebook and the terminal: ``%agent recipe RUN``, ``%%agent --each ROWS --recipe RUN`` and
``notebook-agent map --recipe RUN --rows rows.csv --out out.csv``, each row replayed with no model call."""

from __future__ import annotations

import asyncio
import csv
import subprocess
import sys
from pathlib import Path

from IPython.core.interactiveshell import InteractiveShell
from pydantic import BaseModel

from notebook_agent.agent import PageAgent, Recipe, RecipeMapResult
from notebook_agent.browser import BrowserSession
from notebook_agent.demo import PRICE_TASK, demo_url
from tests.notebook.test_magics import _close_kernel_browser, shell  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]


class Price(BaseModel):
    name: str
    price: float


def cli(args: list[str]) -> subprocess.CompletedProcess[str]:
    """The terminal command in a process of its own (the demo shop it visits is served by this one)."""
    return subprocess.run(
        [sys.executable, "-m", "notebook_agent", *args], capture_output=True, text=True, timeout=300, cwd=ROOT
    )


async def record(runs_dir: Path) -> Path:
    async with BrowserSession() as browser:
        agent = PageAgent(model="demo", browser=browser, start_url=demo_url(), output=Price, runs_dir=str(runs_dir))
        run = await agent.run(PRICE_TASK.format(product="Ridgeline Rain Jacket"))
    assert run.success
    return next(runs_dir.glob(f"{run.run_id}.jsonl"))


async def test_the_notebook_makes_a_recipe_and_maps_it(
    shell: InteractiveShell,  # noqa: F811
    tmp_path: Path,
    capsys: object,
) -> None:
    run_file = await record(tmp_path)
    shell.run_line_magic("agent", f'recipe {run_file} --template "{PRICE_TASK}" --out priced --save {tmp_path}/r.json')
    recipe = shell.user_ns["priced"]
    assert isinstance(recipe, Recipe) and recipe.names == ["product"]
    assert Recipe.load(tmp_path / "r.json") == recipe
    shell.run_line_magic("agent", f"recipe {run_file}")  # a run without its template: said how to go on
    assert "is a run, not a recipe: give the task template" in capsys.readouterr().out  # type: ignore[attr-defined]
    shell.user_ns["products"] = [{"product": "Lumen 400 Headlamp"}, {"product": "Cascade Hiking Boots"}]
    shell.run_cell_magic("agent", "--each products --recipe priced --concurrency 2 --out by_recipe", PRICE_TASK)
    result = await shell.user_ns["by_recipe"]
    assert isinstance(result, RecipeMapResult), shell.user_ns["by_recipe"].error
    table = result.records()
    assert [r["price"] for r in table] == [34.5, 159.0] and all(r["tokens"] == 0 for r in table)
    assert shell.user_ns["by_recipe"].view.line.value.startswith("2 rows: 2 succeeded")
    # a run file straight in, the cell body its template
    shell.run_cell_magic("agent", f"--each products --recipe {run_file} --out by_run", PRICE_TASK)
    again = await shell.user_ns["by_run"]
    assert [r["price"] for r in again.records()] == [34.5, 159.0]


async def test_the_terminal_maps_a_recipe_over_a_table(tmp_path: Path) -> None:
    run_file = await record(tmp_path)
    recipe_file = Recipe.from_run(run_file, template=PRICE_TASK).save(tmp_path / "price.json")
    rows = tmp_path / "rows.csv"
    rows.write_text("product\nLumen 400 Headlamp\nBasecamp 28L Daypack\nGlacier Parka\n")
    out = tmp_path / "out.csv"
    args = ["map", "--recipe", str(recipe_file), "--rows", str(rows), "--out", str(out), "--no-heal"]
    done = await asyncio.to_thread(cli, args)
    assert done.returncode == 1, done.stderr  # one row is not sold: it fails, saying why
    assert "/min" in done.stdout and "1 replayed, 1 failed" in done.stdout
    with out.open(newline="") as f:
        table = list(csv.DictReader(f))
    assert [r["price"] for r in table] == ["34.5", "79.0", ""]
    assert [r["replayed"] for r in table] == ["2", "2", "1"] and [r["failed"] for r in table] == ["0", "0", "1"]
    # from the run file, the TASK its template
    out2 = tmp_path / "out2.csv"
    args = ["map", PRICE_TASK, "--recipe", str(run_file), "--rows", str(rows), "--out", str(out2)]
    again = await asyncio.to_thread(cli, args)
    assert again.returncode == 1 and out2.is_file(), again.stderr

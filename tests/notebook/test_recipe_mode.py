"""``--mode`` of a recipe map, the same flag in the notebook (``%%agent --each ROWS --recipe R --mode WAY``) and the
terminal (``notebook-agent map --recipe R --mode WAY``): each row's way in the table, and why the map went as it did."""

from __future__ import annotations

import asyncio
import csv
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from IPython.core.interactiveshell import InteractiveShell

from notebook_agent.agent import Recipe, RecipeMapResult
from notebook_agent.browser import BrowserSession
from tests.agent.recipes import api_sites
from tests.agent.recipes.api_recordings import record_catalogue
from tests.agent.recipes.api_sites import PRODUCTS, Sites
from tests.notebook.test_magics import _close_kernel_browser, shell  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def site() -> Iterator[Sites]:
    with api_sites.api_sites() as served:
        yield served


async def made(site: Sites, tmp_path: Path) -> Path:
    async with BrowserSession() as browser:
        recipe = Recipe.from_run(await record_catalogue(browser, site), params={"product": "Lumen 400 Headlamp"})
    assert recipe.call is not None
    return recipe.save(tmp_path / "catalogue.json")


async def test_the_notebook_maps_a_recipe_by_request_and_says_so(
    shell: InteractiveShell,  # noqa: F811
    site: Sites,
    tmp_path: Path,
    capsys: object,
) -> None:
    path = await made(site, tmp_path)
    shell.user_ns["priced"] = Recipe.load(path)
    shell.user_ns["products"] = [{"product": p} for p in PRODUCTS]
    line = "--each products --recipe priced --mode request --out by_request"
    shell.run_cell_magic("agent", line, "Find the price of {product}")
    result = await shell.user_ns["by_request"]
    assert isinstance(result, RecipeMapResult), shell.user_ns["by_request"].error
    assert [r["way"] for r in result.records()] == ["request"] * len(PRODUCTS)
    assert [r["price"] for r in result.records()] == [p for _, p, _ in PRODUCTS.values()]
    assert "by request: mode='request'" in result.summary()
    shell.run_cell_magic("agent", "--each products --mode page --out nothing", "Find {product}")
    said = capsys.readouterr().out  # type: ignore[attr-defined]
    assert "--mode page: how a recipe's rows go; give --recipe RUN too." in said
    shell.run_cell_magic("agent", "--each products --recipe priced --mode fast --out nothing", "Find {product}")
    assert "--mode fast: use one of auto, request, page." in capsys.readouterr().out  # type: ignore[attr-defined]


def cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "notebook_agent", *args], capture_output=True, text=True, timeout=300, cwd=cwd,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "HOME": str(cwd)},
    )  # fmt: skip


async def test_the_terminal_maps_a_recipe_by_request_and_says_why(site: Sites, tmp_path: Path) -> None:
    path = await made(site, tmp_path)
    rows = tmp_path / "rows.csv"
    rows.write_text("product\n" + "\n".join(PRODUCTS) + "\n")
    for mode, ways in (("auto", ["both"] * 3 + ["request"] * 5), ("page", ["page"] * 8)):
        out = tmp_path / f"{mode}.csv"
        args = ["map", "--recipe", str(path), "--rows", str(rows), "--out", str(out), "--mode", mode]
        done = await asyncio.to_thread(cli, args, tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
        with out.open(newline="") as f:
            table = list(csv.DictReader(f))
        assert [r["way"] for r in table] == ways
        assert [float(r["price"]) for r in table] == [p for _, p, _ in PRODUCTS.values()]
        said = "by request: its learned call: 3 rows agreed both ways" if mode == "auto" else "by the page: mode='page'"
        assert f"rows went {said}" in done.stdout
    args = ["map", "Find {product}", "--rows", str(rows), "--out", str(tmp_path / "x.csv"), "--mode", "request"]
    done = await asyncio.to_thread(cli, args, tmp_path)
    assert done.returncode != 0 and "--mode request: how a recipe's rows go; give --recipe RUN too." in done.stderr

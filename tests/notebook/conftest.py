"""Fixtures of the notebook tests: one JupyterLab server and one Chromium per module, a notebook opener."""

from __future__ import annotations

import re
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.notebook.lab_harness import LabNotebook, LabServer, artifacts_dir, find_chromium, launch_chromium


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "lab: drives a real JupyterLab in a real Chromium (runs by default; deselect with -m 'not lab')"
    )


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report


@pytest.fixture(scope="module")
def lab_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    pytest.importorskip("jupyterlab")
    server = LabServer(tmp_path_factory.mktemp("lab"))
    try:
        server.start()
        yield server
    finally:
        server.stop()
        print(f"\n[jupyterlab] port {server.port}: started in {server.startup_s:.1f}s, stopped in {server.stop_s:.1f}s")


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api")
    if find_chromium() is None:
        pytest.skip("no Chromium found by notebook_agent.browser.session.launch.find_browser")
    with sync_api.sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def artifacts(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """Where screenshots go: ``$NA_LAB_ARTIFACTS/<test>`` (kept) or the test's tmp dir."""
    return artifacts_dir(tmp_path / "artifacts", re.sub(r"[^\w.-]+", "_", request.node.name))


@pytest.fixture
def open_notebook(
    request: pytest.FixtureRequest, lab_server: LabServer, chromium: Any, artifacts: Path
) -> Iterator[Callable[[str, list[str]], LabNotebook]]:
    """``open_notebook(name, cells)``: write the notebook, open it in a fresh workspace, wait for the kernel.

    On failure every open notebook is screenshotted and its cells, outputs and console are printed.
    """
    opened: list[LabNotebook] = []

    def _open(name: str, cells: list[str]) -> LabNotebook:
        lab_server.write_notebook(name, cells)
        nb = LabNotebook(lab_server, chromium, name, artifacts=artifacts)
        opened.append(nb)
        return nb.open()

    try:
        yield _open
    finally:
        failed = getattr(request.node, "rep_call", None) is None or request.node.rep_call.failed
        for nb in opened:
            if failed:
                shot = nb.screenshot(f"FAILED-{Path(nb.notebook).stem}")
                print(f"\n=== {nb.notebook} (screenshot: {shot})\n{nb.diagnostics()}")
            nb.close()
        if failed:
            print(f"\n=== jupyterlab log\n{lab_server.log_tail()}")

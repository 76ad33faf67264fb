"""``notebook-agent demo --lab`` outside a checkout opens JupyterLab on the quickstart notebook.

Before, from any folder but a checkout's root it opened Lab on that folder, with no quickstart and no word. Now
it copies the quickstart notebook the package ships into ``notebook_agent_quickstart/`` there, says so, and Lab
opens on it; a copy already there (perhaps edited) is kept. The shipped copy is the checkout's
``notebooks/quickstart.ipynb``, byte for byte.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from importlib import resources
from pathlib import Path

import pytest

from notebook_agent.cli.run import QUICKSTART_FOLDER, lab_folder

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "quickstart-test-token"


def shipped() -> bytes:
    return resources.files("notebook_agent.demo").joinpath("quickstart.ipynb").read_bytes()


def test_the_shipped_quickstart_is_the_checkouts() -> None:
    assert shipped() == (ROOT / "notebooks" / "quickstart.ipynb").read_bytes(), (
        "notebooks/quickstart.ipynb changed: copy it to notebook_agent/demo/quickstart.ipynb (the one pip installs)"
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def get(url: str) -> tuple[int, str]:
    """(status, Location or body) of a GET that does not follow redirects."""

    class Stay(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: object, **kwargs: object) -> None:
            return None

    try:
        with urllib.request.build_opener(Stay).open(url, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers.get("Location", "")


def test_lab_outside_a_checkout_opens_on_the_quickstart(tmp_path: Path) -> None:
    pytest.importorskip("jupyterlab")
    port = free_port()
    home = tmp_path / "jupyter"
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "JUPYTER_TOKEN": TOKEN,
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "JUPYTER_DATA_DIR": str(home / "data"),
        "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
        "BROWSER": "true",  # Lab "opens" a browser that does nothing
    }
    work = tmp_path / "work"  # not a checkout: no notebooks/quickstart.ipynb here
    work.mkdir()
    log = (tmp_path / "lab.log").open("w")
    lab = subprocess.Popen(
        [sys.executable, "-m", "notebook_agent", "demo", "--lab", "--port", str(port)],
        cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    try:
        copied = work / QUICKSTART_FOLDER / "quickstart.ipynb"
        for _ in range(600):  # until Lab answers (a hang guard, not a timing threshold)
            if lab.poll() is not None:
                break
            try:
                status, listing = get(f"http://127.0.0.1:{port}/api/contents?token={TOKEN}")
                break
            except OSError:
                time.sleep(0.1)
        assert lab.poll() is None, (tmp_path / "lab.log").read_text()
        assert status == 200 and '"name": "quickstart.ipynb"' in listing.replace('":"', '": "'), listing
        assert copied.read_bytes() == shipped()
        assert get(f"http://127.0.0.1:{port}/?token={TOKEN}")[1].split("?")[0].endswith("/lab/tree/quickstart.ipynb")
    finally:
        os.killpg(lab.pid, signal.SIGTERM)  # the command and the Lab it started, as one group
        lab.wait(timeout=60)
        log.close()
    said = (tmp_path / "lab.log").read_text()
    assert f"copied the quickstart notebook to {copied}\n" in said, said


def test_an_edited_copy_is_kept(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mine = tmp_path / QUICKSTART_FOLDER / "quickstart.ipynb"
    mine.parent.mkdir()
    mine.write_text("{}")
    assert lab_folder(tmp_path) == mine.parent and mine.read_text() == "{}"
    assert capsys.readouterr().out == f"opening {mine} (as you left it: delete it for a fresh copy)\n"
    assert lab_folder(ROOT) == ROOT / "notebooks"  # a checkout: its own notebooks

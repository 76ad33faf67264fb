"""Drive a real JupyterLab in a real Chromium with Playwright: the harness of the notebook end-to-end tests.

What it does, following the measured recipe in ``shared/reference/jupyter-runtime.md`` §7:

* :class:`LabServer` starts ``jupyter lab`` on a free loopback port with a random token, in its own process
  group, with isolated config / runtime / data / settings / workspaces / IPython dirs (so nothing from the
  machine's own Jupyter set-up leaks in, and the "Jupyter news" toast is switched off). ``stop()`` shuts the
  kernels down, then SIGTERMs the server's process group, and finally SIGKILLs every process the server had
  started (kernels and whatever they launched, e.g. a kernel-side Chromium) that is still alive.
* :class:`LabNotebook` opens one notebook in a *fresh workspace* (``/lab/workspaces/<ws>/tree/<nb>?reset``), so
  no tab restored from an earlier notebook can hide behind the active one; every selector is scoped to the
  visible notebook panel. It runs cells the way a person does (click the editor, Shift+Enter), waits for the
  kernel through ``window.jupyterapp`` (needs ``--LabApp.expose_app_in_browser=True``), finds widgets by CSS
  class, and takes screenshots.

No internet is needed: everything listens on 127.0.0.1. The harness imports nothing from ``notebook_agent``.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import nbformat

#: The visible notebook panel; every widget lookup is scoped to it.
ACTIVE_PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"

#: Flags for the test's own Chromium (loopback only; root needs --no-sandbox).
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def find_chromium() -> str | None:
    """The browser the package itself would use (``find_browser``), or None when it finds none."""
    from notebook_agent.browser.session.launch import BrowserNotFoundError, find_browser

    try:
        return find_browser()
    except BrowserNotFoundError:
        return None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def write_notebook(path: Path, cells: list[str]) -> Path:
    """A notebook of code cells for the default ``python3`` kernel."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in cells]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(path))
    return path


def _children_map() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        # "pid (comm) state ppid ...": comm may contain spaces and parentheses, so split after the last ')'.
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 1:
            children.setdefault(int(fields[1]), []).append(int(entry))
    return children


def descendants(pid: int) -> list[int]:
    """Every live process below ``pid`` (Linux /proc), children first."""
    if not os.path.isdir("/proc"):
        return []
    tree = _children_map()
    out: list[int] = []
    stack = list(tree.get(pid, []))
    while stack:
        child = stack.pop()
        out.append(child)
        stack.extend(tree.get(child, []))
    return out


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        return state != "Z"
    except (OSError, IndexError):
        return False


class LabServer:
    """One ``jupyter lab`` on 127.0.0.1 with a random token and isolated Jupyter directories under ``base``."""

    def __init__(self, base: Path, *, startup_timeout: float = 60.0, extra_env: dict[str, str] | None = None) -> None:
        self.base = Path(base)
        self.root = self.base / "notebooks"
        self.port = 0
        self.token = secrets.token_hex(16)
        self.startup_timeout = startup_timeout
        self.extra_env = dict(extra_env or {})
        self.proc: subprocess.Popen[bytes] | None = None
        self.log_path = self.base / "jupyterlab.log"
        self.startup_s = 0.0
        self.stop_s = 0.0

    # -- life cycle --------------------------------------------------------------------------------------
    def _env(self) -> dict[str, str]:
        dirs = {
            "JUPYTER_CONFIG_DIR": "config",
            "JUPYTER_RUNTIME_DIR": "runtime",
            "JUPYTER_DATA_DIR": "data",
            "JUPYTERLAB_SETTINGS_DIR": "lab-settings",
            "JUPYTERLAB_WORKSPACES_DIR": "lab-workspaces",
            "IPYTHONDIR": "ipython",
        }
        env = dict(os.environ)
        for key, name in dirs.items():
            d = self.base / name
            d.mkdir(parents=True, exist_ok=True)
            env[key] = str(d)
        # The user settings that keep the news/update toast from covering the notebook.
        notif = self.base / "lab-settings" / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
        notif.parent.mkdir(parents=True, exist_ok=True)
        notif.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))
        env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
        env["JUPYTER_PLATFORM_DIRS"] = "1"
        env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"
        env["PYTHONUNBUFFERED"] = "1"
        env.pop("JUPYTER_PATH", None)
        env.update(self.extra_env)
        return env

    def start(self) -> LabServer:
        self.root.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        cmd = [
            sys.executable, "-m", "jupyterlab",
            "--no-browser", "--allow-root",
            "--ip=127.0.0.1", f"--port={self.port}", "--port-retries=0",
            f"--IdentityProvider.token={self.token}",
            f"--ServerApp.root_dir={self.root}",
            "--ServerApp.terminals_enabled=False",
            "--LabApp.expose_app_in_browser=True",
            "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.handlers.announcements.NeverCheckForUpdate",
        ]  # fmt: skip
        t0 = time.perf_counter()
        log = open(self.log_path, "wb")  # noqa: SIM115 - the child keeps writing after this returns
        try:
            self.proc = subprocess.Popen(
                cmd, cwd=self.root, env=self._env(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        finally:
            log.close()
        deadline = time.monotonic() + self.startup_timeout
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"jupyter lab exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(self.url(f"/api/status?token={self.token}"), timeout=2) as r:
                    if r.status == 200:
                        break
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise TimeoutError(f"jupyter lab did not answer within {self.startup_timeout:g}s:\n{self.log_tail()}")
            time.sleep(0.2)
        self.startup_s = time.perf_counter() - t0
        return self

    def stop(self, grace: float = 10.0) -> None:
        """Shut kernels down, SIGTERM the server's group, then SIGKILL whatever it started that is left."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        t0 = time.perf_counter()
        tree = descendants(proc.pid)
        if proc.poll() is None:
            with contextlib.suppress(Exception):
                for kernel in self.api("/api/kernels"):
                    self.api(f"/api/kernels/{kernel['id']}", method="DELETE", timeout=5)
            tree = sorted(set(tree) | set(descendants(proc.pid)))
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(grace)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(5)
        # Kernels run in their own sessions and may have started browsers in theirs: end each by pid.
        leftovers = [pid for pid in tree if _alive(pid)]
        for pid in leftovers:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 3
        while leftovers and time.monotonic() < deadline:
            leftovers = [pid for pid in leftovers if _alive(pid)]
            time.sleep(0.1)
        for pid in leftovers:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        self.stop_s = time.perf_counter() - t0

    def __enter__(self) -> LabServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- helpers -----------------------------------------------------------------------------------------
    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def notebook_url(self, notebook: str, workspace: str | None = None) -> str:
        """The notebook in a fresh workspace (``?reset`` drops whatever a workspace of that name held)."""
        ws = workspace or f"ws-{secrets.token_hex(4)}"
        return self.url(f"/lab/workspaces/{ws}/tree/{notebook}?token={self.token}&reset")

    def api(self, path: str, *, method: str = "GET", timeout: float = 10) -> Any:
        req = urllib.request.Request(self.url(path), method=method, headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(req, timeout=timeout) as r:
            body = r.read()
        return json.loads(body) if body else None

    def write_notebook(self, name: str, cells: list[str]) -> Path:
        return write_notebook(self.root / name, cells)

    def log_tail(self, lines: int = 60) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"


# JS run in the page. `sel`/`text` come as arguments, never formatted into the source.
_JS_KERNEL_STATUS = """() => {
  const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
  return k ? k.status : null;
}"""
_JS_PANEL_TEXT = """([panelSel, sel, text]) => {
  const p = document.querySelector(panelSel);
  return !!p && [...p.querySelectorAll(sel)].some((e) => e.textContent.includes(text));
}"""


class LabNotebook:
    """One notebook open in its own browser context and fresh workspace; selectors scoped to its panel."""

    def __init__(
        self,
        server: LabServer,
        browser: Any,
        notebook: str,
        *,
        artifacts: Path | None = None,
        viewport: tuple[int, int] = (1280, 1700),
    ) -> None:
        self.server = server
        self.notebook = notebook
        self.artifacts = artifacts
        self.context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]})
        self.page = self.context.new_page()
        self.console: list[str] = []
        self.page.on("console", lambda msg: self.console.append(f"{msg.type}: {msg.text}"))
        self.page.on("pageerror", lambda exc: self.console.append(f"pageerror: {exc}"))
        self.open_s = 0.0

    # -- opening and the kernel --------------------------------------------------------------------------
    def open(self, timeout: float = 60.0) -> LabNotebook:
        """Load JupyterLab on the notebook and wait for its kernel to be idle."""
        t0 = time.perf_counter()
        self.page.goto(self.server.notebook_url(self.notebook), timeout=timeout * 1000)
        self.page.locator(f"{ACTIVE_PANEL} .jp-Notebook .jp-Cell").first.wait_for(timeout=timeout * 1000)
        self.wait_kernel_idle(timeout)
        self.open_s = time.perf_counter() - t0
        return self

    def kernel_status(self) -> str | None:
        return self.page.evaluate(_JS_KERNEL_STATUS)

    def wait_kernel_idle(self, timeout: float = 30.0) -> None:
        self.page.wait_for_function(f"() => ({_JS_KERNEL_STATUS})() === 'idle'", timeout=timeout * 1000)

    # -- cells -------------------------------------------------------------------------------------------
    @property
    def panel(self) -> Any:
        return self.page.locator(ACTIVE_PANEL)

    def cell(self, index: int) -> Any:
        return self.page.locator(f"{ACTIVE_PANEL} .jp-Notebook .jp-Cell").nth(index)

    def prompt(self, index: int) -> str:
        return (self.cell(index).locator(".jp-InputPrompt").inner_text() or "").strip()

    def run_cell(self, index: int, *, wait: bool = True, timeout: float = 30.0) -> float:
        """Click the cell's editor and press Shift+Enter, like a person; returns seconds until it finished
        (its prompt shows a new execution count), or 0 with ``wait=False``."""
        before = self.prompt(index)
        t0 = time.perf_counter()
        self.cell(index).locator(".jp-InputArea-editor").click()
        self.page.keyboard.press("Shift+Enter")
        if not wait:
            return 0.0
        self.wait_cell_done(index, before, timeout)
        return time.perf_counter() - t0

    def wait_cell_done(self, index: int, before: str = "", timeout: float = 30.0) -> None:
        """Wait until the cell's prompt is ``[n]:`` with an n other than in ``before``."""
        handle = self.cell(index).element_handle(timeout=timeout * 1000)
        self.page.wait_for_function(
            """([cell, before]) => {
                 const p = cell.querySelector('.jp-InputPrompt');
                 const t = p ? p.textContent.trim() : '';
                 return /^\\[\\d+\\]:$/.test(t) && t !== before;
               }""",
            arg=[handle, before],
            timeout=timeout * 1000,
        )

    def output_text(self, index: int) -> str:
        area = self.cell(index).locator(".jp-OutputArea")
        return area.inner_text() if area.count() else ""

    def assert_no_error(self, index: int) -> None:
        text = self.output_text(index)
        assert "Traceback" not in text and "Error" not in text.split("\n", 1)[0], f"cell {index} failed:\n{text}"

    # -- widgets -----------------------------------------------------------------------------------------
    def widget(self, selector: str) -> Any:
        """Widgets with this CSS selector (e.g. ``.na-approve``) in the visible notebook only."""
        return self.page.locator(f"{ACTIVE_PANEL} {selector}")

    def wait_visible(self, selector: str, timeout: float = 30.0) -> float:
        """Wait for the first match to be visible; returns the seconds waited."""
        t0 = time.perf_counter()
        self.widget(selector).first.wait_for(state="visible", timeout=timeout * 1000)
        return time.perf_counter() - t0

    def wait_gone(self, selector: str, timeout: float = 30.0) -> float:
        t0 = time.perf_counter()
        self.widget(selector).first.wait_for(state="detached", timeout=timeout * 1000)
        return time.perf_counter() - t0

    def wait_text(self, selector: str, text: str, timeout: float = 30.0) -> float:
        """Wait until some match's text contains ``text``; returns the seconds waited."""
        t0 = time.perf_counter()
        self.page.wait_for_function(_JS_PANEL_TEXT, arg=[ACTIVE_PANEL, selector, text], timeout=timeout * 1000)
        return time.perf_counter() - t0

    def wait_js(self, expression: str, arg: Any = None, timeout: float = 30.0) -> float:
        t0 = time.perf_counter()
        self.page.wait_for_function(expression, arg=arg, timeout=timeout * 1000)
        return time.perf_counter() - t0

    def text(self, selector: str) -> str:
        loc = self.widget(selector)
        return "\n".join(loc.nth(i).inner_text() for i in range(loc.count()))

    # -- screenshots and diagnostics ---------------------------------------------------------------------
    def screenshot(self, name: str, selector: str | None = None) -> Path | None:
        """Save a PNG of the visible notebook (or of one element) to the artifacts dir; never raises."""
        if self.artifacts is None:
            return None
        self.artifacts.mkdir(parents=True, exist_ok=True)
        path = self.artifacts / f"{name}.png"
        try:
            target = self.widget(selector).first if selector else self.panel
            target.screenshot(path=str(path), timeout=10_000)
        except Exception:  # fall back to the whole page
            try:
                self.page.screenshot(path=str(path), timeout=10_000)
            except Exception:  # diagnostics must never mask the real failure
                return None
        return path

    def diagnostics(self) -> str:
        """Every cell's prompt and output, and the browser console: for failure messages."""
        parts = []
        with contextlib.suppress(Exception):
            cells = self.page.locator(f"{ACTIVE_PANEL} .jp-Notebook .jp-Cell")
            for i in range(cells.count()):
                parts.append(f"--- cell {i} {self.prompt(i)}\n{self.output_text(i)[:3000]}")
        parts.append("--- browser console (last 30)\n" + "\n".join(self.console[-30:]))
        return "\n".join(parts)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.context.close()


def launch_chromium(playwright: Any, executable: str | None = None, headless: bool = True) -> Any:
    from notebook_agent.browser.session.launch import find_browser

    path = executable or find_browser()  # raises BrowserNotFoundError saying what was tried and how to get one
    return playwright.chromium.launch(executable_path=path, headless=headless, args=CHROMIUM_ARGS)


def artifacts_dir(default: Path, name: str) -> Path:
    """``$NA_LAB_ARTIFACTS/<name>`` if that variable is set (kept after the run), else ``default``."""
    env = os.environ.get("NA_LAB_ARTIFACTS")
    if not env:
        return default
    path = Path(env) / name
    shutil.rmtree(path, ignore_errors=True)
    return path

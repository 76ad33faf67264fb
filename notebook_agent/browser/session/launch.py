"""Finding a Chromium to drive, and starting Playwright so a Jupyter interrupt cannot kill it.

Two problems live here:

* Users rarely run ``playwright install`` before trying a notebook, while many machines already have a
  Chromium or Chrome. :func:`find_browser` looks in every usual place and, when nothing is there, raises
  :class:`BrowserNotFoundError` naming each place it tried and how to install a browser.
* "Interrupt kernel" sends SIGINT to the kernel's whole process group. Playwright-python spawns its Node
  driver with ``asyncio.create_subprocess_exec`` in that group, so an interrupt kills the driver and with it the
  browser. :func:`start_playwright` adds ``start_new_session=True`` to that one spawn (the browser itself is
  already started detached by the driver), which keeps the browser alive across interrupts.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from playwright.async_api import Browser, BrowserContext, BrowserType, Playwright, ViewportSize, async_playwright

from ..errors import BrowserError
from ..fingerprint.finder import register_fingerprint_engine
from ..page.page_script import register_page_engine

ENV_VAR = "NOTEBOOK_AGENT_BROWSER"

#: Flags every launched Chromium gets. Without the background-networking ones Chromium phones home at start
#: and, on machines with no internet, logs refused connections; ``--no-sandbox`` is needed when running as root.
DEFAULT_ARGS: tuple[str, ...] = (
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # A page restored from the back/forward cache makes no request, so the door (browser/door/route.py) would not
    # see go_back/go_forward reach another site.
    "--disable-features=BackForwardCache",
    # WebRTC's UDP goes past every route and interception (the door, guard.py): none without a proxy. Pages
    # also find no RTCPeerConnection (egress.py NO_WEBRTC_SCRIPT).
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
)

#: Playwright's default Chromium flags left out (see :func:`open_browser`).
IGNORED_DEFAULT_ARGS: list[str] = ["--disable-ipc-flooding-protection"]

log = logging.getLogger(__name__)

#: Absolute paths tried in order after the env variable and Playwright's own Chromium.
SYSTEM_PATHS: list[str] = [
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
    "/usr/lib/chromium/chromium",
    "/snap/bin/chromium",
    "/usr/bin/google-chrome",
    "/usr/bin/google-chrome-stable",
    "/opt/google/chrome/chrome",
    "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
    "/Applications/Chromium.app/Contents/MacOS/Chromium",
    str(Path.home() / "Applications/Google Chrome.app/Contents/MacOS/Google Chrome"),
    str(Path.home() / "Applications/Chromium.app/Contents/MacOS/Chromium"),
    r"C:\Program Files\Google\Chrome\Application\chrome.exe",
    r"C:\Program Files (x86)\Google\Chrome\Application\chrome.exe",
]

#: Names looked up on PATH with :func:`shutil.which`.
PATH_NAMES: list[str] = ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome"]

INSTALL_HINT = (
    "Install one with `python -m playwright install chromium` (Playwright's own build), or a system package "
    "such as `apt-get install chromium`; or set NOTEBOOK_AGENT_BROWSER to a Chromium/Chrome executable, or "
    "pass executable_path=, cdp_url= or ws_endpoint= to BrowserSession."
)


class BrowserNotFoundError(BrowserError, RuntimeError):
    """No usable browser. ``tried`` lists every place that was checked, in order."""

    def __init__(self, tried: list[str], detail: str = "") -> None:
        self.tried = list(tried)
        lines = ["No Chromium/Chrome browser was found."]
        if detail:
            lines.append(detail)
        lines.append("Places tried:")
        lines.extend(f"  - {place}" for place in self.tried)
        lines.append(INSTALL_HINT)
        super().__init__("\n".join(lines))


def _is_executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def playwright_browsers_dir() -> Path:
    """Where ``playwright install`` puts browsers (honours PLAYWRIGHT_BROWSERS_PATH like the driver does)."""
    env = os.environ.get("PLAYWRIGHT_BROWSERS_PATH")
    if env and env != "0":
        return Path(env).expanduser()
    if env == "0":
        import playwright

        return Path(playwright.__file__).parent / "driver" / "package" / ".local-browsers"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "ms-playwright"
    if sys.platform == "win32":
        return Path(os.environ.get("LOCALAPPDATA", str(Path.home() / "AppData" / "Local"))) / "ms-playwright"
    return Path(os.environ.get("XDG_CACHE_HOME", str(Path.home() / ".cache"))) / "ms-playwright"


def _chromium_revision() -> str | None:
    """The Chromium revision this Playwright release expects (from the driver's browsers.json)."""
    try:
        import playwright

        data = json.loads(
            (Path(playwright.__file__).parent / "driver" / "package" / "browsers.json").read_text(encoding="utf-8")
        )
    except (OSError, ValueError):
        return None
    for entry in data.get("browsers", []):
        if entry.get("name") == "chromium":
            return str(entry.get("revision"))
    return None


def playwright_chromium_paths(headless: bool = True) -> list[str]:
    """The executables Playwright would use for Chromium, if ``playwright install`` was done.

    Computed without starting the driver so :func:`find_browser` stays cheap; a running session asks Playwright
    itself (``playwright.chromium.executable_path``) instead.
    """
    base = playwright_browsers_dir()
    revision = _chromium_revision()
    if revision is None:
        return []
    full = base / f"chromium-{revision}"
    shell = base / f"chromium_headless_shell-{revision}"
    if sys.platform == "darwin":
        candidates = [
            full / "chrome-mac-arm64" / "Google Chrome for Testing.app/Contents/MacOS/Google Chrome for Testing",
            full / "chrome-mac-x64" / "Google Chrome for Testing.app/Contents/MacOS/Google Chrome for Testing",
            full / "chrome-mac" / "Chromium.app/Contents/MacOS/Chromium",
        ]
        shells = [shell / "chrome-headless-shell-mac-arm64/chrome-headless-shell"]
        shells.append(shell / "chrome-headless-shell-mac-x64/chrome-headless-shell")
    elif sys.platform == "win32":
        candidates = [full / "chrome-win64" / "chrome.exe", full / "chrome-win" / "chrome.exe"]
        shells = [shell / "chrome-headless-shell-win64" / "chrome-headless-shell.exe"]
    else:
        candidates = [full / "chrome-linux64" / "chrome", full / "chrome-linux" / "chrome"]
        shells = [shell / "chrome-headless-shell-linux64" / "chrome-headless-shell"]
    paths = [str(p) for p in candidates]
    if headless:
        paths += [str(p) for p in shells]
    return paths


def find_browser(
    executable_path: str | os.PathLike[str] | None = None,
    *,
    headless: bool = True,
    playwright_path: str | None = None,
) -> str:
    """Return the path of a Chromium-family browser, or raise :class:`BrowserNotFoundError`.

    Order: ``executable_path``; ``$NOTEBOOK_AGENT_BROWSER``; Playwright's own Chromium (``playwright_path`` when a
    running Playwright told us, else the computed install location); system paths; ``which`` on PATH. An explicit
    path that does not exist is an error rather than a silent fallback, so a typo is not hidden.
    """
    tried: list[str] = []
    if executable_path is not None:
        path = os.fspath(executable_path)
        if _is_executable(path):
            return path
        raise BrowserNotFoundError([f"executable_path={path} (not an executable file)"])
    env = os.environ.get(ENV_VAR)
    if env:
        if _is_executable(env):
            return env
        raise BrowserNotFoundError([f"${ENV_VAR}={env} (not an executable file)"])
    tried.append(f"${ENV_VAR} (not set)")
    pw_paths = [playwright_path] if playwright_path else []
    pw_paths += [p for p in playwright_chromium_paths(headless) if p not in pw_paths]
    for path in pw_paths:
        if _is_executable(path):
            return path
        tried.append(f"{path} (Playwright's Chromium)")
    if not pw_paths:
        tried.append(f"{playwright_browsers_dir()} (Playwright's browsers; revision unknown)")
    for path in SYSTEM_PATHS:
        if _is_executable(path):
            return path
        tried.append(path)
    for name in PATH_NAMES:
        found = shutil.which(name)
        if found and _is_executable(found):
            return found
        tried.append(f"`{name}` on PATH")
    raise BrowserNotFoundError(tried)


# -- Playwright driver in its own process session ------------------------------------------------------------

_patch_lock = threading.Lock()
_patch_depth = 0
_original_exec: Any = None


@contextlib.contextmanager
def _driver_in_new_session() -> Iterator[None]:
    """While active, the Playwright driver spawn (and only it) gets ``start_new_session=True``.

    Playwright-python has no option for this; its transport calls ``asyncio.create_subprocess_exec`` with the
    driver's ``run-driver`` argument, so the wrapper matches that argument and leaves every other spawn (from
    other tasks running meanwhile) untouched. Nested or concurrent starts share one wrapper.
    """
    global _patch_depth, _original_exec
    if os.name != "posix":
        yield
        return
    with _patch_lock:
        if _patch_depth == 0:
            original = asyncio.create_subprocess_exec
            _original_exec = original

            async def create_subprocess_exec(program: Any, *args: Any, **kwargs: Any) -> Any:
                if "run-driver" in args:
                    kwargs.setdefault("start_new_session", True)
                return await original(program, *args, **kwargs)

            asyncio.create_subprocess_exec = create_subprocess_exec
        _patch_depth += 1
    try:
        yield
    finally:
        with _patch_lock:
            _patch_depth -= 1
            if _patch_depth == 0:
                asyncio.create_subprocess_exec = _original_exec
                _original_exec = None


async def start_playwright(*, new_session: bool = True) -> Playwright:
    """Start Playwright; with ``new_session`` its driver runs in a new process session (immune to SIGINT sent
    to our process group, e.g. Jupyter's "Interrupt kernel")."""
    manager = async_playwright()
    if not new_session:
        return await manager.start()
    with _driver_in_new_session():
        return await manager.start()


def driver_pid(playwright: Playwright) -> int | None:
    """The Node driver's pid, for diagnostics and tests (reads Playwright internals; None if they change)."""
    try:
        manager = playwright.stop.__self__  # type: ignore[attr-defined]
        return int(manager._client._transport._proc.pid)
    except (AttributeError, TypeError, ValueError):
        return None


def sandbox_possible() -> bool:
    """Whether to ask for Chromium's sandbox: yes, unless running as root on Linux, where Chromium refuses to
    start with it (``--no-sandbox`` is then required, and only then)."""
    geteuid = getattr(os, "geteuid", None)
    return not (sys.platform.startswith("linux") and geteuid is not None and geteuid() == 0)


async def open_browser(
    pw: Playwright,
    *,
    headless: bool,
    viewport: ViewportSize,
    executable_path: str | None = None,
    cdp_url: str | None = None,
    ws_endpoint: str | None = None,
    args: list[str] | tuple[str, ...] = (),
    context_options: Mapping[str, Any] | None = None,
    launch_options: Mapping[str, Any] | None = None,
) -> tuple[Browser, BrowserContext, bool, str]:
    """Connect to a running browser (``cdp_url``: over CDP, reusing its first context; ``ws_endpoint``: a
    Playwright server) or launch a local Chromium, and return (browser, context, whether we own the context,
    the binary launched or ""). A launched browser ignores SIGINT/SIGTERM/SIGHUP: SIGINT is the notebook's
    interrupt, and the browser must survive it. The page script's selector engine is registered with ``pw``
    before the context is made or used (see :func:`register_page_engine`)."""
    chromium = pw.chromium
    # Service workers make requests the context's route never sees: the door must see every request.
    ctx_options = {"service_workers": "block", **(context_options or {})}
    await register_fingerprint_engine(pw)  # elements' fingerprints for replay (fingerprint.py)
    if cdp_url:
        browser = await chromium.connect_over_cdp(cdp_url)
        if browser.contexts:
            await register_page_engine(pw, reused=browser.contexts[0])
            return browser, browser.contexts[0], False, ""
        await register_page_engine(pw)
        return browser, await browser.new_context(viewport=viewport, **ctx_options), True, ""
    await register_page_engine(pw)
    path = ""
    if ws_endpoint:
        browser = await chromium.connect(ws_endpoint)
    else:
        pw_path = ""
        with contextlib.suppress(Exception):
            pw_path = chromium.executable_path
        path = find_browser(executable_path, headless=headless, playwright_path=pw_path or None)
        options: dict[str, Any] = {
            "executable_path": path,
            "headless": headless,
            "args": [*DEFAULT_ARGS, *args],
            "handle_sigint": False,
            "handle_sigterm": False,
            "handle_sighup": False,
            "chromium_sandbox": sandbox_possible(),
            # Playwright turns Chromium's IPC flooding protection off; a page calling history.pushState
            # thousands of times a second then saturates the browser process, and every later command of the
            # whole browser (closing that tab, opening another) waits behind the flood for tens of seconds.
            "ignore_default_args": IGNORED_DEFAULT_ARGS,
            **(launch_options or {}),
        }
        try:
            browser = await _launch(chromium, options)
        except Exception as exc:
            if not options["chromium_sandbox"] or "sandbox" not in str(exc).lower():
                raise
            # No usable sandbox here (no user namespaces, no setuid helper): run without, and say so.
            log.warning("Chromium's sandbox is not available here; running it without (%s)", str(exc).splitlines()[0])
            browser = await _launch(chromium, {**options, "chromium_sandbox": False})
    return browser, await browser.new_context(viewport=viewport, **ctx_options), True, path


#: The profile every launched Chromium starts from. ``network_prediction_options: 2`` ("never") stops the
#: browser's own requests that no route sees: speculation rules' prefetch and prerender, preconnect and DNS
#: prefetch. No command-line switch of this Chromium does it, and only a profile holds it; contexts made from
#: the browser inherit it.
PROFILE_PREFERENCES: dict[str, Any] = {"net": {"network_prediction_options": 2}}


async def _launch(chromium: BrowserType, options: dict[str, Any]) -> Browser:
    """Launch Chromium on a fresh profile holding :data:`PROFILE_PREFERENCES` (removed when the browser goes).
    The profile's own context stays empty: the session makes its contexts from the browser, as ``launch`` would."""
    profile = tempfile.mkdtemp(prefix="notebook-agent-profile-")
    try:
        (Path(profile) / "Default").mkdir()
        (Path(profile) / "Default" / "Preferences").write_text(json.dumps(PROFILE_PREFERENCES), encoding="utf-8")
        own = await chromium.launch_persistent_context(profile, **options)
    except BaseException:
        shutil.rmtree(profile, ignore_errors=True)
        raise
    browser = own.browser
    if browser is None:  # not Chromium's: nothing to make contexts from
        await own.close()
        shutil.rmtree(profile, ignore_errors=True)
        raise BrowserError(f"{options.get('executable_path')} gave no browser to make contexts from")
    browser.on("disconnected", lambda _: shutil.rmtree(profile, ignore_errors=True))
    for page in own.pages:  # its first blank tab: no session's, never shown
        with contextlib.suppress(Exception):
            await page.close()
    return browser

"""Finding a browser, the not-found message, and surviving SIGINT to the process group (Jupyter's interrupt)."""

from __future__ import annotations

import asyncio
import os
import signal
import stat
import sys
import textwrap
from pathlib import Path

import pytest

from notebook_agent.browser import BrowserNotFoundError, BrowserSession, find_browser
from notebook_agent.browser.session import launch
from notebook_agent.browser.session.launch import driver_pid, start_playwright
from notebook_agent.testing import chromium_revision, launched


@pytest.fixture
def nothing_installed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.delenv("NOTEBOOK_AGENT_BROWSER", raising=False)
    monkeypatch.setenv("PLAYWRIGHT_BROWSERS_PATH", str(tmp_path / "pw-browsers"))
    monkeypatch.setattr(launch, "SYSTEM_PATHS", [str(tmp_path / "usr/bin/chromium")])
    monkeypatch.setattr(launch, "PATH_NAMES", ["no-such-chromium-here"])
    return tmp_path


def fake_executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_not_found_lists_every_place_and_how_to_install(nothing_installed: Path) -> None:
    with pytest.raises(BrowserNotFoundError) as info:
        find_browser()
    message = str(info.value)
    assert message.startswith("No Chromium/Chrome browser was found.\nPlaces tried:\n")
    assert "$NOTEBOOK_AGENT_BROWSER (not set)" in message
    assert str(nothing_installed / "pw-browsers") in message  # Playwright's own install location
    assert str(nothing_installed / "usr/bin/chromium") in message
    assert "`no-such-chromium-here` on PATH" in message
    assert "python -m playwright install chromium" in message
    assert "apt-get install chromium" in message
    assert len(info.value.tried) >= 4


def test_search_order(nothing_installed: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    system = fake_executable(nothing_installed / "usr/bin/chromium")
    assert find_browser() == str(system)
    revision = chromium_revision()
    assert revision
    pw = fake_executable(nothing_installed / f"pw-browsers/chromium-{revision}/chrome-linux64/chrome")
    if sys.platform.startswith("linux"):
        assert find_browser() == str(pw)  # Playwright's own Chromium before the system one
    env = fake_executable(nothing_installed / "custom/chrome")
    monkeypatch.setenv("NOTEBOOK_AGENT_BROWSER", str(env))
    assert find_browser() == str(env)
    explicit = fake_executable(nothing_installed / "explicit/chrome")
    assert find_browser(explicit) == str(explicit)


def test_explicit_path_that_does_not_exist_is_an_error(
    nothing_installed: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_executable(nothing_installed / "usr/bin/chromium")  # would be found, but an explicit path wins
    with pytest.raises(BrowserNotFoundError, match=r"executable_path=/nope/chrome \(not an executable file\)"):
        find_browser("/nope/chrome")
    monkeypatch.setenv("NOTEBOOK_AGENT_BROWSER", "/nope/env-chrome")
    with pytest.raises(BrowserNotFoundError, match=r"\$NOTEBOOK_AGENT_BROWSER=/nope/env-chrome"):
        find_browser()


async def test_session_start_raises_when_nothing_found(nothing_installed: Path) -> None:
    session = BrowserSession()
    with pytest.raises(BrowserNotFoundError):
        await session.start()
    assert launched(session)[0] is None  # Playwright was stopped again


async def test_driver_runs_in_its_own_session() -> None:
    original = asyncio.create_subprocess_exec
    pw = await start_playwright()
    try:
        pid = driver_pid(pw)
        assert pid is not None
        assert os.getsid(pid) != os.getsid(0)
        assert os.getpgid(pid) != os.getpgid(0)
    finally:
        await pw.stop()
    assert asyncio.create_subprocess_exec is original  # the spawn wrapper is removed again


CHILD = textwrap.dedent(
    """
    import asyncio, signal, sys
    from notebook_agent.browser import BrowserSession

    # A kernel installs its own SIGINT handler (ipykernel does), so this process does too: started from a
    # background job (CI, nohup, `make test &`) it would inherit SIGINT ignored, and never see the interrupt.
    given = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])
    print("START", given, flush=True)

    async def start(isolate):
        # Playwright's default handle_sigint=True: the driver closes the browser when *it* gets SIGINT
        b = BrowserSession(new_process_session=isolate, launch_options={"handle_sigint": True})
        await b.start()
        await b.page.set_content("<p>hello</p><button>Go</button>")
        return b

    async def idle():
        print("READY", flush=True)  # from inside the running loop, where the interrupt is to land
        await asyncio.sleep(30)

    loop = asyncio.new_event_loop()
    b = loop.run_until_complete(start(sys.argv[1] == "isolated"))
    try:
        loop.run_until_complete(idle())
        print("NO-INTERRUPT", flush=True)
    except KeyboardInterrupt:
        print("INTERRUPTED", flush=True)
    try:
        text = loop.run_until_complete(asyncio.wait_for(b.page.evaluate("document.querySelector('p').textContent"), 10))
        snap = loop.run_until_complete(asyncio.wait_for(b.snapshot(), 10))
        print("ALIVE", text, len(snap.elements), flush=True)
    except Exception as exc:
        print("DEAD", type(exc).__name__, flush=True)
    try:
        loop.run_until_complete(asyncio.wait_for(b.close(), 10))
    except Exception:
        pass
    """
)


async def run_child(mode: str, tmp_path: Path) -> list[str]:
    script = tmp_path / f"child_{mode}.py"
    script.write_text(CHILD)
    # the child leads its own process group, like a kernel whose group gets the interrupt
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(script),
        mode,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        start_new_session=True,
        cwd=str(Path(__file__).resolve().parents[3]),
    )
    assert proc.stdout is not None
    try:
        start = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode().strip()
        line = await asyncio.wait_for(proc.stdout.readline(), 60)
        assert line.decode().strip() == "READY", start
        os.killpg(proc.pid, signal.SIGINT)
        out, _ = await asyncio.wait_for(proc.communicate(), 60)
        return [start, *out.decode().split("\n")]
    finally:
        if proc.returncode is None:
            os.killpg(proc.pid, signal.SIGKILL)


async def test_sigint_to_process_group_leaves_the_browser_alive(tmp_path: Path) -> None:
    isolated, shared = await asyncio.gather(run_child("isolated", tmp_path), run_child("shared", tmp_path))
    assert "INTERRUPTED" in isolated, isolated
    assert "ALIVE hello 1" in isolated, isolated
    # control: without the new session the same interrupt reaches the driver, which closes the browser
    assert "INTERRUPTED" in shared, shared
    assert any(line.startswith("DEAD") for line in shared), shared

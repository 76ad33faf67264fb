"""A Chromium started as a process of its own with remote debugging on loopback: the "remote browser" the
evaluation tests connect to over CDP (directly, or from Dask workers)."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator

from notebook_agent.browser.launch import find_browser


@contextlib.contextmanager
def remote_chromium(*extra_args: str) -> Iterator[str]:
    """Start it (with ``extra_args``), yield its ``http://127.0.0.1:PORT`` DevTools URL, stop it after."""
    proc = subprocess.Popen(
        [
            find_browser(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--remote-debugging-address=127.0.0.1",
            "--remote-debugging-port=0",
            f"--user-data-dir={tempfile.mkdtemp(prefix='na-remote-')}",
            *extra_args,
            "about:blank",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert proc.stderr is not None
    deadline, url = time.monotonic() + 30, None
    while url is None and time.monotonic() < deadline:
        m = re.search(r"DevTools listening on ws://([^/\s]+)", proc.stderr.readline())
        url = f"http://{m.group(1)}" if m else None
    try:
        assert url, "the remote Chromium did not print its DevTools address"
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(10)

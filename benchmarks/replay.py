"""Record once, replay free: what repeating a run costs, three ways, against the run it repeats.

For the demo task on the demo shop, the median of ``--repeats`` (5) of each:

- original: ``agent.run(DEMO_TASK)`` with the offline demo model (a model call per step, answered at once: the
  demo model reads its answer off the page, so this is the agent's own work per step, not a model's);
- replay: ``await agent.replay(run)``: no model call (0 tokens), each element found again by its fingerprint,
  every action through the approval gate, a run file's worth of record;
- script: the run exported with ``to_playwright()`` (sync), its steps only: the locators and checks, no page
  reading.

Warm: one browser stays open for all of them (a notebook's kernel, a CI job that repeats many runs). Cold: each
one starts its own Chromium, as a single ``python replay.py`` does: the original and the replay with a
``BrowserSession`` each, the script as a subprocess, with Python's start-up and Playwright's import
(``python -c "import playwright.sync_api"``) measured apart and taken off.

When llama-server and the test model are on this machine (``python scripts/fetch_test_model.py 0.5b``; see
benchmarks/local_model.py), one more original run is timed with that real model (its server started and
warmed first, not counted), for what a replay saves against a real model rather than the instant demo one;
absent, that part is skipped. Figures, not asserts.

    .venv/bin/python benchmarks/replay.py [--repeats 5] [--no-local] [--local-model PATH.gguf]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from notebook_agent import BrowserSession, PageAgent
from notebook_agent.agent.runs.playwright_export import to_playwright, write_script
from notebook_agent.agent.runs.result import PageAgentResult
from notebook_agent.demo import DEMO_TASK, serve_demo
from notebook_agent.llm.local.llama_server import find_llama_server

ANSWER = "TrailSound Wireless Headphones Lite at $54.99"


async def timed(repeats: int, once: Callable[[], Awaitable[PageAgentResult]]) -> tuple[float, PageAgentResult]:
    """The median wall time of ``repeats`` calls of ``once``, and the last result (checked to have worked)."""
    times: list[float] = []
    result: PageAgentResult | None = None
    for _ in range(repeats):
        started = time.perf_counter()
        result = await once()
        times.append(time.perf_counter() - started)
        assert result.success and ANSWER in result.text, (result.status, result.text)
    assert result is not None
    return statistics.median(times), result


async def agent_figures(url: str, repeats: int) -> dict[str, Any]:
    """Original and replay, warm (one browser) and cold (a browser each)."""
    out: dict[str, Any] = {}
    async with BrowserSession() as browser:
        agent = PageAgent(model="demo", browser=browser, start_url=url, screenshots=False)
        out["original warm"], recorded = await timed(repeats, lambda: agent.run(DEMO_TASK))
        replayer = PageAgent(model="demo", browser=browser, screenshots=False)
        out["replay warm"], replayed = await timed(repeats, lambda: replayer.replay(recorded))
        assert replayed.usage.tokens == 0 and replayed.replay_counts == {"replayed": len(recorded.steps)}

    async def cold_original() -> PageAgentResult:
        return await PageAgent(model="demo", start_url=url, screenshots=False).run(DEMO_TASK)

    async def cold_replay() -> PageAgentResult:
        return await PageAgent(model="demo", screenshots=False).replay(recorded)

    out["original cold"], _ = await timed(repeats, cold_original)
    out["replay cold"], _ = await timed(repeats, cold_replay)
    out["recorded"] = recorded
    return out


def script_warm(script: str, repeats: int) -> float:
    """The exported script's steps (its ``replay(page)``) on a fresh page of one open browser, in this process."""
    from playwright.sync_api import sync_playwright

    namespace: dict[str, Any] = {"__name__": "exported"}  # not "__main__": nothing runs on exec
    exec(compile(script, "replay.py", "exec"), namespace)
    times: list[float] = []
    with sync_playwright() as pw:
        browser = namespace["launch"](pw.chromium, False)  # the script's own choice of Chromium
        try:
            for _ in range(repeats):
                page = browser.new_page(viewport={"width": 1280, "height": 800})
                printed = io.StringIO()
                started = time.perf_counter()
                with contextlib.redirect_stdout(printed):
                    code = namespace["replay"](page)
                times.append(time.perf_counter() - started)
                page.close()
                assert code == 0 and ANSWER in printed.getvalue(), printed.getvalue()
        finally:
            browser.close()
    return statistics.median(times)


def median_subprocess(args: list[str], repeats: int, expect: str = "") -> float:
    times: list[float] = []
    for _ in range(repeats):
        started = time.perf_counter()
        done = subprocess.run(args, capture_output=True, text=True, timeout=300)
        times.append(time.perf_counter() - started)
        assert done.returncode == 0 and expect in done.stdout, done.stderr[-2000:]
    return statistics.median(times)


async def local_original(url: str, model_path: Path, threads: int | None) -> dict[str, Any]:
    """One original run with a real model on llama-server (server start and a warm-up request not counted)."""
    from notebook_agent.llm import get_model

    started = time.perf_counter()
    model = get_model(f"local:{model_path}", build=False, threads=threads)
    server_s = time.perf_counter() - started
    async with BrowserSession() as browser:
        agent = PageAgent(model=model, browser=browser, start_url=url, screenshots=False, max_steps=12)
        await agent.run("Say done.")  # warms the server's prompt cache with the system prompt, as a session would
        started = time.perf_counter()
        result = await agent.run(DEMO_TASK)
        seconds = time.perf_counter() - started
    return {"seconds": seconds, "server_s": server_s, "result": result}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-local", action="store_true", help="skip the run with a local model")
    parser.add_argument("--threads", type=int, default=None, help="llama-server threads (default: its own)")
    default_model = Path.home() / ".cache" / "notebook_agent" / "models" / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
    parser.add_argument("--local-model", default=str(default_model), help="a .gguf for the real-model run")
    args = parser.parse_args()
    machine = f"{platform.platform()} · {os.cpu_count()} cores · Python {platform.python_version()}"
    print(f"{machine} · {time.strftime('%Y-%m-%d')}")
    print(f"demo task, median of {args.repeats}\n")

    with serve_demo() as shop, tempfile.TemporaryDirectory() as tmp:
        figures = asyncio.run(agent_figures(shop.url, args.repeats))
        recorded: PageAgentResult = figures.pop("recorded")
        script = to_playwright(recorded)
        path = write_script(script, Path(tmp) / "replay.py")
        figures["script warm"] = script_warm(script, args.repeats)
        startup = median_subprocess([sys.executable, "-c", "import playwright.sync_api"], args.repeats)
        whole = median_subprocess([sys.executable, str(path)], args.repeats, expect=ANSWER)
        figures["script cold"] = whole - startup
        local = None
        model_path = Path(args.local_model).expanduser()
        if not args.no_local and find_llama_server() is not None and model_path.is_file():
            local = asyncio.run(local_original(shop.url, model_path, args.threads))

    steps = len(recorded.steps)
    print(f"{'':16} {'original':>10} {'replay':>10} {'script':>10} {'replay/script':>14}")
    for kind in ("warm", "cold"):
        o, r, s = figures[f"original {kind}"], figures[f"replay {kind}"], figures[f"script {kind}"]
        print(f"{kind + ' (s)':16} {o:10.2f} {r:10.2f} {s:10.2f} {r / s:14.1f}")
    print(f"\n{steps} steps; tokens: original {recorded.usage.tokens} (demo model), replay 0, script 0")
    print(f"cold script: {whole:.2f} s as a subprocess, less {startup:.2f} s of Python start-up and Playwright import")
    if args.no_local:
        return 0
    if local is None:
        print("\nlocal model: skipped (no llama-server or no model file; see scripts/fetch_test_model.py)")
        return 0
    result: PageAgentResult = local["result"]
    right = ANSWER in result.text
    per_step = local["seconds"] / max(1, len(result.steps))
    print(
        f"\nlocal model {Path(args.local_model).name}: one original run {local['seconds']:.1f} s, {result.status}, "
        f"{len(result.steps)} steps ({per_step:.1f} s a step), {result.usage.tokens:,} tokens, "
        f"{'the right answer' if right else 'not the right answer'}; server start {local['server_s']:.1f} s not counted"
    )
    # A small model may stop early or wander: the comparison is per recorded step, and says so when it is.
    real = local["seconds"] if right and len(result.steps) == steps else per_step * steps
    how = "its run" if real == local["seconds"] else f"its {per_step:.1f} s a step x {steps} recorded steps (estimate)"
    print(
        f"replay vs real model (warm): {figures['replay warm']:.2f} s against {real:.1f} s ({how}): "
        f"{real / figures['replay warm']:.1f}x; the script {real / figures['script warm']:.1f}x"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

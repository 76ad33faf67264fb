"""``notebook-agent export RUN --to FILE``: a saved run as a Playwright-for-Python script, from a terminal.

The script does the run's steps again with no model and needs only Playwright (agent/runs/playwright_export.py
says how it is made and why it is safe to make from any run file). Nothing is launched here: the file is
written and its path printed with the command that runs it, so exporting works on a machine with no browser.
A run recorded by ``notebook-agent demo`` is on the demo shop's address: the command that serves it there
(``notebook-agent demo --serve``) is printed too. The script says in one line when its site does not answer.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .terminal import Commands


def add_parser(sub: Commands) -> None:
    ex = sub.add_parser("export", help="write a saved run as a Playwright script that replays it without a model")
    ex.add_argument("run", help="a run file, or a saved run: a position (1 oldest, -1 newest) or a run id's start")
    ex.add_argument("--runs-dir", default="agent_runs", help="where the runs are saved (default agent_runs)")
    flavour = ex.add_mutually_exclusive_group()
    flavour.add_argument("--sync", dest="mode", action="store_const", const="sync", help="Playwright's sync API")
    flavour.add_argument("--async", dest="mode", action="store_const", const="async", help="its async API")
    ex.add_argument("--base-url", default=None, help="the script's default base URL instead of the recorded origin")
    ex.add_argument("--to", required=True, metavar="FILE", help="the script file to write")


def export_command(args: argparse.Namespace) -> int:
    from ..agent.runs.playwright_export import to_playwright, write_script
    from ..agent.runs.run_file import find_run, load_run
    from ..config import options

    base = options.url(args.base_url) if args.base_url else None
    path = args.run if args.run.endswith(".jsonl") else str(find_run(args.runs_dir, args.run))
    recorded = load_run(path, with_screenshots=False)
    script = to_playwright(recorded, mode=args.mode or "sync", base_url=base)
    target = write_script(script, args.to)
    print(f"wrote {target}  (run {recorded.run_id}, {args.mode or 'sync'} API)")
    print(f"run it with: python {target} [--base-url URL] [--headed]")
    from ..demo.server import on_stable_address

    start = str(recorded.settings.get("start_url") or next((s.url for s in recorded.steps if s.url), ""))
    if base is None and on_stable_address(start):  # a `notebook-agent demo` run: its shop lives with a command
        print("its site is the demo shop: serve it with `notebook-agent demo --serve` (in another terminal) first")
    return 0

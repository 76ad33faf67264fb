"""``notebook-agent replay RUN``: a saved run's actions again from a terminal, with no model call.

Each element is found by what it was (its recorded fingerprint); a step that cannot be replayed goes to the
model (``--model``, else the configured one, else the offline demo model), or with ``--no-heal`` stops the replay
saying why. ``--url`` replays against another base URL (a staging recording against production). The approval
policy is the terminal's as for ``run`` (asked on a terminal, ``deny-risky`` without one, ``--approve`` to
choose); the replay is saved like any run (``--runs-dir``), so replaying it is free again.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any


def add_parser(sub: Any) -> None:
    rp = sub.add_parser("replay", help="replay a saved run's actions with no model call (healing what changed)")
    rp.add_argument("run", help="a run file, or a saved run: a position (1 oldest, -1 newest) or a run id's start")
    rp.add_argument("--runs-dir", default="agent_runs", help="where the runs are saved (default agent_runs)")
    rp.add_argument("--no-heal", action="store_true", help="stop at a step that cannot be replayed, saying why")
    rp.add_argument("--url", "-u", default=None, help="replay against this base URL instead of the recorded one")
    rp.add_argument("--model", "-m", default=None, help="the model that heals (default NOTEBOOK_AGENT_MODEL or demo)")
    rp.add_argument("--approve", default=None, help="auto, ask-risky (default on a terminal), ask-all, deny-risky")
    rp.add_argument("--headed", action="store_true", help="show the browser window")
    rp.add_argument("--json", action="store_true", help="print the result as JSON")


def replay_command(args: argparse.Namespace) -> int:
    return asyncio.run(_replay(args))


async def _replay(args: argparse.Namespace) -> int:
    from ..agent import PageAgent
    from ..agent.runs.run_file import find_run, load_run
    from ..browser.session.browser_session import BrowserSession
    from ..config import options
    from .terminal import Printer, model_for, terminal_approver

    path = args.run if args.run.endswith(".jsonl") else str(find_run(args.runs_dir, args.run))
    recorded = load_run(path, with_screenshots=False)
    base = options.url(args.url) if args.url else None
    if args.model is not None:
        options.model(args.model)
    interactive = sys.stdin.isatty()
    policy = options.approve(args.approve or ("ask-risky" if interactive else "deny-risky"))
    model, label = model_for(args.model, recorded.task)
    out = sys.stderr if args.json else sys.stdout
    print(f"replaying {recorded.run_id} ({len(recorded.steps)} steps); {label} heals a step that needs it", file=out)
    async with BrowserSession(headless=not args.headed) as browser:
        agent = PageAgent(
            model=model,
            browser=browser,
            approval=policy,
            approver=terminal_approver if interactive else None,
            screenshots=False,
            runs_dir=args.runs_dir,
        )
        result = await agent.replay(recorded, heal=not args.no_heal, url=base, on_event=Printer(out).event)
    print(result.replay_text(), file=out)
    if args.json:
        from ..agent.runs.run_file import result_to_dict

        print(json.dumps(result_to_dict(result), indent=2, ensure_ascii=False))
    return 0 if result.success else 1

"""``notebook-agent replay RUN``: a saved run's actions again from a terminal, with no model call.

Each element is found by what it was (its recorded fingerprint); a step that cannot be replayed goes to the
model (``--model``, else the configured one, else the offline demo model), or with ``--no-heal`` stops the replay
saying why. ``--url`` replays against another base URL (a staging recording against production). The approval
policy is the terminal's as for ``run`` (asked on a terminal, ``deny-risky`` without one, ``--approve`` to
choose); the replay is saved like any run (``--runs-dir``), so replaying it is free again. A run recorded by
``notebook-agent demo`` replays as it is: its shop is served again at its address while the replay runs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from dataclasses import replace
from typing import TYPE_CHECKING

from ..config.run_flags import add_run_flags

if TYPE_CHECKING:
    from .terminal import Commands

REPLAY_FLAGS = ("heal", "url", "model", "approve", "headed", "tracing")
"""The run flags of ``notebook-agent replay`` (config/run_flags.py: checked as everywhere else)."""


def add_parser(sub: Commands) -> None:
    rp = sub.add_parser("replay", help="replay a saved run's actions with no model call (healing what changed)")
    rp.add_argument("run", help="a run file, or a saved run: a position (1 oldest, -1 newest) or a run id's start")
    rp.add_argument("--runs-dir", default="agent_runs", help="where the runs are saved (default agent_runs)")
    add_run_flags(
        rp,
        REPLAY_FLAGS,
        heal="stop at a step that cannot be replayed, saying why",
        url="replay against this base URL instead of the recorded one",
        model="the model that heals (default NOTEBOOK_AGENT_MODEL or demo)",
    )
    rp.add_argument("--json", action="store_true", help="print the result as JSON")


def replay_command(args: argparse.Namespace) -> int:
    return asyncio.run(_replay(args))


async def _replay(args: argparse.Namespace) -> int:
    from ..agent.runs.run_file import find_run, load_run
    from ..browser.session.browser_session import BrowserSession
    from .run import run_options
    from .terminal import Printer, demo_shop_for, model_for, terminal_approver

    opts = run_options(args)  # the flags first: a typo is said whatever runs are saved
    path = args.run if args.run.endswith(".jsonl") else str(find_run(args.runs_dir, args.run))
    recorded = load_run(path, with_screenshots=False)
    interactive = sys.stdin.isatty()
    model, label = model_for(opts.model, recorded.task)
    out = sys.stderr if args.json else sys.stdout
    print(f"replaying {recorded.run_id} ({len(recorded.steps)} steps); {label} heals a step that needs it", file=out)
    start = str(recorded.settings.get("start_url") or next((s.url for s in recorded.steps if s.url), ""))
    with demo_shop_for(None if opts.url else start, out) as on_demo_shop:
        if on_demo_shop:  # a `notebook-agent demo` run: its site is the demo shop, which this command serves
            from ..demo.server import stable_url

            opts = replace(opts, url=stable_url())
        async with BrowserSession(headless=not opts.headed) as browser:
            # the replay's --url is the base URL the recorded one is replaced by, not a start URL
            agent = replace(opts, url=None).make_agent(
                model,
                browser=browser,
                approver=terminal_approver if interactive else None,
                screenshots=False,
                runs_dir=args.runs_dir,
            )
            result = await agent.replay(recorded, **opts.replay_options(), on_event=Printer(out).event)
    print(result.replay_text(), file=out)
    if args.json:
        from ..agent.runs.run_file import result_to_dict

        print(json.dumps(result_to_dict(result), indent=2, ensure_ascii=False))
    return 0 if result.success else 1

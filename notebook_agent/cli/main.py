"""The ``notebook-agent`` command: the same agent from a terminal. This module parses and dispatches; each
sub-command is a module of its own (``run``, ``evaluate``, ``map``, ``replay``, ``export``, ``snapshot``, ``doctor``).

Each subcommand imports only what it needs, so ``--help`` and ``--version`` answer instantly.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from .. import __version__
from ..config.run_flags import add_run_flags


class _Parser(argparse.ArgumentParser):
    """argparse that never takes an option by its prefix (``--max-step 3`` is a typo, not ``--max-steps``) and
    says "did you mean --max-steps?" for a misspelt option."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def _known_options(self) -> list[str]:
        known = [s for action in self._actions for s in action.option_strings]
        for action in self._actions:  # the sub-commands' options too: the top parser reports their leftovers
            if isinstance(action, argparse._SubParsersAction):
                for sub in set(action.choices.values()):
                    known += [s for a in sub._actions for s in a.option_strings]
        return known

    def error(self, message: str) -> NoReturn:
        from ..config.options import unknown_options_message

        super().error(unknown_options_message(message, self._known_options()))


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="notebook-agent",
        description="An LLM browser agent for Jupyter, Python and the terminal.",
    )
    parser.add_argument("--version", action="version", version=f"notebook-agent {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    snap = sub.add_parser("snapshot", help="print what the model would see of a page")
    snap.add_argument("url")
    snap.add_argument(
        "--full-page", action="store_true", help="the whole page, not just the viewport (up to 40,000 characters)"
    )
    snap.add_argument("--json", action="store_true", help="elements, timings and a token count as JSON")

    run = sub.add_parser("run", help="run the page agent on a task")
    run.add_argument("task")
    add_run_flags(run, RUN_FLAGS, **TERMINAL_HELP)
    run.add_argument("--json", action="store_true", help="print the result as JSON")
    run.add_argument("--runs-dir", default="agent_runs", help="save the run here (default agent_runs)")

    demo = sub.add_parser("demo", help="run the demo task on the bundled demo shop")
    demo.add_argument("--lab", action="store_true", help="open JupyterLab on the quickstart notebook instead")
    demo.add_argument(
        "--port", type=int, default=None, help="with --lab: the port JupyterLab listens on (default: its own)"
    )
    demo.add_argument("--model", "-m", default=None, help="provider:model (default: NOTEBOOK_AGENT_MODEL or offline)")
    demo.add_argument(
        "--local",
        metavar="MODEL.gguf",
        default=None,
        help="drive the demo with a real model on this machine: a GGUF file or hf:OWNER/REPO/FILE.gguf (fetched "
        "once from the Hugging Face Hub), run on llama-server; or ollama:NAME",
    )
    demo.add_argument("--threads", type=int, default=None, help="with --local MODEL.gguf: llama-server's threads")
    demo.add_argument("--context", type=int, default=None, help="with --local MODEL.gguf: context size in tokens")
    demo.add_argument("--server-port", type=int, default=None, help="with --local MODEL.gguf: llama-server's port")
    demo.add_argument(
        "--shop-port", type=int, default=None, help="the demo shop's port (default 8765, or NOTEBOOK_AGENT_DEMO_PORT)"
    )
    demo.add_argument(
        "--serve", action="store_true", help="only serve the demo shop until Ctrl-C (for an exported demo run)"
    )
    demo.add_argument("--headed", action="store_true", help="show the browser window")
    demo.add_argument("--profile", default=None, help="prompt profile: auto (small for a local model), default, small")
    demo.add_argument("--runs-dir", default="agent_runs", help="save the run here (default agent_runs)")

    ev = sub.add_parser("eval", help="evaluate variants (models, prompts, settings) over a task suite")
    ev.add_argument("suite", help="a YAML or JSON suite file")
    ev.add_argument("--model", "-m", action="append", default=[], help="one variant per model (repeatable)")
    ev.add_argument("--repeats", type=int, default=1)
    ev.add_argument("--concurrency", type=int, default=2)
    ev.add_argument(
        "--var",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="fill {NAME} in the suite ({demo} is the bundled demo shop)",
    )
    ev.add_argument("--cdp-url", default=None, help="run in a remote Chromium (DevTools URL)")
    ev.add_argument("--json", action="store_true", help="print every run as JSON")

    mp = sub.add_parser("map", help="run one task for every row of a table (CSV, JSON Lines, parquet)")
    mp.add_argument(
        "task", nargs="?", default=None, help="the task, {column} filled from each row ({{ and }} for literal braces)"
    )
    add_run_flags(mp, MAP_FLAGS, **TERMINAL_HELP, url="open this URL first; {column} is filled from each row")
    mp.add_argument("--runs-dir", default="agent_runs", help="where --recipe RUN is looked up (default agent_runs)")
    mp.add_argument("--rows", required=True, metavar="ROWS", help="the input table: .csv, .jsonl, .json or .parquet")
    mp.add_argument("--out", required=True, metavar="OUT", help="the table written: .csv, .jsonl, .json or .parquet")
    mp.add_argument("--isolation", choices=("tab", "context"), default="tab", help="each row's own tab or context")
    mp.add_argument(
        "--yes",
        "-y",
        action="store_true",
        help="go on without asking: a map of more than 20 rows with no budget otherwise runs its first 5 rows and "
        "asks whether to go on at their cost (without a terminal to ask, it does not start)",
    )
    mp.add_argument(
        "--raw-cells",
        action="store_true",
        help="write CSV cells starting with = + - @ as they are (default: a ' in front, so no spreadsheet runs them)",
    )

    from .replay import add_parser as add_replay

    add_replay(sub)
    from .export import add_parser as add_export

    add_export(sub)
    sub.add_parser("doctor", help="show which browser and model would be used")
    sub.add_parser("models", help="the model providers: API keys set, packages installed, local servers")
    return parser


RUN_FLAGS = ("url", "model", "max_steps", "approve", "headed", "vision", "js", "profile", "trace", "tracing",
             "output", "allowed_domains", "max_cost", "max_tokens")  # fmt: skip
"""The run flags of ``notebook-agent run`` (config/run_flags.py: the same flags, checks and messages as %%agent)."""

MAP_FLAGS = ("recipe", "heal", "mode", "url", "model", "max_steps", "approve", "output", "headed", "vision", "js",
             "profile", "concurrency", "allowed_domains", "tracing", "max_cost", "max_tokens", "row_max_cost",
             "row_max_tokens")  # fmt: skip
"""The run flags of ``notebook-agent map``."""

TERMINAL_HELP = {
    "output": "the answer's type: a JSON Schema file, or module:Class (list[module:Class] for a list)",
    "recipe": "replay RUN per row with its values, no model call (a run file, a saved run or a recipe file)",
}


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    try:
        if args.command == "snapshot":
            from .snapshot import snapshot_command

            return snapshot_command(args.url, full_page=args.full_page, as_json=args.json)
        if args.command == "run":
            from .run import run_command, run_options

            opts = run_options(args)
            return asyncio.run(run_command(args.task, opts, as_json=args.json, runs_dir=args.runs_dir))
        if args.command == "demo":
            from .run import demo_command

            return demo_command(args)
        if args.command == "eval":
            from .evaluate import eval_command

            return eval_command(args)
        if args.command == "map":
            from .map import map_command

            return map_command(args)
        if args.command == "replay":
            from .replay import replay_command

            return replay_command(args)
        if args.command == "export":
            from .export import export_command

            return export_command(args)
        if args.command == "doctor":
            from .doctor import doctor_command

            return doctor_command()
        if args.command == "models":
            from ..llm.availability import check_models, models_table

            print(models_table(check_models()))
            return 0
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        from ..core.errors import error_message, says_what_to_do

        if says_what_to_do(exc):
            print(f"error: {error_message(exc)}", file=sys.stderr)
            return 2
        raise
    parser.error(f"unknown command {args.command!r}")  # pragma: no cover
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

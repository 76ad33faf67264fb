"""The ``notebook-agent`` command: the same agent from a terminal.

Each subcommand imports only what it needs, so ``--help`` and ``--version`` answer instantly.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from . import __version__


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="notebook-agent",
        description="An LLM browser agent for Jupyter, Python and the terminal.",
    )
    parser.add_argument("--version", action="version", version=f"notebook-agent {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    snap = sub.add_parser("snapshot", help="print what the model would see of a page")
    snap.add_argument("url")
    snap.add_argument("--full-page", action="store_true", help="the whole page, not just the viewport")
    snap.add_argument("--json", action="store_true", help="elements, timings and a token count as JSON")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    if args.command == "snapshot":
        from .browser.cli import snapshot_command

        return snapshot_command(args.url, full_page=args.full_page, as_json=args.json)
    parser.error(f"unknown command {args.command!r}")  # pragma: no cover - argparse rejects it first
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

"""``%agent export RUN [--sync|--async] [--to FILE]``: a saved run as a Playwright-for-Python script.

The script does the run's steps again with no model (agent/runs/playwright_export.py). With ``--to`` it is written
to a file; without, it is put in the next cell, where it runs as it is (it takes a thread of its own there, since the
kernel's event loop is running) and can be read and edited first. Kept apart from :mod:`.commands` so that
class stays one screenful per command.
"""

from __future__ import annotations

from ..config import options
from .kernel_state import STATE

USAGE = "usage: %agent export RUN [--sync|--async] [--to FILE]"


def export_run(rest: list[str]) -> None:
    """Do ``%agent export`` with the words after ``export``; a mistake is one printed line, as for every magic."""
    from IPython import get_ipython

    from ..agent.runs.playwright_export import to_playwright, write_script
    from ..agent.runs.run_file import find_run, load_run

    if not rest or rest[0].startswith("--") or ("--sync" in rest and "--async" in rest):
        print(USAGE)
        return
    words = [w for w in rest[1:] if w not in ("--sync", "--async")]
    if words and words[0] != "--to":
        print(f"%agent export: Unknown option {words[0]!r}.{options.did_you_mean(words[0], ['--to'])} Options: --to.")
        return
    if words and len(words) != 2:
        print("%agent export: --to needs a value" if len(words) == 1 else USAGE)
        return
    try:
        saved = load_run(find_run(STATE.config.runs_dir, rest[0]), with_screenshots=False)
        script = to_playwright(saved, mode="async" if "--async" in rest else "sync")
        path = write_script(script, words[1]) if words else None
    except (ValueError, OSError) as exc:
        print(f"%agent export: {exc}")
        return
    if path is not None:
        print(f"Wrote {path}: run it with python {path} [--base-url URL] [--headed]")
        return
    get_ipython().set_next_input(script)
    print(f"The script of run {saved.run_id} is in the next cell: run it there, or save it and run it with python.")

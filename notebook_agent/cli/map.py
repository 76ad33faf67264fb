"""``notebook-agent map TASK --rows ROWS.csv --out OUT.csv``: one task over every row of a table, from a terminal.

The table is read and the template checked against its columns before any browser starts, and the output's
extension too, so a typo fails in a second rather than after the last row. Rows run unattended (an approval
question cannot be asked of a person for forty rows at once: use ``--approve auto`` or ``deny-risky``); each
finished row prints one line, and the table written is the same as ``MapResult.to_pandas()``. An interrupt
(Ctrl-C) stops the running rows and still writes every finished one. The exit code is 1 when any row failed.

Costs: ``--max-cost``/``--max-tokens`` bound the whole map, ``--row-max-cost``/``--row-max-tokens`` each row
(agent/batch/map_budget.py). A map of more than 20 rows with neither, of a model that costs something, runs its
first 5 rows and asks at the prompt whether to go on at their cost; ``--yes`` goes on without asking, and without
a terminal to ask (and no ``--yes``) the map does not start, saying so: never a question nobody can answer.

CSV and JSON Lines need nothing more; parquet needs pandas and pyarrow.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..agent.batch.map_budget import EstimateQuestion
    from ..agent.batch.map_runner import MapEvent, MapProgress
    from ..agent.batch.map_table import MapResult
    from ..agent.recipes.recipe import Recipe
    from ..agent.run_options import RunOptions

FORMATS = (".csv", ".jsonl", ".json", ".parquet")


def _format(path: str, option: str) -> str:
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise ValueError(f"{option} {path}: the format is read from the extension, one of {', '.join(FORMATS)}.")
    return suffix


def _parquet_pandas() -> Any:
    try:
        import pandas
        import pyarrow  # noqa: F401
    except ImportError:
        raise ImportError('Parquet needs pandas and pyarrow: pip install "notebook-agent[data]" pyarrow') from None
    return pandas


def read_rows(path: str) -> Any:
    """The rows of a CSV (every value a string, as written), JSON Lines or JSON (a list) file, or parquet (a
    DataFrame)."""
    kind = _format(path, "--rows")
    file = Path(path)
    if not file.is_file():
        raise ValueError(f"--rows {path}: there is no such file.")
    if kind == ".parquet":
        return _parquet_pandas().read_parquet(file)
    text = file.read_text(encoding="utf-8-sig")
    if kind == ".csv":
        return [dict(row) for row in csv.DictReader(text.splitlines())]
    try:
        if kind == ".json":
            rows = json.loads(text)
            if not isinstance(rows, list):
                raise ValueError(f"--rows {path}: a JSON file of rows holds a list (of objects or values).")
            return rows
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    except json.JSONDecodeError as exc:
        raise ValueError(f"--rows {path}: not valid JSON at line {exc.lineno}: {exc.msg}.") from None


def _cell(value: object) -> object:
    """A value one cell can hold in any of the formats: nested data as JSON text."""
    return json.dumps(value, ensure_ascii=False, default=str) if isinstance(value, (dict, list)) else value


def _parquet_frame(records: list[dict[str, Any]], columns: list[str]) -> Any:
    """The table as a DataFrame parquet can hold: a column whose values are of more than one kind (a row's
    number among others' text, as JSON rows may have) or hold an integer past 64 bits is written as text, so one
    row's value never stops the table being written."""
    frame = _parquet_pandas().DataFrame(records, columns=columns)
    for name in columns:
        kinds = {type(v) for v in frame[name] if v is not None and v == v}  # None and NaN are empty cells
        wide = any(isinstance(v, int) and not -(2**63) <= v < 2**63 for v in frame[name])  # past parquet's int64
        if wide or (len(kinds) > 1 and not kinds <= {int, float}):
            frame[name] = [None if v is None or v != v else str(v) for v in frame[name]]
    return frame


def write_table(result: MapResult, path: str, *, raw_cells: bool = False) -> None:
    """``result``'s table (:meth:`~notebook_agent.agent.batch.map_table.MapResult.records`) to ``path``, in the format
    its extension names. In a CSV, a cell a spreadsheet would run as a formula gets a single quote in front unless
    ``raw_cells`` (see :mod:`notebook_agent.agent.batch.map_cells`); the other formats keep every value as it is."""
    from ..agent.batch.map_cells import write_csv

    kind = _format(path, "--out")
    columns = result.table_columns()
    records = [{k: _cell(v) for k, v in r.items()} for r in result.records()]
    if kind == ".parquet":
        _parquet_frame(records, columns).to_parquet(path, index=False)
    elif kind == ".csv":
        write_csv(path, columns, records, raw=raw_cells)
    elif kind == ".json":
        Path(path).write_text(json.dumps(records, ensure_ascii=False, indent=1, default=str) + "\n", encoding="utf-8")
    else:
        lines = "".join(json.dumps(r, ensure_ascii=False, default=str) + "\n" for r in records)
        Path(path).write_text(lines, encoding="utf-8")


def _time_left(seconds: float) -> str:
    """``42s``, ``17 min``, ``2.5 h``: what a person reads at a glance in a long map's lines."""
    if seconds < 90:
        return f"{seconds:.0f}s"
    return f"{seconds / 60:.0f} min" if seconds < 90 * 60 else f"{seconds / 3600:.1f} h"


def row_line(progress: MapProgress) -> str:
    """The line a finished row prints in the terminal: its mark, count, status, steps, seconds, answer, rows/min
    and the time left."""
    rec = progress.record
    r = rec.facts
    said = (r.answer if r is not None else "") or (r.error if r is not None else None) or rec.error or ""
    said = " ".join(str(said).split())
    said = said if len(said) <= 100 else said[:99] + "…"
    steps = f"{r.steps} steps" if r is not None else "-"
    mark = "✓" if rec.success else "✗"
    count = f"[{progress.done}/{progress.total}]"
    left = (
        f", {_time_left(progress.eta_s)} left" if progress.eta_s is not None and progress.done < progress.total else ""
    )
    pace = f"  · {progress.rows_per_minute:.1f}/min{left}"
    replay = r.replay_text() if r is not None else ""
    said = f"({replay}) {said}" if replay else said
    return f"  {mark} {count:>9} row {rec.index:<4} {rec.status:<11} {steps:>8} {rec.seconds:6.1f}s  {said}{pace}"


def map_command(args: argparse.Namespace) -> int:
    """Check everything, read the rows, run the map, write the table (the finished rows also after Ctrl-C)."""
    from ..config import options
    from ..config.run_flags import run_options

    # the flags' checks and messages are %%agent's (config/run_flags.py); a map's --url is each row's start page,
    # with or without --recipe, and may hold {column}s (browser/url_template.py: the rule of every front)
    opts = run_options(args, url_template=True).with_defaults(approve="deny-risky", max_steps=20, concurrency=4)
    policy = opts.approve
    if policy is not None and policy.startswith("ask"):
        raise options.OptionError(
            f"--approve {policy}: map runs its rows unattended, so no one could answer; use auto or deny-risky."
        )
    _format(args.out, "--out")
    if not Path(args.out).resolve().parent.is_dir():
        raise ValueError(f"--out {args.out}: the folder it would go in does not exist.")
    name = opts.model or os.environ.get("NOTEBOOK_AGENT_MODEL") or "demo"
    if name.startswith("replay:"):
        raise options.OptionError("--model replay:RUN replays one run's answers; a map needs a model for every row.")
    rows = read_rows(args.rows)
    from ..agent.batch.map_budget import ASK_ABOVE
    from ..agent.batch.map_runner import start_pages
    from ..agent.batch.map_table import check_template, normalise_rows

    columns, values = normalise_rows(rows)  # a typo in a placeholder is said before any browser starts
    recipe = None
    if getattr(args, "recipe", None):
        from ..agent.recipes.recipe import open_recipe

        recipe = open_recipe(args.recipe, template=args.task, runs_dir=args.runs_dir)
        args.task = recipe.task
    elif not args.task:
        raise options.OptionError("map needs the TASK (with {column}s), or --recipe RUN.")
    if opts.mode is not None and recipe is None:
        raise options.OptionError(f"--mode {opts.mode}: how a recipe's rows go; give --recipe RUN too.")
    check_template(args.task, columns, values)
    start_pages(opts.url, columns, values)
    ask = len(values) > ASK_ABOVE and opts.max_cost is None and opts.max_tokens is None and not args.yes
    if ask and recipe is None and not _free(name) and not sys.stdin.isatty():
        raise options.OptionError(
            f"This map of {len(values):,} rows has no budget, and there is no terminal to ask whether to go on once "
            "its first rows show what it costs: pass --yes to run every row, or --max-cost / --max-tokens to bound it."
        )
    from .terminal import demo_shop_for

    # a demo run's recipe starts on the demo shop's address: served again there while the rows run
    with demo_shop_for(opts.url or (recipe.start_url if recipe is not None else None), sys.stdout):
        result, interrupted = asyncio.run(_map(args, rows, name, opts, recipe, ask))
    write_table(result, args.out, raw_cells=getattr(args, "raw_cells", False))
    if interrupted:
        print(f"\ninterrupted: {result.summary()}\nwritten: {args.out}", file=sys.stderr)
        return 130
    rate = 60 * len(result.rows) / result.elapsed_s if result.elapsed_s else 0.0
    note = f"\n{result.note}" if result.note else ""
    print(f"{note}\n{result.summary()} · {rate:.1f} rows/min\nwritten: {args.out}")
    return 1 if result.failed else 0


async def _map(
    args: argparse.Namespace, rows: object, name: str, opts: RunOptions, recipe: Recipe | None = None, ask: bool = False
) -> tuple[MapResult, bool]:
    from ..agent.batch.map_budget import MapEstimated
    from ..agent.batch.map_runner import MapInterrupted, MapProgress
    from ..browser.session.browser_session import BrowserSession
    from ..llm import get_model

    model = get_model(name)
    print(f"model: {model.provider}:{model.id}" + (" (offline demo model)" if model.provider == "demo" else ""))
    url, concurrency = opts.url, opts.concurrency
    async with BrowserSession(headless=not opts.headed) as browser:
        # each row's start URL is its own (the template filled), given to map, not the agent
        # the agent of the rows: each row's budget is --row-max-cost/--row-max-tokens, the map keeps the whole one
        agent = replace(opts, url=None).make_agent(model, row=True, browser=browser, screenshots=False)
        asking: set[asyncio.Task[None]] = set()
        budget = {k: v for k, v in opts.map_options().items() if k in ("max_cost", "max_tokens")}

        def on_event(event: MapEvent) -> None:
            if isinstance(event, MapProgress) and event.ended:
                print(row_line(event), flush=True)
            elif isinstance(event, MapEstimated):  # the first rows ran: go on at their cost?
                task = asyncio.get_running_loop().create_task(ask_to_go_on(event.question))
                asking.add(task)
                task.add_done_callback(asking.discard)

        try:
            if recipe is not None:  # each row replays the recipe; the model only heals
                result = await recipe.map(
                    rows, agent, heal=opts.heal, start_url=url, concurrency=concurrency, on_event=on_event,
                    mode=opts.mode or "auto", ask_estimate=ask, **budget,
                )  # fmt: skip
                print(f"rows went {result.way}")
            else:
                result = await agent.map(
                    args.task,
                    rows,
                    concurrency=concurrency,
                    isolation=args.isolation,
                    start_url=url,
                    on_event=on_event,
                    ask_estimate=ask,
                    **budget,
                )
        except MapInterrupted as stopped:  # Ctrl-C: the rows were stopped, the finished ones are kept
            return stopped.result, True
    return result, False


def _free(name: str) -> bool:
    """The model named ``name`` costs nothing (a model on this machine, the demo): its map has nothing to ask."""
    from ..agent.batch.map_budget import is_free
    from ..config.models import choose_model

    try:
        return is_free(choose_model(name, "")[0])
    except Exception:
        return False  # a model that cannot be built says so when the map starts


async def ask_to_go_on(question: EstimateQuestion) -> None:
    """The map's first rows ran: say what the whole would cost at their rate, and ask whether to go on."""
    print(f"\n  {question.estimate.text()}", flush=True)
    answer = await asyncio.to_thread(input, "  go on with the rest? [y]es / [N]o: ")
    if answer.strip().lower() in ("y", "yes"):
        question.proceed()
    else:
        question.stop()

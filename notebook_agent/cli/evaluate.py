"""``notebook-agent eval SUITE``: every variant (models, prompts, settings) on every task of a suite, as a table."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..agent.evaluate import EvalRow, Job


def eval_command(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ..agent.evaluate import Variant, evaluate, load_suite

    variables: dict[str, str] = {}
    for item in args.var:
        name, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"--var takes NAME=VALUE, got {item!r}")
        variables[name] = value
    suite_path = Path(args.suite)
    if not suite_path.is_file():
        raise ValueError(f"There is no suite file {args.suite!r}: give the path of a YAML or JSON suite.")
    if "{demo}" in suite_path.read_text(encoding="utf-8") and "demo" not in variables:
        from ..demo import demo_url

        variables["demo"] = demo_url()
    suite = load_suite(args.suite, variables)
    variants = [Variant(name=m, model=m) for m in args.model] or suite.variants or [Variant("default")]

    def progress(kind: str, job: Job, row: EvalRow | None) -> None:
        if row is not None:
            mark = "pass" if row.passed else "FAIL"
            print(
                f"  {mark} {row.variant:16} {row.task:16} #{row.repeat} {row.steps} steps {row.seconds:.1f}s "
                + ("; ".join(row.failures) if row.failures else ""),
                file=sys.stderr,
            )

    from ..config.models import variant_model
    from ..llm.ledger import cost_text

    run = evaluate(
        suite,
        variants,
        repeats=args.repeats,
        concurrency=args.concurrency,
        cdp_url=args.cdp_url,
        on_progress=progress,
        model_factory=variant_model,
    )
    report = asyncio.run(run)
    if args.json:
        print(json.dumps({"suite": report.suite, "summary": report.summary(), "runs": report.records()}, indent=2))
    else:
        print(f"\n{report.suite}: {len(report.rows)} runs")
        print(f"{'variant':20} {'success':>8} {'steps':>6} {'tokens':>8} {'cost':>12} {'time s':>7}")
        for row in report.summary():
            print(
                f"{row['variant']:20} {row['success_rate']:8.0%} {row['mean_steps']:6.1f} "
                f"{row['mean_tokens']:8.0f} {cost_text(row['total_cost']):>12} {row['mean_seconds']:7.1f}"
            )
    return 0

"""``await evaluate(...)`` in a notebook: the same evaluation, with a progress bar and a live table.

The work is :func:`notebook_agent.agent.evaluate.evaluate`; this wrapper only renders its progress, so the
evaluation itself stays usable from scripts and the terminal.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as w

from ..agent.evaluate import EvalReport, EvalRow, Job
from ..agent.evaluate import evaluate as _evaluate
from ..config.models import variant_model
from ..core.errors import error_message
from ..core.text.shown import html_block, shown
from .views.display import LiveOutput, waiting_html


async def evaluate(*args: Any, **kwargs: Any) -> EvalReport:
    """Same arguments as :func:`notebook_agent.agent.evaluate.evaluate`; shows progress while it runs."""
    bar = w.IntProgress(value=0, min=0, max=1, description="runs")
    label = w.Label("starting…")
    table = w.HTML()
    box = w.VBox([w.HBox([bar, label]), table])
    box.add_class("na-eval")
    output = LiveOutput(box, waiting_html("Evaluation", "A notebook_agent evaluation"), "notebook_agent evaluation")
    rows: list[EvalRow] = []
    running = 0
    user_progress = kwargs.pop("on_progress", None)

    def on_progress(kind: str, job: Job, row: EvalRow | None) -> None:
        nonlocal running
        if kind == "started":
            running += 1
            bar.max = max(bar.max, bar.value + running)
        else:
            running -= 1
            bar.value += 1
            if row is not None:
                rows.append(row)
                table.value = EvalReport(suite="", rows=list(rows))._repr_html_()
        label.value = f"{bar.value} done, {running} running"
        if user_progress is not None:
            user_progress(kind, job, row)

    kwargs.setdefault("model_factory", variant_model)
    try:
        report = await _evaluate(*args, on_progress=on_progress, **kwargs)
    except BaseException as exc:  # the runs that finished stay in the output, with what stopped the rest
        done = EvalReport(suite="", rows=list(rows))._repr_html_() if rows else ""
        why = error_message(exc) if isinstance(exc, Exception) else "The evaluation was interrupted."
        output.settle(done + html_block(shown(why), style="color:#cf222e"), why)
        raise
    bar.max = bar.value = len(report.rows)
    label.value = f"{len(report.rows)} runs done"
    table.value = report._repr_html_()
    output.settle(table.value, f"{len(report.rows)} runs done")
    return report

"""HTML for prompt tuning: what the model saw in a step, the runs table, two runs side by side, prompt diffs.

Pure functions from results to HTML strings, so the magics stay thin and the rendering is testable without a
front end.
"""

from __future__ import annotations

import difflib
import json

from ...agent import PageAgentResult, PageStep
from ...agent.runs.run_file import Comparison
from ...core.text.shown import html_block, shown
from ...llm.ledger import cost_text
from .html import TONES, result_label


def _e(value: object) -> str:
    """The views' one escaping (a newline is a ``<br>``, a line break in a ``<pre>`` too)."""
    return shown(value, "html")


def _pre(text: str) -> str:
    """Long text in a ``<pre>``: each line escaped, the line breaks kept as they are (copied as they were)."""
    lines = "\n".join(_e(line) for line in shown(text, "plain").split("\n"))
    return (
        "<pre style='white-space:pre-wrap;max-height:420px;overflow:auto;background:#f6f8fa;padding:6px;"
        f"border-radius:4px;font-size:12px'>{lines}</pre>"
    )


def inspect_html(step: PageStep) -> str:
    """The request as sent (system prompt, state message, tool schema), the raw output, tokens and cost."""
    parts = []
    req = step.request
    if req is None:
        return html_block("<i>No request was recorded for this step.</i>")
    u = step.usage
    parts.append(
        f"<div><b>Tokens</b> in {u.input + u.cache_write:,} · cached {u.cache_read:,} · out {u.output:,}"
        + (f" (reasoning {u.reasoning:,})" if u.reasoning else "")
        + f" · {_e(cost_text(u.dollars))} · model {step.model_ms:.0f} ms · state {step.state_ms:.0f} ms"
        + (f" · {req.images} image(s)" if req.images else "")
        + "</div>"
    )
    parts.append(
        f"<details><summary><b>System prompt</b> ({len(req.system_prompt):,} chars)</summary>"
        f"{_pre(req.system_prompt)}</details>"
    )
    parts.append(
        f"<details open><summary><b>State message</b> ({len(req.state):,} chars)</summary>{_pre(req.state)}</details>"
    )
    schema = json.dumps(req.tools, indent=1, ensure_ascii=False)
    parts.append(
        f"<details><summary><b>Tool schema</b> (tool_choice={_e(req.tool_choice)}, "
        f"{len(schema):,} chars)</summary>{_pre(schema)}</details>"
    )
    if step.output is not None:
        raw = json.dumps(
            step.output.model_dump(mode="json", include={"content", "stop_reason", "error_message"}),
            indent=1,
            ensure_ascii=False,
        )
        parts.append(f"<details><summary><b>Raw model output</b></summary>{_pre(raw)}</details>")
    return html_block("".join(parts))


def short_task(task: str, limit: int = 60) -> str:
    """A task cut at a word boundary (with an ellipsis) so a table column never ends mid-word."""
    text = " ".join(task.split())
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0] if " " in text[:limit] else text[:limit]
    return cut.rstrip(",.;:") + " …"


def runs_table_html(runs: list[PageAgentResult]) -> str:
    rows = []
    for r in runs:
        tokens = r.usage.tokens
        color = "#1a7f37" if r.success else "#cf222e"
        rows.append(
            f"<tr><td><code>{_e(r.run_id)}</code></td><td style='color:{color}'>{_e(r.status)}</td>"
            f"<td>{len(r.steps)}</td><td>{tokens:,}</td><td>{_e(cost_text(r.usage.dollars))}</td>"
            f"<td>{r.duration_s:.1f}s</td><td><code>{_e(r.prompt_version)}</code></td><td>{_e(r.model)}</td>"
            f"<td title='{shown(r.task, 'attribute')}'>{_e(short_task(r.task))}</td></tr>"
        )
    head = "".join(
        f"<th>{h}</th>" for h in ("run", "status", "steps", "tokens", "cost", "time", "prompt", "model", "task")
    )
    return html_block(f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>")


LEFT = "text-align:left;vertical-align:top"
"""Text cells read from the left (JupyterLab right-aligns table cells by default)."""


def _cell(step: PageStep | None) -> str:
    if step is None:
        return f"<td style='{LEFT};color:#8c959f'>—</td>"
    if step.action is None:
        return f"<td style='{LEFT};color:#cf222e'>invalid output: {_e(step.output_error)}</td>"
    _label, tone = result_label(step)
    color = "inherit" if tone == "ok" else TONES[tone]
    return (
        f"<td style='{LEFT}'><code>{_e(step.action)} {_e(json.dumps(step.args, ensure_ascii=False))}</code><br>"
        f"<small style='color:{color}'>{_e(step.result[:160])}</small></td>"
    )


def compare_html(c: Comparison) -> str:
    """Two runs side by side, step by step, with the first divergence marked, then a summary."""
    rows = []
    for d in c.steps:
        mark = ""
        style = ""
        if d.index == c.first_divergence:
            mark = f" ◀ first divergence ({c.divergence_kind})"
            style = " style='background:#fff8c5'"
        elif not d.same_result:
            style = " style='background:#f6f8fa'"
        rows.append(f"<tr{style}><td style='{LEFT}'>{d.index}{mark}</td>{_cell(d.a)}{_cell(d.b)}</tr>")
    summary = "".join(
        f"<tr><td style='{LEFT}'>{_e(k)}</td><td style='{LEFT}'>{_e(a)}</td><td style='{LEFT}'>{_e(b)}</td></tr>"
        for k, a, b in c.summary()
    )
    verdict = (
        "The runs took the same actions with the same results."
        if c.first_divergence is None
        else f"First divergence at step {c.first_divergence} ({c.divergence_kind})."
    )
    th = f"<th style='{LEFT}'>"
    return html_block(
        f"<div><b>{verdict}</b></div>"
        f"<table><thead><tr>{th}step</th>{th}A <code>{_e(c.a.run_id)}</code></th>"
        f"{th}B <code>{_e(c.b.run_id)}</code></th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
        f"<table><thead><tr>{th}</th>{th}A</th>{th}B</th></tr></thead><tbody>{summary}</tbody></table>"
    )


def prompt_diff(default: str, active: str) -> str:
    """A unified diff of the active prompt against the default (empty when they are the same)."""
    return "".join(
        difflib.unified_diff(
            default.splitlines(keepends=True), active.splitlines(keepends=True), "default", "active", n=1
        )
    )


def pre_html(text: str) -> str:
    """Long text (a snapshot, a prompt, a diff) as one output block."""
    return html_block(_pre(text))

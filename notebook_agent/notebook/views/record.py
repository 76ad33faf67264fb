"""The static record of a finished run: plain HTML that needs no kernel and no widget manager.

A widget view needs the kernel that made it: where none runs (GitHub, nbviewer, a notebook opened later) it is
blank or "Error displaying widget: model not found". When a run ends its view's output is replaced by this
record (``text/html``), so the saved notebook shows the task, the outcome and every step (reflection, action,
approval, result, a thumbnail of the page) wherever it is opened.

Only inline styles and basic tags (viewers that sanitise HTML drop ``<style>`` blocks and scripts). Every text
passes the views' one escaping (``esc``) and the record is one ``html_block`` (MathJax leaves prices alone).
Screenshots are embedded as thumbnails (:data:`~notebook_agent.agent.runs.pictures.THUMBNAIL_WIDTH` px wide
JPEGs shown :data:`PICTURE_WIDTH` px wide, large enough to read the page's text; the run folder keeps them full
size); past ``image_budget`` bytes the earliest steps go without their picture (the record says so), so a long
run does not bloat the notebook.
"""

from __future__ import annotations

import base64
import json

from ...agent import PageAgentResult, PageStep
from ...agent.runs.pictures import thumbnail
from ...agent.runs.run_data import dropped_notes
from ...core.errors import error_message
from ...core.text.shown import html_block
from .html import STATUS_TEXT, TONES, data_html, esc, markdown_html, result_label

IMAGE_BUDGET = 1_500_000
"""Bytes of screenshots a record embeds at most (the latest steps first)."""

PICTURE_WIDTH = 480
"""How wide a step's picture is shown: a 1280 px page at this width still reads (names, prices, buttons)."""

TABLE = f"border-collapse:collapse;margin-top:6px;table-layout:fixed;width:100%;max-width:{2 * PICTURE_WIDTH + 80}px"
"""A step a row: its number, its fields, and its picture in 55% of the width (at most PICTURE_WIDTH), so a narrow
output shrinks the picture rather than cutting it off."""

BOX = "border:1px solid #d0d7de;border-radius:8px;padding:8px;font-family:system-ui,sans-serif"


def _row(label: str, value: str, color: str = "#57606a") -> str:
    return (
        f'<div style="margin:1px 0"><span style="color:{color};display:inline-block;min-width:6.5em">{label}</span> '
        f"{value}</div>"
    )


def _step(step: PageStep, picture: bytes | None) -> str:
    parts = [_row("Replay", esc(step.replay))] if step.replay else []
    for label, text in (
        ("Evaluation", step.evaluation_previous_goal),
        ("Memory", step.memory),
        ("Next goal", step.next_goal),
    ):
        if text:
            parts.append(_row(label, esc(text)))
    if step.output_error:
        parts.append(_row("Invalid output", esc(step.output_error), "#cf222e"))
    if step.action:
        call = f"{step.action} {json.dumps(step.args, ensure_ascii=False)}"
        parts.append(_row("Action", f"<code>{esc(call)}</code>"))
    if step.approval:
        why = f": {step.approval['reason']}" if step.approval.get("reason") else ""
        parts.append(_row("Approval", esc(f"{step.approval.get('decision')} by {step.approval.get('by')}{why}")))
    if step.result:
        label, tone = result_label(step)
        parts.append(_row(label, esc(step.result), TONES[tone]))
    if step.url:
        parts.append(_row("Page", f"<code>{esc(step.url)}</code>"))
    image = ""
    if picture is not None:
        data = base64.b64encode(picture).decode("ascii")
        image = (
            f'<img src="data:image/jpeg;base64,{data}" width="{PICTURE_WIDTH}" alt="page after step '
            f'{step.index}" style="border:1px solid #d0d7de;width:100%;max-width:{PICTURE_WIDTH}px;height:auto">'
        )
    return (
        f'<tr><td style="vertical-align:top;text-align:left;padding:4px;width:2em"><b>{step.index}</b></td>'
        f'<td style="vertical-align:top;text-align:left;padding:4px;overflow-wrap:anywhere">{"".join(parts)}</td>'
        f'<td style="vertical-align:top;padding:4px;width:55%">{image}</td></tr>'
    )


def record_html(result: PageAgentResult, *, image_budget: int = IMAGE_BUDGET) -> str:
    """The whole run as one self-contained HTML block."""
    pictures: dict[int, bytes] = {}
    used = 0
    for step in reversed(result.steps):
        if not step.screenshot:
            continue
        small = thumbnail(step.screenshot)
        size = len(small) * 4 // 3
        if used + size <= image_budget:
            pictures[step.index] = small
            used += size
    color = "#1a7f37" if result.success else "#cf222e"
    head = (
        f'<div style="font-weight:bold">{esc(result.task)}</div>'
        f'<div><span style="color:{color};font-weight:bold">{esc(result.status.replace("_", " "))}</span> · '
        f"{'success' if result.success else 'no success'} · {result.steps_text()} · {esc(result.ledger.text())}"
        f" · model <code>{esc(result.model)}</code></div>"
    )
    if result.answer:
        head += _row("Answer", f"<span>{markdown_html(result.answer)}</span>")  # the model's markdown, made safe
    if result.output is not None:
        head += data_html(result.output, result.output_type)
    for note in dropped_notes(result.tables):  # a table that left pages out says so here, not only to the model
        head += _row("Table", markdown_html(note), "#cf222e")
    if result.replay_counts:
        head += _row("Replay", esc(result.replay_text().removeprefix("replay: ")))
    reason = (result.error or (result.text if not result.answer else None)) if result.status != "completed" else None
    if reason and reason != result.answer:
        head += _row(result.end_label, esc(reason), TONES["warn" if result.status in ("stopped", "budget") else "bad"])
    with_steps = [s for s in result.steps if s.screenshot]
    skipped = len(with_steps) - len(pictures)
    note = (
        f'<div style="color:#57606a">The pictures of the first {skipped} step{"" if skipped == 1 else "s"} are left '
        "out to keep the notebook small; the saved run has them all.</div>"
        if skipped > 0
        else ""
    )
    rows = "".join(_step(s, pictures.get(s.index)) for s in result.steps)
    return html_block(
        f"{head}{note}"
        f'<table style="{TABLE}">{rows}{_unfinished(result)}</table>'
        f'<div style="color:#57606a;font-size:0.85em">notebook_agent run {esc(result.run_id)} (a static record: '
        "the live view needs a running kernel)</div>",
        cls="na-record",
        style=BOX,
    )


def _unfinished(result: PageAgentResult) -> str:
    """A stopped run whose last step never got the model's answer: that step's row says so (a stop while the
    action waited or ran is on its own row, in its result)."""
    last = result.steps[-1] if result.steps else None
    if result.status != "stopped" or last is None or last.action or last.output_error:
        return ""
    how = f"{STATUS_TEXT['stopped']} while waiting for the model"
    return (
        f'<tr><td></td><td style="text-align:left;padding:4px">{_row("Stopped", esc(how), TONES["warn"])}</td>'
        "<td></td></tr>"
    )


def error_html(task: str, error: BaseException) -> str:
    return html_block(
        f"<b>{esc(task)}</b><div style='color:#cf222e'>{esc(error_message(error))}</div>",
        cls="na-record",
        style=BOX,
    )

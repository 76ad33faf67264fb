"""What the live view and the saved record share: the stylesheet, status words and small HTML helpers.

Every text from outside goes through :func:`esc` (``core.text.shown``: one escaping for every view) and every
output block through ``html_block`` (MathJax leaves it alone, so "$89.00; $149.00" stays prices).
Plain text and ASCII-range symbols only: they render without an emoji font (GitHub, nbviewer, PDFs).
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from ...core.text.shown import html_block, shown

if TYPE_CHECKING:
    from ...agent.runs.result import PageStep

CSS = """
<style>
.na-run {border:1px solid #d0d7de; border-radius:8px; padding:8px; font-family:system-ui, sans-serif}
.na-head b {font-size:1.05em}
.na-step {border-top:1px solid #eaeef2; padding:4px 0}
.jupyter-widgets.jupyter-button.na-step-header, .na-step-header {text-align:left; justify-content:flex-start;
  overflow:hidden; text-overflow:ellipsis; white-space:nowrap; display:block}
.na-kv {margin:2px 0; line-height:1.35}
.na-kv span.k {color:#57606a; display:inline-block; min-width:6.5em}
.na-ok {color:#1a7f37} .na-bad {color:#cf222e} .na-warn {color:#9a6700} .na-dim {color:#57606a}
.na-code {font-family:ui-monospace, monospace; font-size:0.92em; background:#f6f8fa; padding:1px 4px;
  border-radius:4px; white-space:pre-wrap; word-break:break-word}
.na-approval {border:2px solid #bf8700; border-radius:6px; padding:6px; background:#fff8c5}
.na-approval-crop img, img.na-approval-crop {object-fit:contain; height:auto; max-width:100%}
.na-ask {border:2px solid #0969da; border-radius:6px; padding:6px; background:#ddf4ff}
.na-sym {display:inline-block; min-width:1.1em; text-align:center; font-weight:bold}
</style>
"""

STATUS_TEXT = {
    "starting": "starting",
    "launching": "launching the browser",
    "opening": "opening the page",
    "asking": "asking the model",
    "running": "running",
    "model": "waiting for the model",
    "approval": "waiting for approval",
    "question": "waiting for your answer",
    "completed": "completed",
    "failed": "failed",
    "max_steps": "stopped at max steps",
    "budget": "stopped at its budget",
    "stopped": "stopped",
    "error": "error",
}

REFLECTION = (("evaluation_previous_goal", "Evaluation"), ("memory", "Memory"), ("next_goal", "Next goal"))


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def esc(value: object) -> str:
    """Text made safe to put inside HTML (the one escaping, :func:`~notebook_agent.core.text.shown.shown`)."""
    return shown(value, "html")


TONES = {"ok": "#1a7f37", "bad": "#cf222e", "warn": "#9a6700", "dim": "#57606a"}
"""The colours of the ``na-ok`` ... classes, for the saved record's inline styles."""


def result_label(step: PageStep) -> tuple[str, str]:
    """How a step's result is labelled, the same in the live card and the saved record: ``Stopped`` (the run was
    stopped while the action waited or ran: not an error of the action), ``Error``, ``Failed`` (a done that
    did not succeed) or ``Result``; and its tone (a key of :data:`TONES`)."""
    if getattr(step, "stopped", False):
        return "Stopped", "warn"
    if step.is_error:
        return "Error", "bad"
    if step.action == "done" and not step.args.get("success", True):
        return "Failed", "bad"
    return "Result", "ok"


def args_html(args: dict[str, Any]) -> str:
    return esc(json.dumps(args, ensure_ascii=False))


_CODE_OR_LINK = re.compile(r"`([^`]+)`|\[([^\]\n]+)\]\((https?://(?:[^\s()&]|&amp;)+)\)")
"""On escaped text: a link's address has no quote, no angle bracket, no space (only ``&amp;`` of the entities)."""
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_EM = re.compile(r"(?<![*\w])\*(?=[^\s*])([^*]+?)(?<=\S)\*(?![*\w])")
_ITEM = re.compile(r"^\s*- (.*)$")


def _inline(line: str) -> str:
    """One line of escaped text: `code` and [text](http(s) link) become opaque tokens first (nothing formats inside
    them, and no tag can land inside an href), then **bold** and *em*, then the tokens go back in."""
    tokens: list[str] = []

    def keep(match: re.Match[str]) -> str:
        code, text, url = match.groups()
        if code is not None:
            tokens.append(f"<code>{code}</code>")
        else:
            tokens.append(f'<a href="{url}" target="_blank" rel="noopener noreferrer nofollow">{text}</a>')
        return f"\x00{len(tokens) - 1}\x00"

    line = _CODE_OR_LINK.sub(keep, line)
    line = _BOLD.sub(r"<strong>\1</strong>", line)
    line = _EM.sub(r"<em>\1</em>", line)
    return re.sub("\x00(\\d+)\x00", lambda m: tokens[int(m.group(1))], line)


def markdown_html(text: str) -> str:
    """A model's markdown answer as safe HTML: everything is escaped first, then only a small subset comes back
    as tags: **bold**, *em*, `code`, [text](http(s)://...) links, line breaks and ``- `` lists. No HTML the model
    wrote passes (a ``<script>`` shows as text), and a link is never anything but http(s)."""
    blocks: list[tuple[bool, str]] = []  # (is a list, html)
    items: list[str] = []
    for raw in (shown(line) for line in shown(text, "plain").split("\n")):
        item = _ITEM.match(raw)
        if item:
            items.append(f"<li>{_inline(item.group(1))}</li>")
            continue
        if items:
            blocks.append((True, f'<ul style="margin:2px 0;padding-left:1.4em">{"".join(items)}</ul>'))
            items = []
        blocks.append((False, _inline(raw)))
    if items:
        blocks.append((True, f'<ul style="margin:2px 0;padding-left:1.4em">{"".join(items)}</ul>'))
    out = []
    for i, (is_list, part) in enumerate(blocks):
        if i and not is_list and not blocks[i - 1][0]:
            out.append("<br>")  # between two lines of text (a list is a block of its own)
        out.append(part)
    return "".join(out)


def data_html(value: object, type_name: str = "", *, limit: int = 20) -> str:
    """A typed answer as a small table (inline styles, so the saved record shows it too): one row per item of
    a list, one row per field of an object; every cell escaped, the first ``limit`` rows only."""
    from ...agent.runs.run_data import to_json

    data = to_json(value)
    if isinstance(data, dict):
        lists = [k for k, v in data.items() if isinstance(v, list) and v and all(isinstance(i, dict) for i in v)]
        if len(lists) == 1:
            rest = {k: v for k, v in data.items() if k != lists[0]}
            return (data_html(rest, type_name, limit=limit) if rest else "") + data_html(data[lists[0]], limit=limit)
    cell = "border:1px solid #d0d7de;padding:2px 6px;text-align:left;vertical-align:top"

    def text(v: object) -> str:
        said = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
        return esc(said if len(said) <= 200 else said[:199] + "…")

    if isinstance(data, list) and data and all(isinstance(i, dict) for i in data):
        columns: list[str] = []
        for item in data:
            columns += [k for k in item if k not in columns]
        head = "".join(f'<th style="{cell}">{esc(c)}</th>' for c in columns)
        body = "".join(
            "<tr>" + "".join(f'<td style="{cell}">{text(item.get(c, ""))}</td>' for c in columns) + "</tr>"
            for item in data[:limit]
        )
    elif isinstance(data, dict):
        head = ""
        body = "".join(
            f'<tr><th style="{cell}">{esc(k)}</th><td style="{cell}">{text(v)}</td></tr>' for k, v in data.items()
        )
    else:
        return html_block(f"<span class='k'>Output</span> <code>{text(data)}</code>", cls="na-kv")
    more = len(data) - limit if isinstance(data, list) and len(data) > limit else 0
    caption = esc(type_name) + (f" · {len(data)} rows" if isinstance(data, list) else "")
    note = f"<div class='na-dim'>… {more} more rows: result.output, result.to_pandas()</div>" if more else ""
    return html_block(
        f"<div class='na-kv na-output'><span class='k'>Output</span> <span class='na-dim'>{caption}</span></div>"
        f'<table style="border-collapse:collapse;font-size:0.92em;margin:2px 0">'
        f"{'<tr>' + head + '</tr>' if head else ''}{body}</table>{note}"
    )

"""What the live view and the saved record share: the stylesheet, status words and small HTML helpers.

Plain text and ASCII-range symbols only: they render without an emoji font (GitHub, nbviewer, PDFs).
"""

from __future__ import annotations

import html
import json
from typing import Any

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
    "stopped": "stopped",
    "error": "error",
}

REFLECTION = (("evaluation_previous_goal", "Evaluation"), ("memory", "Memory"), ("next_goal", "Next goal"))


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def esc(value: object) -> str:
    """Text made safe to put inside HTML."""
    return html.escape(str(value), quote=False)


def args_html(args: dict[str, Any]) -> str:
    return esc(json.dumps(args, ensure_ascii=False))

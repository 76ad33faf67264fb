"""The live view of one run: a header, one card per step, approvals and questions, the final result.

Standard ipywidgets only (no front-end code of our own), so it renders in JupyterLab, Notebook 7 and VS Code.
The view is fed events on the kernel's event loop; widget callbacks (which may run on another thread) only
hand the click to the loop with ``call_soon_threadsafe``. Every widget that a test or a person acts on carries
a stable CSS class (``na-approve``, ``na-deny``, ``na-step``, ...).
"""

from __future__ import annotations

import asyncio
import html
import json
import time
from collections.abc import Callable
from typing import Any

import ipywidgets as w

from ..agent import (
    ActionFinished,
    ActionProgress,
    ActionStarted,
    AnyEvent,
    ApprovalAnswered,
    ModelOutputParsed,
    PageAgentResult,
    PageStep,
    RunFinished,
    ScreenshotTaken,
    StepStarted,
)
from ..agent.approval import ApprovalAnswer, ApprovalRequest
from .tuning import inspect_html

_CSS = """
<style>
.na-run {border:1px solid #d0d7de; border-radius:8px; padding:8px; font-family:system-ui, sans-serif}
.na-head b {font-size:1.05em}
.na-step {border-top:1px solid #eaeef2; padding:4px 0}
.na-step-header button {text-align:left}
.na-kv {margin:2px 0; line-height:1.35}
.na-kv span.k {color:#57606a; display:inline-block; min-width:6.5em}
.na-ok {color:#1a7f37} .na-bad {color:#cf222e} .na-warn {color:#9a6700}
.na-code {font-family:ui-monospace, monospace; font-size:0.92em; background:#f6f8fa; padding:1px 4px;
  border-radius:4px; white-space:pre-wrap; word-break:break-word}
.na-approval {border:2px solid #bf8700; border-radius:6px; padding:6px; background:#fff8c5}
.na-ask {border:2px solid #0969da; border-radius:6px; padding:6px; background:#ddf4ff}
</style>
"""

STATUS_TEXT = {
    "starting": "⏳ starting",
    "running": "▶ running",
    "approval": "✋ waiting for approval",
    "question": "❓ waiting for your answer",
    "completed": "✅ completed",
    "failed": "❌ failed",
    "max_steps": "⏹ stopped at max steps",
    "stopped": "⏹ stopped",
    "error": "💥 error",
}


def tabs_html(rows: list[tuple[Any, str]]) -> str:
    """The browser's tabs and which run owns each (``%agent browser``)."""
    body = "".join(
        f"<tr><td>{tab.id}</td><td>{_esc(owner) if owner else '<i>no run</i>'}</td><td><code>{_esc(tab.url)}</code>"
        f"</td><td>{_esc(tab.title)}</td></tr>"
        for tab, owner in rows
    )
    return (
        '<table class="na-tabs"><thead><tr><th>tab</th><th>run</th><th>url</th><th>title</th></tr></thead>'
        f"<tbody>{body}</tbody></table>"
    )


def _esc(value: object) -> str:
    return html.escape(str(value), quote=False)


def _args(args: dict[str, Any]) -> str:
    return _esc(json.dumps(args, ensure_ascii=False))


class StepCard:
    """One step: reflection, action, live progress, result, screenshot. Collapsible."""

    def __init__(self, index: int, max_steps: int) -> None:
        self.index = index
        self.header = w.Button(description=f"Step {index}/{max_steps} · thinking…", layout=w.Layout(width="100%"))
        self.header.add_class("na-step-header")
        self.header.on_click(lambda _b: self.toggle())
        self.reflection = w.HTML()
        self.action = w.HTML()
        self.progress = w.HTML()
        self.result = w.HTML()
        self.result.add_class("na-result-text")
        self.image = w.Image(format="jpeg", layout=w.Layout(max_width="640px", display="none"))
        self.image.add_class("na-screenshot")
        self.extra = w.VBox()
        self.step: PageStep | None = None
        self.inspect_button = w.Button(
            description="inspect",
            icon="search",
            layout=w.Layout(width="auto"),
            tooltip="the exact request the model saw, its raw output, tokens and cost",
        )
        self.inspect_button.add_class("na-inspect")
        self.inspect_button.on_click(lambda _b: self.toggle_inspect())
        self.inspector = w.HTML(layout=w.Layout(display="none"))
        self.inspector.add_class("na-inspector")
        self.body = w.VBox(
            [
                self.reflection,
                self.action,
                self.progress,
                self.result,
                self.extra,
                self.image,
                self.inspect_button,
                self.inspector,
            ]
        )
        self.body.add_class("na-step-body")
        self.box = w.VBox([self.header, self.body])
        self.box.add_class("na-step")
        self.summary = ""

    def toggle(self, show: bool | None = None) -> None:
        visible = self.body.layout.display != "none"
        target = (not visible) if show is None else show
        self.body.layout.display = None if target else "none"

    def toggle_inspect(self) -> None:
        """Build the inspector on first use only: most steps are never inspected, and it is large."""
        if self.inspector.layout.display == "none":
            if self.step is not None:
                self.inspector.value = inspect_html(self.step)
            self.inspector.layout.display = None
        else:
            self.inspector.layout.display = "none"

    def set_output(self, step: PageStep) -> None:
        self.step = step
        rows = []
        if step.evaluation_previous_goal:
            rows.append(("Evaluation", step.evaluation_previous_goal))
        if step.memory:
            rows.append(("Memory", step.memory))
        if step.next_goal:
            rows.append(("Next goal", step.next_goal))
        body = "".join(f'<div class="na-kv"><span class="k">{k}</span> {_esc(v)}</div>' for k, v in rows)
        if step.repairs:
            body += f'<div class="na-kv na-warn">repaired output: {_esc("; ".join(step.repairs))}</div>'
        if step.output_error:
            body += f'<div class="na-kv na-bad">unusable output: {_esc(step.output_error)}</div>'
            self.header.description = f"Step {self.index} · invalid output"
        self.reflection.value = body

    def set_action(self, name: str, args: dict[str, Any]) -> None:
        self.summary = f"{name} {json.dumps(args, ensure_ascii=False)}"
        self.header.description = f"Step {self.index} · {self.summary[:90]}"
        self.action.value = (
            f'<div class="na-kv"><span class="k">Action</span> <span class="na-code">{_esc(name)} {_args(args)}'
            "</span> <i>running…</i></div>"
        )

    def set_progress(self, progress: object) -> None:
        text = progress if isinstance(progress, str) else json.dumps(progress, ensure_ascii=False, default=str)
        self.progress.value = f'<div class="na-kv"><span class="k">Progress</span> {_esc(text)}</div>'

    def set_result(self, step: PageStep) -> None:
        if step.action is not None:
            self.action.value = (
                f'<div class="na-kv"><span class="k">Action</span> <span class="na-code">{_esc(step.action)} '
                f"{_args(step.args)}</span> <small>{step.action_ms:.0f} ms</small></div>"
            )
        cls = "na-bad" if step.is_error else "na-ok"
        mark = "✗" if step.is_error else "✓"
        self.result.value = (
            f'<div class="na-kv {cls}"><span class="k">Result {mark}</span> '
            f'<span class="na-code">{_esc(step.result)}</span></div>'
        )
        self.progress.value = ""

    def set_screenshot(self, data: bytes, fmt: str) -> None:
        self.image.format = fmt.split("/")[-1]
        self.image.value = data
        self.image.layout.display = None


class RunView:
    """The widget tree for one run, and the only thing that touches it."""

    def __init__(self, task: str, model: str, max_steps: int, *, on_stop: Callable[[], None], note: str = "") -> None:
        self.loop = asyncio.get_running_loop()
        self.max_steps = max_steps
        self.started = time.monotonic()
        self.finished_at: float | None = None
        self.title = w.HTML(
            f'{_CSS}<div class="na-head"><b>🤖 {_esc(task)}</b><br><small>model <code>{_esc(model)}</code>'
            + (f" · {_esc(note)}" if note else "")
            + "</small></div>"
        )
        self.where = w.HTML("")
        self.where.add_class("na-tab")
        self.status = w.Label(STATUS_TEXT["starting"])
        self.status.add_class("na-status")
        self.bar = w.IntProgress(value=0, min=0, max=max_steps, layout=w.Layout(width="180px"))
        self.stats = w.Label("")
        self.stats.add_class("na-stats")
        self.stop_button = w.Button(description="Stop", icon="stop", button_style="warning")
        self.stop_button.add_class("na-stop")
        self.stop_button.on_click(lambda _b: self.loop.call_soon_threadsafe(on_stop))
        self.cards_box = w.VBox()
        self.final = w.HTML()
        self.final.add_class("na-result")
        head = w.HBox([self.status, self.bar, self.stats, self.stop_button], layout=w.Layout(align_items="center"))
        self.root = w.VBox([self.title, self.where, head, self.cards_box, self.final])
        self.root.add_class("na-run")
        self.cards: list[StepCard] = []
        self.tokens = 0
        self.cost = 0.0
        self.pending_approval: ApprovalRequest | None = None
        self.answer_approval: Callable[[ApprovalAnswer], None] | None = None
        self.approval_shown = asyncio.Event()

    # -- events ---------------------------------------------------------------------------------------------
    def card(self) -> StepCard | None:
        return self.cards[-1] if self.cards else None

    def handle(self, event: AnyEvent) -> None:
        """Apply one event to the widgets (runs on the loop thread)."""
        card = self.card()
        if isinstance(event, StepStarted):
            if card is not None:
                card.toggle(False)
            new = StepCard(event.step, event.max_steps)
            self.cards.append(new)
            self.cards_box.children = (*self.cards_box.children, new.box)
            self.bar.value = min(event.step, self.max_steps)
            self.set_status("running")
        elif isinstance(event, ModelOutputParsed) and card is not None:
            card.set_output(event.step)
            self.tokens += event.step.usage.input + event.step.usage.output + event.step.usage.cache_read
            self.cost += event.step.usage.cost.total
            self.tick()
        elif isinstance(event, ActionStarted) and card is not None:
            card.set_action(event.action, event.args)
        elif isinstance(event, ActionProgress) and card is not None:
            card.set_progress(event.progress)
        elif isinstance(event, ActionFinished) and card is not None:
            card.set_result(event.step)
        elif isinstance(event, ScreenshotTaken) and card is not None:
            card.set_screenshot(event.data, event.mime_type)
        elif isinstance(event, ApprovalAnswered) and card is not None:
            verdict = "approved" if event.answer.approved else "denied"
            cls = "na-ok" if event.answer.approved else "na-bad"
            reason = f": {_esc(event.answer.reason)}" if event.answer.reason else ""
            card.extra.children = (w.HTML(f'<div class="na-kv {cls}">✋ {verdict} by {event.answer.by}{reason}</div>'),)
        elif isinstance(event, RunFinished):
            self.show_result(event.result)

    def set_tab(self, text: str) -> None:
        """Which browser tab the run acts on."""
        self.where.value = f"<small>in {_esc(text)}</small>"

    def set_status(self, key: str) -> None:
        self.status.value = STATUS_TEXT.get(key, key)

    def tick(self) -> None:
        end = self.finished_at or time.monotonic()
        cost = f" · ${self.cost:.4f}" if self.cost else ""
        self.stats.value = f"{end - self.started:.1f}s · {self.tokens:,} tokens{cost}"

    def show_result(self, result: PageAgentResult) -> None:
        self.finished_at = time.monotonic()
        self.tick()
        self.set_status(result.status)
        self.stop_button.disabled = True
        self.bar.value = min(len(result.steps), self.max_steps)
        cls = "na-ok" if result.success else "na-bad"
        error = result.error if result.status != "completed" and result.error != result.text else None
        detail = f"<div class='na-kv'>{_esc(error)}</div>" if error else ""
        self.final.value = (
            f'<div class="na-kv {cls}"><b>{STATUS_TEXT.get(result.status, result.status)}</b> · '
            f"{len(result.steps)} steps · {result.usage.input + result.usage.output:,} tokens"
            f"</div><div class='na-code'>{_esc(result.text)}</div>{detail}"
        )

    def note(self, text: str) -> None:
        self.final.value += f'<div class="na-kv na-warn">{_esc(text)}</div>'

    def show_error(self, exc: BaseException) -> None:
        self.finished_at = time.monotonic()
        self.set_status("error")
        self.stop_button.disabled = True
        self.final.value = f'<div class="na-kv na-bad na-error"><b>{type(exc).__name__}</b>: {_esc(exc)}</div>'

    # -- waiting for a person -----------------------------------------------------------------------------
    def _resolver(self, fut: asyncio.Future[Any]) -> Callable[[Any], None]:
        def resolve(value: Any) -> None:
            def _set() -> None:
                if not fut.done():
                    fut.set_result(value)

            self.loop.call_soon_threadsafe(_set)

        return resolve

    async def ask_approval(self, request: ApprovalRequest, crop: bytes | None) -> ApprovalAnswer:
        """Show Approve / Deny on the current card; nothing runs until one is clicked."""
        card = self.card()
        fut: asyncio.Future[ApprovalAnswer] = self.loop.create_future()
        resolve = self._resolver(fut)
        approve = w.Button(description="Approve", button_style="success", icon="check")
        approve.add_class("na-approve")
        deny = w.Button(description="Deny", button_style="danger", icon="times")
        deny.add_class("na-deny")
        reason = w.Text(
            placeholder="reason (optional, the model sees it)", continuous_update=False, layout=w.Layout(width="320px")
        )
        reason.add_class("na-deny-reason")
        approve.on_click(lambda _b: resolve(ApprovalAnswer(True, None)))
        deny.on_click(lambda _b: resolve(ApprovalAnswer(False, reason.value.strip() or None)))
        target = ""
        if request.element:
            el = request.element
            target = f"<div class='na-kv'><span class='k'>Target</span> &lt;{_esc(el.get('tag', ''))}&gt; "
            target += f"{_esc((el.get('text') or '')[:120])}</div>"
        info = w.HTML(
            f"<div class='na-kv'><b>✋ Approve this action?</b> <span class='na-warn'>{_esc(request.reason)}</span>"
            f"</div><div class='na-kv'><span class='k'>Action</span> <span class='na-code'>{_esc(request.action)} "
            f"{_args(request.args)}</span></div>{target}<div class='na-kv'><span class='k'>Page</span> "
            f"{_esc(request.url)}</div>"
        )
        parts: list[w.Widget] = [info]
        if crop:
            width = int.from_bytes(crop[16:20], "big") if crop[:4] == b"\x89PNG" else 480  # IHDR width
            img = w.Image(value=crop, format="png", layout=w.Layout(width=f"{min(width, 480)}px"))
            img.add_class("na-approval-crop")
            parts.append(img)
        parts.append(w.HBox([approve, deny, reason]))
        panel = w.VBox(parts)
        panel.add_class("na-approval")
        host = card.extra if card is not None else self.cards_box
        host.children = (*host.children, panel)
        self.set_status("approval")
        self.pending_approval, self.answer_approval = request, resolve
        self.approval_shown.set()
        try:
            return await fut
        finally:
            self.pending_approval = self.answer_approval = None
            self.approval_shown.clear()
            host.children = tuple(c for c in host.children if c is not panel)
            self.set_status("running")

    async def ask_user(self, question: str) -> str:
        """Show the question with a text box; Enter answers it."""
        card = self.card()
        fut: asyncio.Future[str] = self.loop.create_future()
        resolve = self._resolver(fut)
        box = w.Text(
            placeholder="type your answer and press Enter", continuous_update=False, layout=w.Layout(width="420px")
        )
        box.add_class("na-ask-input")
        box.observe(lambda change: resolve(change["new"]) if change["new"] else None, "value")
        panel = w.VBox([w.HTML(f"<div class='na-kv'><b>❓ {_esc(question)}</b></div>"), box])
        panel.add_class("na-ask")
        host = card.extra if card is not None else self.cards_box
        host.children = (*host.children, panel)
        self.set_status("question")
        try:
            answer = await fut
        finally:
            host.children = tuple(c for c in host.children if c is not panel)
            self.set_status("running")
        host.children = (*host.children, w.HTML(f"<div class='na-kv'>💬 {_esc(answer)}</div>"))
        return answer

    def widgets(self) -> list[w.Widget]:
        """Every widget of the view (to re-send their state from an awaiting cell)."""
        out: list[w.Widget] = []

        def walk(x: w.Widget) -> None:
            out.append(x)
            for child in getattr(x, "children", ()):
                walk(child)

        walk(self.root)
        return out

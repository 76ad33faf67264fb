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
from ..agent.results import OUTPUT_MODE_TEXT, join_output_modes
from ..core.events import MessageUpdate
from ..core.messages import ToolCall
from .kernel import blocked_wait_message
from .tuning import inspect_html

_CSS = """
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

# Plain text and ASCII-range symbols only: they render without an emoji font (GitHub, nbviewer, PDFs).
STATUS_TEXT = {
    "starting": "starting",
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

_REFLECTION = (("evaluation_previous_goal", "Evaluation"), ("memory", "Memory"), ("next_goal", "Next goal"))


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


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
        self.max_steps = max_steps
        self.waiting_since: float | None = time.monotonic()
        """Set while the model has not sent anything for this step (the view shows for how long)."""
        self._shown_wait = -1
        self.has_content = False
        self.header = w.Button(
            description=f"Step {index}/{max_steps} · reading the page", layout=w.Layout(width="100%")
        )
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

    def _head(self, text: str) -> None:
        self.header.description = f"Step {self.index}/{self.max_steps} · {text}"
        self.header.tooltip = text

    def wait_tick(self, now: float) -> None:
        """While the model is silent: how long it has been (updated once a second)."""
        if self.waiting_since is None:
            return
        seconds = int(now - self.waiting_since)
        if seconds != self._shown_wait:
            self._shown_wait = seconds
            self._head(f"waiting for the model · {seconds} s")
            self.progress.value = (
                f'<div class="na-kv na-wait na-dim"><span class="k">Model</span> waiting for the answer · {seconds} s'
                "</div>"
            )

    def preview(self, args: dict[str, Any]) -> bool:
        """The model's output as it streams in: reflection fields filling in, then the action's name and
        arguments. Returns True when there was something to show."""
        rows = [(label, args.get(key)) for key, label in _REFLECTION]
        rows = [(k, v) for k, v in rows if isinstance(v, str) and v]
        action = args.get("action")
        name = next(iter(action), None) if isinstance(action, dict) and action else None
        if not rows and name is None:
            return False
        self.waiting_since = None
        self.has_content = True
        body = "".join(f'<div class="na-kv"><span class="k">{k}</span> {_esc(v)}</div>' for k, v in rows)
        if name is not None:
            inner = action.get(name) if isinstance(action, dict) else None  # type: ignore[union-attr]
            shown = _args(inner) if isinstance(inner, dict) else ""
            body += (
                f'<div class="na-kv na-dim"><span class="k">Action</span> <span class="na-code">{_esc(name)} '
                f"{shown}</span> (being written)</div>"
            )
        self.reflection.value = f'<div class="na-streaming">{body}</div>'
        self.progress.value = ""
        goal = args.get("next_goal")
        self._head(goal[:100] if isinstance(goal, str) and goal else "the model is answering")
        return True

    def set_output(self, step: PageStep) -> None:
        self.step = step
        self.waiting_since = None
        self.has_content = True
        self.progress.value = ""
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
            self._head("invalid output")
        elif step.next_goal:
            self._head(step.next_goal[:100])
        self.reflection.value = body

    def set_action(self, name: str, args: dict[str, Any], state: str = "running…") -> None:
        self.summary = f"{name} {json.dumps(args, ensure_ascii=False)}"
        self._head(self.summary[:100])
        self.action.value = (
            f'<div class="na-kv"><span class="k">Action</span> <span class="na-code">{_esc(name)} {_args(args)}'
            f"</span> <i>{_esc(state)}</i></div>"
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
        failed_done = step.action == "done" and not step.is_error and not step.args.get("success", True)
        bad = step.is_error or failed_done
        cls = "na-bad" if bad else "na-ok"
        label = "Failed" if failed_done else ("Error" if step.is_error else "Result")
        self.result.value = (
            f'<div class="na-kv {cls}"><span class="k">{label}</span> '
            f'<span class="na-code">{_esc(step.result)}</span></div>'
        )
        self.progress.value = ""

    def set_screenshot(self, data: bytes, fmt: str) -> None:
        self.image.format = fmt.split("/")[-1]
        self.image.value = data
        self.image.layout.display = None


def _macro_arguments(message: Any) -> dict[str, Any] | None:
    """The partial ``AgentOutput`` arguments in a streaming assistant message (a best-effort parse)."""
    for part in getattr(message, "content", ()):
        if isinstance(part, ToolCall) and isinstance(part.arguments, dict):
            return part.arguments
    return None


def summary_html(result: PageAgentResult) -> str:
    """The end of a run in one block: outcome, answer, steps, tokens, cost, time (and the error if any)."""
    cls = "na-ok" if result.success else "na-bad"
    tokens = result.usage.input + result.usage.output + result.usage.cache_read
    cost = f" · ${result.usage.cost.total:.4f}" if result.usage.cost.total else ""
    head = (
        f'<div class="na-kv {cls} na-summary"><b>{_esc(STATUS_TEXT.get(result.status, result.status))}</b> · '
        f"{'success' if result.success else 'no success'} · {plural(len(result.steps), 'step')} · "
        f"{tokens:,} tokens{cost} · {result.duration_s:.1f} s</div>"
    )
    answer = f"<div class='na-kv'><span class='k'>Answer</span> <span class='na-code'>{_esc(result.text)}</span></div>"
    error = result.error if result.status != "completed" and result.error != result.text else None
    detail = f"<div class='na-kv na-bad'>{_esc(error)}</div>" if error else ""
    return head + (answer if result.text else "") + detail


class RunView:
    """The widget tree for one run, and the only thing that touches it."""

    def __init__(self, task: str, model: str, max_steps: int, *, on_stop: Callable[[], None], note: str = "") -> None:
        self.loop = asyncio.get_running_loop()
        self.max_steps = max_steps
        self.started = time.monotonic()
        self.finished_at: float | None = None
        self.title = w.HTML(
            f'{_CSS}<div class="na-head"><b>{_esc(task)}</b><br><small>model <code>{_esc(model)}</code>'
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
        self.live = w.Image(format="jpeg", layout=w.Layout(max_width="480px", display="none"))
        self.live.add_class("na-live")
        self.cards_box = w.VBox()
        self.final = w.HTML()
        self.final.add_class("na-result")
        head = w.HBox([self.status, self.bar, self.stats, self.stop_button], layout=w.Layout(align_items="center"))
        self.root = w.VBox([self.title, self.where, head, self.live, self.cards_box, self.final])
        self.root.add_class("na-run")
        self.cards: list[StepCard] = []
        self.tokens = 0
        self.cost = 0.0
        self.output_modes: list[str | None] = []
        """How each step's output came back (schema-constrained JSON, tool call, text); shown beside the stats,
        so a local model that fell back from its schema says so where the user is looking."""
        self.pending_approval: ApprovalRequest | None = None
        self.answer_approval: Callable[[ApprovalAnswer], None] | None = None
        self.approval_shown = asyncio.Event()
        self.blocked_version: str | None = None
        """Set while a cell awaits the run on a kernel that cannot receive clicks meanwhile (its version)."""
        self._wait_warnings: list[tuple[w.HTML, str]] = []
        """The open panels' warning lines, and what each waits for ("click", "answer")."""
        self._collapse_when_shown: StepCard | None = None
        """The last finished step stays open until the next one has something to show."""

    # -- events ---------------------------------------------------------------------------------------------
    def card(self) -> StepCard | None:
        return self.cards[-1] if self.cards else None

    def handle(self, event: AnyEvent) -> None:
        """Apply one event to the widgets (runs on the loop thread)."""
        card = self.card()
        if isinstance(event, StepStarted):
            if self._collapse_when_shown is not None:
                self._collapse_when_shown.toggle(False)
            self._collapse_when_shown = card
            new = StepCard(event.step, event.max_steps)
            self.cards.append(new)
            self.cards_box.children = (*self.cards_box.children, new.box)
            self.bar.value = min(event.step - 1, self.max_steps)
            self.set_status("model")
        elif isinstance(event, MessageUpdate) and card is not None and card.step is None:
            args = _macro_arguments(event.message)
            if args is not None and card.preview(args):
                self._shown(card)
                self.set_status("running")
        elif isinstance(event, ModelOutputParsed) and card is not None:
            card.set_output(event.step)
            self._shown(card)
            self.set_status("running")
            self.tokens += event.step.usage.input + event.step.usage.output + event.step.usage.cache_read
            self.cost += event.step.usage.cost.total
            self.output_modes.append(event.step.output.output_mode if event.step.output is not None else None)
            self.tick()
        elif isinstance(event, ActionStarted) and card is not None:
            card.set_action(event.action, event.args)
        elif isinstance(event, ActionProgress) and card is not None:
            card.set_progress(event.progress)
        elif isinstance(event, ActionFinished) and card is not None:
            card.set_result(event.step)
            self.bar.value = min(event.step.index, self.max_steps)
        elif isinstance(event, ScreenshotTaken):
            # Taken in the background, it may arrive after the next step started: it belongs to its own step.
            owner = next((c for c in reversed(self.cards) if c.index == event.step.index), None)
            if owner is not None:
                owner.set_screenshot(event.data, event.mime_type)
            self.live.format = event.mime_type.split("/")[-1]
            self.live.value = event.data
            self.live.layout.display = None
        elif isinstance(event, ApprovalAnswered) and card is not None:
            verdict = "approved" if event.answer.approved else "denied"
            cls = "na-ok" if event.answer.approved else "na-bad"
            reason = f": {_esc(event.answer.reason)}" if event.answer.reason else ""
            card.extra.children = (
                w.HTML(f'<div class="na-kv {cls}">Action {verdict} by {event.answer.by}{reason}</div>'),
            )
        elif isinstance(event, RunFinished):
            self.show_result(event.result)

    def _shown(self, card: StepCard) -> None:
        if self._collapse_when_shown is not None and self._collapse_when_shown is not card:
            self._collapse_when_shown.toggle(False)
        self._collapse_when_shown = None

    def set_tab(self, text: str) -> None:
        """Which browser tab the run acts on."""
        self.where.value = f"<small>in {_esc(text)}</small>"

    def set_status(self, key: str) -> None:
        self.status.value = STATUS_TEXT.get(key, key)

    def tick(self) -> None:
        now = time.monotonic()
        end = self.finished_at or now
        cost = f" · ${self.cost:.4f}" if self.cost else ""
        modes = join_output_modes(self.output_modes)
        mode = " · " + " + ".join(OUTPUT_MODE_TEXT.get(m, m) for m in modes.split("+")) if modes else ""
        self.stats.value = f"{end - self.started:.1f}s · {self.tokens:,} tokens{cost}{mode}"
        card = self.card()
        if card is not None and self.finished_at is None:
            card.wait_tick(now)

    def show_result(self, result: PageAgentResult) -> None:
        self.finished_at = time.monotonic()
        self.tick()
        self.set_status(result.status)
        self._finish_controls(result.success)
        card = self.card()
        if card is not None and card.waiting_since is not None:
            card.waiting_since = None
            card.progress.value = ""
        self.final.value = summary_html(result)

    def _finish_controls(self, success: bool) -> None:
        """The run is over: the bar shows completion, Stop goes away."""
        self.stop_button.disabled = True
        self.stop_button.layout.display = "none"
        self.bar.value = self.bar.max
        self.bar.bar_style = "success" if success else "danger"

    def note(self, text: str) -> None:
        self.final.value += f'<div class="na-kv na-warn">{_esc(text)}</div>'

    def show_error(self, exc: BaseException) -> None:
        self.finished_at = time.monotonic()
        self.set_status("error")
        self._finish_controls(False)
        self.final.value = f'<div class="na-kv na-bad na-error"><b>{type(exc).__name__}</b>: {_esc(exc)}</div>'

    # -- waiting for a person -----------------------------------------------------------------------------
    @property
    def waiting_for_person(self) -> bool:
        """An approval or a question is open."""
        return bool(self._wait_warnings)

    def set_blocked_version(self, version: str | None) -> None:
        """Show (or clear) the "this kernel can't receive the click" line in every open panel."""
        self.blocked_version = version
        for widget, what in self._wait_warnings:
            self._show_wait_warning(widget, what)

    def _show_wait_warning(self, widget: w.HTML, what: str) -> None:
        if self.blocked_version is None:
            widget.value = ""
            widget.layout.display = "none"
        else:
            text = blocked_wait_message(self.blocked_version, what)
            widget.value = f'<div class="na-kv na-bad">⚠ {_esc(text)}</div>'
            widget.layout.display = None

    def _wait_warning(self, what: str) -> w.HTML:
        widget = w.HTML(layout=w.Layout(display="none"))
        widget.add_class("na-wait-warning")
        self._wait_warnings.append((widget, what))
        self._show_wait_warning(widget, what)
        return widget

    def _drop_wait_warning(self, widget: w.HTML) -> None:
        self._wait_warnings = [(x, what) for x, what in self._wait_warnings if x is not widget]

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
            f"<div class='na-kv'><b>Approve this action?</b> <span class='na-warn'>{_esc(request.reason)}</span>"
            f"</div><div class='na-kv'><span class='k'>Action</span> <span class='na-code'>{_esc(request.action)} "
            f"{_args(request.args)}</span></div>{target}<div class='na-kv'><span class='k'>Page</span> "
            f"{_esc(request.url)}</div>"
        )
        parts: list[w.Widget] = [info]
        if crop:
            width = int.from_bytes(crop[16:20], "big") if crop[:4] == b"\x89PNG" else 480  # IHDR width
            img = w.Image(
                value=crop,
                format="png",
                layout=w.Layout(width=f"{min(width, 480)}px", max_width="100%", height="auto", object_fit="contain"),
            )
            img.add_class("na-approval-crop")
            parts.append(img)
        parts.append(w.HBox([approve, deny, reason]))
        warning = self._wait_warning("click")
        parts.append(warning)
        panel = w.VBox(parts)
        panel.add_class("na-approval")
        host = card.extra if card is not None else self.cards_box
        host.children = (*host.children, panel)
        if card is not None and card.step is not None and card.step.action:
            card.set_action(card.step.action, request.args, "waiting for approval")
        self.set_status("approval")
        self.pending_approval, self.answer_approval = request, resolve
        self.approval_shown.set()
        try:
            return await fut
        finally:
            self._drop_wait_warning(warning)
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
        warning = self._wait_warning("answer")
        panel = w.VBox([w.HTML(f"<div class='na-kv'><b>Question: {_esc(question)}</b></div>"), box, warning])
        panel.add_class("na-ask")
        host = card.extra if card is not None else self.cards_box
        host.children = (*host.children, panel)
        self.set_status("question")
        try:
            answer = await fut
        finally:
            self._drop_wait_warning(warning)
            host.children = tuple(c for c in host.children if c is not panel)
            self.set_status("running")
        host.children = (
            *host.children,
            w.HTML(f"<div class='na-kv'><span class='k'>You answered</span> {_esc(answer)}</div>"),
        )
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

"""The live view of one run: a header, one card per step, approvals and questions, the final result.

Standard ipywidgets only (no front-end code of our own), so it renders in JupyterLab, Notebook 7 and VS Code.
The view is a consumer of the page agent's events (:mod:`notebook_agent.agent.runs.events`) and of nothing else:
it is fed them on the kernel's event loop. An approval arrives as an event carrying the
:class:`~notebook_agent.agent.Approval` itself; the buttons answer that object (from whatever thread the
widget callback runs on). Every widget that a test or a person acts on carries a stable CSS class
(``na-approve``, ``na-deny``, ``na-step``, ...).
"""

from __future__ import annotations

import asyncio
import base64
import time
from collections.abc import Callable
from typing import Any, TypeVar

import ipywidgets as w

from ...agent import (
    ActionFinished,
    ActionProgress,
    ActionStarted,
    AnyEvent,
    Approval,
    ApprovalAnswered,
    ApprovalRequested,
    ModelOutputParsed,
    PageAgentResult,
    ReflectionPartial,
    RunFinished,
    ScreenshotTaken,
    StepStarted,
)
from ...agent.runs.result import OUTPUT_MODE_TEXT, join_output_modes
from ...agent.runs.run_data import dropped_notes
from ...core.errors import error_message
from ...core.text.shown import NO_MATH, html_block
from ...llm.ledger import Ledger
from ..kernel import blocked_wait_message
from .card import StepCard
from .html import CSS, STATUS_TEXT, data_html, esc, markdown_html, plural
from .panels import approval_panel

__all__ = ["RunView", "StepCard", "browser_html", "plural", "summary_html", "tabs_html"]


def tabs_html(rows: list[tuple[Any, str]]) -> str:
    """The browser's tabs and which run owns each (``%agent browser``)."""
    body = "".join(
        f"<tr><td>{esc(tab.id)}</td><td>{esc(owner) if owner else '<i>no run</i>'}</td><td><code>{esc(tab.url)}</code>"
        f"</td><td>{esc(tab.title)}</td></tr>"
        for tab, owner in rows
    )
    return html_block(
        '<table class="na-tabs"><thead><tr><th>tab</th><th>run</th><th>url</th><th>title</th></tr></thead>'
        f"<tbody>{body}</tbody></table>"
    )


def browser_html(title: str, url: str, picture: bytes | None, why: str, tabs: list[tuple[Any, str]]) -> str:
    """``%agent browser``: the page's title, address and picture, and the tabs. Static HTML, not a widget: nothing
    in it takes a click, and a saved, exported or untrusted notebook shows it as it was."""
    if picture is not None:
        data = base64.b64encode(picture).decode("ascii")
        shot = (
            f'<img src="data:image/jpeg;base64,{data}" alt="the page" '
            'style="max-width:640px;width:100%;height:auto;border:1px solid #d0d7de">'
        )
    else:
        shot = f"<i>No picture right now: {esc(why)}</i>"
    return html_block(f"<b>{esc(title)}</b><br><code>{esc(url)}</code><br>{shot}{tabs_html(tabs)}", cls="na-browser")


def summary_html(result: PageAgentResult) -> str:
    """The end of a run in one block: outcome, answer, steps, tokens, cost, time (and the error if any)."""
    cls = "na-ok" if result.success else "na-bad"
    head = (
        f'<div class="na-kv {cls} na-summary"><b>{esc(STATUS_TEXT.get(result.status, result.status))}</b> · '
        f"{'success' if result.success else 'no success'} · {result.steps_text()} · "
        f"{esc(result.ledger.text())}</div>"
    )
    answer = result.answer
    shown = (  # the model's markdown, escaped and made safe
        f"<div class='na-kv'><span class='k'>Answer</span> <span class='na-answer'>{markdown_html(answer)}</span></div>"
    )
    reason = result.error if result.status != "completed" else None
    reason = reason or (result.text if not answer and result.status != "completed" else None)
    detail = (
        f"<div class='na-kv na-bad na-end'><span class='k'>{result.end_label}</span> {esc(reason)}</div>"
        if reason and reason != answer
        else ""
    )
    output = data_html(result.output, result.output_type) if result.output is not None else ""
    for note in dropped_notes(result.tables):  # a table that left pages out says so here, not only to the model
        output += f"<div class='na-kv na-bad'><span class='k'>Table</span> {esc(note)}</div>"
    if result.replay_counts:
        output += f"<div class='na-kv na-dim'>{esc(result.replay_text())}</div>"
    return html_block(head + (shown if answer else "") + output + detail)


T = TypeVar("T")


class RunView:
    """The widget tree for one run, and the only thing that touches it."""

    def __init__(self, task: str, model: str, max_steps: int, *, note: str = "") -> None:
        self.loop = asyncio.get_running_loop()
        self.max_steps = max_steps
        self.started = time.monotonic()
        self.finished_at: float | None = None
        self.title = w.HTML(
            f'{CSS}<div class="na-head"><b>{esc(task)}</b><br><small>model <code>{esc(model)}</code>'
            + (f" · {esc(note)}" if note else "")
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
        self.on_stop: Callable[[], None] = lambda: None
        """What Stop does (the run handle sets it)."""
        self.stop_button.on_click(lambda _b: self.loop.call_soon_threadsafe(self.on_stop))
        self.live = w.Image(format="jpeg", layout=w.Layout(max_width="480px", display="none"))
        self.live.add_class("na-live")
        self.cards_box = w.VBox()
        self.final = w.HTML()
        self.final.add_class("na-result")
        head = w.HBox([self.status, self.bar, self.stats, self.stop_button], layout=w.Layout(align_items="center"))
        self.root = w.VBox([self.title, self.where, head, self.live, self.cards_box, self.final])
        self.root.add_class("na-run")
        for name in NO_MATH.split():  # MathJax leaves the view alone: "$89.00; $149.00" stays two prices
            self.root.add_class(name)
        self.cards: list[StepCard] = []
        self.spent = Ledger()
        """What the steps so far cost (tokens, calls, cost: None once unknown), shown live beside the time."""
        self.output_modes: list[str | None] = []
        """How each step's output came back (schema-constrained JSON, tool call, text); shown beside the stats,
        so a local model that fell back from its schema says so where the user is looking."""
        self._open_approval: tuple[w.Box, w.VBox, w.HTML] | None = None
        """The approval panel on show: where it sits, the panel, its warning line."""
        self.blocked_version: str | None = None
        """Set while a cell awaits the run on a kernel that cannot receive clicks meanwhile (its version)."""
        self._wait_warnings: list[tuple[w.HTML, str]] = []
        """The open panels' warning lines, and what each waits for ("click", "answer")."""
        self._collapse_when_shown: StepCard | None = None
        """The last finished step stays open until the next one has something to show."""
        self._live_step: StepCard | None = None
        """The card whose picture the header shows (that card hides its own copy)."""

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
        elif isinstance(event, ReflectionPartial) and card is not None and card.step is None:
            card.preview(event)
            self._shown(card)
            self.set_status("running")
        elif isinstance(event, ModelOutputParsed) and card is not None:
            card.set_output(event.step)
            self._shown(card)
            self.set_status("running")
            self.spent += Ledger.of(event.step.usage)
            self.output_modes.append(event.step.output.output_mode if event.step.output is not None else None)
            self.tick()
        elif isinstance(event, ActionStarted) and card is not None:
            card.set_action(event.action, event.args)
        elif isinstance(event, ActionProgress) and card is not None:
            card.set_progress(event.progress)
        elif isinstance(event, ActionFinished) and card is not None:
            card.set_result(event.step)
            self.bar.value = min(event.step.index, self.max_steps)
        elif isinstance(event, ScreenshotTaken) and event.withheld:
            owner = next((c for c in reversed(self.cards) if c.index == event.step.index), None)
            if owner is not None:
                owner.set_withheld(event.withheld)
        elif isinstance(event, ScreenshotTaken):
            # Taken in the background, it may arrive after the next step started: it belongs to its own step.
            # The header shows the latest picture; its step's card keeps it hidden meanwhile (one picture on
            # screen, not the same one twice) and shows it once a newer one takes the header.
            owner = next((c for c in reversed(self.cards) if c.index == event.step.index), None)
            latest = self._live_step is None or event.step.index >= self._live_step.index
            if owner is not None:
                owner.set_screenshot(event.data, event.mime_type, shown=not latest)
            if latest:
                if self._live_step is not None and self._live_step is not owner:
                    self._live_step.show_screenshot()
                self._live_step = owner
                self.live.format = event.mime_type.split("/")[-1]
                self.live.value = event.data
                self.live.layout.display = None
        elif isinstance(event, ApprovalRequested):
            self.show_approval(event.approval)
        elif isinstance(event, ApprovalAnswered) and card is not None:
            self._close_approval()
            verdict = "approved" if event.answer.approved else "denied"
            cls = "na-ok" if event.answer.approved else "na-bad"
            reason = f": {esc(event.answer.reason)}" if event.answer.reason else ""
            card.extra.children = (
                w.HTML(f'<div class="na-kv {cls}">Action {verdict} by {esc(event.answer.by)}{reason}</div>'),
            )
        elif isinstance(event, RunFinished):
            self._close_approval()
            self.show_result(event.result)

    def _shown(self, card: StepCard) -> None:
        if self._collapse_when_shown is not None and self._collapse_when_shown is not card:
            self._collapse_when_shown.toggle(False)
        self._collapse_when_shown = None

    def set_tab(self, text: str) -> None:
        """Which browser tab the run acts on."""
        self.where.value = f"<small>in {esc(text)}</small>"

    def set_status(self, key: str) -> None:
        self.status.value = STATUS_TEXT.get(key, key)

    def tick(self) -> None:
        now = time.monotonic()
        end = self.finished_at or now
        modes = join_output_modes(self.output_modes)
        mode = " · " + " + ".join(OUTPUT_MODE_TEXT.get(m, m) for m in modes.split("+")) if modes else ""
        self.stats.value = f"{end - self.started:.1f}s · {self.spent.text(seconds=False)}{mode}"
        card = self.card()
        if card is not None and self.finished_at is None:
            card.wait_tick(now)

    def show_result(self, result: PageAgentResult) -> None:
        self.finished_at = time.monotonic()
        self.tick()
        self.set_status(result.status)
        self._finish_controls(result.success)
        card = self.card()
        if card is not None:
            card.end_wait(STATUS_TEXT.get(result.status, result.status))
        self.final.value = summary_html(result)

    def _finish_controls(self, success: bool) -> None:
        """The run is over: the bar shows completion, Stop goes away."""
        self.stop_button.disabled = True
        self.stop_button.layout.display = "none"
        self.bar.value = self.bar.max
        self.bar.bar_style = "success" if success else "danger"

    def note(self, text: str) -> None:
        self.final.value += f'<div class="na-kv na-warn">{esc(text)}</div>'

    def show_error(self, exc: BaseException) -> None:
        self.finished_at = time.monotonic()
        self.set_status("error")
        self._finish_controls(False)
        card = self.card()
        if card is not None:
            card.end_wait("error")
        self.final.value = f'<div class="na-kv na-bad na-error">{esc(error_message(exc))}</div>'

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
            widget.value = f'<div class="na-kv na-bad">⚠ {esc(text)}</div>'
            widget.layout.display = None

    def _wait_warning(self, what: str) -> w.HTML:
        widget = w.HTML(layout=w.Layout(display="none"))
        widget.add_class("na-wait-warning")
        self._wait_warnings.append((widget, what))
        self._show_wait_warning(widget, what)
        return widget

    def _drop_wait_warning(self, widget: w.HTML) -> None:
        self._wait_warnings = [(x, what) for x, what in self._wait_warnings if x is not widget]

    def _resolver(self, fut: asyncio.Future[T]) -> Callable[[T], None]:
        def resolve(value: T) -> None:
            def _set() -> None:
                if not fut.done():
                    fut.set_result(value)

            self.loop.call_soon_threadsafe(_set)

        return resolve

    def show_approval(self, approval: Approval) -> None:
        """Show Approve / Deny on the current card for ``approval``; the buttons answer it (nothing runs until
        one is clicked). The panel goes when the run says the approval was answered, whoever answered it."""
        self._close_approval()
        request = approval.request
        card = self.card()
        warning = self._wait_warning("click")
        panel = approval_panel(approval, warning)
        host = card.extra if card is not None else self.cards_box
        host.children = (*host.children, panel)
        if card is not None and card.step is not None and card.step.action:
            card.set_action(card.step.action, request.args, "waiting for approval")
        self.set_status("approval")
        self._open_approval = (host, panel, warning)

    def _close_approval(self) -> None:
        if self._open_approval is None:
            return
        host, panel, warning = self._open_approval
        self._open_approval = None
        self._drop_wait_warning(warning)
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
        panel = w.VBox([w.HTML(f"<div class='na-kv'><b>Question: {esc(question)}</b></div>"), box, warning])
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
            w.HTML(f"<div class='na-kv'><span class='k'>You answered</span> {esc(answer)}</div>"),
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

"""One step's card in the live view: reflection, action, live progress, result, screenshot, inspector.

A collapsible box of standard ipywidgets; :class:`~.run_view.RunView` creates one per ``StepStarted`` and feeds it
the step's events.
"""

from __future__ import annotations

import json
import time
from typing import Any

import ipywidgets as w

from ...agent import PageStep, ReflectionPartial
from .html import REFLECTION, args_html, esc, result_label
from .tuning import inspect_html


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
        how = self.step.replay if self.step is not None and self.step.replay else ""
        self.header.description = f"Step {self.index}/{self.max_steps}{' · ' + how if how else ''} · {text}"
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

    def end_wait(self, how: str) -> None:
        """The run ended (``how``: stopped, error, ...) while this step still waited for the model: the wait
        display stops and the header says how the step ended."""
        if self.waiting_since is None:
            return
        self.waiting_since = None
        self.progress.value = ""
        self._head(f"{how} while waiting for the model")

    def preview(self, partial: ReflectionPartial) -> bool:
        """The model's output as it streams in: reflection fields filling in, then the action's name and
        arguments (already parsed and capped by the agent). Returns True when there was something to show."""
        rows = [(label, getattr(partial, key)) for key, label in REFLECTION]
        rows = [(k, v) for k, v in rows if v]
        if not rows and partial.action is None:
            return False
        self.waiting_since = None
        self.has_content = True
        body = "".join(f'<div class="na-kv"><span class="k">{k}</span> {esc(v)}</div>' for k, v in rows)
        if partial.action is not None:
            body += (
                f'<div class="na-kv na-dim"><span class="k">Action</span> <span class="na-code">{esc(partial.action)} '
                f"{args_html(partial.args) if partial.args else ''}</span> (being written)</div>"
            )
        self.reflection.value = f'<div class="na-streaming">{body}</div>'
        self.progress.value = ""
        self._head(partial.next_goal[:100] if partial.next_goal else "the model is answering")
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
        body = "".join(f'<div class="na-kv"><span class="k">{k}</span> {esc(v)}</div>' for k, v in rows)
        if step.repairs:
            body += f'<div class="na-kv na-warn">repaired output: {esc("; ".join(step.repairs))}</div>'
        if step.output_error:
            body += f'<div class="na-kv na-bad">unusable output: {esc(step.output_error)}</div>'
            self._head("invalid output")
        elif step.next_goal:
            self._head(step.next_goal[:100])
        self.reflection.value = body

    def set_action(self, name: str, args: dict[str, Any], state: str = "running…") -> None:
        self.summary = f"{name} {json.dumps(args, ensure_ascii=False)}"
        self._head(self.summary[:100])
        self.action.value = (
            f'<div class="na-kv"><span class="k">Action</span> <span class="na-code">{esc(name)} {args_html(args)}'
            f"</span> <i>{esc(state)}</i></div>"
        )

    def set_progress(self, progress: object) -> None:
        text = progress if isinstance(progress, str) else json.dumps(progress, ensure_ascii=False, default=str)
        self.progress.value = f'<div class="na-kv"><span class="k">Progress</span> {esc(text)}</div>'

    def set_result(self, step: PageStep) -> None:
        if step.action is not None:
            self.action.value = (
                f'<div class="na-kv"><span class="k">Action</span> <span class="na-code">{esc(step.action)} '
                f"{args_html(step.args)}</span> <small>{step.action_ms:.0f} ms</small></div>"
            )
        label, tone = result_label(step)
        self.result.value = (
            f'<div class="na-kv na-{tone}"><span class="k">{label}</span> '
            f'<span class="na-code">{esc(step.result)}</span></div>'
        )
        self.progress.value = ""

    def set_screenshot(self, data: bytes, fmt: str, *, shown: bool = True) -> None:
        """This step's picture; ``shown=False`` keeps it hidden while the view's header shows the same bytes."""
        self.image.format = fmt.split("/")[-1]
        self.image.value = data
        self.image.layout.display = None if shown else "none"

    def set_withheld(self, why: str) -> None:
        """This step has no picture, and why (hidden values): said where the picture would be."""
        self.image.layout.display = "none"
        self.extra.children = (*self.extra.children, w.HTML(f'<div class="na-kv na-warn">{esc(why)}</div>'))

    def show_screenshot(self) -> None:
        """Show this step's picture (a newer one took its place in the header)."""
        if self.image.value:
            self.image.layout.display = None

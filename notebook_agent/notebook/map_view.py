"""``%%agent --each ROWS``: one task over every row of a table, in one view, and its handle.

The view is one progress bar for the whole map (the rows succeeded, failed, stopped, running and not started,
counted as the result counts them; rows per minute, time left), a table of
the rows (status and answer as they finish), and the live card of any row on click: each row's page events are
kept, so a row opened late shows every step it took. A row that asks for an approval opens by itself (the
question waits on its card). Stop, ``%agent stop`` and Kernel → Interrupt stop every row and keep what
finished. When the map ends the view becomes a static table (it needs no kernel), like a single run's record.

What the rows spent is on the progress line and in the table (tokens, cost). A map of more than 20 rows without a
budget runs its first 5, then shows what the whole would cost at their rate with Continue / Stop
(agent/batch/map_budget.py); from code, the handle's ``wait_for_estimate()``, ``proceed()`` and ``stop()``.

:class:`MapRun` is the handle: ``result = await agent_run`` gives the :class:`~notebook_agent.agent.MapResult`
(``result.to_pandas()``, ``await result.retry()``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Generator
from typing import Any

import ipywidgets as w

from ..agent import ApprovalRequested, MapEvent, MapFinished, MapProgress, MapResult, PageAgent, RowEvent
from ..agent.batch.map_budget import EstimateQuestion, MapEstimate, MapEstimated
from ..browser.session.browser_session import BrowserSession
from ..core.errors import error_message
from ..core.text.shown import NO_MATH, html_block
from ..llm.ledger import Ledger, cost_text
from .kernel_state import STATE
from .views.display import LiveOutput, waiting_html
from .views.html import CSS, esc
from .views.record import error_html
from .views.run_view import RunView

#: Rows listed in the table and offered to watch: the latest to change (a map of 10,000 rows keeps the view, its
#: widget state and the events it keeps as light as one of 200; the result has every row).
TABLE_ROWS = 200


def _short(value: object, limit: int = 60) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _eta(seconds: float | None) -> str:
    if seconds is None:
        return "time left: after the first row"
    if seconds < 90:
        return f"~{seconds:.0f} s left"
    if seconds < 90 * 60:
        return f"~{seconds / 60:.0f} min left"
    return f"~{seconds / 3600:.1f} h left"


class MapView:
    """The widgets of one map, and the only thing that touches them."""

    def __init__(self, template: str, total: int, model: str) -> None:
        self.loop = asyncio.get_running_loop()
        self.total = total
        self.title = w.HTML(
            f'{CSS}<div class="na-head"><b>{esc(template)}</b><br><small>{total} rows · model <code>{esc(model)}</code>'
            "</small></div>"
        )
        self.bar = w.IntProgress(value=0, min=0, max=max(1, total), layout=w.Layout(width="240px"))
        self.line = w.Label(f"{total} rows · starting")
        self.stop_button = w.Button(description="Stop all", icon="stop", button_style="warning")
        self.on_stop: Any = lambda: None
        self.stop_button.on_click(lambda _b: self.loop.call_soon_threadsafe(self.on_stop))
        self.picker = w.Dropdown(options=[("choose a row to watch", -1)], value=-1, layout=w.Layout(width="420px"))
        self.picker.observe(lambda change: self.show_row(int(change["new"])), names="value")
        self.table = w.HTML("")
        self.card_box = w.VBox()
        head = w.HBox([self.bar, self.line, self.stop_button], layout=w.Layout(align_items="center"))
        self.ask_box = w.VBox()
        """The estimate after the first rows, with Continue / Stop, while the map waits for the answer."""
        self.root = w.VBox([self.title, head, self.ask_box, self.table, self.picker, self.card_box])
        self.root.add_class("na-run")
        for name in NO_MATH.split():
            self.root.add_class(name)
        self.events: dict[int, list[Any]] = {}
        self.views: dict[int, RunView] = {}
        self.labels: dict[int, str] = {}
        self.status: dict[int, str] = {}
        self.answers: dict[int, str] = {}
        self.shown: int | None = None
        self.max_steps = 20
        self.healed = 0
        """Rows a recipe's map healed (the model redid a step), and the tokens that cost."""
        self.tokens = 0
        self.spent = Ledger()
        """What the ended rows cost."""
        self.costs: dict[int, str] = {}
        self.question: EstimateQuestion | None = None

    def handle(self, event: MapEvent) -> None:
        if isinstance(event, RowEvent):
            self.events.setdefault(event.row, []).append(event.event)
            view = self.views.get(event.row)
            if view is not None:
                view.handle(event.event)
            if isinstance(event.event, ApprovalRequested) and self.shown != event.row:
                self.picker.value = event.row  # the question waits on that row's card: show it
        elif isinstance(event, MapProgress):
            record = event.record
            if event.row not in self.labels:
                self.labels[event.row] = f"row {event.row + 1}: {_short(record.task, 70)}"
                self._forget_old_rows()
                self.picker.options = [self.picker.options[0], *((label, i) for i, label in self.labels.items())]
            self.status.pop(event.row, None)  # the latest to change come last
            self.status[event.row] = record.status
            facts = record.facts
            if facts is not None:
                self.answers[event.row] = facts.answer or facts.error or ""
                if event.ended and facts.replay_counts.get("healed"):
                    self.healed += 1
                self.tokens += facts.tokens if event.ended else 0
                if event.ended:
                    self.spent += facts.ledger
                    self.costs[event.row] = f"{facts.tokens:,} · {cost_text(facts.ledger.cost)}"
            elif record.error:
                self.answers[event.row] = record.error
            self.bar.value = event.done
            self.line.value = self.progress_line(event)
            self._table()
        elif isinstance(event, MapEstimated):
            self.ask(event.question)
        elif isinstance(event, MapFinished):
            self.finish(event.result)

    def ask(self, question: EstimateQuestion) -> None:
        """The first rows ran: what the whole map would cost at their rate, Continue / Stop (either answers it)."""
        self.question = question
        said = w.HTML(
            html_block(
                f'<div class="na-kv na-warn"><b>{esc(question.estimate.text())}</b><br>'
                f"{esc(_spent_line(question.estimate))} Go on with the rest?</div>"
            )
        )
        go = w.Button(description="Continue", icon="play", button_style="success")
        stop = w.Button(description="Stop", icon="stop", button_style="warning")
        go.on_click(lambda _b: question.proceed())
        stop.on_click(lambda _b: question.stop())
        self.ask_box.children = [said, w.HBox([go, stop])]
        question.when_answered(self.answered)

    def answered(self) -> None:
        """The estimate was answered: the buttons go, the answer stays."""
        question = self.question
        if question is None:
            return
        said = "going on with the rest" if question.goes_on else "stopped after these rows"
        self.ask_box.children = [w.HTML(html_block(f'<div class="na-kv na-dim">{esc(question.estimate.text())}: '
                                                   f"{esc(said)}</div>"))]  # fmt: skip

    def progress_line(self, event: MapProgress) -> str:
        """``10000 rows: 118 succeeded, 2 failed, 8 running, 9872 not started · 431.2 rows/min · ~23 min left``
        (the map's counts, said as the result says them; for a recipe, the rows healed and their tokens)."""
        rate = f" · {event.rows_per_minute:.1f} rows/min · {_eta(event.eta_s)}" if event.done else ""
        healed = f" · {self.healed} healed ({self.tokens:,} tokens)" if self.healed else ""
        spent = f" · {self.spent.text(seconds=False)}" if self.spent.calls else ""
        return f"{event.counts.text()}{healed}{spent}{rate}"

    def _forget_old_rows(self) -> None:
        """Keep the table, the picker and the kept events to the :data:`TABLE_ROWS` latest rows (and the one
        shown): a long map's view stays as light as a short one's."""
        while len(self.labels) > TABLE_ROWS:
            old = next((i for i in self.labels if i != self.shown), None)
            if old is None:
                return
            for kept in (self.labels, self.events, self.views, self.status, self.answers, self.costs):
                kept.pop(old, None)

    def _table(self) -> None:
        cell = "border:1px solid #d0d7de;padding:2px 6px;text-align:left;vertical-align:top"
        rows = []
        for i in sorted(list(self.status)[-TABLE_ROWS:]):
            status = self.status[i]
            color = "#1a7f37" if status == "completed" else ("#57606a" if status == "running" else "#cf222e")
            rows.append(
                f'<tr><td style="{cell}">{i + 1}</td><td style="{cell};color:{color}">{esc(status)}</td>'
                f'<td style="{cell}">{esc(_short(self.answers.get(i, ""), 120))}</td>'
                f'<td style="{cell}">{esc(self.costs.get(i, ""))}</td></tr>'
            )
        self.table.value = html_block(
            '<table style="border-collapse:collapse;font-size:0.9em;margin:4px 0">'
            f'<tr><th style="{cell}">row</th><th style="{cell}">status</th><th style="{cell}">answer</th>'
            f'<th style="{cell}">tokens · cost</th></tr>'
            f"{''.join(rows)}</table>"
        )

    def show_row(self, row: int) -> None:
        """The live card of ``row``: built from every event it sent so far, then kept up to date."""
        if row < 0:
            self.card_box.children = []
            self.shown = None
            return
        view = self.views.get(row)
        if view is None:
            view = RunView(self.labels.get(row, f"row {row + 1}"), "", self.max_steps)
            for event in self.events.get(row, []):
                view.handle(event)
            self.views[row] = view
        self.shown = row
        self.card_box.children = [view.root]

    def finish(self, result: MapResult) -> None:
        self.bar.value = result.counts.ended
        self.line.value = result.summary()
        self.stop_button.disabled = True
        if self.question is not None and not self.question.answered:
            self.ask_box.children = []
        if result.note:
            self.ask_box.children = [w.HTML(html_block(f'<div class="na-kv na-warn">{esc(result.note)}</div>'))]


def _spent_line(estimate: MapEstimate) -> str:
    """``The first 5 rows cost $0.0171 (14,785 tokens).``"""
    spent = estimate.spent
    return f"The first {estimate.sampled} rows cost {cost_text(spent.cost)} ({spent.tokens:,} tokens)."


def map_record_html(result: MapResult) -> str:
    """A finished map as plain HTML (no widgets): the summary and a table of every row."""
    cell = "border:1px solid #d0d7de;padding:2px 6px;text-align:left;vertical-align:top"

    def tr(*cells: str, head: bool = False) -> str:
        tag = "th" if head else "td"
        return "<tr>" + "".join(f'<{tag} style="{cell}">{c}</{tag}>' for c in cells) + "</tr>"

    rows = [tr("row", "input", "status", "answer", "tokens", "cost", head=True)]
    for r in result.rows[:TABLE_ROWS]:
        answer = (r.facts.answer or r.facts.error or "") if r.facts is not None else (r.error or "")
        values = ", ".join(f"{k}={_short(v, 30)}" for k, v in list(r.values.items())[:3])
        spent = r.ledger
        rows.append(
            tr(str(r.index + 1), esc(values), esc(r.status), esc(_short(answer, 160)), f"{spent.tokens:,}",
               esc(cost_text(spent.cost)))
        )  # fmt: skip
    left = len(result.rows) - TABLE_ROWS
    more = f"<div>… and {left} more rows (result.to_pandas())</div>" if left > 0 else ""
    return html_block(
        f'<div style="font-weight:bold">{esc(result.template)}</div><div>{esc(result.summary())}</div>'
        + (f'<div style="color:#9a6700">{esc(result.note)}</div>' if result.note else "")
        + f'<table style="border-collapse:collapse;margin-top:6px">{"".join(rows)}</table>{more}'
        '<div style="color:#57606a;font-size:0.85em">notebook_agent map (a static record: the live view needs a '
        "running kernel)</div>",
        cls="na-record",
        style="border:1px solid #d0d7de;border-radius:8px;padding:8px;font-family:system-ui,sans-serif",
    )


class MapRun:
    """A handle on one ``%%agent --each`` map: shown as its view, awaitable for its :class:`MapResult`."""

    def __init__(
        self,
        agent: PageAgent,
        template: str,
        rows: object,
        view: MapView,
        *,
        name: str = "",
        concurrency: int = 4,
        budget: dict[str, Any] | None = None,
    ) -> None:
        self.agent = agent
        self.budget = dict(budget or {})
        """The whole map's ``max_cost`` / ``max_tokens`` (each row's is the agent's)."""
        self.task_text = template
        self.rows = rows
        self.view = view
        view.on_stop = self.stop
        self.name = name
        self.concurrency = concurrency
        self.kernel_browser = True
        self.session: BrowserSession | None = None
        self.result: MapResult | None = None
        self.error: BaseException | None = None
        self.task: asyncio.Task[MapResult | None] | None = None
        self.output: LiveOutput | None = None
        self.recipe: Any = None
        """``--recipe``: each row follows this recipe (agent/recipes/recipe_map.py) instead of asking the model."""
        self.heal = True
        self.mode = "auto"
        """``--mode``: how the recipe's rows go (``auto``, ``request``, ``page``: agent/recipes/calls/rows.py)."""

    @property
    def done(self) -> bool:
        return self.task is not None and self.task.done()

    @property
    def asked_for_interrupt(self) -> bool:
        return False

    def show(self) -> None:
        """The live view, with its static form beside it until the map's record takes its place."""
        html = waiting_html(self.task_text, "A notebook_agent map")
        self.output = LiveOutput(self.view.root, html, f"notebook_agent map: {self.task_text}")

    def start(self) -> None:
        self.task = asyncio.get_running_loop().create_task(self._main())
        STATE.tasks.add(self.task)
        self.task.add_done_callback(STATE.tasks.discard)

    def stop(self, reason: str = "Stopped by the user") -> None:
        """Stop every row (what finished is kept); an open estimate is answered Stop."""
        if self.view.question is not None:
            self.view.question.stop()
        self.agent.stop(reason)

    # -- the estimate, answered from code (scripts, tests, "Run All" notebooks) --------------------------------
    @property
    def pending_estimate(self) -> MapEstimate | None:
        """What the whole map would cost at its first rows' rate, while it waits for Continue / Stop."""
        question = self.view.question
        return question.estimate if question is not None and not question.answered else None

    async def wait_for_estimate(self, timeout: float = 120.0) -> MapEstimate:
        """Wait until the map asks whether to go on (or ends without asking: then raise)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while self.pending_estimate is None:
            if self.done or loop.time() > deadline:
                state = "ended" if self.done else f"did not ask within {timeout:g}s"
                raise RuntimeError(f"The map {state} without asking whether to go on")
            await asyncio.sleep(0.05)
        return self.pending_estimate

    def proceed(self) -> None:
        """Same as clicking Continue: run the rest of the map."""
        question = self.view.question
        if question is None or question.answered:
            raise RuntimeError("The map is not waiting for an answer to its estimate")
        question.proceed()

    async def _main(self) -> MapResult | None:
        try:
            self.session = await STATE.get_browser()
            self.agent.browser = self.session  # each row in a tab of its own of the kernel's browser
            if self.recipe is not None:
                from ..agent.recipes.recipe_map import stream_recipe

                events = stream_recipe(
                    self.recipe, self.rows, self.agent, heal=self.heal, concurrency=self.concurrency, interactive=True,
                    mode=self.mode, ask_estimate=True, **self.budget,
                )  # fmt: skip
            else:
                events = self.agent.map_stream(
                    self.task_text, self.rows, concurrency=self.concurrency, interactive=True, ask_estimate=True,
                    **self.budget,
                )  # fmt: skip
            async for event in events:
                self.view.handle(event)
                if isinstance(event, MapFinished):
                    self.result = event.result
            return self.result
        except Exception as exc:
            self.error = exc
            self.view.line.value = "Error (below)"  # a Label is typeset by MathJax: text from outside goes in HTML
            self.view.table.value += html_block(esc(error_message(exc)), cls="na-kv na-bad")
            return None
        finally:
            self._leave_record()

    def _leave_record(self) -> None:
        """The map ended: its output becomes its record (or, when it failed, the error), with no widget."""
        if self.output is None:
            return
        if self.result is not None:
            self.output.settle(map_record_html(self.result), self.result.summary())
        elif self.error is not None:
            self.output.settle(error_html(self.task_text, self.error), error_message(self.error))

    def __await__(self) -> Generator[Any, None, MapResult | None]:
        if self.task is None:
            raise RuntimeError("This map was never started")
        return self._result_for_awaiter(self.task).__await__()

    async def _result_for_awaiter(self, task: asyncio.Task[MapResult | None]) -> MapResult | None:
        """``await map_run``: the result, and the record again from this cell: headless executors (nbval,
        nbclient) keep only what the running cell sends, so the map's saved output is its record, not the view."""
        result = await asyncio.shield(task)
        self._leave_record()
        return result

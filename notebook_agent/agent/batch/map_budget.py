"""What a map may spend, and asking before a big one spends it: :class:`MapGate`, which the engine asks before it
starts each row and tells of every row's steps.

**A map's budget** (``agent.map(..., max_cost=, max_tokens=)``: the whole map's; each row's is the agent's own
``max_cost``/``max_tokens``). A row is started only when what the map has spent (the ended rows, and the steps of
the rows under way), what the rows under way are expected to spend still, and one more row's expected cost stay
within it; a row is expected to cost what the ended rows cost on average, and before any has ended, its first
model call (the system prompt and the task counted offline, and the output allowance). When what is spent crosses
the budget, the rows under way are stopped (each within a step); what finished is kept, the rows never started
stay ``not_started``, and ``MapResult.note`` says why. So a map run one row at a time stops within one row of its
budget.

**The estimate** (``ask_estimate=True``: a front that can ask someone, the notebook's view or a terminal). A map
of more than :data:`ASK_ABOVE` rows without a budget runs its first :data:`ESTIMATE_ROWS` rows, then says what the
whole map would cost at their rate and waits for an answer (:class:`EstimateQuestion`, carried by
:class:`MapEstimated`): Continue runs the rest, Stop keeps those rows and starts no more. A sample that cost
nothing (a local model, a recipe replayed with no model call) goes on without asking.

Why these numbers: five rows average over the steps rows take (a row of a map commonly takes 3 to 8 steps, and the
mean of five is within about a quarter of the whole map's on the demo shop), and are one or two waves at the
default four at a time; above twenty rows the rest of the map is at least three times what the sample cost, so the
answer can save most of the spend, while a map of twenty rows or fewer costs at most four samples, which a click
would not save.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from ...core.abort import AbortedError, AbortSignal
from ...core.messages import Usage
from ...llm.ledger import Ledger, cost_text, tokens_text
from ...llm.pricing import call_cost, prices_of
from ...llm.tokens import count_tokens
from ..runs.events import PageEvent, StepFinished
from ..safety.budget import OUTPUT_ALLOWANCE, Budget, BudgetError, check_priced

ESTIMATE_ROWS = 5
"""Rows a map runs before it says what the whole would cost (see the module docstring)."""

ASK_ABOVE = 20
"""A map of more rows than this, without a budget, asks before going on (see the module docstring)."""


def first_call(prompt: str, model: object | None) -> Ledger:
    """At least what a row's first model call costs: its system prompt and task (``prompt``) counted offline, and
    the output allowance, at ``model``'s prices; the page's text, which comes on top, is not known before."""
    tokens = count_tokens(prompt)
    prices = prices_of(model)
    cost = call_cost(prices, tokens, OUTPUT_ALLOWANCE) if prices is not None else None
    return Ledger(input=tokens, output=OUTPUT_ALLOWANCE, calls=1, cost=cost)


def is_free(model: object) -> bool:
    """The model's tokens cost nothing (a model on this machine, the demo): a map of it has nothing to ask about."""
    prices = prices_of(model)
    return prices is not None and not any(prices.values())


def check_budgets(row_budget: Budget, budget: Budget, model: object | None, least: Ledger | None) -> None:
    """Before any row: a cost budget needs the rows' model priced (``model``; None: each row's own, checked when it
    runs), and a budget (the map's, or each row's) smaller than one row's first model call (``least``; None: a row
    may call no model) could run nothing: both are a :class:`BudgetError`."""
    if model is not None:
        check_priced(model, budget.max_cost, "The map's max_cost")
        check_priced(model, row_budget.max_cost, "Each row's max_cost")
    if least is None:
        return
    for whose, limit in (("The map's", budget), ("Each row's", row_budget)):
        priced = limit.max_cost is not None and least.cost is not None
        crossed = limit.crossed(least.tokens, least.cost if priced else 0.0)
        if crossed is not None:
            raise BudgetError(
                f"{whose} budget {crossed} is smaller than one row: a row's first model call alone reads about "
                f"{least.input:,} tokens and may write {least.output:,} ({cost_text(least.cost)}). Raise it, or "
                "leave it out."
            )


@dataclass(frozen=True)
class MapEstimate:
    """What the whole map would cost at the rate of its first rows: ``per_row`` is their mean ledger."""

    rows: int
    sampled: int
    per_row: Ledger
    concurrency: int
    spent: Ledger

    @property
    def cost(self) -> float | None:
        """Dollars for every row at this rate (None: unknown)."""
        return None if self.per_row.cost is None else self.per_row.cost * self.rows

    @property
    def tokens(self) -> int:
        return self.per_row.tokens * self.rows

    @property
    def seconds(self) -> float:
        """Wall time of the whole map at this rate, ``concurrency`` rows at a time."""
        return self.per_row.seconds * self.rows / max(1, self.concurrency)

    def text(self) -> str:
        """``≈ $4.10 for 1,000 rows at the first 5 rows' rate (≈ 2.3M tokens, ≈ 35 min)``."""
        rate = f"for {self.rows:,} rows at the first {self.sampled} rows' rate"
        minutes = self.seconds / 60
        took = f"≈ {self.seconds:.0f} s" if minutes < 1.5 else f"≈ {minutes:.0f} min"
        if minutes >= 90:
            took = f"≈ {minutes / 60:.1f} h"
        if self.cost is None:
            return (
                f"≈ {tokens_text(self.tokens)} tokens {rate} (cost unknown: the model's prices are not known; {took})"
            )
        return f"≈ {cost_text(self.cost)} {rate} (≈ {tokens_text(self.tokens)} tokens, {took})"


class EstimateQuestion:
    """One question to a person, asked once after a map's first rows: go on with the rest, or stop there. Answered
    exactly once, by whoever is first (a button, the handle's ``proceed()``/``stop()``, a terminal prompt, a stop of
    the map); :meth:`proceed` and :meth:`stop` are safe from any thread."""

    def __init__(self, estimate: MapEstimate) -> None:
        self.estimate = estimate
        self._loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()
        self._future: asyncio.Future[tuple[bool, str]] = self._loop.create_future()

    @property
    def answered(self) -> bool:
        return self._future.done()

    @property
    def goes_on(self) -> bool | None:
        """True: Continue, False: Stop, None: not answered yet."""
        return self._future.result()[0] if self._future.done() else None

    def proceed(self, by: str = "user") -> None:
        """Run the rest of the map (same as clicking Continue)."""
        self._answer(True, by)

    def stop(self, by: str = "user") -> None:
        """Keep the rows run so far and start no more (same as clicking Stop)."""
        self._answer(False, by)

    def when_answered(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` (on the map's loop) once it is answered."""
        self._future.add_done_callback(lambda _f: callback())

    def _answer(self, go: bool, by: str) -> None:
        if threading.get_ident() == self._thread:
            self._set(go, by)
        else:
            self._loop.call_soon_threadsafe(self._set, go, by)

    def _set(self, go: bool, by: str) -> None:
        if not self._future.done():
            self._future.set_result((go, by))

    async def wait(self, signal: AbortSignal) -> bool:
        """The answer; a stop of the map answers Stop."""
        remove = signal.add_callback(lambda _reason: self._answer(False, "stop"))
        try:
            go, _ = await asyncio.shield(self._future)
        finally:
            remove()
        return go


@dataclass(frozen=True)
class MapEstimated:
    """The map ran its first rows and asks whether to go on: answer ``question`` (``proceed()`` / ``stop()``)."""

    question: EstimateQuestion
    type: Literal["map_estimate"] = "map_estimate"


@dataclass
class MapGate:
    """Whether the next row of a map may start (its budget, its estimate question), and when rows under way must
    stop (its budget), from what the rows spend. ``emit`` puts the question in the map's stream. The engine calls
    :meth:`admit` before it starts a row, :meth:`row_started`, :meth:`row_event` with each of the row's page
    events and :meth:`row_ended`; every admitted row ends exactly once."""

    budget: Budget
    rows: int
    concurrency: int
    ask: bool
    first_call: Ledger
    emit: Callable[[Any], None]
    ended: Ledger = field(default_factory=Ledger)
    ran: int = 0
    """Rows that ended having run (their ledgers are in ``ended``)."""
    admitted: int = 0
    settled: int = 0
    """Admitted rows that ended, whichever way."""
    live: dict[int, Usage] = field(default_factory=dict)
    """Each row under way, and what it has spent in the steps it finished so far."""
    note: str = ""
    """Why no more rows start (the budget, the answer to the estimate), or ""."""
    question: EstimateQuestion | None = None
    _sample_ended: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def asks(self) -> bool:
        """The map asks after its first rows: a front that can ask, more rows than :data:`ASK_ABOVE`, no budget."""
        return self.ask and self.rows > ASK_ABOVE and not self.budget

    def spent(self) -> Ledger:
        """What the map has spent: the ended rows, and the finished steps of the rows under way."""
        return sum((Ledger.of(u) for u in self.live.values()), self.ended)

    def per_row(self) -> Ledger:
        """What a row is expected to cost: the ended rows' mean, else a row's first model call."""
        n, e = self.ran, self.ended
        if not n:
            return self.first_call
        cost = None if e.cost is None else e.cost / n
        return Ledger(e.input // n, e.cached // n, e.output // n, e.reasoning // n, e.calls // n, cost, e.seconds / n)

    async def admit(self, signal: AbortSignal) -> bool:
        """May the next row start? In a map that asks, waits for its first rows to end and for the answer."""
        if self.note:
            return False
        if self.asks and self.admitted >= ESTIMATE_ROWS and not await self._answered(signal):
            return False
        refusal = self._over_budget()
        if refusal is not None:
            self.note = refusal
            return False
        self.admitted += 1
        return True

    def row_started(self, row: int) -> None:
        self.live[row] = Usage()

    def _over_budget(self) -> str | None:
        """Why one more row would cross the budget, or None: what is spent, what each row under way is expected to
        spend still, and one more row."""
        if not self.budget:
            return None
        spent, row = self.spent(), self.per_row()
        expected = spent + row
        for usage in self.live.values():
            cost = None if row.cost is None or usage.dollars is None else max(0.0, row.cost - usage.dollars)
            expected += Ledger(input=max(0, row.tokens - usage.tokens), cost=cost)
        crossed = self.budget.crossed(expected.tokens, expected.cost if self.budget.max_cost is not None else 0.0)
        if crossed is None:
            return None
        return (
            f"Stopped starting rows: one more would cross the map's {crossed} ({_spent(spent)} spent, a row "
            f"≈ {_spent(row)})."
        )

    async def _answered(self, signal: AbortSignal) -> bool:
        """The answer to the estimate, asked once the first rows have ended (the first worker to get here asks; the
        others wait for the same answer)."""
        if self.question is None:
            try:
                await signal.race(self._sample_ended.wait())
            except AbortedError:
                return False
        if self.question is None:
            sample = self.per_row()
            if not self.ran or sample.cost == 0:  # nothing spent: a free model, a recipe with no model call
                self.ask = False
                return True
            self.question = EstimateQuestion(MapEstimate(self.rows, self.ran, sample, self.concurrency, self.ended))
            self.emit(MapEstimated(self.question))
        if not self.asks:
            return True
        go = await self.question.wait(signal)
        if not go and not self.note:
            self.note = f"Stopped after the first {self.ran} rows: {self.question.estimate.text()}."
        return go

    def row_event(self, row: int, event: PageEvent) -> str | None:
        """A row's page event: a finished step adds to what it spent. Returns why the rows under way must stop
        (the map's budget is crossed), or None."""
        if not isinstance(event, StepFinished) or row not in self.live:
            return None
        self.live[row].add(event.step.usage)
        return self.crossed()

    def crossed(self) -> str | None:
        """Why the rows under way must stop now (what is spent crossed the map's budget), or None."""
        if not self.budget:
            return None
        spent = self.spent()
        crossed = self.budget.crossed(spent.tokens, spent.cost if self.budget.max_cost is not None else 0.0)
        if crossed is None:
            return None
        reason = f"The map's budget {crossed} was reached ({_spent(spent)} spent)."
        self.note = self.note or f"{reason} The rows under way were stopped; no more were started."
        return reason

    def row_ended(self, row: int, spent: Ledger | None) -> None:
        """An admitted row ended: ``spent`` is its run's ledger (None: it never ran)."""
        self.live.pop(row, None)
        self.settled += 1
        if spent is not None:
            self.ended += spent
            self.ran += 1
        if self.admitted >= ESTIMATE_ROWS and self.settled >= self.admitted:
            self._sample_ended.set()


def _spent(ledger: Ledger) -> str:
    cost = f", {cost_text(ledger.cost)}" if ledger.cost != 0 else ""
    return f"{ledger.tokens:,} tokens{cost}"

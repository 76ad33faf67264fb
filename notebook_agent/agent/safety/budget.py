"""A run's budget: ``max_cost`` (dollars) and ``max_tokens``, kept by stopping the run with status ``budget``.

Two checks, both of what the run has spent so far (its steps' usage):

- before each model call, the call is estimated: its prompt counted offline (llm/tokens.py ``prompt_tokens``, the
  request as built) plus the output it may write (the call's ``max_tokens``, else :data:`OUTPUT_ALLOWANCE` or the
  most the run's model has written in one call so far, whichever is more), priced at the model's input and output
  prices with nothing taken from a cache (the most it can cost). When spent plus that estimate would cross the
  budget, the call is not made: the step ends stopped, saying so, and the run ends;
- after each call, what was really spent: an estimate can fall short (a tokenizer that counts differently, a
  model that reasons at length), and then the run stops there, one step past the budget at most.

So a run never spends more than its budget plus one step. A budget is checked before the run: a number above 0
(:func:`checked_cost`, :func:`checked_tokens`), and a cost budget only for a model whose prices are known
(:func:`check_priced`), since a cost that cannot be priced cannot be kept.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ...core.errors import InputError
from ...core.messages import Usage
from ...llm.ledger import cost_text
from ...llm.pricing import Prices, call_cost, prices_of

OUTPUT_ALLOWANCE = 1_024
"""Output tokens a call is expected to write when it sets no ``max_tokens``: an ``AgentOutput`` (reflection and one
action) takes 150 to 600; a reasoning model's more is caught by the most the run has seen (and by the check after
the call)."""


class BudgetError(InputError):
    """A budget that cannot be used (not a number above 0, or a cost budget for a model whose prices are unknown),
    or a map budget smaller than one row: said before anything runs."""


def checked_cost(value: object, name: str = "max_cost") -> float | None:
    """``value`` as a cost budget: None (none), or dollars above 0 (``0.5``, ``"0.5"``, ``"$0.50"``); anything
    else is a :class:`BudgetError` in one sentence naming ``name``."""
    number = _positive(value.strip().removeprefix("$") if isinstance(value, str) else value, name, "dollars")
    return None if number is None else number


def checked_tokens(value: object, name: str = "max_tokens") -> int | None:
    """``value`` as a token budget: None (none), or a whole number above 0 (``10000``, ``"10_000"``)."""
    number = _positive(value, name, "tokens")
    if number is not None and number != int(number):
        raise BudgetError(f"{name} must be a whole number of tokens above 0, got {value!r}.")
    return None if number is None else int(number)


def _positive(value: object, name: str, unit: str) -> float | None:
    if value is None:
        return None
    said = f"{name} must be {'a whole number of tokens' if unit == 'tokens' else 'a number of dollars'} above 0"
    if isinstance(value, bool):
        raise BudgetError(f"{said}, not {value!r}.")
    if not isinstance(value, (str, int, float)):
        raise BudgetError(f"{said}, got {value!r}.")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise BudgetError(f"{said}, got {value!r}.") from None
    if not math.isfinite(number) or number <= 0:
        raise BudgetError(f"{said}, got {value!r}.")
    return number


def check_priced(model: object, max_cost: float | None, what: str = "max_cost") -> None:
    """A cost budget needs the model's prices: refuse, saying how to give them, when they are unknown."""
    if max_cost is None or prices_of(model) is not None:
        return
    name = f"{getattr(model, 'provider', '?')}:{getattr(model, 'id', '?')}"
    raise BudgetError(
        f"{what}={max_cost:g} cannot be kept: the prices of {name} are not known, so its cost cannot be counted. "
        f'Give them with notebook_agent.llm.set_prices("{name}", input=..., output=...) (dollars per million '
        "tokens), or use max_tokens instead."
    )


@dataclass(frozen=True)
class Budget:
    """``max_cost`` dollars and ``max_tokens`` tokens (None: no limit)."""

    max_cost: float | None = None
    max_tokens: int | None = None

    def __bool__(self) -> bool:
        return self.max_cost is not None or self.max_tokens is not None

    def crossed(self, tokens: int, cost: float | None) -> str | None:
        """Which limit ``tokens`` and ``cost`` cross (``max_tokens=10,000``), or None. An unknown cost crosses a
        cost budget: it cannot be shown to be under it."""
        if self.max_tokens is not None and tokens > self.max_tokens:
            return f"max_tokens={self.max_tokens:,}"
        if self.max_cost is not None and (cost is None or cost > self.max_cost):
            return f"max_cost=${self.max_cost:g}"
        return None


def spent_text(usage: Usage) -> str:
    """``8,800 tokens, $0.0123``: what a run has spent, as a budget's messages say it (a free run's tokens only)."""
    cost = usage.dollars
    return f"{usage.tokens:,} tokens" + ("" if cost == 0 else f", {cost_text(cost)}")


class RunBudget:
    """One run's budget, checked around each model call (see the module docstring). ``prices``: the model's
    (None: unknown, only with no cost budget); ``output_limit``: the calls' ``max_tokens`` (None: not set)."""

    def __init__(self, budget: Budget, prices: Prices | None, output_limit: int | None) -> None:
        self.budget = budget
        self.prices = prices
        self.output_limit = output_limit
        self.most_output = 0
        """The most output tokens one call of this run has written so far."""

    def output_estimate(self) -> int:
        """The output tokens the next call is counted with."""
        return self.output_limit or max(OUTPUT_ALLOWANCE, self.most_output)

    def before_call(self, spent: Usage, prompt: int, step: int) -> str | None:
        """Why step ``step``'s model call, whose prompt is ``prompt`` tokens, may not be made (None: it may)."""
        if not self.budget:
            return None
        output = self.output_estimate()
        cost = spent.dollars
        if cost is not None and self.prices is not None:
            cost += call_cost(self.prices, prompt, output)
        crossed = self.budget.crossed(spent.tokens + prompt + output, cost if self.budget.max_cost else 0.0)
        if crossed is None:
            return None
        return (
            f"Stopped before step {step}'s model call: about {prompt + output:,} tokens ({prompt:,} of prompt, up "
            f"to {output:,} of output) would cross {crossed} after {spent_text(spent)} spent."
        )

    def after_call(self, spent: Usage, written: int) -> str | None:
        """Why the run stops after a call that wrote ``written`` output tokens (None: it goes on)."""
        self.most_output = max(self.most_output, written)
        crossed = self.budget.crossed(spent.tokens, spent.dollars if self.budget.max_cost else 0.0)
        return f"Stopped at the budget: {spent_text(spent)} spent, more than {crossed}." if crossed else None

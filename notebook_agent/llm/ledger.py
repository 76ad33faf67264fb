"""What work cost, the same way at every scale: :class:`Ledger`, for one model call, a step, a run, a map's row
and a whole map.

A ledger is the tokens read (``input``: not from a cache; ``cached``: read from the provider's prompt cache), the
tokens written (``output``, of which ``reasoning`` were spent reasoning), the model calls, the cost in dollars and
the wall time. It is made from a :class:`~notebook_agent.core.messages.Usage` and the seconds the work took, and
ledgers add up, so a map's ledger is its rows' sum and every view (the run's summary line, the terminal's last line,
a map's table and CSV, the notebook's record) reads the same numbers and says them with :meth:`Ledger.text` and
:func:`cost_text`.

The cost is None when it is unknown (a model whose prices are not known), and a sum with an unknown part is
unknown: it is said as "cost unknown", never as ``$0``, which would read as free.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.messages import Usage


def cost_text(cost: float | None) -> str:
    """A cost as every view says it: ``$0.0123`` under a dollar, ``$4.10`` above, ``$0`` for free, and ``cost
    unknown`` when it is not known."""
    if cost is None:
        return "cost unknown"
    if cost == 0:
        return "$0"
    return f"${cost:,.2f}" if cost >= 1 else f"${cost:.4f}"


def tokens_text(tokens: int) -> str:
    """``812``, ``12,400``, ``2.3M``: a count of tokens as a person reads it at a glance."""
    return f"{tokens / 1e6:.1f}M" if tokens >= 10_000_000 else f"{tokens:,}"


@dataclass(frozen=True, slots=True)
class Ledger:
    """Tokens, model calls, cost (None: unknown) and wall time of some work; ``+`` adds two."""

    input: int = 0
    cached: int = 0
    output: int = 0
    reasoning: int = 0
    calls: int = 0
    cost: float | None = 0.0
    seconds: float = 0.0

    @classmethod
    def of(cls, usage: Usage, seconds: float = 0.0) -> Ledger:
        """The ledger of ``usage`` that took ``seconds``: a prompt's tokens written to the cache count as input."""
        return cls(
            input=usage.input + usage.cache_write,
            cached=usage.cache_read,
            output=usage.output,
            reasoning=usage.reasoning,
            calls=usage.calls,
            cost=usage.dollars,
            seconds=seconds,
        )

    @property
    def tokens(self) -> int:
        """Every token read and written (the number views show as "tokens", the same as ``Usage.tokens``)."""
        return self.input + self.cached + self.output

    def __add__(self, other: Ledger) -> Ledger:
        return Ledger(
            self.input + other.input,
            self.cached + other.cached,
            self.output + other.output,
            self.reasoning + other.reasoning,
            self.calls + other.calls,
            None if self.cost is None or other.cost is None else self.cost + other.cost,
            self.seconds + other.seconds,
        )

    def text(self, *, seconds: bool = True) -> str:
        """``12,400 tokens (8,000 cached, 300 reasoning) · 6 calls · $0.0123 · 42.0 s``; a free ledger (cost $0)
        leaves the cost out, the parts in brackets are there when they are not 0."""
        parts = [f"{n:,} {what}" for n, what in ((self.cached, "cached"), (self.reasoning, "reasoning")) if n]
        said = [f"{self.tokens:,} tokens" + (f" ({', '.join(parts)})" if parts else "")]
        said.append(f"{self.calls} call{'' if self.calls == 1 else 's'}")
        if self.cost != 0:
            said.append(cost_text(self.cost))
        if seconds:
            said.append(f"{self.seconds:.1f} s")
        return " · ".join(said)

    def columns(self) -> dict[str, int | float | None]:
        """The ledger as a table's columns (a map's table, CSV and DataFrame): the cost None when unknown."""
        return {
            "model_calls": self.calls,
            "tokens": self.tokens,
            "input_tokens": self.input,
            "cached_tokens": self.cached,
            "output_tokens": self.output,
            "reasoning_tokens": self.reasoning,
            "cost": self.cost,
        }

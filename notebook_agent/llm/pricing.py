"""What a model's tokens cost, in dollars per million tokens: a table kept per model, which a user can extend or
override in one call (:func:`set_prices`), and the prices a model object charges (:func:`prices_of`).

Prices are list prices of well-known models at the time of writing and change often; they are an estimate, not
a bill. Keys: ``input`` (uncached prompt), ``output`` (reasoning included), ``cache_read``, ``cache_write``; a
missing key costs nothing. A model not listed has no known prices (None): its cost is unknown, never a guess and
never 0. A model on this machine (llama-server, Ollama, a local OpenAI-compatible server, the demo and scripted
models) costs nothing (``{}``) and still counts its tokens. ``prices=`` given to ``get_model`` wins over all.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..core.errors import InputError

Prices = dict[str, float]

PRICES: dict[str, Prices] = {
    # OpenAI
    "gpt-4o": {"input": 2.5, "output": 10.0, "cache_read": 1.25},
    "gpt-4o-mini": {"input": 0.15, "output": 0.6, "cache_read": 0.075},
    "gpt-4.1": {"input": 2.0, "output": 8.0, "cache_read": 0.5},
    "gpt-4.1-mini": {"input": 0.4, "output": 1.6, "cache_read": 0.1},
    "gpt-4.1-nano": {"input": 0.1, "output": 0.4, "cache_read": 0.025},
    "gpt-5": {"input": 1.25, "output": 10.0, "cache_read": 0.125},
    "gpt-5-mini": {"input": 0.25, "output": 2.0, "cache_read": 0.025},
    "gpt-5-nano": {"input": 0.05, "output": 0.4, "cache_read": 0.005},
    "o3": {"input": 2.0, "output": 8.0, "cache_read": 0.5},
    "o4-mini": {"input": 1.1, "output": 4.4, "cache_read": 0.275},
    # Anthropic (cache_write = 5-minute ephemeral cache)
    "claude-opus-4-5": {"input": 5.0, "output": 25.0, "cache_read": 0.5, "cache_write": 6.25},
    "claude-opus-4": {"input": 15.0, "output": 75.0, "cache_read": 1.5, "cache_write": 18.75},
    "claude-sonnet-4": {"input": 3.0, "output": 15.0, "cache_read": 0.3, "cache_write": 3.75},
    "claude-3-7-sonnet": {"input": 3.0, "output": 15.0, "cache_read": 0.3, "cache_write": 3.75},
    "claude-haiku-4-5": {"input": 1.0, "output": 5.0, "cache_read": 0.1, "cache_write": 1.25},
    "claude-3-5-haiku": {"input": 0.8, "output": 4.0, "cache_read": 0.08, "cache_write": 1.0},
    # Google (prompts up to 200k tokens)
    "gemini-2.5-pro": {"input": 1.25, "output": 10.0, "cache_read": 0.31},
    "gemini-2.5-flash": {"input": 0.3, "output": 2.5, "cache_read": 0.075},
    "gemini-2.5-flash-lite": {"input": 0.1, "output": 0.4, "cache_read": 0.025},
    "gemini-2.0-flash": {"input": 0.1, "output": 0.4, "cache_read": 0.025},
    # Mistral
    "mistral-large-latest": {"input": 2.0, "output": 6.0},
    "mistral-medium-latest": {"input": 0.4, "output": 2.0},
    "mistral-small-latest": {"input": 0.1, "output": 0.3},
}


PRICE_KEYS = ("input", "output", "cache_read", "cache_write")

USER_PRICES: dict[str, Prices] = {}
"""Prices set with :func:`set_prices`, by ``provider:model``, ``model`` or ``provider``: read before :data:`PRICES`."""


class PriceError(InputError):
    """Prices that cannot be used (an unknown key, a negative or non-numeric price), said in one sentence."""


def set_prices(table: str | Mapping[str, Mapping[str, float] | None], /, **prices: float) -> None:
    """Extend or override the price table in one call, for every model built before or after it:
    ``set_prices("openai:my-finetune", input=0.3, output=1.2)``, or many at once
    ``set_prices({"gpt-4.1-mini": {"input": 0.3, "output": 1.2}, "ollama": {}})``. A name is ``provider:model``,
    a model id (dated snapshots share a listed family's prices), or a whole provider; ``{}`` makes it free; None
    (in a table) removes what was set for that name."""
    entries = {table: prices} if isinstance(table, str) else dict(table)
    if not isinstance(table, str) and prices:
        raise PriceError("Give set_prices a table ({name: {input: ..., output: ...}}) or one name with keywords.")
    checked: dict[str, Prices | None] = {}
    for name, entry in entries.items():
        key = str(name).strip().lower()
        if not key:
            raise PriceError("set_prices needs a model name (provider:model, a model id, or a provider).")
        checked[key] = None if entry is None else _checked(key, entry)
    for key, entry in checked.items():
        if entry is None:
            USER_PRICES.pop(key, None)
        else:
            USER_PRICES[key] = entry


def _checked(name: str, entry: object) -> Prices:
    if not isinstance(entry, Mapping):
        raise PriceError(f"The prices of {name!r} must be a mapping such as {{'input': 0.4, 'output': 1.6}}.")
    unknown = [k for k in entry if k not in PRICE_KEYS]
    if unknown:
        raise PriceError(f"Unknown price key {unknown[0]!r} for {name!r}; the keys are {', '.join(PRICE_KEYS)}.")
    out: Prices = {}
    for key, value in entry.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
            raise PriceError(
                f"The {key} price of {name!r} must be a number of dollars per million tokens, 0 or more "
                f"(got {value!r})."
            )
        out[key] = float(value)
    return out


def _listed(table: Mapping[str, Prices], name: str) -> Prices | None:
    """An exact entry of ``table``, else its longest prefix (dated snapshots such as ``claude-sonnet-4-20250514``
    or ``gpt-4o-2024-08-06`` share their family's price), else None."""
    if name in table:
        return table[name]
    best: str | None = None
    for key in table:
        if name.startswith(key + "-") and (best is None or len(key) > len(best)):
            best = key
    return table[best] if best else None


def prices_for(model: str, provider: str | None = None) -> Prices | None:
    """Prices of the model id ``model`` (of ``provider``): what :func:`set_prices` set for ``provider:model``, the
    model or the provider, else the package's table, else None (unknown)."""
    name = model.rsplit("/", 1)[-1].lower()
    if provider:
        qualified = f"{provider.lower()}:{name}"
        if qualified in USER_PRICES:
            return USER_PRICES[qualified]
    found = _listed(USER_PRICES, name)
    if found is not None:
        return found
    if provider and provider.lower() in USER_PRICES:
        return USER_PRICES[provider.lower()]
    return _listed(PRICES, name)


def prices_of(model: object) -> Prices | None:
    """The prices a model object charges (its ``prices``: every adapter, the scripted and demo models, a replay's
    healing model), None when they are not known: a model of your own says its prices with a ``prices``
    attribute."""
    prices = getattr(model, "prices", None)
    return dict(prices) if isinstance(prices, Mapping) else None


def call_cost(prices: Prices, input_tokens: int, output_tokens: int) -> float:
    """Dollars of a call reading ``input_tokens`` (uncached: the most it can cost) and writing ``output_tokens``."""
    return (input_tokens * prices.get("input", 0.0) + output_tokens * prices.get("output", 0.0)) / 1e6

"""A small price table, in dollars per million tokens, so runs can show an approximate cost.

Prices are list prices of well-known models at the time of writing and change often; they are an estimate,
not a bill. A model that is not listed costs zero (never a guess); pass ``prices=`` to ``get_model`` to set
or override a model's prices. Keys: ``input`` (uncached prompt), ``output``, ``cache_read``, ``cache_write``.
"""

from __future__ import annotations

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


def prices_for(model: str) -> Prices | None:
    """Prices of ``model``: an exact entry, else the longest listed prefix (dated snapshots such as
    ``claude-sonnet-4-20250514`` or ``gpt-4o-2024-08-06`` share their family's price), else None."""
    name = model.rsplit("/", 1)[-1].lower()
    if name in PRICES:
        return PRICES[name]
    best: str | None = None
    for key in PRICES:
        if name.startswith(key + "-") and (best is None or len(key) > len(best)):
            best = key
    return PRICES[best] if best else None

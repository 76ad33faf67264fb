"""``ProviderOptions``: what every provider adapter is built with besides its model id, declared once.

The four adapters (Chat Completions, Responses, Anthropic, Gemini) and :func:`~.registry.get_model` take the
same connection settings: the key, the endpoint, the SDK's retries and timeout, a client of one's own, prices,
headers, a payload hook and the call deadlines. They are one frozen value here, so an adapter reads them from
one place and a setting added for one adapter is there for all; each adapter keeps only its own knobs
(``strict_tools=``, ``cache=``, ``legacy_parameters=`` ...) as keywords.

The settings are also keywords of every adapter and of ``get_model`` (``api_key=``, ``base_url=`` ...), typed
by :class:`ProviderKeywords`, and win over an ``options=`` value given beside them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

from ..core.model import Deadlines
from .pricing import Prices


@dataclass(frozen=True)
class ProviderOptions:
    """The connection settings of a provider adapter.

    ``api_key``: the key (default: the provider's environment variable). ``base_url``: another endpoint (a
    proxy, a local server). ``max_retries``: the SDK's own retries (429, 5xx, connection errors; default 2).
    ``timeout``: the SDK's read timeout in seconds. ``provider``: the name the model reports (default: the
    adapter's). ``client``: an SDK client made by you (the key, URL, retries, timeout, headers and HTTP client
    are then its own). ``http_client``: an ``httpx.AsyncClient`` for the SDK (Chat Completions, Responses,
    Anthropic). ``prices``: what a token costs (default: the known prices of the model). ``default_headers``:
    headers on every request. ``on_payload``: sees (and may replace) each request's payload. ``deadlines``:
    first-token, idle and total bounds of every call (a :class:`~notebook_agent.core.model.Deadlines` or a
    mapping such as ``{"first_token": 300}``).
    """

    api_key: str | None = None
    base_url: str | None = None
    max_retries: int | None = None
    timeout: float | None = None
    provider: str | None = None
    client: Any = None
    http_client: Any = None
    prices: Prices | None = None
    default_headers: Mapping[str, str] | None = None
    on_payload: Callable[[dict[str, Any]], dict[str, Any] | None] | None = None
    deadlines: Deadlines | Mapping[str, float | None] | None = None

    @classmethod
    def of(cls, options: ProviderOptions | None = None, **keywords: Any) -> ProviderOptions:
        """``options`` (or the defaults) with the keyword settings given beside them; an unknown keyword is a
        ``TypeError`` naming it and the settings there are."""
        unknown = set(keywords) - FIELDS
        if unknown:
            raise TypeError(
                f"Unknown provider option {', '.join(sorted(unknown))}; the options are {', '.join(sorted(FIELDS))} "
                "(and each adapter's own keywords)."
            )
        base = options if options is not None else cls()
        return dataclasses.replace(base, **keywords) if keywords else base

    @property
    def headers(self) -> dict[str, str] | None:
        """``default_headers`` as the dict the SDKs take (None when there are none)."""
        return dict(self.default_headers) if self.default_headers else None

    def sdk_kwargs(self) -> dict[str, Any]:
        """The connection keywords the SDK clients that take them share (base URL, timeout, default headers,
        HTTP client), only those set: one place for the adapters that make their own client."""
        chosen = {
            "base_url": self.base_url,
            "timeout": self.timeout,
            "default_headers": self.headers,
            "http_client": self.http_client,
        }
        return {k: v for k, v in chosen.items() if v is not None}


class ProviderKeywords(TypedDict, total=False):
    """:class:`ProviderOptions` as keyword arguments (``**settings: Unpack[ProviderKeywords]``), so an adapter's
    and ``get_model``'s keywords are type-checked without writing the list again."""

    api_key: str | None
    base_url: str | None
    max_retries: int | None
    timeout: float | None
    provider: str | None
    client: Any
    http_client: Any
    prices: Prices | None
    default_headers: Mapping[str, str] | None
    on_payload: Callable[[dict[str, Any]], dict[str, Any] | None] | None
    deadlines: Deadlines | Mapping[str, float | None] | None


FIELDS = frozenset(f.name for f in dataclasses.fields(ProviderOptions))
"""The names of the settings (a test holds :class:`ProviderKeywords` to them)."""

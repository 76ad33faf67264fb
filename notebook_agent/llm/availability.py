"""What models can be used here: :func:`check_models` looks at each provider of the registry (which of its API
key variables are set, by name only, never the values; whether its optional package is importable) and asks the
local servers whether they answer (Ollama: a 0.5 s ``GET /api/tags`` at ``$OLLAMA_HOST`` or 127.0.0.1:11434;
no other address is ever contacted). :func:`models_table` words it as plain text for the notebook and terminal.
"""

from __future__ import annotations

import json
import os
import urllib.request
from dataclasses import dataclass

from .provider_record import OLLAMA_DEFAULT_URL, PROVIDERS
from .registry import _package_available

__all__ = ["ProviderStatus", "check_models", "models_table", "ollama_status"]


@dataclass(frozen=True)
class ProviderStatus:
    name: str
    description: str
    keys_set: tuple[str, ...]
    """The names of the API key variables that are set (never their values)."""
    keys_needed: tuple[str, ...]
    package: str
    """``built in``, ``installed`` or ``missing: pip install ...``."""
    server: str = ""
    """For a local server: whether it answers (``running at URL, N models`` / ``not running at URL``)."""

    @property
    def ready(self) -> bool:
        if self.package.startswith("missing"):
            return False
        if self.keys_needed and not self.keys_set:
            return False
        return not self.server.startswith("not running")


def ollama_url() -> str:
    """Ollama's root URL: ``$OLLAMA_HOST`` (often ``host:port``) or the loopback default."""
    root = (os.environ.get("OLLAMA_HOST") or OLLAMA_DEFAULT_URL).strip().rstrip("/")
    if "//" not in root:
        root = f"http://{root}"
    return root.removesuffix("/v1")


def ollama_status(timeout: float = 0.5) -> str:
    """``running at URL (N models)`` or ``not running at URL``: one short GET of ``/api/tags``, no proxy."""
    url = ollama_url()
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never through a proxy
    try:
        with opener.open(f"{url}/api/tags", timeout=timeout) as response:
            body = json.loads(response.read(1_000_000) or b"{}")
    except Exception:
        return f"not running at {url}"
    models = body.get("models") if isinstance(body, dict) else None
    count = f" ({len(models)} model{'' if len(models) == 1 else 's'})" if isinstance(models, list) else ""
    return f"running at {url}{count}"


def check_models(timeout: float = 0.5) -> list[ProviderStatus]:
    """One status per provider of the registry, in its order."""
    out: list[ProviderStatus] = []
    for info in PROVIDERS.values():
        keys_set = tuple(k for k in info.key_envs if os.environ.get(k))
        if info.package is None:
            package = "built in"
        elif _package_available(info.package):
            package = "installed"
        else:
            package = f"missing: {info.install or 'pip install ' + info.package}"
        server = ollama_status(timeout) if info.name == "ollama" else ""
        out.append(ProviderStatus(info.name, info.description, keys_set, info.key_envs, package, server))
    return out


def models_table(statuses: list[ProviderStatus]) -> str:
    """A plain-text table: provider, keys set (names), package, local server, ready."""
    rows = [("provider", "API keys set", "package", "server", "ready")]
    for s in statuses:
        if s.keys_needed:
            keys = ", ".join(s.keys_set) if s.keys_set else f"none (set {' or '.join(s.keys_needed)})"
        else:
            keys = "no key needed"
        rows.append((s.name, keys, s.package, s.server or "-", "yes" if s.ready else "no"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)

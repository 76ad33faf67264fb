"""Where a run may go: the user's ``allowed_domains`` / ``blocked_domains`` and how a URL is judged by them.

A pattern is ``github.com``, ``*.github.com``, ``https://github.com`` or ``http://127.0.0.1:8999``. The same
patterns scope secrets (a secret is only typed on its domains), which is why they are a module of their own
rather than part of the secrets vault or of the navigation judgement.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from ...browser.urls import scheme


@dataclass(frozen=True)
class DomainPattern:
    """``github.com``, ``*.github.com``, ``https://github.com``, ``http://127.0.0.1:8999``: host (with an
    optional ``*.`` prefix), optional scheme, optional port. A pattern without a port matches the scheme's
    default port only when it names a scheme; otherwise any port of that host."""

    scheme: str | None
    host: str
    port: int | None
    text: str

    @classmethod
    def parse(cls, text: str) -> DomainPattern:
        raw = text.strip()
        if not raw:
            raise ValueError("an empty domain pattern")
        parts = urlsplit(raw if "://" in raw else "//" + raw)
        host = (parts.hostname or "").lower()
        if not host:
            raise ValueError(f"{text!r} is not a domain (write e.g. 'github.com' or 'http://127.0.0.1:8000')")
        _check_host(text, host)
        try:
            port = parts.port
        except ValueError:
            raise ValueError(f"{text!r} has an invalid port") from None
        scheme = parts.scheme.lower() or None
        if port is None and scheme in ("http", "https"):
            port = 80 if scheme == "http" else 443
        return cls(scheme, host, port, raw)

    def matches(self, url: str) -> bool:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https"):
            return False
        host = (parts.hostname or "").lower()
        try:
            port = parts.port or (80 if scheme == "http" else 443)
        except ValueError:
            return False
        if self.scheme is not None and scheme != self.scheme:
            return False
        if self.port is not None and port != self.port:
            return False
        if self.host.startswith("*."):
            base = self.host[2:]
            return host == base or host.endswith("." + base)
        return host == self.host


#: One label of a host name: letters (any script), digits, ``_`` and ``-``; never empty, never a ``*``.
_LABEL = re.compile(r"[\w-]+")


def _check_host(text: str, host: str) -> None:
    """Refuse a host pattern that admits more than one site's hosts: a ``*`` anywhere but a leading ``*.``, an
    empty label (``.``, ``*.``, ``a..b``, a trailing dot), a wildcard over a top-level domain (``*.com``). The
    one rule every domain pattern passes (allowed, blocked, a secret's scope), so none admits every host."""
    try:
        ipaddress.ip_address(host)
        return
    except ValueError:
        pass
    base = host[2:] if host.startswith("*.") else host
    labels = base.split(".")
    if "*" in base:
        raise ValueError(f"{text!r}: a wildcard is only allowed as a leading '*.' before a site, e.g. '*.github.com'")
    if not all(_LABEL.fullmatch(label) for label in labels):
        raise ValueError(f"{text!r} is not a host name: write e.g. 'github.com', '*.github.com' or '127.0.0.1'")
    if base is not host and len(labels) < 2:
        raise ValueError(
            f"{text!r} would admit every host under .{base}: name a site, e.g. '*.github.com', not a top-level domain"
        )


def parse_domains(patterns: Sequence[str] | str | None, *, option: str = "") -> tuple[DomainPattern, ...]:
    """The patterns of a comma- or space-separated string or a list; None is no patterns. ``option``: the name
    of a restriction (``allowed_domains``) whose patterns, when given, may not be none at all: an empty string
    or list would silently mean no restriction, so it is a ValueError saying what to pass instead."""
    if patterns is None:
        return ()
    if isinstance(patterns, str):
        patterns = [p for p in re.split(r"[,\s]+", patterns) if p]
    parsed = tuple(DomainPattern.parse(p) for p in patterns)
    if option and not parsed:
        raise ValueError(
            f"{option} is empty, which would allow every site: give the domains the run may visit "
            "(e.g. 'github.com, *.github.com'), or leave it out for no restriction"
        )
    return parsed


def matches_any(url: str, patterns: Sequence[DomainPattern]) -> bool:
    return any(p.matches(url) for p in patterns)


def navigation_refusal(url: str, allowed: Sequence[DomainPattern], blocked: Sequence[DomainPattern]) -> str | None:
    """The run's allowed/blocked domains, applied to a (normalised) top-level navigation."""
    if scheme(url) not in ("http", "https"):
        return None
    host = urlsplit(url).netloc or url
    if matches_any(url, blocked):
        return f"{host} is on the blocked domains."
    if allowed and not matches_any(url, allowed):
        names = ", ".join(d.text for d in allowed)
        return f"{host} is not on the allowed domains ({names})."
    return None

"""Where a model endpoint lives: on this machine or a private network (keyless local servers, slower first
tokens, their own request shape) or out on the internet. One answer for the registry, the deadlines and the
Chat adapter, which all need it and must not import each other for it."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlparse


def is_local_url(url: str) -> bool:
    """Loopback, private-network or ``.local``/``localhost`` hosts: where keyless servers live."""
    host = (urlparse(url if "//" in url else f"//{url}").hostname or "").lower()
    if host in ("localhost", "host.docker.internal") or host.endswith((".localhost", ".local")):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local or address.is_unspecified

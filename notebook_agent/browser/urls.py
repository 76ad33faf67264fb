"""URLs as people and models type them, and which site a URL belongs to.

One rule for every place a URL enters (``go_to_url``, the approval policy, the navigation guard): a bare
``localhost:8000/x`` or IP address gets ``http://``, any other bare host gets ``https://``. Deciding on the
normalised URL matters: a check that looked at ``127.0.0.2:8999/x`` as typed saw no host at all.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
_LOCAL = re.compile(r"^(localhost|\[::1\]|\d{1,3}(\.\d{1,3}){3})(:\d+)?(/|$|\?|#)", re.IGNORECASE)
#: Schemes a page may be opened at; anything else (javascript:, chrome:, ...) is refused.
OPENABLE = ("http", "https", "about", "file", "data")


def normalise_url(text: str) -> str:
    """``localhost:8000/x`` → ``http://localhost:8000/x``, ``example.com`` → ``https://example.com``; URLs
    with a scheme are kept as they are."""
    url = text.strip()
    if _LOCAL.match(url):
        return "http://" + url
    if url.startswith("//"):
        return "https:" + url
    if not _SCHEME.match(url) or re.match(r"^[^/:]+:\d+(/|$)", url):  # "host:8080/x" has no scheme either
        return "https://" + url
    return url


def scheme(url: str) -> str:
    return url.split(":", 1)[0].lower() if ":" in url else ""


def site(url: str) -> tuple[str, int] | None:
    """(host, port) of an http(s) URL, with the scheme's default port filled in; None for anything else."""
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return None
    try:
        port = parts.port or (80 if parts.scheme.lower() == "http" else 443)
    except ValueError:
        return None
    return parts.hostname.lower(), port

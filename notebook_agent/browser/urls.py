"""One rule for what a typed URL means, which site a URL belongs to, and one wording for why a page could not
be opened.

Every entry point uses them: ``%%agent --url``, ``%agent browser URL``, ``notebook-agent run --url``,
``notebook-agent snapshot URL``, the model's ``go_to_url`` action, the approval policy and the navigation
guard. Deciding on the normalised URL matters: a check that looked at ``127.0.0.2:8999/x`` as typed saw no
host at all.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

from ..core.errors import InputError

SCHEMES = ("http", "https", "about", "file", "data")
#: Schemes a page may be opened at; anything else (javascript:, chrome:, ...) is refused.
OPENABLE = SCHEMES
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
_LOCAL = re.compile(r"^(localhost|\[::1\]|\d{1,3}(\.\d{1,3}){3})(:\d+)?([/?#]|$)", re.IGNORECASE)
_HOST_PORT = re.compile(r"^[\w-]+(\.[\w-]+)*:\d+([/?#]|$)")


class URLError(InputError):
    """A URL that cannot be opened, said in a sentence or two."""


def normalize_url(text: str, *, files: bool = True) -> str:
    """The URL meant by ``text``: full URLs as they are; ``localhost:8000``/``127.0.0.1``/``host:port`` get
    ``http://``; an existing file path becomes a ``file://`` URL (``files=True``); ``example.com/x`` gets
    ``https://``. A single word with no dot (``example``) is refused rather than guessed."""
    url = text.strip()
    if not url:
        raise URLError("The URL is empty: give an address such as https://example.com.")
    if _LOCAL.match(url) or _HOST_PORT.match(url):
        return "http://" + url
    if _SCHEME.match(url):
        scheme = url.split(":", 1)[0].lower()
        if scheme not in SCHEMES:
            raise URLError(f"Cannot open {url!r}: only http(s), file, data and about URLs are supported.")
        return url
    if files:
        path = Path(url).expanduser()
        if path.exists():
            return path.resolve().as_uri()
        if url.startswith(("/", "~", "./", "../")):
            raise URLError(f"There is no file {url!r}.")
    host = url.split("/", 1)[0]
    if "." not in host:
        raise URLError(
            f"{url!r} is not a URL: write the whole address, e.g. https://{host}.com/ or http://localhost:8000/."
        )
    return "https://" + url


_UNSAFE_PORT_NOTE = (
    "Chromium refuses to open {url}: port {port} is on its list of unsafe ports (ports of other protocols, "
    "such as 6000 for X11). Serve the page on another port, e.g. 8000."
)


def is_download(error: BaseException | str) -> bool:
    """Whether a navigation failed because the address is a file to download (``Content-Disposition:
    attachment``, or a type the browser does not show), not a page."""
    return "Download is starting" in str(error)


def navigation_error(url: str, error: BaseException | str, timeout: float | None = None) -> str:
    """Why ``url`` could not be opened, from a Playwright error, in words a person can act on."""
    raw = str(error)
    first = raw.strip().splitlines()[0] if raw.strip() else type(error).__name__
    parts = urlsplit(url)
    host = parts.hostname or url
    if is_download(raw):
        return f"{url} is a file to download, not a page: open the page that links to it, or download it there."
    if "ERR_UNSAFE_PORT" in raw:
        return _UNSAFE_PORT_NOTE.format(url=url, port=parts.port or "?")
    if "ERR_CONNECTION_REFUSED" in raw:
        return f"Nothing answers at {parts.scheme}://{parts.netloc}/: is the server running, and on that port?"
    if "ERR_NAME_NOT_RESOLVED" in raw:
        return f"The host name {host!r} was not found: check the spelling (and the network)."
    if "ERR_FILE_NOT_FOUND" in raw:
        return f"There is no file at {url}."
    if "ERR_CERT" in raw:
        code = re.search(r"ERR_CERT_\w+", raw)
        return f"The certificate of {host} is not valid ({code.group(0) if code else 'certificate error'})."
    if "ERR_INTERNET_DISCONNECTED" in raw or "ERR_NETWORK" in raw:
        return f"Could not reach {host}: the network is unavailable."
    if "Timeout" in raw and "exceeded" in raw:
        within = f" within {timeout:g} s" if timeout else ""
        return f"{url} did not finish loading{within}: the site is slow or not answering."
    code = re.search(r"net::ERR_\w+", raw)
    return f"Could not open {url} ({code.group(0) if code else first})."


def navigation_target(text: str) -> str:
    """What a page would open for ``text`` (the model's ``go_to_url`` rule, no file paths), never raising:
    an address :func:`normalize_url` refuses is returned as typed, and the action reports why."""
    try:
        return normalize_url(text, files=False)
    except URLError:
        return text.strip()


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


_ADDRESS = re.compile(
    r"[a-z][a-z0-9+.-]*://|\bwww\.|\blocalhost\b|\b\d{1,3}(\.\d{1,3}){3}\b"
    r"|(?<![@\w.-])[a-z0-9-]+(\.[a-z0-9-]+)*\.[a-z]{2,}(?![\w@])",
    re.IGNORECASE,
)


def names_an_address(text: str) -> bool:
    """Whether a request names a web address (a URL, ``www.``, a domain, an IP, localhost); an e-mail address
    is not one."""
    return _ADDRESS.search(text) is not None

"""The secrets a session holds, for as long as it lives: what the door keeps from other sites.

A secret enters the session when a run that names it starts (``secrets=``) or when a run types text into a
sensitive field (a password, a one-time code). From then until the session closes (not when the run ends: a
page timer, an unload beacon, a popup or the notebook's own ``page.goto`` act after it) the door (route.py)
asks this record two questions about everything leaving the session's pages:

- :meth:`LiveSecrets.kept_from`: which secret values may not go to this URL (egress.py matches them in any
  encoding it knows, and names what leaked);
- :meth:`LiveSecrets.outside`: is this URL outside the own sites of a live secret? Then anything that carries
  data there (a body, a query, a socket or its messages, or a path the session had not fetched before the
  first secret became live) is an effect the run's approval policy judges, and refused when no run is there
  to judge it. That rule does not depend on guessing how a page encodes a value (hex, base32, reversed,
  XOR-ed with a key of its own, split in parts): whatever the encoding, the data has to leave by one of those.

Each secret carries its own sites (``may_go``): a named secret's scope or the run's allowed domains, text typed
into a sensitive field the site of the page it was typed on and the run's allowed domains. A run adds its
secrets as a *source*, read each time while the run goes on (text typed mid-run is live at once); when the run
ends, the source's values are kept as they are then.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

from ..urls import site
from .egress import as_http


@dataclass(frozen=True)
class LiveSecret:
    """One secret the session holds."""

    name: str
    value: str
    may_go: Callable[[str], bool]
    """``may_go(url)``: whether ``url`` (an http(s) URL) is one of the secret's own sites."""
    where: str
    """Where it may go, in words, for a question or a refusal ("a.example")."""


Source = Callable[[], "list[LiveSecret]"]
"""A run's secrets, read each time (see the module doc)."""


class LiveSecrets:
    """The secrets of one session, from the first until the session closes (see the module doc)."""

    def __init__(self) -> None:
        self._kept: dict[tuple[str, str], LiveSecret] = {}
        self._sources: list[Source] = []
        self._before: set[tuple[object, str]] = set()
        """(site, path) of every request the door saw before the first secret became live (at most
        :data:`REMEMBERED`; later ones count as new)."""
        self._reads: set[object] = set()
        """Sites a person let receive plain reads while a secret was live (asked once per site, not per path)."""
        self._last: dict[int, list[LiveSecret]] = {}
        """Each source's last reading, used when reading it again fails."""

    # -- what runs tell it -----------------------------------------------------------------------------------
    def hold(self, source: Source) -> None:
        """A run's secrets, live from now; read again each time they are asked about."""
        self._sources.append(source)

    def keep(self, source: Source) -> None:
        """The run has ended: its secrets stay live, as they are now, until the session closes."""
        if source in self._sources:
            self._sources.remove(source)
            for secret in self._read(source):
                self._kept.setdefault((secret.name, secret.value), secret)
            self._last.pop(id(source), None)

    def clear(self) -> None:
        """The session closes: nothing it held is live any more."""
        self._kept.clear()
        self._sources.clear()
        self._before.clear()
        self._reads.clear()
        self._last.clear()

    # -- what the door asks ----------------------------------------------------------------------------------
    def secrets(self) -> list[LiveSecret]:
        found = dict(self._kept)
        for source in list(self._sources):
            for secret in self._read(source):
                found.setdefault((secret.name, secret.value), secret)
        return list(found.values())

    @property
    def live(self) -> bool:
        return bool(self._kept) or any(self._read(source) for source in list(self._sources))

    @property
    def running(self) -> bool:
        """Whether a run holds the session now (every run does, secrets or not): it judges what is asked."""
        return bool(self._sources)

    def kept_from(self, url: str) -> list[tuple[str, str]]:
        """(name, value) of each live secret that may not go to ``url``."""
        target = as_http(url)
        return [(s.name, s.value) for s in self.secrets() if not s.may_go(target)]

    def outside(self, url: str) -> list[LiveSecret]:
        """The live secrets ``url`` is not an own site of (empty: the structural rule does not apply)."""
        target = as_http(url)
        if site(target) is None:
            return []
        return [s for s in self.secrets() if not s.may_go(target)]

    def seen(self, url: str) -> None:
        """The door saw a request for ``url``: before the first secret, its path is one the session knew."""
        if len(self._before) < REMEMBERED and not self.live:
            self._before.add(_place(url))

    def new_path(self, url: str) -> bool:
        """Whether ``url``'s path was not fetched before the first secret became live (a path can carry data),
        on a site a person has not let receive plain reads meanwhile (:meth:`reads_approved`)."""
        place = _place(url)
        return place not in self._before and place[0] not in self._reads

    def reads_approved(self, url: str) -> None:
        """A person approved a plain read of ``url``'s site while a secret was live, told that it was: its
        pictures, styles and scripts at new paths are not asked about again in this session."""
        self._reads.add(_place(url)[0])

    def describe(self, secrets: list[LiveSecret]) -> str:
        """``the secret 'pw' (its sites: a.example)``, for a question or a refusal; never a value."""
        shown = [f"'{s.name}' (its sites: {s.where})" for s in secrets[:3]]
        more = f" and {len(secrets) - 3} more" if len(secrets) > 3 else ""
        word = "secret" if len(secrets) == 1 else "secrets"
        return f"the {word} {', '.join(shown)}{more}"

    def _read(self, source: Source) -> list[LiveSecret]:
        """``source()``; when that fails (a run's record changing on another thread), its last reading: what
        was live stays live."""
        try:
            found = self._last[id(source)] = list(source())
        except Exception:
            found = self._last.get(id(source), [])
        return found


#: Paths remembered from before the first secret: a long session without one does not grow without bound.
REMEMBERED = 50_000


def _place(url: str) -> tuple[object, str]:
    parts = urlsplit(as_http(url))
    return (site(as_http(url)), parts.path or "/")

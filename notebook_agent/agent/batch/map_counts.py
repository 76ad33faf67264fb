"""How a map's rows stand, counted in one place: every front (the result's repr, ``MapInterrupted``, the terminal,
the notebook view, its progress events) reads these counts and their one line of text.

Each row is in exactly one of five kinds, decided by :func:`row_kind`: ``succeeded`` (its run succeeded),
``failed`` (it ended without success: an error, max steps, the agent saying it could not), ``stopped`` (a stop,
a cancellation or its budget ended it), ``not_started`` (a stop, the map's budget or the answer to its estimate
came first) and ``running``. So the counts always add up to the rows: when each front counted on its own, a
summary could say "20 rows: 6 succeeded, 14 failed, 12 not started", the rows never started counted again among
the failed.

:meth:`MapResult.failed <.map_table.MapResult.failed>` stays what ``retry()`` runs again: every row without
success (failed, stopped and not started alike); these counts say which of those ways each one went.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Literal, Protocol, TypeAlias

RowKind: TypeAlias = Literal["succeeded", "failed", "stopped", "not_started", "running"]

#: The kinds in the order the text says them.
KINDS: tuple[RowKind, ...] = ("succeeded", "failed", "stopped", "running", "not_started")


class CountedRow(Protocol):
    """What the counts read of a row (a :class:`~.map_table.MapRow`)."""

    @property
    def status(self) -> str: ...

    @property
    def success(self) -> bool: ...


def row_kind(status: str, success: bool) -> RowKind:
    """The one kind of a row whose status is ``status``: not started and running first (a row without an end
    yet), then success, then stopped (by a stop or at its budget), and every other end is ``failed``."""
    if status == "not_started":
        return "not_started"
    if status == "running":
        return "running"
    if success:
        return "succeeded"
    return "stopped" if status in ("stopped", "budget") else "failed"


@dataclass(frozen=True, slots=True)
class MapCounts:
    """How many of a map's ``rows`` are of each kind; the five always add up to ``rows``."""

    rows: int
    succeeded: int = 0
    failed: int = 0
    stopped: int = 0
    not_started: int = 0
    running: int = 0

    @classmethod
    def of(cls, rows: Iterable[CountedRow]) -> MapCounts:
        tally = dict.fromkeys(KINDS, 0)
        for row in rows:
            tally[row_kind(row.status, row.success)] += 1
        return cls(rows=sum(tally.values()), **tally)

    @property
    def ended(self) -> int:
        """The rows that ended, whichever way: succeeded, failed or stopped."""
        return self.succeeded + self.failed + self.stopped

    def moved(self, old: RowKind, new: RowKind) -> MapCounts:
        """These counts after one row went from ``old`` to ``new`` (a map's progress, without counting every row
        again for each event of a 10,000-row map)."""
        if old == new:
            return self
        changed = {old: getattr(self, old) - 1}
        changed[new] = getattr(self, new) + 1
        return replace(self, **changed)

    def text(self) -> str:
        """``20 rows: 6 succeeded, 2 failed, 3 stopped, 9 not started``: succeeded and failed always, the other
        kinds when there are any, so the numbers said add up to the rows."""
        parts = [
            f"{getattr(self, kind)} {kind.replace('_', ' ')}"
            for kind in KINDS
            if kind in ("succeeded", "failed") or getattr(self, kind)
        ]
        return f"{self.rows} row{'' if self.rows == 1 else 's'}: {', '.join(parts)}"

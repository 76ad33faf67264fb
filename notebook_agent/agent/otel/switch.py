"""The entry points of tracing, for the agent, the map and a map row's worker; OpenTelemetry is imported only
when a run is traced (:mod:`.settings` decides), so with tracing off no OpenTelemetry module is loaded and nothing
is sent.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from .settings import INSTALL, available, content_wanted, tracing_on, warn_once

if TYPE_CHECKING:
    from ...core.model import Model
    from ..safety.secrets import SecretVault
    from .map_spans import RowRecord
    from .run_spans import RunSpans


def run_spans(choice: bool | None, model: Model, *, kind: str = "run", follows: str = "") -> RunSpans | None:
    """The consumer that makes one run's trace from its page events (:mod:`.run_spans`), or None when the run is
    not traced. ``kind``: ``run``, ``replay``, ``recipe`` or ``follow_up``; ``follows``: the run a follow-up
    continues."""
    if not tracing_on(choice):
        return None
    if not available():  # the automatic choice, from the environment: the run goes on untraced
        warn_once("packages", f"OTEL_* settings ask for traces, but OpenTelemetry is not installed: {INSTALL}.")
        return None
    from .run_spans import RunSpans

    return RunSpans(model=model, kind=kind, follows=follows, content=content_wanted())


class MapTrace(Protocol):
    """A map's trace: a span for each row while it runs, whose context the row's run is started in."""

    def row(self, record: RowRecord) -> contextlib.AbstractContextManager[dict[str, str]]:
        """Around one row: its span is the current one inside, and the value is its W3C ``traceparent`` as a
        carrier, for a row that runs on an executor's worker."""
        ...

    def finish(self, rows: list[Any]) -> None:
        """The map is over: its span ends with its rows' counts."""
        ...


class NoMapTrace:
    """The trace of a map that is not traced: nothing."""

    def row(self, record: RowRecord) -> contextlib.AbstractContextManager[dict[str, str]]:
        return contextlib.nullcontext({})

    def finish(self, rows: list[Any]) -> None:
        return None


def map_trace(choice: bool | None, *, rows: int, secrets: SecretVault | None = None) -> MapTrace:
    """The trace of a map of ``rows`` rows run by an agent with ``tracing=choice`` (``secrets``: its secret vault,
    kept out of the row spans as out of the runs'): :class:`NoMapTrace` when it is not traced."""
    if not tracing_on(choice) or not available():
        return NoMapTrace()
    from .map_spans import MapSpans

    return MapSpans(rows=rows, secrets=secrets, content=content_wanted())


@contextlib.contextmanager
def row_parent(carrier: Mapping[str, str]) -> Iterator[None]:
    """On an executor's worker: the row's run is started inside its row's span, from the carrier that travelled
    with the row; the spans are flushed when the row ends (a worker process may end without running ``atexit``).
    Nothing happens, and nothing is imported, for a row of a map that is not traced."""
    if not carrier:
        yield
        return
    from . import export

    token = export.attach(export.context_from(carrier))
    try:
        yield
    finally:
        export.detach(token)
        export.flush()

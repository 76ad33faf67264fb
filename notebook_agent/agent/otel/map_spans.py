"""A map's trace: a ``map`` span over the whole map, a ``row N`` span for each row while it runs, and each row's run
(:mod:`.run_spans`) nested under its row.

A row's run starts inside its row's span: here, because the span is the current one where the run is started (each
run inherits the context it was started in), and on an executor's worker from the W3C ``traceparent`` that travels
with the row (:func:`.switch.row_parent`). Rows are made by the map engine, which asks this for a row's span around
the row; the row's own events stay the run's.

A row's values are the user's data, so like the task they go in only with the content opt-in; a row's error goes
through the agent's secrets like everything a run keeps.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any, Protocol

from ..safety.secrets import Redactor, SecretVault
from . import export
from .attributes import as_json
from .settings import warn_once


class RowRecord(Protocol):
    """What a map's trace reads of one row (``batch.map_table.MapRow`` is one)."""

    @property
    def index(self) -> int: ...
    @property
    def status(self) -> str: ...
    @property
    def success(self) -> bool: ...
    @property
    def error(self) -> str | None: ...
    @property
    def task(self) -> str: ...
    @property
    def values(self) -> Mapping[str, Any]: ...


class MapSpans:
    """The spans of one map (see the module docstring and :class:`.switch.MapTrace`)."""

    def __init__(self, *, rows: int, secrets: SecretVault | None, content: bool) -> None:
        self.tracer = export.tracer()
        self.content = content
        self.scrub = Redactor(secrets or SecretVault({}), lambda args: None).scrub_text
        facts = {"notebook_agent.map.rows": rows}
        self.span = self.tracer.start_span("map", context=export.current_context(), attributes=facts)

    @contextlib.contextmanager
    def row(self, record: RowRecord) -> Iterator[dict[str, str]]:
        try:
            facts: dict[str, Any] = {"notebook_agent.map.row": record.index}
            if self.content:
                facts["notebook_agent.map.values"] = self.scrub(as_json(dict(record.values)))
                facts["notebook_agent.map.task"] = self.scrub(record.task)
            parent = export.context_of(self.span)
            span = self.tracer.start_span(f"row {record.index}", context=parent, attributes=facts)
            token = export.attach(export.context_of(span))
            carrier = export.carrier_of(span)
        except Exception as exc:
            warn_once(f"spans {type(exc).__name__}", f"A map's trace could not be made ({exc}); rows go on untraced.")
            yield {}
            return
        try:
            yield carrier
        finally:
            export.detach(token)
            span.set_attribute("notebook_agent.map.status", record.status)
            span.set_attribute("notebook_agent.run.success", bool(record.success))
            if record.error:
                export.failed(span, self.scrub(record.error))
            span.end()

    def finish(self, rows: list[Any]) -> None:
        counts: dict[str, int] = {}
        for record in rows:
            counts[record.status] = counts.get(record.status, 0) + 1
        self.span.set_attributes({f"notebook_agent.map.{status}": count for status, count in counts.items()})
        self.span.set_attribute("notebook_agent.map.succeeded", sum(1 for r in rows if r.success))
        self.span.end()

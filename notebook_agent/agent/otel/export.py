"""Where spans go, and the one module that calls OpenTelemetry (always inside functions: importing it imports none).

The tracer is the program's own when it set up a tracer provider (``trace.set_tracer_provider``: its collector's,
MLflow's, Phoenix's), used as it is. Otherwise it is one of this package's own providers, never made global (the
program's other libraries keep theirs): the resource the ``OTEL_*`` settings describe (``service.name``
``notebook-agent`` unless they name one), a batch span processor (spans leave on its thread, so a run never waits
for the network) and the OTLP/HTTP exporter, which reads its endpoint, headers and timeout from the same settings.
There is one provider per distinct set of ``OTEL_*`` settings, so a notebook that changes them is heard at the
next run; each flushes at exit.

An endpoint that refuses, hangs or answers with an error costs a run nothing: the exporter's own log lines for
that export are kept back, one :class:`~.settings.TracingWarning` says what failed (once per endpoint), and for the
next minute that endpoint's spans are dropped at once rather than each batch waiting out its timeout; then it is
tried again.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .settings import traces_endpoint, warn_once

if TYPE_CHECKING:  # the types only: nothing of OpenTelemetry is imported until tracing is on
    from opentelemetry.context import Context
    from opentelemetry.sdk.trace.export import SpanExporter
    from opentelemetry.trace import Span

NAME = "notebook_agent"
SERVICE = "notebook-agent"
REST_S = 60.0
"""How long an endpoint whose export failed is left alone (its spans dropped) before it is tried again."""

_lock = threading.Lock()
_providers: dict[tuple[tuple[str, str], ...], Any] = {}
_quiet = threading.local()


def tracer() -> Any:
    """The tracer a run's spans are made with (see the module docstring)."""
    from opentelemetry import trace

    from ... import __version__

    chosen = trace.get_tracer_provider()
    if isinstance(chosen, trace.ProxyTracerProvider | trace.NoOpTracerProvider):
        chosen = own_provider()
    return chosen.get_tracer(NAME, __version__)


def own_provider() -> Any:
    """This package's provider for the current ``OTEL_*`` settings, made on first use."""
    key = tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith("OTEL_")))
    with _lock:
        provider = _providers.get(key)
        if provider is None:
            provider = _providers[key] = _make_provider(dict(key))
        return provider


def _make_provider(settings: Mapping[str, str]) -> Any:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    named = "OTEL_SERVICE_NAME" in settings or "service.name=" in settings.get("OTEL_RESOURCE_ATTRIBUTES", "")
    provider = TracerProvider(resource=Resource.create({} if named else {"service.name": SERVICE}))
    exporter = OTLPSpanExporter()
    _keep_back_export_logs()
    guarded = OneWarning(exporter, traces_endpoint(settings))  # an exporter by its methods: the SDK is not imported
    provider.add_span_processor(BatchSpanProcessor(guarded))  # type: ignore[arg-type]  # above the class, only here
    return provider


def flush(timeout_s: float = 30.0) -> bool:
    """Send every span made so far now (this package's providers and a program's own), waiting at most about
    ``timeout_s`` for each; True when all were handed over. Spans are sent by themselves within seconds and at exit:
    this is for a process about to end without ``atexit`` (an executor's worker) and for tests."""
    from opentelemetry import trace

    with _lock:
        providers = list(_providers.values())
    chosen = trace.get_tracer_provider()
    if hasattr(chosen, "force_flush") and chosen not in providers:
        providers.append(chosen)
    return all([bool(p.force_flush(int(timeout_s * 1000))) for p in providers])


class _KeepBack(logging.Filter):
    """Keeps back the OpenTelemetry exporter's log lines of an export :class:`OneWarning` is making on this
    thread (they become its one warning); every other line passes."""

    def filter(self, record: logging.LogRecord) -> bool:
        said: list[str] | None = getattr(_quiet, "said", None)
        if said is None:
            return True
        said.append(record.getMessage())
        return False


_FILTER = _KeepBack()


def _keep_back_export_logs() -> None:
    for name in list(logging.root.manager.loggerDict):
        if name.startswith("opentelemetry.exporter"):
            logger = logging.getLogger(name)
            if _FILTER not in logger.filters:
                logger.addFilter(_FILTER)


class OneWarning:
    """An exporter around the OTLP one: a failed export is said once as a warning (the first line the exporter
    logged about it), and the endpoint rests for :data:`REST_S` (its spans dropped at once) before it is tried
    again."""

    def __init__(self, inner: SpanExporter, endpoint: str) -> None:
        self.inner = inner
        self.endpoint = endpoint
        self.resting_until = 0.0

    def export(self, spans: Sequence[Any]) -> Any:
        from opentelemetry.sdk.trace.export import SpanExportResult

        if time.monotonic() < self.resting_until:
            return SpanExportResult.FAILURE
        said: list[str] = []
        _quiet.said = said
        try:
            result = self.inner.export(spans)
        except Exception as exc:
            result = SpanExportResult.FAILURE
            said.append(f"{type(exc).__name__}: {exc}")
        finally:
            _quiet.said = None
        if result is not SpanExportResult.SUCCESS:
            self.resting_until = time.monotonic() + REST_S
            why = said[0] if said else "the export failed"
            warn_once(
                f"endpoint {self.endpoint}",
                f"Trace spans could not be sent to {self.endpoint} ({why[:300]}); runs go on, and their spans are "
                "dropped while it fails. Check OTEL_EXPORTER_OTLP_ENDPOINT and its headers, or turn tracing off.",
            )
        return result

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return bool(self.inner.force_flush(timeout_millis))


# -- the API calls the spans are made with ----------------------------------------------------------------------
def current_context() -> Any:
    from opentelemetry import context

    return context.get_current()


def context_of(span: Span) -> Context:
    """A context whose current span is ``span`` (to start children in)."""
    from opentelemetry import trace

    return trace.set_span_in_context(span)


def attach(ctx: Context) -> object:
    from opentelemetry import context

    return context.attach(ctx)


def detach(token: object) -> None:
    from opentelemetry import context

    context.detach(token)  # type: ignore[arg-type]


def carrier_of(span: Span) -> dict[str, str]:
    """``span`` as a W3C ``traceparent`` carrier, to travel with a row to another process."""
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    carrier: dict[str, str] = {}
    TraceContextTextMapPropagator().inject(carrier, context=context_of(span))
    return carrier


def context_from(carrier: Mapping[str, str]) -> Any:
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    return TraceContextTextMapPropagator().extract(dict(carrier))


def kind(client: bool) -> Any:
    """The span kind: CLIENT for a call to a model's server, INTERNAL for the agent's own work."""
    from opentelemetry.trace import SpanKind

    return SpanKind.CLIENT if client else SpanKind.INTERNAL


def failed(span: Span, description: str) -> None:
    from opentelemetry.trace import Status, StatusCode

    span.set_status(Status(StatusCode.ERROR, description[:500]))

"""Whether a run is traced, read from ``tracing=`` and the standard ``OTEL_*`` settings without importing
OpenTelemetry; and how a tracing problem is said (once, as a :class:`TracingWarning`).

``tracing=None`` (the default of ``PageAgent``, ``RunOptions`` and every front): on when the standard OTLP settings
name an endpoint (``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` or ``OTEL_EXPORTER_OTLP_ENDPOINT``) and nothing turns the
SDK off (``OTEL_SDK_DISABLED=true``, ``OTEL_TRACES_EXPORTER=none``). ``True`` (``--tracing``): on, to the endpoint
those settings name, else OpenTelemetry's default ``http://localhost:4318``; a tracer provider the program set up
itself is used as it is. ``False``: off, whatever the environment says.

Page text and prompts go into spans (as span events) only when
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true``, the setting the GenAI instrumentations share.

A tracing problem never stops a run: a missing package under the automatic choice, an endpoint that fails or a
span that could not be made is said once, and the run goes on untraced.
"""

from __future__ import annotations

import importlib.util
import os
import threading
import warnings
from collections.abc import Mapping

from ...core.errors import InputError

ENDPOINTS = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
"""The settings whose presence turns tracing on under the automatic choice (the traces one wins, as in the SDK)."""
CONTENT = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
DEFAULT_ENDPOINT = "http://localhost:4318"
INSTALL = 'pip install "notebook-agent[otel]"'
NEEDED = ("opentelemetry.sdk.trace", "opentelemetry.exporter.otlp.proto.http.trace_exporter")


class TracingUnavailable(InputError):
    """``tracing=True`` (``--tracing``) but the OpenTelemetry SDK or its OTLP exporter is not installed."""


class TracingWarning(RuntimeWarning):
    """Tracing could not do its work (an endpoint that refused, hung or answered with an error, a package
    missing); the run went on. Said once for each cause: ``warnings.filterwarnings("ignore",
    category=TracingWarning)`` silences it."""


def tracing_on(choice: bool | None, environ: Mapping[str, str] | None = None) -> bool:
    """Whether a run with ``tracing=choice`` is traced (see the module docstring)."""
    env = os.environ if environ is None else environ
    if choice is False or env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    if choice is True:
        return True
    exporters = {e.strip().lower() for e in env.get("OTEL_TRACES_EXPORTER", "").split(",")}
    return "none" not in exporters and any(env.get(name, "").strip() for name in ENDPOINTS)


def content_wanted(environ: Mapping[str, str] | None = None) -> bool:
    """Whether prompts, page text, the task and the answer may go into spans (the GenAI content opt-in)."""
    env = os.environ if environ is None else environ
    return env.get(CONTENT, "").strip().lower() == "true"


def traces_endpoint(environ: Mapping[str, str] | None = None) -> str:
    """Where the OTLP exporter sends spans, read as it reads it: the traces endpoint verbatim, else the endpoint
    with ``/v1/traces`` added, else the default."""
    env = os.environ if environ is None else environ
    if env.get(ENDPOINTS[0], "").strip():
        return env[ENDPOINTS[0]].strip()
    return (env.get(ENDPOINTS[1], "").strip() or DEFAULT_ENDPOINT).removesuffix("/") + "/v1/traces"


def available() -> bool:
    """Whether the OpenTelemetry SDK and OTLP/HTTP exporter can be imported (they are found, not imported)."""
    try:
        return all(importlib.util.find_spec(name) is not None for name in NEEDED)
    except ImportError:  # a parent package is missing
        return False


def check_tracing(choice: bool | None) -> None:
    """Refuse ``tracing=True`` at once, before anything runs, when the packages it needs are missing."""
    if choice is True and not os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true" and not available():
        raise TracingUnavailable(
            f"tracing=True needs the OpenTelemetry SDK and its OTLP exporter, which are not installed: {INSTALL}."
        )


_said: set[str] = set()
_said_lock = threading.Lock()


def warn_once(key: str, text: str) -> None:
    """Say ``text`` as a :class:`TracingWarning`, once per ``key`` in this process (a failing endpoint says so
    once, not once per batch of spans)."""
    with _said_lock:
        if key in _said:
            return
        _said.add(key)
    warnings.warn(text, TracingWarning, stacklevel=2)

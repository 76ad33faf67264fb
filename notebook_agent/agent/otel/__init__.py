"""A run, a replay and a map as OpenTelemetry traces, sent over OTLP to whatever backend a team already reads.

``settings`` decides whether a run is traced (``tracing=``, the standard ``OTEL_*`` settings) without importing
OpenTelemetry and says a tracing problem once; ``switch`` holds the entry points the agent, the map and a row's
worker call, which import the rest only when tracing is on. ``run_spans`` turns a run's page events into spans (the
run, each step, each model call, action and approval wait), ``map_spans`` makes a map's trace (the map, each row,
with the row's run under it), ``attributes`` says what each span carries (the GenAI semantic conventions,
everything through the run's redactor), and ``export`` is where spans go (the process's tracer, OTLP over HTTP, one
warning when the endpoint fails) and the one module that calls OpenTelemetry, always inside functions.

May import ``agent.safety`` (the redactor) and ``agent.runs`` (the page events and results it consumes) and the
layers below ``agent``.
"""

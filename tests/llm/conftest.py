"""Fixtures for the adapter tests: a scripted local server per test, one wire format per provider."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from notebook_agent.core.messages import AssistantMessage, Message
from notebook_agent.core.model import Context, StreamEvent, StreamOptions, ToolSpec
from tests.llm.server import ScriptedServer
from tests.llm.wire import WIRES, Wire

KEY_ENVS = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_PROFILE",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_GEMINI_BASE_URL",
    "MISTRAL_API_KEY",
    "NOTEBOOK_AGENT_MODEL",
)


@pytest.fixture(autouse=True, scope="package")
def _shared_ssl_context() -> Iterator[None]:
    """Every SDK client loads the CA store (~0.1 s each on a slow machine; google-genai builds two) and no
    test here uses TLS, so build each distinct context once for this package. The clients are otherwise the
    real, unmodified SDK clients."""
    import ssl

    originals: list[tuple[Any, str, Any]] = [(ssl, "create_default_context", ssl.create_default_context)]
    try:
        import httpcore2

        originals.append((httpcore2, "default_ssl_context", httpcore2.default_ssl_context))
    except ImportError:
        pass
    for owner, attr, original in originals:
        cache: dict[Any, Any] = {}

        def shared(*args: Any, _original: Any = original, _cache: dict[Any, Any] = cache, **kwargs: Any) -> Any:
            key = (args, tuple(sorted(kwargs.items(), key=lambda kv: kv[0])))
            if key not in _cache:
                _cache[key] = _original(*args, **kwargs)
            return _cache[key]

        setattr(owner, attr, shared)
    yield
    for owner, attr, original in originals:
        setattr(owner, attr, original)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test may depend on (or leak) a developer's real keys and endpoints."""
    for name in KEY_ENVS:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    srv = ScriptedServer().start()
    yield srv
    srv.stop()


@pytest.fixture(params=list(WIRES))
def wire(request: pytest.FixtureRequest) -> Wire:
    return WIRES[request.param]()


CLICK = ToolSpec(
    name="click",
    description="Click an element by index.",
    parameters={
        "type": "object",
        "properties": {"index": {"type": "integer"}, "reason": {"type": "string"}},
        "required": ["index"],
    },
)
TYPE_TEXT = ToolSpec(
    name="type_text",
    description="Type text into an element.",
    parameters={
        "type": "object",
        "properties": {"index": {"type": "integer"}, "text": {"type": "string"}},
        "required": ["index", "text"],
    },
)


def context(
    *messages: Message, tools: list[ToolSpec] | None = None, system: str | None = "You drive a browser."
) -> Context:
    from notebook_agent.core.messages import user

    return Context(system_prompt=system, messages=list(messages) or [user("hi")], tools=tools or [])


async def collect(model: Any, ctx: Context, options: StreamOptions | None = None) -> list[StreamEvent]:
    return [event async for event in model.stream(ctx, options or StreamOptions())]


def final(events: list[StreamEvent]) -> AssistantMessage:
    assert events, "no events"
    last = events[-1]
    assert last.type in ("done", "error"), last.type
    assert sum(e.type in ("done", "error") for e in events) == 1
    return last.partial

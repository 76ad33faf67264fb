"""One options object for every provider adapter: built from ``ProviderOptions`` or from the same settings as
keywords, each adapter is the same and its real SDK client sends what the options say to a local wire server."""

from __future__ import annotations

from typing import Any, get_type_hints

import pytest

from notebook_agent.llm import ProviderOptions, get_model
from notebook_agent.llm.convert import StreamingAdapter
from notebook_agent.llm.provider_options import FIELDS, ProviderKeywords
from tests.llm.conftest import collect, context
from tests.llm.server import ScriptedServer
from tests.llm.wire import Wire


def test_the_keywords_are_the_options() -> None:
    assert set(get_type_hints(ProviderKeywords)) == FIELDS


async def test_options_or_keywords_make_one_adapter_that_reaches_the_wire(server: ScriptedServer, wire: Wire) -> None:
    name = f"{wire.name}:{wire.model_id}"
    settings: dict[str, Any] = {  # keywords of several types, as a caller writes them
        "api_key": "test-key",
        "base_url": server.url + wire.path_suffix,
        "max_retries": 0,
        "timeout": 5.0,
        "default_headers": {"x-notebook-agent-test": "options"},
        "deadlines": {"first_token": 30},
    }
    by_options = get_model(name, options=ProviderOptions(**settings))
    by_keywords = get_model(name, **settings)
    assert isinstance(by_options, StreamingAdapter) and isinstance(by_keywords, StreamingAdapter)
    adapter = type(by_options)
    direct = adapter(wire.model_id, ProviderOptions(**settings))
    for model in (by_options, by_keywords, direct):
        assert model.options == by_options.options
        assert (model.max_retries, model.deadlines.first_token) == (0, 30)
        server.enqueue(wire.text(["hello"]))
        events = await collect(model, context())
        assert events[-1].type == "done", events[-1]
        sent = server.requests[-1]
        assert sent.headers.get("x-notebook-agent-test") == "options", (type(model).__name__, sent.headers)
        assert "test-key" in " ".join(sent.headers.values())


def test_a_keyword_wins_over_the_options_and_an_unknown_one_is_named(wire: Wire) -> None:
    name = f"{wire.name}:{wire.model_id}"
    options = ProviderOptions(api_key="k", base_url="http://127.0.0.1:9/v1", max_retries=5, timeout=7.0)
    model = get_model(name, options=options, max_retries=1)
    assert isinstance(model, StreamingAdapter)
    assert model.max_retries == 1 and model.options.timeout == 7.0
    with pytest.raises(TypeError, match="Unknown provider option api_token; the options are api_key, "):
        ProviderOptions.of(options, api_token="k")
    with pytest.raises(TypeError, match="api_token"):
        type(model)(wire.model_id, options, api_token="k")  # type: ignore[call-arg]

"""get_model: names, keys from arguments and SDK env vars, local placeholder keys, and clear config errors."""

from __future__ import annotations

import sys

import pytest

from notebook_agent.core.model import Model
from notebook_agent.llm import (
    LOCAL_PLACEHOLDER_KEY,
    AnthropicModel,
    GoogleModel,
    MistralModel,
    ModelConfigError,
    OpenAIChatModel,
    OpenAIResponsesModel,
    get_model,
    parse_model_name,
)
from notebook_agent.llm.convert import StreamingAdapter
from notebook_agent.llm.endpoints import is_local_url
from notebook_agent.testing import sdk_client
from tests.llm.conftest import collect, context, final
from tests.llm.server import ScriptedServer
from tests.llm.wire import ChatWire


@pytest.mark.parametrize(
    ("name", "env", "cls"),
    [
        ("openai:gpt-4o-mini", "OPENAI_API_KEY", OpenAIChatModel),
        ("openai-responses:gpt-5", "OPENAI_API_KEY", OpenAIResponsesModel),
        ("anthropic:claude-sonnet-4-6", "ANTHROPIC_API_KEY", AnthropicModel),
        ("google:gemini-2.5-flash", "GEMINI_API_KEY", GoogleModel),
        ("mistral:mistral-small-latest", "MISTRAL_API_KEY", MistralModel),
    ],
)
def test_missing_key_names_the_env_var(name: str, env: str, cls: type, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ModelConfigError) as info:
        get_model(name)
    assert env in str(info.value) and "api_key=" in str(info.value)
    monkeypatch.setenv(env, "from-env")
    model = get_model(name)
    assert isinstance(model, cls) and isinstance(model, Model)
    assert model.id == name.split(":", 1)[1]


def test_google_api_key_env_also_works(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_API_KEY", "k")
    assert isinstance(get_model("google:gemini-2.5-flash"), GoogleModel)


def test_unknown_provider_lists_valid_ones() -> None:
    with pytest.raises(ModelConfigError) as info:
        get_model("groq:llama-3")
    text = str(info.value)
    for provider in ("openai:", "openai-responses:", "anthropic:", "google:", "mistral:"):
        assert provider in text


def test_default_model_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ModelConfigError, match="NOTEBOOK_AGENT_MODEL"):
        get_model()
    monkeypatch.setenv("NOTEBOOK_AGENT_MODEL", "anthropic:claude-haiku-4-5")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    model = get_model()
    assert (model.provider, model.id) == ("anthropic", "claude-haiku-4-5")


def test_name_parsing() -> None:
    assert parse_model_name("openai:llama3.1:8b") == ("openai", "llama3.1:8b")
    assert parse_model_name("gpt-4o") == ("openai", "gpt-4o")
    assert parse_model_name("claude-sonnet-4-6") == ("anthropic", "claude-sonnet-4-6")
    assert parse_model_name("gemini-2.5-pro") == ("google", "gemini-2.5-pro")
    with pytest.raises(ModelConfigError, match="provider:model"):
        parse_model_name("llama3")
    with pytest.raises(ModelConfigError, match="no model id"):
        parse_model_name("openai:")


def test_missing_google_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "google.genai", None)
    with pytest.raises(ModelConfigError) as info:
        get_model("google:gemini-2.5-flash", api_key="k")
    assert "pip install 'notebook-agent[google]'" in str(info.value)


def test_local_urls() -> None:
    assert is_local_url("http://localhost:11434/v1")
    assert is_local_url("http://127.0.0.1:8080")
    assert is_local_url("http://192.168.1.20:8000/v1")
    assert is_local_url("http://gpu-box.local:8000")
    assert not is_local_url("https://api.openai.com/v1")
    assert not is_local_url("https://my-proxy.example.com/v1")


async def test_local_server_needs_no_key(server: ScriptedServer) -> None:
    server.enqueue(ChatWire().text(["local"]))
    model = get_model("openai:llama3.1:8b", base_url=server.url + "/v1", max_retries=0)
    msg = final(await collect(model, context()))
    assert msg.text == "local"
    assert server.requests[0].headers["authorization"] == f"Bearer {LOCAL_PLACEHOLDER_KEY}"
    assert server.requests[0].body["model"] == "llama3.1:8b"


def test_remote_base_url_still_needs_key() -> None:
    with pytest.raises(ModelConfigError, match="not a local address"):
        get_model("openai:some-model", base_url="https://proxy.example.com/v1")


async def test_base_url_from_sdk_env(server: ScriptedServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
    server.enqueue(ChatWire().text(["via env"]))
    msg = final(await collect(get_model("openai:local-model"), context()))
    assert msg.text == "via env"


def test_retries_and_timeout_reach_the_sdk() -> None:
    model = get_model("openai:gpt-4o-mini", api_key="k", max_retries=5, timeout=12.5)
    assert isinstance(model, OpenAIChatModel)
    client = sdk_client(model)
    assert client.max_retries == 5 and client.timeout == 12.5
    anthropic = get_model("anthropic:claude-sonnet-4-6", api_key="k")
    assert isinstance(anthropic, StreamingAdapter)
    assert anthropic.max_retries == 2  # default

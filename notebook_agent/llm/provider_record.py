"""What the package knows about each model provider, in one record per provider: :data:`PROVIDERS`.

A provider's knowledge used to be spread over the places that need it. Now each reads the record:
``get_model`` (llm/registry.py) builds a model with the record's ``adapter`` after checking its package and key
variables; the error translation (llm/errors.py) recognises an SDK's exceptions by the record's ``sdk`` module and
names the provider by its ``label``; the request counter (llm/deadlines.py) finds the SDK client's HTTP client
where the record says it keeps it; ``%agent models`` (llm/availability.py) lists the records. A new provider is
one record here and its adapter module.

Adapters are named as ``module:function`` and imported when a model of the provider is asked for, so an optional
SDK (google-genai) is imported only by those who use it.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from .provider_options import ProviderOptions

OLLAMA_DEFAULT_URL = "http://127.0.0.1:11434"


@dataclass(frozen=True)
class ProviderRecord:
    """One provider: how its models are named, built, configured, checked and told apart when they fail."""

    name: str
    description: str
    key_envs: tuple[str, ...]
    """The environment variables an API key may be in, in order (none: no key needed)."""
    base_url_env: str | None = None
    sdk_keys: tuple[str, ...] = ()
    """Variables the SDK reads by itself (an auth token, a profile): when one is set, no key is passed to it."""
    package: str | None = None
    """Importable module that must be present, with the pip command in ``install``."""
    install: str | None = None
    adapter: str | None = None
    """``module:function`` building a model: ``function(model_id, options, **keywords)`` (a ProviderOptions)."""
    plugin: str | None = None
    """``module:function`` building a model from its id and keywords alone, imported when needed: a provider
    whose models live outside this layer (the demo model); no key, package or options are checked."""
    default_id: str | None = None
    """The model id of the bare provider name (``demo`` is ``demo:offline``); None: the id is required."""
    label: str = ""
    """How messages name it ("Google Gemini"); the name itself when empty."""
    sdk: str | None = None
    """The module of the official SDK its adapter calls: its exceptions are translated into ProviderError."""
    error_body: str = "body"
    """The attribute of the SDK's exceptions holding the error body the server sent."""
    http_client: tuple[str, ...] = ("_client",)
    """Where the SDK's client keeps its httpx client (attribute path), for counting the requests it sends."""

    @property
    def api_keys(self) -> tuple[str, ...]:
        """The variables that hold an API key itself (not one the SDK reads on its own)."""
        return tuple(e for e in self.key_envs if e not in self.sdk_keys)

    @property
    def key_hint(self) -> str | None:
        """The key variables as a message names them (``GEMINI_API_KEY (or GOOGLE_API_KEY)``), None: none."""
        if not self.api_keys:
            return None
        first, *rest = self.api_keys
        return f"{first} (or {rest[0]})" if rest else first

    def build(self, model_id: str, options: ProviderOptions, **kw: Any) -> Any:
        """A model of this provider from its adapter."""
        assert self.adapter is not None
        return _imported(self.adapter)(model_id, options, **kw)

    def build_plugin(self, model_id: str, **kw: Any) -> Any:
        assert self.plugin is not None
        return _imported(self.plugin)(model_id, **kw)


def _imported(target: str) -> Any:
    module, _, function = target.partition(":")
    return getattr(importlib.import_module(module), function)


_OPENAI_CHAT = "notebook_agent.llm.providers.openai_chat"
_LOCAL = "notebook_agent.llm.local.llama_server"

PROVIDERS: dict[str, ProviderRecord] = {
    "openai": ProviderRecord(
        "openai",
        "OpenAI Chat Completions (and OpenAI-compatible servers)",
        ("OPENAI_API_KEY",),
        "OPENAI_BASE_URL",
        adapter=f"{_OPENAI_CHAT}:OpenAIChatModel",
        label="OpenAI",
        sdk="openai",
    ),
    "openai-responses": ProviderRecord(
        "openai-responses",
        "OpenAI Responses API",
        ("OPENAI_API_KEY",),
        "OPENAI_BASE_URL",
        adapter="notebook_agent.llm.providers.openai_responses:OpenAIResponsesModel",
        label="OpenAI",
        sdk="openai",
    ),
    "anthropic": ProviderRecord(
        "anthropic",
        "Anthropic Messages",
        ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),
        "ANTHROPIC_BASE_URL",
        sdk_keys=("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE"),
        adapter="notebook_agent.llm.providers.anthropic:AnthropicModel",
        label="Anthropic",
        sdk="anthropic",
    ),
    "google": ProviderRecord(
        "google",
        "Google Gemini",
        ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
        "GOOGLE_GEMINI_BASE_URL",
        package="google.genai",
        install="pip install 'notebook-agent[google]'",
        adapter="notebook_agent.llm.providers.google:GoogleModel",
        label="Google Gemini",
        sdk="google.genai",
        error_body="details",
        http_client=("_api_client", "_async_httpx_client"),
    ),
    "mistral": ProviderRecord(
        "mistral",
        "Mistral (OpenAI-compatible endpoint)",
        ("MISTRAL_API_KEY",),
        adapter=f"{_OPENAI_CHAT}:MistralModel",
        label="Mistral",
        sdk="openai",
    ),
    "local": ProviderRecord(
        "local",
        "A GGUF model file on a managed llama.cpp llama-server (local:PATH.gguf)",
        (),
        adapter=f"{_LOCAL}:local_model",
        label="The local llama-server",
        sdk="openai",
    ),
    "hf": ProviderRecord(
        "hf",
        "A GGUF file from the Hugging Face Hub, downloaded once into its cache, on a managed llama-server "
        "(hf:OWNER/REPO/FILE.gguf, hf:OWNER/REPO@REVISION/FILE.gguf)",
        (),
        package="huggingface_hub",
        install="pip install 'notebook-agent[local]'",
        adapter=f"{_LOCAL}:hub_model",
        label="The local llama-server",
        sdk="openai",
    ),
    "ollama": ProviderRecord(
        "ollama",
        "Ollama's OpenAI-compatible endpoint (ollama:MODEL)",
        (),
        "OLLAMA_HOST",
        adapter=f"{_OPENAI_CHAT}:ollama_model",
        label="Ollama",
        sdk="openai",
    ),
    "demo": ProviderRecord(
        "demo",
        "The offline demo model of the bundled demo shop, no key "
        "(demo, demo:shop, demo:delete_account, demo:price, demo:catalog)",
        (),
        plugin="notebook_agent.demo.model:demo_model_named",
        default_id="offline",
    ),
}


def record_of(provider: str) -> ProviderRecord | None:
    """The record of ``provider`` (a model's ``provider``), or None for one the registry does not build."""
    return PROVIDERS.get(provider)


def sdk_modules() -> tuple[str, ...]:
    """The modules of every provider's SDK."""
    return tuple(dict.fromkeys(r.sdk for r in PROVIDERS.values() if r.sdk))

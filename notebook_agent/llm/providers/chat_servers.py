"""Which OpenAI-compatible server is on the other end of a Chat Completions endpoint, and what it accepts.

One job: the :class:`ChatCompat` of a provider, base URL and model, so the wire adapter (``openai_chat.py``)
reads what a server accepts from one value instead of asking which server it is at every field.

Local servers (llama.cpp's llama-server, Ollama, ...) differ from api.openai.com where it matters for an
agent that forces one tool (the page agent's ``AgentOutput``): they accept only a *string* ``tool_choice``
(llama.cpp ignores the named object and falls back to ``auto``), and small models follow a JSON schema far
better when the server constrains decoding with it (see ``schema_output.py``). How the adapter knows it talks
to one: ``server=`` (``"llamacpp"``, ``"ollama"``, ``"local"``; ``"openai"`` for the api.openai.com shape),
else a loopback, private or ``.local`` base_url serving a model whose id is not an OpenAI model name (a local
proxy that serves ``gpt-4o-mini`` is taken to forward to OpenAI). For such a server a forced tool is sent as
``tool_choice: "required"`` with only that tool, no temperature means :data:`LOCAL_DEFAULT_TEMPERATURE`, and
``output_mode="auto"`` asks for schema-constrained JSON instead of a tool call.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..endpoints import is_local_url
from ..errors import ModelConfigError

LOCAL_DEFAULT_TEMPERATURE = 0.0
"""Temperature sent to local servers when the caller set none (their default, 0.8 for llama.cpp, makes small
models wander): greedy decoding, so a step is reproducible while tuning a prompt."""
OLLAMA_PORT = 11434

ServerKind = Literal["openai", "llamacpp", "ollama", "local"]
SERVER_KINDS: tuple[str, ...] = ("openai", "llamacpp", "ollama", "local")


@dataclass(frozen=True)
class ChatCompat:
    """What an OpenAI-compatible server accepts. Detected by :func:`detect_compat`; pass one to override."""

    stream_usage: bool = True
    """Send ``stream_options.include_usage`` (usage arrives in a last, choice-less chunk)."""
    store: bool = False
    """Send ``store: false`` (OpenAI itself only)."""
    max_tokens_field: Literal["max_completion_tokens", "max_tokens"] = "max_completion_tokens"
    reasoning_effort: bool = True
    tool_result_name: bool = False
    """Tool messages carry the tool ``name`` (Mistral)."""
    assistant_after_tool_result: bool = False
    """A user turn may not follow tool results directly; insert a short assistant bridge (Mistral)."""
    id_style: Literal["openai", "mistral"] = "openai"
    named_tool_choice: bool = True
    """A forced tool is sent as ``{"type": "function", "function": {"name": ...}}``; False: as the string
    ``"required"`` with only that tool declared (llama.cpp, Ollama accept only strings)."""
    schema_output: bool = False
    """``output_mode="auto"`` asks for schema-constrained JSON instead of a forced tool call."""
    default_temperature: float | None = None
    """Sent when the caller sets no temperature."""
    cache_prompt: bool = False
    """Send ``cache_prompt: true`` (llama.cpp: reuse the KV cache of the common prompt prefix)."""
    schema_in_prompt: bool = False
    """In ``json_schema`` mode, also state the tool's schema in the system prompt. llama.cpp only constrains
    decoding with it; without seeing it the model cannot know which actions exist (Qwen-1.5B then clicked
    the one action the prompt named as an example, every step). OpenAI shows the schema to the model itself."""
    local: bool = False
    """A server on this machine or the local network: its tokens cost nothing unless prices were set for it."""


def _is_openai_url(base_url: str | None) -> bool:
    return base_url is None or "api.openai.com" in base_url


_OPENAI_MODEL_PREFIXES = ("gpt-", "o1", "o3", "o4", "chatgpt-", "codex-", "computer-use-")


def _local_compat(kind: str) -> ChatCompat:
    return ChatCompat(
        max_tokens_field="max_tokens",
        named_tool_choice=False,
        schema_output=True,
        schema_in_prompt=True,
        default_temperature=LOCAL_DEFAULT_TEMPERATURE,
        cache_prompt=kind == "llamacpp",
        local=True,
    )


def detect_server(base_url: str | None, model_id: str | None = None) -> ServerKind | None:
    """Which local server ``base_url`` is, or None for OpenAI itself and remote OpenAI-compatible services.

    A loopback/private/``.local`` URL counts as a local server unless the model id is an OpenAI model name
    (then it is taken for a local proxy to OpenAI); port 11434 is Ollama's.
    """
    if _is_openai_url(base_url) or base_url is None or not is_local_url(base_url):
        return None
    if model_id and model_id.startswith(_OPENAI_MODEL_PREFIXES):
        return None
    from urllib.parse import urlparse

    return "ollama" if urlparse(base_url).port == OLLAMA_PORT else "local"


def detect_compat(
    provider: str, base_url: str | None, model_id: str | None = None, server: str | None = None
) -> ChatCompat:
    """The compat for a provider/base_url/model; ``server=`` (one of :data:`SERVER_KINDS`) overrides detection."""
    if server is not None and server not in SERVER_KINDS:
        raise ModelConfigError(f"Unknown server={server!r}; use one of {', '.join(SERVER_KINDS)}.")
    if server is None and provider in ("local", "ollama"):
        server = "llamacpp" if provider == "local" else "ollama"
    if server is None and provider != "mistral":
        server = detect_server(base_url, model_id)
    if server in ("llamacpp", "ollama", "local"):
        return _local_compat(server)
    if provider == "mistral":
        return ChatCompat(
            stream_usage=False,
            max_tokens_field="max_tokens",
            reasoning_effort=False,
            tool_result_name=True,
            assistant_after_tool_result=True,
            id_style="mistral",
        )
    if _is_openai_url(base_url):
        return ChatCompat(store=True)
    # Local and third-party servers: the older, universally understood field names.
    return ChatCompat(max_tokens_field="max_tokens")

"""``get_model("provider:model")``: the one way the rest of the package obtains a model.

Everything that can be wrong with a model's configuration is checked here, before any request: an unknown
provider, a missing API key (the error names the environment variable to set), a missing optional package
(the error gives the pip command). Keys and endpoints come from the arguments first, then from each
official SDK's own environment variables, so an existing SDK setup works unchanged.

Local servers: an OpenAI-compatible (or Anthropic-compatible) server on this machine or the local network,
such as Ollama, llama.cpp or vLLM, usually needs no key. When ``base_url`` points at a loopback, private or
``.local`` address and no key is set, the placeholder key ``"not-needed"`` is sent (the SDKs refuse to
start without one). A remote base_url still needs a real key.

``local:PATH.gguf`` runs a model file on a managed llama.cpp server (built once if needed, see
:mod:`.local.llama_server`); ``hf:OWNER/REPO/FILE.gguf`` (also ``local:hf:...``) runs one fetched once from the Hugging
Face Hub (see :mod:`.local.model_files`); ``ollama:MODEL`` is the OpenAI-compatible endpoint of a running Ollama
(``$OLLAMA_HOST`` or http://127.0.0.1:11434). None of them needs a key; all use the local-server request shape.

``demo`` (or ``demo:shop``, ``demo:delete_account``, ``demo:price``, ``demo:catalog``) is the offline demo model
of the bundled demo shop. It lives in the demo package, above this layer, so the registry names its factory as
``module:function`` and imports it only when such a model is asked for (the way a plugin's entry point is
named).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from dataclasses import replace
from typing import Any

from ..core.model import Model
from .endpoints import is_local_url
from .errors import ModelConfigError
from .provider_options import FIELDS, ProviderOptions
from .provider_record import PROVIDERS, ProviderRecord

MODEL_ENV = "NOTEBOOK_AGENT_MODEL"
LOCAL_PLACEHOLDER_KEY = "not-needed"


_INFER_PREFIXES: tuple[tuple[str, str], ...] = (
    ("gpt-", "openai"),
    ("o1", "openai"),
    ("o3", "openai"),
    ("o4", "openai"),
    ("claude", "anthropic"),
    ("gemini", "google"),
    ("mistral", "mistral"),
    ("magistral", "mistral"),
    ("codestral", "mistral"),
    ("devstral", "mistral"),
    ("pixtral", "mistral"),
    ("ministral", "mistral"),
)


def _valid_list() -> str:
    return ", ".join(f"{p}:" for p in PROVIDERS)


def parse_model_name(name: str) -> tuple[str, str]:
    """Split ``provider:model`` at the first colon (model ids such as ``llama3.1:8b`` keep theirs).

    A bare well-known model id (``gpt-4o``, ``claude-...``, ``gemini-...``) gets its provider inferred.
    """
    name = name.strip()
    bare = PROVIDERS.get(name)
    if bare is not None and bare.default_id is not None:
        return name, bare.default_id
    provider, sep, model_id = name.partition(":")
    if sep and provider in PROVIDERS:
        if not model_id.strip():
            raise ModelConfigError(
                f"Model name {name!r} has no model id after {provider + ':'!r}, e.g. 'openai:gpt-4o-mini'."
            )
        return provider, model_id.strip()
    if sep and "/" not in provider and "." not in provider:
        raise ModelConfigError(
            f"Unknown model provider {provider!r} in {name!r}. Valid providers: {_valid_list()} "
            f"(for example 'openai:gpt-4o-mini', 'anthropic:claude-sonnet-4-5', 'google:gemini-2.5-flash')."
        )
    for prefix, inferred in _INFER_PREFIXES:
        if name.startswith(prefix):
            return inferred, name
    raise ModelConfigError(
        f"Model name {name!r} must be 'provider:model'. Valid providers: {_valid_list()} "
        f"(for example 'openai:gpt-4o-mini'; a local OpenAI-compatible server is 'openai:<model>' with base_url=...)."
    )


def _package_available(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _resolve_key(info: ProviderRecord, api_key: str | None, base_url: str | None) -> str | None:
    if api_key:
        return api_key
    if not info.key_envs:
        return LOCAL_PLACEHOLDER_KEY
    for env in info.key_envs:
        if os.environ.get(env):
            # Let the SDK read what it reads itself (Anthropic treats an auth token differently from a key).
            return None if env in info.sdk_keys else os.environ[env]
    if any(os.environ.get(env) for env in info.sdk_keys):
        return None
    if base_url and is_local_url(base_url):
        return LOCAL_PLACEHOLDER_KEY
    envs = " or ".join(info.api_keys[:2])
    where = f" (base_url {base_url} is not a local address)" if base_url else ""
    raise ModelConfigError(
        f"No API key for {info.name} models{where}: set {envs} (for example `export {info.key_envs[0]}=...`) "
        f"or pass api_key=... to get_model()."
    )


def get_model(name: str | None = None, *, options: ProviderOptions | None = None, **kw: Any) -> Model:
    """Build the model named ``provider:model`` (default: ``$NOTEBOOK_AGENT_MODEL``).

    The connection settings are a :class:`~.provider_options.ProviderOptions` (``options=``), or its fields as
    keywords (``api_key=``, ``base_url=``, ``max_retries=``, ``timeout=``, ``client=``, ``http_client=``,
    ``prices=``, ``default_headers=``, ``on_payload=``, ``deadlines=``), which win over ``options``'.

    ``max_retries`` (default 2) is handed to the SDK's own retry logic (429, 5xx, connection errors);
    ``timeout`` is the SDK's read timeout in seconds. ``deadlines=`` bounds every call (a
    :class:`~notebook_agent.core.model.Deadlines`, or a mapping such as ``{"first_token": 300}`` that
    overrides the defaults: 120/60/600 s for hosted APIs, 300/60/900 s for a local base_url); the model
    exposes the result as ``model.deadlines``. Other keyword arguments go to the adapter class
    (``strict_tools=``, ``compat=``, ``legacy_parameters=``, ``cache=`` ...).
    For Chat Completions models also ``server=`` ("llamacpp", "ollama", "local" or "openai"), ``output_mode=``
    ("auto", "json_schema", "tools", "text"), ``default_temperature=`` and ``http_client=``; see
    :class:`.OpenAIChatModel`. ``local:PATH.gguf`` and ``hf:OWNER/REPO/FILE.gguf`` also take ``context=``,
    ``threads=``, ``server_args=`` and ``build=``.
    """
    name = name or os.environ.get(MODEL_ENV)
    if not name:
        raise ModelConfigError(
            f"No model given: call get_model('provider:model') or set {MODEL_ENV} "
            f"(for example {MODEL_ENV}=openai:gpt-4o-mini). Valid providers: {_valid_list()}"
        )
    provider, model_id = parse_model_name(name)
    info = PROVIDERS[provider]
    opts = ProviderOptions.of(options, **{k: kw.pop(k) for k in list(kw) if k in FIELDS})
    if info.plugin is not None:
        return info.build_plugin(model_id, **kw)
    if info.package and opts.client is None and not _package_available(info.package):
        raise ModelConfigError(f"{provider}: models need the {info.package} package: {info.install}")
    base_url = opts.base_url
    if base_url is None and info.base_url_env:
        base_url = os.environ.get(info.base_url_env) or None
    key = opts.api_key if opts.client is not None else _resolve_key(info, opts.api_key, base_url)
    opts = replace(opts, api_key=key, base_url=base_url)

    return info.build(model_id, opts, **kw)

"""Provider adapters behind the one streaming ``Model`` protocol of ``notebook_agent.core``.

``get_model("provider:model")`` builds one (``registry``), from each provider's record (``provider_record``: its
adapter, key variables and SDK) and the connection settings (``provider_options``); ``availability`` says which can
be used here. The adapters are in ``providers`` and the models on this machine in ``local``; what they share:
the stream driver (``convert``), errors translated from the SDKs (``errors``), deadlines and request counting
(``deadlines``), a transport with a pool per event loop that keeps an SDK off aiohttp (``loop_transport``),
local endpoints (``endpoints``), prices (``pricing``), token counts (``tokens``) and what calls cost at every scale
(``ledger``). ``scripted`` is a model that plays a script (tests, demos). Importing this package never imports
google-genai, which is optional.
"""

from __future__ import annotations

from ..core.model import Deadlines
from .errors import (
    ERROR_KINDS,
    AuthenticationError,
    BadRequestError,
    ContextLengthError,
    ErrorContext,
    LLMError,
    MalformedResponseError,
    ModelConfigError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
    ServerError,
    StreamCutError,
    classify_error,
)
from .pricing import PRICES, prices_for, prices_of, set_prices
from .provider_options import ProviderOptions
from .providers.anthropic import AnthropicModel
from .providers.chat_servers import ChatCompat
from .providers.google import GoogleModel
from .providers.openai_chat import MistralModel, OpenAIChatModel
from .providers.openai_responses import OpenAIResponsesModel
from .registry import LOCAL_PLACEHOLDER_KEY, MODEL_ENV, PROVIDERS, get_model, parse_model_name

__all__ = [
    "ERROR_KINDS",
    "LOCAL_PLACEHOLDER_KEY",
    "MODEL_ENV",
    "PRICES",
    "PROVIDERS",
    "AnthropicModel",
    "AuthenticationError",
    "BadRequestError",
    "ChatCompat",
    "ContextLengthError",
    "Deadlines",
    "ErrorContext",
    "GoogleModel",
    "LLMError",
    "MalformedResponseError",
    "MistralModel",
    "ModelConfigError",
    "OpenAIChatModel",
    "OpenAIResponsesModel",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderOptions",
    "ProviderTimeoutError",
    "RateLimitError",
    "ServerError",
    "StreamCutError",
    "classify_error",
    "get_model",
    "parse_model_name",
    "prices_for",
    "prices_of",
    "set_prices",
]

"""Provider adapters behind the one streaming ``Model`` protocol of ``notebook_agent.core``.

``get_model("provider:model")`` builds one (providers: ``openai``, ``openai-responses``, ``anthropic``,
``google``, ``mistral``). Importing this package never imports google-genai, which is optional.
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
from .pricing import PRICES, prices_for
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
]

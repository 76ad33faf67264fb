"""Errors of the llm layer, and the one place where SDK exceptions are translated.

Two families, per the architecture: misuse (unknown provider, missing key, missing package) raises
:class:`ModelConfigError` from ``get_model`` before any I/O; a failed model call never raises out of
``Model.stream`` but ends it with an ``error`` event whose message says what happened and what to do, and
whose ``error_kind`` is one of :data:`ERROR_KINDS`. :func:`classify_error` is the translation for every
SDK (openai, anthropic, google-genai) and for the transport errors (httpx/httpx2) that some SDKs let through.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, replace
from typing import Any, Final

from ..core import JSONValue
from ..core.errors import NotebookAgentError
from .provider_record import PROVIDERS, record_of, sdk_modules

ERROR_KINDS: Final = (
    "auth",
    "rate_limit",
    "server",
    "timeout",
    "connection",
    "stream_cut",
    "context_length",
    "malformed",
    "bad_request",
    "aborted",
)


class LLMError(NotebookAgentError):
    """Base of every error raised by the llm layer."""


class ModelConfigError(LLMError, ValueError):
    """A model cannot be built: unknown provider, missing API key or missing optional package."""


class ProviderError(LLMError):
    """A model call failed; ``kind`` is the machine-readable class stored as ``error_kind``."""

    kind: str = "bad_request"

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


class AuthenticationError(ProviderError):
    kind = "auth"


class RateLimitError(ProviderError):
    kind = "rate_limit"


class ServerError(ProviderError):
    kind = "server"


class ProviderTimeoutError(ProviderError):
    kind = "timeout"


class ProviderConnectionError(ProviderError):
    kind = "connection"


class StreamCutError(ProviderError):
    kind = "stream_cut"


class ContextLengthError(ProviderError):
    kind = "context_length"


class MalformedResponseError(ProviderError):
    kind = "malformed"


class BadRequestError(ProviderError):
    kind = "bad_request"


_BY_KIND: dict[str, type[ProviderError]] = {
    cls.kind: cls
    for cls in (
        AuthenticationError,
        RateLimitError,
        ServerError,
        ProviderTimeoutError,
        ProviderConnectionError,
        StreamCutError,
        ContextLengthError,
        MalformedResponseError,
        BadRequestError,
    )
}


def provider_error(kind: str, message: str, *, status: int | None = None) -> ProviderError:
    """The :class:`ProviderError` subclass for ``kind`` (used by adapters for in-band failures)."""
    return _BY_KIND.get(kind, ProviderError)(message, status=status)


@dataclass
class ErrorContext:
    """What the error messages need to say something useful about where the failure happened."""

    provider: str
    model: str
    key_env: str | None = None
    base_url: str | None = None
    in_stream: bool = False
    """True once the HTTP response started: a transport failure after this point is a cut stream."""
    in_tool_call: bool = False
    max_retries: int | None = None
    """The retry budget given to the SDK (what it *may* have done)."""
    retries: int | None = None
    """Retries the SDK really made in this call (requests counted, or its retry-count header); None if unknown.
    Messages say "after N retries" only when N is above zero, never from ``max_retries`` alone."""

    @property
    def label(self) -> str:
        if self.provider == "openai" and self.base_url and "api.openai.com" not in self.base_url:
            return "The OpenAI-compatible server"  # a local or third-party server, not OpenAI itself
        record = record_of(self.provider)
        return record.label if record is not None and record.label else self.provider

    @property
    def where(self) -> str:
        return f" at {self.base_url}" if self.base_url else ""


_CONTEXT_MARKERS: Final = (
    "context_length_exceeded",
    "context length",
    "context window",
    "maximum context",
    "prompt is too long",
    "too many tokens",
    "input is too long",
    "exceeds the maximum number of tokens",
    "input token count",
    "reduce the length",
    "model_context_window_exceeded",
)

_TRANSPORT_TIMEOUT_NAMES: Final = ("ReadTimeout", "WriteTimeout", "ConnectTimeout", "PoolTimeout", "TimeoutException")
_TRANSPORT_CUT_NAMES: Final = ("RemoteProtocolError", "ReadError", "IncompleteRead", "ProtocolError", "StreamError")
_TRANSPORT_CONNECT_NAMES: Final = ("ConnectError", "NetworkError", "TransportError", "WriteError")


def _truncate(text: str, limit: int = 600) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _detail_from_body(body: JSONValue) -> str | None:
    """The human message inside an error body of any of the providers' shapes."""
    if isinstance(body, str):
        text = body
        try:
            body = json.loads(text)
        except ValueError:
            return text or None
    if isinstance(body, list) and body:
        body = body[0]
    if not isinstance(body, dict):
        return None
    err = body.get("error", body)
    if isinstance(err, dict):
        for key in ("message", "detail", "msg"):
            value = err.get(key)
            if isinstance(value, str) and value:
                return value
    if isinstance(err, str):
        return err
    detail = body.get("detail") or body.get("message")
    if isinstance(detail, str):
        return detail
    if detail is not None:
        return json.dumps(detail)[:600]
    return None


def _error_type_from_body(body: JSONValue) -> str:
    """The provider's machine error type/code (``rate_limit_error``, ``context_length_exceeded``, ...)."""
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict):
            parts = [str(err.get(k)) for k in ("type", "code", "status") if err.get(k)]
            return " ".join(parts)
    return ""


def _status_of(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        return status
    code = getattr(exc, "code", None)  # google.genai.errors.APIError
    if isinstance(code, int):
        return code
    response = getattr(exc, "response", None)
    status = getattr(response, "status_code", None)
    return status if isinstance(status, int) else None


def _is_sdk_error(exc: BaseException) -> bool:
    return type(exc).__module__.startswith(sdk_modules())


def _error_body(exc: BaseException) -> Any:
    """The error body the server sent, where the exception's SDK keeps it (its provider's record says)."""
    body = getattr(exc, "body", None)
    module = type(exc).__module__
    for record in PROVIDERS.values():
        if body is None and record.sdk and module.startswith(record.sdk):
            return getattr(exc, record.error_body, None)
    return body


def _mro_names(exc: BaseException) -> set[str]:
    return {cls.__name__ for cls in type(exc).__mro__}


def _looks_like_context_length(text: str) -> bool:
    lowered = text.lower()
    return any(marker in lowered for marker in _CONTEXT_MARKERS)


def _plural_retries(n: int) -> str:
    return f"{n} automatic retr{'y' if n == 1 else 'ies'}"


def _retry_note(ctx: ErrorContext) -> str:
    """Say "after N retries" only for retries that happened; with an unknown count, only the budget."""
    if ctx.retries is not None:
        return f" (after {_plural_retries(ctx.retries)})" if ctx.retries else ""
    if ctx.max_retries:
        return f" (with up to {_plural_retries(ctx.max_retries)})"
    return ""


def retries_taken(exc: BaseException) -> int | None:
    """How many times the SDK retried before ``exc``, read from the last request it sent.

    The openai and anthropic SDKs number every attempt in the ``x-stainless-retry-count`` request header,
    so this counts real requests rather than the configured budget. None when the SDK does not say.
    """
    request = getattr(exc, "request", None)
    if request is None:
        request = getattr(getattr(exc, "response", None), "request", None)
    headers = getattr(request, "headers", None)
    if headers is None:
        return None
    try:
        value = headers.get("x-stainless-retry-count")
    except Exception:
        return None
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None


_FORMAT_MARKERS: Final = (
    "does not match the expected",  # llama.cpp: "The model produced output that does not match the expected ... format"
    "failed to parse tool call",  # llama.cpp: "Failed to parse tool call arguments as JSON"
    "error parsing tool call",  # Ollama
    "failed to parse the model output",
)


def looks_like_format_error(text: str) -> bool:
    """A server's complaint that the model's output was not the tool call / JSON it had to parse."""
    lowered = text.lower()
    return any(marker in lowered for marker in _FORMAT_MARKERS)


def _message_for(kind: str, ctx: ErrorContext, detail: str, status: int | None) -> str:
    http = f" (HTTP {status})" if status else ""
    detail_text = f": {detail}" if detail else ""
    who = ctx.label
    if kind == "auth":
        if status == 403:
            return (
                f"{who} refused access{http}{detail_text}. The API key is valid but not allowed to use "
                f"model {ctx.model!r}; check the key's project/permissions or pick another model."
            )
        key_hint = f"set {ctx.key_env} or pass api_key=... to get_model()" if ctx.key_env else "pass api_key=..."
        return f"{who} rejected the API key{http}{detail_text}. Check the key: {key_hint}."
    if kind == "rate_limit":
        return (
            f"{who} rate limit or quota exceeded{http}{_retry_note(ctx)}{detail_text}. Wait a little and "
            f"run again, lower the request rate, or check the plan's quota."
        )
    if kind == "server":
        if status in (503, 529) or "overload" in detail.lower():
            return (
                f"{who} had a server error{http}{_retry_note(ctx)}{detail_text}. The service is overloaded "
                f"or down; try again later."
            )
        return (
            f"{who} had a server error{http}{_retry_note(ctx)}{detail_text}. Run the step again; if it keeps "
            f"failing, check the service's status (for a local server, its log)."
        )
    if kind == "timeout":
        return (
            f"The request to {who}{ctx.where} timed out{_retry_note(ctx)}{detail_text}. Try again, or raise "
            f"timeout= in get_model() for slow models."
        )
    if kind == "connection":
        return (
            f"Could not connect to {who}{ctx.where}{detail_text}. Check that the server is running and "
            f"reachable, the base_url is right, and the network/proxy settings allow it."
        )
    if kind == "stream_cut":
        inside = " in the middle of a tool call" if ctx.in_tool_call else " before the response was complete"
        return (
            f"The connection to {who} was cut{inside}{detail_text}. The partial response was discarded; "
            f"run the step again."
        )
    if kind == "context_length":
        return (
            f"The conversation is too long for {ctx.model!r}'s context window{http}{detail_text}. Shorten "
            f"the history (fewer or smaller screenshots, a shorter prompt) or use a model with a larger "
            f"context."
        )
    if kind == "malformed":
        if detail and looks_like_format_error(detail):
            return (
                f"{who}{ctx.where} could not parse the model's output as the expected tool call{http}"
                f"{_retry_note(ctx)}: "
                f"{detail.rstrip('.')}. The model wrote the wrong format (the server is not overloaded); use "
                f'the schema-constrained mode, get_model(..., output_mode="json_schema"), or a larger model.'
            )
        what = detail or "The provider returned a malformed response"
        return f"{what}. Run the step again; if it keeps happening, try another model."
    if status == 404:
        return (
            f"{who} does not know model {ctx.model!r} or the endpoint{ctx.where}{http}{detail_text}. "
            f"Check the model name and base_url."
        )
    return f"{who} rejected the request{http}{detail_text}. Check the model name, tools and options sent."


def classify_error(exc: BaseException, ctx: ErrorContext) -> tuple[str, str]:
    """Map any failure of a model call to ``(error_kind, message for the user)``.

    Works by duck typing (status codes, error bodies, class names) so one function serves every SDK and
    the transports under them, and never imports an optional SDK.
    """
    if isinstance(exc, ProviderError):
        return exc.kind, exc.message
    if ctx.retries is None:
        ctx = replace(ctx, retries=retries_taken(exc))
    if type(exc).__name__ == "MalformedToolCallError":
        return "malformed", _message_for("malformed", ctx, str(exc), None)

    names = _mro_names(exc)
    body = _error_body(exc)
    detail = _detail_from_body(body) or getattr(exc, "message", None) or str(exc)
    if not isinstance(detail, str):
        detail = str(detail)
    detail = _truncate(detail)
    err_type = _error_type_from_body(body)
    code = getattr(exc, "code", None)
    if isinstance(code, str):
        err_type = f"{err_type} {code}"
    status = _status_of(exc)
    haystack = f"{err_type} {detail}"

    # Timeouts first: SDK timeout classes subclass their connection-error classes.
    if (
        names & {"APITimeoutError", *_TRANSPORT_TIMEOUT_NAMES}
        or isinstance(exc, asyncio.TimeoutError | TimeoutError)
        or status in (408, 504)
    ):
        cause = exc.__cause__ or exc
        detail = "" if "timed out" in detail.lower() or not str(cause) else detail
        return "timeout", _message_for("timeout", ctx, detail, None)

    unparsable = "JSONDecodeError" in names or "Failed to parse response as JSON" in str(exc)  # google-genai's
    if ctx.in_stream and unparsable:
        # An event whose data is not JSON: the stream was damaged on the way, which is a cut stream, not a bug.
        return "stream_cut", _message_for("stream_cut", ctx, "an event in the stream was not valid JSON", None)

    transport_names = names | _mro_names(exc.__cause__) if exc.__cause__ else names
    is_transport = bool(transport_names & {*_TRANSPORT_CUT_NAMES, *_TRANSPORT_CONNECT_NAMES, "APIConnectionError"})
    if is_transport or (isinstance(exc, ConnectionError | OSError) and status is None):
        cause = exc.__cause__ if exc.__cause__ is not None else exc
        cause_text = _truncate(str(cause)) or type(cause).__name__
        if ctx.in_stream:
            return "stream_cut", _message_for("stream_cut", ctx, cause_text, None)
        return "connection", _message_for("connection", ctx, cause_text, None)

    if _looks_like_context_length(haystack) and (status in (None, 200, 400, 413, 422) or not status):
        return "context_length", _message_for("context_length", ctx, detail, status)

    if looks_like_format_error(detail):
        # A 500 (or an in-stream error) because the model's output did not parse: a model problem, not overload.
        return "malformed", _message_for("malformed", ctx, detail, None if status == 200 else status)

    lowered = err_type.lower()
    kind: str
    if status in (401, 403) or "authentication" in lowered or "permission" in lowered:
        kind = "auth"
    elif status == 429 or "rate_limit" in lowered or "resource_exhausted" in lowered or "quota" in lowered:
        kind = "rate_limit"
    elif (status is not None and status >= 500) or any(
        m in lowered for m in ("overloaded", "server_error", "api_error", "unavailable", "internal")
    ):
        kind = "server"
    elif (status is not None and 400 <= status < 500) or "invalid" in lowered:
        kind = "bad_request"
    elif _is_sdk_error(exc):
        kind = "server" if status in (None, 200) and err_type else "bad_request"
    else:
        # A bug or unexpected payload in our own code: still a clean error event, named as such.
        name = type(exc).__name__
        return "bad_request", f"Unexpected {name} while talking to {ctx.label}: {_truncate(str(exc)) or name}"
    if status == 200:
        status = None  # an error event inside a 200 stream; the HTTP code would mislead
    return kind, _message_for(kind, ctx, detail, status)


class _PayloadError(Exception):
    """An error reported inside a successful (HTTP 200) stream, shaped like an SDK error for classification."""

    __module__ = "openai"  # classify as a provider-side error, not as a bug in our code

    def __init__(self, payload: dict[str, Any]) -> None:
        message = payload.get("message")
        super().__init__(message if isinstance(message, str) else json.dumps(payload)[:600])
        self.body = {"error": payload}
        self.status_code = 200


def classify_payload(payload: dict[str, Any], ctx: ErrorContext) -> tuple[str, str]:
    """Classify an error object sent in-band (``{"code"/"type", "message"}``), e.g. a Responses ``error`` event."""
    return classify_error(_PayloadError(payload), ctx)

"""Every public error of the package, in one place: ``from notebook_agent.errors import ProviderError``.

Each error is defined in the module whose job it is (a missing browser where the browser is found, a provider
failure where SDK exceptions are translated); this module re-exports them all so a caller can find and catch them
without knowing the layout. Every one derives from :class:`NotebookAgentError`, and keeps the built-in base it had
(``ValueError``, ``RuntimeError``, ...) so existing ``except`` clauses still match.

They are grouped by what a caller does about them, as httpx groups its errors: :class:`InputError`, something
given cannot be used (fix it and call again); :class:`BusyError`, something else holds what is needed (wait or
stop it); :class:`BrowserError`, the browser could not do it; :class:`LLMError`, the model or its provider
failed (a configuration to fix, or a provider's refusal, limit or outage); :class:`ModelOutputError`, what a
model wrote cannot be used; :class:`AbortedError`, the run was stopped::

    NotebookAgentError
        * AbortedError
        * BrowserError
            * ActionError
                * ExtractError
            * BrowserNotFoundError (also RuntimeError)
            * BrowserTimeoutError (also TimeoutError)
            * DirectFailed
            * DirectRefused
            * FingerprintUnavailable
            * PaintUnread
            * ScreenshotWithheld
        * BusyError (also RuntimeError)
            * AgentBusyError
            * BrowserBusyError
            * TraceBusyError
                * TraceRefusedError
        * InputError (also ValueError)
            * BudgetError
            * MapInputError
            * NotScriptable
            * OptionError
            * OutputTypeError (also TypeError)
            * PriceError
            * RecipeError
                * CallMiss
            * RunFileError
            * SecretError
            * StartUrlError
            * ToolPlanError
            * TracingUnavailable
            * URLError
        * LLMError
            * DeadlineExceeded
            * ModelConfigError (also ValueError)
                * LocalServerError
                * ModelFileError
            * ProviderError
                * AuthenticationError
                * BadRequestError
                * ContextLengthError
                * MalformedResponseError
                * ProviderConnectionError
                * ProviderTimeoutError
                * RateLimitError
                * ServerError
                * StreamCutError
        * ModelOutputError (also ValueError)
            * MalformedToolCallError
            * OutputError
            * ToolArgumentError

Errors a model can fix (bad arguments, an unknown element index, a blocked call) never reach the caller: they
become tool results the model reads. What reaches the caller is misuse (an unknown model, a missing key or
browser), raised before any I/O, and a provider failure that ends the run with its stop reason. The tree above is
checked against the classes by ``tests/test_errors_module.py``. The names import on first use, like the package's
own, so ``import notebook_agent.errors`` stays fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .agent.batch.map_table import MapInputError
    from .agent.otel.settings import TracingUnavailable
    from .agent.prompt.agent_output import OutputError
    from .agent.recipes.calls.template import CallMiss
    from .agent.recipes.slots import RecipeError
    from .agent.runs.run_schema import RunFileError
    from .agent.safety.budget import BudgetError
    from .agent.safety.secrets import SecretError
    from .agent.step.run_browser import StartUrlError
    from .agent.step.typed_output import OutputTypeError
    from .browser.door.direct import DirectFailed, DirectRefused
    from .browser.errors import ActionError, BrowserError, BrowserTimeoutError
    from .browser.extract.tables import ExtractError
    from .browser.fingerprint.finder import FingerprintUnavailable
    from .browser.page.mask import ScreenshotWithheld
    from .browser.page.painted import PaintUnread
    from .browser.session.launch import BrowserNotFoundError
    from .browser.session.ownership import BrowserBusyError
    from .browser.session.tracing import TraceBusyError, TraceRefusedError
    from .browser.urls import URLError
    from .config.options import OptionError
    from .core.abort import AbortedError
    from .core.action_facts import NotScriptable
    from .core.agent import AgentBusyError
    from .core.errors import BusyError, InputError, ModelOutputError, NotebookAgentError
    from .core.planner import ToolPlanError
    from .core.tool_arguments import MalformedToolCallError
    from .core.tools import ToolArgumentError
    from .llm.deadlines import DeadlineExceeded
    from .llm.errors import (
        AuthenticationError,
        BadRequestError,
        ContextLengthError,
        LLMError,
        MalformedResponseError,
        ModelConfigError,
        ProviderConnectionError,
        ProviderError,
        ProviderTimeoutError,
        RateLimitError,
        ServerError,
        StreamCutError,
    )
    from .llm.local.llama_server import LocalServerError
    from .llm.local.model_files import ModelFileError
    from .llm.pricing import PriceError

__all__ = [
    "AbortedError",
    "ActionError",
    "AgentBusyError",
    "AuthenticationError",
    "BadRequestError",
    "BrowserBusyError",
    "BrowserError",
    "BrowserNotFoundError",
    "BrowserTimeoutError",
    "BudgetError",
    "BusyError",
    "CallMiss",
    "ContextLengthError",
    "DeadlineExceeded",
    "DirectFailed",
    "DirectRefused",
    "ExtractError",
    "FingerprintUnavailable",
    "InputError",
    "LLMError",
    "LocalServerError",
    "MalformedResponseError",
    "MalformedToolCallError",
    "MapInputError",
    "ModelConfigError",
    "ModelFileError",
    "ModelOutputError",
    "NotScriptable",
    "NotebookAgentError",
    "OptionError",
    "OutputError",
    "OutputTypeError",
    "PaintUnread",
    "PriceError",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderTimeoutError",
    "RateLimitError",
    "RecipeError",
    "RunFileError",
    "ScreenshotWithheld",
    "SecretError",
    "ServerError",
    "StartUrlError",
    "StreamCutError",
    "ToolArgumentError",
    "ToolPlanError",
    "TraceBusyError",
    "TraceRefusedError",
    "TracingUnavailable",
    "URLError",
]

_WHERE = {
    "AbortedError": "notebook_agent.core.abort",
    "ActionError": "notebook_agent.browser.errors",
    "AgentBusyError": "notebook_agent.core.agent",
    "AuthenticationError": "notebook_agent.llm.errors",
    "BadRequestError": "notebook_agent.llm.errors",
    "BrowserBusyError": "notebook_agent.browser.session.ownership",
    "BrowserError": "notebook_agent.browser.errors",
    "BrowserNotFoundError": "notebook_agent.browser.session.launch",
    "BrowserTimeoutError": "notebook_agent.browser.errors",
    "BudgetError": "notebook_agent.agent.safety.budget",
    "BusyError": "notebook_agent.core.errors",
    "CallMiss": "notebook_agent.agent.recipes.calls.template",
    "ContextLengthError": "notebook_agent.llm.errors",
    "DeadlineExceeded": "notebook_agent.llm.deadlines",
    "DirectFailed": "notebook_agent.browser.door.direct",
    "DirectRefused": "notebook_agent.browser.door.direct",
    "ExtractError": "notebook_agent.browser.extract.tables",
    "FingerprintUnavailable": "notebook_agent.browser.fingerprint.finder",
    "InputError": "notebook_agent.core.errors",
    "LLMError": "notebook_agent.llm.errors",
    "LocalServerError": "notebook_agent.llm.local.llama_server",
    "MalformedResponseError": "notebook_agent.llm.errors",
    "MalformedToolCallError": "notebook_agent.core.tool_arguments",
    "MapInputError": "notebook_agent.agent.batch.map_table",
    "ModelConfigError": "notebook_agent.llm.errors",
    "ModelFileError": "notebook_agent.llm.local.model_files",
    "ModelOutputError": "notebook_agent.core.errors",
    "NotScriptable": "notebook_agent.core.action_facts",
    "NotebookAgentError": "notebook_agent.core.errors",
    "OptionError": "notebook_agent.config.options",
    "OutputError": "notebook_agent.agent.prompt.agent_output",
    "OutputTypeError": "notebook_agent.agent.step.typed_output",
    "PaintUnread": "notebook_agent.browser.page.painted",
    "PriceError": "notebook_agent.llm.pricing",
    "ProviderConnectionError": "notebook_agent.llm.errors",
    "ProviderError": "notebook_agent.llm.errors",
    "ProviderTimeoutError": "notebook_agent.llm.errors",
    "RateLimitError": "notebook_agent.llm.errors",
    "RecipeError": "notebook_agent.agent.recipes.slots",
    "RunFileError": "notebook_agent.agent.runs.run_schema",
    "ScreenshotWithheld": "notebook_agent.browser.page.mask",
    "SecretError": "notebook_agent.agent.safety.secrets",
    "ServerError": "notebook_agent.llm.errors",
    "StartUrlError": "notebook_agent.agent.step.run_browser",
    "StreamCutError": "notebook_agent.llm.errors",
    "ToolArgumentError": "notebook_agent.core.tools",
    "ToolPlanError": "notebook_agent.core.planner",
    "TraceBusyError": "notebook_agent.browser.session.tracing",
    "TraceRefusedError": "notebook_agent.browser.session.tracing",
    "TracingUnavailable": "notebook_agent.agent.otel.settings",
    "URLError": "notebook_agent.browser.urls",
}


def __getattr__(name: str) -> Any:
    """An error class, imported from the module that defines it on first use."""
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'notebook_agent.errors' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted(__all__)

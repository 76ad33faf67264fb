"""notebook_agent: an LLM browser agent that runs inside Jupyter.

In a notebook: ``%load_ext notebook_agent`` and a ``%%agent`` cell. From Python: ``PageAgent`` with a
``BrowserSession``. From a terminal: ``notebook-agent``. Heavy imports (Playwright, SDKs, widgets) happen only
when the part that needs them is used, so importing the package stays fast.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

__all__ = [
    "Agent",
    "BrowserSession",
    "MapResult",
    "NotebookAgentError",
    "PageAgent",
    "PageAgentResult",
    "ProviderOptions",
    "RunOptions",
    "ScriptedModel",
    "Tool",
    "ToolResult",
    "__version__",
    "get_model",
    "load_ipython_extension",
    "tool",
    "unload_ipython_extension",
]

_LAZY = {
    "Agent": "notebook_agent.core.agent",
    "NotebookAgentError": "notebook_agent.core.errors",
    "Tool": "notebook_agent.core.tools",
    "ToolResult": "notebook_agent.core.tools",
    "tool": "notebook_agent.core.tools",
    "ScriptedModel": "notebook_agent.llm.scripted",
    "get_model": "notebook_agent.llm",
    "ProviderOptions": "notebook_agent.llm.provider_options",
    "RunOptions": "notebook_agent.agent.run_options",
    "BrowserSession": "notebook_agent.browser.session.browser_session",
    "PageAgent": "notebook_agent.agent.page_agent",
    "PageAgentResult": "notebook_agent.agent.runs.result",
    "MapResult": "notebook_agent.agent.batch.map_table",
}


def __getattr__(name: str) -> Any:
    """The public API, imported on first use (Playwright and the SDKs load only when needed)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'notebook_agent' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


def load_ipython_extension(ipython: Any) -> None:
    """Called by ``%load_ext notebook_agent``: registers the ``%%agent`` magics."""
    from .notebook.magics import load

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """Called by ``%unload_ext notebook_agent``: stops running runs."""
    from .notebook.magics import unload

    unload(ipython)

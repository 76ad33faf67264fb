"""notebook_agent: an LLM browser agent that runs inside Jupyter.

In a notebook: ``%load_ext notebook_agent`` and a ``%%agent`` cell. From Python: ``PageAgent`` with a
``BrowserSession``. From a terminal: ``notebook-agent``. Heavy imports (Playwright, SDKs, widgets) happen only
when the part that needs them is used, so importing the package stays fast; ``__all__`` lists the public names,
imported on first use.

Its layers, each importing only the ones beneath it (tests/test_layers.py): ``core`` (messages, tools, the agent
loop), ``llm`` (the model providers), ``browser`` (Playwright, and only there), ``agent`` (the page agent),
``demo`` (the demo shop and its offline model), ``config`` (what a person types, checked one way), and the fronts:
``notebook`` (the magics and views) and ``cli`` (the terminal). Beside them: ``errors`` (every public error, in
one tree) and ``testing`` (the inner state tests may reach).
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

__all__ = [
    "Agent",
    "BrowserSession",
    "Ledger",
    "MapFinished",
    "MapInputError",
    "MapInterrupted",
    "MapProgress",
    "MapResult",
    "NotebookAgentError",
    "PageAgent",
    "PageAgentResult",
    "ProviderOptions",
    "Recipe",
    "RecipeError",
    "RecipeMapResult",
    "RowEvent",
    "RunOptions",
    "ScriptedModel",
    "Tool",
    "ToolCallContext",
    "ToolContext",
    "ToolResult",
    "__version__",
    "compare_runs",
    "get_model",
    "list_runs",
    "load_ipython_extension",
    "load_run",
    "set_prices",
    "tool",
    "unload_ipython_extension",
]

#: Where each public name lives: ``notebook_agent.X`` imports it from there on first use.
_LAZY = {
    "Agent": "notebook_agent.core.agent",
    "NotebookAgentError": "notebook_agent.core.errors",
    "Tool": "notebook_agent.core.tools",
    "ToolResult": "notebook_agent.core.tools",
    "ToolCallContext": "notebook_agent.core.tools",
    "ToolContext": "notebook_agent.agent.step.tool_context",
    "tool": "notebook_agent.core.tools",
    "ScriptedModel": "notebook_agent.llm.scripted",
    "get_model": "notebook_agent.llm",
    "set_prices": "notebook_agent.llm.pricing",
    "Ledger": "notebook_agent.llm.ledger",
    "ProviderOptions": "notebook_agent.llm.provider_options",
    "RunOptions": "notebook_agent.agent.run_options",
    "BrowserSession": "notebook_agent.browser.session.browser_session",
    "PageAgent": "notebook_agent.agent.page_agent",
    "PageAgentResult": "notebook_agent.agent.runs.result",
    "MapResult": "notebook_agent.agent.batch.map_table",
    "MapInputError": "notebook_agent.agent.batch.map_table",
    "MapInterrupted": "notebook_agent.agent.batch.map_runner",
    "MapProgress": "notebook_agent.agent.batch.map_runner",
    "MapFinished": "notebook_agent.agent.batch.map_runner",
    "RowEvent": "notebook_agent.agent.batch.map_runner",
    "Recipe": "notebook_agent.agent.recipes.recipe",
    "RecipeError": "notebook_agent.agent.recipes.slots",
    "RecipeMapResult": "notebook_agent.agent.recipes.recipe_map",
    "load_run": "notebook_agent.agent.runs.run_file",
    "list_runs": "notebook_agent.agent.runs.run_file",
    "compare_runs": "notebook_agent.agent.runs.run_file",
}


def __getattr__(name: str) -> Any:
    """The public API, imported on first use (Playwright and the SDKs load only when needed)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'notebook_agent' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    """The public names too, though they are imported on first use: tab completion offers what ``dir`` lists."""
    return sorted(set(globals()) | set(__all__))


def load_ipython_extension(ipython: Any) -> None:
    """Called by ``%load_ext notebook_agent``: registers the ``%%agent`` magics."""
    from .notebook.magics import load

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """Called by ``%unload_ext notebook_agent``: stops running runs."""
    from .notebook.magics import unload

    unload(ipython)

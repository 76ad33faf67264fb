"""notebook_agent: an LLM browser agent that runs inside Jupyter.

In a notebook: ``%load_ext notebook_agent`` and a ``%%agent`` cell. From Python: ``PageAgent`` with a
``BrowserSession``. From a terminal: ``notebook-agent``. Heavy imports (Playwright, SDKs, widgets) happen only
when the part that needs them is used, so importing the package stays fast.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

__all__ = ["__version__", "load_ipython_extension", "unload_ipython_extension"]


def load_ipython_extension(ipython: Any) -> None:
    """Called by ``%load_ext notebook_agent``: registers the ``%%agent`` magics."""
    from .notebook.magics import load

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """Called by ``%unload_ext notebook_agent``: stops running runs."""
    from .notebook.magics import unload

    unload(ipython)

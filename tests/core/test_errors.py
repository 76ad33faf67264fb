"""Every public exception class of the package derives from NotebookAgentError, so the notebook, the CLI and the
evaluation can catch the package's own errors in one place. Found by walking the package, so a new exception
class that forgets the base fails here."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import notebook_agent
from notebook_agent.core.errors import NotebookAgentError

# Left out on purpose, each for a reason (private helper exceptions, ``_Name``, are left out too: they never
# leave the module that raises them):
NOT_PACKAGE_ERRORS = {
    # A cancellation (asyncio.CancelledError) on purpose: asyncio code must treat a notebook Interrupt as one.
    "RunInterrupted",
    # The same for a map: a cancellation that carries the rows that finished.
    "MapInterrupted",
    # A warning category, never raised: a tracing problem said once while the run goes on (warnings.warn).
    "TracingWarning",
}


def package_exceptions() -> dict[str, type[BaseException]]:
    """Every public exception class defined in a module of the package, by qualified name."""
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(notebook_agent.__path__, "notebook_agent."):
        if info.name.rsplit(".", 1)[-1] == "__main__":  # importing it runs the CLI
            continue
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if (
                inspect.isclass(obj)
                and issubclass(obj, BaseException)
                and obj.__module__ == module.__name__
                and not name.startswith("_")
                and name not in NOT_PACKAGE_ERRORS
            ):
                found[f"{module.__name__}.{name}"] = obj
    return found


def test_every_package_error_derives_from_notebook_agent_error() -> None:
    errors = package_exceptions()
    assert "notebook_agent.llm.errors.ProviderError" in errors  # the walk sees the package's modules
    assert [name for name, cls in sorted(errors.items()) if not issubclass(cls, NotebookAgentError)] == []


def test_the_base_is_exported_and_keeps_the_builtin_bases() -> None:
    assert notebook_agent.NotebookAgentError is NotebookAgentError
    from notebook_agent.browser.urls import URLError
    from notebook_agent.llm.errors import ModelConfigError

    assert issubclass(URLError, ValueError) and issubclass(ModelConfigError, ValueError)

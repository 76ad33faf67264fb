"""A griffe extension for the docs build: the top-level names of ``notebook_agent`` as the re-exports they are.

``notebook_agent/__init__.py`` imports its public names on first use (``__getattr__`` reading the ``_LAZY``
table), so a static reading of the file sees none of them. This extension reads that table and adds each name
to the package as an alias of its real home, so the API page of ``notebook_agent`` follows the table wherever
a module moves, and a name listed in ``__all__`` that resolves nowhere fails ``mkdocs build --strict``.
"""

from __future__ import annotations

import importlib
from typing import Any

from griffe import Alias, AliasResolutionError, Extension, Module, get_logger

logger = get_logger("docs_lazy_exports")


class LazyExports(Extension):
    """Adds ``notebook_agent._LAZY``'s names to the ``notebook_agent`` package as aliases."""

    def on_package(self, *, pkg: Module, **kwargs: Any) -> None:
        if pkg.name != "notebook_agent":
            return
        table: dict[str, str] = importlib.import_module("notebook_agent")._LAZY
        for name, module in table.items():
            if name in pkg.members:
                continue
            alias = Alias(name, f"{module}.{name}", parent=pkg)
            pkg.set_member(name, alias)
            try:
                alias.resolve_target()
            except AliasResolutionError:
                logger.warning(
                    "notebook_agent._LAZY maps %r to %s, which does not define it: point the table at the "
                    "module that does",
                    name,
                    module,
                )

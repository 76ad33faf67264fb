"""A griffe extension for the docs build: the package's docstrings as the API pages should show them.

``notebook_agent/__init__.py`` imports its public names on first use (``__getattr__`` reading the ``_LAZY``
table), so a static reading of the file sees none of them. This extension reads that table and adds each name
to the package as an alias of its real home, so the API page of ``notebook_agent`` follows the table wherever
a module moves, and a name the table sends to a module that does not define it fails ``mkdocs build --strict``.

The docstrings name other objects with Sphinx roles (``:class:`Tool```), which Markdown would print as they
are; each becomes a code span.
"""

from __future__ import annotations

import importlib
import re
from typing import Any

from griffe import Alias, AliasResolutionError, Extension, Module, Object, get_logger

logger = get_logger("docs_lazy_exports")

_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|attr|mod|data|exc|obj):`~?([^`]+)`")


def _plain_roles(obj: Object) -> None:
    """``:class:`Name``` to ```Name``` in ``obj``'s docstring and in those of every object it defines."""
    if obj.docstring is not None:
        obj.docstring.value = _ROLE.sub(r"`\1`", obj.docstring.value)
    for member in obj.members.values():
        if not member.is_alias:
            _plain_roles(member)  # type: ignore[arg-type]


class LazyExports(Extension):
    """Adds ``notebook_agent._LAZY``'s names to the package as aliases; Sphinx roles become code spans."""

    def on_package(self, *, pkg: Module, **kwargs: Any) -> None:
        if pkg.name != "notebook_agent":
            return
        _plain_roles(pkg)
        table: dict[str, str] = getattr(importlib.import_module("notebook_agent"), "_LAZY", {})
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

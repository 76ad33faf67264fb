"""A griffe extension for the docs build: the package's docstrings as the API pages should show them.

``notebook_agent/__init__.py`` imports its public names on first use (``__getattr__`` reading the ``_LAZY``
table), so a static reading of the file sees none of them. This extension reads that table and adds each name
to the package as an alias of its real home, so the API page of ``notebook_agent`` follows the table wherever
a module moves, and a name the table sends to a module that does not define it fails ``mkdocs build --strict``.

The docstrings name other objects with Sphinx roles (``:class:`Tool```), which Markdown would print as they
are. Each is resolved from the object whose docstring holds it (``.x`` and ``~.x.Y`` relative to its package, a
bare name in its class, module or imports, ``notebook_agent...`` absolute), the way tests/test_docstring_references.py
resolves them, and becomes a link to the object's API entry where a page documents it (an optional autorefs
reference: code where none does). A reference that names nothing is a warning, so ``mkdocs build --strict`` fails on
a docstring that did not move with the code.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from typing import Any

from griffe import Alias, AliasResolutionError, Extension, Module, Object, get_logger

logger = get_logger("docs_lazy_exports")

_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|attr|mod|data|exc|obj):`(~?)([^`]+)`")


def _member(root: Object, path: list[str]) -> Object | None:
    """The object at ``path`` under ``root``, following aliases (imports) inside the package; None if none."""
    obj: Object = root
    for part in path:
        members = getattr(obj, "all_members", None) if obj.is_class else None  # inherited ones too
        members = members if members is not None else getattr(obj, "members", {})
        if part not in members:
            return None
        found = members[part]
        if found.is_alias:
            try:
                found = found.final_target  # type: ignore[union-attr]
            except (AliasResolutionError, Exception):
                return found  # an import from outside the package (a library): it names something
        obj = found
    return obj


def _resolve(pkg: Module, obj: Object, target: str) -> str | None:
    """The full path ``target`` names, written in the docstring of ``obj``; None when it names nothing."""
    if "<" in target:  # ``text <target>``
        target = target.split("<", 1)[1].rstrip(">").strip().lstrip("~")
    module = obj if obj.is_module else obj.module
    cls = obj if obj.is_class else (obj.parent if obj.parent is not None and obj.parent.is_class else None)
    if target.startswith("."):
        level = len(target) - len(target.lstrip("."))
        base = module.path.split(".") if module.is_init_module else module.path.split(".")[:-1]
        base = base[: len(base) - (level - 1)] if level > 1 else base
        candidates = [".".join([*base, target.lstrip(".")])]
    elif target.startswith("notebook_agent"):
        candidates = [target]
    else:
        candidates = [f"{cls.path}.{target}"] if cls is not None else []
        candidates += [f"{module.path}.{target}"]
    for full in candidates:
        parts = full.split(".")
        if parts[0] == pkg.name and _member(pkg, parts[1:]) is not None:
            return full
    head = target.split(".")[0]
    if not target.startswith((".", pkg.name)) and importlib.util.find_spec(head) is not None:
        return target  # another library's (``importlib.resources``): it names something, not ours to link
    return None


def _link_roles(pkg: Module, obj: Object) -> None:
    """Every role in ``obj``'s docstring (and those of the objects it defines) as a link, or a warning."""
    if obj.docstring is not None:

        def link(match: re.Match[str]) -> str:
            short, target = match.group(1), match.group(2).split("(")[0].strip()
            full = _resolve(pkg, obj, target)
            if "<" in target:  # ``text <target>``: the text is what shows
                shown = target.split("<", 1)[0].strip()
            else:
                shown = (target.lstrip(".").rsplit(".", 1)[-1] if short else target.lstrip(".")) or target
            if full is None:
                logger.warning("%s: the docstring names %r, which names nothing: update it", obj.path, target)
                return f"`{shown}`"
            return f'<autoref identifier="{full}" optional><code>{shown}</code></autoref>'

        obj.docstring.value = _ROLE.sub(link, obj.docstring.value)
    for member in obj.members.values():
        if not member.is_alias:
            _link_roles(pkg, member)  # type: ignore[arg-type]


class LazyExports(Extension):
    """Adds ``notebook_agent._LAZY``'s names to the package as aliases; Sphinx roles become links."""

    def on_package(self, *, pkg: Module, **kwargs: Any) -> None:
        if pkg.name != "notebook_agent":
            return
        _link_roles(pkg, pkg)
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

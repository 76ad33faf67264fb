"""Docstrings move with the code: every cross-reference in a docstring of the package names something that exists.

A docstring that says "see :class:`~.guard.NavigationGate`" or "(browser/guard.py)" is a map a newcomer follows;
after a module is renamed or a class moves, a stale one sends them nowhere. Two kinds are checked, in every
module's, class's and function's docstring (and attribute docstrings, the string after an assignment):

- Sphinx roles (``:mod:``, ``:class:``, ``:func:``, ``:meth:``, ``:attr:``, ``:data:``, ``:exc:``): resolved as
  the docs site resolves them, from the module they are written in (``.x`` and ``~.x.Y`` relative to its package,
  a bare ``Name`` in the module's namespace or its class's, ``notebook_agent...`` absolute);
- a file named in prose (``browser/page/reader.py``, ``reader.py``): a path must exist from the package root or
  from the module's own folder; a bare file name must exist somewhere in the package.

The docs site renders the roles as links (scripts/docs_lazy_exports.py), so a stale one also fails the strict build.
"""

from __future__ import annotations

import ast
import importlib
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

PACKAGE = Path(__file__).resolve().parents[1] / "notebook_agent"

ROLE = re.compile(r":(?:mod|class|func|meth|attr|data|exc|obj):`([^`]+)`")
FILE = re.compile(r"(?<![\w/.-])((?:[a-z_][a-z0-9_]*/)*[a-z_][a-z0-9_]*\.(?:py|js|md|jinja|html|css))\b")
#: File names in prose that are not the package's own (what a user writes, a third party's files).
NOT_OURS = {"script.py", "replay.py", "setup.py", "conftest.py", "foo.py", "index.html", "page.md", "main.py"}


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def docstrings(path: Path) -> Iterator[tuple[str, str | None]]:
    """Each docstring of the module at ``path``, with the class it is written in (None at module level)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))

    def walk(node: ast.AST, cls: str | None) -> Iterator[tuple[str, str | None]]:
        body = getattr(node, "body", [])
        doc = (
            ast.get_docstring(node, clean=False)
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            else None
        )
        if doc:
            yield doc, cls
        for i, child in enumerate(body):
            if isinstance(child, ast.ClassDef):
                yield from walk(child, child.name)
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                yield from walk(child, cls)
            elif (
                isinstance(child, ast.Expr)
                and isinstance(child.value, ast.Constant)
                and isinstance(child.value.value, str)
                and i > 0
                and isinstance(body[i - 1], ast.Assign | ast.AnnAssign)
            ):
                yield child.value.value, cls  # an attribute's docstring

    yield from walk(tree, None)


def resolve(target: str, module: str, cls: str | None) -> bool:
    """Whether the role target ``target``, written in ``module`` (inside class ``cls``), names something."""
    target = target.strip().lstrip("~").split("(")[0]
    if "<" in target:  # `text <target>`
        target = target.split("<", 1)[1].rstrip(">").strip().lstrip("~")
    if target.startswith("."):
        level = len(target) - len(target.lstrip("."))
        base = module.split(".")
        is_package = (PACKAGE.parent / module.replace(".", "/") / "__init__.py").exists()
        anchor = base if is_package else base[:-1]
        anchor = anchor[: len(anchor) - (level - 1)] if level > 1 else anchor
        candidates = [".".join([*anchor, target.lstrip(".")])]
    elif target.startswith("notebook_agent"):
        candidates = [target]
    else:
        candidates = [f"{module}.{cls}.{target}"] if cls else []
        candidates += [f"{module}.{target}", target]
        head, _, rest = target.partition(".")
        imported = imported_names(module).get(head)  # imported for type checking only, say
        if imported is not None:
            candidates.append(imported + (f".{rest}" if rest else ""))
    return any(_exists(c) for c in candidates)


def imported_names(module: str) -> dict[str, str]:
    """``{name: dotted.path}`` for every ``from ... import name`` in ``module`` (type-checking ones included)."""
    path = PACKAGE.parent / (module.replace(".", "/") + ".py")
    if not path.exists():
        path = PACKAGE.parent / module.replace(".", "/") / "__init__.py"
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    out = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")
            source = (
                ".".join(base[: len(base) - node.level + 1] + ([node.module] if node.module else []))
                if node.level
                else node.module or ""
            )
            for alias in node.names:
                out[alias.asname or alias.name] = f"{source}.{alias.name}"
    return out


def _exists(dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        name = ".".join(parts[:cut])
        try:
            obj: object = importlib.import_module(name)
        except ImportError:
            continue
        except Exception:
            return False
        for attr in parts[cut:]:
            if attr in getattr(obj, "__annotations__", {}) or (
                isinstance(obj, type) and any(attr in getattr(b, "__annotations__", {}) for b in obj.__mro__)
            ):
                obj = object()  # an annotated attribute (a dataclass field, a protocol member)
                continue
            fields = getattr(obj, "__dataclass_fields__", {})
            if attr in fields:
                obj = object()
                continue
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def file_exists(name: str, path: Path) -> bool:
    if name in NOT_OURS:
        return True
    if "/" in name:
        return (
            (PACKAGE / name).exists()
            or (path.parent / name).exists()
            or (PACKAGE.parent / name).exists()
            or any(p.as_posix().endswith("/" + name) for p in PACKAGE.rglob(name.rsplit("/", 1)[1]))
        )
    return any(PACKAGE.rglob(name))


def problems() -> list[str]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = module_name(path)
        for doc, cls in docstrings(path):
            for target in ROLE.findall(doc):
                if not resolve(target, module, cls):
                    found.append(f"{module}: {target!r} names nothing")
            for name in FILE.findall(doc):
                if not file_exists(name, path):
                    found.append(f"{module}: the file {name!r} does not exist")
    return sorted(set(found))


def test_every_docstring_reference_resolves() -> None:
    assert problems() == []


def test_the_check_sees_references() -> None:
    """It reads roles and files, and tells a real name from a stale one."""
    assert resolve(".run_state.RunState", "notebook_agent.agent.step.run", None)
    assert resolve("~.pilot.PilotModel", "notebook_agent.agent.step.replay_pilot", None)
    assert resolve("notebook_agent.core.tools.Tool", "notebook_agent.agent.step.run", None)
    assert resolve("RunState.put", "notebook_agent.agent.step.run_state", None)
    assert not resolve(".guard.NavigationGate", "notebook_agent.browser.session.pages", None)
    assert not resolve("~.lease.RunBrowser", "notebook_agent.agent.step.run", None)
    assert file_exists("browser/page/reader.py", PACKAGE / "agent" / "step" / "run.py")
    assert not file_exists("browser/guard.py", PACKAGE / "agent" / "step" / "run.py")
    assert not file_exists("hung.py", PACKAGE / "browser" / "session" / "pages.py")


@given(st.sampled_from(["mod", "class", "func"]), st.text(alphabet="abcdefghij_", min_size=3, max_size=12))
def test_a_made_up_name_never_resolves(role: str, name: str) -> None:
    doc = f"see :{role}:`.{name}zz_gone`"
    assert [t for t in ROLE.findall(doc) if not resolve(t, "notebook_agent.agent.step.run", None)] == [
        f".{name}zz_gone"
    ]


@pytest.mark.parametrize("text", ["(browser/guard.py)", "see hung.py and state.py", "agent/macro.py"])
def test_a_stale_file_in_prose_is_found(text: str) -> None:
    names = FILE.findall(text)
    assert names and not all(file_exists(n, PACKAGE / "agent" / "x.py") for n in names)


def test_the_docs_site_links_references_and_warns_on_a_stale_one(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The docs build's griffe extension (scripts/docs_lazy_exports.py) turns a role that names something into a
    link, and one that names nothing into a warning, which ``mkdocs build --strict`` counts as a failure."""
    import sys

    import griffe

    sys.path.insert(0, str(PACKAGE.parent / "scripts"))
    try:
        from docs_lazy_exports import _link_roles
    finally:
        sys.path.pop(0)
    root = tmp_path / "stale_docs_pkg"
    (root / "part").mkdir(parents=True)
    (root / "__init__.py").write_text('"""The package."""\n')
    (root / "part" / "__init__.py").write_text('"""See :mod:`.here` and :class:`~.here.Thing` and :mod:`.gone`."""\n')
    thing = 'class Thing:\n    """See :meth:`Thing.go`."""\n\n    def go(self) -> None:\n        """Go."""\n'
    (root / "part" / "here.py").write_text('"""Here."""\n\n\n' + thing)
    pkg = griffe.load("stale_docs_pkg", search_paths=[str(tmp_path)], try_relative_path=False)
    with caplog.at_level("WARNING"):
        _link_roles(pkg, pkg)
    seen = [r.getMessage() for r in caplog.records]
    doc = pkg["part"].docstring.value
    assert '<autoref identifier="stale_docs_pkg.part.here" optional>' in doc
    assert '<autoref identifier="stale_docs_pkg.part.here.Thing" optional><code>Thing</code>' in doc
    assert "`gone`" in doc and not any(".here" in m for m in seen)
    assert [m for m in seen if "'.gone'" in m and "names nothing" in m]


def test_every_package_map_names_its_parts() -> None:
    """Each package's docstring is a map of it: it names every module and sub-package it holds (as ``name`` or
    ``name.py``), so a part added, moved or renamed without the map fails here."""
    missing = []
    for init in sorted(PACKAGE.rglob("__init__.py")):
        folder = init.parent
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        parts = [p.stem for p in folder.glob("*.py") if p.name not in ("__init__.py", "__main__.py")]
        parts += [p.name for p in folder.iterdir() if (p / "__init__.py").exists()]
        for part in parts:
            if f"``{part}``" not in doc and f"{part}.py" not in doc:
                missing.append(f"{folder.relative_to(PACKAGE.parent)}: {part}")
    assert missing == []

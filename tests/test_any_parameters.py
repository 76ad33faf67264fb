"""The package's parameters typed ``Any`` do not grow: each one is a place mypy checks nothing, so a new one needs
a reason the ones kept have (a tool's validated arguments, typed by each tool; a provider SDK's event; an
IPython or Playwright object where the layer may not name its type). A value only passed along or checked with
``isinstance`` is an ``object``, JSON is ``notebook_agent.core.JSONValue``, what a function reads of a thing is a
``Protocol``, a type that flows through is a ``TypeVar``.

Checked on the source: every parameter (positional, positional-only, keyword-only; not ``*args``/``**kwargs``)
whose annotation is exactly ``Any``. The count may not pass :data:`CEILING`; a failure names the functions that
are not in ``any_parameters.txt`` (the ones recorded when the ceiling was set), which are the ones added.
Lower the ceiling when a change removes some; rewrite the record with :func:`write_record`.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "notebook_agent"
RECORD = Path(__file__).with_name("any_parameters.txt")

CEILING = 89
"""The most parameters typed ``Any`` the package may have."""


def any_parameters(source: str) -> list[tuple[int, str]]:
    """``(line, "qualname(param)")`` for each parameter of ``source``'s functions annotated exactly ``Any``."""
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST, scope: tuple[str, ...]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = ".".join((*scope, child.name))
                a = child.args
                for arg in (*a.posonlyargs, *a.args, *a.kwonlyargs):
                    if arg.annotation is not None and ast.unparse(arg.annotation) == "Any":
                        found.append((child.lineno, f"{name}({arg.arg})"))
                visit(child, (*scope, child.name))
            elif isinstance(child, ast.ClassDef):
                visit(child, (*scope, child.name))
            else:
                visit(child, scope)

    visit(ast.parse(source), ())
    return found


def package_any_parameters() -> list[tuple[str, int, str]]:
    """``(path, line, "qualname(param)")`` for the whole package, in file order."""
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        out += [(rel, line, name) for line, name in any_parameters(path.read_text(encoding="utf-8"))]
    return out


def write_record() -> None:
    """Record the functions with an ``Any`` parameter now (by name, so moving one to another module is no
    change), to set :data:`CEILING` from."""
    names = sorted(name for _, _, name in package_any_parameters())
    RECORD.write_text("".join(f"{n}\n" for n in names), encoding="utf-8")


def test_the_package_has_no_more_any_parameters_than_the_ceiling() -> None:
    found = package_any_parameters()
    recorded = set(RECORD.read_text(encoding="utf-8").split())
    added = [f"{path}:{line} {name}" for path, line, name in found if name not in recorded]
    assert len(found) <= CEILING, (
        f"{len(found)} parameters are typed Any, more than {CEILING}; give these a real type (object, JSONValue, "
        f"a Protocol, a TypeVar): " + "; ".join(added or [f"{p}:{n} {q}" for p, n, q in found])
    )


def test_the_count_sees_every_kind_of_parameter_and_only_any() -> None:
    source = """
from typing import Any
import typing

def f(a: Any, /, b: Any, *args: Any, c: Any = None, **kw: Any) -> Any: ...
def g(a: object, b: typing.Any, c: list[Any], d: "Any") -> None: ...

class C:
    def m(self, x: Any) -> None:
        def inner(y: Any) -> None: ...

async def h(z: Any) -> None: ...
"""
    names = [name for _, name in any_parameters(source)]
    assert names == ["f(a)", "f(b)", "f(c)", "C.m(x)", "C.m.inner(y)", "h(z)"]

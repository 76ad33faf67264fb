"""The tests reach the package's inner state only through ``notebook_agent.testing`` (or a public name).

A test that reads ``browser._prefetch._pending`` breaks on every rename inside the package and hides what it
needs; the need gets a named function in :mod:`notebook_agent.testing` instead. Checked on the source of every
test file: a private name of the package (one the package defines, not a dunder or an IPython ``_repr_*_``
protocol name) read, set or called on anything, imported from the package, monkeypatched by its name, or named
in a dotted ``"notebook_agent..."`` string fails here, unless the test file defines that name itself (its own
helpers). So the count of reaches stays at zero.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "notebook_agent"
TESTS = ROOT / "tests"

#: Calls whose second argument names an attribute (``monkeypatch.setattr(module, "_x", ...)``, ``getattr``).
BY_NAME = {"getattr", "setattr", "delattr", "hasattr"}


def is_private(name: str) -> bool:
    """``_x``: private. ``__x__`` (dunders) and ``_x_`` (protocols such as IPython's ``_repr_html_``) are not,
    and neither is a lone ``_``."""
    if len(name) < 2 or not name.startswith("_"):
        return False
    return not name.endswith("_")


@cache
def package_private_names() -> frozenset[str]:
    """Every private name the package defines or uses as an attribute: functions, classes, module globals,
    attributes, and private module names."""
    names: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        if is_private(path.stem):
            names.add(path.stem)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.Attribute):
                names.add(node.attr)
    return frozenset(n for n in names if is_private(n))


def own_names(tree: ast.AST) -> set[str]:
    """What a test file defines itself (functions, classes, names, ``self.x`` of its own classes)."""
    own: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            own.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            own.add(node.id)
        elif isinstance(node, ast.arg):
            own.add(node.arg)
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Store)
            and isinstance(node.value, ast.Name)
            and node.value.id in ("self", "cls")
        ):
            own.add(node.attr)
    return own


def reaches(source: str, private: frozenset[str]) -> list[str]:
    """Each reach into a private name of ``private`` in one test file's ``source``, as ``line: code``."""
    tree = ast.parse(source)
    own = own_names(tree)

    def reached(name: str) -> bool:
        return is_private(name) and name in private and name not in own

    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and reached(node.attr):
            found.append((node.lineno, ast.unparse(node)))
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("notebook_agent"):
            parts = (node.module or "").split(".")
            if any(is_private(p) for p in parts):
                found.append((node.lineno, f"from {node.module} import ..."))
            found.extend((node.lineno, f"import {a.name}") for a in node.names if is_private(a.name))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("notebook_agent") and any(is_private(p) for p in alias.name.split(".")):
                    found.append((node.lineno, f"import {alias.name}"))
        elif isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if called in BY_NAME and len(node.args) >= 2:
                arg = node.args[1]
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and reached(arg.value):
                    found.append((node.lineno, ast.unparse(node)))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
            if text.startswith("notebook_agent.") and " " not in text and any(is_private(p) for p in text.split(".")):
                found.append((node.lineno, repr(text)))
    return [f"{line}: {code}" for line, code in sorted(set(found))]


def test_no_test_reaches_into_private_state_of_the_package() -> None:
    private = package_private_names()
    bad = []
    for path in sorted(TESTS.rglob("*.py")):
        if path == Path(__file__).resolve():
            continue
        for reach in reaches(path.read_text(encoding="utf-8"), private):
            bad.append(f"{path.relative_to(ROOT)}:{reach}")
    assert bad == [], (
        "tests reach into private state of notebook_agent; add what the test needs to notebook_agent.testing "
        "(or a public read-only property) and use that:\n" + "\n".join(bad)
    )


def test_the_seam_itself_is_found_private_names_of_the_package() -> None:
    """The scan is not vacuous: the names the seam reads are among the package's private names."""
    private = package_private_names()
    assert {"_prefetch", "_pending", "_reader", "_frame_tokens", "_hop", "_moved", "_encoding"} <= private


# Each way of reaching, with what the scan must report for it (and a line that must pass beside it).
REACHES = {
    "browser._prefetch._pending": True,
    "browser._reader.last_time = 1": True,
    "from notebook_agent.browser.door.redirects import _hop": True,
    "from notebook_agent.llm import _nothing_public": True,
    "import notebook_agent.llm._private_module": True,
    "monkeypatch.setattr(tokens, '_encoding', None)": True,
    "getattr(model, '_client')": True,
    "monkeypatch.setattr('notebook_agent.llm.tokens._encoding', None)": True,
    "pilot._moved({})": True,
    "raised.value._render_traceback_()": False,  # IPython's protocol
    "report._repr_html_()": False,
    "obj.__class__.__name__": False,
    "re.sub('a', '_', text)": False,
    "browser.page.url": False,
    "def _helper(): pass\n_helper()": False,
    "class Fake:\n    def __init__(self):\n        self._pending = 1\nFake()._pending": False,  # its own
}


def test_each_kind_of_reach_is_found_and_the_rest_is_not() -> None:
    private = package_private_names() | {"_nothing_public", "_private_module", "_helper"}
    for source, is_reach in REACHES.items():
        assert bool(reaches(source, private)) is is_reach, source


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(sorted(package_private_names())),
    st.sampled_from(["{obj}.{name}", "{obj}.{name} = 1", "{obj}.{name}()", "getattr({obj}, {name!r})"]),
    st.sampled_from(["browser", "agent.model", "result.steps[0]", "x"]),
)
def test_any_private_name_of_the_package_on_any_object_is_a_reach(name: str, form: str, obj: str) -> None:
    """Whatever the private name (every one the package has) and however it is reached, the scan reports it."""
    source = form.format(obj=obj, name=name)
    assert reaches(source, package_private_names()), source

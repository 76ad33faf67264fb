"""Every name the docs show can be imported the way they show it.

A newcomer reads ``Recipe.load(path)`` in a guide and types ``from notebook_agent import Recipe``: that has to
work, or the page has to say where the name lives. Checked over README.md, docs/**/*.md and notebooks/*.ipynb
(prose, inline code, code blocks and cells):

- ``from notebook_agent... import X`` and ``import notebook_agent...`` import, and ``notebook_agent.a.b.X``
  resolves;
- a name the package defines (a class or function at a module's top level), shown as ``X(...)`` or
  ``X.attr`` in inline code or in a code block's comment, is in ``notebook_agent.__all__``, or the same page
  names a module that has it (an import, ``notebook_agent.a.b``, or its file, ``agent/batch/map_rows.py``, as
  the architecture page does), and ``X.attr`` is an attribute of it;
- a capitalised ``X(...)`` the package does not define is defined on the page, or is one of
  :data:`FOREIGN` (other libraries' names, and the made-up classes of an example), so a renamed class shows.

The public names themselves are ``notebook_agent.__all__``: each resolves, and ``dir(notebook_agent)`` lists
them, so tab completion offers what the docs use.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import json
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import notebook_agent
from tests.doc_blocks import fences, without_fences

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "notebook_agent"

#: Capitalised calls in the docs that are not the package's: other libraries', JavaScript's, and the classes an
#: example makes up (a user's own ``Shop``).
FOREIGN = {
    "Client": "Dask's distributed.Client",
    "LocalCluster": "Dask's distributed.LocalCluster",
    "HYPERLINK": "a spreadsheet formula",
    "RTCPeerConnection": "a browser API",
    "SharedWorker": "a browser API",
    "Shop": "an example's own dependencies class",
    "Bank": "an example's own dependencies class",
    "SaveNote": "an example's own tool class",
}

_INLINE = re.compile(r"`([^`\n]+)`")
_IMPORT = re.compile(r"\bfrom\s+(notebook_agent(?:\.\w+)*)\s+import\s+([\w\s,()]+?)(?:;|$|#|`)", re.M)
_IMPORT_MODULE = re.compile(r"(?<![\w.])import\s+(notebook_agent(?:\.\w+)*)")
_DOTTED = re.compile(r"(?<![\w./-])notebook_agent((?:\.[A-Za-z_]\w*)+)")
_FILE = re.compile(r"(?<![\w/.-])((?:\w+/)+\w+\.py|(?:\w+/)*\w+\.py)\b")
_USE = re.compile(r"(?<![\w.])([A-Za-z_]\w*)(?:\(|\.([A-Za-z_]\w*))")
_CLASS = re.compile(r"^[A-Z][a-z]\w*$")


@dataclasses.dataclass
class Page:
    """One document: its name, its prose (with inline code) and its code (blocks or code cells)."""

    name: str
    prose: str
    code: list[str]

    @property
    def text(self) -> str:
        return self.prose + "\n" + "\n".join(self.code)


def pages() -> Iterator[Page]:
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        text = path.read_text(encoding="utf-8")
        code = [body for _, lang, body in fences(text) if lang in ("python", "")]
        yield Page(str(path.relative_to(ROOT)), without_fences(text), code)
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        source = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in cells]
        prose = "\n".join(s for c, s in zip(cells, source, strict=True) if c["cell_type"] == "markdown")
        yield Page(
            str(path.relative_to(ROOT)),
            prose,
            [s for c, s in zip(cells, source, strict=True) if c["cell_type"] == "code"],
        )


@cache
def package_definitions() -> dict[str, frozenset[str]]:
    """``name → modules``: every class and function the package defines at a module's top level."""
    found: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and not node.name.startswith(
                "_"
            ):
                found.setdefault(node.name, set()).add(module)
    return {name: frozenset(modules) for name, modules in found.items()}


@cache
def method_names() -> frozenset[str]:
    """Names some class of the package has as a method or attribute (``approve`` of an approval): a bare
    ``approve()`` in the docs is that method, not a function to import."""
    names: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                        names.add(item.name)
                    elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                        names.add(item.target.id)
    return frozenset(names)


def resolve(dotted: str) -> Any:
    """The object ``notebook_agent.a.b.X`` names: the longest importable module, then attributes."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)  # AttributeError: not there
        return obj
    raise ImportError(f"no module {parts[0]}")


def has_attribute(obj: Any, attr: str) -> bool:
    """``obj.attr`` as the docs mean it: an attribute, a pydantic or dataclass field, or an annotated one."""
    if hasattr(obj, attr):
        return True
    if attr in (getattr(obj, "model_fields", None) or {}) or attr in (getattr(obj, "__dataclass_fields__", None) or {}):
        return True
    return any(attr in getattr(k, "__annotations__", {}) for k in getattr(obj, "__mro__", ()))


def modules_named(page: Page) -> set[str]:
    """The package's modules a page names: imported, written ``notebook_agent.a.b``, or as a file path."""
    named = {m.group(1) for m in _IMPORT.finditer(page.text)} | {m.group(1) for m in _IMPORT_MODULE.finditer(page.text)}
    for m in _DOTTED.finditer(page.text):
        parts = ("notebook_agent" + m.group(1)).split(".")
        named |= {".".join(parts[:i]) for i in range(1, len(parts) + 1)}
    files = {m.group(1).removesuffix(".py") for m in _FILE.finditer(page.text)}
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE).with_suffix("").as_posix()
        if any(rel == f or rel.endswith("/" + f) for f in files):
            named.add(".".join(("notebook_agent", *rel.split("/"))).removesuffix(".__init__"))
    return named


def defined_on(page: Page) -> set[str]:
    """Names a page's code defines itself (classes, functions, assignments, imports of any library)."""
    names: set[str] = set()
    for code in page.code:
        names |= set(re.findall(r"^\s*(?:class|def|async def)\s+(\w+)", code, re.M))
        names |= set(re.findall(r"^\s*(\w+)\s*=", code, re.M))
        names |= {
            n.strip().split(" as ")[-1]
            for m in re.finditer(r"\bimport\s+([\w ,]+)", code)
            for n in m.group(1).split(",")
        }
    return names


def uses(page: Page) -> Iterator[tuple[str, str | None, str]]:
    """``(X, attr or None, where)`` for each ``X(`` / ``X.attr`` in inline code and in code blocks' comments."""
    spans = _INLINE.findall(page.prose)
    spans += [line.split("#", 1)[1] for code in page.code for line in code.splitlines() if "#" in line]
    for span in spans:
        for m in _USE.finditer(span):
            yield m.group(1), m.group(2), span.strip()
        if _CLASS.match(span.strip()):  # a class named on its own: `MapInterrupted`, to catch or to import
            yield span.strip(), None, span.strip()


def import_problems(page: Page) -> list[str]:
    problems = []
    for m in _IMPORT.finditer(page.text):
        module = m.group(1)
        for item in m.group(2).replace("(", "").replace(")", "").split(","):
            name = item.split(" as ")[0].strip()
            if not name:
                continue
            try:
                resolve(f"{module}.{name}")
            except (ImportError, AttributeError):
                problems.append(f"{page.name}: `from {module} import {name}` fails")
    for m in _IMPORT_MODULE.finditer(page.text):
        try:
            importlib.import_module(m.group(1))
        except ImportError:
            problems.append(f"{page.name}: `import {m.group(1)}` fails")
    for m in _DOTTED.finditer(page.text):
        try:
            resolve("notebook_agent" + m.group(1))
        except (ImportError, AttributeError):
            problems.append(f"{page.name}: `notebook_agent{m.group(1)}` does not resolve")
    return problems


def name_problems(page: Page) -> list[str]:
    """What a page shows of the package that a reader cannot import or that is not there."""
    defs, public = package_definitions(), set(notebook_agent.__all__)
    named, own = modules_named(page), defined_on(page)
    problems = []
    for name, attr, where in uses(page):
        if name in own and name not in public:
            continue
        if name[0].islower() and attr is not None:  # a variable's `result.to_pandas`, or a module's `run_flags.FLAGS`
            continue
        if name in defs and not (name[0].islower() and name in method_names()):
            homes = [m for m in named if _has(m, name)]
            if name not in public and not homes:
                problems.append(
                    f"{page.name}: `{where}` uses {name}, which `from notebook_agent import {name}` does not give, and "
                    f"the page names no module that has it (it is in {', '.join(sorted(defs[name]))})"
                )
                continue
            obj = getattr(notebook_agent, name) if name in public else getattr(importlib.import_module(homes[0]), name)
            if attr is not None and not has_attribute(obj, attr):
                problems.append(f"{page.name}: `{where}`: {name} has no attribute {attr}")
        elif (
            name[0].isupper()
            and attr is None
            and name not in FOREIGN
            and name not in public
            and where.find(name + "(") >= 0
        ):
            problems.append(f"{page.name}: `{where}` calls {name}, which neither the package nor the page defines")
    return problems


def _has(module: str, name: str) -> bool:
    try:
        return hasattr(importlib.import_module(module), name)
    except ImportError:
        return False


PAGES = list(pages())


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_documented_name_imports_as_shown(page: Page) -> None:
    problems = import_problems(page) + name_problems(page)
    assert not problems, "\n".join(problems)


def test_tab_completion_offers_every_public_name() -> None:
    """What a kernel offers after ``notebook_agent.`` and ``from notebook_agent import ``: IPython's completer
    with Jedi, as ipykernel runs it, reads ``dir()`` of the module, where the lazily imported names must be."""
    from IPython.core.completer import provisionalcompleter
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.user_ns["notebook_agent"] = notebook_agent
    assert shell.Completer.use_jedi
    missing = []
    for name in notebook_agent.__all__:
        for typed in (f"notebook_agent.{name[:3]}", f"from notebook_agent import {name[:3]}"):
            with provisionalcompleter():
                offered = {c.text for c in shell.Completer.completions(typed, len(typed))}
            if name not in offered:
                missing.append(f"{typed!r} does not offer {name}")
    assert not missing, missing


def test_the_public_names_resolve_and_dir_lists_them() -> None:
    missing = [name for name in notebook_agent.__all__ if not hasattr(notebook_agent, name)]
    assert not missing, f"notebook_agent.__all__ names what it cannot give: {missing}"
    assert set(notebook_agent.__all__) <= set(dir(notebook_agent)), "tab completion offers dir(): list __all__ there"
    namespace: dict[str, Any] = {}
    exec("from notebook_agent import *", namespace)
    assert set(notebook_agent.__all__) <= set(namespace)


# -- the checker, on pages nobody wrote ---------------------------------------------------------------------------
#: ``(how it is written, the module that has it or None, whether it is wrong on a page that names that module)``
_SHOWN = [
    ("PageAgent(model='demo')", None, False),
    ("PageAgent.map", None, False),
    ("PageAgent.mapp", None, True),  # public, no such attribute
    ("Recipe.load(path)", None, False),
    ("open_recipe(path)", "notebook_agent.agent.recipes.recipe", False),
    ("ElementInfo.twin", "notebook_agent.browser.page.snapshot", False),
    ("ElementInfo.tiwn", "notebook_agent.browser.page.snapshot", True),
    ("Client(cluster)", None, False),  # Dask's
    ("Warehouse(3)", None, True),  # neither the package's nor defined on the page
]


@given(
    shown=st.lists(st.sampled_from(_SHOWN), min_size=1, max_size=4, unique=True),
    named=st.sampled_from(["import", "dotted", "file", "none"]),
    in_code=st.booleans(),
)
def test_the_checker_flags_exactly_the_names_a_reader_cannot_use(
    shown: list[tuple[str, str | None, bool]], named: str, in_code: bool
) -> None:
    """Each name written inline or in a code comment is flagged exactly when the reader could not use it: not
    public and its module not named on the page, or an attribute it has not, or a class from nowhere."""
    modules = {m for _, m, _ in shown if m}
    says = []
    for module in sorted(modules):
        name = next(w.split("(")[0].split(".")[0] for w, m, _ in shown if m == module)
        if named == "import":
            says.append(f"`from {module} import {name}`")
        elif named == "dotted":
            says.append(f"`{module}`")
        elif named == "file":
            says.append(module.removeprefix("notebook_agent.").replace(".", "/") + ".py")
    if in_code:
        page = Page("page.md", " ".join(says), ["x = 1\n" + "\n".join(f"y = 2  # {w}" for w, _, _ in shown)])
    else:
        page = Page("page.md", " ".join(says) + " " + " ".join(f"`{w}`" for w, _, _ in shown), [])
    flagged = {w for w, _, _ in shown if any(f"`{w}`" in p for p in name_problems(page))}
    wrong = {w for w, m, bad in shown if bad or (m is not None and named == "none")}
    assert flagged == wrong, name_problems(page)

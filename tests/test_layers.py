"""The package reads as its layers: each layer imports only the ones beneath it, and no two modules import each
other (type-only imports included). Checked on the source, so a new import that breaks the rule fails here."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "notebook_agent"

# What each layer may import from the package (besides itself). App modules are at the top.
ALLOWED = {
    "core": set(),
    "llm": {"core"},
    "browser": {"core", "llm"},
    "agent": {"core", "llm", "browser"},
    "demo": {"core", "llm"},
    "config": {"core", "llm", "browser", "agent", "demo"},
    "notebook": {"core", "llm", "browser", "agent", "demo", "config", "app"},
    "app": {"core", "llm", "browser", "agent", "demo", "config", "notebook", "app"},
}


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer(module: str) -> str:
    parts = module.split(".")
    if len(parts) > 1 and parts[1] in ALLOWED and parts[1] != "app":
        return parts[1]
    return "app"


def imports(path: Path) -> set[str]:
    """Every in-package module ``path`` imports, resolved to a module name (relative imports included)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.startswith("notebook_agent"):
                found.add(target)
                for alias in node.names:  # ``from . import x`` may name a submodule
                    candidate = f"{target}.{alias.name}"
                    if (PACKAGE.parent / candidate.replace(".", "/")).with_suffix(".py").exists():
                        found.add(candidate)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("notebook_agent"))
    found.discard(name)
    return found


def graph() -> dict[str, set[str]]:
    return {module_name(p): imports(p) for p in PACKAGE.rglob("*.py")}


def test_each_layer_imports_only_the_layers_beneath_it() -> None:
    bad = []
    for module, targets in graph().items():
        for target in targets:
            if target == "notebook_agent":
                continue
            if layer(target) != layer(module) and layer(target) not in ALLOWED[layer(module)]:
                bad.append(f"{module} -> {target}")
    assert bad == []


def test_no_two_modules_import_each_other() -> None:
    g = graph()
    pairs = sorted({tuple(sorted((a, b))) for a, ts in g.items() for b in ts if a in g.get(b, set())})
    # A package's __init__ re-exporting its own modules is not a cycle of design.
    pairs = [p for p in pairs if not (p[1].startswith(p[0] + ".") or p[0].startswith(p[1] + "."))]
    assert pairs == []


# Inside a layer: its sub-packages and what each may import of its siblings (an order, checked acyclic below).
# A layer's root modules are either its base (imported by any part of the layer, importing none of its
# sub-packages) or its front (the entry points, which may import every sub-package). ``__init__`` is a front.
SUBPACKAGES: dict[str, dict[str, set[str]]] = {
    "agent": {
        "safety": set(),
        "runs": {"safety"},
        "prompt": {"safety", "runs"},
        "step": {"safety", "runs", "prompt"},
        "otel": {"safety", "runs"},
        "batch": {"safety", "runs", "step", "otel"},
    },
    "browser": {
        "page": set(),
        "fingerprint": {"page"},
        "extract": {"page"},
        "door": {"page"},
        "actions": {"page", "extract"},
        "session": {"page", "fingerprint", "extract", "door", "actions"},
    },
    "llm": {
        "providers": set(),
        "local": {"providers"},
    },
    "notebook": {"views": set()},
}
FRONT: dict[str, set[str]] = {
    "agent": {"page_agent", "evaluate", "recipes", "run_options"},
    "browser": set(),
    "llm": {"registry", "availability"},
    "notebook": {
        "magics",
        "commands",
        "runtime",
        "run_answers",
        "map_view",
        "evaluate",
        "export_magic",
        "recipe_magic",
    },
}


def place(module: str) -> tuple[str, str] | None:
    """(layer, part) of a module inside a layer with sub-packages: part is the sub-package, or "base" / "front"
    for a root module."""
    parts = module.split(".")
    if len(parts) < 2 or parts[1] not in SUBPACKAGES:
        return None
    name = parts[1]
    if len(parts) == 2:
        return name, "front"  # the layer's __init__
    if parts[2] in SUBPACKAGES[name]:
        return name, parts[2]
    return name, "front" if parts[2] in FRONT[name] else "base"


def test_sub_packages_import_only_their_declared_siblings() -> None:
    bad = []
    for module, targets in graph().items():
        here = place(module)
        if here is None:
            continue
        for target in targets:
            there = place(target)
            if there is None or there[0] != here[0] or there[1] == here[1]:
                continue
            if here[1] == "front":
                continue
            if there[1] == "front":
                bad.append(f"{module} -> {target} (a front module)")
            elif there[1] == "base":
                continue
            elif here[1] == "base" or there[1] not in SUBPACKAGES[here[0]][here[1]]:
                bad.append(f"{module} -> {target}")
    assert bad == []


def test_the_declared_sibling_order_has_no_cycle_and_names_real_folders() -> None:
    for layer_name, parts in SUBPACKAGES.items():
        for part, allowed in parts.items():
            assert (PACKAGE / layer_name / part / "__init__.py").exists()
            assert allowed <= set(parts)
        seen: set[str] = set()
        while len(seen) < len(parts):
            ready = {p for p, allowed in parts.items() if p not in seen and allowed <= seen}
            assert ready, f"{layer_name}: a cycle among {sorted(set(parts) - seen)}"
            seen |= ready
    # every sub-package folder is declared, and says what it owns and may import
    for init in PACKAGE.glob("*/*/__init__.py"):
        layer_name, part = init.parent.parent.name, init.parent.name
        declared = part in SUBPACKAGES.get(layer_name, {part: set()}) or part in FRONT.get(layer_name, set())
        assert declared, f"{layer_name}/{part} is not declared"
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        assert "import" in doc, f"{init}: the docstring must say what the sub-package may import"


def test_no_folder_holds_more_than_a_dozen_modules() -> None:
    crowded = []
    for folder in [PACKAGE, *(p for p in PACKAGE.rglob("*") if p.is_dir() and (p / "__init__.py").exists())]:
        modules = [p for p in folder.glob("*.py") if p.name != "__init__.py"]
        if len(modules) > 14:
            crowded.append(f"{folder.relative_to(PACKAGE.parent)}: {len(modules)}")
    assert crowded == []


def test_the_check_sees_real_imports() -> None:
    g = graph()
    assert "notebook_agent.browser.session.browser_session" in g["notebook_agent.agent.step.run"]
    assert "notebook_agent.core.tools" in g["notebook_agent.browser.actions.base"]


# The views of a run: they read the page agent's events (notebook_agent.agent.runs.events) and nothing below them.
VIEWS = (
    "notebook_agent.notebook",
    "notebook_agent.cli.main",
    "notebook_agent.agent.evaluate",
    "notebook_agent.agent.runs.recorder",
    "notebook_agent.agent.otel",
)
# The core loop's events, and what parses model output: a view that needs them is re-deriving what the agent
# already says in page terms.
BELOW_THE_EVENTS = (
    "notebook_agent.core.events",
    "notebook_agent.core.loop",
    "notebook_agent.core.hooks",
    "notebook_agent.core.tool_arguments",
    "notebook_agent.agent.prompt.agent_output",
    "notebook_agent.agent.prompt.preview",
)


def test_views_consume_the_page_events_only() -> None:
    g = graph()
    views = [m for m in g if m.startswith(VIEWS)]
    assert "notebook_agent.notebook.views.run_view" in views and "notebook_agent.cli.main" in views
    bad = sorted(f"{m} -> {t}" for m in views for t in g[m] if t.startswith(BELOW_THE_EVENTS))
    assert bad == []


def test_the_notebook_and_the_agent_use_playwright_through_the_browser_layer() -> None:
    """Playwright calls live in browser/ only: nothing above it imports playwright."""
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        if layer(module_name(path)) == "browser":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            offenders += [f"{module_name(path)} -> {n}" for n in names if n.split(".")[0] == "playwright"]
    assert offenders == []


#: A class this close to the limit is met by paring, not by structure: it must be split by what it does first.
CLASS_MARGIN = 20


def test_no_module_over_500_lines_and_no_class_over_300() -> None:
    """A module that grows past a screenful of screens is doing two jobs; so is a class past 300 lines, and a
    class within CLASS_MARGIN of it is one split away from being met by paring rather than by structure."""
    big = []
    for path in sorted(PACKAGE.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        if len(source.splitlines()) > 500:
            big.append(f"{module_name(path)}: {len(source.splitlines())} lines")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ClassDef) and node.end_lineno is not None:
                size = node.end_lineno - node.lineno + 1
                if size > 300 - CLASS_MARGIN:
                    big.append(f"{module_name(path)}.{node.name}: {size} lines")
    assert big == []

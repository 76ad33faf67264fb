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


def test_the_check_sees_real_imports() -> None:
    g = graph()
    assert "notebook_agent.browser.session" in g["notebook_agent.agent.run"]
    assert "notebook_agent.core.tools" in g["notebook_agent.browser.actions.base"]


# The views of a run: they read the page agent's events (notebook_agent.agent.events) and nothing below them.
VIEWS = (
    "notebook_agent.notebook",
    "notebook_agent.cli",
    "notebook_agent.agent.evaluate",
    "notebook_agent.agent.recorder",
)
# The core loop's events, and what parses model output: a view that needs them is re-deriving what the agent
# already says in page terms.
BELOW_THE_EVENTS = (
    "notebook_agent.core.events",
    "notebook_agent.core.loop",
    "notebook_agent.core.hooks",
    "notebook_agent.core.tool_arguments",
    "notebook_agent.agent.macro",
    "notebook_agent.agent.preview",
)


def test_views_consume_the_page_events_only() -> None:
    g = graph()
    views = [m for m in g if m.startswith(VIEWS)]
    assert "notebook_agent.notebook.view" in views and "notebook_agent.cli" in views
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


def test_no_module_over_500_lines_and_no_class_over_300() -> None:
    """A module that grows past a screenful of screens is doing two jobs; so is a class past 300 lines."""
    big = []
    for path in sorted(PACKAGE.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        if len(source.splitlines()) > 500:
            big.append(f"{module_name(path)}: {len(source.splitlines())} lines")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ClassDef) and node.end_lineno is not None:
                size = node.end_lineno - node.lineno + 1
                if size > 300:
                    big.append(f"{module_name(path)}.{node.name}: {size} lines")
    assert big == []

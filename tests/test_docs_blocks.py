"""Every Python block and every ``%%agent`` / ``%agent`` cell of the README and the guides runs, as written.

A newcomer pastes the README's cells into a notebook, then a guide's; a block that names a class it never
imports, or a variable no block on the page defines, stops them in their first hour. So each page (README.md,
docs/**/*.md) becomes a notebook of its blocks, in order, executed in a real kernel (nbclient, as nbval runs
the notebooks in notebooks/), in a folder of its own, with no API key: the demo shop and the offline demo
model (``model="demo"``). A cell fails the page when it raises or prints a magic error line (as in
notebooks/conftest.py).

What a page names that this machine does not have is swapped, in the test, never in the docs, through one table,
:data:`STAND_INS`: a provider's model name becomes ``demo``, and a site on the internet becomes the demo shop.
The files a page's blocks read are :data:`FILES`, the environment variables they read :data:`ENV`. A block
written as a script (``asyncio.run(main())``) runs as one, in a process of its own (``%%script``). A block that
cannot run here at all says why in a line every reader sees, ``# not run by the docs test: <why>``
(tests/doc_blocks.py); :data:`MAX_SKIPPED` keeps those few.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import notebook_agent
from notebook_agent.demo import serve_demo
from notebook_agent.notebook.commands import ERROR_LINE
from tests.doc_blocks import SKIP, Block, blocks

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

#: The docs' names for what this machine has not got, and what stands in for each while the test runs them:
#: ``{shop}`` is the demo shop's address.
STAND_INS = {
    "openai:gpt-4.1-mini": "demo",
    "anthropic:claude-sonnet-4-5": "demo",
    "https://staging.example.com": "{shop}",
    "https://example.com": "{shop}",
}

#: Files a page's blocks read, written into the page's folder first (``{shop}`` filled in).
FILES = {
    "docs/guides/prompt-tuning.md": {
        "suite.yaml": (
            "name: demo-shop\n"
            "tasks:\n"
            "  - id: cheapest\n"
            "    url: '{shop}/'\n"
            "    task: Find the cheapest pair of wireless headphones, add it to the cart, and tell me its name and "
            "price.\n"
            "    check: {result: '54.99'}\n"
        )
    },
}

#: Environment variables the blocks read, as a reader would have set them.
ENV = {"GH_PASSWORD": "a-password-for-the-docs-test"}

#: Blocks that may say "not run by the docs test" across every page: a few, each for a reason this machine
#: cannot meet (a model file, a server).
MAX_SKIPPED = 3

#: How long one cell may take (a map, an evaluation with several runs).
CELL_TIMEOUT_S = 300


def page_id(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def stand_in(source: str, shop: str) -> str:
    """``source`` with every :data:`STAND_INS` name replaced (the longest first, so one never eats another)."""
    for name in sorted(STAND_INS, key=len, reverse=True):
        source = source.replace(name, STAND_INS[name].format(shop=shop))
    return source


def is_script(block: Block) -> bool:
    """A block written as a program of its own: it starts its event loop with ``asyncio.run``."""
    return block.kind == "python" and re.search(r"^asyncio\.run\(", block.source, re.M) is not None


def cells(block: Block, shop: str) -> list[str]:
    """The notebook cells of a block: itself (a script as ``%%script``), cut after each line whose comment
    says what it shows (``result.output  # Price(name=..., price=34.5)``), with a cell checking that after it."""
    source = stand_in(block.source, shop)
    if is_script(block):
        return [f"%%script {sys.executable}\n{source}"]
    lines, out, start = source.splitlines(), [], 0
    for end, said in claims(source):
        out += ["\n".join(lines[start:end]), check_claim(said)]
        start = end
    rest = "\n".join(lines[start:])
    return [*out, rest] if rest.strip() else out


_CLAIM = re.compile(r"#\s*(?P<said>[A-Z]\w*\(.*\))\s*$")


def claims(source: str) -> list[tuple[int, str]]:
    """``(line after it, what it says)`` for each top-level expression of ``source`` whose comment shows its
    value as ``Type(...)``; none for a block that is not plain Python (a magic)."""
    try:
        tree = compile(source, "<block>", "exec", flags=ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    except SyntaxError:
        return []
    lines = source.splitlines()
    found = []
    assert isinstance(tree, ast.Module)  # what compile gives for "exec" with PyCF_ONLY_AST
    for node in tree.body:
        if not isinstance(node, ast.Expr) or node.end_lineno is None:
            continue
        said = _CLAIM.search(lines[node.end_lineno - 1])
        if said:
            found.append((node.end_lineno, said.group("said")))
    return found


def check_claim(said: str) -> str:
    """A cell checking the value the cell before showed (``_``) against what the docs say it is; a time in
    seconds (``· 2.0 s``) may differ."""
    return (
        "import re as _re\n"
        "_norm = lambda text: _re.sub(r'\\d+(?:\\.\\d+)? s\\b', 'N s', text)\n"
        f"_said = {said!r}\n"
        "assert _norm(repr(_)) == _norm(_said), f'the docs say {_said}, the block gives {_!r}'"
    )


def magic_errors(outputs: list[Any]) -> list[str]:
    """The magic error lines in a cell's outputs (streams and text/plain displays)."""
    texts = [o.get("text", "") for o in outputs if o.get("output_type") == "stream"]
    texts += [o.get("data", {}).get("text/plain", "") for o in outputs if "data" in o]
    return [line for text in texts for line in text.splitlines() if ERROR_LINE.match(line)]


@pytest.fixture(scope="module")
def shop() -> Iterator[str]:
    with serve_demo() as server:
        yield server.url.rstrip("/")


RUNNABLE = [p for p in PAGES if any(b.skip is None for b in blocks(p.read_text(encoding="utf-8")))]


@pytest.mark.parametrize("page", RUNNABLE, ids=[page_id(p) for p in RUNNABLE])
def test_every_block_of_the_page_runs(page: Path, shop: str, tmp_path: Path) -> None:
    name = page_id(page)
    runnable = [b for b in blocks(page.read_text(encoding="utf-8")) if b.skip is None]
    for file, text in FILES.get(name, {}).items():
        (tmp_path / file).write_text(text.replace("{shop}", shop), encoding="utf-8")
    nb = nbformat.v4.new_notebook()
    made = [(b, c) for b in runnable for c in cells(b, shop)]
    nb.cells = [nbformat.v4.new_code_cell(c) for _, c in made]
    env = {k: v for k, v in os.environ.items() if k != "NOTEBOOK_AGENT_MODEL" and not k.endswith("_API_KEY")}
    env |= ENV
    # the kernel imports the package this test imports, wherever the kernel's folder is
    home = str(Path(notebook_agent.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (home, env.get("PYTHONPATH", "")) if p)
    client = nbclient.NotebookClient(
        nb, timeout=CELL_TIMEOUT_S, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    with client.setup_kernel(env=env):
        for index, ((block, _), cell) in enumerate(zip(made, nb.cells, strict=True)):
            try:
                client.execute_cell(cell, index)
            except nbclient.exceptions.CellExecutionError as exc:
                pytest.fail(f"The block at {name}:{block.line} raised:\n{exc}", pytrace=False)
            errors = magic_errors(cell.outputs)
            assert not errors, f"The block at {name}:{block.line} printed a magic error:\n" + "\n".join(errors)


def test_the_pages_run_blocks_and_skip_few_saying_why() -> None:
    """The test runs something (a change to the extraction that found nothing would pass every page), and the
    skipped blocks are few and each says why."""
    found = {page_id(p): blocks(p.read_text(encoding="utf-8")) for p in PAGES}
    assert sum(b.skip is None for bs in found.values() for b in bs) >= 20
    skipped = [(name, b) for name, bs in found.items() for b in bs if b.skip is not None]
    assert all(b.skip for _, b in skipped), [
        f"{n}:{b.line}: the marker gives no reason" for n, b in skipped if not b.skip
    ]
    assert len(skipped) <= MAX_SKIPPED, [f"{n}:{b.line}: {b.skip}" for n, b in skipped]


def test_the_notebooks_are_run_by_the_suite() -> None:
    """The notebooks run under nbval with the suite (scripts/test.sh passes ``notebooks --nbval-lax``), so each is
    executed as the guides are: nbval collects a cell of every notebook there."""
    script = (ROOT / "scripts" / "test.sh").read_text(encoding="utf-8")
    run = next(line for line in script.splitlines() if line.startswith(".venv/bin/pytest "))
    assert " notebooks " in run and "--nbval-lax" in run, run
    notebooks = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
    listed = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "notebooks", "--nbval-lax"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    collected = {line.split("::")[0].removeprefix("notebooks/") for line in listed.stdout.splitlines() if "::" in line}
    assert notebooks and collected == set(notebooks), listed.stdout[-2000:] + listed.stderr[-2000:]


# -- the reading of a page, on pages nobody wrote --------------------------------------------------------------
_code = st.text(alphabet="abcxyz_=()1 .'", min_size=1, max_size=20).map(str.strip).filter(bool)
_kinds = st.sampled_from(["python", "cell", "bash", "plain", "indented"])


@given(parts=st.lists(st.tuples(_kinds, _code, st.booleans()), max_size=6), why=st.sampled_from(["", "needs X"]))
def test_a_page_gives_exactly_its_python_and_magic_blocks_in_order(
    parts: list[tuple[str, str, bool]], why: str
) -> None:
    lines: list[str] = ["# A page", ""]
    expected = []
    for kind, code, skipped in parts:
        marker = [f"# not run by the docs test:{' ' + why if why else ''}"] if skipped else []
        if kind == "python":
            lines += ["```python", *marker, code, "```", ""]
        elif kind == "cell":
            lines += ["```", "%%agent --model demo", *marker, code, "```", ""]
        elif kind == "bash":
            lines += ["```bash", code, "```", ""]
        elif kind == "plain":
            lines += ["```", code, "```", ""]  # not a magic: output, a tree, a prompt's text
        else:
            lines += ["- a list item:", "", "  ```python", *(f"  {m}" for m in marker), f"  {code}", "  ```", ""]
        if kind in ("python", "cell", "indented"):
            expected.append(("cell" if kind == "cell" else "python", code, (why if skipped else None)))
    found = blocks("\n".join(lines))
    assert [(b.kind, b.source.rstrip("\n").splitlines()[-1], b.skip) for b in found] == expected
    assert all(SKIP.search(b.source) for b in found if b.skip is not None)

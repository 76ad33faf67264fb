"""The README stays one screen and points into the docs site.

The README is what a newcomer reads first, so it keeps only what it is, the install, the two commands, one
cell, one data example and links; everything else lives in a guide under docs/ (built by ``mkdocs build
--strict`` in scripts/test.sh, which fails on a broken link inside the site). This test covers the README's
side: its size, and that each of its links names a file in docs/ (and, for ``page.md#anchor``, a heading of
that page), since GitHub and PyPI show the README outside the site where no build checks it.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
MAX_README_BYTES = 12 * 1024

_LINK = re.compile(r"!?\[(?:[^\]\n]|\n(?!\n))*\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^```.*?^```", re.S | re.M)
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*$", re.M)
_ATTR_ID = re.compile(r"\s*\{#([\w-]+)\}$")


def heading_anchors(markdown: str) -> set[str]:
    """The anchors of a page's headings as the site makes them: ``{#id}`` when given, else the toc slug."""
    anchors = set()
    for title in _HEADING.findall(_FENCE.sub("", markdown)):
        explicit = _ATTR_ID.search(title)
        if explicit:
            anchors.add(explicit.group(1))
            continue
        text = re.sub(r"[^\w\s-]", "", title.replace("`", "")).strip().lower()
        anchors.add(re.sub(r"[-\s]+", "-", text))
    return anchors


def link_problems(markdown: str, base: Path, docs: Path) -> list[str]:
    """What is wrong with the links of ``markdown`` (a file in ``base``): each must be a web address, or a file
    inside ``docs`` that exists, with its ``#anchor`` among that page's headings."""
    problems = []
    for target in _LINK.findall(_FENCE.sub("", markdown)):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        if not path:
            problems.append(f"{target}: a link within the README; link to the guide that holds it instead")
            continue
        file = (base / path).resolve()
        if not file.is_relative_to(docs.resolve()):
            problems.append(f"{target}: outside docs/; the README links only into the docs")
        elif not file.is_file():
            problems.append(f"{target}: no such file")
        elif anchor and file.suffix == ".md" and anchor not in heading_anchors(file.read_text(encoding="utf-8")):
            problems.append(f"{target}: {path} has no heading with the anchor #{anchor}")
    return problems


def test_readme_is_one_screen() -> None:
    size = len(README.read_bytes())
    assert size < MAX_README_BYTES, (
        f"README.md is {size} bytes, over {MAX_README_BYTES}: move the detail into its guide under docs/guides/ "
        "and link to it"
    )


def test_readme_links_resolve_into_docs() -> None:
    links = _LINK.findall(_FENCE.sub("", README.read_text(encoding="utf-8")))
    assert any(t.startswith("docs/guides/") for t in links), "the README links to the guides"
    assert link_problems(README.read_text(encoding="utf-8"), ROOT, DOCS) == []


def test_readme_shows_a_picture_of_a_run() -> None:
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", README.read_text(encoding="utf-8"))
    assert images, "the README shows a run in a notebook"
    for image in images:
        assert (ROOT / image).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", f"{image} is a PNG file"


def test_every_guide_is_linked_from_the_readme() -> None:
    """A notebook user finds every guide from the README."""
    text = README.read_text(encoding="utf-8")
    for guide in sorted((DOCS / "guides").glob("*.md")):
        assert f"docs/guides/{guide.name}" in text, f"the README does not link to docs/guides/{guide.name}"


_word = st.text(alphabet="abcdefghij-", min_size=1, max_size=8).filter(lambda w: w.strip("-"))


@given(page=_word, anchor=_word, exists=st.booleans(), has_anchor=st.booleans(), inside=st.booleans())
def test_link_check_finds_each_broken_link(
    page: str, anchor: str, exists: bool, has_anchor: bool, inside: bool
) -> None:
    """The checker reports exactly the broken links, whatever the combination of file, anchor and place."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        docs = root / "docs"
        folder = docs if inside else root / "elsewhere"
        folder.mkdir(parents=True)
        if exists:
            heading = f"## {anchor} {{#{anchor}}}" if has_anchor else "## other {#zz-other}"
            (folder / f"{page}.md").write_text(f"# Title\n\n{heading}\n")
        rel = "docs" if inside else "elsewhere"
        problems = link_problems(f"see [it]({rel}/{page}.md#{anchor})", root, docs)
        assert bool(problems) == (not inside or not exists or not has_anchor), problems

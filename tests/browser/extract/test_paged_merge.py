"""Pages of one table merged by their header, on real Chromium: generated paginated tables (links in random
columns on each page, random row counts, pages as documents or re-rendered by script) keep every row; a page
whose header really differs is left out and says so in the table itself, not only in what the model reads."""

from __future__ import annotations

import html
import itertools
import json
from dataclasses import dataclass
from urllib.parse import urljoin

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notebook_agent.browser import BrowserSession
from notebook_agent.browser.extract.tables import ExtractedTable
from tests.browser.conftest import MADE, Servers

NAMES = ["Item", "Price", "Shelf"]
_made = itertools.count(1)


@dataclass
class Paged:
    """A generated table of several pages: each page's header and rows of (text, link or None) cells."""

    mode: str  # "documents": one page per document, linked by Next; "script": one document re-rendering its rows
    heads: list[list[str]]
    pages: list[list[list[tuple[str, str | None]]]]

    @property
    def kept(self) -> int:
        """How many pages an exact reader keeps: those up to the first whose header differs from page 1's."""
        return next((k for k, head in enumerate(self.heads) if head != self.heads[0]), len(self.heads))


@st.composite
def paged_tables(draw: st.DrawFn) -> Paged:
    width = draw(st.integers(1, 3))
    count = draw(st.integers(2, 4))
    differ = draw(st.none() | st.integers(1, count - 1))  # the page (from 0) whose header has another column
    heads, pages = [], []
    for p in range(count):
        linked = draw(st.sets(st.integers(0, width - 1)))  # the columns that may hold links on this page
        rows = []
        for i in range(draw(st.integers(1, 5))):
            row = []
            for c in range(width):
                link = c in linked and draw(st.booleans())
                row.append((f"{NAMES[c]} {p + 1}.{i + 1}", f"/go/{p + 1}/{i + 1}/{c}" if link else None))
            if differ is not None and p >= differ:
                row.append((f"Note {p + 1}.{i + 1}", None))
            rows.append(row)
        heads.append(NAMES[:width] + (["Note"] if differ is not None and p >= differ else []))
        pages.append(rows)
    return Paged(draw(st.sampled_from(["documents", "script"])), heads, pages)


def cell(text: str, link: str | None) -> str:
    return f'<a href="{link}">{html.escape(text)}</a>' if link else html.escape(text)


def table_html(head: list[str], rows: list[list[tuple[str, str | None]]]) -> str:
    th = "".join(f"<th>{h}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{cell(*c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table id=t><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


def serve(paged: Paged, servers: Servers) -> str:
    """The table's first page, served: its URL."""
    key = f"paged{next(_made)}"
    if paged.mode == "documents":
        for p, (head, rows) in enumerate(zip(paged.heads, paged.pages, strict=True)):
            more = p + 1 < len(paged.pages)
            pager = f'<nav class=pagination><a rel=next href="/made/{key}-{p + 2}.html">Next</a></nav>' if more else ""
            MADE[f"{key}-{p + 1}.html"] = f"<!doctype html><title>Page {p + 1}</title>{table_html(head, rows)}{pager}"
        return f"/made/{key}-1.html"
    data = json.dumps({"heads": paged.heads, "pages": paged.pages})
    MADE[f"{key}.html"] = (
        f"<!doctype html><title>Paged</title>{table_html(paged.heads[0], [])}"
        "<nav class=pagination><button id=next>Next</button></nav><script>"
        f"const D = {data}; let k = 0; const t = document.getElementById('t');"
        "const esc = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');"
        "function show() {"
        "  t.tHead.innerHTML = '<tr>' + D.heads[k].map((h) => '<th>' + h + '</th>').join('') + '</tr>';"
        "  t.tBodies[0].innerHTML = D.pages[k].map((r) => '<tr>' + r.map(([x, l]) => '<td>' +"
        "    (l ? '<a href=\"' + l + '\">' + esc(x) + '</a>' : esc(x)) + '</td>').join('') + '</tr>').join('');"
        "  document.getElementById('next').disabled = k >= D.pages.length - 1;"
        "}"
        "document.getElementById('next').onclick = () => { k++; setTimeout(show, 30); }; show();"
        "</script>"
    )
    return f"/made/{key}.html"


def expected(paged: Paged, base: str) -> tuple[list[str], list[list[str]]]:
    """Columns and rows of the pages an exact reader keeps, links laid out over all of them."""
    names = paged.heads[0]
    rows = [row for page in paged.pages[: paged.kept] for row in page]
    linked = [c for c in range(len(names)) if any(row[c][1] for row in rows)]
    columns = [n for c, name in enumerate(names) for n in ([name, f"{name} link"] if c in linked else [name])]
    out = []
    for row in rows:
        line = []
        for c, (text, link) in enumerate(row[: len(names)]):
            line += [text, urljoin(base, link) if link else ""] if c in linked else [text]
        out.append(line)
    return columns, out


async def read_all(b: BrowserSession) -> ExtractedTable:
    snap = await b.snapshot()
    assert snap.tables == ["T1"], snap.text
    res = await b.act({"extract_table": {"table": "T1", "pages": 10}})
    assert not res.is_error, res.text_content
    table: ExtractedTable = res.details["table"]
    return table


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(paged=paged_tables())
async def test_every_row_of_pages_with_one_header_is_kept(
    browser: BrowserSession, servers: Servers, paged: Paged
) -> None:
    url = servers.url(serve(paged, servers).lstrip("/"))
    await browser.page.goto(url, wait_until="load")
    table = await read_all(browser)
    columns, rows = expected(paged, url)
    assert (table.columns, table.rows) == (columns, rows)
    assert table.pages == paged.kept
    if paged.kept < len(paged.pages):  # the page whose header differs, said in the table wherever it goes
        assert len(table.dropped) == 1 and table.dropped[0].startswith(f"page {paged.kept + 1} and any after it")
        assert f"Not read: page {paged.kept + 1} and any after it" in table.summary()
    else:
        assert table.dropped == []


async def test_a_link_column_on_page_one_only_keeps_page_two(browser: BrowserSession, servers: Servers) -> None:
    """The case as a person met it: page 1 has a link cell, page 2 none; 7 rows, none dropped."""
    paged = Paged(
        "documents",
        [["Item", "Price"]] * 2,
        [
            [[("Kettle", "/p/1"), ("$30", None)], [("Mug", None), ("$5", None)], [("Pot", None), ("$12", None)]],
            [[(f"Spoon {i}", None), (f"${i}", None)] for i in range(1, 5)],
        ],
    )
    url = servers.url(serve(paged, servers).lstrip("/"))
    await browser.page.goto(url, wait_until="load")
    table = await read_all(browser)
    assert table.columns == ["Item", "Item link", "Price"] and len(table.rows) == 7 and table.pages == 2
    assert table.rows[3:] == [[f"Spoon {i}", "", f"${i}"] for i in range(1, 5)]
    assert table.dropped == [] and "Not read" not in table.summary()


def test_dropped_pages_travel_with_the_table() -> None:
    """What a run keeps of a table with a page left out says so: the run file, the DataFrame, the live view's end
    and the saved record."""
    from notebook_agent.agent import PageAgentResult
    from notebook_agent.agent.runs.run_data import table_frame, table_from_dict, table_to_dict
    from notebook_agent.core.messages import Usage
    from notebook_agent.notebook.views.record import record_html
    from notebook_agent.notebook.views.run_view import summary_html

    why = "page 2 and any after it, since the header differs from page 1's (a | b against a)"
    table = ExtractedTable("t1", ["a"], [["1"]], "table T1 on http://h/", 1, [why])
    again = table_from_dict("t1", json.loads(json.dumps(table_to_dict(table))))
    assert again == table
    frame = table_frame(again)
    assert frame.attrs["dropped"] == [why] and list(frame["a"]) == ["1"]
    result = PageAgentResult(
        task="read it", status="completed", success=True, text="t1", steps=[], usage=Usage(), model="test:x",
        duration_s=1.0, prompt_version="p", tables={"t1": again},
    )  # fmt: skip
    assert result.to_pandas().attrs["dropped"] == [why]
    for shown in (summary_html(result), record_html(result)):
        assert "t1 is missing page 2 and any after it, since the header differs" in shown, shown

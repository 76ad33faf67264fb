"""Tables read by the name the state gives them, on real Chromium: a table with nothing interactive in it (no
index anywhere inside) is named where it starts, ``[Table T1]``, and ``extract_table(table="T1")`` reads it
exactly; layout and hidden tables are not named; a table in a frame of another site is read through its frame;
a property test over generated pages holds every named table to its rows, and every shown data table to a name.
"""

from __future__ import annotations

import html
import itertools
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notebook_agent.browser import BrowserSession
from notebook_agent.browser.actions.params import ExtractParams
from notebook_agent.browser.extract.tables import ExtractedTable, unique
from notebook_agent.browser.page.snapshot import without_tables
from notebook_agent.llm.tokens import count_tokens
from tests.browser.conftest import MADE, Servers

_made = itertools.count(1)

TWO_TABLES = """<!doctype html><title>Report</title><h1>Report</h1><p>Two plain tables and a layout one.</p>
<table><caption>Planets</caption><tr><th>Name</th><th>Moons</th></tr><tr><td>Earth</td><td>1</td></tr>
<tr><td>Mars</td><td>2</td></tr></table>
<table role=presentation><tr><td>laid out, not data</td></tr></table>
<table><thead><tr><th>City</th><th>Population</th></tr></thead><tbody><tr><td>Bern</td><td>134,591</td></tr>
<tr><td>Cork</td><td>224,004</td></tr><tr><td>Évora</td><td>56,596</td></tr></tbody></table>"""


async def read(b: BrowserSession, **args: Any) -> ExtractedTable:
    res = await b.act({"extract_table": args})
    assert not res.is_error, res.text_content
    table: ExtractedTable = res.details["table"]
    return table


async def test_plain_tables_are_named_and_read_by_name(browser: BrowserSession) -> None:
    page = await browser.ensure_page()
    await page.set_content(TWO_TABLES)
    snap = await browser.snapshot()
    assert snap.elements == {}  # nothing on the page has an index: the names are the only way in
    assert snap.tables == ["T1", "T2"]
    lines = snap.text.splitlines()
    assert (
        lines[lines.index("[Table T1]") + 1] == "Planets"
        and lines[lines.index("[Table T2]") + 1] == "City | Population"
    )
    cities = await read(browser, table="T2")
    assert cities.columns == ["City", "Population"]
    assert cities.rows == [["Bern", "134,591"], ["Cork", "224,004"], ["Évora", "56,596"]]
    assert cities.source == "table T2 on about:blank" and cities.name == "t1"
    planets = await read(browser, table="[Table T1]")  # the line as the model may copy it
    assert planets.rows == [["Earth", "1"], ["Mars", "2"]] and planets.source.startswith('table "Planets" T1 on')
    # what the names cost: the state of this page with and without them, in tokens (o200k)
    added = count_tokens(snap.text) - count_tokens(without_tables(snap.text))
    assert 0 < added <= 12, added


async def test_a_table_with_links_keeps_its_index_form_and_gains_a_name(load: Any) -> None:
    b: BrowserSession = await load("table_spans.html")
    snap = await b.snapshot()
    by_name = await read(b, table=snap.tables[0])
    index = next(i for i, e in snap.elements.items() if e.text == "Read north")
    by_index = await read(b, index=index)
    assert (by_name.columns, by_name.rows) == (by_index.columns, by_index.rows)
    assert by_index.source.startswith('table "Sales by region" [')


async def test_a_name_the_state_does_not_give_is_a_clear_error(browser: BrowserSession) -> None:
    page = await browser.ensure_page()
    await page.set_content(TWO_TABLES)
    await browser.snapshot()
    res = await browser.act({"extract_table": {"table": "T3"}})
    assert res.is_error and "no table T3 in the current browser state (its tables: T1, T2)" in res.text_content
    await page.evaluate("document.querySelectorAll('table')[2].remove()")
    res = await browser.act({"extract_table": {"table": "T2"}})
    assert res.is_error and "table T2 is no longer on the page" in res.text_content
    for bad in ({}, {"table": "T1", "index": 0}, {"table": "the first"}):
        res = await browser.act({"extract_table": bad})
        assert res.is_error and "table" in res.text_content, res.text_content


def test_a_name_is_read_however_the_model_writes_it() -> None:
    for written in ("T2", "t2", "2", "[Table T2]", "Table T2", " table t2 "):
        assert ExtractParams(table=written).table == "T2"
    with pytest.raises(ValueError, match="not both"):
        ExtractParams(table="T1", index=3)


async def test_a_table_in_a_frame_of_another_site_is_read_by_name(browser: BrowserSession, servers: Servers) -> None:
    key = f"framed{next(_made)}"
    MADE[f"{key}-inner.html"] = "<!doctype html><table><tr><th>Fund</th></tr><tr><td>Alpha</td></tr></table>"
    MADE[f"{key}.html"] = (
        f"<!doctype html><p>Outer</p><table><tr><td>outer cell</td></tr></table>"
        f'<iframe src="{servers.other}/made/{key}-inner.html" style="width:400px;height:200px"></iframe>'
    )
    await browser.page.goto(servers.url(f"made/{key}.html"), wait_until="load")
    snap = await browser.snapshot()
    assert snap.tables == ["T1", "T2"], snap.text
    inner = await read(browser, table="T2")
    assert inner.columns == ["Fund"] and inner.rows == [["Alpha"]]
    assert inner.source == f"table T2 on {servers.other}/made/{key}-inner.html"


# -- generated pages: every named table reads back, every shown data table is named ---------------------------------
@dataclass
class Piece:
    """One table on a generated page: how it is made and the cells it shows (header row first)."""

    kind: str  # "table", "grid" (ARIA), "presentation", "layout" (a table holding a data table), "hidden"
    cells: list[list[str]]
    links: bool

    @property
    def named(self) -> bool:
        return self.kind in ("table", "grid", "layout")  # a layout table's inner data table is the one named


WORDS = st.text("abcxyzÄé 0123456789,.$", min_size=1, max_size=8).map(lambda s: s.strip() or "x")


@st.composite
def pieces(draw: st.DrawFn) -> list[Piece]:
    out = []
    for _ in range(draw(st.integers(1, 4))):
        width, height = draw(st.integers(1, 3)), draw(st.integers(1, 4))
        cells = [[draw(WORDS) for _ in range(width)] for _ in range(height + 1)]
        kind = draw(st.sampled_from(["table", "table", "grid", "presentation", "layout", "hidden"]))
        out.append(Piece(kind, cells, draw(st.booleans())))
    return out


def piece_html(p: Piece) -> str:
    def cell(text: str, i: int) -> str:
        shown = html.escape(text)
        return f'<a href="/r/{i}">{shown}</a>' if p.links and i == 1 else shown

    if p.kind == "grid":
        rows = [
            "<div role=row>"
            + "".join(f"<span role=columnheader>{html.escape(c)}</span> " for c in p.cells[0])
            + "</div>",
            *(
                "<div role=row>" + "".join(f"<span role=gridcell>{cell(c, i)}</span> " for c in row) + "</div>"
                for i, row in enumerate(p.cells[1:], 1)
            ),
        ]
        return f"<div role=grid>{''.join(rows)}</div>"
    head = "<tr>" + "".join(f"<th>{html.escape(c)}</th>" for c in p.cells[0]) + "</tr>"
    body = "".join(
        "<tr>" + "".join(f"<td>{cell(c, i)}</td>" for c in row) + "</tr>" for i, row in enumerate(p.cells[1:], 1)
    )
    table = f"<table>{head}{body}</table>"
    if p.kind == "presentation":
        return f"<table role=presentation>{body}</table>"
    if p.kind == "layout":
        return f"<table><tr><td>{table}</td></tr></table>"
    if p.kind == "hidden":
        return f"<table style='display:none'>{head}{body}</table>"
    return table


def squash(text: str) -> str:
    return " ".join(text.split())


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(page_pieces=pieces())
async def test_every_named_table_reads_back_and_every_shown_one_is_named(
    browser: BrowserSession, page_pieces: list[Piece]
) -> None:
    page = await browser.ensure_page()
    await page.set_content("<p>Start</p>" + "<p>between</p>".join(piece_html(p) for p in page_pieces))
    snap = await browser.snapshot(full_page=True)
    shown = [p for p in page_pieces if p.named]
    assert snap.tables == [f"T{i}" for i in range(1, len(shown) + 1)], snap.text
    for name, piece in zip(snap.tables, shown, strict=True):
        table = await read(browser, table=name)
        plain = [k for k, col in enumerate(table.columns) if not col.endswith(" link")]  # links aside
        assert [table.columns[k] for k in plain] == unique([squash(c) for c in piece.cells[0]])
        assert [[row[k] for k in plain] for row in table.rows] == [[squash(c) for c in row] for row in piece.cells[1:]]

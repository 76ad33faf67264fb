"""``extract_table`` and the reader behind it, on real Chromium: exact rows (never retyped), spans expanded,
pages followed, rows loaded on scroll, cards read into fields, a hostile page read truly, and a property test
of the table model against an independent expansion of random layouts."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urljoin

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notebook_agent.browser import BrowserSession
from notebook_agent.browser.actions import ExtractTableTool, run_action
from notebook_agent.browser.extract import tables as extract_module
from notebook_agent.browser.extract.tables import ExtractedTable, ExtractError, read_items, read_table, unique
from notebook_agent.llm.tokens import count_tokens
from tests.browser.make_tables import COLUMNS, PAGE, expected, render


def idx(text: str, needle: str) -> int:
    """The index of the first snapshot line holding ``needle``."""
    for line in text.splitlines():
        m = re.search(r"\[(\d+)\]", line)
        if needle in line and m:
            return int(m.group(1))
    raise AssertionError(f"{needle!r} not in:\n{text}")


async def extract_at(b: BrowserSession, needle: str, pages: int = 1) -> tuple[ExtractedTable, str]:
    text = (await b.snapshot()).text
    res = await b.act({"extract_table": {"index": idx(text, needle), "pages": pages}})
    assert not res.is_error, res.text_content
    table = res.details["table"]
    assert isinstance(table, ExtractedTable)
    return table, res.text_content


# -- one page, exactly ----------------------------------------------------------------------------------------------
async def test_1500_rows_equal_the_source_data(load: Any) -> None:
    assert PAGE.read_text(encoding="utf-8") == render()  # the committed page is what make_tables.py makes
    b: BrowserSession = await load("table_1500.html")
    table, text = await extract_at(b, "Product 0002")
    assert table.columns == COLUMNS
    assert table.rows == expected(b.page.url)
    assert table.name == "t1" and table.pages == 1
    assert re.fullmatch(rf'table "Orders" \[\d+\] on {re.escape(b.page.url)}', table.source)
    assert table.records()[0] == dict(zip(COLUMNS, expected(b.page.url)[0], strict=True))
    assert text.startswith("t1: 1500 rows × 6 columns, 1 page, from table")
    assert "Columns: Name | Price | Quantity | Date | Product | Product link" in text
    assert "1497 more rows" in text and "cut in this summary" not in text
    assert count_tokens(text) < 400  # what the model reads, against ~47k to retype the rows


async def test_cell_text_is_as_shown_and_names_count_up_per_tool(load: Any, servers: Any) -> None:
    b: BrowserSession = await load("table_spans.html")
    text = (await b.snapshot()).text
    tool = ExtractTableTool(b)
    tools = {tool.name: tool}
    first = await run_action(tools, "extract_table", {"index": idx(text, "Read north")})
    second = await run_action(tools, "extract_table", {"index": idx(text, "Read south")})
    assert first.details["table"].name == "t1" and second.details["table"].name == "t2"
    assert second.text_content.startswith("t2: ")
    assert not first.terminate and not first.is_error


async def test_spans_are_expanded_and_hidden_rows_skipped(load: Any) -> None:
    b: BrowserSession = await load("table_spans.html")
    table, _ = await extract_at(b, "Read north")
    url = b.page.url
    assert table.columns == ["Region", "Sales / Q1", "Sales / Q2", "Notes", "Notes link"]
    assert table.rows == [
        ["North", "$1,000", "$1,200", "Read north", urljoin(url, "notes/north.html")],
        ["North", "$2,400 (both)", "$2,400 (both)", "none", ""],  # javascript: is no link
        ["South", "$900", "$950", "Read south", urljoin(url, "/notes/south.html")],  # rowspan=5 ends with its tbody
        ["East", "$300", "$310", "first", ""],
        ["East", "$300", "$320", "second", ""],
        ["East", "all year: $930", "all year: $930", "all year: $930", ""],
        ["Total", "$4,200", "$4,580", "", ""],
    ]
    assert table.source.startswith('table "Sales by region" [')


async def test_aria_grid_and_unnamed_repeated_headers(browser: BrowserSession) -> None:
    page = await browser.ensure_page()
    await page.set_content(
        "<div role=grid id=g><div role=row><span role=columnheader>Name</span><span role=columnheader>Name</span>"
        "<span role=columnheader></span></div>"
        "<div role=row><span role=gridcell>a</span><span role=gridcell aria-colspan=2>b <a href='/x'>x</a></span></div>"
        "<div role=row style='display:none'><span role=gridcell>hidden</span></div>"
        "<div role=row><span role=gridcell>c</span><span role=gridcell>d</span><span role=gridcell>e</span></div></div>"
    )
    cell = await page.query_selector("#g span[role=gridcell]")
    assert cell is not None
    cols, rows = await read_table(page.main_frame, cell)
    base = page.url
    assert cols == ["Name", "Name 2", "Name 2 link", "column 3", "column 3 link"]
    assert rows == [
        ["a", "b x", urljoin(base, "/x"), "b x", urljoin(base, "/x")],
        ["c", "d", "", "e", ""],
    ]


async def test_rows_past_the_cap_are_left_out_and_said(load: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    b: BrowserSession = await load("table_1500.html")
    monkeypatch.setattr(extract_module, "MAX_ROWS", 100)
    monkeypatch.setattr(extract_module, "MAX_CELL", 5)
    table, text = await extract_at(b, "Product 0001")
    assert len(table.rows) == 100
    assert "capped at 100 of 1500 rows" in table.source and "cut at 5 characters" in table.source
    assert table.rows[0][1] == expected(b.page.url)[0][1][:5]
    assert "capped at 100 of 1500 rows" in text


# -- more pages --------------------------------------------------------------------------------------------------
async def test_script_paginated_table_reads_all_pages_then_stops_at_disabled_next(load: Any) -> None:
    b: BrowserSession = await load("table_paged.html")
    one, _ = await extract_at(b, "Shelf 1")
    assert len(one.rows) == 10 and "a next-page control follows: pages>1 reads more pages" in one.source
    table, text = await extract_at(b, "Shelf 1", pages=5)
    url = b.page.url
    assert table.columns == ["Item", "Price", "Shelf", "Shelf link"]
    assert table.rows == [
        [f"Item {i}", f"${i * 1.25:.2f}", f"Shelf {i % 4}", urljoin(url, f"/shelf/{i % 4}")] for i in range(1, 31)
    ]
    assert table.pages == 3
    assert "3 pages via the next-page control" in table.source
    assert "'Next ›' is disabled (last page)" in table.source
    assert text.startswith("t2: 30 rows × 4 columns, 3 pages")
    assert await b.page.evaluate("location.hash") == ""  # the decoy "Next" far from the table was not clicked


async def test_pages_bound_how_far_paging_goes(load: Any) -> None:
    b: BrowserSession = await load("table_paged.html")
    table, _ = await extract_at(b, "Shelf 1", pages=2)
    assert [r[0] for r in table.rows] == [f"Item {i}" for i in range(1, 21)]
    assert table.pages == 2 and "more pages follow (pages=2 reached)" in table.source


async def test_server_paginated_pages_are_followed_across_documents(load: Any) -> None:
    b: BrowserSession = await load("table_pages_1.html")
    table, text = await extract_at(b, "Aachen", pages=10)
    assert table.columns == ["City", "City link", "Population"]
    assert [r[0] for r in table.rows][:6] == ["Aachen", "Bern", "Cork", "Delft", "Évora", "Faro"]
    assert table.rows[4][1] == urljoin(b.page.url, "/city/%C3%89vora")
    assert len(table.rows) == 15 and table.rows[-1] == ["Odense", urljoin(b.page.url, "/city/Odense"), "180,863"]
    assert table.pages == 3
    assert b.page.url.endswith("/table_pages_3.html")
    assert "no next-page control was found" in table.source  # the last page's Next is no control
    assert "The page navigated to" in text


async def test_rows_loaded_on_scroll_are_all_read(load: Any) -> None:
    b: BrowserSession = await load("table_lazy.html")
    first, _ = await extract_at(b, "scrollable")
    assert len(first.rows) == 20  # pages=1 reads what is there
    table, _ = await extract_at(b, "scrollable", pages=10)
    assert table.columns == ["#", "Event"]
    assert table.rows == [[str(i), f"Event number {i}"] for i in range(1, 101)]
    assert table.pages == 5 and "scrolled to the end 4 times" in table.source


# -- repeated items ----------------------------------------------------------------------------------------------
async def test_cards_are_read_with_the_same_fields(load: Any) -> None:
    b: BrowserSession = await load("cards.html")
    table, text = await extract_at(b, "Blue mug")
    base = b.page.url
    assert table.columns == ["image", "title", "price", "rating", "link", "old-price"]
    assert table.records() == [
        {"image": "Red mug", "title": "Red mug", "price": "$12.00", "rating": "4.5 out of 5",
         "link": urljoin(base, "/p/1"), "old-price": ""},
        {"image": "Blue mug", "title": "Blue mug", "price": "$9.50", "rating": "4 out of 5",
         "link": urljoin(base, "/p/2"), "old-price": "$15.00"},
        {"image": "", "title": "Green mug", "price": "$1,099.00", "rating": "",  # alt="image" says nothing
         "link": urljoin(base, "/p/3"), "old-price": ""},
        {"image": "Café mug", "title": "Café mug “Ω”", "price": "$7.25", "rating": "3 out of 5",
         "link": urljoin(base, "/p/4"), "old-price": ""},  # the hidden "Sold out" badge is not shown, not read
        {"image": "Black mug", "title": "Black mug", "price": "$12.00", "rating": "5 out of 5",
         "link": urljoin(base, "/p/5"), "old-price": ""},
        {"image": "White mug", "title": "White mug", "price": "$3.99", "rating": "2 out of 5",
         "link": urljoin(base, "/p/6"), "old-price": ""},
    ]  # fmt: skip
    assert table.source.startswith("list of 6 <div.card> items [")
    assert "Add to cart" not in text


async def test_read_items_from_the_container(browser: BrowserSession) -> None:
    page = await browser.ensure_page()
    await page.set_content(
        "<ol id=r><li class=hit><a href='/a'>Alpha</a><p class=snippet>first</p></li>"
        "<li class=hit><a href='/b'>Beta</a><p class=snippet>second <i>one</i></p></li></ol>"
    )
    container = await page.query_selector("#r")
    assert container is not None
    cols, rows = await read_items(page.main_frame, container)
    assert cols == ["a", "snippet", "link"]
    assert rows == [["Alpha", "first", urljoin(page.url, "/a")], ["Beta", "second one", urljoin(page.url, "/b")]]


# -- a hostile page, errors ----------------------------------------------------------------------------------------
async def test_a_hostile_page_cannot_change_what_is_read(load: Any) -> None:
    b: BrowserSession = await load("hostile_table.html")
    control = await b.page.evaluate(
        "() => [document.body.querySelector('td') === null, document.body.innerText, document.body.textContent,"
        " document.getElementById('prices').rows.length, JSON.stringify([1])]"
    )
    assert control == [True, "HACKED", "HACKED", 1, '{"error":"none"}']  # main-world code is fooled
    table, _ = await extract_at(b, "Beta")
    url = b.page.url
    assert table.columns == ["Fund", "Fund link", "Price"]
    assert table.rows == [
        ["Alpha", urljoin(url, "/funds/a"), "$101.25"],
        ["Beta", urljoin(url, "/funds/b"), "$99.10"],
        ["Gamma", urljoin(url, "/funds/c"), "$1,000.00"],
    ]


async def test_an_index_in_no_table_or_list_is_an_error(load: Any) -> None:
    b: BrowserSession = await load("table_paged.html")
    text = (await b.snapshot()).text
    res = await b.act({"extract_table": {"index": idx(text, "Prev")}})
    assert res.is_error
    assert res.text_content == (
        f"Error: [{idx(text, 'Prev')}]<button disabled id=prev>‹ Prev /> is not in a table or list: there is nothing "
        "to read there."
    )


async def test_a_stale_index_is_an_error(load: Any) -> None:
    b: BrowserSession = await load("table_spans.html")
    text = (await b.snapshot()).text
    await b.page.evaluate("document.getElementById('sales').remove()")
    res = await b.act({"extract_table": {"index": idx(text, "Read north")}})
    assert res.is_error and "is no longer on the page" in res.text_content
    page = b.page
    await page.set_content("<table><tr><td id=c>x</td></tr></table>")
    cell = await page.query_selector("#c")
    assert cell is not None
    await page.evaluate("document.querySelector('table').remove()")
    with pytest.raises(ExtractError, match=r"no longer on the page|could not be reached"):
        await read_table(page.main_frame, cell)


# -- pure parts --------------------------------------------------------------------------------------------------
def test_unique_names_and_the_summary() -> None:
    assert unique(["Price", "", "Price", "Price 2", ""]) == ["Price", "column 2", "Price 2", "Price 2 2", "column 5"]
    t = ExtractedTable("t9", ["a", "b"], [["x" * 70, "y"], ["1", "2"]], "table [1] on http://h/")
    s = t.summary(first=1)
    assert s.splitlines()[2] == "1: " + "x" * 59 + "… | y"
    assert "… 1 more row. Cells over 60 characters are cut in this summary only." in s
    assert t.records() == [{"a": "x" * 70, "b": "y"}, {"a": "1", "b": "2"}]


# -- the table model against an independent expansion --------------------------------------------------------------
TEXT = st.lists(
    st.characters(codec="utf-8") | st.sampled_from([" ", "\n", "\t", "\u00a0", "  ", "\ud800", "\udfff", "é", "Ω"]),
    max_size=8,
).map("".join)


@st.composite
def layouts(draw: st.DrawFn) -> tuple[list[tuple[str, list[list[tuple[int, int, int, int, str]]]]], int]:
    """Row groups ("thead"/"tbody") of a valid layout: cells as (row, col, rowspan, colspan, text) anchored in
    their group, tiling a rows × columns grid without overlap."""
    width = draw(st.integers(1, 5))
    groups = []
    if draw(st.booleans()):
        groups.append(("thead", draw(st.integers(1, 2))))
    groups += [("tbody", draw(st.integers(1, 4))) for _ in range(draw(st.integers(1, 2)))]
    out = []
    for kind, height in groups:
        taken = [[False] * width for _ in range(height)]
        cells = []
        for y in range(height):
            row = []
            for x in range(width):
                if taken[y][x]:
                    continue
                free = next((k for k in range(x, width) if taken[y][k]), width) - x
                cs = draw(st.integers(1, free))
                rs_max = next((k for k in range(y, height) if any(taken[k][x : x + cs])), height) - y
                rs = draw(st.integers(1, rs_max))
                for yy in range(y, y + rs):
                    for xx in range(x, x + cs):
                        taken[yy][xx] = True
                row.append((y, x, rs, cs, draw(TEXT)))
            cells.append(row)
        out.append((kind, cells))
    return out, width


def render_layout(groups: list[tuple[str, list[list[tuple[int, int, int, int, str]]]]]) -> tuple[str, list[str]]:
    html = ["<table id=t>"]
    texts: list[str] = []
    for kind, rows in groups:
        html.append(f"<{kind}>")
        height = len(rows)
        for row in rows:
            html.append("<tr>")
            for y, _, rs, cs, text in row:
                tag = "th" if kind == "thead" else "td"
                span = "0" if rs == height - y and rs > 1 and len(texts) % 2 else str(rs)  # rowspan=0: to the end
                html.append(f"<{tag} data-i={len(texts)} rowspan={span} colspan={cs}></{tag}>")
                texts.append(text)
            html.append("</tr>")
        html.append(f"</{kind}>")
    html.append("</table>")
    return "".join(html), texts


def expected_layout(groups: Any, width: int) -> tuple[list[str], list[list[str]]]:
    def shown(text: str) -> str:  # as JavaScript holds it: a high+low pair is one character, a lone one U+FFFD
        return " ".join(text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace").split())

    head: list[list[str]] = []
    body: list[list[str]] = []
    for kind, rows in groups:
        grid = [[""] * width for _ in rows]
        for row in rows:
            for y, x, rs, cs, text in row:
                for yy in range(y, y + rs):
                    for xx in range(x, x + cs):
                        grid[yy][xx] = shown(text)
        (head if kind == "thead" else body).extend(grid)
    names = []
    for c in range(width):
        parts: list[str] = []
        for r in head:
            if r[c] and (not parts or parts[-1] != r[c]):
                parts.append(r[c])
        names.append(" / ".join(parts))
    return unique(names), body


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(layout=layouts())
async def test_random_layouts_match_an_independent_expansion(browser: BrowserSession, layout: tuple[Any, int]) -> None:
    groups, width = layout
    html, texts = render_layout(groups)
    page = await browser.ensure_page()
    await page.set_content(html)
    fill = json.dumps(texts)  # ASCII: lone surrogates travel as \\ud800 escapes and become lone in the page
    await page.evaluate(f"(() => {{ const T = {fill}; for (const c of document.querySelectorAll('[data-i]')) "
                        "c.textContent = T[+c.dataset.i]; })()")  # fmt: skip
    cell = await page.query_selector("#t td, #t th")
    assert cell is not None
    cols, rows = await read_table(page.main_frame, cell)
    assert (cols, rows) == expected_layout(groups, width)

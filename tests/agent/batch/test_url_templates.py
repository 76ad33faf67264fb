"""One rule for a per-row start page, the same in every front.

A start URL with ``{column}``s is filled per row (the value written for its place: as written at the start or in
the host, percent-encoded in the path, query and fragment) or refused with a sentence naming the placeholder,
whether it was given as ``PageAgent(start_url=...)`` before ``agent.map``, as ``agent.map(..., start_url=...)``,
as ``recipe.map(..., start_url=...)`` or as the terminal's ``map --url`` (``%%agent --each --url``: in
tests/notebook/test_each_url.py). A property test draws templates (placeholders in host, path, query and
fragment, a whole-URL column) and rows (missing columns, empty values, values needing encoding) and holds every
front to the rule; then the cases as a person met them, on real Chromium.

Before: ``PageAgent(start_url="{url}")`` then ``agent.map`` failed every row ("'{url}' is not a URL"), and
``start_url=".../{id}.html"`` opened ``%7Bid%7D.html`` in a single run.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlsplit

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notebook_agent.agent import MapInputError, PageAgent
from notebook_agent.agent.batch.map_runner import MapOptions, plan
from notebook_agent.agent.recipes.recipe import Recipe, RecipeStep
from notebook_agent.agent.recipes.recipe_map import plan_recipe
from notebook_agent.agent.recipes.recipe_pilot import RecipeRows
from notebook_agent.browser.url_template import fill_url
from notebook_agent.browser.urls import URLError, normalize_url
from notebook_agent.cli.main import main as cli_main
from notebook_agent.demo import PRICE_TASK, serve_demo

COLUMNS = ("site", "page", "q", "tag")
#: Values a person's table holds: words, spaces, slashes, query and fragment characters, percent signs, accents.
TEXT = st.text(alphabet="abcXYZ019 -_./?&=#%+üé", min_size=0, max_size=10)
VALUE = st.one_of(TEXT, TEXT, st.none(), st.integers(0, 999), st.sampled_from([3.0, 2.5, float("nan")]))
HOST_VALUE = st.one_of(st.from_regex(r"[a-z0-9][a-z0-9-]{0,6}", fullmatch=True), VALUE)


@dataclass(frozen=True)
class Template:
    """A drawn template and where each of its placeholders stands."""

    text: str
    places: tuple[tuple[str, str], ...]  # (column, place)
    whole: bool  # starts with a whole-URL placeholder
    parts: tuple[str, str, str, str] = ("", "", "", "")  # host, path, query, fragment (not whole)


@st.composite
def templates(draw: st.DrawFn) -> Template:
    if draw(st.booleans()) and draw(st.booleans()):  # a column of whole addresses, maybe with a path after it
        tail = draw(st.sampled_from(["", "about", "{page}"]))
        places: list[tuple[str, str]] = [("site", "whole")] + ([("page", "path")] if tail == "{page}" else [])
        return Template("{site}" + ("/" + tail if tail else ""), tuple(places), True)
    places = []
    host = draw(st.sampled_from(["127.0.0.1:8000", "shop.example.com", "{site}.example.com", "shop.{site}"]))
    if "{" in host:
        places.append(("site", "host"))
    path = ""
    for _ in range(draw(st.integers(0, 3))):
        piece = draw(st.sampled_from(["items", "{page}", "{page}.html", "p-{tag}"]))
        path += "/" + piece
        places += [(c, "path") for c in ("page", "tag") if "{" + c + "}" in piece]
    query = draw(st.sampled_from(["", "?q={q}", "?q={q}&x=1", "?x={tag}&q=a"]))
    places += [(c, "query") for c in ("q", "tag") if "{" + c + "}" in query]
    fragment = draw(st.sampled_from(["", "#{tag}", "#top"]))
    places += [("tag", "fragment")] if "{" in fragment else []
    text = f"http://{host}{path or '/'}{query}{fragment}"
    return Template(text, tuple(places), False, (host, path or "/", query[1:], fragment[1:]))


@st.composite
def tables(draw: st.DrawFn, template: Template) -> list[dict[str, Any]]:
    """Rows over some of the columns (a column the template names may be absent from every row, or from one)."""
    present = draw(st.lists(st.sampled_from(COLUMNS), unique=True, min_size=1))
    rows = []
    for _ in range(draw(st.integers(1, 3))):
        row: dict[str, Any] = {}
        for column in present:
            if draw(st.integers(0, 9)) == 0:
                continue  # this row lacks it
            is_host = any(c == column and p == "host" for c, p in template.places)
            row[column] = draw(HOST_VALUE if is_host else VALUE)
        if template.whole and "site" in row:  # an address, a word (a URL or not), or nothing
            row["site"] = draw(
                st.one_of(
                    st.sampled_from(["http://127.0.0.1:8000", "https://example.org/base", "", None]),
                    st.from_regex(r"[a-z0-9.]{1,8}", fullmatch=True),
                )
            )
        rows.append(row)
    return rows


def text_of(value: Any) -> str | None:
    if value is None or (isinstance(value, float) and value != value):
        return None
    text = str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)
    return text if text.strip() else None


def expected_problem(template: Template, rows: list[dict[str, Any]]) -> tuple[str, str] | None:
    """(the placeholder, the row or "column") the rule must refuse first, or None when every row fills."""
    columns = {c for row in rows for c in row}
    for column, _ in template.places:
        if column not in columns:
            return "{" + column + "}", "column"
    for i, row in enumerate(rows):
        for column, place in template.places:
            text = text_of(row.get(column))
            if text is None:
                return "{" + column + "}", f"Row {i}"
            if place == "host" and not all(ch.isalnum() or ch in "._-" for ch in text):
                return "{" + column + "}", f"Row {i}"
        if template.whole:  # the address a whole-URL column gives is judged as any typed address is
            try:
                normalize_url(whole_address(template, row))
            except URLError:
                return template.text, f"Row {i}"
    return None


def whole_address(template: Template, row: dict[str, Any]) -> str:
    tail = template.text.removeprefix("{site}")
    return str(text_of(row["site"])).strip() + tail.replace("{page}", quote(str(text_of(row.get("page"))), safe="/"))


def check_filled(template: Template, row: dict[str, Any], url: str) -> None:
    """The filled address reads back, part by part, as the template with the row's values."""
    parts = urlsplit(url)
    values = {c: text_of(row.get(c)) for c, _ in template.places}
    if template.whole:
        assert url == normalize_url(whole_address(template, row))
        return
    host, path, query, fragment = template.parts
    assert parts.hostname == host.split(":", 1)[0].format(site=values.get("site")).lower()
    assert unquote(parts.path) == path.format(page=values.get("page"), tag=values.get("tag"))
    wanted = [(k, v.format(q=values.get("q"), tag=values.get("tag"))) for k, v in parse_qsl(query)]
    assert parse_qsl(parts.query, keep_blank_values=True) == wanted
    assert unquote(parts.fragment) == fragment.format(tag=values.get("tag"))


OUT = tempfile.TemporaryDirectory(prefix="url-templates-")


def recipe() -> Recipe:
    return Recipe(task="Look", slots=[], steps=[RecipeStep(index=1, action="done", args={"text": "ok"})])


def fronts(template: str, rows: list[dict[str, Any]]) -> dict[str, list[str | None] | str]:
    """Each front's start pages for the rows (or its refusal's words), without opening a browser."""
    out: dict[str, list[str | None] | str] = {}

    def starts(name: str, work: Any) -> None:
        try:
            out[name] = work()
        except (MapInputError, URLError) as exc:
            out[name] = str(exc)

    def by_recipe() -> list[str | None]:
        done = plan_recipe(recipe(), rows, PageAgent(model="demo"), MapOptions(start_url=template))
        pilots = [RecipeRows(recipe())(r.values, start=r.start_url) for r in done.rows]
        return [p.start_url for p in pilots]

    def by_map(start_url: str | None, options: MapOptions) -> list[str | None]:
        return [r.start_url for r in plan(agent(start_url), "Look", rows, options).rows]

    starts("PageAgent(start_url=)", lambda: by_map(template, MapOptions()))
    starts("agent.map(start_url=)", lambda: by_map(None, MapOptions(start_url=template)))
    starts("recipe.map(start_url=)", by_recipe)
    return out


def agent(start_url: str | None) -> PageAgent:
    return PageAgent(model="demo", start_url=start_url, screenshots=False)


def terminal_refusal(template: str, rows: list[dict[str, Any]]) -> str:
    """What ``notebook-agent map --url TEMPLATE`` says about rows the rule refuses (before any browser starts)."""
    table = Path(OUT.name) / "rows.jsonl"
    table.write_text("".join(json.dumps(r) + "\n" for r in rows))
    said = io.StringIO()
    argv = ["map", "Look", "--rows", str(table), "--out", str(Path(OUT.name) / "out.csv"), "--url", template]
    with contextlib.redirect_stderr(said):
        code = cli_main([*argv, "--model", "demo"])
    assert code == 2, said.getvalue()
    return said.getvalue().removeprefix("error: ").strip()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_every_front_fills_or_refuses_a_start_url_template_by_one_rule(data: st.DataObject) -> None:
    template = data.draw(templates())
    rows = data.draw(tables(template))
    seen = fronts(template.text, rows)
    problem = expected_problem(template, rows)
    if problem is not None:
        placeholder, where = problem
        said = set(seen.values())
        assert len(said) == 1 and all(isinstance(s, str) for s in said), seen
        message = str(next(iter(said)))
        assert placeholder in message, message
        assert (
            ("not a column" in message or "not columns" in message)
            if where == "column"
            else message.startswith(f"{where}: ")
        ), message
        assert terminal_refusal(template.text, rows) == message
        return
    filled = [fill_url(template.text, row) for row in rows]
    for name, got in seen.items():
        assert got == filled, (name, got, filled)
    for row, url in zip(rows, filled, strict=True):
        check_filled(template, row, url)


@pytest.mark.parametrize(
    "url,fixed",
    [
        ("https://{domain}/about", "https://{domain}/about"),
        ("http://shop.test/{id}.html", "http://shop.test/{id}.html"),
        ("{url}", "{url}"),
    ],
)
def test_a_single_run_refuses_a_placeholder_naming_it(url: str, fixed: str) -> None:
    result = asyncio.run(PageAgent(model="demo", start_url=url, screenshots=False).run("Look around."))
    assert result.status == "error"
    name = fixed.split("{", 1)[1].split("}", 1)[0]
    assert result.error == (
        f"The start URL {url!r} has the placeholder {{{name}}}, which only a map fills, one row at a time "
        "(agent.map, %%agent --each, notebook-agent map): give a whole address to run once."
    )
    assert not result.steps


def test_the_agents_own_start_url_is_each_rows_start_page() -> None:
    """``PageAgent(start_url="{url}")`` then ``agent.map``: each row opens its own page (the path of one, the
    search of another), and a row whose value would need escaping opens it escaped."""
    with serve_demo() as shop:
        rows = [
            {"product": "Lumen 400 Headlamp", "url": shop.url},
            {"product": "Cascade Hiking Boots", "url": shop.page("search.html?q=boots")},
        ]
        mapped = asyncio.run(agent("{url}").map(PRICE_TASK, rows, concurrency=2))
        assert [r.start_url for r in mapped.rows] == [shop.url, shop.page("search.html?q=boots")]
        assert [r.status for r in mapped.rows] == ["completed", "completed"], [r.error for r in mapped.rows]
        assert "34.5" in mapped.rows[0].result.answer  # type: ignore[union-attr]
        searched = asyncio.run(
            agent(shop.page("search.html?q={what}")).map(
                PRICE_TASK, [{"product": "Lumen 400 Headlamp", "what": "a&b c"}]
            )
        )
        assert searched.rows[0].start_url == shop.page("search.html?q=a%26b%20c")

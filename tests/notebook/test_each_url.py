"""``%%agent --each ROWS --url ...``: each row's start page, by the rule of every front (browser/url_template.py).

IPython fills ``{name}`` in a magic's line from the notebook before the magic sees it, so ``--url {page}`` with a
column ``page`` said "'page' is not defined in the notebook". With ``--each``, a ``{column}`` of the rows now
stays for each row (as in the cell body), a ``{name}`` that is no column is still the notebook's, and a
placeholder that is neither is refused naming it. A property test holds the cell's refusals and its start
template to ``agent.map``'s over drawn templates and rows.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import pytest_asyncio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from IPython.core.interactiveshell import InteractiveShell
from IPython.core.magic_arguments import parse_argstring

from notebook_agent.agent import MapInputError, MapResult, PageAgent
from notebook_agent.agent.batch.map_runner import MapOptions, plan
from notebook_agent.demo import PRICE_TASK, demo_url
from notebook_agent.notebook.magics import AgentMagics, cell_options
from notebook_agent.notebook.map_view import MapRun
from notebook_agent.notebook.runtime import STATE


@pytest.fixture(scope="module")
def shell(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InteractiveShell]:
    sh = InteractiveShell.instance()
    sh.run_line_magic("load_ext", "notebook_agent")
    old = STATE.config.runs_dir
    STATE.config.runs_dir = str(tmp_path_factory.mktemp("runs"))
    yield sh
    STATE.config.runs_dir = old


@pytest_asyncio.fixture(loop_scope="session", autouse=True)
async def _close_kernel_browser() -> AsyncIterator[None]:
    yield
    STATE.stop_all()
    await STATE.close_browser()


async def test_a_column_of_pages_is_each_rows_start_page(shell: InteractiveShell) -> None:
    shop = demo_url()
    shell.user_ns.update(
        pages=[
            {"product": "Lumen 400 Headlamp", "page": shop},
            {"product": "Pebble Wireless Earbuds", "page": demo_url("search.html?q=earbuds")},
        ],
        page="not this",  # a notebook variable named like the column must not fill it
        shop=shop,
    )
    shell.run_cell_magic("agent", "--model demo --each pages --url {page} --out by_page", PRICE_TASK)
    run = shell.user_ns["by_page"]
    assert isinstance(run, MapRun), run
    result = await run
    assert isinstance(result, MapResult), run.error
    assert [r.start_url for r in result.rows] == [shop, demo_url("search.html?q=earbuds")]
    assert [r.status for r in result.rows] == ["completed", "completed"], [r.error for r in result.rows]
    # a notebook variable that is no column still fills the line, and a column after it is the row's
    shell.user_ns["pages"] = [{"product": "Lumen 400 Headlamp", "path": "search.html"}]
    shell.run_cell_magic("agent", "--model demo --each pages --url {shop}{path} --out by_path", PRICE_TASK)
    result = await shell.user_ns["by_path"]
    assert result.rows[0].start_url == demo_url("search.html") and result.rows[0].status == "completed"


def test_a_placeholder_neither_a_column_nor_a_variable_is_named(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    shell.user_ns["pages"] = [{"product": "Lumen 400 Headlamp", "page": demo_url()}]
    shell.user_ns.pop("pge", None)
    runs = len(STATE.runs)
    shell.run_cell_magic("agent", "--model demo --each pages --url {pge}", PRICE_TASK)
    assert capsys.readouterr().out == (
        "%%agent: The start URL template names {pge}, which is not a column; the columns are: product, page.\n"
    )
    assert len(STATE.runs) == runs


TEMPLATES = st.sampled_from(
    ["{page}", "http://127.0.0.1:8000/{page}", "https://{site}/", "http://x.test/?q={page}", "https://{site}/{page}"]
)
ROWS = st.lists(
    st.dictionaries(
        st.sampled_from(["page", "site", "product"]),
        st.one_of(st.none(), st.text("ab /?&ü.", max_size=6), st.sampled_from(["shop.test", "http://x.test/a"])),
    ),
    min_size=1,
    max_size=3,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(template=TEMPLATES, rows=ROWS)
def test_the_cell_fills_and_refuses_as_agent_map_does(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str], template: str, rows: list[dict[str, Any]]
) -> None:
    """The line as the cell reads it keeps the rows' columns, and the cell refuses exactly what ``agent.map`` refuses,
    in the same words; what it accepts, it gives the map as the agent's start page."""
    from notebook_agent.notebook.magics import expand_line

    capsys.readouterr()
    shell.user_ns.pop("page", None)
    shell.user_ns.update(rows=rows, site="notebook.test")  # a variable fills what is no column
    line = f"--model demo --each rows --url {template}"
    columns = {c for r in rows for c in r}
    expanded = expand_line(line, shell.user_ns)
    if "site" not in columns:
        template = template.replace("{site}", "notebook.test")
    assert expanded == f"--model demo --each rows --url {template}"
    try:
        plan(PageAgent(model="demo"), "Look", rows, MapOptions(start_url=template))
        refusal = None
    except MapInputError as exc:
        refusal = str(exc)
    if refusal is None:
        opts = cell_options(parse_argstring(AgentMagics.agent, expanded), shell.user_ns)
        assert opts.url == template  # the agent's start page: agent.map fills it per row
        return
    runs = len(STATE.runs)
    shell.run_cell_magic("agent", line, "Look")
    assert capsys.readouterr().out == f"%%agent: {refusal}\n"
    assert len(STATE.runs) == runs

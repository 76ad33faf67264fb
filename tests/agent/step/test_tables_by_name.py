"""A run reads a table with nothing interactive in it by the name its state gives it, on real Chromium with a
scripted model: the state names the tables, a schema-constrained model may name only those, the table read is
the run's data; a run that cannot read tables is not shown their names."""

from __future__ import annotations

import re
from typing import Any

from notebook_agent.agent import PageAgent
from notebook_agent.agent.prompt.agent_output import MACRO_NAME, agent_output
from notebook_agent.browser import BrowserSession
from notebook_agent.core.messages import UserMessage
from notebook_agent.core.model import Context
from notebook_agent.llm.scripted import ScriptedModel
from tests.browser.conftest import MADE, Servers
from tests.browser.extract.test_named_tables import TWO_TABLES


def state_of(ctx: Context) -> str:
    msg = ctx.messages[-1]
    return msg.text if isinstance(msg, UserMessage) else ""


async def test_a_plain_table_is_read_by_the_name_the_state_gives(browser: BrowserSession, servers: Servers) -> None:
    MADE["two-tables.html"] = TWO_TABLES
    seen: list[str] = []

    def read(ctx: Context) -> Any:
        seen.append(state_of(ctx))
        return agent_output("extract_table", {"table": "T2"})

    model = ScriptedModel([read, agent_output("done", {"text": "Read t1.", "success": True})])
    agent = PageAgent(model=model, browser=browser, start_url=servers.url("made/two-tables.html"), screenshots=False)
    result = await agent.run("Read the table of cities")
    assert result.status == "completed", (result.error, [s.result for s in result.steps])
    assert "[Table T1]\nPlanets" in seen[0] and "[Table T2]\nCity | Population" in seen[0]
    assert re.search(r"\[\d+\]<", seen[0]) is None  # no element has an index: the name is the only way in
    table = result.tables["t1"]
    assert table.rows == [["Bern", "134,591"], ["Cork", "224,004"], ["Évora", "56,596"]]
    assert list(result.to_pandas()["City"]) == ["Bern", "Cork", "Évora"]
    # a schema-constrained model may name only the tables this state names
    context, _ = model.requests[0]
    (spec,) = [t for t in context.tools if t.name == MACRO_NAME]
    assert spec.decoding is not None
    members = spec.decoding["properties"]["action"]["anyOf"]
    (extract,) = [m["properties"]["extract_table"] for m in members if "extract_table" in m["properties"]]
    assert extract["properties"]["table"]["enum"] == ["T1", "T2"]


async def test_a_run_without_extract_table_is_not_shown_table_names(browser: BrowserSession, servers: Servers) -> None:
    MADE["two-tables.html"] = TWO_TABLES
    seen: list[str] = []

    def answer(ctx: Context) -> Any:
        seen.append(state_of(ctx))
        return agent_output("done", {"text": "Bern", "success": True})

    agent = PageAgent(
        model=ScriptedModel([answer]),
        browser=browser,
        start_url=servers.url("made/two-tables.html"),
        custom_tools={"extract_table": None},
        screenshots=False,
    )
    result = await agent.run("Which city comes first?")
    assert result.status == "completed"
    assert "City | Population" in seen[0] and "[Table" not in seen[0]

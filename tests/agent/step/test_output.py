"""Typed results: ``PageAgent(output=T)`` — the answer's schema on every output path, checked, fed back, kept."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any, TypedDict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from notebook_agent.agent import PageAgent, RunFinished, load_run
from notebook_agent.agent.evaluate import Variant, evaluate
from notebook_agent.agent.prompt.agent_output import agent_output
from notebook_agent.agent.runs.run_data import field_diff
from notebook_agent.agent.runs.run_file import compare_runs
from notebook_agent.agent.step.typed_output import OutputSpec, OutputTypeError, number_as_shown
from notebook_agent.browser import BrowserSession
from notebook_agent.llm.scripted import ScriptedModel
from tests.browser.conftest import Servers
from tests.llm.server import ScriptedServer, sse_reply
from tests.llm.wire import AnthropicWire, Call, ChatWire, ResponsesWire, Wire, split


class Product(BaseModel):
    name: str
    price: float


class Pick(TypedDict):
    name: str
    rank: int


@dataclasses.dataclass
class Summary:
    title: str
    count: int


def done(data: Any, *, success: bool = True, text: str = "found them", **extra: Any) -> Any:
    return agent_output("done", {"text": text, "success": success, "data": data, **extra})


async def run(browser: BrowserSession, script: list[Any], output: Any, **kw: Any) -> Any:
    model = ScriptedModel(script)
    agent = PageAgent(model=model, browser=browser, output=output, **kw)
    events = [e async for e in agent.stream("find the products")]
    return next(e for e in events if isinstance(e, RunFinished)).result, model


async def test_a_list_of_models_comes_back_typed_and_as_a_dataframe(browser: BrowserSession) -> None:
    rows = [{"name": "Lamp", "price": 12.5}, {"name": "Desk", "price": "99"}]
    result, model = await run(browser, [done(rows)], list[Product])
    assert result.status == "completed" and result.success, result.error
    assert result.output == [Product(name="Lamp", price=12.5), Product(name="Desk", price=99.0)]
    assert result.output_type == "list[Product]" and result.text == "found them"
    frame = result.to_pandas()
    assert list(frame.columns) == ["name", "price"] and frame["price"].tolist() == [12.5, 99.0]
    # the model was offered the schema inside done
    spec = model.requests[0][0].tools[0].parameters
    member = next(m for m in spec["properties"]["action"]["anyOf"] if "done" in m["properties"])
    data = member["properties"]["done"]["properties"]["data"]
    assert data["type"] == "array" and set(data["items"]["properties"]) == {"name", "price"}


async def test_a_wrong_answer_is_sent_back_naming_the_field(browser: BrowserSession) -> None:
    bad = [{"name": "Lamp", "price": "cheap"}]
    result, model = await run(browser, [done(bad), done([{"name": "Lamp", "price": 3}])], list[Product])
    assert result.status == "completed" and result.output == [Product(name="Lamp", price=3)]
    first = result.steps[0]
    assert first.is_error and "data/0/price" in first.result and "cheap" in first.result
    second_state = model.requests[1][0].messages[-1].text
    assert "data/0/price" in second_state  # the model reads what was wrong


async def test_an_answer_that_never_fits_ends_the_run_naming_the_field(browser: BrowserSession) -> None:
    bad = done([{"name": "Lamp"}])
    result, _ = await run(browser, [bad, bad], list[Product], max_failures=2)
    assert result.status == "failed" and not result.success and result.output is None
    assert result.error is not None and "data/0/price" in result.error and "Field required" in result.error


async def test_a_failed_run_may_end_without_a_valid_answer(browser: BrowserSession) -> None:
    result, _ = await run(browser, [done(None, success=False, text="no such products")], list[Product])
    assert result.status == "failed" and result.text == "no such products" and result.output is None
    assert len(result.steps) == 1


async def test_success_without_data_is_refused(browser: BrowserSession) -> None:
    result, _ = await run(browser, [agent_output("done", {"text": "ok", "success": True}), done([])], list[Product])
    assert "needs the answer in data" in result.steps[0].result and result.output == []


@pytest.mark.parametrize(
    ("output", "data", "expected"),
    [
        (Pick, {"name": "a", "rank": "2"}, {"name": "a", "rank": 2}),
        (Summary, {"title": "t", "count": 3}, Summary("t", 3)),
        (list[Summary], [{"title": "t", "count": 1}], [Summary("t", 1)]),
        (
            {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
            {"n": 4},
            {"n": 4},
        ),
    ],
)
async def test_typeddicts_dataclasses_and_json_schemas(
    browser: BrowserSession, output: Any, data: Any, expected: Any
) -> None:
    result, _ = await run(browser, [done(data)], output)
    assert result.status == "completed" and result.output == expected, result.steps[0].result


async def test_a_json_schema_answer_is_checked_too(browser: BrowserSession) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    result, _ = await run(browser, [done({"n": "x"}), done({"n": 1})], schema)
    assert "data/n" in result.steps[0].result and result.output == {"n": 1}


async def test_a_secret_never_leaves_in_an_answer(browser: BrowserSession, servers: Servers) -> None:
    script = [done([{"name": "hunter2-value", "price": 1}]), done([{"name": "Lamp", "price": 1}])]
    result, _ = await run(
        browser,
        script,
        list[Product],
        secrets={"pw": "hunter2-value"},
        allowed_domains=[servers.main],
    )
    assert "contains a secret" in result.steps[0].result
    assert result.output == [Product(name="Lamp", price=1)]
    assert "hunter2-value" not in json.dumps([s.args for s in result.steps])


async def test_the_run_file_keeps_the_answer(browser: BrowserSession, tmp_path: Path) -> None:
    await run(browser, [done([{"name": "Lamp", "price": 2}])], list[Product], runs_dir=str(tmp_path))
    loaded = load_run(next(tmp_path.glob("*.jsonl")))
    assert loaded.output == [{"name": "Lamp", "price": 2.0}] and loaded.output_type == "list[Product]"
    assert list(loaded.to_pandas()["name"]) == ["Lamp"]


def test_what_cannot_be_an_answer_type_is_said() -> None:
    class Node(BaseModel):
        children: list[Node]

    with pytest.raises(OutputTypeError, match="refers to itself"):
        OutputSpec(Node)
    with pytest.raises(OutputTypeError, match="not a valid JSON Schema"):
        OutputSpec({"type": "nonsense"})
    with pytest.raises(OutputTypeError, match="cannot be an answer's type"):
        OutputSpec(object())


@pytest.mark.parametrize(
    ("shown", "number"),
    [
        ("$1,234.50", "1234.50"),
        ("1 234", "1234"),
        ("(12)", "-12"),
        ("-3.5 %", "-3.5"),
        ("€ 7", "7"),
        ("12 USD", "12"),
        ("n/a", "n/a"),
        ("1.2.3", "1.2.3"),
        ("", ""),
        ("Model 3", "Model 3"),
    ],
)
def test_numbers_as_pages_show_them(shown: str, number: str) -> None:
    assert number_as_shown(shown) == number


WIRES = [ChatWire(), ResponsesWire(), AnthropicWire()]


@pytest.mark.parametrize("wire", WIRES, ids=lambda w: w.name)
async def test_typed_answers_through_each_protocol(browser: BrowserSession, wire: Wire) -> None:
    """The real SDK clients, their wire formats from a local server: the schema goes out inside the one
    forced function, the answer comes back in fragments, a wrong one is sent back, the right one is kept."""
    server = ScriptedServer().start()
    try:

        def reply(data: Any, call_id: str) -> Any:
            payload = json.dumps(
                {
                    "evaluation_previous_goal": "ok",
                    "memory": "",
                    "next_goal": "finish",
                    "action": {"done": {"text": "ok", "success": True, "data": data}},
                }
            )
            return sse_reply(wire.tool_calls([Call(call_id, "AgentOutput", split(payload, 9))]))

        server.replies.extend([reply([{"name": "A"}], "c1"), reply([{"name": "A", "price": 1.5}], "c2")])
        agent = PageAgent(model=wire.model(server.url, max_retries=0), browser=browser, output=list[Product])
        result = await agent.run("find them")
    finally:
        server.stop()
    assert result.status == "completed" and result.output == [Product(name="A", price=1.5)], result.error
    assert "data/0/price" in result.steps[0].result
    body = json.dumps(server.requests[0].body)
    assert '"price"' in body and '"data"' in body


async def test_typed_answers_through_schema_constrained_json(browser: BrowserSession) -> None:
    """The ``json_schema`` output mode (local servers): the answer's schema is inside ``response_format``."""
    wire = ChatWire()
    server = ScriptedServer().start()
    try:
        payload = json.dumps(
            {
                "evaluation_previous_goal": "ok",
                "memory": "",
                "next_goal": "finish",
                "action": {"done": {"text": "ok", "success": True, "data": [{"name": "B", "price": 2}]}},
            }
        )
        server.replies.append(sse_reply(wire.text_items(split(payload, 11))))
        model = wire.model(server.url, max_retries=0, output_mode="json_schema")
        result = await PageAgent(model=model, browser=browser, output=list[Product]).run("find them")
    finally:
        server.stop()
    assert result.output == [Product(name="B", price=2)], (result.error, [s.result for s in result.steps])
    assert result.output_mode == "json_schema"
    fmt = server.requests[0].body["response_format"]
    assert fmt["type"] == "json_schema" and '"price"' in json.dumps(fmt["json_schema"]["schema"])


# -- comparing answers: evaluation checks and %agent compare ---------------------------------------------------
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(json_values, json_values)
def test_field_diff_is_empty_exactly_for_equal_answers(a: Any, b: Any) -> None:
    assert field_diff(a, a) == []
    diffs = field_diff(a, b, limit=1000)
    same = json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True) or _numerically_equal(a, b)
    assert (diffs == []) == same, (a, b, diffs)


def _numerically_equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_numerically_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_numerically_equal(a[k], b[k]) for k in a)
    return bool(a == b)


def test_field_diff_names_the_fields() -> None:
    a = [{"name": "Aria", "price": 54.99}, {"name": "B", "price": 1}]
    b = [{"name": "Aria", "price": 59.99}]
    assert field_diff(a, b) == ["output: 2 items ≠ 1 items", "output/0/price: 54.99 ≠ 59.99"]
    assert field_diff({"a": 1}, {"b": 1}) == ["output/a: 1 ≠ missing", "output/b: missing ≠ 1"]
    assert field_diff(Product(name="x", price=2), {"name": "x", "price": 2.0}) == []


async def test_an_evaluation_checks_the_answer_field_by_field() -> None:
    suite = {
        "name": "typed",
        "tasks": [
            {
                "id": "pick",
                "task": "pick a product",
                "output": {"type": "object", "properties": {"name": {"type": "string"}, "price": {"type": "number"}}},
                "check": {"output": {"name": "Lamp", "price": 12}},
            }
        ],
    }

    def factory(variant: Variant, task: Any) -> ScriptedModel:
        price = 12 if variant.name == "right" else 13
        return ScriptedModel([done({"name": "Lamp", "price": price})])

    report = await evaluate(suite, [Variant("right"), Variant("wrong")], model_factory=factory, concurrency=1)
    rows = {r.variant: r for r in report.rows}
    assert rows["right"].passed and rows["right"].failures == []
    assert not rows["wrong"].passed and rows["wrong"].failures == ["answer differs: output/price: 13 ≠ 12"]


async def test_compare_shows_answers_field_by_field(browser: BrowserSession) -> None:
    a, _ = await run(browser, [done([{"name": "Lamp", "price": 2}])], list[Product])
    b, _ = await run(browser, [done([{"name": "Lamp", "price": 3}])], list[Product])
    rows = compare_runs(a, b).summary()
    assert ("answer/0/price", "2.0", "3.0") in rows
    assert ("answer", "same", "same") in compare_runs(a, a).summary()


# -- a table read exactly becomes the typed answer --------------------------------------------------------------
class Order(BaseModel):
    name: str
    price: float
    quantity: int
    date: str
    url: str


async def test_a_1500_row_table_becomes_the_typed_answer_exactly(
    browser: BrowserSession, servers: Servers, tmp_path: Path
) -> None:
    """Two steps: read the table, answer with it by name. The DataFrame equals the source data; the model read
    a short summary, never the rows; the run file keeps the table."""
    from tests.browser.make_tables import source

    def read(ctx: Any) -> Any:  # the first element of the page (a link in the table's first row)
        first = re.search(r"^\s*\*?\[(\d+)\]<", ctx.messages[-1].text, re.MULTILINE)
        assert first is not None
        return agent_output("extract_table", {"index": int(first.group(1))})

    script = [read, done(None, table="t1", columns={"url": "Product link"})]
    result, model = await run(
        browser, script, list[Order], start_url=servers.url("table_1500.html"), runs_dir=str(tmp_path)
    )
    assert result.status == "completed", (result.error, [s.result[:200] for s in result.steps])
    frame = result.to_pandas()
    rows = source()
    assert len(frame) == 1500 and list(frame.columns) == ["name", "price", "quantity", "date", "url"]
    assert frame["name"].tolist() == [r[0] for r in rows]
    assert frame["price"].tolist() == [float(r[1].strip("$").replace(",", "")) for r in rows]
    assert frame["quantity"].tolist() == [int(r[2]) for r in rows]
    assert frame["url"].tolist() == [servers.main + r[5] for r in rows]
    read_result = result.steps[0].result  # what the model was told of the table: a summary, not the table
    assert read_result.startswith("t1: 1500 rows × 6 columns") and len(read_result) < 2_000
    assert read_result in model.requests[1][0].messages[-1].text
    loaded = load_run(next(tmp_path.glob("*.jsonl")))
    assert loaded.tables["t1"].rows[-1][0] == rows[-1][0] and len(loaded.tables["t1"].rows) == 1500

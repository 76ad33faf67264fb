"""The AgentOutput macro tool: its schema and the repair of real models' output."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel, Field

from notebook_agent.agent.prompt.agent_output import MACRO_NAME, macro_spec, parse_output, with_indices
from notebook_agent.agent.safety.approval import ApprovalRequest, check_policy, decide, risk_reason
from notebook_agent.core.abort import AbortSignal
from notebook_agent.core.messages import AssistantMessage, TextContent, ToolCall
from notebook_agent.core.tools import Tool, ToolCallContext


class ClickArgs(BaseModel):
    index: int = Field(ge=0)


class WaitArgs(BaseModel):
    seconds: float = Field(default=1, ge=1, le=10)


class _T(Tool):
    def __init__(self, name: str, params: type[BaseModel]) -> None:
        self.name, self.description, self.parameters = name, f"{name} description", params

    async def execute(self, args: Any, ctx: ToolCallContext) -> str:
        return "ok"


TOOLS: dict[str, Tool] = {
    "wait": _T("wait", WaitArgs),
    "click_element_by_index": _T("click_element_by_index", ClickArgs),
}


def msg(*, calls: list[ToolCall] | None = None, text: str = "") -> AssistantMessage:
    content: list[Any] = [TextContent(text=text)] if text else []
    return AssistantMessage(content=[*content, *(calls or [])])


def macro(**args: Any) -> AssistantMessage:
    return msg(calls=[ToolCall(id="c1", name=MACRO_NAME, arguments=args)])


def test_schema_is_one_forced_function_with_a_union_of_one_key_actions() -> None:
    spec = macro_spec(list(TOOLS.values()))
    assert spec.name == "AgentOutput" and spec.description == "You MUST call this tool every step!"
    members = spec.parameters["properties"]["action"]["anyOf"]
    assert [next(iter(m["properties"])) for m in members] == ["wait", "click_element_by_index"]
    click = members[1]
    assert click["required"] == ["click_element_by_index"] and "additionalProperties" not in click
    decoding = with_indices(spec, [0]).decoding
    assert decoding is not None  # where decoding is constrained, an action is one key
    assert all(m["additionalProperties"] is False for m in decoding["properties"]["action"]["anyOf"])
    assert click["properties"]["click_element_by_index"] == {
        "type": "object",
        "properties": {"index": {"type": "integer"}},
        "required": ["index"],
    }
    assert json.dumps(spec.parameters) == json.dumps(macro_spec(list(TOOLS.values())).parameters)


def test_well_formed_output() -> None:
    out = parse_output(
        macro(
            evaluation_previous_goal="ok", memory="m", next_goal="g", action={"click_element_by_index": {"index": 3}}
        ),
        TOOLS,
    )
    assert out.call is not None and out.call.name == "click_element_by_index" and out.call.arguments == {"index": 3}
    assert out.call.id == "c1"
    assert (out.evaluation_previous_goal, out.memory, out.next_goal) == ("ok", "m", "g")
    assert out.repairs == [] and out.error is None


@pytest.mark.parametrize(
    ("message", "name", "args", "repair"),
    [
        # the action called directly as a tool
        (
            msg(calls=[ToolCall(id="x", name="click_element_by_index", arguments={"index": 2})]),
            "click_element_by_index",
            {"index": 2},
            "directly",
        ),
        # JSON in the text, with and without envelope
        (msg(text='Sure! {"click_element_by_index": {"index": 4}}'), "click_element_by_index", {"index": 4}, "JSON"),
        (
            msg(text='```json\n{"name": "AgentOutput", "arguments": {"memory": "x", "action": {"wait": {}}}}\n```'),
            "wait",
            {},
            "JSON",
        ),
        # double-encoded action
        (macro(action=json.dumps({"wait": {"seconds": 2}})), "wait", {"seconds": 2}, None),
        # a list of one action
        (macro(action=[{"wait": {"seconds": 2}}]), "wait", {"seconds": 2}, "list"),
        # a bare value for a one-field action
        (macro(action={"click_element_by_index": 7}), "click_element_by_index", {"index": 7}, "bare value"),
        # name/arguments style
        (
            macro(action={"name": "click_element_by_index", "arguments": {"index": 1}}),
            "click_element_by_index",
            {"index": 1},
            "'name'",
        ),
    ],
)
def test_repairs(message: AssistantMessage, name: str, args: dict[str, Any], repair: str | None) -> None:
    out = parse_output(message, TOOLS)
    assert out.error is None, out.error
    assert out.call is not None and out.call.name == name and out.call.arguments == args
    if repair:
        assert any(repair in r for r in out.repairs), out.repairs


def test_a_list_of_several_actions_runs_the_first_and_says_so() -> None:
    out = parse_output(macro(action=[{"wait": {}}, {"click_element_by_index": {"index": 1}}]), TOOLS)
    assert out.call is not None and out.call.name == "wait"
    assert out.repairs == ["sent 2 actions; only the first was run"]


@pytest.mark.parametrize(
    ("message", "error"),
    [
        (msg(text="I will click the button now."), 'No AgentOutput call in your output (you wrote: "I will click'),
        (msg(), "No AgentOutput call in your output. Call AgentOutput with one action."),
        (macro(action={"fly": {}}), 'Unknown action "fly". Available: wait, click_element_by_index'),
        (macro(memory="x"), "No action given."),
        (macro(action={"wait": {}, "click_element_by_index": {"index": 1}}), "Exactly one action per step"),
        (msg(calls=[ToolCall(id="x", name="search_web", arguments={})]), 'Unknown function "search_web"'),
        (macro(action="click"), '"action" must be an object'),
    ],
)
def test_unrepairable_output_is_a_short_error(message: AssistantMessage, error: str) -> None:
    out = parse_output(message, TOOLS)
    assert out.call is None and out.error is not None and out.error.startswith(error), out.error


def test_approval_policies() -> None:
    delete = ApprovalRequest(
        "click_element_by_index",
        {"index": 4},
        "http://shop.test/account",
        {"tag": "button", "text": "Delete account", "attributes": {}},
    )
    assert decide("auto", delete) == "allow"
    assert decide("ask-risky", delete) == "ask" and "delete" in delete.reason
    assert decide("deny-risky", delete) == "deny"
    harmless = ApprovalRequest("click_element_by_index", {"index": 1}, "http://x", {"text": "Next page"})
    assert decide("ask-risky", harmless) == "allow"
    assert decide("ask-all", harmless) == "ask"
    assert decide("ask-risky", ApprovalRequest("execute_javascript", {"script": "1"}, "http://x")) == "ask"
    away = ApprovalRequest("go_to_url", {"url": "https://evil.example/"}, "http://shop.test/")
    assert risk_reason(away) == "navigates to another site (evil.example)"
    assert risk_reason(ApprovalRequest("go_to_url", {"url": "http://shop.test/cart"}, "http://shop.test/")) is None
    assert decide(lambda r: "deny", harmless) == "deny"
    with pytest.raises(ValueError, match="Unknown approval policy 'sometimes'"):
        check_policy("sometimes")


def test_fixed_part_of_a_step_fits_the_token_budget() -> None:
    """System prompt + AgentOutput schema for the nine page-agent built-ins: under 1,200 tokens, since this part
    is sent again on every step."""
    from notebook_agent.agent import default_system_prompt
    from notebook_agent.browser import BrowserSession, builtin_tools
    from notebook_agent.llm.tokens import count_tokens

    async def ask(question: str, signal: AbortSignal) -> str:
        return ""

    tools = builtin_tools(BrowserSession(), on_ask_user=ask)  # schemas only: the browser is never started
    nine = [
        "done",
        "wait",
        "ask_user",
        "click_element_by_index",
        "input_text",
        "select_dropdown_option",
        "scroll",
        "scroll_horizontally",
        "execute_javascript",
    ]
    spec = macro_spec([tools[n] for n in nine])
    payload = json.dumps({"name": spec.name, "description": spec.description, "parameters": spec.parameters})
    total = count_tokens(default_system_prompt()) + count_tokens(payload)
    assert total < 1200, total


def test_compact_schema_drops_only_what_validation_still_enforces() -> None:
    """Optional fields lose their ``anyOf [X, null]`` wrapper and integers their ``minimum: 0`` in the schema the
    model reads; the action's own parameter model still rejects negative and unknown values."""
    from notebook_agent.browser import BrowserSession, builtin_tools
    from notebook_agent.core.tools import ToolArgumentError

    async def ask(question: str, signal: AbortSignal) -> str:
        return ""

    tools = builtin_tools(BrowserSession(), on_ask_user=ask)
    spec = macro_spec([tools["scroll"]])
    scroll = spec.parameters["properties"]["action"]["anyOf"][0]["properties"]["scroll"]
    assert scroll["properties"]["index"] == {"type": "integer"}
    assert scroll["properties"]["pixels"] == {"type": "integer"}
    assert scroll["properties"]["num_pages"] == {"default": 1.0, "type": "number"}  # bounds: validation's
    assert "additionalProperties" not in scroll
    assert tools["scroll"].validate({"index": 2}).index == 2
    for bad in ({"index": -1}, {"pixels": -5}, {"down": True, "speed": 3}):
        with pytest.raises(ToolArgumentError):
            tools["scroll"].validate(bad)


def test_decoding_narrows_indices_and_leaves_the_prompt_schema() -> None:
    from notebook_agent.agent.prompt.agent_output import with_indices
    from notebook_agent.browser.actions import builtin_tools

    tools = builtin_tools(None)  # type: ignore[arg-type]  # schemas only
    spec = macro_spec([tools[n] for n in ("done", "click_element_by_index", "scroll")])
    narrowed = with_indices(spec, [5, 2, 2])
    assert narrowed.parameters == spec.parameters and spec.decoding is None
    assert narrowed.decoding is not None
    members = {next(iter(m["properties"])): m for m in narrowed.decoding["properties"]["action"]["anyOf"]}
    click = members["click_element_by_index"]["properties"]["click_element_by_index"]
    assert click["properties"]["index"]["enum"] == [2, 5]
    assert members["scroll"]["properties"]["scroll"]["properties"]["index"]["enum"] == [2, 5]
    empty = with_indices(spec, [])
    assert empty.decoding is not None
    names = [next(iter(m["properties"])) for m in empty.decoding["properties"]["action"]["anyOf"]]
    assert names == ["done", "scroll"]  # no element to click on an empty page; scrolling the page needs none


def test_decoding_leaves_out_what_the_loop_guard_refused() -> None:
    from notebook_agent.agent.prompt.agent_output import with_indices
    from notebook_agent.browser.actions import builtin_tools

    tools = builtin_tools(None)  # type: ignore[arg-type]  # schemas only
    names = ("done", "click_element_by_index", "scroll", "go_to_url", "input_text")
    spec = macro_spec([tools[n] for n in names])
    out = with_indices(
        spec,
        [1, 2, 3],
        {"click_element_by_index": {2}, "go_to_url": None, "done": None, "scroll": {1, 2, 3}, "input_text": {1, 2, 3}},
    )
    assert out.decoding is not None
    members = {next(iter(m["properties"])): m["properties"] for m in out.decoding["properties"]["action"]["anyOf"]}
    assert set(members) == {"done", "click_element_by_index", "scroll"}  # done always stays
    assert members["click_element_by_index"]["click_element_by_index"]["properties"]["index"]["enum"] == [1, 3]
    assert "index" not in members["scroll"]["scroll"]["properties"]  # its index is optional: the page itself
    assert out.parameters == spec.parameters

"""The tool planner: visible vs hidden tools, a byte-stable order, and duplicate names."""

from __future__ import annotations

import json
from typing import Any

import pytest

from notebook_agent.core.planner import ToolPlanError, build_tool_plan
from notebook_agent.core.tools import Tool, ToolCallContext


class T(Tool):
    def __init__(self, name: str, sort_key: str | None = None, unavailable: str | None = None) -> None:
        self.name, self.description, self.sort_key, self._why = name, f"{name} tool", sort_key, unavailable

    def unavailable_reason(self) -> str | None:
        return self._why

    async def execute(self, args: Any, ctx: ToolCallContext) -> str:
        return "ok"


def test_order_is_sort_key_then_name_by_code_point() -> None:
    plan = build_tool_plan([T("beta"), T("Alpha"), T("alpha"), T("zeta", sort_key="0")])
    assert [t.name for t in plan.visible] == ["zeta", "Alpha", "alpha", "beta"]
    again = build_tool_plan([T("alpha"), T("zeta", sort_key="0"), T("beta"), T("Alpha")])
    assert json.dumps([s.__dict__ for s in plan.specs()]) == json.dumps([s.__dict__ for s in again.specs()])


def test_unavailable_tools_are_hidden_with_their_reason() -> None:
    plan = build_tool_plan([T("ask_user", unavailable="no on_ask_user callback was given"), T("click")])
    assert [t.name for t in plan.visible] == ["click"]
    assert [(h.tool.name, h.reason) for h in plan.hidden] == [("ask_user", "no on_ask_user callback was given")]
    assert plan.get("click") is not None and plan.get("ask_user") is None


def test_duplicate_and_empty_names_are_errors() -> None:
    with pytest.raises(ToolPlanError, match="Duplicate tool name 'click'"):
        build_tool_plan([T("click"), T("click")])
    with pytest.raises(ToolPlanError, match="has no name"):
        build_tool_plan([T("")])

"""The tool planner: which tools the model sees this turn, in which order.

Order is ``sort_key`` or else ``name``, compared by code point (not locale), so the provider payload is
byte-identical from one request to the next and prompt caches hit. A tool that says it is unavailable goes to
``hidden`` with its reason; two tools with one name are a programming error reported at once.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from .errors import InputError
from .model import ToolSpec
from .tools import Tool


class ToolPlanError(InputError):
    """The tool set cannot be offered to a model (duplicate or empty names)."""


@dataclass
class HiddenTool:
    tool: Tool
    reason: str


@dataclass
class ToolPlan:
    visible: list[Tool] = field(default_factory=list)
    hidden: list[HiddenTool] = field(default_factory=list)

    def specs(self) -> list[ToolSpec]:
        return [t.spec() for t in self.visible]

    def get(self, name: str) -> Tool | None:
        for t in self.visible:
            if t.name == name:
                return t
        return None


def build_tool_plan(tools: Iterable[Tool]) -> ToolPlan:
    plan = ToolPlan()
    seen: set[str] = set()
    for t in tools:
        if not t.name:
            raise ToolPlanError(f"A tool has no name: {t!r}")
        if t.name in seen:
            raise ToolPlanError(f"Duplicate tool name {t.name!r}: each tool offered to a model needs a unique name")
        seen.add(t.name)
        reason = t.unavailable_reason()
        if reason:
            plan.hidden.append(HiddenTool(t, reason))
        else:
            plan.visible.append(t)
    plan.visible.sort(key=lambda t: (t.sort_key if t.sort_key is not None else t.name, t.name))
    return plan

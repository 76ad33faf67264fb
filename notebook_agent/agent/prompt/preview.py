"""The model's output while it streams, as views show it: one
:class:`~notebook_agent.agent.runs.events.ReflectionPartial`.

Views must not parse model output, so the run does it here, once, for every output mode (a tool call being
written, or JSON being written in the text): the reflection fields as far as they go, capped like the final
ones and with secrets and hidden typed text removed, and the action's name and arguments once they begin.
"""

from __future__ import annotations

from ...core.messages import AssistantMessage
from ..runs.events import ReflectionPartial
from ..safety.secrets import Redactor
from .agent_output import partial_output
from .state_message import MEMORY_MAX, REFLECTION_MAX, cap

_FIELDS = (
    ("evaluation_previous_goal", REFLECTION_MAX, "evaluation"),
    ("memory", MEMORY_MAX, "memory"),
    ("next_goal", REFLECTION_MAX, "next goal"),
)


def reflection_partial(step: int, message: AssistantMessage, redactor: Redactor) -> ReflectionPartial | None:
    """What step ``step``'s streaming ``message`` shows so far, or None while it shows nothing."""
    args = partial_output(message)
    if not args:
        return None
    fields: dict[str, str] = {}
    for key, limit, label in _FIELDS:
        value = args.get(key)
        fields[key] = cap(redactor.scrub_text(value), limit, label) if isinstance(value, str) else ""
    action = args.get("action")
    name = next(iter(action), None) if isinstance(action, dict) and action else None
    if name is not None and not isinstance(name, str):
        name = None
    inner = action.get(name) if isinstance(action, dict) and name is not None else None
    shown = redactor.public_args(name, inner, partial=True) if name is not None and isinstance(inner, dict) else {}
    if name is None and not any(fields.values()):
        return None
    return ReflectionPartial(
        step,
        fields["evaluation_previous_goal"],
        fields["memory"],
        fields["next_goal"],
        action=name,
        args=shown,
    )

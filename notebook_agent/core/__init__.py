"""The provider-agnostic core: messages, tools, the planner and the agent loop.

The transcript (``messages``) and the one protocol between the loop and any model (``model``); tools and their
context (``tools``), what the rest of the agent knows about an action (``action_facts``), a tool call's arguments
read (``tool_arguments``) and the calls run (``tool_calls``); which tools the model sees (``planner``); the loop
(``loop``), what it is configured with (``hooks``) and the events it emits (``events``); a small stateful wrapper
for users (``agent``); cancellation (``abort``) and the asyncio helpers (``aio``); the one base of every error
(``errors``); and text from outside made safe to keep and to show (``text``).

Nothing here imports another part of the package, a provider SDK, a browser or a widget library, so the
loop can be tested with a scripted model and reused by every layer above it.

Here too, the one type for what JSON carries (a model's tool arguments, a provider's error body, a run file's
record, a page script's answer): a function that takes "any JSON" says so with :data:`JSONValue` instead of
taking ``Any``, and mypy checks what it does with it (a string is not a dict until ``isinstance`` says so). It is
read-only on purpose (``Sequence``, ``Mapping``): a function that only reads JSON accepts a ``dict[str, str]``
or a tuple as well as what ``json.loads`` returns. A value that only becomes JSON later (a pydantic model, a
dataclass) is not one: that is an ``object``, converted where it is written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeAlias

JSONValue: TypeAlias = "str | int | float | bool | Sequence[JSONValue] | Mapping[str, JSONValue] | None"
"""A JSON value: a scalar, an array or an object of JSON values."""

JSONObject: TypeAlias = Mapping[str, JSONValue]
"""A JSON object (tool arguments, a record's fields)."""

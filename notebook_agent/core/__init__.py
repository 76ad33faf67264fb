"""The provider-agnostic core: messages, tools, the planner and the agent loop.

The transcript (``messages``) and the one protocol between the loop and any model (``model``); tools and their
context (``tools``), what the rest of the agent knows about an action (``action_facts``), a tool call's arguments
read (``tool_arguments``) and the calls run (``tool_calls``); which tools the model sees (``planner``); the loop
(``loop``), what it is configured with (``hooks``) and the events it emits (``events``); a small stateful wrapper
for users (``agent``); cancellation (``abort``) and the asyncio helpers (``aio``); the one base of every error
(``errors``); and text from outside made safe to keep and to show (``text``).

Nothing here imports another part of the package, a provider SDK, a browser or a widget library, so the
loop can be tested with a scripted model and reused by every layer above it.
"""

"""The provider-agnostic core: messages, tools, the planner and the agent loop.

Nothing here imports another part of the package, a provider SDK, a browser or a widget library, so the
loop can be tested with a scripted model and reused by every layer above it.
"""

"""What a person configures, checked one way wherever it is typed: option values (``options``) and model names
(``models``), shared by ``%%agent``, ``%agent config``, the terminal and suite evaluation.

A layer of its own between the agent and its front ends: it knows the agent's policies and the demo model, and
nothing of the notebook or the terminal.
"""

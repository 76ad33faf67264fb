"""What a person configures, checked one way wherever it is typed: option values (``options``), a run's flags
declared once for every front (``run_flags``) and model names (``models``), shared by ``%%agent``, ``%agent
config``, the terminal and suite evaluation.

A layer of its own between the agent and its front ends: it knows the agent's policies and the demo model, and
nothing of the notebook or the terminal.
"""

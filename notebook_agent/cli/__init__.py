"""The ``notebook-agent`` command: one module per sub-command (``main`` parses and dispatches; ``replay``,
``export``, ``map``, ``snapshot``), and what every terminal command shares (``terminal``).

An application layer like the notebook: it may import every layer below it, and nothing imports it.
"""

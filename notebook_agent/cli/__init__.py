"""The ``notebook-agent`` command: ``main`` parses and dispatches; one module per sub-command (``run``: ``run`` and
``demo``; ``replay``, ``export``, ``map``, ``snapshot``, ``evaluate``: ``eval``, ``doctor``); and what every
terminal command shares (``terminal``).

An application layer like the notebook: it may import every layer below it, and nothing imports it.
"""

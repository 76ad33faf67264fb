"""The call behind a page, learned by a recipe: the request whose JSON answer held what the recorded run read, asked
directly for each row instead of driving the page.

``template`` is the learned call as plain data (a request template with slots, where each answer field sits in the
response, a per-visit token, the effect a person approved) with its checks: a recipe file is input. ``learn`` finds
it in a recorded run's network log; ``rows`` runs a map's rows by request, checked against the page recipe and
falling back to it; ``show`` displays it and exports it as an httpx script.

Part of the ``recipes`` front: it may import what the recipes may (every part of ``agent`` and the layers below),
and the recipe modules beneath it (``slots``, ``answer``, ``recipe_pilot``); ``recipe`` imports ``template`` and
``learn``, so nothing here imports ``recipe`` or ``recipe_map``.
"""

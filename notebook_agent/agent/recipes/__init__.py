"""A run done again for every row of a table, free: a recipe found in a recorded run (``recipe``), its slots (the
values that came from the task's parameters: typed text, chosen options, URLs; ``slots``), the answer read from
the last page the way the recorded run read it (``answer``), the pilot that replays it with a row's values and
lets the model heal only a step whose page differs (``recipe_pilot``), the map of a recipe over rows
(``recipe_map``), and the call behind a page that a recipe learns and a map asks directly (``calls``).

A front of the agent layer, like ``page_agent``: it may import every other part of ``agent`` (it runs on the map
engine of ``batch`` and the pilots of ``step``). Nothing imports it but the fronts above.
"""

"""One task over many inputs: ``agent.map`` over rows (``map_runner``) with its options checked first
(``map_options``), what it may spend and the estimate it asks about (``map_budget``), one row here or on an
executor's worker (``map_rows``), the rows, template and table as plain data (``map_table``), their counts
(``map_counts``) and CSV cells (``map_cells``), and clean contexts reused across rows (``pool``).

May import ``agent.safety``, ``agent.runs``, ``agent.step`` (the pilots rows follow, and ``Runner``: what a row
uses of the agent), ``agent.otel`` (a map's trace) and the layers below ``agent``; the agent it runs is handed in,
so nothing here imports :mod:`notebook_agent.agent.page_agent`.
"""

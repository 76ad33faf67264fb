"""One task over many inputs: ``agent.map`` over rows (``map_runner``), one row here or on an executor's worker
(``map_rows``), and the rows, template and table as plain data (``map_table``).

May import ``agent.runs`` (the events and results a row produces) and the layers below ``agent``; the agent it runs
is handed in, so nothing here imports :mod:`notebook_agent.agent.page_agent`.
"""

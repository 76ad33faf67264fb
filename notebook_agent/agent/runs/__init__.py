"""What a run leaves behind, as data: its steps and result (``result``), the page events it emits (``events``), the
tables and answer it read (``run_data``), the run file on disk, checked line by line when it is read back (``run_file``,
``run_schema``), its recorder (``recorder``), a Playwright script made from it (``playwright_export``,
``playwright_template``) and its pictures for notebooks (``pictures``).

May import ``agent.safety`` (the approval vocabulary the events carry, the secret placeholder) and the layers below
``agent``.
"""

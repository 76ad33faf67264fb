"""What a run may do, decided before it happens: approval policies and their answers (``approval``), where a
run may go (``domains``), secrets the model types without seeing (``secrets``), a table's values filled in as
data, never as a secret's placeholder (``row_text``), what a call will really do (``effects``), which downloads
a run keeps (``downloads``) and what it may spend (``budget``).

The bottom of the agent layer: it imports the browser, llm and core layers and no other part of ``agent``.
"""

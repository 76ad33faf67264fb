"""The Jupyter layer: the magics, the run handle and the views. Nothing imports it.

``magics`` registers ``%%agent`` and ``%agent``, whose sub-commands are ``commands`` (with ``export_magic`` and
``recipe_magic``); ``runtime`` is a run's handle (``NotebookRun``), answered from code by ``run_answers``;
``map_view`` shows one task over many rows; ``evaluate`` an evaluation with a live table. What lives for the whole
kernel is ``kernel_state``; what the kernel can do by its version, ``kernel``; Kernel → Interrupt, ``interrupt``.
What a person sees is ``views``.
"""

"""What a person sees of a run: the live view (``run_view``) and its step cards (``card``), approval panels
(``panels``), the static record a saved notebook keeps (``record``), the prompt-tuning tables (``tuning``), the
stylesheet and HTML helpers they share (``html``), and the one way any of it reaches a cell (``display``: a widget
always with its static form).

May import the notebook layer's base modules (``kernel``) and the layers below the notebook; the magics and run
handles (the notebook's front) import it, never the other way.
"""

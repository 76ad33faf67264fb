"""Exact extraction of tables and repeated items from the live page (``tables``), over more than one page of
them (``pagination``).

May import ``browser.page`` besides the browser layer's base modules.
"""

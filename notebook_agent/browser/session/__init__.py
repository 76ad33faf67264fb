"""The browser a run drives and what keeps it alive in a notebook: finding and starting Chromium (``launch``),
the Playwright objects and their lifecycle (``lifecycle``), :class:`BrowserSession` and its read and page sides
(``browser_session``, ``accessors``, ``pages``), one driver at a time (``ownership``), the browser's own thread
(``browser_thread``), shared sessions (``tab_sessions``), traces (``tracing``), and what the agent layer reads
through a session (``page_reads``, ``crop``, ``targets``).

The top of the browser layer: it may import every other part of it.
"""

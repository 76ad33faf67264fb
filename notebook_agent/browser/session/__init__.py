"""The browser a run drives and what keeps it alive in a notebook: finding and starting Chromium (``launch``),
the Playwright objects and their lifecycle (``lifecycle``), ``BrowserSession`` (``browser_session``) and its sides,
each a class it inherits: what it holds (``accessors``), its tabs, navigation and door (``pages``), reading a tab
(``reading``), acting (``acting``); one driver at a time (``ownership``), the browser's own thread
(``browser_thread``), shared sessions (``tab_sessions``), a pooled context cleaned between rows (``reset``), traces
(``tracing``), and what the agent layer reads through a session (``page_reads``, ``targets``).

The top of the browser layer: it may import every other part of it.
"""

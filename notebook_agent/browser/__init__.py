"""The browser layer: a Playwright session that survives notebook interrupts, the indexed page snapshot the
model reads, and the built-in actions it calls. It imports core (and llm's token counter) only.

``launch.py`` finds and starts Chromium; ``session.py`` is the ``BrowserSession`` facade (its page methods
in ``session_pages.py``, its properties in ``session_accessors.py``); ``lifecycle.py``, ``tab_sessions.py``,
``tabs.py``, ``reader.py``, ``guard.py``, ``hung.py``, ``ownership.py``, ``watch.py`` and ``report.py`` are its
parts; ``snapshot.py`` + ``snapshot.js`` build the indexed state, reached through ``page_script.py``;
``actions/`` holds the built-in actions.
"""

from .actions import (
    ActionHost,
    AskUserTool,
    BrowserTool,
    ClickTool,
    DoneTool,
    ExecuteJavascriptTool,
    GoBackTool,
    GoToUrlTool,
    HoverTool,
    InputTextTool,
    ScrollHorizontallyTool,
    ScrollTool,
    SelectDropdownOptionTool,
    SendKeysTool,
    SwitchTabTool,
    WaitTool,
    builtin_tools,
    match_option,
)
from .errors import ActionError
from .page.snapshot import ElementInfo, Snapshot, TabInfo
from .page.tabs import DialogInfo, DialogPolicy
from .session.browser_session import BrowserSession
from .session.launch import DEFAULT_ARGS, BrowserNotFoundError, find_browser, start_playwright
from .session.ownership import BrowserBusyError

__all__ = [
    "DEFAULT_ARGS",
    "ActionError",
    "ActionHost",
    "AskUserTool",
    "BrowserBusyError",
    "BrowserNotFoundError",
    "BrowserSession",
    "BrowserTool",
    "ClickTool",
    "DialogInfo",
    "DialogPolicy",
    "DoneTool",
    "ElementInfo",
    "ExecuteJavascriptTool",
    "GoBackTool",
    "GoToUrlTool",
    "HoverTool",
    "InputTextTool",
    "ScrollHorizontallyTool",
    "ScrollTool",
    "SelectDropdownOptionTool",
    "SendKeysTool",
    "Snapshot",
    "SwitchTabTool",
    "TabInfo",
    "WaitTool",
    "builtin_tools",
    "find_browser",
    "match_option",
    "start_playwright",
]

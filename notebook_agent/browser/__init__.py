"""The browser layer: a Playwright session that survives notebook interrupts, the indexed page snapshot the
model reads, and the built-in actions it calls."""

from .actions import (
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
from .launch import DEFAULT_ARGS, BrowserNotFoundError, find_browser, start_playwright
from .session import ActionError, BrowserSession, DialogInfo, DialogPolicy
from .snapshot import ElementInfo, Snapshot, TabInfo

__all__ = [
    "DEFAULT_ARGS",
    "ActionError",
    "AskUserTool",
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

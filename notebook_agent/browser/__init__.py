"""The browser layer: a Playwright session that survives notebook interrupts, the indexed page snapshot the
model reads, and the built-in actions it calls; Playwright is imported here and nowhere else. It imports core
(and llm's token counter) only.

Its base modules: ``errors`` (the layer's errors and notices) and ``urls`` (one rule for what a typed URL means
and which site a URL belongs to), ``url_template`` (one rule for a ``{column}`` in a start page). Its
sub-packages, from the bottom:

- ``page``: one tab read and watched: the page script, the indexed snapshot and its reader, pictures, masks, tabs;
- ``fingerprint``: what a step saw of an element, and finding it again;
- ``extract``: tables and repeated items read exactly, over pages;
- ``door``: where every byte leaves: the context's route, each tab's own interception, WebSockets, redirect hops;
- ``actions``: the built-in actions, one class each, with their facts;
- ``session``: ``BrowserSession`` and what keeps it alive: launching, its parts, its thread, traces.
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

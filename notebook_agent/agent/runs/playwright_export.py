"""A recorded run as a Playwright-for-Python script: the recipe a run that worked is, in a form anyone can read,
edit, keep in version control and run in CI, with no model, no API key and no notebook_agent installed.

:func:`to_playwright` writes the statements of each step that ran, as its action says a script does it
(``facts.script``, on the action's class: notebook_agent.core.action_facts), on the element it acted on as found
by the locator of its recorded fingerprint (browser/fingerprint/model.py: the same calls a replay makes), and
before each action on a page a check of what the step saw: the page it was on, the element visible. A run moves
to another host with ``--base-url`` (a staging recording against production), as ``agent.replay(url=)`` does.

A run file is hostile input (page text, model output, URLs), so nothing from it becomes code: every string
enters the script as a literal made by ``repr`` (lone surrogates replaced first), every comment is one line of
printable characters, numbers are checked, and locators are rebuilt from their checked parts. Whatever a run
holds, the script is valid Python that does only what the recorded steps did. A step that cannot be written
with confidence (an old run file without fingerprints, an action the script cannot do) becomes a comment and a
``raise`` naming the step, never a guessed locator: a custom tool exports when it declares its script, like a
built-in. Secrets stay placeholders: ``<secret>NAME</secret>`` becomes
``os.environ["NAME"]``, checked before the browser starts; a value is never written.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol
from urllib.parse import SplitResult, urlsplit

from ...browser.actions import action_facts
from ...browser.fingerprint.finder import playwright_source
from ...browser.fingerprint.model import Fingerprint, py_str
from ...core.action_facts import NotScriptable
from ...core.text import clean_text
from ...core.tools import Tool
from ..safety.secrets import PLACEHOLDER
from .playwright_template import ASYNC, SYNC, Flavour

Mode = Literal["sync", "async"]

#: The agent's window height (BrowserSession's default viewport): what one "page" of a recorded scroll was.
PAGE_HEIGHT = 800


class RecordedStep(Protocol):
    """What the export reads of a step (a :class:`~.result.PageStep`)."""

    @property
    def index(self) -> int: ...
    @property
    def action(self) -> str | None: ...
    @property
    def args(self) -> dict[str, Any]: ...
    @property
    def url(self) -> str: ...
    @property
    def next_goal(self) -> str: ...
    @property
    def result(self) -> str: ...
    @property
    def is_error(self) -> bool: ...
    @property
    def target(self) -> dict[str, Any] | None: ...


class RecordedRun(Protocol):
    """What the export reads of a run (a :class:`~.result.PageAgentResult`, live or loaded from its file)."""

    @property
    def task(self) -> str: ...
    @property
    def run_id(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def settings(self) -> dict[str, Any]: ...
    @property
    def steps(self) -> Sequence[RecordedStep]: ...


def to_playwright(
    result: RecordedRun,
    *,
    mode: Mode = "sync",
    base_url: str | None = None,
    tools: Mapping[str, Tool | None] | None = None,
) -> str:
    """The run as a complete Playwright script (``mode``: the sync or the async API), runnable with
    ``python script.py [--base-url URL] [--headed]`` where only ``playwright`` is installed. ``tools``: the
    custom tools the run had (an agent's ``custom_tools``), whose declared scripts write their steps.

    It opens the recorded start URL, with the recorded origin replaced by the base URL (``base_url`` when given,
    else the recorded origin; ``--base-url`` overrides either), then does each step that ran (steps with no
    action or an error are skipped, as a replay skips them) and prints the recorded answer."""
    if mode not in ("sync", "async"):
        raise ValueError(f"mode is 'sync' or 'async', not {mode!r}")
    flavour = SYNC if mode == "sync" else ASYNC
    steps = [s for s in result.steps if s.action and not s.is_error]
    start = _text(_mapping(result.settings).get("start_url")) or next((_text(s.url) for s in result.steps if s.url), "")
    recorded_origin = _origin(start)
    writer = _StepWriter(flavour, tools or {})
    previous_url = start
    for i, step in enumerate(steps):
        later = (_text(s.url) for s in steps[i + 1 :])
        writer.step(step, _number_of(step, i + 1), previous_url, next((u for u in later if _is_web(u)), ""))
        previous_url = _text(step.url) or previous_url
    if not any(action_facts(str(s.action), tools).finishes for s in steps):
        writer.line(f"# The recorded run ended here without finishing ({_comment(result.status, 40)}).")
        writer.line("return 0")
    constants = {
        "RUN_ID": py_str(_text(result.run_id)),
        "TASK": py_str(_text(result.task)),
        "RECORDED_ORIGIN": py_str(recorded_origin),
        "START_URL": py_str(start if _is_web(start) else ""),
        "BASE_URL": py_str(_text(base_url).rstrip("/") if base_url else recorded_origin),
        "SECRETS": "[" + ", ".join(py_str(n) for n in writer.secrets) + "]",
        "PAGE_HEIGHT": str(PAGE_HEIGHT),
    }
    return flavour.render(constants, writer.lines)


def write_script(script: str, path: str | Path) -> Path:
    """Write ``script`` to ``path`` (folders made as needed), executable by its owner as a file with a ``#!``
    line should be; returns the path written."""
    target = Path(path).expanduser()
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(script, encoding="utf-8")
    target.chmod(target.stat().st_mode | 0o100)
    return target


# -- one step --------------------------------------------------------------------------------------------------


class _Call:
    """One recorded step as its action's script reads it (core/action_facts.py ``ScriptCall``)."""

    def __init__(self, step: RecordedStep, writer: _StepWriter, next_url: str) -> None:
        self.step = step
        self.writer = writer
        self.args = _mapping(step.args)
        self.result = _text(step.result)
        self.tag = _text(_mapping(step.target).get("tag"))
        self.next_url = next_url
        self.aw = writer.aw
        self.with_ = writer.flavour.with_
        self.targeted = False

    @property
    def target(self) -> str:
        self.targeted = True
        return "target"

    def literal(self, value: object) -> str:
        return py_str(_text(value))

    def typed(self, value: object) -> str:
        return self.writer._typed(_text(value))

    def comment(self, value: object) -> str:
        return _comment(value)

    def number(self, value: object, default: float, low: float, high: float) -> float:
        return _number(value, default, low, high)


class _StepWriter:
    """The statements of the replay function, step by step, in the sync or async flavour."""

    def __init__(self, flavour: Flavour, tools: Mapping[str, Tool | None]) -> None:
        self.flavour = flavour
        self.tools = tools
        self.aw = "await " if flavour.mode == "async" else ""
        self.lines: list[str] = []
        self.secrets: list[str] = []
        self.number = 0

    def line(self, text: str) -> None:
        self.lines.append(text)

    def step(self, step: RecordedStep, n: int, previous_url: str, next_url: str) -> None:
        """Write step number ``n``: its goal as a comment, then its statements as its action's script says
        (after finding its element and checking the page it was on)."""
        action = _text(str(step.action))
        facts = action_facts(action, self.tools)
        self.number = n
        self.lines.append("")
        self.line(f"# Step {n}: {_comment(step.next_goal) or '(no goal recorded)'}")
        self.line(f"step({n})")
        if facts.script is None:
            self._cannot(step, f"it used the action {action!r}, which a Playwright script cannot do by itself")
            return
        call = _Call(step, self, next_url)
        try:
            body = [_text(line) for line in facts.script(call)]
        except NotScriptable as exc:
            self._cannot(step, str(exc))
            return
        fp = Fingerprint.from_dict(step.target) if call.targeted and step.target else None
        if call.targeted and (fp is None or fp.empty or fp.locator is None):
            why = (
                "the run file kept no fingerprint of its element (it was recorded before fingerprints were)"
                if fp is None or fp.empty
                else f"no locator found exactly its element ({fp.describe()}) when the run was recorded"
            )
            self._cannot(step, why)
            return
        if facts.replay == "page":
            self._check_url(step, previous_url)
        if fp is not None:
            self.line(f"target = {playwright_source(fp)}")
            self.line(f"{self.aw}expect(target).to_be_visible()")
        for line in body:
            self.line(line)

    def _typed(self, text: str) -> str:
        """The expression for text a step typed: a literal, with each ``<secret>NAME</secret>`` read from the
        environment variable NAME (never the value, which the run file does not hold either)."""
        parts: list[str] = []
        at = 0
        for match in PLACEHOLDER.finditer(text):
            if match.start() > at:
                parts.append(py_str(text[at : match.start()]))
            name = match.group(1)
            if name not in self.secrets:
                self.secrets.append(name)
            parts.append(f"os.environ[{py_str(name)}]")
            at = match.end()
        if at < len(text) or not parts:
            parts.append(py_str(text[at:]))
        return " + ".join(parts)

    def _check_url(self, step: RecordedStep, previous_url: str) -> None:
        """Check the page is the one the step was on, by its path; by its query too when the step before moved
        only the query (a sort, a filter), since the path alone would pass before that navigation ended."""
        url = _text(step.url)
        if not _is_web(url):
            return
        here, before = _split(url), _split(previous_url)
        with_query = (
            url != previous_url
            and here is not None
            and before is not None
            and (here.netloc, here.path) == (before.netloc, before.path)
        )
        self.line(f"{self.aw}expect(page).to_have_url(url_re({py_str(url)}{', query=True' if with_query else ''}))")

    def _switch_tab(self, step: RecordedStep, next_url: str) -> None:
        if not _is_web(next_url):
            self._cannot(step, "it switched tabs, and no later step says which page that tab showed")
            return
        self.line("# The agent's tab ids are its own: the tab is found by the page the next step was on.")
        self.line(f"page = {self.aw}tab_at(page, url_re({py_str(next_url)}))")

    def _done(self, args: Mapping[str, Any]) -> None:
        self.line(f"print({py_str(_text(args.get('text')))})")
        if args.get("data") is not None:
            data = json.dumps(args["data"], ensure_ascii=False, default=str)
            self.line(f"print({py_str(clean_text(data))})")
        if args.get("success") is True:
            self.line("return 0")
        else:
            self.line("return 1  # the recorded run said it did not finish the task")

    def _cannot(self, step: RecordedStep, why: str) -> None:
        """A step the script cannot do with confidence: say what it did and stop there."""
        what = f"{_text(str(step.action))} {json.dumps(_mapping(step.args), ensure_ascii=False, default=str)}"
        self.line(f"# It did: {_comment(what)}")
        self.line(f"# This step cannot be written here: {_comment(why)}. Write it by hand, then remove the raise.")
        message = f"Step {self.number} ({_text(str(step.action))}) cannot be replayed by this script: {why}."
        self.line(f"raise NotImplementedError({py_str(clean_text(message))})")


# -- hostile values ----------------------------------------------------------------------------------------------


def _text(value: object) -> str:
    """``value`` if it is a string (lone surrogates replaced: a script file must encode), else ""."""
    return clean_text(value) if isinstance(value, str) else ""


def _comment(value: object, limit: int = 160) -> str:
    """``value`` as the text of a ``#`` comment: one line of printable characters (no line break, NUL or
    direction override survives), at most ``limit`` characters."""
    text = "".join(ch if ch.isprintable() else " " for ch in _text(value))
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _number_of(step: RecordedStep, position: int) -> int:
    """The step's number as the run counted it, or its position when the file holds no whole number there."""
    index = step.index
    return index if isinstance(index, int) and not isinstance(index, bool) and 0 < index < 1_000_000 else position


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _number(value: object, default: float, low: float, high: float) -> float:
    """A finite number between ``low`` and ``high`` (``default`` for anything else)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return default
    return min(max(float(value), low), high)


def _split(url: str) -> SplitResult | None:
    """``urlsplit(url)``, or None for a URL it refuses (a bracketed host that is no IPv6 address)."""
    try:
        return urlsplit(url)
    except ValueError:
        return None


def _is_web(url: str) -> bool:
    parts = _split(url)
    return parts is not None and parts.scheme in ("http", "https") and bool(parts.netloc)


def _origin(url: str) -> str:
    parts = _split(url)
    return f"{parts.scheme}://{parts.netloc}" if parts is not None and _is_web(url) else ""

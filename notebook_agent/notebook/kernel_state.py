"""What lives for the whole kernel: the session defaults, the shared browser, and the runs.

``%agent config`` shows and changes :class:`SessionConfig`; :data:`STATE` holds the one browser every run of
this kernel shares (started on first use, kept between cells), which run acts in its tab, every run started
here, and strong references to their tasks.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..browser.page.snapshot import TabInfo
    from ..browser.session.browser_session import BrowserSession

INTERRUPT_REASON = "Stopped by Kernel → Interrupt"


class KernelRun(Protocol):
    """What the kernel's bookkeeping needs of a run handle (``runtime.NotebookRun``)."""

    name: str
    task_text: str
    kernel_browser: bool
    session: BrowserSession | None

    @property
    def done(self) -> bool: ...

    @property
    def asked_for_interrupt(self) -> bool: ...

    def stop(self, reason: str = ...) -> None: ...


@dataclass
class SessionConfig:
    """Defaults for ``%%agent`` in this kernel; ``%agent config`` shows and changes them."""

    model: str | None = None
    max_steps: int = 20
    approve: str = "ask-risky"
    approval_timeout: float = 300.0
    headless: bool = True
    vision: bool = False
    screenshots: bool = True
    runs_dir: str = "agent_runs"
    """Where finished runs are saved (relative to the notebook's folder)."""
    prompt: str = "default"
    """Name of the active system prompt (see ``%%agent_prompt``)."""
    aliases: dict[str, str] = field(default_factory=dict)
    """Short model names (``%agent config --alias fast=openai:gpt-4.1-mini``), usable wherever a model is named."""

    def model_name(self, name: str | None) -> str | None:
        """``name`` with an alias replaced by the model it names."""
        return self.aliases.get(name, name) if name else name

    def describe(self) -> str:
        rows = []
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "aliases":
                value = ", ".join(f"{k}={v}" for k, v in value.items()) or "none (--alias NAME=provider:model)"
            if f.name == "model" and value is None:
                env = os.environ.get("NOTEBOOK_AGENT_MODEL")
                value = (
                    f"{env} (from NOTEBOOK_AGENT_MODEL)"
                    if env
                    else "demo (offline; set --model or NOTEBOOK_AGENT_MODEL)"
                )
            rows.append(f"{f.name:17} {value}")
        return "\n".join(rows)


@dataclass
class KernelState:
    config: SessionConfig = field(default_factory=SessionConfig)
    browser: BrowserSession | None = None
    main_tab_run: KernelRun | None = None
    """The run acting on the browser's own tab; a run that starts while it is active gets a tab of its own."""
    runs: list[KernelRun] = field(default_factory=list)
    tasks: set[asyncio.Task[Any]] = field(default_factory=set)
    """Strong references: asyncio keeps only weak ones to running tasks."""
    prompts: dict[str, str] = field(default_factory=dict)
    """Named system prompts set with ``%%agent_prompt`` ("default" is the packaged one)."""

    def prompt_override(self, name: str | None = None) -> str | None:
        """The system prompt a run is given: None for "default" (the agent's profile chooses it, see
        agent/prompt/profiles.py), else the text of the prompt set with %%agent_prompt."""
        name = name or self.config.prompt
        return None if name == "default" else self.prompt_text(name)

    def prompt_text(self, name: str | None = None) -> str:
        from ..agent import default_system_prompt

        name = name or self.config.prompt
        if name == "default":
            return default_system_prompt()
        if name not in self.prompts:
            known = ", ".join(["default", *self.prompts])
            raise ValueError(f"No prompt named {name!r}. Known prompts: {known}. Define one with %%agent_prompt.")
        return self.prompts[name]

    _browser_lock: asyncio.Lock | None = None

    async def get_browser(self) -> BrowserSession:
        """The kernel's one browser: started on first use, kept between cells, relaunched if closed."""
        from ..browser.session.browser_session import BrowserSession

        if self._browser_lock is None:
            self._browser_lock = asyncio.Lock()
        async with self._browser_lock:
            if self.browser is not None and self.browser.headless != self.config.headless:
                await self.browser.close()
                self.browser = None
            if self.browser is None:
                self.browser = BrowserSession(headless=self.config.headless)
                await self.browser.start()
            return self.browser

    async def close_browser(self) -> None:
        if self.browser is not None:
            browser, self.browser = self.browser, None
            await browser.close()

    async def tab_owners(self) -> list[tuple[TabInfo, str]]:
        """Every tab of the kernel's browser with the run that owns it ("" for none), in tab-id order."""
        if self.browser is None or not self.browser.is_started:
            return []
        holder = self.main_tab_run if self.main_tab_run is not None and not self.main_tab_run.done else None
        rows = [(tab, run_label(holder) if holder else "") for tab in await self.browser.tab_infos()]
        for run in self.runs:
            session = run.session
            mine = session is not None and session.is_tab_session and session.is_started
            if run.kernel_browser and not run.done and mine:
                assert session is not None
                rows += [(tab, run_label(run)) for tab in await session.tab_infos()]
        return sorted(rows, key=lambda row: row[0].id)

    def stop_all(self, reason: str = "Stopped by %agent stop") -> int:
        count = 0
        for run in self.runs:
            if not run.done:
                run.stop(reason)
                count += 1
        return count

    def stop_on_interrupt(self) -> int:
        """Kernel → Interrupt: stop every active run, except one whose panel asked for this interrupt (on a
        kernel older than ipykernel 7.4 the cell awaiting the run holds the kernel's only turn, and
        interrupting that cell is how the Approve click gets through)."""
        count = 0
        for run in self.runs:
            if run.done or run.asked_for_interrupt:
                continue
            run.stop(INTERRUPT_REASON)
            count += 1
        return count


STATE = KernelState()


def run_label(run: KernelRun) -> str:
    """How ``%agent browser`` names a run: its variable and the start of its task."""
    task = " ".join(run.task_text.split())
    task = task if len(task) <= 50 else task[:50].rsplit(" ", 1)[0] + " …"
    return f"{run.name or 'run'}: {task}"

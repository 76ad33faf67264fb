"""The ``%agent`` sub-commands: ``config``, ``browser``, ``stop``, ``runs``, ``rerun``, ``compare``, ``prompt``,
``snapshot``, ``trace``, ``export``, ``models`` and ``help``, one method each.

``%agent WORD ...`` calls the method named ``WORD`` with the remaining words. They read and change the kernel's
state (:mod:`.kernel_state`); ``rerun`` starts a run through the same path as a ``%%agent`` cell (``launch``).
``snapshot`` and ``browser`` return a :class:`Shown`, whose work runs on the kernel loop.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Coroutine
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..agent.run_options import RunOptions
from ..agent.safety.approval import POLICY_NAMES
from ..browser.session.page_reads import page_title, page_url
from ..config import options
from ..config.run_flags import run_options, words_parser
from ..core.errors import error_message
from .kernel_state import STATE
from .views.display import show_html

if TYPE_CHECKING:
    from IPython.lib.pretty import PrettyPrinter

ERROR_LINE = re.compile(r"^(%%?agent(_prompt)?( [a-z_]+)?: |usage: %agent )", re.MULTILINE)
"""How every magic error line starts (``%agent compare: ...``, ``%%agent: ...``, ``usage: %agent ...``): the
magics print errors in one line rather than raising (a traceback for a typo), and the notebook tests fail a
cell whose output has such a line (notebooks/conftest.py)."""

COMMANDS = frozenset(
    {
        "help",
        "config",
        "browser",
        "stop",
        "runs",
        "rerun",
        "replay",
        "recipe",
        "export",
        "compare",
        "prompt",
        "snapshot",
        "trace",
        "models",
    }
)
"""The words ``%agent`` accepts (each a method of :class:`Commands`)."""


HELP = (
    "%%agent [--model M] [--url URL] [--max-steps N] [--approve POLICY] [--vision] [--js] [--ask]\n"
    "        [--timeout S] [--trace] [--out NAME]      run the task in the cell body (see %%agent?)\n"
    "%agent config [--model M] [--max-steps N] [--approve POLICY] [--headed|--headless] [--vision on|off]\n"
    "              [--alias NAME=provider:model]   a short name for a model (NAME= removes it)\n"
    "%agent browser [URL] [--headed|--headless]   show the shared browser (and open a URL)\n"
    "%agent browser --close                       close it: its tabs, cookies and live secrets go\n"
    "%agent stop                                  stop every running run\n"
    "%agent runs                                  the saved runs (status, steps, tokens, cost, prompt)\n"
    "%agent rerun RUN [--prompt NAME] [--model M] [--max-steps N] [--approve POLICY] [--out NAME]\n"
    "                                             repeat a saved run's task with a change\n"
    "%agent replay RUN [--no-heal] [--url BASE] [--model M] [--approve POLICY] [--out NAME]\n"
    "                                             the run's actions again, no model call (it heals)\n"
    "%agent recipe RUN --template TASK [--save FILE] [--out NAME]\n"
    "                                             a recipe of the run: %%agent --each ROWS --recipe NAME\n"
    "%agent export RUN [--sync|--async] [--to FILE]\n"
    "                                             a Playwright script of the run (no model)\n"
    "%agent compare RUN_A RUN_B                   two runs side by side, first divergence marked\n"
    "%agent prompt [NAME|default]                 show (or choose) the active system prompt\n"
    "%agent snapshot                              what the model would see of the current page\n"
    "%agent trace RUN                             where a --trace run's Playwright trace is\n"
    "%agent models                                the model providers: keys set, packages, local servers\n"
    "RUN is a position (1 = oldest, -1 = newest) or the start of a run id (or of its last part).\n"
)
"""What ``%agent help`` prints, before the approval policies (a module constant: the class stays short)."""


class Commands:
    """``%agent`` sub-commands; ``launch(task, **options)`` starts a run as ``%%agent`` does."""

    def __init__(self, launch: Callable[..., Any]) -> None:
        self.launch = launch

    def help(self, rest: list[str]) -> None:
        print(HELP + f"Approval policies: {', '.join(POLICY_NAMES)}.")

    def config(self, rest: list[str]) -> None:
        """Change the session defaults; nothing is stored unless every option is valid."""
        cfg = STATE.config
        changes: dict[str, Any] = {}
        it = iter(rest)
        for word in it:
            try:
                if word in ("--headed", "--headless"):
                    changes["headless"] = word == "--headless"
                    continue
                if word == "--alias":
                    name, target = options.alias(next(it, ""), word)
                    aliases = changes.setdefault("aliases", dict(cfg.aliases))
                    if target is None:
                        aliases.pop(name, None)
                    else:
                        aliases[name] = target
                    continue
                if word not in _CONFIG_OPTIONS:
                    known = [*_CONFIG_OPTIONS, "--headed", "--headless", "--alias"]
                    raise options.OptionError(
                        f"Unknown option {word!r} for %agent config.{options.did_you_mean(word, known)} "
                        f"Options: {', '.join(known)}."
                    )
                value = next(it, None)
                if value is None:
                    raise options.OptionError(f"{word} needs a value.")
                options.no_placeholder(word, value)
                field_name, check = _CONFIG_OPTIONS[word]
                if field_name == "model":  # an alias (known, or set in this same line) names a model too
                    known_aliases = changes.get("aliases", cfg.aliases)
                    changes[field_name] = value if value in known_aliases else check(value, word)
                    continue
                changes[field_name] = check(value, word)
            except (options.OptionError, ValueError) as exc:
                print(f"%agent config: {exc} Nothing was changed.")
                return
        for name, value in changes.items():
            setattr(cfg, name, value)
        print(cfg.describe())

    def stop(self, rest: list[str]) -> None:
        print(f"Stopped {STATE.stop_all()} running run(s).")

    def runs(self, rest: list[str]) -> None:
        from ..agent.runs.run_file import scan_runs
        from .views.tuning import runs_table_html

        saved, unreadable = scan_runs(STATE.config.runs_dir)
        for path, why in unreadable:
            print(f"Skipped {path.name}: {why}")
        running = [r for r in STATE.runs if not r.done]
        if not saved and not running:
            print(f"No saved runs in {STATE.config.runs_dir!r} yet.")
            return
        if running:
            print(f"{len(running)} run(s) still running.")
        if saved:
            show_html(runs_table_html(saved), f"{len(saved)} saved run(s)")

    def rerun(self, rest: list[str]) -> None:
        from ..agent.runs.run_file import find_run, load_run

        usage = "usage: %agent rerun RUN [--prompt NAME] [--model M] [--max-steps N] [--approve POLICY] [--out NAME]"
        if not rest or rest[0].startswith("--"):
            print(usage)
            return
        try:  # the options first: a typo is reported whatever runs are saved
            args, typed = line_options("%agent rerun", rest, ("prompt", "model", "max_steps", "approve", "tracing"))
            saved = load_run(find_run(STATE.config.runs_dir, args.run), with_screenshots=False)
            settings = saved.settings
            # the saved run's own choices are checked as typed ones are (a run file may be someone else's)
            recorded = run_options(
                {
                    "model": saved.model,
                    "url": settings.get("start_url"),
                    "max_steps": settings.get("max_steps"),
                    "vision": settings.get("vision"),
                    "full_page": bool(settings.get("full_page")),
                }
            )
        except (ValueError, OSError) as exc:
            print(f"%agent rerun: {exc}")
            return
        # A run file is input, perhaps from someone else: the policy and JavaScript stay this kernel's.
        kept = (
            [f"approval {settings.get('approval')!r}"] if settings.get("approval") not in (None, cfg_policy()) else []
        )
        if settings.get("enable_javascript"):
            kept.append("JavaScript")
        if kept and typed.approve is None:
            print(
                f"The saved run used {' and '.join(kept)}; this rerun uses this kernel's approval policy "
                f"({cfg_policy()}) without JavaScript. Pass --approve POLICY to choose another policy."
            )
        prompt = typed.prompt
        if prompt is None and saved.system_prompt:
            prompt = f"run-{saved.prompt_version}"
            STATE.prompts[prompt] = saved.system_prompt
        opts = replace(typed, prompt=prompt, full_page=recorded.full_page).with_defaults(
            model=recorded.model, url=recorded.url, max_steps=recorded.max_steps, vision=recorded.vision
        )
        self.launch(saved.task, opts, out=args.out or "agent_run", label="%agent rerun")

    def replay(self, rest: list[str]) -> None:
        """``%agent replay RUN``: the saved run's actions again with no model call, each element found by what it
        was; a step that cannot be replayed goes to the model (``--no-heal``: the replay stops there)."""
        from ..agent.runs.run_file import find_run, load_run

        usage = "usage: %agent replay RUN [--no-heal] [--url BASE] [--model M] [--approve POLICY] [--out NAME]"
        if not rest or rest[0].startswith("--"):
            print(usage)
            return
        try:
            args, typed = line_options("%agent replay", rest, ("heal", "url", "model", "approve", "tracing"))
            saved = load_run(find_run(STATE.config.runs_dir, args.run), with_screenshots=False)
            steps = run_options({"max_steps": saved.settings.get("max_steps")}).max_steps
        except (ValueError, OSError) as exc:
            print(f"%agent replay: {exc}")
            return
        if not any(s.action and not s.is_error for s in saved.steps):
            print(f"%agent replay: run {saved.run_id} has no action that ran, so there is nothing to replay.")
            return
        opts = typed.with_defaults(max_steps=steps)
        self.launch(saved.task, opts, out=args.out or "agent_run", label="%agent replay", replay=saved)

    def recipe(self, rest: list[str]) -> Any:
        from .recipe_magic import recipe_command

        return recipe_command(rest, _user_namespace(), _options)

    def compare(self, rest: list[str]) -> None:
        from ..agent.runs.run_file import compare_runs, find_run, load_run
        from .views.tuning import compare_html

        if len(rest) != 2:
            print("usage: %agent compare RUN_A RUN_B")
            return
        try:
            a, b = (load_run(find_run(STATE.config.runs_dir, ref), with_screenshots=False) for ref in rest)
        except (ValueError, OSError) as exc:
            print(f"%agent compare: {exc}")
            return
        show_html(compare_html(compare_runs(a, b)), f"run {a.run_id} against run {b.run_id}")

    def prompt(self, rest: list[str]) -> None:
        from ..agent import default_system_prompt, prompt_hash
        from .views.tuning import pre_html, prompt_diff

        if rest:
            try:
                STATE.prompt_text(rest[0])
            except ValueError as exc:
                print(f"%agent prompt: {exc}")
                return
            STATE.config.prompt = rest[0]
        text = STATE.prompt_text()
        print(
            f"Active prompt: {STATE.config.prompt!r}, version {prompt_hash(text)}, {len(text):,} chars. "
            f"Known: {', '.join(['default', *STATE.prompts])}"
        )
        diff = prompt_diff(default_system_prompt(), text)
        show_html(pre_html(diff if diff else text), diff if diff else text)

    def export(self, rest: list[str]) -> None:
        """The saved run as a Playwright script with no model, to a file or the next cell (export_magic.py)."""
        from .export_magic import export_run

        export_run(rest)

    def trace(self, rest: list[str]) -> None:
        """Where the Playwright trace of a run is (``%%agent --trace``), and the command that opens it."""
        from pathlib import Path

        from ..agent.runs.run_file import find_run, load_run

        if len(rest) != 1:
            print("usage: %agent trace RUN")
            return
        runs_dir, ref = STATE.config.runs_dir, rest[0]
        path: str | None = None
        run_id = ref
        try:
            run_id = load_run(find_run(runs_dir, ref), with_screenshots=False).run_id
            saved = Path(runs_dir) / run_id / "trace.zip"
            path = str(saved) if saved.is_file() else None
        except (ValueError, OSError):
            pass
        if path is None:  # a run of this kernel whose trace went to a temporary folder (no runs_dir)
            for run in reversed(STATE.runs):
                result = getattr(run, "result", None)
                if result is not None and result.trace_path and result.run_id.startswith(run_id):
                    path = result.trace_path
                    break
        if path is None:
            print(f"Run {ref!r} has no trace: run it with %%agent --trace.")
            return
        print(f"Trace: {path}\nOpen it with: playwright show-trace {path}")

    def models(self, rest: list[str]) -> None:
        """The model providers: which API keys are set (names only), whether each package is installed, and
        whether the local servers answer."""
        from ..llm.availability import check_models, models_table

        print(models_table(check_models()))
        aliases = STATE.config.aliases
        print(
            "Aliases: " + ", ".join(f"{k} = {v}" for k, v in aliases.items())
            if aliases
            else "Aliases: none yet (%agent config --alias fast=openai:gpt-4.1-mini, then --model fast)."
        )

    def snapshot(self, rest: list[str]) -> Shown:
        from .views.tuning import pre_html

        async def show() -> tuple[str, str]:
            browser = await STATE.get_browser()
            snap = await browser.snapshot(full_page="--full-page" in rest)
            return pre_html(snap.text), snap.text

        return Shown(show(), "%agent snapshot")

    def browser(self, rest: list[str]) -> Shown:
        typed = next((w for w in rest if not w.startswith("--")), None)
        if "--headed" in rest:
            STATE.config.headless = False
        if "--headless" in rest:
            STATE.config.headless = True
        if "--close" in rest:
            return Shown(_closed(), "%agent browser")

        async def show() -> tuple[str, str]:
            from .views.run_view import browser_html

            url = None
            if typed is not None:  # a bad URL is reported by the Shown, in one line
                options.no_placeholder("URL", typed)
                url = options.url(typed, "URL")
            browser = await STATE.get_browser()
            if url:
                await browser.open(url)
            picture, why = None, ""
            try:  # a tab in the middle of a navigation (a run is driving it) has no picture to give yet
                picture = await browser.screenshot(format="jpeg")
            except Exception as exc:
                why = error_message(exc).splitlines()[0]
            title, address = await page_title(browser), page_url(browser)
            return browser_html(title, address, picture, why, await STATE.tab_owners()), f"{title}\n{address}"

        return Shown(show(), "%agent browser")


async def _closed() -> tuple[str, str]:
    """Close the kernel's browser: a secret stays live in a session until it closes (the next cell starts a new
    one)."""
    had = STATE.browser is not None
    await STATE.close_browser()
    said = "The browser is closed; the next run starts a new one." if had else "No browser was open."
    return f"<p>{said}</p>", said


def _user_namespace() -> dict[str, Any]:
    from IPython import get_ipython

    shell = get_ipython()
    return shell.user_ns if shell is not None else {}


def cfg_policy() -> str:
    """This kernel's approval policy by name."""
    return STATE.config.approve


class Shown:
    """What ``%agent snapshot`` and ``%agent browser`` return: the work runs as a task on the kernel loop (the
    browser is async), and its result (static HTML and its plain text) is displayed in the cell that asked.

    A cell whose line is just ``%agent snapshot`` is rewritten to ``await`` it (see magics.py, ``_await_display``), so
    the cell stays busy until the picture is there and the output belongs to that cell, also under nbclient
    and nbval. Called any other way (``get_ipython().run_line_magic``), the task displays when done.
    """

    def __init__(self, coro: Coroutine[Any, Any, tuple[str, str]], label: str) -> None:
        self.label = label
        self.awaited = False
        self.task = asyncio.get_running_loop().create_task(coro)
        STATE.tasks.add(self.task)
        self.task.add_done_callback(STATE.tasks.discard)
        self.task.add_done_callback(self._done)

    def _show(self) -> None:
        if self.task.cancelled():
            return
        exc = self.task.exception()
        if exc is not None:
            print(f"{self.label}: {error_message(exc)}")
            return
        show_html(*self.task.result())

    def _done(self, _task: object) -> None:
        if not self.awaited:
            self._show()

    def __await__(self) -> Any:
        self.awaited = True
        yield from asyncio.wait([self.task]).__await__()
        self._show()

    def _repr_pretty_(self, p: PrettyPrinter, cycle: bool) -> None:
        p.text(f"<{self.label}: {'done' if self.task.done() else 'working'}>")


def _switch(value: str, option: str) -> bool:
    word = value.strip().lower()
    if word in ("on", "true", "1", "yes"):
        return True
    if word in ("off", "false", "0", "no"):
        return False
    raise options.OptionError(f"{option} takes on or off, got {value!r}.")


_CONFIG_OPTIONS: dict[str, tuple[str, Callable[[str, str], Any]]] = {
    "--model": ("model", options.model),
    "-m": ("model", options.model),
    "--max-steps": ("max_steps", options.max_steps),
    "--approve": ("approve", options.approve),
    "--timeout": ("approval_timeout", options.timeout),
    "--vision": ("vision", _switch),
    "--screenshots": ("screenshots", _switch),
}


def line_options(label: str, words: list[str], fields: tuple[str, ...]) -> tuple[Any, RunOptions]:
    """A line command's ``RUN`` and ``--out`` and its run flags, by the one parser (config/run_flags.py): the
    flags are checked as ``%%agent``'s are; a bad one raises :class:`~..config.options.OptionError`."""
    parser = words_parser(label, fields, positional=("run",))
    parser.add_argument("--out", default=None)
    if "heal" in fields:
        parser.add_argument("--heal", dest="heal", action="store_const", const=True)
    args = parser.parse_args(words)
    return args, run_options(args, notebook=_user_namespace(), aliases=STATE.config.aliases)


def _options(words: list[str], allowed: set[str], label: str) -> dict[str, str] | None:
    """``--key value`` pairs from a line magic's words; prints what is wrong and returns None."""
    out: dict[str, str] = {}
    it = iter(words)
    for word in it:
        if word not in allowed:
            hint = options.did_you_mean(word, allowed)
            print(f"{label}: Unknown option {word!r}.{hint} Options: {', '.join(sorted(allowed))}.")
            return None
        value = next(it, None)
        if value is None:
            print(f"{label}: {word} needs a value")
            return None
        out[word] = value
    return out

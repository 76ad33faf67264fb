"""The IPython extension: ``%%agent`` runs a task, ``%agent`` configures and controls the session.

Options use IPython's magic-argument conventions (argparse, shell quoting), so ``%%agent?`` shows the help.
The cell body is the task; lines starting with ``#`` are comments, and ``{name}`` is filled from the user's
namespace (unknown names stay as written).
"""

from __future__ import annotations

import asyncio
import re
import string
from collections.abc import Callable
from typing import Any

from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display

from .. import options
from ..agent import PageAgent
from ..agent.approval import POLICY_NAMES, check_policy
from .runtime import (
    STATE,
    NotebookRun,
    install_interrupt,
    make_approver,
    make_ask_user,
    resolve_model,
    uninstall_interrupt,
)
from .view import RunView


class _KeepMissing(dict[str, Any]):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def task_text(cell: str, namespace: dict[str, Any]) -> str:
    """The task from a cell body: comment lines dropped, ``{var}`` filled from the namespace."""
    lines = [ln for ln in cell.splitlines() if not ln.lstrip().startswith("#")]
    text = "\n".join(lines).strip()
    try:
        return string.Formatter().vformat(text, (), _KeepMissing(namespace))
    except (ValueError, IndexError, AttributeError, KeyError):
        return text


@magics_class
class AgentMagics(Magics):
    @magic_arguments()
    @argument(
        "--model",
        "-m",
        default=None,
        help="provider:model, e.g. openai:gpt-4.1-mini; 'demo' = offline; 'replay:RUN' replays a saved run",
    )
    @argument("--url", "-u", default=None, help="open this URL before the first step")
    @argument("--max-steps", default=None, help="model calls at most, 1 or more (default from %%agent config)")
    @argument("--approve", default=None, help=f"approval policy: {', '.join(POLICY_NAMES)}")
    @argument("--prompt", "-p", default=None, help="a system prompt set with %%agent_prompt (default: the active one)")
    @argument("--vision", action="store_true", default=None, help="also send a screenshot to the model")
    @argument("--js", action="store_true", help="enable the execute_javascript action")
    @argument("--ask", action="store_true", help="let the agent ask you questions (ask_user)")
    @argument("--full-page", action="store_true", help="show the model the whole page, not just the viewport")
    @argument("--timeout", default=None, help="seconds to wait for an approval before denying")
    @argument("--out", "-o", default="agent_run", help="variable bound to the run handle (default agent_run)")
    @cell_magic
    def agent(self, line: str, cell: str) -> None:
        """Run the page agent on the task in the cell body; the cell returns at once.

        Each step appears below as it happens. ``result = await agent_run`` in a later cell waits for the
        result. ``%agent`` (one %) configures and controls the session: ``%agent help``.
        """
        args = parse_argstring(self.agent, line)
        task = task_text(cell, self.shell.user_ns if self.shell else {})
        if not task:
            print("The cell body is the task: write what the agent should do.")
            return
        self.launch(
            task,
            model=args.model,
            url=args.url,
            max_steps=args.max_steps,
            approve=args.approve,
            prompt=args.prompt,
            vision=args.vision,
            js=args.js,
            ask=args.ask,
            full_page=args.full_page,
            timeout=args.timeout,
            out=args.out,
        )

    def launch(
        self,
        task: str,
        *,
        model: str | None = None,
        url: str | None = None,
        max_steps: int | str | None = None,
        approve: str | None = None,
        prompt: str | None = None,
        vision: bool | None = None,
        js: bool = False,
        ask: bool = False,
        full_page: bool = False,
        timeout: float | str | None = None,
        out: str = "agent_run",
        label: str = "%%agent",
    ) -> NotebookRun | None:
        """Start a run with the live view (shared by %%agent and %agent rerun). Every option is checked by the
        rules the terminal and ``%agent config`` use; a bad one prints one sentence (prefixed with ``label``)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            print(f"{label} needs a running event loop: use it in a Jupyter kernel (or `await agent.run()`).")
            return None
        cfg = STATE.config
        try:
            for option, value in (("--model", model), ("--url", url), ("--prompt", prompt), ("--out", out)):
                options.no_placeholder(option, value)
            if not out.isidentifier():
                raise options.OptionError(f"--out needs a Python variable name, got {out!r}.")
            steps = cfg.max_steps if max_steps is None else options.max_steps(max_steps)
            wait = cfg.approval_timeout if timeout is None else options.timeout(timeout)
            start_url = None if url is None else options.url(url)
            policy = check_policy(options.approve(approve) if approve is not None else cfg.approve)
            if model is not None:
                options.model(model)
            system_prompt = STATE.prompt_text(prompt)
            chosen, note = resolve_model(model, task)
        except (ValueError, OSError) as exc:  # ModelConfigError is a ValueError: a missing key, package or bad name
            print(f"{label}: {exc}")
            return None
        holder: list[NotebookRun] = []
        view = RunView(
            task,
            f"{chosen.provider}:{chosen.id}",
            steps,
            on_stop=lambda: holder[0].stop() if holder else None,
            note=note,
        )
        agent = PageAgent(
            model=chosen,
            max_steps=steps,
            approval=policy,
            approver=make_approver(view, lambda: holder[0].session if holder else None),
            approval_timeout=wait,
            on_ask_user=make_ask_user(view) if ask else None,
            enable_javascript=js,
            vision=bool(vision if vision is not None else cfg.vision),
            screenshots=cfg.screenshots,
            full_page=full_page,
            system_prompt=system_prompt,
            start_url=start_url,
            runs_dir=cfg.runs_dir or None,
        )
        run = NotebookRun(agent, task, view, kernel_browser=True, name=out)
        holder.append(run)
        STATE.runs.append(run)
        run.show()
        run.start()
        if self.shell is not None:
            self.shell.user_ns[out] = run
        return run

    @magic_arguments()
    @argument("--name", "-n", default="custom", help="name of this prompt version (default 'custom')")
    @argument("--append", "-a", action="store_true", help="append the body to the default prompt instead")
    @cell_magic
    def agent_prompt(self, line: str, cell: str) -> None:
        """Set the system prompt for this session's ``%%agent`` runs from the cell body (or append to the
        default one with ``--append``). ``%agent prompt`` shows the active prompt and its diff."""
        from ..agent import default_system_prompt, prompt_hash

        args = parse_argstring(self.agent_prompt, line)
        body = cell.strip("\n")
        if not body.strip():
            print("The cell body is the prompt text.")
            return
        if args.name == "default":
            print("'default' names the packaged prompt; choose another --name.")
            return
        text = (
            f"{default_system_prompt().rstrip()}\n\nAdditional instructions:\n{body.strip()}\n"
            if args.append
            else body.rstrip() + "\n"
        )
        STATE.prompts[args.name] = text
        STATE.config.prompt = args.name
        print(
            f"Prompt {args.name!r} is active (version {prompt_hash(text)}, {len(text):,} chars). "
            "`%agent prompt default` goes back to the packaged one."
        )

    @line_magic("agent")  # type: ignore[arg-type]
    def agent_line(self, line: str) -> Any:
        """``%agent config [--model M] [--max-steps N] [--approve P] [--headed|--headless] [--vision on|off]``,
        ``%agent browser [URL] [--headed]``, ``%agent stop``, ``%agent runs``, ``%agent help``."""
        words = line.split()
        command, rest = (words[0], words[1:]) if words else ("help", [])
        handler = getattr(self, f"_cmd_{command.replace('-', '_')}", None)
        if handler is None:
            print(f"Unknown %agent command {command!r}.\n")
            command, handler = "help", self._cmd_help
        return handler(rest)

    # -- line commands ---------------------------------------------------------------------------------------
    def _cmd_help(self, rest: list[str]) -> None:
        print(
            "%%agent [--model M] [--url URL] [--max-steps N] [--approve POLICY] [--vision] [--js] [--ask]\n"
            "        [--timeout S] [--out NAME]      run the task in the cell body (see %%agent?)\n"
            "%agent config [--model M] [--max-steps N] [--approve POLICY] [--headed|--headless] [--vision on|off]\n"
            "%agent browser [URL] [--headed|--headless]   show the shared browser (and open a URL)\n"
            "%agent stop                                  stop every running run\n"
            "%agent runs                                  the saved runs (status, steps, tokens, cost, prompt)\n"
            "%agent rerun RUN [--prompt NAME] [--model M] [--out NAME]   repeat a saved run's task with a change\n"
            "%agent compare RUN_A RUN_B                   two runs side by side, first divergence marked\n"
            "%agent prompt [NAME|default]                 show (or choose) the active system prompt\n"
            "%agent snapshot                              what the model would see of the current page\n"
            "RUN is a run id, a unique part of one, or a position (1 = oldest, -1 = newest).\n"
            f"Approval policies: {', '.join(POLICY_NAMES)}."
        )

    def _cmd_config(self, rest: list[str]) -> None:
        """Change the session defaults; nothing is stored unless every option is valid."""
        cfg = STATE.config
        changes: dict[str, Any] = {}
        it = iter(rest)
        for word in it:
            try:
                if word in ("--headed", "--headless"):
                    changes["headless"] = word == "--headless"
                    continue
                if word not in _CONFIG_OPTIONS:
                    known = ", ".join([*_CONFIG_OPTIONS, "--headed", "--headless"])
                    raise options.OptionError(f"Unknown option {word!r} for %agent config. Options: {known}.")
                value = next(it, None)
                if value is None:
                    raise options.OptionError(f"{word} needs a value.")
                options.no_placeholder(word, value)
                field_name, check = _CONFIG_OPTIONS[word]
                changes[field_name] = check(value, word)
            except (options.OptionError, ValueError) as exc:
                print(f"%agent config: {exc} Nothing was changed.")
                return
        for name, value in changes.items():
            setattr(cfg, name, value)
        print(cfg.describe())

    def _cmd_stop(self, rest: list[str]) -> None:
        print(f"Stopped {STATE.stop_all()} running run(s).")

    def _cmd_runs(self, rest: list[str]) -> None:
        from IPython.display import HTML

        from ..agent.runs import scan_runs
        from .tuning import runs_table_html

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
            display(HTML(runs_table_html(saved)))

    def _cmd_rerun(self, rest: list[str]) -> None:
        from ..agent.runs import find_run, load_run

        if not rest:
            print("usage: %agent rerun RUN [--prompt NAME] [--model M] [--out NAME]")
            return
        opts = _options(rest[1:], {"--prompt", "--model", "--out", "--max-steps", "--approve"})
        if opts is None:
            return
        try:  # the options first: a typo is reported whatever runs are saved
            if opts.get("--max-steps") is not None:
                options.max_steps(opts["--max-steps"])
            if opts.get("--approve") is not None:
                options.approve(opts["--approve"])
            saved = load_run(find_run(STATE.config.runs_dir, rest[0]), with_screenshots=False)
        except (ValueError, OSError) as exc:
            print(f"%agent rerun: {exc}")
            return
        settings = saved.settings
        # A run file is input, perhaps from someone else: the policy and JavaScript stay this kernel's.
        kept = (
            [f"approval {settings.get('approval')!r}"] if settings.get("approval") not in (None, cfg_policy()) else []
        )
        if settings.get("enable_javascript"):
            kept.append("JavaScript")
        if kept and not opts.get("--approve"):
            print(
                f"The saved run used {' and '.join(kept)}; this rerun uses this kernel's approval policy "
                f"({cfg_policy()}) without JavaScript. Pass --approve POLICY to choose another policy."
            )
        prompt = opts.get("--prompt")
        if prompt is None and saved.system_prompt:
            prompt = f"run-{saved.prompt_version}"
            STATE.prompts[prompt] = saved.system_prompt
        self.launch(
            saved.task,
            model=opts.get("--model") or saved.model,
            url=settings.get("start_url"),
            max_steps=opts.get("--max-steps") or settings.get("max_steps"),
            approve=opts.get("--approve"),
            prompt=prompt,
            vision=settings.get("vision"),
            js=False,
            full_page=bool(settings.get("full_page")),
            out=opts.get("--out") or "agent_run",
            label="%agent rerun",
        )

    def _cmd_compare(self, rest: list[str]) -> None:
        from IPython.display import HTML

        from ..agent.runs import compare_runs, find_run, load_run
        from .tuning import compare_html

        if len(rest) != 2:
            print("usage: %agent compare RUN_A RUN_B")
            return
        try:
            a, b = (load_run(find_run(STATE.config.runs_dir, ref), with_screenshots=False) for ref in rest)
        except (ValueError, OSError) as exc:
            print(f"%agent compare: {exc}")
            return
        display(HTML(compare_html(compare_runs(a, b))))

    def _cmd_prompt(self, rest: list[str]) -> None:
        from ..agent import default_system_prompt, prompt_hash
        from .tuning import as_html_pre, prompt_diff

        if rest:
            try:
                STATE.prompt_text(rest[0])
            except ValueError as exc:
                print(exc)
                return
            STATE.config.prompt = rest[0]
        text = STATE.prompt_text()
        print(
            f"Active prompt: {STATE.config.prompt!r}, version {prompt_hash(text)}, {len(text):,} chars. "
            f"Known: {', '.join(['default', *STATE.prompts])}"
        )
        diff = prompt_diff(default_system_prompt(), text)
        display(as_html_pre(diff if diff else text))

    def _cmd_snapshot(self, rest: list[str]) -> Shown:
        from .tuning import as_html_pre

        async def show() -> Any:
            browser = await STATE.get_browser()
            snap = await browser.snapshot(full_page="--full-page" in rest)
            return as_html_pre(snap.text)

        return Shown(show(), "%agent snapshot")

    def _cmd_browser(self, rest: list[str]) -> Shown:
        typed = next((w for w in rest if not w.startswith("--")), None)
        if "--headed" in rest:
            STATE.config.headless = False
        if "--headless" in rest:
            STATE.config.headless = True

        async def show() -> Any:
            import html

            import ipywidgets as widgets

            from .view import tabs_html

            url = None
            if typed is not None:  # a bad URL is reported by the Shown, in one line
                options.no_placeholder("URL", typed)
                url = options.url(typed, "URL")
            browser = await STATE.get_browser()
            if url:
                await browser.open(url)
            shot = await browser.screenshot(format="jpeg")
            title = html.escape(await browser.call(lambda: browser.page.title()))
            return widgets.VBox(
                [
                    widgets.HTML(f"<b>{title}</b><br><code>{html.escape(browser.page.url)}</code>"),
                    widgets.Image(value=shot, format="jpeg", layout=widgets.Layout(max_width="640px")),
                    widgets.HTML(tabs_html(await STATE.tab_owners())),
                ]
            )

        return Shown(show(), "%agent browser")


def cfg_policy() -> str:
    """This kernel's approval policy by name."""
    return STATE.config.approve


class Shown:
    """What ``%agent snapshot`` and ``%agent browser`` return: the work runs as a task on the kernel loop (the
    browser is async), and its result is displayed in the cell that asked for it.

    A cell whose line is just ``%agent snapshot`` is rewritten to ``await`` it (see :func:`_await_display`), so
    the cell stays busy until the picture is there and the output belongs to that cell, also under nbclient
    and nbval. Called any other way (``get_ipython().run_line_magic``), the task displays when done.
    """

    def __init__(self, coro: Any, label: str) -> None:
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
            message = str(exc) if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}"
            print(f"{self.label}: {message}")
            return
        display(self.task.result())

    def _done(self, _task: Any) -> None:
        if not self.awaited:
            self._show()

    def __await__(self) -> Any:
        self.awaited = True
        yield from asyncio.wait([self.task]).__await__()
        self._show()

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(f"<{self.label}: {'done' if self.task.done() else 'working'}>")


_DISPLAY_LINE = re.compile(r"^get_ipython\(\)\.run_line_magic\('agent', '(snapshot|browser)\b.*'\)\s*$")


def _await_display(lines: list[str]) -> list[str]:
    """An input transformer: a top-level line that is only ``%agent snapshot``/``%agent browser`` awaits the
    command, so its output is displayed by (and in) its own cell."""
    return [f"await {line}" if _DISPLAY_LINE.match(line) else line for line in lines]


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


def _options(words: list[str], allowed: set[str]) -> dict[str, str] | None:
    """``--key value`` pairs from a line magic's words; prints what is wrong and returns None."""
    out: dict[str, str] = {}
    it = iter(words)
    for word in it:
        if word not in allowed:
            print(f"Unknown option {word!r}; expected one of {', '.join(sorted(allowed))}")
            return None
        value = next(it, None)
        if value is None:
            print(f"{word} needs a value")
            return None
        out[word] = value
    return out


def load(ipython: Any) -> None:
    if getattr(ipython, "_notebook_agent_loaded", False):
        return
    ipython.register_magics(AgentMagics)
    install_interrupt(ipython)
    transformers = getattr(ipython, "input_transformers_post", None)
    if transformers is not None and _await_display not in transformers:
        transformers.append(_await_display)
    ipython._notebook_agent_loaded = True


def unload(ipython: Any) -> None:
    STATE.stop_all("The extension was unloaded")
    uninstall_interrupt(ipython)
    transformers = getattr(ipython, "input_transformers_post", None)
    if transformers is not None and _await_display in transformers:
        transformers.remove(_await_display)
    ipython._notebook_agent_loaded = False

"""The IPython extension: ``%%agent`` runs a task, ``%agent`` configures and controls the session.

Options use IPython's magic-argument conventions (argparse, shell quoting), so ``%%agent?`` shows the help.
The cell body is the task; lines starting with ``#`` are comments, and ``{name}`` is filled from the user's
namespace (unknown names stay as written).
"""

from __future__ import annotations

import asyncio
import string
from typing import Any

from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display

from ..browser.agent import PageAgent
from ..browser.approval import POLICY_NAMES, check_policy
from .runtime import STATE, NotebookRun, make_approver, make_ask_user, resolve_model
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
    @argument("--model", "-m", default=None, help="provider:model, e.g. openai:gpt-4.1-mini; 'demo' = offline")
    @argument("--url", "-u", default=None, help="open this URL before the first step")
    @argument("--max-steps", type=int, default=None, help="model calls at most (default from %%agent config)")
    @argument("--approve", default=None, help=f"approval policy: {', '.join(POLICY_NAMES)}")
    @argument("--vision", action="store_true", default=None, help="also send a screenshot to the model")
    @argument("--js", action="store_true", help="enable the execute_javascript action")
    @argument("--ask", action="store_true", help="let the agent ask you questions (ask_user)")
    @argument("--full-page", action="store_true", help="show the model the whole page, not just the viewport")
    @argument("--timeout", type=float, default=None, help="seconds to wait for an approval before denying")
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
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            print("%%agent needs a running event loop: use it in a Jupyter kernel (or `await agent.run()`).")
            return
        cfg = STATE.config
        try:
            policy = check_policy(args.approve or cfg.approve)
            model, note = resolve_model(args.model, task)
        except ValueError as exc:  # ModelConfigError is a ValueError: a missing key, package or bad name
            print(f"%%agent: {exc}")
            return
        max_steps = args.max_steps or cfg.max_steps
        run_holder: list[NotebookRun] = []
        view = RunView(
            task,
            f"{model.provider}:{model.id}",
            max_steps,
            on_stop=lambda: run_holder[0].stop() if run_holder else None,
            note=note,
        )
        agent = _LazyBrowserAgent(
            model=model,
            max_steps=max_steps,
            approval=policy,
            approver=make_approver(view, lambda: STATE.browser),
            approval_timeout=args.timeout or cfg.approval_timeout,
            on_ask_user=make_ask_user(view) if args.ask else None,
            enable_javascript=args.js,
            vision=bool(args.vision if args.vision is not None else cfg.vision),
            screenshots=cfg.screenshots,
            full_page=args.full_page,
        )
        agent.pending_url = args.url
        run = NotebookRun(agent, task, view)
        run_holder.append(run)
        STATE.runs.append(run)
        display(view.root)
        run.start()
        if self.shell is not None:
            self.shell.user_ns[args.out] = run

    @line_magic("agent")  # type: ignore[arg-type]
    def agent_line(self, line: str) -> None:
        """``%agent config [--model M] [--max-steps N] [--approve P] [--headed|--headless] [--vision on|off]``,
        ``%agent browser [URL] [--headed]``, ``%agent stop``, ``%agent runs``, ``%agent help``."""
        words = line.split()
        command, rest = (words[0], words[1:]) if words else ("help", [])
        handler = getattr(self, f"_cmd_{command.replace('-', '_')}", None)
        if handler is None:
            print(f"Unknown %agent command {command!r}.\n")
            command, handler = "help", self._cmd_help
        handler(rest)

    # -- line commands ---------------------------------------------------------------------------------------
    def _cmd_help(self, rest: list[str]) -> None:
        print(
            "%%agent [--model M] [--url URL] [--max-steps N] [--approve POLICY] [--vision] [--js] [--ask]\n"
            "        [--timeout S] [--out NAME]      run the task in the cell body (see %%agent?)\n"
            "%agent config [--model M] [--max-steps N] [--approve POLICY] [--headed|--headless] [--vision on|off]\n"
            "%agent browser [URL] [--headed|--headless]   show the shared browser (and open a URL)\n"
            "%agent stop                                  stop every running run\n"
            "%agent runs                                  runs of this session\n"
            f"Approval policies: {', '.join(POLICY_NAMES)}."
        )

    def _cmd_config(self, rest: list[str]) -> None:
        cfg = STATE.config
        it = iter(rest)
        for word in it:
            try:
                if word in ("--model", "-m"):
                    cfg.model = next(it)
                elif word == "--max-steps":
                    cfg.max_steps = int(next(it))
                elif word == "--approve":
                    cfg.approve = str(check_policy(next(it)))
                elif word == "--timeout":
                    cfg.approval_timeout = float(next(it))
                elif word in ("--headed", "--headless"):
                    cfg.headless = word == "--headless"
                elif word == "--vision":
                    cfg.vision = next(it).lower() in ("on", "true", "1", "yes")
                elif word == "--screenshots":
                    cfg.screenshots = next(it).lower() in ("on", "true", "1", "yes")
                else:
                    print(f"Unknown option {word!r} for %agent config.")
                    return
            except (StopIteration, ValueError) as exc:
                print(f"Bad value for {word}: {exc or 'missing'}")
                return
        print(cfg.describe())

    def _cmd_stop(self, rest: list[str]) -> None:
        print(f"Stopped {STATE.stop_all()} running run(s).")

    def _cmd_runs(self, rest: list[str]) -> None:
        if not STATE.runs:
            print("No runs yet in this session.")
            return
        for i, run in enumerate(STATE.runs, 1):
            r = run.result
            if r is None:
                print(f"{i:3}  {'running' if not run.done else 'error':10} {run.task_text[:60]}")
            else:
                print(
                    f"{i:3}  {r.status:10} {len(r.steps):3} steps  {r.usage.input + r.usage.output:7} tokens  "
                    f"{r.duration_s:6.1f}s  {r.task[:50]}"
                )

    def _cmd_browser(self, rest: list[str]) -> None:
        url = next((w for w in rest if not w.startswith("--")), None)
        if "--headed" in rest:
            STATE.config.headless = False
        if "--headless" in rest:
            STATE.config.headless = True

        async def show() -> None:
            import ipywidgets as widgets

            browser = await STATE.get_browser()
            if url:
                await browser.page.goto(url)
            shot = await browser.screenshot(format="jpeg")
            title = await browser.page.title()
            display(
                widgets.VBox(
                    [
                        widgets.HTML(f"<b>{title}</b><br><code>{browser.page.url}</code>"),
                        widgets.Image(value=shot, format="jpeg", layout=widgets.Layout(max_width="640px")),
                    ]
                )
            )

        _schedule(show())


class _LazyBrowserAgent(PageAgent):
    """A PageAgent that takes the kernel's shared browser when its run starts (not when the cell parses)."""

    pending_url: str | None = None

    async def stream(self, task: str):  # type: ignore[no-untyped-def, override]
        browser = await STATE.get_browser()
        self.browser = browser
        if self.pending_url:
            await browser.page.goto(self.pending_url)
        async for event in super().stream(task):
            yield event


def _schedule(coro: Any) -> None:
    """Run a coroutine on the kernel loop (its display output is parented to the calling cell)."""
    task = asyncio.get_running_loop().create_task(coro)
    STATE.tasks.add(task)
    task.add_done_callback(STATE.tasks.discard)


def load(ipython: Any) -> None:
    if getattr(ipython, "_notebook_agent_loaded", False):
        return
    ipython.register_magics(AgentMagics)
    ipython._notebook_agent_loaded = True


def unload(ipython: Any) -> None:
    STATE.stop_all("The extension was unloaded")
    ipython._notebook_agent_loaded = False

"""The IPython extension: ``%%agent`` runs a task, ``%agent`` configures and controls the session.

Options use IPython's magic-argument conventions (argparse, shell quoting), so ``%%agent?`` shows the help.
The cell body is the task; lines starting with ``#`` are comments, and ``{name}`` is filled from the user's
namespace (unknown names stay as written).
"""

from __future__ import annotations

import argparse
import asyncio
import re
import shlex
import string
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class, no_var_expand
from IPython.core.magic_arguments import argument, magic_arguments

from ..agent import PageAgentResult
from ..agent.run_options import RunOptions
from ..agent.step.replay_pilot import replaying
from ..config import options
from ..config.run_flags import add_run_flags, run_options
from .commands import COMMANDS, Commands
from .interrupt import install_interrupt, uninstall_interrupt
from .map_view import MapRun, MapView
from .runtime import STATE, NotebookRun, make_ask_user, resolve_model
from .views.run_view import RunView

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell


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
    """``%%agent`` and ``%%agent_prompt`` (cell magics) and ``%agent WORD`` (dispatched to :class:`Commands`)."""

    def __init__(self, shell: InteractiveShell | None = None) -> None:
        super().__init__(shell)
        self.commands = Commands(self.launch)

    @magic_arguments()
    @argument(
        "--each",
        default=None,
        metavar="ROWS",
        help="run the cell's task for every row of ROWS (a DataFrame or list in the notebook): {column} per row",
    )
    @argument(
        "--continue",
        dest="follow",
        action="store_true",
        help="follow up the last finished run (the one bound to --out, else the kernel's newest): its history and page",
    )
    @argument("--out", "-o", default="agent_run", help="variable bound to the run handle (default agent_run)")
    @no_var_expand  # expand_line: with --each, a {column} of --url is the rows', not the notebook's
    @cell_magic
    def agent(self, line: str, cell: str) -> None:
        """Run the page agent on the task in the cell body; the cell returns at once.

        Each step appears below as it happens. ``result = await agent_run`` in a later cell waits for the
        result. ``%agent`` (one %) configures and controls the session: ``%agent help``.
        """
        namespace = self.shell.user_ns if self.shell else {}
        args = _parse(self.agent, expand_line(line, namespace), "%%agent")
        if args is None:
            return
        # with --each, {column} is each row's: the body is the template, not filled from the notebook
        task = task_text(cell, {} if args.each else namespace)
        if not task:
            print("%%agent: The cell body is the task: write what the agent should do.")
            return
        try:
            opts = cell_options(args, namespace)
        except ValueError as exc:
            print(f"%%agent: {exc}")
            return
        if args.each is not None:
            self.launch_map(task, opts, args.each, args.out, namespace)
            return
        self.launch(task, opts, out=args.out, follow=args.follow)

    def launch(
        self,
        task: str,
        opts: RunOptions,
        *,
        out: str = "agent_run",
        label: str = "%%agent",
        follow: bool = False,
        replay: PageAgentResult | None = None,
    ) -> NotebookRun | None:
        """Start a run of ``opts`` (checked by the one parser, config/run_flags.py) with the live view, shared by
        %%agent, %agent rerun and %agent replay: what ``opts`` leaves unset is ``%agent config``'s. A problem
        prints one sentence (prefixed with ``label``). ``replay``: the recorded run whose actions are replayed
        (``opts.url`` is then the base URL to replay against)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            print(f"{label} needs a running event loop: use it in a Jupyter kernel (or `await agent.run()`).")
            return None
        cfg = STATE.config
        try:
            options.no_placeholder("--out", out)
            if not out.isidentifier():
                raise options.OptionError(f"--out needs a Python variable name, got {out!r}.")
            if opts.row_max_cost is not None or opts.row_max_tokens is not None:
                raise options.OptionError(
                    "--row-max-cost and --row-max-tokens are each row's budget in a map (--each); a run's is "
                    "--max-cost / --max-tokens."
                )
            opts = opts.with_defaults(
                max_steps=cfg.max_steps, timeout=cfg.approval_timeout, approve=cfg.approve, vision=cfg.vision
            )
            system_prompt = STATE.prompt_override(opts.prompt)
            previous = self._run_to_follow(out) if follow else None
            chosen, note = resolve_model(opts.model, task)
        except (ValueError, OSError) as exc:  # ModelConfigError is a ValueError: a missing key, package or bad name
            print(f"{label}: {exc}")
            return None
        if previous is not None:
            note = " · ".join(filter(None, [note, f"follows up run {previous.run_id}"]))
        view = RunView(task, f"{chosen.provider}:{chosen.id}", opts.max_steps or 0, note=note)
        try:  # refused here in one sentence: a cost budget without prices, --tracing without its packages
            agent = (replace(opts, url=None) if replay is not None else opts).make_agent(
                chosen,
                on_ask_user=make_ask_user(view) if opts.ask else None,
                screenshots=cfg.screenshots,
                system_prompt=system_prompt,
            )
        except ValueError as exc:  # a setting the agent refuses before anything runs (--tracing, its packages missing)
            print(f"{label}: {exc}")
            return None
        pilot = None
        if replay is not None:  # %agent replay: the recorded actions, this agent's model heals
            try:
                agent, pilot = replaying(agent, replay, **opts.replay_options())
            except ValueError as exc:
                print(f"{label}: {exc}")
                return None
        run = NotebookRun(agent, task, view, kernel_browser=True, name=out, previous=previous, pilot=pilot)
        STATE.runs.append(run)
        run.show()
        run.start()
        if self.shell is not None:
            self.shell.user_ns[out] = run
        return run

    def launch_map(
        self, template: str, opts: RunOptions, each: str, out: str, namespace: dict[str, Any]
    ) -> MapRun | None:
        """``%%agent --each ROWS``: the task for every row, in one view with a progress bar (notebook/map_view.py)."""
        from ..agent.batch.map_runner import start_pages
        from ..agent.batch.map_table import MapInputError, check_template, normalise_rows

        cfg = STATE.config
        try:
            options.no_placeholder("--each", each)
            if each not in namespace:
                raise options.OptionError(f"--each {each}: {each!r} is not defined in the notebook.")
            rows = namespace[each]
            columns, values = normalise_rows(rows)
            check_template(template, columns, values)
            start_pages(opts.url, columns, values)  # each row's start page, by the rule of every front
            opts = opts.with_defaults(
                concurrency=4, max_steps=cfg.max_steps, approve=cfg.approve, timeout=cfg.approval_timeout
            )
            chosen, _ = resolve_model(opts.model, template)
            recipe = None
            if opts.recipe is not None:
                from .recipe_magic import recipe_in

                recipe = recipe_in(opts.recipe, template, namespace)
            elif opts.mode is not None:
                raise MapInputError(f"--mode {opts.mode}: how a recipe's rows go; give --recipe RUN too.")
            agent = opts.make_agent(  # each row's budget is --row-max-cost/--row-max-tokens; the map keeps its own
                chosen,
                row=True,
                own_tab=True,
                screenshots=cfg.screenshots,
                system_prompt=STATE.prompt_override(opts.prompt),
            )
        except (ValueError, OSError, MapInputError) as exc:
            print(f"%%agent: {exc}")
            return None
        view = MapView(template, len(values), f"{chosen.provider}:{chosen.id}")
        view.max_steps = opts.max_steps or cfg.max_steps
        budget = {k: v for k, v in opts.map_options().items() if k in ("max_cost", "max_tokens")}
        run = MapRun(agent, template, rows, view, name=out, concurrency=opts.concurrency or 4, budget=budget)
        run.recipe, run.heal, run.mode = recipe, opts.heal, opts.mode or "auto"
        STATE.runs.append(run)
        run.show()
        run.start()
        if self.shell is not None:
            self.shell.user_ns[out] = run
        return run

    def _run_to_follow(self, out: str) -> PageAgentResult:
        """``--continue``: the finished run bound to ``out`` in the notebook, else the kernel's newest finished run."""
        bound = (self.shell.user_ns if self.shell else {}).get(out)
        if isinstance(bound, NotebookRun) and bound.result is not None:
            return bound.result
        finished = [r.result for r in STATE.runs if isinstance(r, NotebookRun) and r.result is not None]
        if not finished:
            raise options.OptionError("--continue: no run of this kernel has finished yet; run a task first.")
        return finished[-1]

    @magic_arguments()
    @argument("--name", "-n", default="custom", help="name of this prompt version (default 'custom')")
    @argument("--append", "-a", action="store_true", help="append the body to the default prompt instead")
    @cell_magic
    def agent_prompt(self, line: str, cell: str) -> None:
        """Set the system prompt for this session's ``%%agent`` runs from the cell body (or append to the
        default one with ``--append``). ``%agent prompt`` shows the active prompt and its diff."""
        from ..agent import default_system_prompt, prompt_hash

        args = _parse(self.agent_prompt, line, "%%agent_prompt")
        if args is None:
            return
        body = cell.strip("\n")
        if not body.strip():
            print("%%agent_prompt: The cell body is the prompt text.")
            return
        if args.name == "default":
            print("%%agent_prompt: 'default' names the packaged prompt; choose another --name.")
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
        name = command.replace("-", "_")
        handler = getattr(self.commands, name, None) if name in COMMANDS else None
        if handler is None:
            print(f"%agent: Unknown %agent command {command!r}.\n")
            handler = self.commands.help
        return handler(rest)


CELL_FLAGS = ("model", "url", "max_steps", "approve", "prompt", "profile", "vision", "js", "ask", "full_page",
              "timeout", "trace", "tracing", "concurrency", "recipe", "heal", "mode", "output", "allowed_domains",
              "max_cost", "max_tokens", "row_max_cost", "row_max_tokens")  # fmt: skip
"""The run flags of ``%%agent`` (config/run_flags.py: the same flags, checks and messages as the terminal's)."""

add_run_flags(
    AgentMagics.agent.parser,
    CELL_FLAGS,
    output="the answer's type from the notebook: a pydantic model, TypedDict or dataclass, or list[NAME]",
    concurrency="with --each: rows at a time (default 4)",
    recipe="with --each: replay RUN per row with its values, no model call (a run, a recipe file or variable)",
    heal="with --recipe: fail a row whose page differs, saying why",
    mode="with --recipe: how rows go: auto (by the learned request once 3 rows agree both ways), request, page",
    max_cost="a budget in dollars: the run stops (status budget) before a model call would cross it; with --each, "
    "the whole map's",
    max_tokens="a budget in tokens, as --max-cost; with --each, the whole map's",
    row_max_cost="with --each: each row's budget in dollars",
    row_max_tokens="with --each: each row's budget in tokens",
)


def cell_options(args: argparse.Namespace, namespace: dict[str, Any]) -> RunOptions:
    """``%%agent``'s options, by the one parser: ``{name}`` left unfilled is an error, ``--output`` names a type
    in the notebook, an alias (``%agent config --alias``) names a model; with ``--each``, ``--url`` is each row's
    start page and its ``{column}``s are the rows' (browser/url_template.py)."""
    each = getattr(args, "each", None) is not None
    return run_options(args, notebook=namespace, aliases=STATE.config.aliases, url_template=each)


def expand_line(line: str, namespace: dict[str, Any]) -> str:
    """``%%agent``'s line as IPython expands a magic's line (``{name}``, ``$name``, ``{expression}`` from the
    notebook; left as written when something cannot be expanded), except that a ``{name}`` the notebook does not
    define stays as written on its own (the option that has it says so) and, with ``--each ROWS``, a ``{column}``
    of the rows stays for each row to fill, as in the cell body: a column wins over a notebook variable."""
    from IPython.utils.text import DollarFormatter

    names = dict(namespace)
    names.update({n: "{" + n + "}" for n in _SIMPLE_FIELD.findall(line) if n not in namespace})
    try:
        each = parse_line(AgentMagics.agent, line).each
    except (UsageError, SystemExit):
        each = None
    if isinstance(each, str) and each in namespace:
        from ..agent.batch.map_table import normalise_rows

        try:
            columns, _ = normalise_rows(namespace[each])
        except Exception:
            columns = []  # not rows: the map says so when it reads them
        names.update({c: "{" + c + "}" for c in columns})
    try:
        return str(DollarFormatter().vformat(line, [], names))
    except Exception:
        return line


for _magic in (AgentMagics.agent, AgentMagics.agent_prompt):
    _magic.parser.allow_abbrev = False  # --max-step is a typo, not --max-steps
    # magic_arguments writes the usage of every magic with one "%" (its formatter adds "%" to the name); these
    # are cell magics, so ``%%agent?`` shows ``%%agent ...``.
    _magic.parser.prog = f"%{_magic.__name__}"
    _magic.__doc__ = _magic.parser.format_help()


class ParsedMagic(Protocol):
    """A magic decorated with ``@magic_arguments``: its argparse parser hangs on it."""

    parser: argparse.ArgumentParser


def parse_line(magic: ParsedMagic, line: str) -> argparse.Namespace:
    """The magic's options from its line, split into words as a terminal splits them (``shlex``: quotes group
    and are removed, ``--url "http://a b"`` is one value), so a line means what the same flags mean to
    ``notebook-agent``. A quote left open is a :class:`UsageError` in one sentence saying what to do."""
    try:
        words = shlex.split(line)
    except ValueError as exc:
        raise UsageError(f'{exc} in the line: close the quote, or escape it with a backslash (\\")') from None
    return magic.parser.parse_args(words)


def _parse(magic: ParsedMagic, line: str, label: str) -> argparse.Namespace | None:
    """The magic's options, or None after printing what is wrong in one line, with a "did you mean" for a
    misspelt option (options are never taken by a prefix)."""
    try:
        return parse_line(magic, line)
    except UsageError as exc:
        known = [s for action in magic.parser._actions for s in action.option_strings]
        print(f"{label}: {options.unknown_options_message(str(exc), known)}")
        return None


_SIMPLE_FIELD = re.compile(r"(?<!\{)\{([A-Za-z_]\w*)\}")

_DISPLAY_LINE = re.compile(r"^get_ipython\(\)\.run_line_magic\('agent', '(snapshot|browser)\b.*'\)\s*$")


def _await_display(lines: list[str]) -> list[str]:
    """An input transformer: a top-level line that is only ``%agent snapshot``/``%agent browser`` awaits the
    command, so its output is displayed by (and in) its own cell."""
    return [f"await {line}" if _DISPLAY_LINE.match(line) else line for line in lines]


def load(ipython: Any) -> None:
    """Register the magics on the IPython shell and mark it (an attribute of our own, set on the shell itself)."""
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

"""The one parser of a run's flags: each flag declared once (:data:`FLAGS`), added to any argparse parser
(:func:`add_run_flags`: the terminal's sub-commands, the ``%%agent`` cell magic, the ``%agent`` line commands)
and turned into a checked :class:`~notebook_agent.agent.run_options.RunOptions` by one function
(:func:`run_options`), with the messages of :mod:`.options`.

What differs between fronts is said as an argument, not written twice: a notebook's ``{name}`` left unfilled is
an error (``notebook=``, whose namespace also holds ``--output``'s type; in a terminal it is a JSON Schema file
or ``module:Class``), an alias names a model (``aliases=``), a map's ``--url`` may hold ``{column}``s
(``url_template=``: the start page of each row, with or without ``--recipe``, filled by the rule of
browser/url_template.py).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from ..agent.run_options import RunOptions

# This module is imported by the terminal's parser, so ``--help`` and ``--version`` answer without loading the
# agent: what checks the values (``.options``, the agent's types) is imported when a value is checked.
POLICY_HELP = "auto, ask-risky, ask-all, deny-risky"
"""The approval policies' names, as the help says them (a test holds them to the agent's ``POLICY_NAMES``)."""


@dataclass(frozen=True)
class Flag:
    """One flag: its spellings, the :class:`RunOptions` field it sets, its help, and whether it takes no value."""

    names: tuple[str, ...]
    field: str
    help: str
    switch: bool = False
    metavar: str | None = None
    repeat: bool = False
    """A list flag: given again, it adds to the list (``--allowed-domains a.com --allowed-domains b.org``)."""


FLAGS: dict[str, Flag] = {
    f.field: f
    for f in (
        Flag(
            ("--model", "-m"),
            "model",
            "provider:model, e.g. openai:gpt-4.1-mini; 'demo' = offline; 'replay:RUN' replays a saved run "
            "(default: %agent config's in a notebook, else NOTEBOOK_AGENT_MODEL, else demo)",
        ),
        Flag(("--url", "-u"), "url", "the start page: open this URL first"),
        Flag(("--max-steps",), "max_steps", "model calls at most, 1 or more (default 20, or %agent config's)"),
        Flag(
            ("--approve",),
            "approve",
            f"approval policy: {POLICY_HELP} (default: %agent config's; in a terminal ask-risky, "
            "deny-risky without one)",
        ),
        Flag(("--timeout",), "timeout", "seconds to wait for an approval before denying"),
        Flag(
            ("--max-cost",),
            "max_cost",
            "a budget in dollars: the run stops (status budget) before a model call would cross it; with a map, "
            "the whole map's",
            metavar="DOLLARS",
        ),
        Flag(
            ("--max-tokens",),
            "max_tokens",
            "a budget in tokens, as --max-cost; with a map, the whole map's",
            metavar="TOKENS",
        ),
        Flag(("--row-max-cost",), "row_max_cost", "with a map: each row's budget in dollars", metavar="DOLLARS"),
        Flag(("--row-max-tokens",), "row_max_tokens", "with a map: each row's budget in tokens", metavar="TOKENS"),
        Flag(("--profile",), "profile", "prompt profile: auto (small for a local model), default or small"),
        Flag(("--prompt", "-p"), "prompt", "a system prompt set with %%agent_prompt (default: the active one)"),
        Flag(("--vision",), "vision", "also send a screenshot to the model each step", switch=True),
        Flag(("--js",), "js", "enable the execute_javascript action", switch=True),
        Flag(("--ask",), "ask", "let the agent ask you questions (ask_user)", switch=True),
        Flag(("--full-page",), "full_page", "show the model the whole page, not just the viewport", switch=True),
        Flag(("--trace",), "trace", "record a Playwright trace of the run (trace.zip)", switch=True),
        Flag(
            ("--tracing",),
            "tracing",
            "send the run as an OpenTelemetry trace to the OTLP endpoint of OTEL_EXPORTER_OTLP_ENDPOINT (default: "
            "only when that is set)",
            switch=True,
        ),
        Flag(("--headed",), "headed", "show the browser window", switch=True),
        Flag(
            ("--output",),
            "output",
            "the answer's type: in a notebook a pydantic model, TypedDict or dataclass (or list[NAME]); in a "
            "terminal a JSON Schema file or module:Class (list[module:Class])",
            metavar="TYPE",
        ),
        Flag(
            ("--allowed-domains",),
            "allowed_domains",
            "where navigation may go, comma-separated (github.com, *.github.com, http://127.0.0.1:8000)",
            metavar="DOMAINS",
            repeat=True,
        ),
        Flag(("--no-heal",), "heal", "a replayed step that cannot be replayed fails, saying why", switch=True),
        Flag(("--concurrency",), "concurrency", "rows at a time (default 4)"),
        Flag(
            ("--recipe",),
            "recipe",
            "replay RUN per row with its values, no model call (a run, a recipe file, or a notebook variable)",
            metavar="RUN",
        ),
        Flag(
            ("--mode",),
            "mode",
            "with --recipe: how rows go: auto (by the recipe's learned request once 3 rows agree both ways, else by "
            "the page; the default), request, or page",
            metavar="WAY",
        ),
    )
}
"""Every flag of a run, by the :class:`RunOptions` field it sets."""


def help_text(text: str) -> str:
    """``text`` as argparse must be given it to print it as written: argparse reads a help string as a ``%``
    template (``%(default)s``), so ``%agent config's`` would print the action's whole ``__dict__`` there. The
    flags' help speaks of ``%agent`` and ``%%agent_prompt``; every help string of a flag passes here once."""
    return text.replace("%", "%%")


def add_run_flags(parser: argparse.ArgumentParser, fields: Iterable[str], **help: str) -> None:
    """Add the flags of ``fields`` to ``parser`` (``help``: a front's own help for a field). Every flag defaults to
    ``None`` ("not given"), so :func:`run_options` leaves the front's default in place."""
    for name in fields:
        flag = FLAGS[name]
        kwargs: dict[str, Any] = {"dest": name, "default": None, "help": help_text(help.get(name, flag.help))}
        if flag.switch:
            kwargs["action"] = "store_const"
            kwargs["const"] = name != "heal"  # --no-heal sets heal to False; every other switch sets True
        elif flag.metavar:
            kwargs["metavar"] = flag.metavar
        if flag.repeat:  # every list flag, said once: given again, it adds to the list
            kwargs["action"] = "append"
            kwargs["help"] += " (repeatable: each adds to the list)"
        parser.add_argument(*flag.names, **kwargs)


def given_list(value: object) -> list[str]:
    """A list flag's values as given: each ``--flag`` once (argparse's ``append``), or one value (a mapping's)."""
    return [str(v) for v in value] if isinstance(value, (list, tuple)) else [str(value)]


def _domains(value: object) -> tuple[str, ...]:
    """Every ``--allowed-domains`` given, added up; an empty one is an error (it would mean no restriction)."""
    from ..agent.safety.domains import parse_domains
    from .options import OptionError

    try:
        return tuple(d.text for text in given_list(value) for d in parse_domains(text, option="--allowed-domains"))
    except ValueError as exc:
        message = str(exc)
        raise OptionError(message if message.startswith("--") else f"--allowed-domains: {message}") from None


def run_options(
    given: argparse.Namespace | Mapping[str, Any],
    *,
    notebook: Mapping[str, Any] | None = None,
    aliases: Mapping[str, str] | None = None,
    url_template: bool = False,
) -> RunOptions:
    """The :class:`RunOptions` of parsed flags (an argparse namespace, or ``{field: value}``), every value
    checked by :mod:`.options`; a bad one raises :class:`~.options.OptionError` naming the flag. Fields the
    namespace does not hold, or holds as ``None``, stay unset. ``notebook``: the notebook's namespace (a
    ``{name}`` IPython left unfilled is an error, and ``--output`` names a type in it)."""
    from ..agent.run_options import RunOptions
    from . import options

    values = vars(given) if isinstance(given, argparse.Namespace) else dict(given)
    got = {name: values[name] for name in FLAGS if values.get(name) is not None}
    if notebook is not None:
        for name in ("model", "url", "prompt", "recipe", "output"):
            if name in got and not (name == "url" and url_template):  # a map's {column}s are its rows
                options.no_placeholder(FLAGS[name].names[0], got[name])
    chosen: dict[str, Any] = {}
    for name, value in got.items():
        option = FLAGS[name].names[0]
        if name == "model":
            name_typed = (aliases or {}).get(value, value)  # an alias names a model
            chosen[name] = options.model(name_typed, option)
        elif name == "url":
            chosen[name] = options.url_template(value, option) if url_template else options.url(value, option)
        elif name == "max_steps":
            chosen[name] = options.max_steps(value, option)
        elif name == "approve":
            chosen[name] = options.approve(value, option)
        elif name == "timeout":
            chosen[name] = options.timeout(value, option)
        elif name in ("max_cost", "row_max_cost"):
            chosen[name] = options.max_cost(value, option)
        elif name in ("max_tokens", "row_max_tokens"):
            chosen[name] = options.max_tokens(value, option)
        elif name == "profile":
            chosen[name] = options.profile(value, option)
        elif name == "output":
            chosen[name] = (
                options.output_in_namespace(value, notebook, option)
                if notebook is not None
                else options.output_from_file_or_module(value, option)
            )
        elif name == "allowed_domains":
            chosen[name] = _domains(value)
        elif name == "concurrency":
            chosen[name] = options.concurrency(value, option)
        elif name == "mode":
            chosen[name] = options.map_mode(value, option)
        elif FLAGS[name].switch:
            chosen[name] = bool(value)
        else:
            chosen[name] = str(value)
    return RunOptions(**chosen)


class WordsParser(argparse.ArgumentParser):
    """argparse for a line command's words (``%agent rerun RUN --max-steps 5``): an error is an
    :class:`~.options.OptionError` in one sentence (never an exit), an unknown option is said with a "did you
    mean", and no option is taken by its prefix."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog=prog, add_help=False, allow_abbrev=False)

    def error(self, message: str) -> NoReturn:
        from . import options

        known = sorted(s for action in self._actions for s in action.option_strings if s.startswith("--"))
        _, sep, rest = message.partition("unrecognized arguments:")
        if sep:
            word = next((w for w in rest.split() if w.startswith("-")), rest.strip())
            raise options.OptionError(
                f"Unknown option {word.split('=', 1)[0]!r}.{options.did_you_mean(word, known)} "
                f"Options: {', '.join(known)}."
            )
        raise options.OptionError(message[:1].upper() + message[1:] + ".")


def words_parser(prog: str, fields: Iterable[str], *, positional: Sequence[str] = (), **help: str) -> WordsParser:
    """A :class:`WordsParser` with ``positional`` arguments, then the run flags of ``fields``."""
    parser = WordsParser(prog)
    for name in positional:
        parser.add_argument(name)
    add_run_flags(parser, fields, **help)
    return parser

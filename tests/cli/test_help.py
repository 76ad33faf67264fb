"""Every ``--help`` reads as written: each sub-command's and each magic's help is rendered here, as argparse
renders it, and every option it declares is found in it word for word.

argparse reads a help string as a ``%`` template; a flag's help that says ``%agent config's`` printed the
action's whole ``__dict__`` (``{'option_strings': ['--model', '-m'], ... <argparse._ArgumentGroup ...>}``) in
the middle of ``notebook-agent run --help``.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from notebook_agent.cli.main import build_parser
from notebook_agent.config.run_flags import FLAGS, add_run_flags, words_parser
from notebook_agent.notebook.magics import AgentMagics
from notebook_agent.testing import parser_options

ARGPARSE_INSIDES = ("option_strings", "<argparse.", "'container'")


def squeezed(text: str) -> str:
    """``text`` without its whitespace: argparse wraps lines, and breaks after a hyphen (``ask-`` / ``all``)."""
    return re.sub(r"\s+", "", text)


def assert_reads_as_written(parser: Any, shown: str) -> None:
    assert not [bit for bit in ARGPARSE_INSIDES if bit in shown], shown
    options, _ = parser_options(parser)
    for action in options:
        if action.help:
            assert squeezed(action.help.replace("%%", "%")) in squeezed(shown), (action.option_strings, shown)
        for name in action.option_strings:
            assert name in shown


def terminal_commands() -> dict[str, Any]:
    _, subs = parser_options(build_parser())
    return subs


@pytest.mark.parametrize("command", sorted(terminal_commands()))
def test_every_terminal_command_help_says_each_option_as_written(command: str) -> None:
    parser = terminal_commands()[command]
    assert_reads_as_written(parser, parser.format_help())


def test_the_flags_that_speak_of_the_magics_are_among_them() -> None:
    """The rule's cases: the help of these flags names ``%agent``, and the run, map and replay commands have them."""
    percent = {name for name, flag in FLAGS.items() if "%" in flag.help}
    assert {"model", "max_steps", "approve", "prompt"} <= percent
    shown = {name: terminal_commands()[name].format_help() for name in ("run", "map", "replay")}
    assert "(default: %agent config's in a notebook" in " ".join(shown["run"].split())
    assert "%agent config's" in " ".join(shown["map"].split())


@pytest.mark.parametrize("magic", ["agent", "agent_prompt"])
def test_the_cell_magics_help_says_each_option_as_written(magic: str) -> None:
    method = getattr(AgentMagics, magic)
    assert_reads_as_written(method.parser, method.parser.format_help())
    assert_reads_as_written(method.parser, method.__doc__)  # what %%agent? shows


def test_any_parser_given_the_run_flags_prints_them_as_written() -> None:
    """Every run flag, with its own help and a front's own (a ``%`` in either), on a plain parser and a line
    command's: the escape is where the help is made, not in one front."""
    import argparse

    plain = argparse.ArgumentParser(prog="x")
    add_run_flags(plain, FLAGS, model="100% yours: %agent config's (or %(default)s)")
    assert "100% yours: %agent config's (or %(default)s)" in " ".join(plain.format_help().split())
    assert_reads_as_written(plain, plain.format_help())
    line = words_parser("%agent rerun", FLAGS, positional=("run",))
    assert_reads_as_written(line, line.format_help())

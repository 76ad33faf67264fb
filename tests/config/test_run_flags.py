"""One parser of a run's flags: ``%%agent``, the ``%agent`` line commands and the terminal's sub-commands turn the
same option line into the same :class:`RunOptions`, and a bad value into the same message."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from IPython.core.magic_arguments import parse_argstring

from notebook_agent.agent import POLICY_NAMES, PageAgent
from notebook_agent.agent.prompt.profiles import PROFILE_NAMES
from notebook_agent.agent.run_options import RunOptions
from notebook_agent.cli.main import MAP_FLAGS, RUN_FLAGS, build_parser
from notebook_agent.cli.replay import REPLAY_FLAGS
from notebook_agent.config.options import OptionError
from notebook_agent.config.run_flags import FLAGS, POLICY_HELP, run_options
from notebook_agent.notebook.commands import line_options
from notebook_agent.notebook.magics import CELL_FLAGS, AgentMagics, cell_options
from tests.bad_inputs import BAD_BUDGETS, BAD_OPTIONS, BAD_URL

VALUES: dict[str, st.SearchStrategy[str]] = {
    "model": st.sampled_from(["demo", "openai:gpt-4o-mini", "anthropic:claude-3-5-haiku-latest", "ollama:qwen3"]),
    "url": st.sampled_from(["https://example.com/", "http://127.0.0.1:8000/shop", "localhost:8000", "example.org"]),
    "max_steps": st.integers(1, 1000).map(str),
    "approve": st.sampled_from(POLICY_NAMES),
    "profile": st.sampled_from(PROFILE_NAMES),
    "allowed_domains": st.lists(
        st.sampled_from(["github.com", "*.example.org", "http://127.0.0.1:8000"]), min_size=1
    ).map(",".join),
    "concurrency": st.integers(1, 64).map(str),
    "recipe": st.sampled_from(["-1", "priced", "recipe.json"]),
    "mode": st.sampled_from(["auto", "request", "page"]),
    "timeout": st.floats(0.5, 600).map(lambda x: f"{x:.1f}"),
    "prompt": st.sampled_from(["custom", "terse"]),
    "max_cost": st.sampled_from(["0.5", "$2", "10", "0.001"]),
    "max_tokens": st.integers(1, 10**7).map(str),
    "row_max_cost": st.sampled_from(["0.05", "$0.10", "1"]),
    "row_max_tokens": st.integers(1, 10**6).map(str),
}
"""Values every front accepts, per flag that takes one (a switch takes none)."""

#: Any word a person might type as a value (no leading ``-``: that is an option to every parser; no ``{``: a
#: notebook fills it; no space or quote: the magic and the shell quote differently).
WORDS = st.text(st.sampled_from("abcxyz019:/._*,=@%"), min_size=1, max_size=12).filter(lambda w: w[0] != "-")


def line(flags: dict[str, str | None]) -> list[str]:
    words: list[str] = []
    for name, value in flags.items():
        words.append(FLAGS[name].names[0])
        if value is not None:
            words.append(value)
    return words


def flag_lines(fields: tuple[str, ...], values: st.SearchStrategy[str] | None = None) -> st.SearchStrategy[Any]:
    """An option line of some of ``fields``, each with an accepted value (or any word, with ``values``)."""

    def value(name: str) -> st.SearchStrategy[str | None]:
        if FLAGS[name].switch:
            return st.none()
        return values if values is not None else VALUES[name]

    return st.lists(st.sampled_from(fields), unique=True).flatmap(
        lambda names: st.fixed_dictionaries({n: value(n) for n in names})
    )


def magic(words: list[str]) -> RunOptions:
    return cell_options(parse_argstring(AgentMagics.agent, " ".join(words)), {})  # as typed in a cell


def terminal(command: str, words: list[str], *positional: str) -> RunOptions:
    args = build_parser().parse_args([command, *positional, *words])
    return run_options(args, url_template=command == "map")


def outcome(parse: Any, words: list[str]) -> Any:
    try:
        return parse(words)
    except OptionError as exc:
        return f"error: {exc}"


SHARED_RUN = tuple(f for f in RUN_FLAGS if f in CELL_FLAGS and f != "output")
SHARED_MAP = tuple(f for f in MAP_FLAGS if f in CELL_FLAGS and f not in ("output", "url"))
LINE_REPLAY = ("heal", "url", "model", "approve")


def test_the_fronts_share_flags() -> None:
    assert {"model", "url", "max_steps", "approve", "profile", "vision", "js", "trace"} <= set(SHARED_RUN)
    assert {"recipe", "heal", "concurrency"} <= set(SHARED_MAP)
    assert set(LINE_REPLAY) <= set(REPLAY_FLAGS)
    assert set(POLICY_HELP.split(", ")) == set(POLICY_NAMES)  # the help's list is the agent's


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(flag_lines(SHARED_RUN))
def test_a_cell_and_notebook_agent_run_parse_a_line_to_the_same_options(flags: dict[str, str | None]) -> None:
    words = line(flags)
    parsed = magic(words)
    assert parsed == terminal("run", words, "the task")
    untyped = RunOptions()
    for name in FLAGS:  # each typed flag is in the value, and nothing else is
        assert (getattr(parsed, name) != getattr(untyped, name)) == (name in flags) or name == "profile", name


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(flag_lines(SHARED_MAP))
def test_a_cell_with_each_and_notebook_agent_map_parse_a_line_to_the_same_options(flags: dict[str, str | None]) -> None:
    words = line(flags)
    assert magic(words) == terminal("map", words, "task {value}", "--rows", "r.csv", "--out", "o.csv")


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(flag_lines(LINE_REPLAY))
def test_agent_replay_and_notebook_agent_replay_parse_a_line_to_the_same_options(flags: dict[str, str | None]) -> None:
    words = line(flags)
    _, in_notebook = line_options("%agent replay", ["-1", *words], LINE_REPLAY)
    assert in_notebook == terminal("replay", words, "-1")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(flag_lines(SHARED_RUN, WORDS))
def test_any_value_is_taken_or_refused_alike_by_a_cell_and_the_terminal(flags: dict[str, str | None]) -> None:
    """Whatever is typed: the same options, or the same one-sentence message."""
    words = line(flags)
    in_cell = outcome(magic, words)
    assert in_cell == outcome(lambda w: terminal("run", w, "the task"), words)
    if isinstance(in_cell, str):
        assert in_cell.count("\n") == 0 and any(in_cell.startswith(f"error: {FLAGS[f].names[0]}") for f in flags)


@pytest.mark.parametrize(
    "args,message",
    [
        *BAD_OPTIONS,
        *BAD_BUDGETS,
        BAD_URL,
        (["--concurrency", "0"], "--concurrency must be at least 1 (got 0): it is how many rows run at a time."),
        (["--allowed-domains", "http://"], "--allowed-domains: "),
    ],
)
def test_a_bad_value_has_one_message_in_every_front(args: list[str], message: str) -> None:
    fronts: dict[str, Callable[[list[str]], RunOptions]] = {
        "%%agent": lambda w: magic(w),
        "map": lambda w: terminal("map", w, "t", "--rows", "r.csv", "--out", "o.csv"),
    }
    if args[0] != "--concurrency":
        fronts["run"] = lambda w: terminal("run", w, "t")
    if args[0] in ("--url", "--model", "--approve"):
        fronts["replay"] = lambda w: terminal("replay", w, "-1")
        fronts["%agent replay"] = lambda w: line_options("%agent replay", ["-1", *w], LINE_REPLAY)[1]
    if args[0] in ("--max-steps", "--model", "--approve"):
        rerun = ("model", "max_steps", "approve")
        fronts["%agent rerun"] = lambda w: line_options("%agent rerun", ["-1", *w], rerun)[1]
    for name, parse in fronts.items():
        with pytest.raises(OptionError) as caught:
            parse(args)
        assert str(caught.value).startswith(message), name


def test_an_unknown_option_of_a_line_command_is_named_with_a_hint() -> None:
    with pytest.raises(OptionError, match=r"^Unknown option '--max-step'\. Did you mean --max-steps\? Options: "):
        line_options("%agent rerun", ["-1", "--max-step", "3"], ("model", "max_steps", "approve"))


def test_options_make_the_agent_they_describe() -> None:
    """What Python, the magic and the terminal hand the agent: the fields chosen, the agent's defaults for the
    rest, a front's own defaults only where nothing was typed, and a front's keywords over the options'."""
    typed = run_options(argparse.Namespace(max_steps="7", approve="ask-all", js=True, allowed_domains="github.com"))
    opts = typed.with_defaults(max_steps=3, approve="auto", timeout=9.0)
    assert (opts.max_steps, opts.approve, opts.timeout) == (7, "ask-all", 9.0)
    agent: PageAgent[None] = opts.make_agent("demo", vision=True)
    assert (agent.max_steps, agent.approval, agent.approval_timeout, agent.enable_javascript) == (
        7,
        "ask-all",
        9.0,
        True,
    )
    assert agent.vision and [d.text for d in agent.allowed_domains] == ["github.com"]
    plain = RunOptions().make_agent("demo")
    assert (plain.max_steps, plain.approval, plain.vision, plain.start_url) == (20, "auto", False, None)
    with pytest.raises(TypeError, match="no field colour"):
        RunOptions().with_defaults(colour="blue")


ALL_OPTIONS = sorted({name for flag in FLAGS.values() for name in flag.names if name.startswith("--")})


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_two_neighbouring_letters_swapped_suggest_the_option_they_spell(data: st.DataObject) -> None:
    """Whatever flags the fronts add (--mode beside --model, --tracing beside --trace), a swap of two neighbouring
    letters of one option is a hint for that option, not for another one an edit away."""
    from notebook_agent.config.options import did_you_mean

    option = data.draw(st.sampled_from(ALL_OPTIONS))
    i = data.draw(st.integers(2, len(option) - 2))
    typo = option[:i] + option[i + 1] + option[i] + option[i + 2 :]
    if typo in ALL_OPTIONS or typo == option:
        return
    assert did_you_mean(typo, ALL_OPTIONS) == f" Did you mean {option}?"

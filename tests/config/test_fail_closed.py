"""Options fail closed: an empty ``allowed_domains`` is an error, never "no restriction"; no domain pattern admits
every host (a property over generated patterns); a list flag given twice adds to its list (the terminal's
``notebook-agent`` and the ``%%agent`` line alike); the ``%%agent`` line is split as a terminal splits it, and a
quote left open is one line shown to the user. Through the real CLI (``main()``) and the real magic parser."""

from __future__ import annotations

import json
import string
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from IPython.core.interactiveshell import InteractiveShell

from notebook_agent.agent import PageAgent
from notebook_agent.agent.safety.domains import DomainPattern
from notebook_agent.cli.main import main
from notebook_agent.demo import serve_demo
from notebook_agent.llm.scripted import ScriptedModel
from notebook_agent.notebook.magics import AgentMagics, cell_options, parse_line

EMPTY = ("", " ", " , ", "\t")


@pytest.mark.parametrize("value", [*EMPTY, [], ()])
def test_an_empty_allowed_domains_is_an_error_saying_what_to_pass(value: object) -> None:
    with pytest.raises(ValueError) as caught:
        PageAgent(model=ScriptedModel([]), allowed_domains=value)  # type: ignore[arg-type]
    message = str(caught.value)
    assert "\n" not in message and message.startswith("allowed_domains is empty")
    assert "give the domains the run may visit" in message and "leave it out for no restriction" in message
    PageAgent(model=ScriptedModel([]), allowed_domains=None)  # not given: no restriction, as documented


@pytest.mark.parametrize("value", EMPTY)
def test_an_empty_allowed_domains_flag_is_an_error_in_the_terminal(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["run", "find it", "--model", "demo", "--allowed-domains", value, "--json"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert err.startswith("error: --allowed-domains is empty") and "leave it out for no restriction" in err


@pytest.mark.parametrize(
    "pattern", ["*", "*.", ".", "*.*", "..", "*.com", "a..b", "github.com.", "*github.com", "a.*.b"]
)
def test_a_pattern_that_admits_every_host_is_refused(pattern: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ValueError):
        DomainPattern.parse(pattern)
    with pytest.raises(ValueError):
        PageAgent(model=ScriptedModel([]), allowed_domains=[pattern])
    assert main(["run", "find it", "--model", "demo", "--allowed-domains", pattern]) == 2
    assert capsys.readouterr().err.startswith("error: --allowed-domains: ")


def test_the_patterns_people_write_still_parse() -> None:
    for pattern in ("github.com", "*.github.com", "https://github.com", "http://127.0.0.1:8999", "localhost", "[::1]"):
        DomainPattern.parse(pattern)


LABEL = st.one_of(
    st.sampled_from(["a", "b", "com", "x", "y"]),
    st.text(alphabet=string.ascii_lowercase + string.digits + "-", min_size=1, max_size=6),
)
PATTERN = st.lists(
    st.sampled_from(["*", ".", "*.", "a", "b", "com", "-", ":80", "https://", "//", "x.y", " "]), max_size=6
)
HOST = st.tuples(st.lists(LABEL, min_size=1, max_size=3), st.booleans())


@settings(max_examples=500, deadline=None)
@given(st.one_of(PATTERN.map("".join), st.text(alphabet="*.:/abc-", max_size=8)), HOST, HOST)
@example("*.", (["a", "com"], True), (["b", "org"], True))
@example("*.com", (["a", "com"], False), (["b", "com"], False))
def test_no_pattern_admits_two_unrelated_hosts(
    pattern: str, one: tuple[list[str], bool], other: tuple[list[str], bool]
) -> None:
    """Two hosts are unrelated when their last two labels differ (a trailing dot, the DNS root, aside)."""
    if one[0][-2:] == other[0][-2:]:
        return
    try:
        rule = DomainPattern.parse(pattern)
    except ValueError:
        return
    hosts = [f"http://{'.'.join(labels)}{'.' if dot else ''}/" for labels, dot in (one, other)]
    assert not all(rule.matches(h) for h in hosts), (pattern, hosts)


def test_a_repeated_list_flag_adds_to_the_list_in_the_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with serve_demo() as shop:
        code = main(
            [
                "run",
                "Open the shop and finish.",
                "--model",
                "demo",
                "--url",
                shop.url,
                "--json",
                "--max-steps",
                "1",
                "--allowed-domains",
                "127.0.0.1",
                "--allowed-domains",
                "example.org,*.example.net",
                "--runs-dir",
                str(tmp_path),
            ]
        )
    out = capsys.readouterr().out
    assert code in (0, 1), out
    assert json.loads(out)["settings"]["allowed_domains"] == ["127.0.0.1", "example.org", "*.example.net"]


@pytest.fixture(scope="module")
def shell() -> InteractiveShell:
    sh = InteractiveShell.instance()
    sh.run_line_magic("load_ext", "notebook_agent")
    return sh


def test_the_agent_line_is_split_as_a_terminal_splits_it(shell: InteractiveShell) -> None:
    line = '--url "http://127.0.0.1:8000/a b" --allowed-domains "127.0.0.1" --allowed-domains example.org'
    opts = cell_options(parse_line(AgentMagics.agent, line), {})
    assert opts.url == "http://127.0.0.1:8000/a%20b" or opts.url == "http://127.0.0.1:8000/a b"
    assert opts.allowed_domains == ("127.0.0.1", "example.org")  # the repeated flag added, its quotes gone


def test_an_open_quote_in_the_agent_line_is_one_line_for_the_user(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    shell.run_cell_magic("agent", '--url "http://127.0.0.1:8000 --model demo --out quoted', "Find it.")
    out = capsys.readouterr()
    assert "Traceback" not in out.out + out.err and "ValueError" not in out.out + out.err
    lines = [line for line in out.out.splitlines() if line.strip()]
    assert lines == ['%%agent: No closing quotation in the line: close the quote, or escape it with a backslash (\\")']
    assert "quoted" not in shell.user_ns
    shell.run_cell_magic("agent", '--allowed-domains "" --model demo --out empty', "Find it.")
    said = capsys.readouterr().out
    assert "--allowed-domains is empty" in said and "Traceback" not in said and "empty" not in shell.user_ns

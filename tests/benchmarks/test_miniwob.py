"""The MiniWoB++ benchmark harness end to end: real task pages from the ``miniwob`` wheel in real Chromium, the
real page agent, the oracle model over the Chat Completions wire, the reward read from the page. Kept small
(three tasks, one seed) so the harness cannot rot between benchmark runs."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("miniwob", reason="the MiniWoB++ benchmark needs the miniwob package (dev extra)")

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
if str(BENCHMARKS) not in sys.path:
    sys.path.append(str(BENCHMARKS))  # after site-packages: benchmarks/miniwob.py must not shadow the package

from miniwob_oracle import Action, Memory, State, click, parse_state  # noqa: E402
from miniwob_plans import PLANS  # noqa: E402

from notebook_agent.browser.page.snapshot import element_line  # noqa: E402


def load_benchmark() -> ModuleType:
    spec = importlib.util.spec_from_file_location("miniwob_benchmark", BENCHMARKS / "miniwob.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_oracle_passes_and_the_reward_comes_from_the_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bench = load_benchmark()

    # "Click button ONE." answered with TWO: MiniWoB itself must say -1
    def wrong_button(s: State, m: Memory) -> Action:
        return click(next(e for e in s.all(tag="button") if e.label == "TWO"))

    monkeypatch.setitem(PLANS, "click-test-2", wrong_button)
    out = tmp_path / "figures.json"
    code = bench.main(["--tasks", "click-button,enter-text,click-test-2", "--seeds", "1", "--json", str(out)])
    assert code == 0
    figures = json.loads(out.read_text())
    runs = {r["task"]: r for r in figures["runs"]}
    assert set(runs) == {"click-button", "enter-text", "click-test-2"}
    for task in ("click-button", "enter-text"):
        run = runs[task]
        assert run["passed"] and run["first_reward"] == 1.0 and run["ended"], run
        assert run["claimed"] is True and run["actions"][-1]["action"] == "done"
        assert run["prompt_per_step"] > 0 and 0 < run["cached_share"] < 1
    wrong = runs["click-test-2"]
    assert wrong["ended"] and wrong["first_reward"] == -1.0 and not wrong["passed"]
    assert wrong["claimed"] is False  # the oracle read "Last reward: -1.00" from the state message
    overall = figures["summary"]["ours"]["overall"]
    assert overall["episodes"] == 3 and overall["passed"] == 2 and overall["agree"] == 3
    # the file, written after every episode, prints its table again (a run stopped early keeps its figures)
    capsys.readouterr()
    assert bench.main(["--summarise", str(out)]) == 0
    table = capsys.readouterr().out
    assert "click-test-2" in table and "ALL" in table and "2/3" in table


def test_unknown_task_is_refused_with_the_names(capsys: pytest.CaptureFixture[str]) -> None:
    assert load_benchmark().main(["--tasks", "click-buton"]) == 2
    assert "unknown MiniWoB++ task(s): click-buton" in capsys.readouterr().out


TEXT = st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=20).filter(
    lambda t: t == t.strip() and " />" not in t and "\n" not in t
)


@settings(deadline=None)  # the machine is shared: a slow spell is not a failure
@given(
    tag=st.sampled_from(["button", "input", "a", "span", "div", "select", "textarea"]),
    text=TEXT,
    name=TEXT,
    index=st.integers(0, 500),
    depth=st.integers(0, 4),
)
def test_the_oracle_reads_back_every_element_line_the_snapshot_writes(
    tag: str, text: str, name: str, index: int, depth: int
) -> None:
    line = element_line({"tag": tag, "a": [("id", "x1"), ("disabled", True)], "text": text, "name": name})
    state = parse_state(
        f"<browser_state>\n[Start of page]\nDo it.\n{chr(9) * depth}[{index}]{line}\nEpisodes done: 0\n</browser_state>"
    )
    (e,) = state.elements
    assert (e.index, e.tag, e.text, e.name, e.depth) == (index, tag, text, name, depth)
    assert e.attrs == {"id": "x1", "disabled": ""} and state.query == "Do it."

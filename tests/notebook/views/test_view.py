"""The live view and the saved record at the end of a run: what they say about the last step, the step count,
the answer and the reason a run ended; the first run's status line; the result's short repr."""

from __future__ import annotations

import re
import time
from html.parser import HTMLParser

from hypothesis import given, settings
from hypothesis import strategies as st

from notebook_agent.agent import PageAgentResult, PageStep, RunFinished, StepStarted
from notebook_agent.core.messages import Usage
from notebook_agent.notebook.views.card import StepCard
from notebook_agent.notebook.views.html import markdown_html
from notebook_agent.notebook.views.record import record_html
from notebook_agent.notebook.views.run_view import RunView, summary_html

STOP = "Stopped by Kernel → Interrupt"


def stopped_while_waiting() -> PageAgentResult:
    """A run stopped while the model was still answering its first step: one step, none finished."""
    return PageAgentResult(
        task="find it",
        status="stopped",
        success=False,
        text=STOP,
        steps=[PageStep(index=1, url="http://shop/")],
        usage=Usage(),
        model="test:silent",
        duration_s=3.2,
        prompt_version="abc123",
        error=STOP,
        run_id="r1",
    )


async def test_a_run_stopped_while_waiting_on_the_model_ends_its_view() -> None:
    view = RunView("find it", "test:silent", 20)
    view.handle(StepStarted(1, 20))
    card = view.card()
    assert card is not None and card.waiting_since is not None
    card.waiting_since -= 3.4
    view.tick()
    assert card.header.description == "Step 1/20 · waiting for the model · 3 s"
    result = stopped_while_waiting()
    view.handle(RunFinished(result))
    # the current card stops its wait display and says how the step ended
    assert card.waiting_since is None and card.progress.value == ""
    assert card.header.description == "Step 1/20 · stopped while waiting for the model"
    card.wait_tick(time.monotonic() + 10)
    assert "waiting for the model ·" not in card.header.description
    # one count of steps, the one the interrupt line uses ("0 finished steps kept")
    assert result.finished_steps == 0 and result.steps_text() == "1 step (0 finished)"
    for shown in (view.final.value, summary_html(result), record_html(result)):
        assert "1 step (0 finished)" in shown and "1 step ·" not in shown
        # the stop reason under "Stopped", never under "Answer"
        assert "Answer" not in shown and "Stopped</span> Stopped by Kernel" in shown, shown


def test_the_answer_label_is_for_the_answer_only() -> None:
    done = PageStep(index=1, action="done", args={"text": "It costs $5", "success": True}, result="It costs $5")
    result = stopped_while_waiting()
    result.status, result.success, result.text, result.error, result.steps = (
        "completed",
        True,
        "It costs $5",
        None,
        [done],
    )
    assert result.answer == "It costs $5" and result.steps_text() == "1 step"
    for shown in (summary_html(result), record_html(result)):
        assert "Answer</span> <" in shown and "It costs $5" in shown and "Stopped</span>" not in shown
        assert "Error</span>" not in shown
    failing = stopped_while_waiting()
    failing.status, failing.text, failing.error = "error", "The model failed: 500", "The model failed: 500"
    for shown in (summary_html(failing), record_html(failing)):
        assert "Answer" not in shown and "Error</span> The model failed: 500" in shown


async def test_the_first_run_says_what_it_does_before_its_first_step() -> None:
    """Not a bare "starting" while Chromium launches and the page opens (the view gets page events only)."""
    from notebook_agent.agent import PageAgent
    from notebook_agent.demo import DEMO_TASK, demo_url
    from notebook_agent.notebook.runtime import STATE, NotebookRun

    await STATE.close_browser()  # the kernel's first run: no browser yet
    try:
        agent = PageAgent(model="demo", start_url=demo_url(), screenshots=False, max_steps=8)
        view = RunView(DEMO_TASK, "demo:offline", 8)
        seen = [view.status.value]
        view.status.observe(lambda change: seen.append(change["new"]), "value")
        run = NotebookRun(agent, DEMO_TASK, view, kernel_browser=True, name="first")
        run.start()
        result = await run
        assert result is not None and result.success
        assert seen[:4] == ["starting", "launching the browser", "opening the page", "waiting for the model"], seen
    finally:
        STATE.stop_all()
        await STATE.close_browser()


def test_a_result_shows_short() -> None:
    """`await agent_run` as a cell's last line: one line of text, a small table in a notebook."""
    result = stopped_while_waiting()
    result.steps = [PageStep(index=i, action="click", result="ok", screenshot=b"x" * 10_000) for i in range(1, 4)]
    result.status, result.success, result.text, result.error = "completed", True, "Found | it", None
    result.steps.append(PageStep(index=4, action="done", args={"text": "Found | it"}, result="Found | it"))
    text = repr(result)
    assert text == "PageAgentResult(completed, success, 4 steps, 0 tokens, answer='Found | it')"
    table = result._repr_markdown_()
    assert "| answer | Found \\| it |" in table and "| steps | 4 steps |" in table and "| run | r1 |" in table
    assert len(table) < 600 and "xxxx" not in table


def test_compare_table_text_reads_from_the_left() -> None:
    import re

    from notebook_agent.agent.runs.run_file import compare_runs
    from notebook_agent.notebook.views.tuning import compare_html

    a = stopped_while_waiting()
    b = stopped_while_waiting()
    b.steps = [PageStep(index=1, action="click", args={"index": 3}, result="clicked")]
    shown = compare_html(compare_runs(a, b))
    cells = re.findall(r"<t[dh](?: [^>]*)?>", shown)
    assert cells and all("text-align:left" in c for c in cells), [c for c in cells if "text-align:left" not in c]


def test_options_are_never_taken_by_a_prefix_and_typos_get_a_hint(capsys: object) -> None:
    import pytest
    from IPython.core.interactiveshell import InteractiveShell

    from notebook_agent.cli.main import build_parser
    from notebook_agent.notebook.runtime import STATE

    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "notebook_agent")
    capsys.readouterr()  # type: ignore[attr-defined]
    runs = len(STATE.runs)
    out = []
    for line in ("--max-step 3", "--modle demo", "--max-steps=3 --vison"):
        shell.run_cell_magic("agent", line, "do something")
        out.append(capsys.readouterr().out)  # type: ignore[attr-defined]
    assert out[0] == "%%agent: unrecognized arguments: --max-step 3. Did you mean --max-steps?\n", out
    assert out[1].endswith("Did you mean --model?\n") and out[2].endswith("Did you mean --vision?\n"), out
    assert len(STATE.runs) == runs  # nothing started
    shell.run_line_magic("agent", "config --max-step 3")
    assert "Unknown option '--max-step' for %agent config. Did you mean --max-steps?" in capsys.readouterr().out  # type: ignore[attr-defined]
    shell.run_line_magic("agent", "rerun 1 --promt x")
    assert "Unknown option '--promt'. Did you mean --prompt?" in capsys.readouterr().out  # type: ignore[attr-defined]
    for argv, hint in (
        (["run", "task", "--max-step", "3"], "--max-steps"),
        (["eval", "s.yaml", "--repeat", "2"], "--repeats"),
    ):
        with pytest.raises(SystemExit):
            build_parser().parse_args(argv)
        err = capsys.readouterr().err  # type: ignore[attr-defined]
        assert f"unrecognized arguments: {' '.join(argv[2:])}. Did you mean {hint}?" in err, err


def _pictures_on_show(view: RunView) -> list[bytes]:
    shown = [bytes(view.live.value)] if view.live.layout.display != "none" else []
    for card in view.cards:
        if card.body.layout.display != "none" and card.image.layout.display != "none":
            shown.append(bytes(card.image.value))
    return shown


async def test_a_screenshot_is_on_show_once() -> None:
    """The latest picture is in the header only; a card shows its own once a newer one takes the header."""
    from notebook_agent.agent import ScreenshotTaken

    view = RunView("find it", "test:silent", 5)
    view.handle(StepStarted(1, 5))
    one, two = b"\xff\xd8one", b"\xff\xd8two"
    step1 = PageStep(index=1, action="click", result="ok")
    view.handle(ScreenshotTaken(step1, one))  # step 1's picture, while step 1 is the current card
    assert _pictures_on_show(view) == [one]
    view.handle(StepStarted(2, 5))  # the model has not answered step 2: step 1's card is still open
    card1, card2 = view.cards
    assert card1.body.layout.display != "none"
    assert _pictures_on_show(view) == [one]
    assert card1.image.value == one and card2.image.layout.display == "none"
    view.handle(ScreenshotTaken(PageStep(index=2, action="click", result="ok"), two))
    assert view.live.value == two and _pictures_on_show(view).count(two) == 1
    assert card1.image.layout.display != "none" and card2.image.layout.display == "none"
    card1.toggle(True)
    assert sorted(_pictures_on_show(view)) == sorted([one, two])
    # a late picture of an older step goes to its card, not over the header's newer one
    view.handle(StepStarted(3, 5))
    view.handle(ScreenshotTaken(step1, one))
    assert view.live.value == two


async def test_a_step_without_a_picture_says_why_on_its_card() -> None:
    from notebook_agent.agent import ScreenshotTaken
    from notebook_agent.agent.step.screenshots import WITHHELD

    view = RunView("find it", "test:silent", 5)
    view.handle(StepStarted(1, 5))
    view.handle(ScreenshotTaken(PageStep(index=1, action="click", result="ok"), b"\xff\xd8one"))
    view.handle(StepStarted(2, 5))
    view.handle(ScreenshotTaken(PageStep(index=2, action="click", result="ok"), b"", withheld=WITHHELD))
    card1, card2 = view.cards
    assert view.live.value == b"\xff\xd8one"  # the header keeps the last picture there was
    assert card2.image.layout.display == "none"
    assert any(WITHHELD in getattr(child, "value", "") for child in card2.extra.children)
    assert not any(WITHHELD in getattr(child, "value", "") for child in card1.extra.children)


ALLOWED_TAGS = {"strong", "em", "code", "a", "br", "ul", "li"}
_PIECES = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    '<a href="javascript:alert(1)">',
    "[x](javascript:alert(1))",
    '[x](http://a.b/"onerror="alert(1))',
    "[t](https://a.b/*c*?d=1&e=2)",
    "[t](https://a.b/",
    "[t](http://onerror=x/",
    "](",
    ")",
    "[",
    "]",
    "`",
    "*",
    "**",
    "- ",
    "\n",
    "\x00",
    "<",
    ">",
    '"',
    "'",
    "&",
    "&lt;",
    " ",
    "a",
    "onerror=",
    "javascript:",
]


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES) | st.text(max_size=8), max_size=30).map("".join))
def test_markdown_in_an_answer_lets_no_html_through(text: str) -> None:
    out = markdown_html(text)
    assert "<script" not in out.lower()
    # every "<" left starts one of the few tags the converter writes; none of the input's survives
    assert not re.search(r"<(?!/?(?:strong|em|code|a|br|ul|li)\b)", out), out
    parser = _Tags()
    parser.feed(out)
    parser.close()
    for tag, attrs in parser.tags:
        assert tag in ALLOWED_TAGS, out
        for name, value in attrs:
            assert name in {"href", "target", "rel", "style"}, out
            if name == "href":
                assert value is not None and re.match(r"https?://", value), out
                assert "javascript:" not in value.lower() and '"' not in value, out
    # so "onerror=" and "javascript:" from the input can only be text, never an attribute or a link
    for tag_text in re.findall(r"<[^>]*>", out):
        outside_values = re.sub(r'="[^"]*"', "", tag_text).lower()
        assert "onerror" not in outside_values and "javascript:" not in outside_values, out


def test_markdown_in_an_answer_renders_in_the_summary_and_the_record() -> None:
    answer = "**TrailSound** costs `$54.99`\n- in [the shop](https://shop.example/p?id=1&x=2)\n- <b>x</b>"
    assert markdown_html(answer) == (
        '<strong>TrailSound</strong> costs <code>$54.99</code><ul style="margin:2px 0;padding-left:1.4em">'
        '<li>in <a href="https://shop.example/p?id=1&amp;x=2" target="_blank" rel="noopener noreferrer nofollow">'
        "the shop</a></li><li>&lt;b&gt;x&lt;/b&gt;</li></ul>"
    )
    done = PageStep(index=1, action="done", args={"text": answer, "success": True}, result=answer)
    result = stopped_while_waiting()
    result.status, result.success, result.text, result.error, result.steps = ("completed", True, answer, None, [done])
    for shown in (summary_html(result), record_html(result)):
        assert "<strong>TrailSound</strong>" in shown and "<b>x</b>" not in shown and "&lt;b&gt;x" in shown


def test_a_step_the_stop_interrupted_says_stopped_in_the_card_and_the_record() -> None:
    """A stop while the action waited for approval is a stop, plainly, in both views: never "Error"."""
    said = "Stopped by the user while the action waited for approval; it did not run."
    waited = PageStep(
        index=1, action="click_element_by_index", args={"index": 3}, result=said, is_error=True, stopped=True
    )
    result = stopped_while_waiting()
    result.error = result.text = "Stopped by the user"
    result.steps = [waited]
    card = StepCard(1, 20)
    card.set_result(waited)
    for shown in (card.result.value, record_html(result)):
        assert "Stopped</span>" in shown and said in shown, shown
        assert "Error" not in shown and "aborted" not in shown.lower(), shown

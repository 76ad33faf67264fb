"""Every text a view shows goes through one escaping for its output (core/text/shown.py), and every output block
is one MathJax leaves alone: text with ``$``, ``*``, backticks, ``<``, ``|``, newlines and lone surrogates shows
as itself in every view (the saved record, the live card, the summary, the map, the tuning tables, the
result's Markdown), never as a formula, a tag, emphasis or a broken table."""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any

import mistune
from hypothesis import given, settings
from hypothesis import strategies as st

from notebook_agent.agent import MapResult, PageAgentResult, PageStep
from notebook_agent.agent.batch.map_table import MapRow
from notebook_agent.agent.evaluate import EvalReport, EvalRow
from notebook_agent.agent.runs.run_file import compare_runs
from notebook_agent.core.messages import Usage
from notebook_agent.core.text import clean_text
from notebook_agent.core.text.shown import NO_MATH, shown
from notebook_agent.notebook.map_view import map_record_html
from notebook_agent.notebook.views.card import StepCard
from notebook_agent.notebook.views.display import waiting_html
from notebook_agent.notebook.views.record import error_html, record_html
from notebook_agent.notebook.views.run_view import browser_html, summary_html, tabs_html
from notebook_agent.notebook.views.tuning import compare_html, inspect_html, pre_html, runs_table_html

PIECES = ["$", "$$", "$89.00; Summit ", "\\(", "*", "**", "_", "`", "<", "<b>", "<script>", ">", "|", "&", '"', "'"]
PIECES += ["\n", "\r\n", "\ud800", "\udfff", "\x00", "#", "[a](http://x)", "- ", "a", " ", "é"]
TEXT = (
    st.lists(st.sampled_from(PIECES) | st.text(max_size=6), min_size=1, max_size=24)
    .map("".join)
    .filter(lambda t: clean_text(t).replace("\x00", "").strip() != "")  # an empty field is left out, not shown
)
NEUTRAL = "plain words"

VOID = {"br", "img", "hr", "input", "meta", "wbr"}


class _Outline(HTMLParser):
    """The tags in order, the text (a ``<br>`` read as a newline), and anything at the top level that is not
    inside an element MathJax skips."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.text: list[str] = []
        self.depth = 0
        self.loose: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag != "br":
            self.tags.append(tag)
        else:
            self.text.append("\n")
        if self.depth == 0 and tag not in VOID:
            classes = (dict(attrs).get("class") or "").split()
            if not set(NO_MATH.split()) <= set(classes):
                self.loose.append(f"<{tag} class={classes}>")
        if tag not in VOID:
            self.depth += 1

    def handle_endtag(self, tag: str) -> None:
        if tag not in VOID:
            self.depth -= 1

    def handle_data(self, data: str) -> None:
        if self.depth == 0 and data.strip():
            self.loose.append(data)
        self.text.append(data)


def outline(html: str) -> _Outline:
    html.encode("utf-8")  # nothing that cannot be sent or saved (a lone surrogate would raise here)
    parsed = _Outline()
    parsed.feed(html)
    parsed.close()
    return parsed


def seen(text: str) -> str:
    """What a person should read of ``text``: the same characters, a lone surrogate as U+FFFD."""
    return clean_text(text).replace("\x00", "").replace("\r\n", "\n").replace("\r", "\n")


def run_with(text: str) -> PageAgentResult:
    step = PageStep(
        index=1,
        evaluation_previous_goal=text,
        memory=text,
        next_goal=text,
        action="input_text",
        args={"index": 2, "text": text},
        result=text,
        url="http://shop/",
    )
    stopped = PageStep(index=2, action="click_element_by_index", args={"index": 3}, result=text, stopped=True)
    return PageAgentResult(
        task=text,
        status="stopped",
        success=False,
        text=text,
        steps=[step, stopped],
        usage=Usage(),
        model="test:model",
        duration_s=1.0,
        prompt_version="v1",
        error=text,
        run_id="r1",
        output=[{"name": text, "price": text}],
        output_type="list[Item]",
    )


def map_with(text: str) -> MapResult:
    row = MapRow(index=0, values={"product": text}, task=text, status="failed", error=text)
    return MapResult(template=text, columns=["product"], rows=[row], elapsed_s=1.0)


class _Tab:
    def __init__(self, text: str) -> None:
        self.id, self.url, self.title = 1, text, text


def blocks(text: str) -> dict[str, str]:
    """Every output block a view writes, filled with ``text`` wherever text from outside goes."""
    result = run_with(text)
    other = run_with(text + " and more")  # the two runs differ in every field, whatever the text
    return {
        "record": record_html(result),
        "summary": summary_html(result),
        "error": error_html(text, RuntimeError(text)),
        "map record": map_record_html(map_with(text)),
        "tabs": tabs_html([(_Tab(text), text)]),
        "browser": browser_html(text, text, None, text, [(_Tab(text), "")]),
        "runs table": runs_table_html([result]),
        "compare": compare_html(compare_runs(result, other)),
        "inspect": inspect_html(result.steps[0]),
        "pre": pre_html(text),
        "waiting": waiting_html(text, text),
        "evaluation": EvalReport(
            suite=text,
            rows=[EvalRow(text, text, 0, False, text, False, 1, 0, 0.0, 0.0, "r1", failures=[text])],
        )._repr_html_(),
    }


def card_fragments(text: str) -> dict[str, str]:
    """The live card's HTML values (the view's root carries the MathJax classes: see test_the_live_view...)."""
    step = run_with(text).steps[0]
    card = StepCard(1, 20)
    card.set_output(step)
    card.set_action(step.action or "", step.args)
    card.set_result(step)
    return {"reflection": card.reflection.value, "action": card.action.value, "result": card.result.value}


NEUTRAL_TAGS: dict[str, list[str]] = {}


@settings(max_examples=100, deadline=None)
@given(TEXT)
def test_every_view_shows_any_text_as_itself(text: str) -> None:
    if not NEUTRAL_TAGS:
        NEUTRAL_TAGS.update({k: outline(v).tags for k, v in {**blocks(NEUTRAL), **card_fragments(NEUTRAL)}.items()})
    shown_blocks, fragments = blocks(text), card_fragments(text)
    for name, html in {**shown_blocks, **fragments}.items():
        parsed = outline(html)
        # MathJax leaves the whole block alone: nothing at its top level outside an element it skips
        if name in shown_blocks:
            assert not parsed.loose, (name, parsed.loose, html)
        # no tag came from the text: the same tags as with plain words in its place
        assert parsed.tags == NEUTRAL_TAGS[name], (name, html)
    # and the text reads as itself where it is shown whole (a step's fields, an error, a <pre>)
    for name in ("record", "error", "pre"):
        assert seen(text) in "".join(outline(shown_blocks[name]).text), name
    assert seen(text) in "".join(outline(fragments["reflection"]).text)


def render(markdown: str) -> str:
    html = mistune.create_markdown(escape=False, plugins=["table"])(markdown)
    assert isinstance(html, str)
    return html


@settings(max_examples=100, deadline=None)
@given(TEXT)
def test_the_results_markdown_shows_any_text_as_itself(text: str) -> None:
    """``PageAgentResult`` as Markdown (a cell's last line shows it): rendered as nbconvert and GitHub would, the
    table keeps its two columns and the text reads as itself, in a block MathJax leaves alone."""
    html = render(run_with(text)._repr_markdown_())
    parsed = outline(html)
    assert not parsed.loose, parsed.loose
    plain = render(run_with(NEUTRAL)._repr_markdown_())
    assert parsed.tags == outline(plain).tags, html
    said = " ".join(seen(text).split())  # a table cell is one line
    assert said[:200] in "".join(parsed.text)


def test_the_live_view_roots_are_where_mathjax_does_not_look() -> None:
    import asyncio

    from notebook_agent.notebook.views.run_view import RunView

    async def make() -> Any:
        return RunView("Summit $149.00 and AeroBeat $89.00", "test:model", 5).root

    root = asyncio.run(make())
    assert set(NO_MATH.split()) <= set(root._dom_classes)


def test_shown_escapes_for_each_output() -> None:
    text = "a $1 < 2 | *b*\nc \ud800"
    assert shown(text) == "a $1 &lt; 2 | *b*<br>c \ufffd"
    assert shown(text, "attribute") == "a $1 &lt; 2 | *b*&#10;c \ufffd"
    assert shown(text, "markdown") == "a \\$1 &lt; 2 \\| \\*b\\*<br>c \ufffd"
    assert shown(text, "plain") == "a $1 < 2 | *b*\nc \ufffd"

"""The outcome line: what the model's last action achieved, said last in the state message, where it decides.

Small models did not stop when the page showed their goal reached: they ran to the step limit without ``done``,
or acted again and undid it (started a finished task over). They do not diff two page states, and they read
the page top to bottom, so a confirmation in the middle of it is one more line. After an action that changed
the page, text that reads as an outcome is quoted in one short ``<sys>`` line after the browser state, with
"if this is what the task asked for, call done now":

- new text in a status, alert or live region, an ``<output>`` or an open dialog (what pages use to announce
  a result);
- a new line that reads as a confirmation ("Saved", "Thanks, your order is placed"), not as an error;
- a new heading on the same page, or a new line that shares a word with the request (a value asked for);
- a phrase the request quotes, now shown as page text (``"Order #7 shipped"``).

When the fields instead hold every value the request quotes (typed, chosen), a shorter "progress" line says so
and leaves submitting to the model: filling a form is rarely the whole task.

Page text is untrusted: lines that address the agent ("ignore your instructions", "call done") are never
quoted (they stay in the browser state as page text, which the prompt says is data), what is quoted is clipped,
one line each, and defused like all page text (``untrusted_text.py``). A page can still write a false
confirmation; the line says what the page shows, and the model judges it against the request.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from ...browser.page.page_script import announced_text
from ...browser.page.snapshot import Snapshot
from ...browser.session.browser_session import BrowserSession
from ...core.aio import wait_for

FACTS_TIMEOUT = 2.0
"""Seconds the regions are waited for: a page too busy to answer has its text read, and that is enough."""


@dataclass(frozen=True)
class PageFacts:
    """What the outcome line needs beyond the page's text: the text of its announcing regions and headings,
    and the values its fields hold."""

    status: frozenset[str] = frozenset()
    """Lines inside status, alert and live regions, outputs and dialogs."""
    headings: frozenset[str] = frozenset()
    values: tuple[str, ...] = ()
    """What the fields hold (typed text, the chosen option), as the snapshot read them."""


async def page_facts(browser: BrowserSession, snapshot: Snapshot, scrub: Callable[[str], str]) -> PageFacts:
    """The facts of the tab's page (its main document) as of ``snapshot``; the regions are read by the page
    script (the isolated world the snapshot is read in, so the page's own JavaScript cannot change them): with
    the snapshot itself when it has them (one round trip a step, not two), else with a call of their own, and
    none are known when the page does not answer. ``scrub`` hides the run's secrets."""
    values = tuple(scrub(str(e.attributes["value"])) for e in snapshot.elements.values() if e.attributes.get("value"))
    found: list[tuple[str, str]] | None = getattr(snapshot, "announced", None)
    if found is None:
        try:
            read = browser.call(lambda: announced_text(browser.page, timeout=FACTS_TIMEOUT))
            found = await wait_for(read, FACTS_TIMEOUT)
        except Exception:  # a page that navigated away or does not answer: the text alone decides
            found = []
    status: set[str] = set()
    headings: set[str] = set()
    for kind, text in found:
        lines = {line.strip() for line in scrub(str(text)).splitlines() if line.strip()}
        (headings if kind == "heading" else status).update(lines)
    return PageFacts(frozenset(status), frozenset(headings), values)


_CONFIRMS = re.compile(
    r"\b(thanks?|thank you|success\w*|succeeded|saved|submitted|sent|confirm(ed|ation)|completed?|finished|done|"
    r"created|added|updated|changed|booked|reserved|subscribed|registered|signed (in|up)|logged in|welcome|"
    r"placed|paid|purchased|accepted|approved|uploaded|published|posted|scheduled|correct)\b",
    re.IGNORECASE,
)
#: A line that reports a failure or asks for more is not an outcome.
_FAILS = re.compile(
    r"\b(errors?|fail\w*|invalid|not|unable|cannot|can't|couldn't|wrong|incorrect|required|missing|please|"
    r"try again)\b|n't\b",
    re.IGNORECASE,
)
#: Text that speaks to the agent rather than to a person: never quoted where the agent's own notes are.
_ADDRESSES_AGENT = re.compile(
    r"\b(ignore|disregard|forget|override)\b|\b(call|use|invoke|run|output)\s+(the\s+)?[\"'`]?(done|tool|action|"
    r"function|agentoutput)\b|\b(system|developer|assistant)\s*(prompt|message|note|instruction)s?\b|"
    r"\b(ai|llm|language model|(browser |web )?agent)\b|\byour (instructions|task|request|goal)\b|\bagentoutput\b|"
    r"\bsuccess\s*[=:]\s*true\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[^\W\d_]{4,}")
_COMMON = frozenset(
    re.findall(
        r"\w+",
        "that this with from your have into then than them they what when where which will would click enter "
        "type select choose press button field text page find open show shows make sure each every some only "
        "also there here just like more most other about after before below above form list item items",
    )
)
QUOTE_CHARS = 100
"""Each quoted line is clipped to this many characters; at most two lines are quoted."""

DONE_NOW = "If this is what the task asked for, call done now: acting again can undo it."


def done_call(line: str) -> str:
    """The done action that reports ``line``, written out as the model writes one: a small model copies a call
    it is shown more reliably than it composes one from a rule, and measured, it acted again (and undid the
    task) where it was only told to call done. Only offered where done takes a text alone (no typed answer)."""
    return " Then: " + json.dumps({"done": {"text": _clip(line), "success": True}}, ensure_ascii=False)


def addresses_agent(line: str) -> bool:
    """Whether page text speaks to the agent (instructions, the agent's own vocabulary): it is not quoted."""
    return _ADDRESSES_AGENT.search(line) is not None


def request_words(task: str) -> frozenset[str]:
    """The request's content words (four letters or more, common ones left out), folded."""
    return frozenset(w for w in (m.casefold() for m in _WORD.findall(task)) if w not in _COMMON)


def _quote(lines: Sequence[str]) -> str:
    """Up to two lines, each on one line (whitespace runs made one space) and clipped, in double quotes."""
    return " and ".join(f'"{_clip(line)}"' for line in lines[:2])


def _clip(line: str) -> str:
    """``line`` on one line (whitespace runs made one space), clipped to :data:`QUOTE_CHARS`."""
    flat = " ".join(line.split())
    return flat if len(flat) <= QUOTE_CHARS else flat[: QUOTE_CHARS - 1] + "…"


@dataclass(frozen=True)
class Outcome:
    """An outcome line and the page lines it quotes (it is said again while they show and the model only
    scrolls or waits)."""

    line: str
    quoted: tuple[str, ...]


def find_outcome(
    *,
    phrases: Sequence[str],
    words: frozenset[str],
    before: frozenset[str],
    lines: Sequence[str],
    facts: PageFacts,
    values_before: Iterable[str],
    acted: bool,
    navigated: bool,
    offer_done: bool = False,
) -> Outcome | None:
    """The outcome of the last action, or None. ``phrases``: what the request quotes; ``words``: its content
    words; ``before``/``lines``: the page's text lines at the previous step and now; ``acted``: the last action
    could change the page (not a scroll or a wait); ``navigated``: it opened another URL (every line is new
    there, so only announced, confirming or quoted text counts); ``offer_done``: end the line with the done call
    that reports what it quotes (:func:`done_call`)."""
    new = [line for line in lines if line not in before and not addresses_agent(line) and not _FAILS.search(line)]
    shown = [p for p in phrases if _shows(p, lines) and not _shows(p, before)]
    if shown:
        where = tuple(line for line in lines if any(_shows(p, [line]) for p in shown))
        offer = done_call(where[0]) if offer_done and where else ""
        line = f"Outcome: the page now shows {_quote(shown)}, which the request names. {DONE_NOW}{offer}"
        return Outcome(line, where)
    if not acted:
        return None
    picked = [line for line in new if line in facts.status]
    picked += [line for line in new if _CONFIRMS.search(line) and line not in picked]
    if not navigated and not picked:
        picked = [line for line in new if line in facts.headings]
        picked += [line for line in new if words & request_words(line) and line not in picked]
    if picked:
        offer = done_call(picked[0]) if offer_done else ""
        return Outcome(f"Outcome: the page now shows {_quote(picked)}. {DONE_NOW}{offer}", tuple(picked[:2]))
    held = [p for p in phrases if _holds(p, facts.values)]
    if held and not all(_holds(p, values_before) for p in held):
        return Outcome(
            f"Progress: the fields now hold {_quote(held)}, as the request says. Do what else it asks (such as "
            "a submit), then call done.",
            (),
        )
    return None


def _shows(phrase: str, lines: Iterable[str]) -> bool:
    key = phrase.casefold()
    return any(key in line.casefold() for line in lines)


def _holds(phrase: str, values: Iterable[str]) -> bool:
    key = phrase.casefold()
    return any(key in value.casefold() for value in values)

"""The state message: what the model reads each step, and the observations the agent adds to it.

This is the most-tuned text in the product, so it lives here as pure functions of plain data (the task, the
steps so far, the page text) that tests and prompt experiments can call without a browser or a model.
Each step the page agent rebuilds one user message from scratch (the transcript does not grow): the task, a
compact history of earlier steps with ``<sys>`` notes between them, then what changes every step (the step
counter and time, this step's notes) and the browser state from the snapshot, in that order so that each
request extends the previous one and a provider's prompt cache keeps the history.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ...browser.actions import action_facts
from ...core.text import clean_text
from ..runs.result import PageAgentResult, PageStep
from ..safety.approval import format_args
from .outcome import Outcome, PageFacts, addresses_agent, find_outcome, request_words
from .untrusted_text import neutralise

#: Results of steps before the last one are clipped to this many characters in the history.
HISTORY_RESULT_CHARS = 600

#: The memory the model carries forward is resent every step: cap it (and say so) so one huge answer cannot
#: make every later request huge. The other reflection fields are shorter still.
MEMORY_MAX = 2000
REFLECTION_MAX = 600


def cap(text: str, limit: int, what: str) -> str:
    """``text`` cut to ``limit`` characters, saying what was cut so the model learns to keep it short."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"… [{what} cut: {len(text):,} characters is more than the {limit:,} kept]"


#: The note when the URL changed between steps. It does not repeat the URL: the ``Current page:`` header has
#: it, and an action that navigated already says where to ("The page navigated to …").
NAVIGATED_NOTE = "The page changed (new URL)."


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass
class Observer:
    """What the agent notices between steps: navigation, waiting, a page that stops changing, a repeated
    action, the steps left. It keeps only the little state those need, so it can be driven step by step in
    a test."""

    last_url: str = ""
    total_wait: float = 0.0
    fingerprint: str | None = None
    unchanged_steps: int = 0
    text_lines: frozenset[str] = frozenset()
    """The page's plain text lines at the previous step (element lines left out)."""
    task: str = ""
    """The request, as the model reads it: the phrases it quotes are looked for on the page."""
    outcome: Outcome | None = None
    """What the last action achieved, said last in the state message (outcome.py), or None."""
    values: tuple[str, ...] = ()
    """What the page's fields held at the previous step."""
    offer_done: bool = True
    """Whether the outcome line ends with the done call to copy (not where done needs a typed answer)."""
    tools: Mapping[str, Any] = field(default_factory=dict)
    """The run's actions: after one that leaves the page's text as it was (``facts.quiet``: it scrolls, waits,
    switches tabs or finishes), new text is not news about it; a name not here is a built-in's."""

    def action_finished(self, action: str, args: Mapping[str, Any], is_error: bool) -> None:
        """Accumulate waiting: consecutive successful ``wait`` calls add up; any other action resets."""
        if action == "wait" and not is_error:
            self.total_wait += float(args.get("seconds", 1) or 1)
        elif action != "wait":
            self.total_wait = 0.0

    def observe(
        self,
        step: PageStep,
        steps: Sequence[PageStep],
        page_text: str,
        max_steps: int,
        last_output_error: str | None = None,
        facts: PageFacts | None = None,
    ) -> list[str]:
        """The notes for ``step`` (the last item of ``steps``), given the page text the model will see (and
        ``facts``, what the page's regions and fields show: see outcome.py). The step's outcome line, if any,
        is left in :attr:`outcome`."""
        notes: list[str] = []
        if step.url != self.last_url:
            if self.last_url:  # the first step has nothing to compare with
                notes.append(NAVIGATED_NOTE)
            self.last_url = step.url
        if last_output_error and step.index > 1 and len(steps) >= 2 and steps[-2].action is None:
            notes.append(f"Your previous output could not be used: {last_output_error}")
        if self.total_wait >= 3:
            notes.append(
                f"You have waited {self.total_wait:g} seconds accumulatively. "
                "DO NOT wait any longer unless you have a good reason."
            )
        previous = [s for s in steps[:-1] if s.action]
        lines = text_lines(page_text)
        notes += self._outcome(previous, lines, facts or PageFacts(), navigated=notes[:1] == [NAVIGATED_NOTE])
        self.text_lines = frozenset(lines)
        fingerprint = hashlib.sha1(clean_text(page_text).encode("utf-8")).hexdigest()
        if self.fingerprint == fingerprint and previous and previous[-1].action not in ("wait", "done"):
            self.unchanged_steps += 1
        else:
            self.unchanged_steps = 0
        self.fingerprint = fingerprint
        if self.unchanged_steps >= 2:
            notes.append(
                f"The page has not changed for the last {self.unchanged_steps} actions. Try a different approach."
            )
        if len(previous) >= 3:
            last3 = [(s.action, format_args(s.args)) for s in previous[-3:]]
            if last3[0] == last3[1] == last3[2]:
                notes.append(f"You repeated {last3[0][0]} with the same arguments 3 times. Do something else.")
        if len(previous) >= 2 and self.unchanged_steps >= 1:
            a, b = previous[-2], previous[-1]
            if (a.action, format_args(a.args)) == (b.action, format_args(b.args)) and b.action == "input_text":
                notes.append(
                    "You typed the same text twice and the page did not change: it is already there. Submit it "
                    "(send_keys Enter, or click the button) or move on."
                )
        dead = _dead_index(previous)
        if dead is not None:
            notes.append(
                f"Element [{dead}] from an earlier state is gone (the page changed). Use only indices listed in the "
                "current browser state."
            )
        # Warnings are relative to the run's length: "5 steps left" at step 1 of 6 only confuses a model.
        left = max_steps - step.index
        if left == 0:
            notes.append("This is the last step: call done now with what you have (success=false if unfinished).")
        elif left == 2 and max_steps >= 6:
            notes.append("⚠️ Only 2 steps left after this one. Finish the task or call done.")
        elif left == 5 and max_steps >= 15:
            notes.append("⚠️ Only 5 steps left after this one. Consider wrapping up.")
        return notes

    def _outcome(
        self, previous: Sequence[PageStep], lines: Sequence[str], facts: PageFacts, navigated: bool
    ) -> list[str]:
        """Set :attr:`outcome` for this step; the note on new text it does not quote (an error message, say).
        An outcome is said again while the lines it quotes still show and the model only scrolls or waits."""
        acted = bool(previous) and not action_facts(previous[-1].action or "", self.tools).quiet
        kept = self.outcome if self.outcome is not None and self.outcome.quoted else None
        self.outcome = None
        if previous:
            self.outcome = find_outcome(
                phrases=quoted_phrases(self.task),
                words=request_words(self.task),
                before=self.text_lines,
                lines=lines,
                facts=facts,
                values_before=self.values,
                acted=acted,
                navigated=navigated,
                offer_done=self.offer_done,
            )
        self.values = facts.values
        if self.outcome is None and kept is not None and not acted and all(q in lines for q in kept.quoted):
            self.outcome = kept
        if navigated or not acted:
            return []
        quoted = self.outcome.quoted if self.outcome is not None else ()
        appeared = [line for line in lines if line not in self.text_lines and line not in quoted]
        return [new_text_note(appeared)] if appeared else []


_ELEMENT_LINE = re.compile(r"^\s*\*?\[\d+\]")
# The snapshot's own lines: the header (page, tabs, notices), scroll hints, budget markers and table names.
_HINT_LINE = re.compile(
    r"^\s*(\[(Start|End) of page\]|\[Snapshot truncated|\.\.\. |Current page: |Tabs: |Note: |\[Table T\d+\]$)"
)


def text_lines(page_text: str) -> list[str]:
    """The page's plain text lines in order (no element lines, no scroll hints), stripped and distinct."""
    seen: dict[str, None] = {}
    for raw in page_text.splitlines():
        if raw.strip() and not _ELEMENT_LINE.match(raw) and not _HINT_LINE.match(raw):
            seen.setdefault(raw.strip(), None)
    return list(seen)


_QUOTED = re.compile(
    r'"([^"\n]{3,80})"|“([^”\n]{3,80})”|«([^»\n]{3,80})»|(?<!\w)\'([^\'\n]{3,80})\'(?!\w)|‘([^’\n]{3,80})’'
)


def quoted_phrases(task: str) -> list[str]:
    """The phrases a request quotes ("find the order marked "Shipped""): what it expects to see or name."""
    found = (next(g for g in m.groups() if g) for m in _QUOTED.finditer(task))
    return list(dict.fromkeys(p.strip() for p in found if p.strip()))


def new_text_note(appeared: Sequence[str], limit: int = 240) -> str:
    """Text that appeared on the same page after an action and is not an outcome (an error message, a hint).
    Small models do not diff two page states. Lines that speak to the agent are counted, not quoted."""
    shown = ""
    spoken = [line for line in appeared if addresses_agent(line)]
    appeared = [line for line in appeared if line not in spoken]
    for i, line in enumerate(appeared):
        piece = f"'{clip(line, 120)}'"
        if len(shown) + len(piece) > limit:
            shown += f" and {len(appeared) - i} more line{'s' if len(appeared) - i > 1 else ''}"
            break
        shown += ("; " if shown else "") + piece
    if spoken:
        shown += ("; and " if shown else "") + f"{len(spoken)} line{'s' if len(spoken) > 1 else ''} of instructions"
    return f"New on the page after your last action: {shown}."


def _dead_index(previous: Sequence[PageStep]) -> int | None:
    """The index the last action failed on because it no longer exists, if that is why it failed."""
    if not previous or not previous[-1].is_error:
        return None
    last = previous[-1]
    gone = ("no element [", "is no longer on the page", "belongs to a tab that is no longer current")
    index = last.args.get("index")
    return index if isinstance(index, int) and any(g in last.result for g in gone) else None


def earlier_run_note(previous: PageAgentResult) -> str:
    """The history's first note in a follow-up run: what the earlier run was asked, did and ended with, so
    the model continues from there (its steps are not resent one by one: the new request is a new run)."""
    acted = [s for s in previous.steps if s.action and s.action != "done"]
    did = ", ".join(f"{s.action} {format_args(s.args)}" for s in acted[-6:])
    more = f" (the last 6 of {len(acted)})" if len(acted) > 6 else ""
    memory = next((s.memory for s in reversed(previous.steps) if s.memory), "")
    ended = previous.answer or previous.error or previous.text or ""
    return clip(
        f"This continues an earlier run on this tab. Earlier request: {previous.task}. It took "
        f"{len(previous.steps)} steps{more}: {did or 'no actions'}. It ended {previous.status}"
        + (f": {ended}" if ended else "")
        + (f". Its last memory: {memory}" if memory else "")
        + ". The page is where it left off; the request above is what to do now.",
        2 * HISTORY_RESULT_CHARS,
    )


def resume_url(previous: PageAgentResult, here: str) -> str | None:
    """Where a follow-up of ``previous`` starts: the page that run ended on, unless the tab is there already
    (``here``); None when there is none to go to."""
    url = next((s.url for s in reversed(previous.steps) if s.url), "")
    return url if url.startswith(("http://", "https://")) and url != here else None


@dataclass(frozen=True)
class Repeat:
    """A step that made the same move (action and arguments) as the steps just before it."""

    first: PageStep
    """The first step of that run of the same move."""
    same_result: PageStep | None
    """An earlier step of the run with exactly this step's result (a page that alternates between two states
    gives every other step's), or None when the result is new."""


def repeats(steps: Sequence[PageStep]) -> dict[int, Repeat]:
    """Each step (by ``id``) that repeats the move of the step before it. A step's entry depends only on the
    steps before it, so it never changes once written (the prompt cache keeps it)."""
    found: dict[int, Repeat] = {}
    run: list[PageStep] = []
    for step in steps:
        if run and step.action is not None and (step.action, step.args) == (run[0].action, run[0].args):
            same = next((s for s in reversed(run) if s.result == step.result), None)
            found[id(step)] = Repeat(run[0], same)
            run.append(step)
        else:
            run = [step]
    return found


def _history_entry(item: PageStep, repeat: Repeat | None) -> list[str]:
    """A finished step in the history. A repeat is written short: one line when the thinking and the result
    were the same as before, else the thinking and "the same action as step N" (a small model that loops
    otherwise fills its context with copies of one block, and reads the loop as progress)."""
    tag = f"step_{item.index}"
    if item.action is None:
        return [f"<{tag}>", f"Invalid output: {neutralise(item.output_error or '')}", f"</{tag}>"]
    result = f"Action Results: {neutralise(clip(item.result, HISTORY_RESULT_CHARS))}"
    if repeat is not None:
        first, same = repeat.first, repeat.same_result
        again = f"the same action as step {first.index} ({item.index - first.index + 1} times in a row now)"
        if same is not None:
            result = f"Action Results: the same as step {same.index}."
            earlier = (same.evaluation_previous_goal, same.memory, same.next_goal)
            if (item.evaluation_previous_goal, item.memory, item.next_goal) == earlier:
                return [f"<{tag}>", f"Repeated step {same.index} exactly: {again}, with the same result.", f"</{tag}>"]
        action = f"Action: {again}."
    else:
        action = f"Action: {item.action} {neutralise(format_args(item.args))}"
    return [
        f"<{tag}>",
        f"Evaluation of Previous Step: {neutralise(item.evaluation_previous_goal)}",
        f"Memory: {neutralise(item.memory)}",
        f"Next Goal: {neutralise(item.next_goal)}",
        action,
        result,
        f"</{tag}>",
    ]


def state_message(
    task: str,
    step: PageStep,
    max_steps: int,
    history: Sequence[PageStep | str],
    page_text: str,
    now: datetime | None = None,
    outcome: str | None = None,
) -> str:
    """The user message for ``step``: the task and the history, then what changes each step (step counter,
    time, this step's notes) and the page.

    The order makes each request an extension of the one before, up to the new step, so a prompt cache
    (llama-server's, OpenAI's automatic one, Anthropic's breakpoints) reuses everything before it: once
    written, a history entry never changes (every result is clipped the same way; the last one, when longer,
    is shown whole after the history, with the rest of what changes). ``history`` holds finished steps and
    note strings in the order they happened; entries for ``step`` itself or later are ignored, and the notes
    after the last finished step are this step's own (shown after the history, kept in it from the next step
    on, at the same place). ``outcome``, what the last action achieved (outcome.py), comes last, after the
    page: where the model decides what to do next."""
    lines = ["<agent_state>", "<user_request>", neutralise(task), "</user_request>", "</agent_state>"]
    lines += ["", "<agent_history>"]
    done_steps = [h for h in history if not isinstance(h, PageStep) or h.index < step.index]
    cut = max((i + 1 for i, h in enumerate(done_steps) if isinstance(h, PageStep)), default=0)
    written, fresh = done_steps[:cut], [h for h in done_steps[cut:] if isinstance(h, str)]
    if cut == 0:
        # Small models otherwise invent a previous step to evaluate, and act on it. (The notes before a first
        # step, such as a follow-up's account of the earlier run, are part of the history.)
        written, fresh = list(fresh), []
        written.append("No action has been taken yet: evaluation_previous_goal is 'Start'.")
    last_step = next((h for h in reversed(written) if isinstance(h, PageStep)), None)
    first_of = repeats([h for h in written if isinstance(h, PageStep)])
    for item in written:
        if isinstance(item, str):
            lines.append(f"<sys>{neutralise(item)}</sys>")
        else:
            lines += _history_entry(item, first_of.get(id(item)))
    lines += ["</agent_history>", ""]
    if last_step is not None and last_step.action is not None and len(last_step.result) > HISTORY_RESULT_CHARS:
        whole = f"Step {last_step.index}'s result, whole: {neutralise(last_step.result)}"
        lines += ["<last_result>", whole, "</last_result>", ""]
    stamp = (now or datetime.now()).strftime("%Y-%m-%d %H:%M")
    lines += ["<step_info>", f"Step {step.index} of {max_steps}. Current time: {stamp}", "</step_info>"]
    lines += [f"<sys>{neutralise(note)}</sys>" for note in fresh]
    lines += ["", "<browser_state>", neutralise(page_text.rstrip()), "</browser_state>"]
    if outcome:
        lines.append(f"<sys>{neutralise(outcome)}</sys>")
    return clean_text("\n".join(lines))

"""What a page-agent run produces: its steps and its result.

Plain dataclasses with no behaviour beyond small conveniences (how a run's facts read, a DataFrame of its
answer, a GIF of its pictures), so run files, the notebook view, the CLI and evaluation can all read a run without
importing the machinery that made it, nor what can be made of it: a recipe is made by ``Recipe.from_run``
(agent/recipes/), a Playwright script by ``to_playwright`` (agent/runs/playwright_export.py), a model that answers
with the recorded outputs by ``replay_model`` (agent/step/replay_pilot.py). The events a run emits while it
happens are in :mod:`.events`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from ...core.messages import AssistantMessage, Usage
from ...core.text.shown import markdown_block, shown
from ...llm.ledger import Ledger

Status: TypeAlias = Literal["running", "completed", "failed", "max_steps", "budget", "stopped", "error"]
"""How a run ended: ``budget`` when it stopped at its ``max_cost`` or ``max_tokens`` (agent/safety/budget.py)."""


# -- steps and results ---------------------------------------------------------------------------------------
@dataclass
class StepRequest:
    """Exactly what the model was sent in one step (for the inspector)."""

    system_prompt: str
    state: str
    tools: list[dict[str, Any]]
    tool_choice: str | None
    images: int = 0


@dataclass
class PageStep:
    """One model call and the action it chose."""

    index: int
    evaluation_previous_goal: str = ""
    memory: str = ""
    next_goal: str = ""
    action: str | None = None
    args: dict[str, Any] = field(default_factory=dict)
    result: str = ""
    is_error: bool = False
    stopped: bool = False
    """The run was stopped before this step's action finished (``result`` says who stopped it and what the action
    was doing, e.g. waiting for approval): not a failure of the action, though it did not do its work."""
    output_error: str | None = None
    """Why the model's output could not be used (then ``action`` is None)."""
    repairs: list[str] = field(default_factory=list)
    observations: list[str] = field(default_factory=list)
    url: str = ""
    title: str = ""
    started_at: float = 0.0
    state_ms: float = 0.0
    model_ms: float = 0.0
    action_ms: float = 0.0
    screenshot_ms: float = 0.0
    usage: Usage = field(default_factory=Usage)
    screenshot: bytes | None = field(default=None, repr=False)
    screenshot_mime: str = "image/jpeg"
    screenshot_ref: str | None = None
    """File name of the saved screenshot, when the run was saved."""
    approval: dict[str, Any] | None = None
    target: dict[str, Any] | None = field(default=None, repr=False)
    """The fingerprint of the element the action targeted, as the step saw it (for replay and export)."""
    replay: str = ""
    """In a replay: "replayed" (no model call), "healed" (the model redid it) or "failed"; "" otherwise."""
    request: StepRequest | None = field(default=None, repr=False)
    output: AssistantMessage | None = field(default=None, repr=False)
    """The model's raw response (kept for replay and the inspector)."""
    calls: list[dict[str, Any]] = field(default_factory=list, repr=False)
    """The page's own fetch and XHR calls answered while this step ran, with their JSON answers, redacted
    (browser/page/call_log.py): what a recipe learns the call behind the page from (agent/recipes/calls/)."""

    @property
    def asks_model(self) -> bool:
        """The step's action comes from the model: not one a pilot decided (replayed, or a replay's stop)."""
        return self.replay not in ("replayed", "failed")

    @property
    def ledger(self) -> Ledger:
        """What the step cost: its model call's tokens, cost and calls, and the step's time."""
        seconds = (self.state_ms + self.model_ms + self.action_ms) / 1000
        return Ledger.of(self.usage, seconds)


@dataclass
class PageAgentResult:
    task: str
    status: Status
    success: bool
    text: str
    steps: list[PageStep]
    usage: Usage
    model: str
    duration_s: float
    prompt_version: str
    error: str | None = None
    run_id: str = ""
    settings: dict[str, Any] = field(default_factory=dict)
    system_prompt: str = field(default="", repr=False)
    trace_path: str | None = None
    """The Playwright trace of the run (``trace=True``): open it with ``playwright show-trace PATH``."""
    output: Any = None
    """The checked answer in the type given as ``output=`` (a run file gives it back as plain JSON), or None."""
    output_type: str = ""
    """The name of that type (``list[Product]``), or "" when the run had none."""
    follows: str = ""
    """The run id of the run this one followed up (``follow_up``, ``%%agent --continue``), or ""."""
    tables: dict[str, Any] = field(default_factory=dict, repr=False)
    """The tables the run read with ``extract_table``, by name (``t1``, ...)."""

    @property
    def output_mode(self) -> str:
        """How the model's structured output came back: ``json_schema`` (schema-constrained), ``tools`` (a
        tool call) or ``text`` (JSON found in text); several joined by ``+`` when a run fell back mid-way;
        ``""`` for models that do not say (scripted, demo)."""
        return join_output_modes(s.output.output_mode if s.output is not None else None for s in self.steps)

    @property
    def finished_steps(self) -> int:
        """Steps whose action ran and gave a result (not an error): what a stopped run keeps."""
        return len([s for s in self.steps if s.action and s.result and not s.is_error])

    @property
    def answer(self) -> str:
        """The agent's answer: the text of its ``done`` action, or "" when it never got there (then ``text`` is
        the reason the run ended, the same as ``error``)."""
        done = any(s.action == "done" and not s.is_error for s in self.steps)
        return self.text if done or (self.status in ("completed", "failed") and self.text != self.error) else ""

    def steps_text(self) -> str:
        """The steps, counted the way every view says it: ``3 steps``, or ``2 steps (1 finished)`` when some
        did not finish (a stop while the model was answering, an action that failed)."""
        n, finished = len(self.steps), self.finished_steps
        counted = f"{n} step{'' if n == 1 else 's'}"
        return counted if finished == n else f"{counted} ({finished} finished)"

    @property
    def replay_counts(self) -> dict[str, int]:
        """In a replay: how many steps were replayed free, healed by the model, or failed ({} otherwise)."""
        counts: dict[str, int] = {}
        for s in self.steps:
            if s.replay:
                counts[s.replay] = counts.get(s.replay, 0) + 1
        return counts

    def replay_text(self) -> str:
        """``replay: 5 replayed, 1 healed · 812 tokens`` for a replay, "" otherwise."""
        counts = self.replay_counts
        return f"replay: {replay_line(counts, self.usage.tokens)}" if counts else ""

    @property
    def end_label(self) -> str:
        """What the reason in ``error`` is called: ``Stopped`` (a stop, max steps, the budget) or ``Error``."""
        return "Stopped" if self.status in ("stopped", "max_steps", "budget") else "Error"

    @property
    def ledger(self) -> Ledger:
        """What the run cost: its tokens (input, cached, output, reasoning), model calls, cost (None: unknown) and
        wall time, the line every view says (:meth:`~notebook_agent.llm.ledger.Ledger.text`)."""
        return Ledger.of(self.usage, self.duration_s)

    def _facts(self) -> list[tuple[str, str]]:
        facts = [
            ("task", self.task),
            ("status", f"{self.status.replace('_', ' ')} · {'success' if self.success else 'no success'}"),
        ]
        if self.answer:
            facts.append(("answer", self.answer))
        elif self.error:
            facts.append((self.end_label.lower(), self.error))
        facts += [
            ("steps", self.steps_text()),
            ("usage", self.ledger.text()),
            ("model", self.model),
        ]
        if self.replay_counts:
            facts.append(("replay", self.replay_text().removeprefix("replay: ")))
        if self.run_id:
            facts.append(("run", self.run_id))
        return facts

    def __repr__(self) -> str:
        """One line (``await agent_run`` as a cell's last line shows this, not every step's fields)."""
        said = self.answer or self.error or ""
        said = f", {'answer' if self.answer else self.end_label.lower()}={_cut(said, 80)!r}" if said else ""
        return (
            f"PageAgentResult({self.status}, {'success' if self.success else 'no success'}, {self.steps_text()}, "
            f"{self.usage.tokens:,} tokens{said})"
        )

    def _repr_markdown_(self) -> str:
        """A compact table for notebooks; ``.steps`` has each step."""
        rows = "".join(f"| {shown(k, 'markdown')} | {_md(v)} |\n" for k, v in self._facts())
        return markdown_block(f"**PageAgentResult** (`.text`, `.steps`, `.usage`)\n\n| | |\n|---|---|\n{rows}")

    def to_pandas(self) -> Any:
        """The answer as a DataFrame (one row per item of a list answer); without a typed answer, the last table
        the run extracted. pandas is optional: ``pip install "notebook-agent[data]"``."""
        from .run_data import table_frame, to_pandas

        if self.output is not None:
            return to_pandas(self.output)
        if self.tables:
            return table_frame(list(self.tables.values())[-1])
        raise ValueError(
            "This run has no data to make a DataFrame of: give the agent output=<type> (or %%agent --output NAME), "
            "or let it read a table with extract_table."
        )

    def to_gif(self, path: str | None = None, *, width: int = 640, seconds: float = 1.0) -> bytes:
        """The run's screenshots as one animated GIF (one frame per step), for sharing; written to ``path``
        when given. A loaded run needs its screenshots (``load_run(path)`` loads them by default)."""
        from .pictures import gif

        return gif((s.screenshot for s in self.steps if s.screenshot), path, width=width, seconds=seconds)


def replay_line(counts: dict[str, int], tokens: int) -> str:
    """``5 replayed, 1 healed · 812 tokens``: a replay's step counts the way every view says them."""
    parts = ", ".join(f"{counts[k]} {k}" for k in ("replayed", "healed", "failed") if k in counts)
    return f"{parts} · {tokens:,} tokens"


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _md(text: str) -> str:
    """Text for one markdown table cell: one line, escaped by the views' one escaping (``core.text.shown``)."""
    return shown(_cut(text, 300), "markdown")


def join_output_modes(modes: Iterable[str | None]) -> str:
    """Distinct output modes in order of first use, joined by ``+``."""
    seen: list[str] = []
    for mode in modes:
        if mode and mode not in seen:
            seen.append(mode)
    return "+".join(seen)


#: How each output mode reads in views.
OUTPUT_MODE_TEXT = {"json_schema": "schema-constrained JSON", "tools": "tool call", "text": "JSON in text"}

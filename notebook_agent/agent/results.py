"""What a page-agent run produces: its steps and its result.

Plain dataclasses with no behaviour beyond small conveniences, so run files, the notebook view, the CLI and
evaluation can all read a run without importing the machinery that made it. The events a run emits while it
happens are in :mod:`.events`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from ..core.messages import AssistantMessage, Usage
from ..core.model import Model

Status: TypeAlias = Literal["running", "completed", "failed", "max_steps", "stopped", "error"]


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
    request: StepRequest | None = field(default=None, repr=False)
    output: AssistantMessage | None = field(default=None, repr=False)
    """The model's raw response (kept for replay and the inspector)."""


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

    @property
    def output_mode(self) -> str:
        """How the model's structured output came back: ``json_schema`` (schema-constrained), ``tools`` (a
        tool call) or ``text`` (JSON found in text); several joined by ``+`` when a run fell back mid-way;
        ``""`` for models that do not say (scripted, demo)."""
        return join_output_modes(s.output.output_mode if s.output is not None else None for s in self.steps)

    def replay_model(self) -> Model:
        """A model that answers with this run's recorded outputs, in order (no API key needed)."""
        from ..llm.scripted import ScriptedModel

        return ScriptedModel.from_messages(
            [s.output for s in self.steps if s.output is not None], id=f"replay:{self.model}"
        )


def join_output_modes(modes: Iterable[str | None]) -> str:
    """Distinct output modes in order of first use, joined by ``+``."""
    seen: list[str] = []
    for mode in modes:
        if mode and mode not in seen:
            seen.append(mode)
    return "+".join(seen)


#: How each output mode reads in views.
OUTPUT_MODE_TEXT = {"json_schema": "schema-constrained JSON", "tools": "tool call", "text": "JSON in text"}

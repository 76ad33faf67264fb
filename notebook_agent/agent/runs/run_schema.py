"""What a run file's lines must hold, checked on load: a run file is input, not trusted state.

A run file can be edited by hand, damaged, or written by someone else, and replay acts on what it says. Each
line is checked against a schema before anything reads it (the header, every step, the closing line), so a
wrong type is a :class:`RunFileError` naming the file, the line, the step and the field, and what was found
there, instead of an ``AttributeError`` deep inside a replay. Fields the schema does not know are ignored
(a newer writer may add some); lone surrogates in text (``"\\ud800"`` is valid JSON) become U+FFFD, so
nothing read from the file can fail to encode later.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ...core.errors import NotebookAgentError
from ...core.messages import AssistantMessage, Usage
from ...core.text import clean_text, map_strings


class RunFileError(NotebookAgentError, ValueError):
    """A run file that cannot be used as it is: the message names the line, the step and the field."""


class _Record(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=False)


class Settings(_Record):
    """The settings a replay reads (the others are kept as they are)."""

    model_config = ConfigDict(extra="allow")
    start_url: str | None = None


class Head(_Record):
    task: str
    model: str = ""
    prompt_version: str = ""
    run_id: str = ""
    settings: Settings = Field(default_factory=Settings)
    output_type: str = ""
    follows: str = ""
    trace_path: str | None = None


class Request(_Record):
    system_prompt: str = ""
    state: str = ""
    tools: list[dict[str, Any]] = Field(default_factory=list)
    tool_choice: str | None = None
    images: int = 0


class Step(_Record):
    index: int
    evaluation_previous_goal: str = ""
    memory: str = ""
    next_goal: str = ""
    action: str | None = None
    args: dict[str, Any] = Field(default_factory=dict)
    result: str = ""
    is_error: bool = False
    output_error: str | None = None
    repairs: list[str] = Field(default_factory=list)
    observations: list[str] = Field(default_factory=list)
    url: str = ""
    title: str = ""
    started_at: float = 0.0
    state_ms: float = 0.0
    model_ms: float = 0.0
    action_ms: float = 0.0
    screenshot_ms: float = 0.0
    usage: Usage | None = None
    screenshot_mime: str = "image/jpeg"
    screenshot_ref: str | None = None
    approval: dict[str, Any] | None = None
    target: dict[str, Any] | None = None
    replay: str = ""
    request: Request | None = None
    output: AssistantMessage | None = None


class End(_Record):
    status: Literal["running", "completed", "failed", "max_steps", "stopped", "error"] = "error"
    success: bool = False
    text: str = ""
    error: str | None = None
    usage: Usage | None = None
    output: Any = None
    tables: dict[str, Any] | None = None
    duration_s: float = 0.0


SCHEMAS: dict[str, type[_Record]] = {"run": Head, "step": Step, "end": End}


def _where(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in loc) or "(the line)"


def _found(value: Any) -> str:
    shown = repr(value)
    return f"{type(value).__name__} {shown[:60]}{'…' if len(shown) > 60 else ''}"


def check_record(kind: str, record: Any, where: str) -> dict[str, Any]:
    """``record`` (one decoded line of kind ``run``, ``step`` or ``end``) as checked, JSON-ready data with every
    field the schema knows, or a :class:`RunFileError`. ``where``: the file and line, for the message."""
    if not isinstance(record, dict):
        raise RunFileError(f"{where}: a line of a run file is a JSON object, not {_found(record)}.")
    record = map_strings(record, clean_text)
    schema = SCHEMAS[kind]
    try:
        checked = schema.model_validate(record)
    except ValidationError as exc:
        first = exc.errors()[0]
        step = record.get("index") if kind == "step" else None
        which = f" (step {step})" if isinstance(step, int) and not isinstance(step, bool) else ""
        part = {"run": "header", "step": "step", "end": "closing line"}[kind]
        more = f" ({exc.error_count() - 1} more problems)" if exc.error_count() > 1 else ""
        found = f"; found {_found(first['input'])}" if "input" in first else ""
        raise RunFileError(
            f"{where}{which}: the {part}'s field '{_where(first['loc'])}' is not valid: {first['msg']}{found}{more}. "
            "The run file was edited or damaged; fix that field or record the run again."
        ) from None
    return checked.model_dump()  # the settings' extra fields included (``extra="allow"``)

"""What a run file's lines must hold, checked on load: a run file is input, not trusted state.

A run file can be edited by hand, damaged, or written by someone else, and replay acts on what it says. Each
line is checked against a schema before anything reads it (the header, every step, the closing line), so a
wrong type is a :class:`RunFileError` naming the file, the line, the step and the field, and what was found
there, instead of an ``AttributeError`` deep inside a replay. Fields the schema does not know are ignored
(a newer writer may add some); lone surrogates in text (``"\\ud800"`` is valid JSON) become U+FFFD, so
nothing read from the file can fail to encode later.
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from ...core import JSONValue
from ...core.errors import InputError
from ...core.messages import Usage
from ...core.text import clean_text, map_strings
from .result import PageAgentResult, PageStep, StepRequest


class RunFileError(InputError):
    """A run file that cannot be used as it is: the message names the line, the step and the field."""


class _Record(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=False)


class Settings(_Record):
    """The settings a replay reads (the others are kept as they are)."""

    model_config = ConfigDict(extra="allow")
    start_url: str | None = None


#: The fields of the closing line; the header holds the result's other fields but the steps and the prompt.
CLOSING = ("status", "success", "text", "error", "usage", "duration_s", "output", "tables")


def _schema(
    cls: type[Any],
    name: str,
    *,
    keep: typing.Callable[[str], bool] = lambda field: True,
    types: dict[str, Any] | None = None,
    defaults: dict[str, Any] | None = None,
) -> type[_Record]:
    """The schema of a line holding ``cls``'s fields (those ``keep`` names), derived from the dataclass itself:
    its types and defaults, so a field added there is checked here too and the two cannot drift. ``types``
    replaces a field's type, ``defaults`` gives one to a field the dataclass requires but an older file may
    lack (a field the file must have, such as a step's index, has none)."""
    hints = typing.get_type_hints(cls)
    fields: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if not keep(f.name):
            continue
        kind = (types or {}).get(f.name, hints[f.name])
        if defaults and f.name in defaults:
            fields[f.name] = (kind, defaults[f.name])
        elif f.default is not dataclasses.MISSING:
            fields[f.name] = (kind, f.default)
        elif f.default_factory is not dataclasses.MISSING:
            fields[f.name] = (kind, Field(default_factory=f.default_factory))
        else:
            fields[f.name] = (kind, ...)
    return create_model(name, __base__=_Record, **fields)


Request = _schema(StepRequest, "Request", defaults={"system_prompt": "", "state": "", "tools": [], "tool_choice": None})
Step = _schema(
    PageStep,
    "Step",
    keep=lambda field: field != "screenshot",  # written beside the file, never in it
    types={"usage": Usage | None, "request": Request | None},
    defaults={"usage": None},
)
Head = _schema(
    PageAgentResult,
    "Head",
    keep=lambda field: field not in ("steps", "system_prompt", *CLOSING),
    types={"settings": Settings},
    defaults={"model": "", "prompt_version": "", "settings": Field(default_factory=Settings)},
)
End = _schema(
    PageAgentResult,
    "End",
    keep=lambda field: field in CLOSING,
    types={"usage": Usage | None, "tables": dict[str, Any] | None},
    defaults={"status": "error", "success": False, "text": "", "usage": None, "duration_s": 0.0, "tables": None},
)


SCHEMAS: dict[str, type[_Record]] = {"run": Head, "step": Step, "end": End}


def _where(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in loc) or "(the line)"


def _found(value: object) -> str:
    shown = repr(value)
    return f"{type(value).__name__} {shown[:60]}{'…' if len(shown) > 60 else ''}"


def check_record(kind: str, record: JSONValue, where: str) -> dict[str, Any]:
    """``record`` (one decoded line of kind ``run``, ``step`` or ``end``) as checked, JSON-ready data with every
    field the schema knows, or a :class:`RunFileError`. ``where``: the file and line, for the message."""
    if not isinstance(record, dict):
        raise RunFileError(f"{where}: a line of a run file is a JSON object, not {_found(record)}.")
    fields: dict[str, Any] = map_strings(record, clean_text)
    schema = SCHEMAS[kind]
    try:
        checked = schema.model_validate(fields)
    except ValidationError as exc:
        first = exc.errors()[0]
        step = fields.get("index") if kind == "step" else None
        which = f" (step {step})" if isinstance(step, int) and not isinstance(step, bool) else ""
        part = {"run": "header", "step": "step", "end": "closing line"}[kind]
        more = f" ({exc.error_count() - 1} more problems)" if exc.error_count() > 1 else ""
        found = f"; found {_found(first['input'])}" if "input" in first else ""
        raise RunFileError(
            f"{where}{which}: the {part}'s field '{_where(first['loc'])}' is not valid: {first['msg']}{found}{more}. "
            "The run file was edited or damaged; fix that field or record the run again."
        ) from None
    return checked.model_dump()  # the settings' extra fields included (``extra="allow"``)

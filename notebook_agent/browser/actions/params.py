"""Parameter models of the built-in actions: the JSON Schema each action offers the model comes from these."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid")


# The fields of the most used actions carry no description of their own: the action's description says what
# they mean, once (the page agent sends all of them every step, so each repeated word costs on every step).


# done is {text: string; success?: boolean}, as the page-agent seed has it. success left out is a claim not made,
# so it reads as false (page-agent's loop reads it as `success ?? false`): a run is only reported done when the
# model says so, and a model that forgets the field still ends the run with its text instead of a validation
# failure. The typed-output done (agent/output.py) keeps it required. (A comment, not a docstring: a docstring
# would be sent as the schema's description every step.)
class DoneParams(_Params):
    text: str
    success: bool = False


class WaitParams(_Params):
    seconds: float = Field(1, ge=1, le=10)


class AskUserParams(_Params):
    question: str


class IndexParams(_Params):
    index: int = Field(ge=0)


class InputTextParams(_Params):
    index: int = Field(ge=0)
    text: str


class SelectParams(_Params):
    index: int = Field(ge=0)
    text: str


class ScrollParams(_Params):
    down: bool = True
    num_pages: float = Field(1.0, ge=0, le=10)
    pixels: int | None = Field(None, ge=0)
    index: int | None = Field(None, ge=0)


class ScrollHorizontallyParams(_Params):
    right: bool = True
    pixels: int = Field(ge=0)
    index: int | None = Field(None, ge=0)


class ExecuteJavascriptParams(_Params):
    script: str


# The action's description says what the fields mean (keys in Playwright syntax, several separated by spaces,
# index focused first): field descriptions would say it again in every request.
class SendKeysParams(_Params):
    keys: str
    index: int | None = Field(None, ge=0)


class GoToUrlParams(_Params):
    url: str


class GoBackParams(_Params):
    pass


class SwitchTabParams(_Params):
    tab_id: int = Field(ge=0)


def _lean(schema: dict[str, Any]) -> None:
    """An optional field's schema as its value's alone (``{"type": "string"}``, not an ``anyOf`` with null and a
    default): the same checks, fewer tokens in every request."""
    schema.pop("default", None)
    schema.update(next(s for s in schema.pop("anyOf") if s.get("type") != "null"))


# A table by the name the state gives it ([Table T1]: "T1"; "t1", "1", "Table T1" read the same) or by the index
# of an element in it (or holding it): one of the two.
class ExtractParams(_Params):
    table: str | None = Field(None, json_schema_extra=_lean)
    index: int | None = Field(None, ge=0, json_schema_extra=_lean)
    pages: int = Field(1, ge=1, le=50)

    @field_validator("table")
    @classmethod
    def _name(cls, value: str | None) -> str | None:
        if value is None:
            return None
        found = re.fullmatch(r"\s*\[?\s*(?:table\s*)?t?\s*(\d+)\s*\]?\s*", value, re.IGNORECASE)
        if found is None:
            raise ValueError(f"{value!r} is not a table's name: use one from a [Table T1] line of the browser state")
        return f"T{int(found.group(1))}"

    @model_validator(mode="after")
    def _one_target(self) -> ExtractParams:
        if (self.table is None) == (self.index is None):
            both = self.table is not None
            raise ValueError(
                "give table or index, not both" if both else "give table (a name from a [Table T1] line) or index"
            )
        return self

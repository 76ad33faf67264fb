"""Parameter models of the built-in actions: the JSON Schema each action offers the model comes from these."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


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


class SendKeysParams(_Params):
    keys: str = Field(
        description="Keys in Playwright syntax, e.g. 'Enter', 'Tab', 'Escape', 'Control+A', 'ArrowDown'; "
        "several separated by spaces are pressed in turn."
    )
    index: int | None = Field(None, ge=0, description="Focus this element first (else the focused element gets them).")


# send_keys as a profile that describes it in its action's description offers it (agent/profiles.py): the same
# fields and checks, without the field descriptions that are sent every step.
class PlainSendKeysParams(_Params):
    keys: str
    index: int | None = Field(None, ge=0)


class GoToUrlParams(_Params):
    url: str = Field(description="Absolute URL to open in the current tab.")


class GoBackParams(_Params):
    pass


class SwitchTabParams(_Params):
    tab_id: int = Field(ge=0, description="Tab id as listed under Tabs in the browser state.")


class ExtractParams(_Params):
    index: int = Field(ge=0)
    pages: int = Field(1, ge=1, le=50)

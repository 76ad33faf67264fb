"""Parameter models of the built-in actions: the JSON Schema each action offers the model comes from these."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DoneParams(_Params):
    text: str = Field(description="The final answer or summary for the user.")
    success: bool = Field(True, description="True only if the task was fully completed.")


class WaitParams(_Params):
    seconds: float = Field(1, ge=1, le=10, description="Seconds to wait (1-10).")


class AskUserParams(_Params):
    question: str = Field(description="The question for the user.")


class IndexParams(_Params):
    index: int = Field(ge=0, description="Index of the element in the latest browser state.")


class InputTextParams(_Params):
    index: int = Field(ge=0, description="Index of the text field.")
    text: str = Field(description="Text to type; replaces the current value.")


class SelectParams(_Params):
    index: int = Field(ge=0, description="Index of the <select> or dropdown.")
    text: str = Field(description="Visible text of the option to choose.")


class ScrollParams(_Params):
    down: bool = Field(True, description="True scrolls down, False up.")
    num_pages: float = Field(1.0, ge=0, le=10, description="How far, in viewport heights (e.g. 0.5, 1, 3).")
    pixels: int | None = Field(None, ge=0, description="Exact distance in pixels; takes precedence over num_pages.")
    index: int | None = Field(None, ge=0, description="Scroll the container holding this element instead of the page.")


class ScrollHorizontallyParams(_Params):
    right: bool = Field(True, description="True scrolls right, False left.")
    pixels: int = Field(ge=0, description="Distance in pixels.")
    index: int | None = Field(None, ge=0, description="Scroll the container holding this element instead of the page.")


class ExecuteJavascriptParams(_Params):
    script: str = Field(
        description="JavaScript run in the page. An expression, or statements ending in `return value`; await works."
    )


class SendKeysParams(_Params):
    keys: str = Field(
        description="Keys in Playwright syntax, e.g. 'Enter', 'Tab', 'Escape', 'Control+A', 'ArrowDown'; "
        "several separated by spaces are pressed in turn."
    )
    index: int | None = Field(None, ge=0, description="Focus this element first (else the focused element gets them).")


class GoToUrlParams(_Params):
    url: str = Field(description="Absolute URL to open in the current tab.")


class GoBackParams(_Params):
    pass


class SwitchTabParams(_Params):
    tab_id: int = Field(ge=0, description="Tab id as listed under Tabs in the browser state.")
